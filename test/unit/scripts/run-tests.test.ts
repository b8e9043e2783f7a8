/**
 * scripts/run-tests.js: `--help` prints usage instead of running anything, an unknown option is a
 * usage error, and a run interrupted by SIGTERM stops its test files, SIGKILLs the brokers they
 * started and removes the run's temp dirs (a killed `npm test` used to leave brokers and data behind).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');
const script = path.join(repoRoot, 'scripts', 'run-tests.js');
const brokerHelper = path.join(repoRoot, 'dist', 'test', 'helpers', 'broker-process.js');

/** This process's environment for a nested run, without node:test's marker that refuses recursion. */
function runnerEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs: number, detail = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}\n${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('scripts/run-tests.js', () => {
  it('--help prints the usage and runs no test', () => {
    const run = spawnSync(process.execPath, [script, '--help'], { encoding: 'utf8', env: runnerEnv({}) });
    assert.equal(run.status, 0);
    assert.match(run.stdout, /^Usage: node scripts\/run-tests\.js \[--long\] \[substring\.\.\.\]/);
    assert.doesNotMatch(run.stdout, /^tests: /m);
  });

  it('an unknown option is a usage error (exit 2) that names it', () => {
    const run = spawnSync(process.execPath, [script, '--bogus'], { encoding: 'utf8', env: runnerEnv({}) });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /unknown option --bogus/);
  });

  it('SIGTERM stops the run: its broker is killed and its temp dirs are removed', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-run-tests-'));
    const infoFile = path.join(root, 'info.json');
    try {
      // A test file that starts a real broker, says where it is, and then waits far longer than the test.
      fs.writeFileSync(
        path.join(root, 'sleeper.test.js'),
        `const { test } = require('node:test');
const fs = require('node:fs');
const os = require('node:os');
const { startBrokerProcess } = require(${JSON.stringify(brokerHelper)});
test('waits', async () => {
  const broker = await startBrokerProcess();
  fs.writeFileSync(${JSON.stringify(infoFile)}, JSON.stringify({ pid: broker.proc.pid, dataDir: broker.dataDir, tmp: os.tmpdir() }));
  await new Promise((resolve) => setTimeout(resolve, 120000));
});
`,
      );
      const run = spawn(process.execPath, [script], {
        cwd: repoRoot,
        env: runnerEnv({ SKIFF_TEST_ROOT: root, SKIFF_TEST_KEEP_DATA: '' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      run.stdout.on('data', (chunk) => (output += chunk));
      run.stderr.on('data', (chunk) => (output += chunk));
      const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
      const info = await waitFor(
        'the sleeper to start its broker',
        () =>
          fs.existsSync(infoFile)
            ? (JSON.parse(fs.readFileSync(infoFile, 'utf8')) as Record<string, unknown>)
            : undefined,
        30_000,
        () => output,
      );
      const pid = info.pid as number;
      const dataDir = info.dataDir as string;
      const runTmp = info.tmp as string;
      assert.ok(isAlive(pid), 'the broker runs');
      assert.ok(dataDir.startsWith(runTmp), `the broker's data dir ${dataDir} is inside the run's TMPDIR ${runTmp}`);
      run.kill('SIGTERM');
      const code = await exited;
      assert.equal(code, 143, output);
      await waitFor('the broker to exit', () => (isAlive(pid) ? undefined : true), 15_000);
      assert.equal(fs.existsSync(dataDir), false, 'the data dir is removed');
      assert.equal(fs.existsSync(runTmp), false, "the run's temp dir is removed");
      assert.match(output, /run-tests: interrupted by SIGTERM/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
