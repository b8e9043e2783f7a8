/**
 * The pure, stateless half of log compaction (Kafka's LogCleaner.buildOffsetMap and
 * MemoryRecords.filterTo): functions from segment bytes to segment bytes, with no I/O, no clock and
 * no shared state, so the replica actor can run them on a piscina worker (production) or inline
 * (simulation, tests) and get the same bytes.
 *
 * 1. {@link latestOffsetsOf} reads the dirty part of the log and maps each record key to the offset
 *    of its latest record (the "offset map"; Kafka keys it by an MD5 of the key, we by the key bytes).
 * 2. {@link filterSegmentBytes} rewrites a run of segments' batches, keeping for each key only the
 *    record at the offset the map gives (records whose key is not in the map are kept: their latest
 *    version lies in the part cleaned before). A record is dropped when
 *    - a later record has the same key (its offset < the map's), or
 *    - it has no key (Kafka's cleaner drops keyless records of a compacted log as invalid), or
 *    - it is a tombstone (null value) in a batch whose delete horizon has passed (KIP-534).
 *
 * Batches keep their baseOffset, lastOffsetDelta, codec, timestamp type, transactional bit,
 * producer id/epoch, base sequence and partitionLeaderEpoch (Kafka's filterTo: offsets never move,
 * gaps are allowed). A batch that keeps every record and needs no new delete horizon is copied
 * byte for byte; one that loses records is rebuilt: retained records re-encoded (offset deltas,
 * headers and attributes kept), recompressed with the batch's codec, recordsCount and (CreateTime)
 * maxTimestamp recomputed, CRC-32C recomputed. A batch left with no record is dropped, unless it is
 * an idempotent producer's last batch ({@link FilterOptions.producerLastOffsets}): then it stays as an
 * empty batch (Kafka's BatchRetention.RETAIN_EMPTY and DefaultRecordBatch.writeEmptyHeader: the
 * header with its offsets, producer fields and sequence, no records, no codec, base and max
 * timestamp the original maxTimestamp), so the producer state a restart replays from the log still
 * knows the producer's last sequence. Control batches and batches whose records cannot be decoded
 * are copied unchanged.
 *
 * Delete horizon (KIP-534): the first cleaning that retains a tombstone sets attributes bit 6
 * (DELETE_HORIZON_FLAG, 0x40) and writes the horizon, cleaning time + delete.retention.ms, into
 * baseTimestamp (record timestamp deltas are re-encoded against it, so record timestamps do not
 * change). A later cleaning at or after the horizon removes the tombstones.
 */
import { ProtocolError } from '../protocol/primitives';
import { Writer } from '../protocol/writer';
import { writeRecord } from '../protocol/record-batch/builder';
import { compress as defaultCompress } from '../protocol/record-batch/compression';
import { decodeBatch, type DecodedRecord, type Decompress } from '../protocol/record-batch/decode';
import * as L from '../protocol/record-batch/layout';
import { computeCrc } from '../protocol/record-batch/view';

/** Kafka's RecordBatch DELETE_HORIZON_FLAG_MASK (attributes bit 6, KIP-534). */
export const DELETE_HORIZON_FLAG_MASK = 0x40;

/** Compresses a records section with `codec` (attributes bits 0-2). */
export type Compress = (codec: number, data: Buffer) => Buffer;

/** key (as a latin1 string of its bytes) -> offset of its latest record. */
export type OffsetMap = Map<string, number>;

/** The key of a record as an offset-map key (latin1 maps every byte to one char, so it is exact). */
export function offsetMapKey(key: Buffer): string {
  return key.toString('latin1');
}

/** What one filter run did (Kafka's CleanerStats, in part). */
export interface FilterStats {
  batchesRead: number;
  batchesWritten: number;
  /** Batches copied byte for byte (nothing removed, no horizon set). */
  batchesCopied: number;
  recordsRead: number;
  recordsRetained: number;
  /** Tombstones removed because their delete horizon had passed. */
  tombstonesRemoved: number;
  /** Keyless records removed. */
  keylessRemoved: number;
  /** Batches whose records did not decode (copied unchanged). */
  undecodableBatches: number;
  /** Batches left with no record but kept empty: an idempotent producer's last batch. */
  emptyBatchesRetained: number;
  bytesRead: number;
  bytesWritten: number;
}

