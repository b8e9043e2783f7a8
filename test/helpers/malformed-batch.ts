/**
 * Hand-built v2 record batches for validation tests: records written field by field (so that any
 * field can be wrong), wrapped in a batch header with a correct CRC-32C, the records section
 * compressed with any codec. The batch is what a buggy producer could send: CRC-correct, malformed inside.
 */
import { crc32c } from '@node-rs/crc32';
import { compress, type CompressionCodecId } from '../../src/protocol/record-batch/compression';
import * as L from '../../src/protocol/record-batch/layout';
import { Writer } from '../../src/protocol/writer';

/** One record's fields; each may be overridden to a wrong value. */
export interface RawRecord {
  offsetDelta: number;
  key?: Buffer | null;
  value?: Buffer | null;
  headers?: { key: Buffer; value: Buffer | null }[];
  /** Writes this as the record's length instead of the true one. */
  lengthOverride?: number;
  /** Writes this as the key length instead of the true one (the key bytes are still written). */
  keyLengthOverride?: number;
  /** Writes this as the header count instead of the true one. */
  headerCountOverride?: number;
  /** Bytes appended inside the record after its headers (counted by its length). */
  extra?: Buffer;
}

/** The bytes of one record (length varint first), as DefaultRecord lays it out. */
export function rawRecord(r: RawRecord): Buffer {
  const body = new Writer(64);
  body.int8(0);
  body.varlong(0);
  body.varint(r.offsetDelta);
  const key = r.key === undefined ? Buffer.from(`key-${r.offsetDelta}`) : r.key;
  body.varint(r.keyLengthOverride ?? (key === null ? -1 : key.length));
  if (key !== null) body.raw(key);
  const value = r.value === undefined ? Buffer.from(`value-${r.offsetDelta}`) : r.value;
  body.varint(value === null ? -1 : value.length);
  if (value !== null) body.raw(value);
  const headers = r.headers ?? [];
  body.varint(r.headerCountOverride ?? headers.length);
  for (const h of headers) {
    body.varint(h.key.length);
    body.raw(h.key);
    body.varint(h.value === null ? -1 : h.value.length);
    if (h.value !== null) body.raw(h.value);
  }
  if (r.extra) body.raw(r.extra);
  const bytes = body.finish();
  const out = new Writer(bytes.length + 5);
  out.varint(r.lengthOverride ?? bytes.length);
  out.raw(bytes);
  return Buffer.from(out.finish());
}

/** Records 0..n-1 with well-formed fields. */
export function goodRecords(n: number, from = 0): Buffer[] {
  return Array.from({ length: n }, (_, i) => rawRecord({ offsetDelta: from + i }));
}

/**
 * A batch (baseOffset 0, CreateTime, no producer id) declaring `count` records (lastOffsetDelta
 * count - 1) over `section`, compressed with `codec`, CRC-32C computed over the result.
 */
export function wrapBatch(section: Buffer, count: number, codec: CompressionCodecId = 0, timestampMs = 0): Buffer {
  const records = compress(codec, section);
  const batch = Buffer.alloc(L.RECORDS + records.length);
  batch.writeInt32BE(batch.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
  batch.writeInt32BE(-1, L.PARTITION_LEADER_EPOCH);
  batch.writeInt8(L.CURRENT_MAGIC, L.MAGIC);
  batch.writeInt16BE(codec, L.ATTRIBUTES);
  batch.writeInt32BE(count - 1, L.LAST_OFFSET_DELTA);
  batch.writeBigInt64BE(BigInt(timestampMs), L.BASE_TIMESTAMP);
  batch.writeBigInt64BE(BigInt(timestampMs), L.MAX_TIMESTAMP);
  batch.writeBigInt64BE(-1n, L.PRODUCER_ID);
  batch.writeInt16BE(-1, L.PRODUCER_EPOCH);
  batch.writeInt32BE(-1, L.BASE_SEQUENCE);
  batch.writeInt32BE(count, L.RECORDS_COUNT);
  records.copy(batch, L.RECORDS);
  fixCrc(batch);
  return batch;
}

/** Recomputes the CRC-32C of a whole batch in place (after a test edits covered bytes). */
export function fixCrc(batch: Buffer): Buffer {
  batch.writeUInt32BE(crc32c(batch.subarray(L.ATTRIBUTES)) >>> 0, L.CRC);
  return batch;
}
