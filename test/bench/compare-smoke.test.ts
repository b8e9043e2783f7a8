/**
 * The reference harness keeps working (issue 13, item 1): `node dist/bench/compare.js --smoke` with
 * the single-node section (Kafka fixture, Skiff, and this same build again as `--skiff-before`, the
 * franz-go load generator) and the three-node section (a three-node Kafka beside `skiff start
 * --nodes 3`, one failover each) writes a JSON file holding every figure those sections report, each
 * with a number on both sides (about 15 s and 55 s). The partitions section is left out (its own
 * branch smokes it). Only the presence and shape of the figures is asserted, never their values: no
 * timing here.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import type { Figure } from '../../bench/figures';
import { formatRatioTable } from '../../bench/harness';
import { repoRoot } from '../helpers/kafka-fixture';

const TIMEOUT_MS = 300_000;

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
  const timer = setTimeout(() => child.kill('SIGTERM'), TIMEOUT_MS - 10_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

test(
  'bench:compare --smoke writes every single-node and three-node figure with Kafka, Skiff and the variants',
  { timeout: TIMEOUT_MS },
  async () => {
    const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-compare-smoke-')), 'out.json');
    const r = await runCompare(['--smoke', '--no-partitions', '--skiff-before', repoRoot(), '--json', json]);
    assert.equal(r.code, 0, r.output.slice(-4000));
    const doc = JSON.parse(fs.readFileSync(json, 'utf8')) as {
      figures: Figure[];
      failedSections: unknown[];
      options: { client: { loadgen: string }; sections: string[] };
    };
    assert.deepEqual(doc.failedSections, []);
    assert.deepEqual(doc.options.sections, ['single-node', 'cluster']);
    assert.equal(doc.options.client.loadgen, 'franz');
    const got = new Map(doc.figures.map((f) => [`${f.section}|${f.config}|${f.metric}`, f]));
    const expected = [
      ...EXPECTED.map((e) => ['single-node', ...e] as const),
      ...EXPECTED_CLUSTER.map((e) => ['cluster', ...e] as const),
    ];
    const want = expected.flatMap(([section, config, metrics]) => metrics.map((m) => `${section}|${config}|${m}`));
    assert.deepEqual([...got.keys()].sort(), [...want].sort());
    for (const [section, config, metrics, writeCaching] of expected) {
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
    for (const [key, target] of Object.entries(TARGETS))
      assert.equal(got.get(`single-node|${key}`)?.targetRatio, target, key);
    // The printed table has a line per figure.
    assert.equal(r.output.split('\n').filter((l) => /^\| (single-node|cluster) /.test(l)).length, want.length);
  },
);

test('the ratio table says whether each target is met', () => {
  const lines = formatRatioTable([
    { section: 's', config: 'a', metric: 'cpuMsPerMB', better: 'lower', kafka: 10, skiff: 4, targetRatio: 0.5 },
    { section: 's', config: 'b', metric: 'recordsPerSec', better: 'higher', kafka: 10, skiff: 12, targetRatio: 1.5 },
    { section: 's', config: 'c', metric: 'p99Ms', better: 'lower', kafka: 10, skiff: null, targetRatio: 1 },
    { section: 's', config: 'd', metric: 'MBPerSec', better: 'higher', kafka: 10, skiff: 30, variants: { before: 20 } },
  ]);
  const cells = lines.map((l) => l.split('|').map((c) => c.trim()));
  assert.deepEqual(cells[0]!.slice(1, -1), [
    'section',
    'config',
    'metric',
    'Kafka',
    'Skiff',
    'Skiff/Kafka',
    'before/Kafka',
    'target',
    'met',
  ]);
  assert.deepEqual(cells[1]!.slice(4, -1), ['10.00', '4.00', '0.40', '', '<= 0.5', 'yes']);
  assert.deepEqual(cells[2]!.slice(4, -1), ['10.00', '12.00', '1.20', '', '>= 1.5', 'NO']);
  assert.deepEqual(cells[3]!.slice(4, -1), ['10.00', '-', '-', '', '<= 1', 'n/a']);
  assert.deepEqual(cells[4]!.slice(4, -1), ['10.00', '30.00', '3.00', '2.00', '', '']);
});
