/**
 * Record-level validation of a produced v2 batch, as Kafka's broker does it when it iterates a
 * batch's records (DefaultRecordBatch's record iterator, DefaultRecord.readFrom, LogValidator), so
 * that no batch whose CRC is right over malformed records reaches the log, where it would stop
 * every consumer of the partition. Record layout: builder.ts; header: layout.ts.
 *
 * The header (magic, CRC, batchLength, recordsCount > 0, lastOffsetDelta = recordsCount - 1,
 * codec id) is checked by the caller first (src/replica/produce-validation.ts). Here:
 * - compressed batches are decompressed with a bound (`maxDecompressedBytes`): gzip inflates with
 *   zlib's maxOutputLength (it stops at the bound); snappy, lz4 and zstd declare the size of each
 *   block in their framing, so the largest size the data can inflate to is summed from the frame
 *   and block headers before anything is inflated (`decompressedBound`), and a batch over the
 *   bound is refused without allocating;
 * - every record is walked with one cursor over the bytes (no object per record): its length
 *   varint must fit in what is left and be consumed exactly; attributes, timestampDelta (varlong,
 *   at most 10 bytes), offsetDelta (must be the record's index), key and value lengths (-1 null,
 *   else they must fit), header count (0 ≤ n ≤ bytes left), header key (≥ 0) and value lengths;
 * - exactly recordsCount records, and no bytes after the last one.
 *
 * - in a compressed batch, each record's length (its body, after the length varint) at most
 *   max.decompressed.message.bytes (`maxRecordBytes`), as Kafka 4.4's DefaultRecord.readFrom and
 *   readPartiallyFrom check it on the decompressing record iterators; Kafka does not apply it to
 *   uncompressed batches (their iterator reads records from the buffer without a bound), nor does Skiff.
 *
 * Differences from Kafka, recorded in docs/design-notes.md: Kafka rewrites a compressed batch whose
 * offset deltas are not 0, 1, 2, ... (and keeps an uncompressed one as sent); Skiff stores batches
 * as produced, so it refuses them. Kafka reads a key or value length below -1 as null; Skiff
 * refuses it (clients disagree on such bytes). Kafka streams records, so max.decompressed.message.bytes
 * is its only bound; Skiff inflates a whole section, so it also bounds the section
 * (maxDecompressedBytesFor) and refuses past it with INVALID_RECORD, the code Kafka answers for a
 * record over its bound. A record over the setting is refused with its index in RecordErrors
 * (Kafka throws InvalidRecordException from the iterator and answers without record errors).
 */
import * as zlib from 'node:zlib';
import { ErrorCode } from '../error-codes';
import { decompress, isXerialFramed } from './compression';
import * as L from './layout';

/**
 * Why a batch's records are refused. `batchIndex` is the 0-based index of the offending record
 * (for Produce v8+ RecordErrors, KIP-467), null when no one record is at fault (the compressed
 * data cannot be inflated, or would inflate past the bound).
 */
export interface RecordsFault {
  /** INVALID_RECORD (a malformed record, or records that inflate past the bound) or CORRUPT_MESSAGE (undecodable compressed data). */
  errorCode: number;
  errorMessage: string;
  batchIndex: number | null;
}

/**
 * The bound on a batch's decompressed records section: 64 times max.message.bytes, at most 1 GiB;
 * with the default max.message.bytes (1 MiB + 12) that is 64 MiB. Kafka has no such bound: it
 * inflates records one at a time and bounds each by max.decompressed.message.bytes (by default
 * 2147483639, no bound), which Skiff checks per record in the walk; the section bound is what keeps
 * Skiff's whole-section inflation within memory (see docs/design-notes.md).
 */
export function maxDecompressedBytesFor(maxMessageBytes: number): number {
  return Math.min(64 * maxMessageBytes, 1 << 30);
}

/**
 * Kafka 4.4's default max.decompressed.message.bytes (LogConfig.DEFAULT_MAX_DECOMPRESSED_MESSAGE_BYTES,
 * the largest array a JVM allocates): in effect no bound on a record.
 */
export const DEFAULT_MAX_DECOMPRESSED_MESSAGE_BYTES = 2147483639;

/**
 * Validates the records of the batch at the start of `batch` (its header already checked, see
 * above). Returns null when every record is well formed, else the first fault found.
 * @param batch one whole v2 batch, exactly its size
 * @param maxDecompressedBytes bound on the records section once decompressed, in bytes (memory)
 * @param maxRecordBytes max.decompressed.message.bytes: the largest record body, in bytes, that a
 *   compressed batch may hold (not applied to uncompressed batches, as in Kafka)
 */
