import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildBatch, decodeBatches } from '../../../src/client/batch';
import type { BuildRecord } from '../../../src/protocol/record-batch/builder';
import { CompressionCodec, type CompressionCodecId } from '../../../src/protocol/record-batch/compression';
import * as L from '../../../src/protocol/record-batch/layout';
import { crcValid } from '../../../src/protocol/record-batch/view';
import { DELETE_HORIZON_FLAG_MASK, filterSegmentBytes, latestOffsetsOf } from '../../../src/storage/compaction-filter';
import { splitBatches } from './helpers';

const T0 = 1_700_000_000_000;
const rec = (
  key: string | null,
  value: string | null,
  timestamp = T0,
  headers: BuildRecord['headers'] = [],
): BuildRecord => ({
  key: key === null ? null : Buffer.from(key),
  value: value === null ? null : Buffer.from(value),
  timestamp,
  headers,
});

/** Batches laid out as a segment: `specs[i]` records at consecutive offsets from `base`. */
function segment(
  specs: BuildRecord[][],
  codec: CompressionCodecId = 0,
  base = 0,
  extra: Partial<Parameters<typeof buildBatch>[1]> = {},
): Buffer {
  const parts: Buffer[] = [];
  let offset = base;
  for (const records of specs) {
    parts.push(buildBatch(records, { baseOffset: offset, partitionLeaderEpoch: 3, compression: codec, ...extra }));
    offset += records.length;
  }
  return Buffer.concat(parts);
}

function clean(bytes: Buffer, nowMs = T0 + 1000, deleteRetentionMs = 60_000) {
  const map = latestOffsetsOf(bytes, 0, Number.MAX_SAFE_INTEGER);
  return filterSegmentBytes(bytes, { offsetMap: map, nowMs, deleteRetentionMs });
}

function keptRecords(bytes: Buffer): Array<{ offset: number; key: string | null; value: string | null }> {
  return decodeBatches(bytes).flatMap((b) =>
    b.records.map((r) => ({ offset: r.offset, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null })),
  );
}

function assertCrcs(bytes: Buffer): void {
  for (const b of splitBatches(bytes)) assert.ok(crcValid(b.bytes, 0, b.bytes.length), `CRC of batch ${b.baseOffset}`);
}

