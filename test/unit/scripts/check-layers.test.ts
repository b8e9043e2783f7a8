/**
 * The layer check (scripts/check-layers.ts): it passes on the real tree and fails on each kind of
 * violation planted into a copy of it (an upward import, a folder cycle, a file cycle, a banned API in
 * actor code or in what actor code imports), and the compiled script exits 1 with one line per violation.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  BANNED_API_SCOPES,
  checkLayers,
  formatViolation,
  parseLayerTable,
  readTree,
} from '../../../scripts/check-layers';

/** The repository root (this file runs from dist/test/unit/scripts). */
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const SCRIPT = path.join(REPO_ROOT, 'dist', 'scripts', 'check-layers.js');

/** The real tree, read once; each test plants into its own copy. */
const realTree = readTree(REPO_ROOT);

function withFiles(changes: Record<string, string>): Map<string, string> {
  const files = new Map(realTree);
  for (const [file, text] of Object.entries(changes)) files.set(file, text);
  return files;
}

function appended(file: string, text: string): Record<string, string> {
  const original = realTree.get(file);
  assert.ok(original !== undefined, `${file} is in the tree`);
  return { [file]: `${original}\n${text}\n` };
}

/** The violation lines for `file`. */
function linesFor(files: Map<string, string>, file: string, scopes = BANNED_API_SCOPES): string[] {
  return checkLayers(files, scopes)
    .filter((v) => v.file === file)
    .map(formatViolation);
}

