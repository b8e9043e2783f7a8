/**
 * Building uncompressed record batches v2, record by record, and the one v2 record encoder
 * (`writeRecord`, which compaction also uses to rebuild a batch). For tests, tools, clients and
 * compaction only: the produce and fetch paths never build records (they use view.ts). Decoding
 * is decode.ts.
 *
 * Record layout (protocol guide "Record"; DefaultRecord.java), all varints zig-zag:
 * ```
 * length          varint   bytes after this field
 * attributes      int8     unused (0 when built)
 * timestampDelta  varlong  from the batch's baseTimestamp
 * offsetDelta     varint   from the batch's baseOffset
 * keyLength       varint   -1 = null key
 * key             bytes
 * valueLength     varint   -1 = null value
 * value           bytes
 * headerCount     varint
 *   headerKeyLength varint, headerKey (UTF-8), headerValueLength varint (-1 = null), headerValue
 * ```
 * Batch header: layout.ts. The CRC-32C covers [attributes, end).
 */
import { crc32c } from '@node-rs/crc32';
import { Writer } from '../writer';
import * as L from './layout';

/** A record header: UTF-8 key, value bytes or null. */
export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

/** A record to build. `timestamp` (ms since the epoch) defaults to the batch's baseTimestamp. */
export interface BuildRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers?: RecordHeader[];
  timestamp?: number;
}

/**
 * Batch options. Defaults: baseOffset 0, partitionLeaderEpoch -1, producerId -1, producerEpoch -1,
 * baseSequence -1, not transactional, not control, CreateTime. `baseTimestamp` defaults to the
 * first record's timestamp, else 0 (this module never reads the clock).
 */
export interface BuildBatchOptions {
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  baseTimestamp?: number;
  isTransactional?: boolean;
  isControl?: boolean;
  logAppendTime?: boolean;
}

function writeVarBytes(w: Writer, b: Buffer | null): void {
  if (b === null) {
    w.varint(-1);
  } else {
    w.varint(b.length);
    w.raw(b);
  }
}

/** What a record's encoding takes as it is (its offset and timestamp go in as deltas). */
export interface RecordContent {
  key: Buffer | null;
  value: Buffer | null;
  headers?: readonly RecordHeader[];
}

const NO_HEADERS: readonly RecordHeader[] = Object.freeze([]);

/**
 * Appends one v2 record (layout above) to `w`: its length, then attributes, the deltas from the
 * batch's baseTimestamp and baseOffset, key, value and headers. `attributes` is 0 for a record
 * built here; compaction passes a retained record's own. Throws RangeError on a timestamp delta
 * beyond ±2^52.
 */
export function writeRecord(
  w: Writer,
  record: RecordContent,
  attributes: number,
  timestampDelta: number,
  offsetDelta: number,
): void {
  const body = new Writer(64 + (record.key?.length ?? 0) + (record.value?.length ?? 0));
  body.int8(attributes);
  body.varlong(timestampDelta);
  body.varint(offsetDelta);
  writeVarBytes(body, record.key);
  writeVarBytes(body, record.value);
  const headers = record.headers ?? NO_HEADERS;
  body.varint(headers.length);
  for (const h of headers) {
    writeVarBytes(body, Buffer.from(h.key, 'utf8'));
    writeVarBytes(body, h.value);
  }
  const bytes = body.finish();
  w.varint(bytes.length);
  w.raw(bytes);
}

/**
 * Builds one uncompressed v2 batch holding `records` (at least one), with a valid CRC-32C.
 * Returns a new Buffer of exactly the batch's size. Throws RangeError on an empty record list.
 */
export function buildRecordBatch(records: readonly BuildRecord[], options: BuildBatchOptions = {}): Buffer {
  if (records.length === 0) throw new RangeError('a record batch needs at least one record');
  const baseTimestamp = options.baseTimestamp ?? records[0]!.timestamp ?? 0;
  let maxTimestamp = -Infinity;
  const w = new Writer(L.RECORD_BATCH_OVERHEAD + 64 * records.length);
  w.int64(options.baseOffset ?? 0);
  w.int32(0); // batchLength, patched
  w.int32(options.partitionLeaderEpoch ?? -1);
  w.int8(L.CURRENT_MAGIC);
  w.uint32(0); // crc, patched
  let attributes = 0;
  if (options.logAppendTime) attributes |= L.TIMESTAMP_TYPE_MASK;
  if (options.isTransactional) attributes |= L.TRANSACTIONAL_FLAG_MASK;
  if (options.isControl) attributes |= L.CONTROL_FLAG_MASK;
  w.int16(attributes);
  w.int32(records.length - 1);
  w.int64(baseTimestamp);
  const maxTimestampAt = w.length;
  w.int64(0); // maxTimestamp, patched
  w.int64(options.producerId ?? -1);
  w.int16(options.producerEpoch ?? -1);
  w.int32(options.baseSequence ?? -1);
  w.int32(records.length);
  records.forEach((r, i) => {
    const timestamp = r.timestamp ?? baseTimestamp;
    if (timestamp > maxTimestamp) maxTimestamp = timestamp;
    writeRecord(w, r, 0, timestamp - baseTimestamp, i);
  });
  const batch = Buffer.from(w.finish()); // own, exact-size copy
  batch.writeInt32BE(batch.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
  batch.writeBigInt64BE(BigInt(maxTimestamp), maxTimestampAt);
  batch.writeUInt32BE(crc32c(batch.subarray(L.ATTRIBUTES)) >>> 0, L.CRC);
  return batch;
}
