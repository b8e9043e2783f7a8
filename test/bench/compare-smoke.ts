/**
 * The check of the harness's smoke runs (test/bench/compare-smoke*.test.ts): runs
 * `node dist/bench/compare.js --smoke --only <section>` and asserts that the JSON it writes holds
 * every figure the section reports, each with a number for Kafka and Skiff (and for the variants the
 * section measures). Only the presence and shape of the figures, never their values: no timing.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Figure } from '../../bench/figures';
import { repoRoot } from '../helpers/kafka-fixture';

/** How long one smoke run may take before it is stopped. */
export const SMOKE_TIMEOUT_MS = 300_000;

/** Every (config, metric) of the single-node section, and the configs with a write.caching=true variant. */
const PRODUCE_PEAK = ['recordsPerSec', 'MBPerSec', 'p50Ms', 'p99Ms', 'p999Ms', 'cpuMsPerMB'];
const CONSUME = ['recordsPerSec', 'MBPerSec', 'cpuMsPerMB'];
const FIXED = ['recordsPerSec', 'p50Ms', 'p99Ms', 'p999Ms', 'cpuMsPerMB'];
const CLUSTER = ['recordsPerSec', 'MBPerSec', 'p50Ms', 'p99Ms', 'p999Ms', 'cpuMsPerMB'];
const EXPECTED_CLUSTER: Array<[config: string, metrics: string[], writeCaching: boolean]> = [
  ['produce RF=3 acks=all 100 B peak', CLUSTER, true],
  ['produce RF=1 acks=1 100 B peak (3 nodes)', CLUSTER, false],
  ["failover after a hard crash of the leader's broker", ['windowMs'], false],
];
const EXPECTED: Array<[config: string, metrics: string[], writeCaching: boolean]> = [
  ['produce acks=1 100 B peak', PRODUCE_PEAK, false],
  ['produce acks=all 100 B peak', PRODUCE_PEAK, true],
  ['produce acks=1 1024 B peak', PRODUCE_PEAK, false],
  ['produce acks=all 1024 B peak', PRODUCE_PEAK, true],
  ['consume 100 B', CONSUME, false],
  ['consume 1024 B', CONSUME, false],
  ['produce acks=1 1024 B 20000 rec/s', FIXED, false],
  ['produce acks=all 1024 B 20000 rec/s', FIXED, true],
];
/** The targets, by config and metric. */
const TARGETS: Record<string, number> = {
  'produce acks=1 100 B peak|recordsPerSec': 1.5,
  'produce acks=1 100 B peak|cpuMsPerMB': 0.5,
  'produce acks=all 1024 B peak|cpuMsPerMB': 0.5,
  'consume 1024 B|recordsPerSec': 1.5,
  'consume 100 B|cpuMsPerMB': 0.5,
  'produce acks=1 1024 B 20000 rec/s|p99Ms': 0.5,
  'produce acks=all 1024 B 20000 rec/s|p99Ms': 1.0,
};

function runCompare(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [path.join(repoRoot(), 'dist', 'bench', 'compare.js'), ...args], {
    cwd: repoRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
  const timer = setTimeout(() => child.kill('SIGTERM'), SMOKE_TIMEOUT_MS - 10_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * Runs the smoke of `section` (single-node: with this same build again as `--skiff-before`) and
 * checks its figures as the module comment says.
 */
export async function checkSmoke(section: 'single-node' | 'cluster'): Promise<void> {
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-compare-smoke-')), 'out.json');
  const r = await runCompare([
    '--smoke',
    '--only',
    section,
    ...(section === 'single-node' ? ['--skiff-before', repoRoot()] : []),
    '--json',
    json,
  ]);
  assert.equal(r.code, 0, r.output.slice(-4000));
  const doc = JSON.parse(fs.readFileSync(json, 'utf8')) as {
    figures: Figure[];
    failedSections: unknown[];
    options: { client: { loadgen: string }; sections: string[] };
  };
  assert.deepEqual(doc.failedSections, []);
  assert.deepEqual(doc.options.sections, [section]);
  assert.equal(doc.options.client.loadgen, 'franz');
  const got = new Map(doc.figures.map((f) => [`${f.section}|${f.config}|${f.metric}`, f]));
  const expected = section === 'single-node' ? EXPECTED : EXPECTED_CLUSTER;
  const want = expected.flatMap(([config, metrics]) => metrics.map((m) => `${section}|${config}|${m}`));
  assert.deepEqual([...got.keys()].sort(), [...want].sort());
  for (const [config, metrics, writeCaching] of expected) {
    for (const metric of metrics) {
      const f = got.get(`${section}|${config}|${metric}`)!;
      assert.ok(isNumber(f.kafka), `${config} ${metric}: Kafka ${f.kafka}`);
      assert.ok(isNumber(f.skiff), `${config} ${metric}: Skiff ${f.skiff}`);
      // --skiff-before is measured in the single-node section only.
      if (section === 'single-node')
        assert.ok(isNumber(f.variants?.before), `${config} ${metric}: before ${f.variants?.before}`);
      else assert.equal(f.variants?.before, undefined);
      if (writeCaching)
        assert.ok(isNumber(f.variants?.['write.caching=true']), `${config} ${metric}: write.caching=true`);
      else assert.equal(f.variants?.['write.caching=true'], undefined);
      assert.equal(f.better, metric === 'recordsPerSec' || metric === 'MBPerSec' ? 'higher' : 'lower');
    }
  }
  if (section === 'single-node')
    for (const [key, target] of Object.entries(TARGETS))
      assert.equal(got.get(`single-node|${key}`)?.targetRatio, target, key);
  // The printed table has a line per figure.
  assert.equal(r.output.split('\n').filter((l) => l.startsWith(`| ${section} `)).length, want.length);
}
