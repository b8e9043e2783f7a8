/**
 * The verify report's pure functions (src/verify/report.ts): runSeed's fixed mix, mergeReports'
 * totals in run order, and formatReport's text (golden).
 */
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { emptyReport, formatReport, mergeReports, runSeed, type VerifyReport } from '../../../src/verify/report';

const LOST = 'p0 offset 7 acked by b0 missing after b0 crash';

/** Three runs' worth of counts with one violation and its counterexample. */
const SAMPLE: VerifyReport = {
  mode: 'sim',
  runs: 3,
  faults: { 'message-drop': 4, 'broker-crash': 2, 'disk-full': 0 },
  checks: { 'log-matching': 30, 'dense-offsets': 120 },
  strategies: [
    { strategy: 'acks=1', records: 40, lost: 2, duplicated: 0 },
    { strategy: 'acks=all', records: 38, lost: 1, duplicated: 3 },
    { strategy: 'commit-before-processing', records: 50, lost: 5, duplicated: 0 },
  ],
  violations: [{ invariant: 'acks-all-durable', message: LOST }],
  counterexample: {
    seed: 123456789,
    path: '2:1:0',
    commands: ['produce p0 acks=all x3', 'crash broker 0'],
    logs: 'replica  0  1\nb1 p0    a  b\n',
    violation: { invariant: 'acks-all-durable', message: LOST },
  },
};

const SAMPLE_TEXT = `mode: simulated cluster
runs: 3
faults injected: 6
  broker-crash  2
  message-drop  4
  disk-full     0
invariant checks: 150
  dense-offsets  120
  log-matching    30
strategies (the runs before the failing one; the failing run stops before its counts):
  strategy                  records  lost  duplicated  loss expected
  acks=1                         40     2           0  yes
  acks=all                       38     1           3  no (UNEXPECTED LOSS)
  commit-before-processing       50     5           0  yes
violations: 1
  acks-all-durable: ${LOST}
counterexample:
  replay: 123456789:2:1:0
  violation: acks-all-durable: ${LOST}
  commands (2):
    1. produce p0 acks=all x3
    2. crash broker 0
  logs:
    replica  0  1
    b1 p0    a  b
`;

describe('verify report', () => {
  test('runSeed: fixed values for campaign seed 1 and 0, positive below 2^31, distinct per run', () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((r) => runSeed(1, r)),
      [1243347218, 43495197, 273827428, 934906588],
    );
    const seeds = new Set<number>();
    for (let r = 0; r < 1000; r++) {
      const s = runSeed(0, r);
      assert.ok(Number.isInteger(s) && s > 0 && s < 2 ** 31, `runSeed(0, ${r}) = ${s}`);
      seeds.add(s);
    }
    assert.equal(seeds.size, 1000);
    assert.notEqual(runSeed(1, 5), runSeed(2, 5));
    assert.equal(runSeed(2 ** 32 + 1, 5), runSeed(1, 5), 'the campaign seed is taken modulo 2^32');
  });

  test('formatReport: golden text of a three-run report with a counterexample', () => {
    assert.equal(formatReport(SAMPLE), SAMPLE_TEXT);
  });

  test('formatReport: an empty real report says none for every section', () => {
    assert.equal(
      formatReport(emptyReport('real')),
      [
        'mode: real brokers',
        'runs: 0',
        'faults injected: none',
        'invariant checks: none',
        'strategies:',
        '  (none exercised)',
        'violations: none',
        'counterexample: none',
        '',
      ].join('\n'),
    );
  });

  test('mergeReports: sums counts, orders strategies producers first, keeps violations in run order and the first counterexample', () => {
    const later: VerifyReport = {
      mode: 'sim',
      runs: 2,
      faults: { 'broker-crash': 1, 'power-loss': 3 },
      checks: { 'dense-offsets': 5, 'leader-epochs': 2 },
      strategies: [
        { strategy: 'commit-after-processing', records: 9, lost: 0, duplicated: 2 },
        { strategy: 'acks=1', records: 10, lost: 1, duplicated: 1 },
      ],
      violations: [{ invariant: 'dense-offsets', message: 'gap at 4' }],
      counterexample: { ...SAMPLE.counterexample!, seed: 99, path: '0' },
    };
    const merged = mergeReports([SAMPLE, later]);
    assert.deepEqual(merged, {
      mode: 'sim',
      runs: 5,
      faults: { 'message-drop': 4, 'broker-crash': 3, 'disk-full': 0, 'power-loss': 3 },
      checks: { 'log-matching': 30, 'dense-offsets': 125, 'leader-epochs': 2 },
      strategies: [
        { strategy: 'acks=1', records: 50, lost: 3, duplicated: 1 },
        { strategy: 'acks=all', records: 38, lost: 1, duplicated: 3 },
        { strategy: 'commit-after-processing', records: 9, lost: 0, duplicated: 2 },
        { strategy: 'commit-before-processing', records: 50, lost: 5, duplicated: 0 },
      ],
      violations: [
        { invariant: 'acks-all-durable', message: LOST },
        { invariant: 'dense-offsets', message: 'gap at 4' },
      ],
      counterexample: SAMPLE.counterexample,
    });
    assert.equal(SAMPLE.runs, 3, 'the inputs are not modified');
    assert.equal(SAMPLE.strategies[0]?.records, 40);
    assert.deepEqual(mergeReports([]), emptyReport('sim'));
    assert.throws(() => mergeReports([SAMPLE, emptyReport('real')]), /cannot merge a real report into a sim one/);
  });
});
