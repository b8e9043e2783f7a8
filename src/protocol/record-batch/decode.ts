/**
 * Record-level decoding of v2 record batches (record layout: builder.ts; header: layout.ts): one
 * batch uncompressed (`decodeRecordBatch`) or with any codec (`decodeBatch`), and whole record sets
 * through one batch walker (`decodeRecordBatches`, `decodeBatches`). For tools, clients, tests, the
 * time-index searches, compaction and the compacted-topic key check: the produce and fetch hot
 * paths of ordinary topics never decode records (they move batches as bytes, see view.ts).
 */
import { ProtocolError } from '../primitives';
import { Reader } from '../reader';
import type { RecordHeader } from './builder';
import { decompress as defaultDecompress } from './compression';
import * as L from './layout';

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

/** Decompresses a records section written with `codec` (attributes bits 0-2). */
export type Decompress = (codec: number, data: Buffer) => Buffer;

/**
 * Decodes the v2 batch at `buf[position..]`, decompressing its records section first when the
 * batch is compressed. The result keeps the batch's real `attributes`, `batchLength`, `crc` and
 * `sizeBytes` (the compressed ones); record keys and values view the decompressed bytes.
 * Throws ProtocolError on a malformed batch, or the codec's error on undecodable compressed data.
 */
export function decodeBatch(buf: Buffer, position = 0, decompress: Decompress = defaultDecompress): DecodedBatch {
  if (buf.length - position < L.RECORD_BATCH_OVERHEAD)
    throw new ProtocolError(`record batch of ${buf.length - position} bytes is shorter than its header`);
  const magic = buf.readInt8(position + L.MAGIC);
  if (magic !== L.CURRENT_MAGIC) throw new ProtocolError(`unsupported magic ${magic}`);
  const attributes = buf.readInt16BE(position + L.ATTRIBUTES);
  const codec = attributes & L.COMPRESSION_CODEC_MASK;
  if (codec === 0) return decodeRecordBatch(buf, position);
  const sizeBytes = L.LOG_OVERHEAD + buf.readInt32BE(position + L.BATCH_LENGTH);
  if (sizeBytes < L.RECORD_BATCH_OVERHEAD || sizeBytes > buf.length - position)
    throw new ProtocolError(`bad batchLength at byte ${position}`);
  const records = decompress(codec, buf.subarray(position + L.RECORDS, position + sizeBytes));
  const plain = Buffer.allocUnsafe(L.RECORDS + records.length);
  buf.copy(plain, 0, position, position + L.RECORDS);
  records.copy(plain, L.RECORDS);
  plain.writeInt32BE(plain.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
  plain.writeInt16BE(attributes & ~L.COMPRESSION_CODEC_MASK, L.ATTRIBUTES);
  const decoded = decodeRecordBatch(plain, 0);
  return {
    ...decoded,
    attributes,
    batchLength: sizeBytes - L.LOG_OVERHEAD,
    crc: buf.readUInt32BE(position + L.CRC),
    sizeBytes,
  };
}

/**
 * The batch walker: decodes each whole batch of a record set with `decodeOne`, oldest first,
 * stopping at a truncated trailing batch, which a broker may send and clients ignore (protocol
 * guide, Fetch). Throws what `decodeOne` throws on a malformed batch.
 */
function decodeEach(records: Buffer, decodeOne: (buf: Buffer, position: number) => DecodedBatch): DecodedBatch[] {
  const out: DecodedBatch[] = [];
  let position = 0;
  while (records.length - position >= L.LOG_OVERHEAD) {
    const size = L.LOG_OVERHEAD + records.readInt32BE(position + L.BATCH_LENGTH);
    if (size > records.length - position) break;
    const batch = decodeOne(records, position);
    out.push(batch);
    position += batch.sizeBytes;
  }
  return out;
}

/**
 * Decodes every whole batch of a record set of uncompressed batches (e.g. a Fetch response's
 * `records`; decodeEach says what happens to a truncated tail). Throws ProtocolError on a
 * compressed batch.
 */
export function decodeRecordBatches(records: Buffer): DecodedBatch[] {
  return decodeEach(records, decodeRecordBatch);
}

/**
 * Decodes every whole batch of a record set, compressed or not (decodeBatch; decodeEach says what
 * happens to a truncated tail).
 */
export function decodeBatches(records: Buffer): DecodedBatch[] {
  return decodeEach(records, decodeBatch);
}
