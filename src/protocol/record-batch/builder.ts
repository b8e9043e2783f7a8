/**
 * Building and decoding uncompressed record batches v2, record by record. For tests, tools and
 * compaction only: the produce and fetch paths never decode records (they use view.ts).
 *
 * Record layout (protocol guide "Record"; DefaultRecord.java), all varints zig-zag:
 * ```
 * length          varint   bytes after this field
 * attributes      int8     unused (0)
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
import { ProtocolError } from '../primitives';
import { Reader } from '../reader';
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

/** A decoded record. `key`/`value`/header values are views into the batch; null and empty differ. */
export interface DecodedRecord {
  /** baseOffset + offsetDelta. */
  offset: number;
  /** baseTimestamp + timestampDelta (for LogAppendTime batches, use the batch's maxTimestamp). */
  timestamp: number;
  offsetDelta: number;
  timestampDelta: number;
  attributes: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** A decoded batch: its header fields and records. */
export interface DecodedBatch {
  baseOffset: number;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  records: DecodedRecord[];
  /** Total size of the batch in bytes (12 + batchLength). */
  sizeBytes: number;
}

function writeVarBytes(w: Writer, b: Buffer | null): void {
  if (b === null) {
    w.varint(-1);
  } else {
    w.varint(b.length);
    w.raw(b);
  }
}

function encodeRecordBody(r: BuildRecord, offsetDelta: number, timestampDelta: number): Buffer {
  const w = new Writer(64 + (r.key?.length ?? 0) + (r.value?.length ?? 0));
  w.int8(0);
  w.varlong(timestampDelta);
  w.varint(offsetDelta);
  writeVarBytes(w, r.key);
  writeVarBytes(w, r.value);
  const headers = r.headers ?? [];
  w.varint(headers.length);
  for (const h of headers) {
    writeVarBytes(w, Buffer.from(h.key, 'utf8'));
    writeVarBytes(w, h.value);
  }
  return w.finish();
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
    const body = encodeRecordBody(r, i, timestamp - baseTimestamp);
    w.varint(body.length);
    w.raw(body);
  });
  const batch = Buffer.from(w.finish()); // own, exact-size copy
  batch.writeInt32BE(batch.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
  batch.writeBigInt64BE(BigInt(maxTimestamp), maxTimestampAt);
  batch.writeUInt32BE(crc32c(batch.subarray(L.ATTRIBUTES)) >>> 0, L.CRC);
  return batch;
}

function readVarBytes(r: Reader): Buffer | null {
  const n = r.varint();
  if (n === -1) return null;
  if (n < 0) throw new ProtocolError(`negative length ${n} in a record`);
  return r.bytesView(n);
}

function decodeRecord(r: Reader, baseOffset: number, baseTimestamp: number): DecodedRecord {
  const length = r.varint();
  if (length < 0) throw new ProtocolError(`negative record length ${length}`);
  r.need(length);
  const rr = new Reader(r.buf, r.offset, r.offset + length);
  r.skip(length);
  const attributes = rr.int8();
  const timestampDelta = rr.varlong();
  const offsetDelta = rr.varint();
  const key = readVarBytes(rr);
  const value = readVarBytes(rr);
  const headerCount = rr.varint();
  if (headerCount < 0 || headerCount > rr.remaining()) throw new ProtocolError(`bad header count ${headerCount}`);
  const headers: RecordHeader[] = [];
  for (let i = 0; i < headerCount; i++) {
    const hk = readVarBytes(rr);
    if (hk === null) throw new ProtocolError('null header key');
    headers.push({ key: hk.toString('utf8'), value: readVarBytes(rr) });
  }
  if (rr.remaining() !== 0) throw new ProtocolError(`record has ${rr.remaining()} trailing bytes`);
  return {
    offset: baseOffset + offsetDelta,
    timestamp: baseTimestamp + timestampDelta,
    offsetDelta,
    timestampDelta,
    attributes,
    key,
    value,
    headers,
  };
}

/**
 * Decodes the uncompressed v2 batch at `buf[position..]`, records included. Does not check the
 * CRC (use view.ts `crcValid`/`checkBatch`). Throws ProtocolError on a truncated or malformed
 * batch, a magic other than 2, or a compressed batch.
 */
export function decodeRecordBatch(buf: Buffer, position = 0): DecodedBatch {
  const r = new Reader(buf, position);
  r.need(L.RECORD_BATCH_OVERHEAD);
  const baseOffset = r.int64();
  const batchLength = r.int32();
  if (batchLength < L.RECORD_BATCH_OVERHEAD - L.LOG_OVERHEAD) throw new ProtocolError(`bad batchLength ${batchLength}`);
  r.need(batchLength);
  const end = position + L.LOG_OVERHEAD + batchLength;
  const br = new Reader(buf, r.offset, end);
  const partitionLeaderEpoch = br.int32();
  const magic = br.int8();
  if (magic !== L.CURRENT_MAGIC) throw new ProtocolError(`unsupported magic ${magic}`);
  const crc = br.uint32();
  const attributes = br.int16();
  if ((attributes & L.COMPRESSION_CODEC_MASK) !== 0)
    throw new ProtocolError(`compressed batch (codec ${attributes & L.COMPRESSION_CODEC_MASK})`);
  const lastOffsetDelta = br.int32();
  const baseTimestamp = br.int64();
  const maxTimestamp = br.int64();
  const producerId = br.int64();
  const producerEpoch = br.int16();
  const baseSequence = br.int32();
  const count = br.int32();
  if (count < 0 || count > br.remaining()) throw new ProtocolError(`bad record count ${count}`);
  const records: DecodedRecord[] = [];
  for (let i = 0; i < count; i++) records.push(decodeRecord(br, baseOffset, baseTimestamp));
  if (br.remaining() !== 0) throw new ProtocolError(`batch has ${br.remaining()} trailing bytes`);
  return {
    baseOffset,
    batchLength,
    partitionLeaderEpoch,
    magic,
    crc,
    attributes,
    lastOffsetDelta,
    baseTimestamp,
    maxTimestamp,
    producerId,
    producerEpoch,
    baseSequence,
    records,
    sizeBytes: L.LOG_OVERHEAD + batchLength,
  };
}

/** The records of the uncompressed v2 batch at the start of `batch` (see decodeRecordBatch). */
export function decodeRecords(batch: Buffer): DecodedRecord[] {
  return decodeRecordBatch(batch).records;
}

/**
 * Decodes every whole batch in a record set (e.g. a Fetch response's `records`), stopping at a
 * truncated trailing batch, which a broker may send and clients ignore (protocol guide, Fetch).
 */
export function decodeRecordBatches(records: Buffer): DecodedBatch[] {
  const out: DecodedBatch[] = [];
  let position = 0;
  while (records.length - position >= L.LOG_OVERHEAD) {
    const size = L.LOG_OVERHEAD + records.readInt32BE(position + L.BATCH_LENGTH);
    if (size > records.length - position) break;
    const batch = decodeRecordBatch(records, position);
    out.push(batch);
    position += batch.sizeBytes;
  }
  return out;
}