describe('compaction filter', () => {
  it('builds the offset map of the latest offset per key within the dirty range only', () => {
    const bytes = segment([[rec('a', '1'), rec('b', '1')], [rec('a', '2')], [rec('a', '3'), rec(null, 'x')]]);
    const map = latestOffsetsOf(bytes, 0, 3); // offsets 0..2: a@2, b@1
    assert.deepEqual([...map.entries()].sort(), [
      ['a', 2],
      ['b', 1],
    ]);
    const from1 = latestOffsetsOf(bytes, 2, 10);
    assert.deepEqual([...from1.entries()].sort(), [['a', 3]]);
  });

  it('keeps exactly the latest record per key with its original offset; batches keep baseOffset and lastOffsetDelta', () => {
    const bytes = segment([
      [rec('a', 'a0'), rec('b', 'b0'), rec('c', 'c0')],
      [rec('a', 'a1'), rec('b', 'b1')],
      [rec('a', 'a2'), rec('d', 'd0')],
    ]);
    const { bytes: out, stats } = clean(bytes);
    assert.deepEqual(keptRecords(out), [
      { offset: 2, key: 'c', value: 'c0' },
      { offset: 4, key: 'b', value: 'b1' },
      { offset: 5, key: 'a', value: 'a2' },
      { offset: 6, key: 'd', value: 'd0' },
    ]);
    const batches = decodeBatches(out);
    assert.deepEqual(
      batches.map((b) => [b.baseOffset, b.lastOffsetDelta, b.records.length]),
      [
        [0, 2, 1],
        [3, 1, 1],
        [5, 1, 2],
      ],
    );
    assert.ok(batches.every((b) => b.partitionLeaderEpoch === 3));
    assert.equal(stats.batchesCopied, 1, 'the last batch lost nothing: copied byte for byte');
    assert.ok(out.subarray(out.length - splitBatches(out)[2]!.bytes.length).equals(splitBatches(bytes)[2]!.bytes));
    assert.equal(stats.recordsRead, 7);
    assert.equal(stats.recordsRetained, 4);
    assertCrcs(out);
  });

  it('drops a batch left with no record and keyless records', () => {
    const bytes = segment([
      [rec('a', '1'), rec('a', '2')],
      [rec(null, 'nokey'), rec('a', '3')],
    ]);
    const { bytes: out, stats } = clean(bytes);
    assert.deepEqual(keptRecords(out), [{ offset: 3, key: 'a', value: '3' }]);
    assert.equal(splitBatches(out).length, 1);
    assert.equal(stats.keylessRemoved, 1);
  });

  it("keeps an idempotent producer's last batch as an empty batch when cleaning empties it; drops its earlier ones", () => {
    const parts = [
      buildBatch([rec('a', '1', T0 + 1)], {
        baseOffset: 0,
        producerId: 5,
        producerEpoch: 1,
        baseSequence: 0,
        compression: 1,
      }),
      buildBatch([rec('a', '2', T0 + 2), rec('b', '1', T0 + 3)], {
        baseOffset: 1,
        producerId: 5,
        producerEpoch: 1,
        baseSequence: 1,
        compression: 1,
      }),
      buildBatch([rec('a', '3'), rec('b', '2')], { baseOffset: 3 }),
    ];
    const bytes = Buffer.concat(parts);
    const map = latestOffsetsOf(bytes, 0, Number.MAX_SAFE_INTEGER);
    const producerLastOffsets = new Map([[5, 2]]);
    const { bytes: out, stats } = filterSegmentBytes(bytes, {
      offsetMap: map,
      nowMs: T0,
      deleteRetentionMs: 0,
      producerLastOffsets,
    });
    const batches = splitBatches(out);
    assert.deepEqual(
      batches.map((b) => [b.baseOffset, b.lastOffset]),
      [
        [1, 2],
        [3, 4],
      ],
      'the first batch of producer 5 goes; its last stays with its offset range',
    );
    const empty = batches[0]!.bytes;
    assert.equal(empty.length, L.RECORD_BATCH_OVERHEAD);
    assert.equal(empty.readInt32BE(L.RECORDS_COUNT), 0);
    assert.equal(empty.readBigInt64BE(L.PRODUCER_ID), 5n);
    assert.equal(empty.readInt16BE(L.PRODUCER_EPOCH), 1);
    assert.equal(empty.readInt32BE(L.BASE_SEQUENCE), 1);
    assert.equal(empty.readInt32BE(L.PARTITION_LEADER_EPOCH), -1, 'partitionLeaderEpoch kept');
    assert.equal(empty.readInt16BE(L.ATTRIBUTES) & L.COMPRESSION_CODEC_MASK, 0, 'no codec');
    assert.equal(Number(empty.readBigInt64BE(L.MAX_TIMESTAMP)), T0 + 3, 'the original maxTimestamp');
    assert.equal(Number(empty.readBigInt64BE(L.BASE_TIMESTAMP)), T0 + 3);
    assertCrcs(out);
    assert.equal(stats.emptyBatchesRetained, 1);
    assert.deepEqual(decodeBatches(out)[0]!.records, []);
    const without = filterSegmentBytes(bytes, { offsetMap: map, nowMs: T0, deleteRetentionMs: 0 });
    assert.equal(splitBatches(without.bytes).length, 1, 'without producer state both emptied batches go');
  });

  it('keeps record headers, attributes and timestamps; recomputes maxTimestamp of CreateTime batches', () => {
    const headers = [
      { key: 'h1', value: Buffer.from('v1') },
      { key: 'h2', value: null },
    ];
    const bytes = segment([
      [rec('a', 'old', T0 + 5), rec('b', 'kept', T0 + 2, headers), rec('a', 'new', T0 + 9)],
      [rec('a', 'newest', T0 + 20)],
    ]);
    const { bytes: out } = clean(bytes);
    const [first] = decodeBatches(out);
    assert.equal(first!.records.length, 1);
    const r = first!.records[0]!;
    assert.equal(r.key!.toString(), 'b');
    assert.equal(r.offset, 1);
    assert.equal(r.timestamp, T0 + 2);
    assert.deepEqual(
      r.headers.map((h) => [h.key, h.value?.toString() ?? null]),
      [
        ['h1', 'v1'],
        ['h2', null],
      ],
    );
    assert.equal(first!.maxTimestamp, T0 + 2, 'maxTimestamp over retained records');
    assert.equal(first!.baseTimestamp, T0 + 5, 'baseTimestamp kept when no delete horizon is set');
  });

  it('keeps producer id, epoch, base sequence, transactional and LogAppendTime bits', () => {
    const bytes = segment([[rec('a', '1'), rec('b', '1')], [rec('a', '2')]], 0, 0, {
      producerId: 77,
      producerEpoch: 4,
      baseSequence: 10,
      logAppendTime: true,
    });
    const { bytes: out } = clean(bytes);
    const [first] = splitBatches(out);
    const b = first!.bytes;
    assert.equal(b.readBigInt64BE(L.PRODUCER_ID), 77n);
    assert.equal(b.readInt16BE(L.PRODUCER_EPOCH), 4);
    assert.equal(b.readInt32BE(L.BASE_SEQUENCE), 10);
    assert.equal(b.readInt32BE(L.LAST_OFFSET_DELTA), 1);
    assert.ok((b.readInt16BE(L.ATTRIBUTES) & L.TIMESTAMP_TYPE_MASK) !== 0);
    assertCrcs(out);
  });

  for (const codec of [
    CompressionCodec.gzip,
    CompressionCodec.snappy,
    CompressionCodec.lz4,
    CompressionCodec.zstd,
  ] as const) {
    it(`decompresses, filters and recompresses codec ${codec} batches with valid CRCs`, () => {
      const many: BuildRecord[] = [];
      for (let i = 0; i < 50; i++)
        many.push(
          rec(`k${i % 7}`, `value-${i}-${'x'.repeat(40)}`, T0 + i, [{ key: 'n', value: Buffer.from(String(i)) }]),
        );
      const bytes = segment([many.slice(0, 25), many.slice(25)], codec);
      const { bytes: out } = clean(bytes);
      for (const b of splitBatches(out))
        assert.equal(b.bytes.readInt16BE(L.ATTRIBUTES) & L.COMPRESSION_CODEC_MASK, codec);
      assertCrcs(out);
      const kept = decodeBatches(out).flatMap((b) => b.records);
      assert.deepEqual(
        kept.map((r) => r.offset),
        [43, 44, 45, 46, 47, 48, 49],
      );
      assert.deepEqual(
        kept.map((r) => r.headers[0]!.value!.toString()),
        ['43', '44', '45', '46', '47', '48', '49'],
      );
      assert.deepEqual(
        kept.map((r) => r.timestamp),
        [43, 44, 45, 46, 47, 48, 49].map((i) => T0 + i),
      );
    });
  }

  it('sets a delete horizon on a retained tombstone, then removes it once the horizon has passed', () => {
    const bytes = segment([
      [rec('a', '1'), rec('b', '1')],
      [rec('a', null, T0 + 7), rec('c', '1')],
    ]);
    const first = clean(bytes, T0 + 1000, 60_000);
    assert.deepEqual(keptRecords(first.bytes), [
      { offset: 1, key: 'b', value: '1' },
      { offset: 2, key: 'a', value: null },
      { offset: 3, key: 'c', value: '1' },
    ]);
    const horizon = T0 + 1000 + 60_000;
    assert.equal(first.earliestDeleteHorizonMs, horizon);
    const tombBatch = decodeBatches(first.bytes)[1]!;
    assert.ok((tombBatch.attributes & DELETE_HORIZON_FLAG_MASK) !== 0);
    assert.equal(tombBatch.baseTimestamp, horizon);
    assert.equal(tombBatch.records[0]!.timestamp, T0 + 7, 'record timestamps survive the new baseTimestamp');
    assertCrcs(first.bytes);

    const before = filterSegmentBytes(first.bytes, {
      offsetMap: new Map(),
      nowMs: horizon - 1,
      deleteRetentionMs: 60_000,
    });
    assert.ok(before.bytes.equals(first.bytes), 'before the horizon nothing changes');
    assert.equal(before.earliestDeleteHorizonMs, horizon);

    const after = filterSegmentBytes(first.bytes, { offsetMap: new Map(), nowMs: horizon, deleteRetentionMs: 60_000 });
    assert.deepEqual(keptRecords(after.bytes), [
      { offset: 1, key: 'b', value: '1' },
      { offset: 3, key: 'c', value: '1' },
    ]);
    assert.equal(after.stats.tombstonesRemoved, 1);
    assert.equal(after.earliestDeleteHorizonMs, -1);
    const rest = decodeBatches(after.bytes)[1]!;
    assert.equal(rest.attributes & DELETE_HORIZON_FLAG_MASK, 0, 'the flag goes with the last tombstone');
    assert.equal(rest.records[0]!.timestamp, T0);
    assertCrcs(after.bytes);
  });

  it('copies control batches and batches whose records do not decode unchanged', () => {
    const control = buildBatch([rec(null, null)], { baseOffset: 0, isControl: true });
    const bogus = Buffer.from(buildBatch([rec('a', '1')], { baseOffset: 1 }));
    bogus.writeInt32BE(5, L.RECORDS_COUNT); // claims more records than it holds
    const fine = buildBatch([rec('a', '2')], { baseOffset: 2 });
    const bytes = Buffer.concat([control, bogus, fine]);
    const { bytes: out, stats } = filterSegmentBytes(bytes, {
      offsetMap: new Map([['a', 2]]),
      nowMs: T0,
      deleteRetentionMs: 0,
    });
    assert.ok(out.equals(bytes));
    assert.equal(stats.undecodableBatches, 1);
  });

  it('is pure: the same input gives the same bytes', () => {
    const bytes = segment([[rec('a', '1'), rec('b', null)], [rec('a', '2')]], CompressionCodec.zstd);
    assert.ok(clean(bytes).bytes.equals(clean(bytes).bytes));
  });
});