describe('check-layers', () => {
  it('passes on the real tree', () => {
    assert.deepEqual(checkLayers(realTree).map(formatViolation), []);
  });

  it('reads the layer table from src/README.md, lowest layer first', () => {
    const rows = parseLayerTable(realTree.get('src/README.md') as string);
    const folders = rows.map((r) => r.folder);
    for (const folder of ['io', 'protocol', 'config', 'runtime', 'storage', 'replica', 'network', 'cli']) {
      assert.ok(folders.includes(folder), `a row for ${folder}`);
    }
    const io = rows.find((r) => r.folder === 'io');
    assert.deepEqual(io?.mayImport, [], 'io imports no other folder');
    const layers = rows.map((r) => r.layer);
    assert.deepEqual(
      layers,
      [...layers].sort((a, b) => a - b),
      'rows in layer order',
    );
  });

  it('fails on an upward import: storage importing network', () => {
    const files = withFiles({ 'src/storage/planted.ts': "import type { KafkaServer } from '../network/server';\n" });
    const lines = linesFor(files, 'src/storage/planted.ts');
    assert.ok(
      lines.some((l) =>
        /^src\/storage\/planted\.ts:1: import '\.\.\/network\/server' — storage may not import network/.test(l),
      ),
      lines.join('\n'),
    );
  });

  it('fails on a folder cycle: runtime importing storage', () => {
    const files = withFiles(appended('src/runtime/fifo.ts', "import type { Log } from '../storage/log';"));
    const lines = linesFor(files, 'src/runtime/fifo.ts');
    assert.ok(
      lines.some((l) => l.includes('folder cycle runtime -> storage -> runtime')),
      lines.join('\n'),
    );
    assert.ok(
      lines.some((l) => l.includes('runtime may not import storage')),
      lines.join('\n'),
    );
  });

  it('fails on a file cycle, type-only included (D4)', () => {
    const files = withFiles(appended('src/runtime/module-ref.ts', "import type { ActorFactory } from './actor';"));
    const lines = checkLayers(files).map(formatViolation);
    assert.ok(
      lines.some((l) => /file cycle .*src\/runtime\/module-ref\.ts -> src\/runtime\/actor\.ts/.test(l)),
      lines.join('\n'),
    );
  });

  it('fails on Date.now in an actor file, and names the line', () => {
    const file = 'src/replica/replica-actor.ts';
    const files = withFiles(appended(file, 'export const plantedMs = Date.now();'));
    const line = (files.get(file) as string).split('\n').length - 1;
    assert.deepEqual(linesFor(files, file), [
      `${file}:${line}: Date.now — banned in actor code: take it from the ActorContext (clock, timers, random, fs)`,
    ]);
  });

  it('fails on a banned API in what actor code imports, transitively; a timer taken from a context is fine', () => {
    const file = 'src/protocol/primitives.ts';
    const planted =
      'export const plantedJitter = Math.random(); export const plantedWait = (t: { setTimeout(f: () => void, ms: number): void }) => t.setTimeout(() => undefined, 1);';
    const files = withFiles(appended(file, planted));
    const lines = linesFor(files, file);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0] ?? '', /Math\.random — banned in a file actor code imports/);
  });

  it('bans node:fs and worker_threads in actor code, import or require', () => {
    const file = 'src/group/planted.ts';
    const files = withFiles({
      [file]:
        "import { readFileSync } from 'node:fs';\nconst wt = require('worker_threads');\nexport { readFileSync, wt };\n",
    });
    const lines = linesFor(files, file);
    assert.ok(
      lines.some((l) => l.startsWith(`${file}:1: import 'node:fs' — banned in actor code`)),
      lines.join('\n'),
    );
    assert.ok(
      lines.some((l) => l.startsWith(`${file}:2: import 'worker_threads' — banned in actor code`)),
      lines.join('\n'),
    );
  });

  it('fails on Date.now in a network handler: handlers keep time with BrokerContext', () => {
    const file = 'src/network/handlers/fetch.ts';
    assert.deepEqual(linesFor(realTree, file), [], 'the real handlers pass it');
    const files = withFiles(appended(file, 'export const plantedDeadlineMs = Date.now() + 500;'));
    const lines = linesFor(files, file);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0] ?? '', /Date\.now — banned in network handlers: take it from BrokerContext/);
  });

  it('fails on a table that lists a folder of its own or a higher layer', () => {
    const readme = (realTree.get('src/README.md') as string).replace(
      /^(\| \d+ \| `runtime` \|.*\| )`io` \|$/m,
      '$1`io`, `storage` |',
    );
    assert.notEqual(readme, realTree.get('src/README.md'), 'the runtime row was edited');
    const lines = linesFor(withFiles({ 'src/README.md': readme }), 'src/README.md');
    assert.ok(
      lines.some((l) => l.includes('runtime (layer 1) may import storage')),
      lines.join('\n'),
    );
  });

  it('the compiled script exits 1 with one line per violation, and 0 on the real tree', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-layers-'));
    try {
      fs.mkdirSync(path.join(root, 'src', 'low'), { recursive: true });
      fs.mkdirSync(path.join(root, 'src', 'high'), { recursive: true });
      fs.writeFileSync(
        path.join(root, 'src', 'README.md'),
        [
          '<!-- layers:begin -->',
          '| Layer | Folder | Owns | May import |',
          '| --- | --- | --- | --- |',
          '| 0 | `low` | below | — |',
          '| 1 | `high` | above | `low` |',
          '<!-- layers:end -->',
          '',
        ].join('\n'),
      );
      fs.writeFileSync(path.join(root, 'src', 'low', 'a.ts'), "import { b } from '../high/b';\nexport const a = b;\n");
      fs.writeFileSync(path.join(root, 'src', 'high', 'b.ts'), 'export const b = 1;\n');
      const failed = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
      assert.equal(failed.status, 1, failed.stdout + failed.stderr);
      assert.deepEqual(failed.stdout.trim().split('\n'), [
        "src/low/a.ts:1: import '../high/b' — low may not import high (low may import: nothing; src/README.md)",
        'check-layers: 1 violation(s)',
      ]);
      const passed = spawnSync(process.execPath, [SCRIPT, REPO_ROOT], { encoding: 'utf8' });
      assert.equal(passed.status, 0, passed.stdout + passed.stderr);
      assert.equal(passed.stdout, '');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
