/**
 * Skiff's tagged DescribeLogDirs partition field FsyncedOffset (tag 10000, v2+), byte by byte: what
 * the encoder writes with and without it, that a response without it (Kafka's) decodes as -1, that
 * unknown tags beside it are skipped (as Kafka's clients skip ours, KIP-482), and that the
 * non-flexible versions carry nothing.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeBuffer, encodeMessage } from '../../../src/protocol/index';
import { DescribeLogDirsResponse, FSYNCED_OFFSET_TAG } from '../../../src/protocol/schema/describe-log-dirs';

const int16 = (v: number): number[] => [(v >> 8) & 0xff, v & 0xff];
const int32 = (v: number): number[] => [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
const int64 = (v: number): number[] => [...int32(Math.floor(v / 2 ** 32)), ...int32(v >>> 0)];
/** COMPACT_STRING: uvarint length + 1 (all lengths here are below 127). */
const compactString = (s: string): number[] => [s.length + 1, ...Buffer.from(s)];
/** 10000 as an unsigned varint: 0x90 0x4e (16 | 0x80, then 78). */
const TAG_10000 = [0x90, 0x4e];

/** One v2+ response partition: fixed fields, then its TAGGED_FIELDS section `tags` (count first). */
function partition(index: number, size: number, tags: number[]): number[] {
  return [...int32(index), ...int64(size), ...int64(0), 0x00, ...tags];
}

/** A v2 response body: one log dir `/d` with topic `t` and the given partitions. */
function v2Body(partitions: number[][]): Buffer {
  return Buffer.from([
    ...int32(0), // throttle_time_ms
    2, // results: 1
    ...int16(0),
    ...compactString('/d'),
    2, // topics: 1
    ...compactString('t'),
    partitions.length + 1,
    ...partitions.flat(),
    0, // topic tagged fields
    0, // result tagged fields
    0, // message tagged fields
  ]);
}

const body = (fsyncedOffsets: number[]) => ({
  throttleTimeMs: 0,
  results: [
    {
      errorCode: 0,
      logDir: '/d',
      topics: [
        {
          name: 't',
          partitions: fsyncedOffsets.map((fsyncedOffset, i) => ({
            partitionIndex: i,
            partitionSize: 100 + i,
            offsetLag: 0,
            isFutureKey: false,
            fsyncedOffset,
          })),
        },
      ],
    },
  ],
});

describe('DescribeLogDirs FsyncedOffset (Skiff tagged field 10000)', () => {
  it('is tag 10000', () => assert.equal(FSYNCED_OFFSET_TAG, 10000));

  it('v2 encodes a known fsynced offset as tag 10000 (8-byte int64) and decodes it back', () => {
    const expected = v2Body([
      partition(0, 100, [1, ...TAG_10000, 8, ...int64(5)]),
      partition(1, 101, [1, ...TAG_10000, 8, ...int64(2 ** 40 + 7)]),
    ]);
    const encoded = encodeMessage(DescribeLogDirsResponse, 2, body([5, 2 ** 40 + 7]));
    assert.deepStrictEqual(encoded, expected);
    const decoded = decodeBuffer(DescribeLogDirsResponse, 2, expected);
    assert.deepStrictEqual(
      decoded.results[0]?.topics[0]?.partitions.map((p) => [p.partitionIndex, p.partitionSize, p.fsyncedOffset]),
      [
        [0, 100, 5],
        [1, 101, 2 ** 40 + 7],
      ],
    );
  });

  it('-1 (unknown) is left off the wire: the bytes are then exactly what Kafka sends', () => {
    const kafka = v2Body([partition(0, 100, [0]), partition(1, 101, [0])]);
    assert.deepStrictEqual(encodeMessage(DescribeLogDirsResponse, 2, body([-1, -1])), kafka);
  });

  it("decodes a response without the tag (Kafka's) as -1", () => {
    const kafka = v2Body([partition(0, 100, [0]), partition(1, 101, [0])]);
    for (const version of [2, 3]) {
      // v3 adds the top-level ErrorCode after ThrottleTimeMs.
      const bytes =
        version === 2 ? kafka : Buffer.concat([kafka.subarray(0, 4), Buffer.from(int16(0)), kafka.subarray(4)]);
      const decoded = decodeBuffer(DescribeLogDirsResponse, version, bytes);
      assert.deepStrictEqual(
        decoded.results[0]?.topics[0]?.partitions.map((p) => p.fsyncedOffset),
        [-1, -1],
        `v${version}`,
      );
    }
  });

  it('skips unknown tags around it and reads the following fields intact', () => {
    const bytes = v2Body([
      // tag 3 (2 bytes), tag 10000 = 9, tag 10001 (3 bytes), ascending as the protocol requires
      partition(0, 100, [3, 3, 2, 0xab, 0xcd, ...TAG_10000, 8, ...int64(9), 0x91, 0x4e, 3, 1, 2, 3]),
      // only an unknown tag: the field keeps its default
      partition(1, 101, [1, 0x91, 0x4e, 1, 0xff]),
    ]);
    const decoded = decodeBuffer(DescribeLogDirsResponse, 2, bytes);
    assert.deepStrictEqual(decoded.results[0]?.topics[0]?.partitions, [
      { partitionIndex: 0, partitionSize: 100, offsetLag: 0, isFutureKey: false, fsyncedOffset: 9 },
      { partitionIndex: 1, partitionSize: 101, offsetLag: 0, isFutureKey: false, fsyncedOffset: -1 },
    ]);
  });

  it('is not on the wire in v0/v1 (not flexible): encoding drops it, decoding gives -1', () => {
    for (const version of [0, 1]) {
      const withField = encodeMessage(DescribeLogDirsResponse, version, body([5]));
      assert.deepStrictEqual(withField, encodeMessage(DescribeLogDirsResponse, version, body([-1])), `v${version}`);
      const decoded = decodeBuffer(DescribeLogDirsResponse, version, withField);
      assert.equal(decoded.results[0]?.topics[0]?.partitions[0]?.fsyncedOffset, -1, `v${version}`);
    }
  });
});