export function validateBatchRecords(
  batch: Buffer,
  maxDecompressedBytes: number,
  maxRecordBytes = DEFAULT_MAX_DECOMPRESSED_MESSAGE_BYTES,
): RecordsFault | null {
  const codec = batch.readInt16BE(L.ATTRIBUTES) & L.COMPRESSION_CODEC_MASK;
  const count = batch.readInt32BE(L.RECORDS_COUNT);
  if (codec === 0) return validateRecords(batch, L.RECORDS, batch.length, count);
  const inflated = inflateBounded(codec, batch.subarray(L.RECORDS), maxDecompressedBytes);
  if (!Buffer.isBuffer(inflated)) return inflated;
  return validateRecords(inflated, 0, inflated.length, count, maxRecordBytes);
}

/** Inflates a compressed records section, refusing data that would pass `limit` bytes. */
function inflateBounded(codec: number, data: Buffer, limit: number): Buffer | RecordsFault {
  const name = CODEC_NAMES[codec] ?? String(codec);
  const tooLarge = (size: number | string): RecordsFault => ({
    errorCode: ErrorCode.INVALID_RECORD,
    errorMessage: `The ${name} records of the batch decompress to ${size} bytes, more than the broker's limit of ${limit} bytes (64 x max.message.bytes)`,
    batchIndex: null,
  });
  const corrupt = (why: string): RecordsFault => ({
    errorCode: ErrorCode.CORRUPT_MESSAGE,
    errorMessage: `Record batch is corrupt: cannot decompress its ${name} records: ${why}`,
    batchIndex: null,
  });
  let out: Buffer;
  try {
    if (codec === 1) {
      out = zlib.gunzipSync(data, { maxOutputLength: limit });
    } else {
      const bound = decompressedBound(codec, data);
      if (typeof bound === 'string') return corrupt(bound);
      if (bound > limit) return tooLarge(`up to ${bound}`);
      out = decompress(codec, data);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return tooLarge(`more than ${limit}`);
    return corrupt((error as Error).message);
  }
  // The codecs check their own sizes; this keeps the bound whatever a library does.
  if (out.length > limit) return tooLarge(out.length);
  return out;
}

const CODEC_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/**
 * The most bytes `data` (snappy, lz4 or zstd, as Kafka clients write them) can decompress to,
 * read from its framing without inflating anything, or why the framing is malformed:
 * - snappy: each raw snappy block starts with its uncompressed length (a varint), which the
 *   decoder enforces; xerial framing is a sequence of such blocks;
 * - lz4 (frame format): each block holds at most the frame's block maximum size (64 KiB-4 MiB),
 *   an uncompressed block exactly its size; a declared content size must be within the bound too;
 * - zstd (RFC 8878): a raw or RLE block regenerates exactly its Block_Size, a compressed block at
 *   most 128 KiB (Block_Maximum_Size); a declared Frame_Content_Size counts as well, since a
 *   decoder may allocate it up front.
 * Real encoders fill each block before the next, so the bound is within a block of the true size.
 */
export function decompressedBound(codec: number, data: Buffer): number | string {
  switch (codec) {
    case 2:
      return snappyBound(data);
    case 3:
      return lz4Bound(data);
    case 4:
      return zstdBound(data);
    default:
      return `no size bound for codec ${codec}`;
  }
}

/** The uncompressed length a raw snappy block declares (its leading varint, up to 32 bits). */
function snappyPreamble(data: Buffer, start: number, end: number): number | string {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (start + i >= end) return 'snappy block shorter than its length preamble';
    const b = data[start + i]!;
    value += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return value;
  }
  return 'snappy length preamble longer than 5 bytes';
}

function snappyBound(data: Buffer): number | string {
  if (!isXerialFramed(data)) return snappyPreamble(data, 0, data.length);
  let total = 0;
  let position = 16;
  if (data.length < position) return 'xerial snappy stream shorter than its header';
  while (position < data.length) {
    if (data.length - position < 4) return `xerial snappy stream truncated at byte ${position}`;
    const length = data.readInt32BE(position);
    position += 4;
    if (length < 0 || length > data.length - position)
      return `xerial snappy block of ${length} bytes at byte ${position} overruns the stream`;
    const size = snappyPreamble(data, position, position + length);
    if (typeof size === 'string') return size;
    total += size;
    position += length;
  }
  return total;
}

const LZ4_MAGIC = 0x184d2204;
const LZ4_BLOCK_MAX = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20];

