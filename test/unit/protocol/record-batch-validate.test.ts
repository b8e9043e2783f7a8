/**
 * validateBatchRecords (src/protocol/record-batch/validate.ts): for every codec, batches whose CRC
 * is right over malformed records are refused with Kafka's error code and the index of the record
 * at fault; undecodable compressed data is CORRUPT_MESSAGE and data that would inflate past the
 * bound is INVALID_RECORD (no record index), found without inflating it (zip bombs); a record of a
 * compressed batch longer than max.decompressed.message.bytes is INVALID_RECORD with its index
 * (Kafka's message), in an uncompressed one it is not bounded (as in Kafka). A property: batches from the
 * builder always pass, and single-byte mutations (CRC recomputed) never throw and either pass, in
 * which case the batch decodes, or are refused with one of those codes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildBatch } from '../../../src/client/batch';
import { decodeBatch } from '../../../src/protocol/record-batch/decode';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { COMPRESSION_NAMES, type CompressionCodecId } from '../../../src/protocol/record-batch/compression';
import * as L from '../../../src/protocol/record-batch/layout';
import {
  decompressedBound,
  maxDecompressedBytesFor,
  validateBatchRecords,
} from '../../../src/protocol/record-batch/validate';
import { fixCrc, goodRecords, rawRecord, wrapBatch } from '../../helpers/malformed-batch';

const CODECS: CompressionCodecId[] = [0, 1, 2, 3, 4];
const LIMIT = maxDecompressedBytesFor(1024 * 1024 + 12);

function check(batch: Buffer, limit = LIMIT) {
  return validateBatchRecords(batch, limit);
}

/** The body length a raw record declares (its leading zig-zag varint), what max.decompressed.message.bytes bounds. */
function recordBodyBytes(record: Buffer): number {
  let raw = 0;
  for (let i = 0, shift = 0; ; i++, shift += 7) {
    raw |= (record[i]! & 0x7f) << shift;
    if ((record[i]! & 0x80) === 0) return (raw >>> 1) ^ -(raw & 1);
  }
}

function assertInvalid(batch: Buffer, index: number, message: RegExp): void {
  const fault = check(batch);
  assert.ok(fault, 'expected a refusal');
  assert.equal(fault.errorCode, ErrorCode.INVALID_RECORD, fault.errorMessage);
  assert.equal(fault.batchIndex, index, fault.errorMessage);
  assert.match(fault.errorMessage, message);
}

