/**
 * The checks the cluster suites judge replicas by, on logs built here: the byte prefix below a high
 * watermark (from the batch headers) and the records a log holds. Each check must be able to fail.
 */
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildBatch } from '../../src/client';
import { logRecords, prefixBelow } from './cluster-checks';

/** Three batches: offsets 0-1, 2-4 and 5 (the last one a control batch), concatenated as a segment holds them. */
function threeBatchLog(): { log: Buffer; sizes: number[] } {
  const record = (i: number): { key: Buffer; value: Buffer; headers: [] } => ({
    key: Buffer.from(`k-${i}`),
    value: Buffer.from(`v-${i}`),
    headers: [],
  });
  const batches = [
    buildBatch([record(0), record(1)], { baseOffset: 0 }),
    buildBatch([record(2), record(3), record(4)], { baseOffset: 2 }),
    buildBatch([{ key: null, value: null, headers: [] }], { baseOffset: 5, isControl: true }),
  ];
  return { log: Buffer.concat(batches), sizes: batches.map((b) => b.length) };
}

describe('cluster suite checks', () => {
  test('prefixBelow cuts the log after the last batch below the HW', () => {
    const { log, sizes } = threeBatchLog();
    assert.equal(prefixBelow(log, 0).length, 0);
    assert.equal(prefixBelow(log, 2).length, sizes[0]);
    assert.equal(prefixBelow(log, 5).length, sizes[0]! + sizes[1]!);
    assert.ok(prefixBelow(log, 6).equals(log));
  });

  test('prefixBelow fails when the HW falls inside a batch or beyond the log', () => {
    const { log } = threeBatchLog();
    assert.throws(() => prefixBelow(log, 3), /straddles HW 3/);
    assert.throws(() => prefixBelow(log, 7), /log ends at byte/);
    assert.throws(() => prefixBelow(log.subarray(0, log.length - 1), 6), /runs past the end/);
  });

  test('two logs that differ in one byte of the second batch differ below HW 5, not below HW 2', () => {
    const { log, sizes } = threeBatchLog();
    const other = Buffer.from(log);
    const inSecondBatch = sizes[0]! + 70;
    other[inSecondBatch] = other[inSecondBatch]! ^ 0xff;
    assert.ok(!prefixBelow(other, 5).equals(prefixBelow(log, 5)));
    assert.ok(prefixBelow(other, 2).equals(prefixBelow(log, 2)));
  });

  test('logRecords lists every data record with its offset, and leaves control batches out', () => {
    const { log } = threeBatchLog();
    assert.deepEqual(
      logRecords(log),
      [0, 1, 2, 3, 4].map((i) => ({ offset: i, key: `k-${i}`, value: `v-${i}` })),
    );
  });
});