function lz4Bound(data: Buffer): number | string {
  let total = 0;
  let p = 0;
  if (data.length === 0) return 'empty lz4 data';
  while (p < data.length) {
    if (data.length - p < 7) return `lz4 frame header truncated at byte ${p}`;
    const magic = data.readUInt32LE(p);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      const size = data.readUInt32LE(p + 4);
      if (size > data.length - p - 8) return 'lz4 skippable frame overruns the data';
      p += 8 + size;
      continue;
    }
    if (magic !== LZ4_MAGIC) return `bad lz4 frame magic 0x${magic.toString(16)} at byte ${p}`;
    const flg = data[p + 4]!;
    const bd = data[p + 5]!;
    if (flg >> 6 !== 1) return `unsupported lz4 frame version ${flg >> 6}`;
    const blockMax = LZ4_BLOCK_MAX[(bd >> 4) & 7]!;
    if (blockMax === 0) return `bad lz4 block maximum size id ${(bd >> 4) & 7}`;
    const blockChecksum = (flg & 0x10) !== 0;
    const contentSize = (flg & 0x08) !== 0;
    const contentChecksum = (flg & 0x04) !== 0;
    const dictId = (flg & 0x01) !== 0;
    p += 6;
    if (contentSize) {
      if (data.length - p < 8) return 'lz4 frame header truncated';
      const declared = Number(data.readBigUInt64LE(p));
      if (declared > total + Number.MAX_SAFE_INTEGER / 2) return 'lz4 content size out of range';
      // Counted below through the blocks; a larger declared size still bounds what a decoder allocates.
      total = Math.max(total, declared);
      p += 8;
    }
    if (dictId) p += 4;
    p += 1; // header checksum
    let frameBlocks = 0;
    for (;;) {
      if (data.length - p < 4) return `lz4 block header truncated at byte ${p}`;
      const word = data.readUInt32LE(p);
      p += 4;
      if (word === 0) break; // EndMark
      const size = word & 0x7fffffff;
      const uncompressed = (word & 0x80000000) !== 0;
      if (size > blockMax) return `lz4 block of ${size} bytes is larger than the frame's ${blockMax}`;
      if (size > data.length - p) return `lz4 block of ${size} bytes at byte ${p} overruns the data`;
      frameBlocks += uncompressed ? size : blockMax;
      p += size + (blockChecksum ? 4 : 0);
    }
    if (contentChecksum) p += 4;
    if (p > data.length) return 'lz4 frame truncated';
    total += frameBlocks;
  }
  return total;
}

const ZSTD_MAGIC = 0xfd2fb528;
const ZSTD_BLOCK_MAX = 128 << 10;

function zstdBound(data: Buffer): number | string {
  let total = 0;
  let p = 0;
  if (data.length === 0) return 'empty zstd data';
  while (p < data.length) {
    if (data.length - p < 5) return `zstd frame header truncated at byte ${p}`;
    const magic = data.readUInt32LE(p);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      if (data.length - p < 8) return 'zstd skippable frame truncated';
      const size = data.readUInt32LE(p + 4);
      if (size > data.length - p - 8) return 'zstd skippable frame overruns the data';
      p += 8 + size;
      continue;
    }
    if (magic !== ZSTD_MAGIC) return `bad zstd frame magic 0x${magic.toString(16)} at byte ${p}`;
    const descriptor = data[p + 4]!;
    p += 5;
    const fcsFlag = descriptor >> 6;
    const singleSegment = (descriptor & 0x20) !== 0;
    const checksum = (descriptor & 0x04) !== 0;
    const dictIdBytes = [0, 1, 2, 4][descriptor & 3]!;
    const fcsBytes = fcsFlag === 0 ? (singleSegment ? 1 : 0) : [0, 2, 4, 8][fcsFlag]!;
    const headerRest = (singleSegment ? 0 : 1) + dictIdBytes + fcsBytes;
    if (data.length - p < headerRest) return 'zstd frame header truncated';
    p += (singleSegment ? 0 : 1) + dictIdBytes;
    let declared = 0;
    if (fcsBytes === 1) declared = data[p]!;
    else if (fcsBytes === 2) declared = data.readUInt16LE(p) + 256;
    else if (fcsBytes === 4) declared = data.readUInt32LE(p);
    else if (fcsBytes === 8) declared = Number(data.readBigUInt64LE(p));
    p += fcsBytes;
    let frameBlocks = 0;
    for (;;) {
      if (data.length - p < 3) return `zstd block header truncated at byte ${p}`;
      const header = data[p]! | (data[p + 1]! << 8) | (data[p + 2]! << 16);
      p += 3;
      const last = (header & 1) !== 0;
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === 3) return `reserved zstd block type at byte ${p - 3}`;
      if (size > ZSTD_BLOCK_MAX) return `zstd block of ${size} bytes is larger than 128 KiB`;
      const stored = type === 1 ? 1 : size; // RLE: one byte repeated `size` times
      if (stored > data.length - p) return `zstd block at byte ${p - 3} overruns the data`;
      frameBlocks += type === 2 ? ZSTD_BLOCK_MAX : size;
      p += stored;
      if (last) break;
    }
    if (checksum) {
      if (data.length - p < 4) return 'zstd frame checksum truncated';
      p += 4;
    }
    total += Math.max(frameBlocks, declared);
  }
  return total;
}

