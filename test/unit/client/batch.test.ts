import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildBatch, compressBatch, decodeBatch, decodeBatches } from '../../../src/client/batch';
import { buildRecordBatch, type BuildRecord } from '../../../src/protocol/record-batch/builder';
import { COMPRESSION_NAMES, codecFromName } from '../../../src/protocol/record-batch/compression';
import * as L from '../../../src/protocol/record-batch/layout';
import { crcValid } from '../../../src/protocol/record-batch/view';

/**
 * Batches as real clients wrote them, fetched back from a Skiff broker: Kafka's Java producer
 * (kafka-clients 4.1.1: xerial snappy, its own LZ4 frames, zstd-jni) and kcat 1.7.1 (librdkafka
 * 2.0.2: raw snappy). Each holds 3 records. (librdkafka writes LZ4 only to a broker that
 * advertises FindCoordinator, and leaves a batch uncompressed when compressing does not shrink it:
 * its LZ4 record set below has longer values and came out as two batches.)
 */
const FIXTURES: Array<[source: string, codec: number, base64: string, keys: string[], values: string[]]> = [
  [
    'java',
    1,
    'AAAAAAAAAAAAAABtAAAAAAJKvKoyAAEAAAACAAABoiuCP5oAAAGiK4I/tP//////////////////AAAAAx+LCAAAAAAAAP9TY2BgYMk2FMtKLEvUTa/KLNA1ZFBjMGFiyTZCEjMCibGwZBsjiRkzAAAB3Qw9PAAAAA==',
    ['k1', 'k2', 'k3'],
    ['java-gzip-1', 'java-gzip-2', 'java-gzip-3'],
  ],
  [
    'java',
    2,
    'AAAAAAAAAAAAAACAAAAAAAIhKLODAAIAAAACAAABoiuCRkYAAAGiK4JGkv//////////////////AAAAA4JTTkFQUFkAAAAAAQAAAAEAAAA7RHQqAAAABGsxGmphdmEtc25hcHB5LTEALACYAQIEazIyFwAAMgUXSAQEazMaamF2YS1zbmFwcHktMwA=',
    ['k1', 'k2', 'k3'],
    ['java-snappy-1', 'java-snappy-2', 'java-snappy-3'],
  ],
  [
    'java',
    3,
    'AAAAAAAAAAAAAABwAAAAAAI8g0X+AAMAAAACAAABoiuCTL0AAAGiK4JNAf//////////////////AAAAAwQiTRhgQIIwAAAA9gwkAAAABGsxFGphdmEtbHo0LTEAJgCIAQIEazIUABEyFABDBARrMxQAUHo0LTMAAAAAAA==',
    ['k1', 'k2', 'k3'],
    ['java-lz4-1', 'java-lz4-2', 'java-lz4-3'],
  ],
  [
    'java',
    4,
    'AAAAAAAAAAAAAABuAAAAAALKoRqWAAQAAAACAAABoiuCU4AAAAGiK4JTyP//////////////////AAAAAyi1L/0AWIwBAIQCJgAAAARrMRZqYXZhLXpzdGQtMQAoAI4BAgRrMjIAKACQAQQEazMzAAIAwCDQmE4BAAA=',
    ['k1', 'k2', 'k3'],
    ['java-zstd-1', 'java-zstd-2', 'java-zstd-3'],
  ],
  [
    'kcat',
    1,
    'AAAAAAAAAAAAAABtAAAAAALbYECzAAEAAAACAAABoiuCQEUAAAGiK4JARf//////////////////AAAAAx+LCAAAAAAAAANTY2BgYMk2FMtOTizRTa/KLNA1ZFBjYGBiyTZCEjMCibGwZBsjiRkzAADStEwFPAAAAA==',
    ['k1', 'k2', 'k3'],
    ['kcat-gzip-1', 'kcat-gzip-2', 'kcat-gzip-3'],
  ],
  [
    'kcat',
    2,
    'AAAAAAAAAAAAAABrAAAAAAIZWd0kAAIAAAACAAABoiuCRwYAAAGiK4JHBv//////////////////AAAAA0JwKgAAAARrMRprY2F0LXNuYXBweS0xACoAAAIEazIyFgAAMgEWSAQEazMaa2NhdC1zbmFwcHktMwA=',
    ['k1', 'k2', 'k3'],
    ['kcat-snappy-1', 'kcat-snappy-2', 'kcat-snappy-3'],
  ],
  [
    'kcat',
    4,
    'AAAAAAAAAAAAAABnAAAAAAIhmbSoAAQAAAACAAABoiuCVHAAAAGiK4JUcP//////////////////AAAAAyi1L/0AWG0BACQCJgAAAARrMRZrY2F0LXpzdGQtMQAmAAACBGsyMgQEazMzAAMAwAiE+xlzDA==',
    ['k1', 'k2', 'k3'],
    ['kcat-zstd-1', 'kcat-zstd-2', 'kcat-zstd-3'],
  ],
];