/** Result of {@link filterSegmentBytes}. */
export interface FilterResult {
  /** The cleaned batches, in order (may be empty). */
  bytes: Buffer;
  stats: FilterStats;
  /** The earliest delete horizon (ms since the epoch) of a batch still holding a tombstone; -1 if none. */
  earliestDeleteHorizonMs: number;
}

/** Options of {@link filterSegmentBytes}. */
export interface FilterOptions {
  /** Key -> latest offset over the dirty range (from {@link latestOffsetsOf}). */
  offsetMap: OffsetMap;
  /** The cleaning time, ms since the epoch (the caller's clock). */
  nowMs: number;
  /** delete.retention.ms: how long a retained tombstone stays (>= 0). */
  deleteRetentionMs: number;
  decompress?: Decompress;
  compress?: Compress;
  /**
   * Producer id -> last offset of that producer's last batch in the log (the replica's producer
   * state): such a batch is kept, empty, when cleaning removes all its records. Default: none.
   */
  producerLastOffsets?: ReadonlyMap<number, number>;
}

/** Calls `visit(position, sizeBytes)` for each whole batch of `bytes` (a segment: well-formed by construction). */
function forEachBatchIn(bytes: Buffer, visit: (position: number, sizeBytes: number) => void): void {
  let position = 0;
  while (position + L.LOG_OVERHEAD <= bytes.length) {
    const sizeBytes = L.LOG_OVERHEAD + bytes.readInt32BE(position + L.BATCH_LENGTH);
    if (sizeBytes < L.RECORD_BATCH_OVERHEAD || position + sizeBytes > bytes.length) {
      throw new ProtocolError(`segment bytes: bad batch size ${sizeBytes} at position ${position}`);
    }
    visit(position, sizeBytes);
    position += sizeBytes;
  }
  if (position !== bytes.length) throw new ProtocolError(`segment bytes: ${bytes.length - position} trailing bytes`);
}

function isControl(bytes: Buffer, position: number): boolean {
  return (bytes.readInt16BE(position + L.ATTRIBUTES) & L.CONTROL_FLAG_MASK) !== 0;
}

function tryDecode(
  bytes: Buffer,
  position: number,
  decompress: Decompress | undefined,
): ReturnType<typeof decodeBatch> | null {
  try {
    return decodeBatch(bytes, position, decompress);
  } catch (err) {
    if (err instanceof ProtocolError || err instanceof RangeError) return null;
    throw err;
  }
}

/**
 * Kafka's buildOffsetMap over one segment's bytes: adds to `into` (or a new map) key -> offset for
 * every keyed record with `fromOffset` <= offset < `toOffsetExclusive`; a later record overrides an
 * earlier one, so feeding segments oldest first leaves each key's latest offset. Control batches,
 * keyless records and undecodable batches are skipped. Returns the map.
 */
export function latestOffsetsOf(
  segmentBytes: Buffer,
  fromOffset: number,
  toOffsetExclusive: number,
  decompress?: Decompress,
  into: OffsetMap = new Map(),
): OffsetMap {
  forEachBatchIn(segmentBytes, (position) => {
    const baseOffset = Number(segmentBytes.readBigInt64BE(position + L.BASE_OFFSET));
    const lastOffset = baseOffset + segmentBytes.readInt32BE(position + L.LAST_OFFSET_DELTA);
    if (lastOffset < fromOffset || baseOffset >= toOffsetExclusive || isControl(segmentBytes, position)) return;
    const batch = tryDecode(segmentBytes, position, decompress);
    if (batch === null) return;
    for (const r of batch.records) {
      if (r.key === null || r.offset < fromOffset || r.offset >= toOffsetExclusive) continue;
      into.set(offsetMapKey(r.key), r.offset);
    }
  });
  return into;
}

/**
 * Rebuilds the batch at `original[position..]` with only `retained` records (module doc: every
 * header field kept except recordsCount, maxTimestamp for CreateTime, baseTimestamp and bit 6 when
 * `deleteHorizonMs` >= 0, and the CRC). Returns the new batch bytes.
 */