for (const codec of CODECS) {
  const name = COMPRESSION_NAMES[codec]!;
  describe(`validateBatchRecords, ${name}`, () => {
    const batchOf = (records: Buffer[], count = records.length, tail = Buffer.alloc(0)) =>
      wrapBatch(Buffer.concat([...records, tail]), count, codec);

    it('passes well-formed records, with null keys, null values and headers', () => {
      const records = [
        rawRecord({ offsetDelta: 0, key: null }),
        rawRecord({ offsetDelta: 1, value: null, headers: [{ key: Buffer.from('h'), value: null }] }),
        rawRecord({ offsetDelta: 2, headers: [{ key: Buffer.from('a'), value: Buffer.from('b') }] }),
      ];
      assert.equal(check(batchOf(records)), null);
      assert.equal(check(buildBatch([{ key: null, value: Buffer.from('x') }], { compression: codec })), null);
    });

    it('refuses a header count of more records than present (premature EOF at the missing index)', () => {
      assertInvalid(batchOf(goodRecords(2), 3), 2, /premature EOF/);
    });

    it('refuses a header count of fewer records than present (records still remaining)', () => {
      assertInvalid(batchOf(goodRecords(3), 2), 1, /records still remaining/);
    });

    it('refuses a record length past the end of the records', () => {
      const records = [rawRecord({ offsetDelta: 0 }), rawRecord({ offsetDelta: 1, lengthOverride: 1000 })];
      assertInvalid(batchOf(records), 1, /Invalid record size: expected 1000 bytes in record payload/);
    });

    it('refuses a record length that does not match its fields', () => {
      const records = [...goodRecords(1), rawRecord({ offsetDelta: 1, extra: Buffer.from([0, 0]) })];
      assertInvalid(
        batchOf(records),
        1,
        /Invalid record size: expected to read \d+ bytes in record payload, but instead read/,
      );
    });

    it('refuses trailing bytes after the last record', () => {
      assertInvalid(batchOf(goodRecords(2), 2, Buffer.from([1, 2, 3])), 1, /records still remaining/);
    });

    it('refuses an offset delta that is not the record index', () => {
      const records = [...goodRecords(2), rawRecord({ offsetDelta: 5 }), ...goodRecords(1, 3)];
      assertInvalid(batchOf(records), 2, /Invalid offset delta 5 for the record at index 2/);
    });

    it('refuses a key length past the end of the record', () => {
      const records = [...goodRecords(1), rawRecord({ offsetDelta: 1, keyLengthOverride: 50 })];
      assertInvalid(batchOf(records), 1, /Found invalid record structure/);
    });

    it('refuses a negative key length other than -1', () => {
      const records = [...goodRecords(3), rawRecord({ offsetDelta: 3, key: Buffer.alloc(0), keyLengthOverride: -7 })];
      assertInvalid(batchOf(records), 3, /Invalid key size -7/);
    });

    it('refuses a negative header count', () => {
      const records = [...goodRecords(1), rawRecord({ offsetDelta: 1, headerCountOverride: -1 })];
      assertInvalid(batchOf(records), 1, /Found invalid number of record headers -1/);
    });

    it('refuses a header count larger than the bytes left', () => {
      const records = [rawRecord({ offsetDelta: 0, headerCountOverride: 100 })];
      assertInvalid(batchOf(records), 0, /100 is larger than the remaining size of the buffer/);
    });

    it('refuses a header count of headers that are not there', () => {
      const records = [
        ...goodRecords(1),
        rawRecord({ offsetDelta: 1, headerCountOverride: 1, extra: Buffer.from([2]) }),
      ];
      assertInvalid(batchOf(records), 1, /Found invalid record structure/);
    });

    it(
      codec === 0
        ? 'does not bound record sizes by max.decompressed.message.bytes in an uncompressed batch (as Kafka)'
        : 'bounds each record by max.decompressed.message.bytes: one byte over refused with its index, at it accepted',
      () => {
        const big = rawRecord({ offsetDelta: 1, value: Buffer.alloc(3000, 7) });
        const bodyBytes = recordBodyBytes(big);
        const batch = batchOf([...goodRecords(1), big, ...goodRecords(1, 2)]);
        assert.equal(validateBatchRecords(batch, LIMIT, bodyBytes), null, 'a record at the limit');
        const over = validateBatchRecords(batch, LIMIT, bodyBytes - 1);
        if (codec === 0) {
          assert.equal(over, null);
          return;
        }
        assert.deepEqual(over, {
          errorCode: ErrorCode.INVALID_RECORD,
          errorMessage: `Invalid record size: ${bodyBytes} exceeds the configured maximum record size of ${bodyBytes - 1}.`,
          batchIndex: 1,
        });
        // Records before the large one are within the limit; the first one over it is named.
        const smallBody = recordBodyBytes(goodRecords(1)[0]!);
        assert.equal(validateBatchRecords(batch, LIMIT, smallBody - 1)?.batchIndex, 0);
      },
    );

    if (codec !== 0) {
      it('refuses compressed data that does not decompress (CORRUPT_MESSAGE, no record index)', () => {
        const batch = batchOf(goodRecords(20));
        // Overwrite the middle of the compressed data (past any frame header) with junk.
        const from = L.RECORDS + Math.floor((batch.length - L.RECORDS) / 2);
        for (let i = from; i < Math.min(batch.length, from + 8); i++) batch[i] = 0xff;
        batch.writeInt32BE(batch.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
        // Cut the data short as well, so that codecs that check no checksum still fail.
        const cut = fixCrc(Buffer.from(batch.subarray(0, batch.length - 6)));
        cut.writeInt32BE(cut.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
        fixCrc(cut);
        const fault = check(cut);
        assert.ok(fault);
        assert.equal(fault.errorCode, ErrorCode.CORRUPT_MESSAGE, fault.errorMessage);
        assert.equal(fault.batchIndex, null);
        assert.match(fault.errorMessage, new RegExp(`cannot decompress its ${name} records`));
      });

      it('refuses a batch that would decompress past the bound, without inflating it (zip bomb)', () => {
        // 16 MiB of zeros in one record's value compresses to a few KiB with every codec.
        const bomb = rawRecord({ offsetDelta: 0, value: Buffer.alloc(16 << 20) });
        const batch = batchOf([bomb]);
        assert.ok(batch.length < 1 << 20, `${name} bomb is ${batch.length} bytes`);
        const limit = 4 << 20;
        const before = process.memoryUsage().arrayBuffers;
        const fault = check(batch, limit);
        assert.ok(fault);
        assert.equal(fault.errorCode, ErrorCode.INVALID_RECORD, fault.errorMessage);
        assert.equal(fault.batchIndex, null);
        assert.match(
          fault.errorMessage,
          new RegExp(
            `The ${name} records of the batch decompress to .* more than the broker's limit of ${limit} bytes`,
          ),
        );
        if (codec !== 1) {
          // Found from the framing: the bound exceeds the limit and nothing was inflated.
          const bound = decompressedBound(codec, batch.subarray(L.RECORDS));
          assert.equal(typeof bound, 'number');
          assert.ok((bound as number) > limit);
        }
        // No 16 MiB buffer survives the check (gzip stops at the limit; the others never start).
        assert.ok(process.memoryUsage().arrayBuffers - before < 8 << 20);
        // The same batch within a larger bound passes.
        assert.equal(check(batch, 64 << 20), null);
      });
    }
  });
}

describe('validateBatchRecords, property', () => {
  const record = fc.record({
    key: fc.option(fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a))),
    value: fc.option(fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a))),
    headers: fc.array(
      fc.record({
        key: fc.string({ maxLength: 8 }),
        value: fc.option(fc.uint8Array({ maxLength: 16 }).map((a) => Buffer.from(a))),
      }),
      { maxLength: 3 },
    ),
    timestamp: fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }),
  });
  const batchArb = fc.record({
    records: fc.array(record, { minLength: 1, maxLength: 12 }),
    codec: fc.constantFrom<CompressionCodecId>(0, 1, 2, 3, 4),
  });

  it('passes every batch the builder makes', () => {
    fc.assert(
      fc.property(batchArb, ({ records, codec }) => {
        assert.equal(check(buildBatch(records, { compression: codec })), null);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on a single-byte mutation of the records (CRC recomputed): passes and decodes, or refuses', () => {
    fc.assert(
      fc.property(batchArb, fc.nat(), fc.integer({ min: 1, max: 255 }), ({ records, codec }, at, xor) => {
        const batch = buildBatch(records, { compression: codec });
        const position = L.RECORDS + (at % (batch.length - L.RECORDS));
        batch[position] = batch[position]! ^ xor;
        fixCrc(batch);
        const fault = check(batch);
        if (fault === null) {
          const decoded = decodeBatch(batch);
          assert.equal(decoded.records.length, records.length);
          decoded.records.forEach((r, i) => assert.equal(r.offsetDelta, i));
        } else {
          assert.ok(
            ([ErrorCode.INVALID_RECORD, ErrorCode.CORRUPT_MESSAGE] as number[]).includes(fault.errorCode),
            fault.errorMessage,
          );
          if (fault.batchIndex !== null) assert.ok(fault.batchIndex >= 0 && fault.batchIndex < records.length);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