const RECORDS: BuildRecord[] = Array.from({ length: 50 }, (_, i) => ({
  key: i % 5 === 0 ? null : Buffer.from(`key-${i}`),
  value: i % 7 === 0 ? null : Buffer.from(`value-${i}-`.repeat(i)),
  headers:
    i % 3 === 0
      ? [
          { key: 'h', value: Buffer.from(String(i)) },
          { key: 'n', value: null },
        ]
      : [],
  timestamp: 1_700_000_000_000 + i,
}));

describe('compressed batches', () => {
  for (const [source, codec, base64, keys, values] of FIXTURES) {
    it(`decodes a ${source} batch compressed with codec ${codec}`, () => {
      const buf = Buffer.from(base64, 'base64');
      assert.ok(crcValid(buf, 0, buf.length));
      const batch = decodeBatch(buf);
      assert.equal(batch.attributes & L.COMPRESSION_CODEC_MASK, codec);
      assert.equal(batch.sizeBytes, buf.length);
      assert.deepEqual(
        batch.records.map((r) => r.key?.toString()),
        keys,
      );
      assert.deepEqual(
        batch.records.map((r) => r.value?.toString()),
        values,
      );
      assert.deepEqual(
        batch.records.map((r) => r.offset),
        [0, 1, 2],
      );
    });
  }

  it('decodes a kcat LZ4 record set of two batches', () => {
    const set = Buffer.from(
      'AAAAAAAAAAAAAABeAAAAAAKGckXnAAMAAAAAAAABoiuQPQUAAAGiK5A9Bf//////////////////AAAAAQQiTRhgQIIeAAAA/wRmAAAABGsxVmtjYXQtbHo0LTEtCwAJUHo0LTEAAAAAAAAAAAAAAAABAAAAcQAAAAACgMk6BwADAAAAAQAAAaIrkD0FAAABoiuQPQX//////////////////wAAAAIEIk0YYECCMQAAAP8EZgAAAARrMlZrY2F0LWx6NC0yLQsADYYAZgAAAgRrMzQAFjM0AA8LAABQejQtMwAAAAAA',
      'base64',
    );
    const batches = decodeBatches(set);
    assert.ok(
      crcValid(set, 0, batches[0]!.sizeBytes) && crcValid(set, batches[0]!.sizeBytes, batches[1]!.sizeBytes),
      'CRCs as kcat wrote them',
    );
    assert.deepEqual(
      batches.map((b) => b.attributes & L.COMPRESSION_CODEC_MASK),
      [3, 3],
    );
    const records = batches.flatMap((b) => b.records);
    assert.deepEqual(
      records.map((r) => r.offset),
      [0, 1, 2],
    );
    assert.deepEqual(
      records.map((r) => r.key?.toString()),
      ['k1', 'k2', 'k3'],
    );
    assert.deepEqual(
      records.map((r) => r.value?.toString()),
      [1, 2, 3].map((i) => Array(4).fill(`kcat-lz4-${i}`).join('-')),
    );
  });

  for (const name of COMPRESSION_NAMES) {
    it(`builds and decodes a ${name} batch with a valid CRC`, () => {
      const batch = buildBatch(RECORDS, { compression: codecFromName(name), baseOffset: 100 });
      assert.ok(crcValid(batch, 0, batch.length));
      assert.equal(batch.readInt16BE(L.ATTRIBUTES) & L.COMPRESSION_CODEC_MASK, codecFromName(name));
      assert.equal(batch.readInt32BE(L.BATCH_LENGTH), batch.length - L.LOG_OVERHEAD);
      const decoded = decodeBatch(batch);
      const plain = decodeBatch(buildRecordBatch(RECORDS, { baseOffset: 100 }));
      assert.deepEqual(decoded.records, plain.records);
      assert.equal(decoded.lastOffsetDelta, 49);
      assert.equal(decoded.maxTimestamp, 1_700_000_000_049);
      if (name !== 'none') assert.ok(batch.length < buildRecordBatch(RECORDS).length, 'compressed is smaller');
    });
  }

  it('keeps the header flags when compressing', () => {
    const plain = buildRecordBatch(RECORDS, {
      isTransactional: true,
      logAppendTime: true,
      producerId: 7,
      producerEpoch: 1,
      baseSequence: 3,
    });
    const batch = compressBatch(plain, 4);
    const attributes = batch.readInt16BE(L.ATTRIBUTES);
    assert.equal(attributes, L.TRANSACTIONAL_FLAG_MASK | L.TIMESTAMP_TYPE_MASK | 4);
    assert.ok(batch.subarray(L.LAST_OFFSET_DELTA, L.RECORDS).equals(plain.subarray(L.LAST_OFFSET_DELTA, L.RECORDS)));
  });

  it('decodes a record set of mixed batches and skips a truncated last one', () => {
    const a = buildBatch(RECORDS.slice(0, 10), { compression: 1, baseOffset: 0 });
    const b = buildBatch(RECORDS.slice(10, 20), { compression: 0, baseOffset: 10 });
    const c = buildBatch(RECORDS.slice(20, 30), { compression: 4, baseOffset: 20 });
    const set = Buffer.concat([a, b, c.subarray(0, c.length - 5)]);
    const batches = decodeBatches(set);
    assert.equal(batches.length, 2);
    assert.deepEqual(
      batches.flatMap((x) => x.records.map((r) => r.offset)),
      Array.from({ length: 20 }, (_, i) => i),
    );
  });
});
