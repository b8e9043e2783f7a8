/**
 * Reading and checking record batch v2 headers in place, without decoding records (the produce and
 * fetch paths use only these). Source: protocol guide "Record Batch"; KIP-98 for the v2 format.
 */
import { crc32c } from '@node-rs/crc32';
import * as L from './layout';

/** Total size in bytes of the batch starting at `position` (12 + batchLength). Caller checks bounds. */
export function batchSizeAt(buf: Buffer, position: number): number {
  return L.LOG_OVERHEAD + buf.readInt32BE(position + L.BATCH_LENGTH);
}

export function baseOffsetOf(buf: Buffer, position = 0): bigint {
  return buf.readBigInt64BE(position + L.BASE_OFFSET);
}

/** baseOffset as a JS number (offsets stay below 2^53 in practice; asserts it). */
export function baseOffsetNumber(buf: Buffer, position = 0): number {
  const v = buf.readBigInt64BE(position + L.BASE_OFFSET);
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))
    throw new RangeError('offset beyond 2^53');
  return Number(v);
}

export function lastOffsetDeltaOf(buf: Buffer, position = 0): number {
  return buf.readInt32BE(position + L.LAST_OFFSET_DELTA);
}

export function recordsCountOf(buf: Buffer, position = 0): number {
  return buf.readInt32BE(position + L.RECORDS_COUNT);
}

export function maxTimestampOf(buf: Buffer, position = 0): number {
  return Number(buf.readBigInt64BE(position + L.MAX_TIMESTAMP));
}

export function baseTimestampOf(buf: Buffer, position = 0): number {
  return Number(buf.readBigInt64BE(position + L.BASE_TIMESTAMP));
}

export function attributesOf(buf: Buffer, position = 0): number {
  return buf.readInt16BE(position + L.ATTRIBUTES);
}

export function partitionLeaderEpochOf(buf: Buffer, position = 0): number {
  return buf.readInt32BE(position + L.PARTITION_LEADER_EPOCH);
}

/** Writes baseOffset (outside the CRC: no recompute). */
export function setBaseOffset(buf: Buffer, baseOffset: number, position = 0): void {
  buf.writeBigInt64BE(BigInt(baseOffset), position + L.BASE_OFFSET);
}

/** Writes partitionLeaderEpoch (outside the CRC: no recompute). */
export function setPartitionLeaderEpoch(buf: Buffer, leaderEpoch: number, position = 0): void {
  buf.writeInt32BE(leaderEpoch, position + L.PARTITION_LEADER_EPOCH);
}

/** CRC-32C over [attributes, end) of the batch at `position` with total size `sizeBytes`. */
export function computeCrc(buf: Buffer, position: number, sizeBytes: number): number {
  return crc32c(buf.subarray(position + L.ATTRIBUTES, position + sizeBytes)) >>> 0;
}

/** Whether the stored CRC matches the bytes. */
export function crcValid(buf: Buffer, position: number, sizeBytes: number): boolean {
  return buf.readUInt32BE(position + L.CRC) === computeCrc(buf, position, sizeBytes);
}

/** Recomputes and stores the CRC (only after rewriting covered bytes, e.g. LogAppendTime). */
export function writeCrc(buf: Buffer, position: number, sizeBytes: number): void {
  buf.writeUInt32BE(computeCrc(buf, position, sizeBytes), position + L.CRC);
}

/**
 * Checks that `buf[position..]` starts with one structurally valid, CRC-correct v2 batch.
 * Returns the batch size in bytes, or a reason string (used by recovery and produce validation).
 * `available` is the number of bytes from `position` that may belong to the batch.
 */
export function checkBatch(buf: Buffer, position: number, available: number): number | string {
  if (available < L.LOG_OVERHEAD) return `short header: ${available} bytes`;
  const batchLength = buf.readInt32BE(position + L.BATCH_LENGTH);
  if (batchLength < L.RECORD_BATCH_OVERHEAD - L.LOG_OVERHEAD) return `bad batchLength ${batchLength}`;
  const size = L.LOG_OVERHEAD + batchLength;
  if (size > available) return `torn batch: needs ${size} bytes, ${available} present`;
  const magic = buf.readInt8(position + L.MAGIC);
  if (magic !== L.CURRENT_MAGIC) return `bad magic ${magic}`;
  if (!crcValid(buf, position, size)) return 'CRC-32C mismatch';
  return size;
}

/**
 * Stamps a LogAppendTime batch in place (Kafka's LogValidator for LogAppendTime topics): sets the
 * timestamp-type bit and maxTimestamp to the broker's time, then recomputes the CRC because both
 * fields are covered by it. Consumers take every record's timestamp from maxTimestamp when the bit
 * is set, so records are never rewritten.
 */
export function stampLogAppendTime(buf: Buffer, appendTimeMs: number, position = 0): void {
  const size = batchSizeAt(buf, position);
  buf.writeInt16BE(buf.readInt16BE(position + L.ATTRIBUTES) | L.TIMESTAMP_TYPE_MASK, position + L.ATTRIBUTES);
  buf.writeBigInt64BE(BigInt(appendTimeMs), position + L.MAX_TIMESTAMP);
  writeCrc(buf, position, size);
}
