/**
 * Retention for cleanup.policy=delete (Kafka's UnifiedLog.deleteOldSegments): which of a log's
 * oldest segments to delete, by log start offset, by size (retention.bytes) and by time
 * (retention.ms). The log owns the deletion itself ({@link RetentionTarget.deleteOldestSegments}:
 * files unlinked, directory synced, log start offset raised); this file decides how many.
 *
 * ```
 *  | seg 0 | seg 1 | seg 2 | seg 3 (active) |
 *  <-- deletable run --->|                     each pass stops at the first segment it keeps;
 *                        ^ next base <= HW     a segment goes only if all its offsets are below the HW
 * ```
 */
import assert from 'node:assert/strict';
import type { Logger } from '../io/logger';
import type { LogSegment } from './log-segment';

/** Outcome of {@link deleteRetentionSegments} (and Log.deleteRetentionSegments). */
export interface RetentionResult {
  /** Segments deleted (each a .log/.index/.timeindex triple). */
  deletedSegments: number;
  /** The log start offset afterwards. */
  logStartOffset: number;
}

/** What retention needs of a log (log.ts builds it over its own state). */
export interface RetentionTarget {
  /** The partition directory (log lines). */
  readonly dir: string;
  readonly logger: Logger;
  /** The segments, oldest first; the last is the active one. Changed only by {@link deleteOldestSegments}. */
  readonly segments: readonly LogSegment[];
  logStartOffset(): number;
  logEndOffset(): number;
  /**
   * Kafka's deleteSegments: deletes the `count` oldest segments (rolling a new empty active segment
   * at the LEO first when that is all of them), raises the log start offset (and the recovery point)
   * to the first remaining segment's base, unlinks the files and syncs the directory; logs `reason`.
   */
  deleteOldestSegments(count: number, reason: string): void;
}

/**
 * Retention at `nowMs` (ms since the epoch), in three passes over the oldest segments, each
 * stopping at the first segment it keeps: (1) segments wholly below logStartOffset (the next
 * segment's base <= it); (2) by size: while the log minus the oldest segment still holds >=
 * `retentionBytes` (-1 = unlimited); (3) by time: segments whose largest timestamp (their max
 * record timestamp, or their last-modified time when no batch has one) is more than `retentionMs`
 * before `nowMs` (-1 = forever; a segment with future timestamps is kept and logged). A segment is
 * deleted only if every offset in it is below `highWatermark` (next segment's base, or the LEO for
 * the last, <= HW); the active segment too when it qualifies and is not empty: a new empty segment
 * is rolled at the LEO first, as Kafka does. logStartOffset moves up to the first remaining
 * segment's base (the LEO if all went). Asserts the arguments are integers and `highWatermark` is
 * within [0, LEO].
 */
export function deleteRetentionSegments(
  log: RetentionTarget,
  nowMs: number,
  retentionMs: number,
  retentionBytes: number,
  highWatermark: number,
): RetentionResult {
  assert.ok(Number.isSafeInteger(nowMs), `now ${nowMs}`);
  assert.ok(
    Number.isSafeInteger(retentionMs) && Number.isSafeInteger(retentionBytes),
    `retention ${retentionMs} ms, ${retentionBytes} bytes`,
  );
  assert.ok(
    Number.isSafeInteger(highWatermark) && highWatermark >= 0 && highWatermark <= log.logEndOffset(),
    `high watermark ${highWatermark}, log end offset ${log.logEndOffset()}`,
  );
  let deleted = deleteLogStartOffsetBreachedSegments(log, highWatermark);
  if (retentionBytes >= 0) deleted += deleteRetentionSizeBreachedSegments(log, retentionBytes, highWatermark);
  if (retentionMs >= 0) deleted += deleteRetentionMsBreachedSegments(log, nowMs, retentionMs, highWatermark);
  return { deletedSegments: deleted, logStartOffset: log.logStartOffset() };
}

/**
 * Kafka's deleteLogStartOffsetBreachedSegments: deletes the oldest segments wholly below the log
 * start offset (the next segment's base <= it) and below `highWatermark`. Returns how many.
 * DeleteRecords uses it too, after raising the log start offset.
 */
export function deleteLogStartOffsetBreachedSegments(log: RetentionTarget, highWatermark: number): number {
  return deleteOldSegments(
    log,
    highWatermark,
    (_s, next) => next !== null && next.baseOffset <= log.logStartOffset(),
    'log start offset breach',
  );
}

/** Kafka's deleteRetentionSizeBreachedSegments: pass (2) of {@link deleteRetentionSegments}. */
function deleteRetentionSizeBreachedSegments(
  log: RetentionTarget,
  retentionBytes: number,
  highWatermark: number,
): number {
  let size = 0;
  for (const s of log.segments) size += s.sizeBytes;
  if (size < retentionBytes) return 0;
  let excess = size - retentionBytes;
  return deleteOldSegments(
    log,
    highWatermark,
    (segment) => {
      if (excess - segment.sizeBytes < 0) return false;
      excess -= segment.sizeBytes;
      return true;
    },
    `retention.bytes ${retentionBytes} breach`,
  );
}

/** Kafka's deleteRetentionMsBreachedSegments: pass (3) of {@link deleteRetentionSegments}. */
function deleteRetentionMsBreachedSegments(
  log: RetentionTarget,
  nowMs: number,
  retentionMs: number,
  highWatermark: number,
): number {
  return deleteOldSegments(
    log,
    highWatermark,
    (segment) => {
      const largestMs = segment.largestTimestampMs;
      if (nowMs < largestMs)
        log.logger.warn(
          { dir: log.dir, segment: segment.baseOffset, largestTimestampMs: largestMs, nowMs },
          'segment has future timestamps: not deleted by retention.ms',
        );
      return nowMs - largestMs > retentionMs;
    },
    `retention.ms ${retentionMs} breach`,
  );
}

/**
 * Kafka's deletableSegments + deleteSegments: deletes the longest run of oldest segments for which
 * every offset is below `highWatermark` and `predicate(segment, next)` holds (an empty last segment
 * never qualifies). Returns the number deleted.
 */
function deleteOldSegments(
  log: RetentionTarget,
  highWatermark: number,
  predicate: (segment: LogSegment, next: LogSegment | null) => boolean,
  reason: string,
): number {
  const segments = log.segments;
  let count = 0;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const next = segments[i + 1] ?? null;
    if (next === null && segment.sizeBytes === 0) break;
    const upperBoundOffset = next?.baseOffset ?? log.logEndOffset();
    if (!(highWatermark >= upperBoundOffset && predicate(segment, next))) break;
    count++;
  }
  if (count > 0) log.deleteOldestSegments(count, reason);
  return count;
}
