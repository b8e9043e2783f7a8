/**
 * Record-level timestamps of one stored batch, for the searches that need more than batch headers:
 * ListOffsets by timestamp (KIP-79: the first RECORD at or after a time) and the max-timestamp
 * lookup (KIP-734). Kafka's FileRecords.searchForTimestamp iterates a batch's records the same way.
 *
 * A record's timestamp is baseTimestamp + timestampDelta, except in a LogAppendTime batch
 * (attributes bit 3), where every record's timestamp is the batch's maxTimestamp (the append time;
 * Kafka's DefaultRecordBatch). A compressed batch is decoded only when a decompress function is
 * available; otherwise the caller falls back to batch granularity.
 */
import { decodeBatch, type Decompress } from '../protocol/record-batch/decode';
import * as L from '../protocol/record-batch/layout';

export type { Decompress };

/** One record's offset and timestamp (ms since the epoch). */
export interface RecordTimestamp {
  offset: number;
  timestampMs: number;
}

/** Records of a batch, or why they could not be read (`compressed`: no decompress function). */
export type RecordTimestamps =
  | { kind: 'ok'; records: RecordTimestamp[] }
  | { kind: 'compressed'; codec: number }
  | { kind: 'undecodable'; reason: string };

/**
 * Offsets and timestamps of every record of the v2 batch that is exactly `batch`, in order. For a
 * compressed batch the records section is decompressed with `decompress` (when null, answers
 * `compressed`). A malformed records section (possible only if a producer sent one the produce
 * path did not decode) answers `undecodable` with the reason; nothing throws.
 */
export function recordTimestamps(batch: Buffer, decompress: Decompress | null): RecordTimestamps {
  const attributes = batch.readInt16BE(L.ATTRIBUTES);
  const codec = attributes & L.COMPRESSION_CODEC_MASK;
  if (codec !== 0 && decompress === null) return { kind: 'compressed', codec };
  try {
    const decoded = decodeBatch(batch, 0, decompress ?? undefined);
    const logAppendTime = (attributes & L.TIMESTAMP_TYPE_MASK) !== 0;
    return {
      kind: 'ok',
      records: decoded.records.map((r) => ({
        offset: r.offset,
        timestampMs: logAppendTime ? decoded.maxTimestamp : r.timestamp,
      })),
    };
  } catch (err) {
    return {
      kind: 'undecodable',
      reason: codec !== 0 ? `codec ${codec}: ${(err as Error).message}` : (err as Error).message,
    };
  }
}