function rebuildBatch(
  original: Buffer,
  position: number,
  retained: readonly DecodedRecord[],
  recordTimestamp: (r: DecodedRecord) => number,
  deleteHorizonMs: number,
  compress: Compress,
): Buffer {
  const attributes = original.readInt16BE(position + L.ATTRIBUTES);
  const codec = attributes & L.COMPRESSION_CODEC_MASK;
  const logAppendTime = (attributes & L.TIMESTAMP_TYPE_MASK) !== 0;
  const originalBase = Number(original.readBigInt64BE(position + L.BASE_TIMESTAMP));
  const baseTimestamp = deleteHorizonMs >= 0 ? deleteHorizonMs : originalBase;
  const records = new Writer(64 * retained.length);
  let maxTimestamp = -1;
  for (const r of retained) {
    const ts = recordTimestamp(r);
    if (ts > maxTimestamp) maxTimestamp = ts;
    // A LogAppendTime record's delta is meaningless to readers (they use maxTimestamp): keep it.
    writeRecord(records, r, r.attributes, logAppendTime ? r.timestampDelta : ts - baseTimestamp, r.offsetDelta);
  }
  const plain = records.finish();
  const section = codec === 0 ? plain : compress(codec, plain);
  const batch = Buffer.alloc(L.RECORDS + section.length);
  original.copy(batch, 0, position, position + L.RECORDS); // every header field, patched below
  batch.writeInt32BE(batch.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
  batch.writeInt16BE(deleteHorizonMs >= 0 ? attributes | DELETE_HORIZON_FLAG_MASK : attributes, L.ATTRIBUTES);
  batch.writeBigInt64BE(BigInt(baseTimestamp), L.BASE_TIMESTAMP);
  if (!logAppendTime) batch.writeBigInt64BE(BigInt(maxTimestamp), L.MAX_TIMESTAMP);
  batch.writeInt32BE(retained.length, L.RECORDS_COUNT);
  section.copy(batch, L.RECORDS);
  batch.writeUInt32BE(computeCrc(batch, 0, batch.length), L.CRC);
  return batch;
}

/**
 * The empty batch that stands for `original[position..]` once cleaning removed all its records
 * (Kafka's DefaultRecordBatch.writeEmptyHeader): every header field kept but batchLength, attributes
 * (no codec, no delete horizon), baseTimestamp and maxTimestamp (both the original maxTimestamp),
 * recordsCount 0, and the CRC.
 */
function emptyBatchOf(original: Buffer, position: number): Buffer {
  const batch = Buffer.from(original.subarray(position, position + L.RECORDS));
  const attributes = batch.readInt16BE(L.ATTRIBUTES);
  batch.writeInt32BE(L.RECORDS - L.LOG_OVERHEAD, L.BATCH_LENGTH);
  batch.writeInt16BE(attributes & ~L.COMPRESSION_CODEC_MASK & ~DELETE_HORIZON_FLAG_MASK, L.ATTRIBUTES);
  batch.writeBigInt64BE(batch.readBigInt64BE(L.MAX_TIMESTAMP), L.BASE_TIMESTAMP);
  batch.writeInt32BE(0, L.RECORDS_COUNT);
  batch.writeUInt32BE(computeCrc(batch, 0, batch.length), L.CRC);
  return batch;
}

/** Whether the batch at `position` is the last batch of an idempotent producer (its last offset is the producer's). */
function isProducersLastBatch(bytes: Buffer, position: number, last: ReadonlyMap<number, number> | undefined): boolean {
  if (last === undefined || last.size === 0) return false;
  const producerId = Number(bytes.readBigInt64BE(position + L.PRODUCER_ID));
  if (producerId < 0) return false;
  const lastOffset =
    Number(bytes.readBigInt64BE(position + L.BASE_OFFSET)) + bytes.readInt32BE(position + L.LAST_OFFSET_DELTA);
  return last.get(producerId) === lastOffset;
}

/**
 * Kafka's cleanInto/filterTo over the concatenated bytes of one or more segments (whole batches,
 * oldest first): returns the retained batches (see the module doc for the rules). Pure: the same
 * input gives the same bytes. Throws ProtocolError if `segmentBytes` is not a sequence of whole batches.
 */
export function filterSegmentBytes(segmentBytes: Buffer, options: FilterOptions): FilterResult {
  const { offsetMap, nowMs, deleteRetentionMs } = options;
  const compress = options.compress ?? defaultCompress;
  const stats: FilterStats = {
    batchesRead: 0,
    batchesWritten: 0,
    batchesCopied: 0,
    recordsRead: 0,
    recordsRetained: 0,
    tombstonesRemoved: 0,
    keylessRemoved: 0,
    undecodableBatches: 0,
    emptyBatchesRetained: 0,
    bytesRead: segmentBytes.length,
    bytesWritten: 0,
  };
  const out: Buffer[] = [];
  let earliestDeleteHorizonMs = -1;
  const noteHorizon = (h: number): void => {
    if (earliestDeleteHorizonMs < 0 || h < earliestDeleteHorizonMs) earliestDeleteHorizonMs = h;
  };
  forEachBatchIn(segmentBytes, (position, sizeBytes) => {
    stats.batchesRead++;
    const copy = (): void => {
      out.push(segmentBytes.subarray(position, position + sizeBytes));
      stats.batchesWritten++;
      stats.batchesCopied++;
    };
    if (isControl(segmentBytes, position)) {
      copy();
      return;
    }
    const batch = tryDecode(segmentBytes, position, options.decompress);
    if (batch === null) {
      stats.undecodableBatches++;
      copy();
      return;
    }
    const attributes = batch.attributes;
    const logAppendTime = (attributes & L.TIMESTAMP_TYPE_MASK) !== 0;
    const hasHorizon = (attributes & DELETE_HORIZON_FLAG_MASK) !== 0;
    const horizonPassed = hasHorizon && nowMs >= batch.baseTimestamp;
    const recordTimestamp = (r: DecodedRecord): number => (logAppendTime ? batch.maxTimestamp : r.timestamp);
    const retained: DecodedRecord[] = [];
    let tombstones = 0;
    for (const r of batch.records) {
      stats.recordsRead++;
      if (r.key === null) {
        stats.keylessRemoved++;
        continue;
      }
      const latest = offsetMap.get(offsetMapKey(r.key));
      if (latest !== undefined && r.offset < latest) continue;
      if (r.value === null) {
        if (horizonPassed) {
          stats.tombstonesRemoved++;
          continue;
        }
        tombstones++;
      }
      retained.push(r);
    }
    stats.recordsRetained += retained.length;
    if (retained.length === 0) {
      if (isProducersLastBatch(segmentBytes, position, options.producerLastOffsets)) {
        out.push(emptyBatchOf(segmentBytes, position));
        stats.batchesWritten++;
        stats.emptyBatchesRetained++;
      }
      return;
    }
    const needsHorizon = tombstones > 0 && !hasHorizon;
    if (tombstones > 0) noteHorizon(needsHorizon ? nowMs + deleteRetentionMs : batch.baseTimestamp);
    if (retained.length === batch.records.length && !needsHorizon) {
      copy();
      return;
    }
    // A batch whose horizon passed but keeps no tombstone drops the flag (its baseTimestamp was the horizon).
    let horizon = -1;
    if (needsHorizon) horizon = nowMs + deleteRetentionMs;
    else if (hasHorizon && tombstones > 0) horizon = batch.baseTimestamp;
    let rebuilt: Buffer;
    if (horizon < 0 && hasHorizon) {
      // Clear bit 6 and rebase timestamps on the first retained record.
      const cleared = Buffer.from(segmentBytes.subarray(position, position + sizeBytes));
      cleared.writeInt16BE(attributes & ~DELETE_HORIZON_FLAG_MASK, L.ATTRIBUTES);
      const firstTs = logAppendTime ? batch.baseTimestamp : recordTimestamp(retained[0]!);
      cleared.writeBigInt64BE(BigInt(firstTs), L.BASE_TIMESTAMP);
      rebuilt = rebuildBatch(cleared, 0, retained, recordTimestamp, -1, compress);
    } else {
      rebuilt = rebuildBatch(segmentBytes, position, retained, recordTimestamp, horizon, compress);
    }
    out.push(rebuilt);
    stats.batchesWritten++;
  });
  const bytes = Buffer.concat(out);
  stats.bytesWritten = bytes.length;
  return { bytes, stats, earliestDeleteHorizonMs };
}