// The record walk keeps its position in one module-level cursor so that reading a varint returns
// a plain number and allocates nothing (the walk runs once per produced record).
let cursor = 0;
/** A varint that is too long or runs past its limit. */
const BAD = -0x80000001;

/** Reads a zig-zag varint (at most 5 bytes, Kafka's ByteUtils.readVarint) at `cursor`, below `end`. */
function readVarint(buf: Buffer, end: number): number {
  let raw = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (cursor >= end) return BAD;
    const b = buf[cursor++]!;
    raw |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return (raw >>> 1) ^ -(raw & 1);
  }
  return BAD;
}

/** Skips a varlong (at most 10 bytes, Kafka's ByteUtils.readVarlong); false when malformed. */
function skipVarlong(buf: Buffer, end: number): boolean {
  for (let i = 0; i < 10; i++) {
    if (cursor >= end) return false;
    if ((buf[cursor++]! & 0x80) === 0) return true;
  }
  return false;
}

function invalid(batchIndex: number, message: string): RecordsFault {
  return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: message, batchIndex };
}

const STRUCTURE = 'Found invalid record structure';

/**
 * Walks `count` records in `buf[start, end)` (messages follow DefaultRecord's where Kafka has one).
 * A record whose length (body bytes after the length varint) exceeds `maxRecordBytes` is refused
 * before its body is read, as Kafka's DefaultRecord.readFrom does (default: no bound).
 * Exported for the benchmark and tests; the produce path calls validateBatchRecords.
 */
export function validateRecords(
  buf: Buffer,
  start: number,
  end: number,
  count: number,
  maxRecordBytes = DEFAULT_MAX_DECOMPRESSED_MESSAGE_BYTES,
): RecordsFault | null {
  cursor = start;
  for (let index = 0; index < count; index++) {
    if (cursor >= end) return invalid(index, 'Incorrect declared batch size, premature EOF reached');
    const length = readVarint(buf, end);
    if (length === BAD) return invalid(index, STRUCTURE);
    if (length > maxRecordBytes)
      return invalid(
        index,
        `Invalid record size: ${length} exceeds the configured maximum record size of ${maxRecordBytes}.`,
      );
    const remaining = end - cursor;
    if (length < 0 || length > remaining)
      return invalid(
        index,
        `Invalid record size: expected ${length} bytes in record payload, but instead the buffer has only ${remaining} remaining bytes.`,
      );
    const recordStart = cursor;
    const recordEnd = cursor + length;
    if (length < 1) return invalid(index, STRUCTURE);
    cursor++; // attributes (unused in v2)
    if (!skipVarlong(buf, recordEnd)) return invalid(index, STRUCTURE);
    const offsetDelta = readVarint(buf, recordEnd);
    if (offsetDelta === BAD) return invalid(index, STRUCTURE);
    if (offsetDelta !== index)
      return invalid(
        index,
        `Invalid offset delta ${offsetDelta} for the record at index ${index}: the records of a produced batch must have offset deltas 0, 1, 2, ...`,
      );
    for (let field = 0; field < 2; field++) {
      const size = readVarint(buf, recordEnd);
      if (size === BAD) return invalid(index, STRUCTURE);
      if (size < -1) return invalid(index, `Invalid ${field === 0 ? 'key' : 'value'} size ${size}`);
      if (size > recordEnd - cursor) return invalid(index, STRUCTURE);
      if (size > 0) cursor += size;
    }
    const headerCount = readVarint(buf, recordEnd);
    if (headerCount === BAD) return invalid(index, STRUCTURE);
    if (headerCount < 0) return invalid(index, `Found invalid number of record headers ${headerCount}`);
    if (headerCount > recordEnd - cursor)
      return invalid(
        index,
        `Found invalid number of record headers. ${headerCount} is larger than the remaining size of the buffer`,
      );
    for (let h = 0; h < headerCount; h++) {
      const keySize = readVarint(buf, recordEnd);
      if (keySize === BAD) return invalid(index, STRUCTURE);
      if (keySize < 0) return invalid(index, `Invalid negative header key size ${keySize}`);
      if (keySize > recordEnd - cursor) return invalid(index, STRUCTURE);
      cursor += keySize;
      const valueSize = readVarint(buf, recordEnd);
      if (valueSize === BAD) return invalid(index, STRUCTURE);
      if (valueSize < -1) return invalid(index, `Invalid header value size ${valueSize}`);
      if (valueSize > recordEnd - cursor) return invalid(index, STRUCTURE);
      if (valueSize > 0) cursor += valueSize;
    }
    if (cursor !== recordEnd)
      return invalid(
        index,
        `Invalid record size: expected to read ${length} bytes in record payload, but instead read ${cursor - recordStart}`,
      );
  }
  if (cursor !== end) return invalid(count - 1, 'Incorrect declared batch size, records still remaining in file');
  return null;
}
