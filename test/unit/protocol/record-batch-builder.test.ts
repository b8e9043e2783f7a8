/** Record batch v2 build/decode: null vs empty keys and values, headers, timestamps, CRC-32C. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError } from '../../../src/protocol/primitives';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { decodeRecordBatch, decodeRecordBatches, decodeRecords } from '../../../src/protocol/record-batch/decode';
import type { BuildRecord } from '../../../src/protocol/record-batch/builder';
import {
  checkBatch,
  crcValid,
  lastOffsetDeltaOf,
  maxTimestampOf,
  recordsCountOf,
  writeCrc,
} from '../../../src/protocol/record-batch/view';
import * as L from '../../../src/protocol/record-batch/layout';

const RECORDS: BuildRecord[] = [
  { key: null, value: null, headers: [], timestamp: 1_000 },
  { key: Buffer.alloc(0), value: Buffer.alloc(0), timestamp: 900 },
  {
    key: Buffer.from('k'),
    value: Buffer.from('v'.repeat(300)),
    headers: [
      { key: 'h1', value: null },
      { key: '', value: Buffer.alloc(0) },
      { key: 'ключ', value: Buffer.from([0, 255]) },
    ],
    timestamp: 5_000,
  },
  { key: null, value: Buffer.from('last') },
];

describe('record batch builder', () => {
  it('round trips records keeping null and empty keys, values and header values distinct', () => {
    const batch = buildRecordBatch(RECORDS, { baseOffset: 100, baseTimestamp: 1_000 });
    const decoded = decodeRecords(batch);
    assert.equal(decoded.length, RECORDS.length);
    decoded.forEach((d, i) => {
      const r = RECORDS[i]!;
      assert.equal(d.offsetDelta, i);
      assert.equal(d.offset, 100 + i);
      assert.equal(d.timestamp, r.timestamp ?? 1_000);
      assert.deepStrictEqual(d.key, r.key);
      assert.deepStrictEqual(d.value, r.value);
      assert.deepStrictEqual(d.headers, r.headers ?? []);
    });
    assert.equal(decoded[0]!.key, null);
    assert.equal(decoded[1]!.key!.length, 0);
    assert.equal(decoded[0]!.value, null);
    assert.equal(decoded[1]!.value!.length, 0);
    assert.equal(decoded[2]!.headers[0]!.value, null);
    assert.equal(decoded[2]!.headers[1]!.value!.length, 0);
    assert.equal(decoded[1]!.timestampDelta, -100, 'negative timestamp deltas are zig-zag varlongs');
  });

  it('writes a valid header and CRC-32C that view.ts accepts', () => {
    const batch = buildRecordBatch(RECORDS, {
      baseTimestamp: 1_000,
      producerId: 77,
      producerEpoch: 2,
      baseSequence: 10,
      partitionLeaderEpoch: 5,
      isTransactional: true,
    });
    assert.equal(checkBatch(batch, 0, batch.length), batch.length);
    assert.ok(crcValid(batch, 0, batch.length));
    assert.equal(recordsCountOf(batch), 4);
    assert.equal(lastOffsetDeltaOf(batch), 3);
    assert.equal(maxTimestampOf(batch), 5_000);
    const h = decodeRecordBatch(batch);
    assert.equal(h.magic, 2);
    assert.equal(h.producerId, 77);
    assert.equal(h.producerEpoch, 2);
    assert.equal(h.baseSequence, 10);
    assert.equal(h.partitionLeaderEpoch, 5);
    assert.equal(h.attributes, L.TRANSACTIONAL_FLAG_MASK);
    assert.equal(h.sizeBytes, batch.length);
    assert.equal(h.crc, batch.readUInt32BE(L.CRC));
  });

  it('defaults: producer fields -1, baseTimestamp from the first record', () => {
    const batch = buildRecordBatch([{ key: Buffer.from('a'), value: Buffer.from('b'), timestamp: 42 }]);
    const h = decodeRecordBatch(batch);
    assert.deepStrictEqual(
      [h.baseOffset, h.producerId, h.producerEpoch, h.baseSequence, h.partitionLeaderEpoch],
      [0, -1, -1, -1, -1],
    );
    assert.equal(h.baseTimestamp, 42);
    assert.equal(h.maxTimestamp, 42);
    assert.throws(() => buildRecordBatch([]), RangeError);
  });

  it('a flipped byte inside the CRC range is detected; baseOffset/leader epoch are outside it', () => {
    const batch = buildRecordBatch(RECORDS);
    const copy = Buffer.from(batch);
    copy[copy.length - 1]! ^= 0x01;
    assert.equal(crcValid(copy, 0, copy.length), false);
    assert.equal(checkBatch(copy, 0, copy.length), 'CRC-32C mismatch');
    const moved = Buffer.from(batch);
    moved.writeBigInt64BE(123n, L.BASE_OFFSET);
    moved.writeInt32BE(9, L.PARTITION_LEADER_EPOCH);
    assert.ok(crcValid(moved, 0, moved.length));
    writeCrc(copy, 0, copy.length);
    assert.ok(crcValid(copy, 0, copy.length));
  });

  it('decodes a record set of several batches and ignores a truncated trailing batch', () => {
    const a = buildRecordBatch([{ key: null, value: Buffer.from('1') }], { baseOffset: 0 });
    const b = buildRecordBatch(
      [
        { key: null, value: Buffer.from('2') },
        { key: null, value: Buffer.from('3') },
      ],
      { baseOffset: 1 },
    );
    const c = buildRecordBatch([{ key: null, value: Buffer.from('4') }], { baseOffset: 3 });
    const set = Buffer.concat([a, b, c.subarray(0, c.length - 5)]);
    const batches = decodeRecordBatches(set);
    assert.deepStrictEqual(
      batches.map((x) => x.records.map((r) => [r.offset, r.value!.toString()])),
      [
        [[0, '1']],
        [
          [1, '2'],
          [2, '3'],
        ],
      ],
    );
  });

  it('rejects compressed, truncated and malformed batches with ProtocolError', () => {
    const batch = buildRecordBatch(RECORDS);
    const gz = Buffer.from(batch);
    gz.writeInt16BE(1, L.ATTRIBUTES);
    assert.throws(() => decodeRecords(gz), ProtocolError);
    assert.throws(() => decodeRecords(batch.subarray(0, batch.length - 1)), ProtocolError);
    assert.throws(() => decodeRecords(batch.subarray(0, 30)), ProtocolError);
    const badMagic = Buffer.from(batch);
    badMagic[L.MAGIC] = 1;
    assert.throws(() => decodeRecords(badMagic), ProtocolError);
    const badCount = Buffer.from(batch);
    badCount.writeInt32BE(0x7fffffff, L.RECORDS_COUNT);
    assert.throws(() => decodeRecords(badCount), ProtocolError);
    const badLength = Buffer.from(batch);
    badLength[L.RECORDS] = 0x7f; // first record claims a length past the batch end
    assert.throws(() => decodeRecords(badLength), ProtocolError);
  });
});
