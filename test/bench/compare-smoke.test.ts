/**
 * The reference harness keeps working (issue 13, item 1): the smoke of its single-node section (Kafka
 * fixture, Skiff, this same build again as `--skiff-before`, the franz-go load generator; about 15-25 s)
 * writes every figure with numbers on both sides (test/bench/compare-smoke.ts), and the ratio table
 * says whether each target is met. The three-node section's smoke is in compare-smoke-cluster.long
 * (a three-node Kafka and a failover take 35-80 s on a loaded host, past npm test's budget); the
 * partitions section is smoked on its own. No assertion on any timing's value.
 */
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatRatioTable } from '../../bench/harness';
import { checkSmoke, SMOKE_TIMEOUT_MS } from './compare-smoke';

test(
  'bench:compare --smoke --only single-node writes every figure with Kafka, Skiff and both variants',
  { timeout: SMOKE_TIMEOUT_MS },
  () => checkSmoke('single-node'),
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
