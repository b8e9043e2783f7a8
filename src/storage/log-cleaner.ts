/**
 * Log compaction for one partition log (Kafka's LogCleaner / LogCleanerManager, cleanup.policy=
 * compact): planning, the CPU jobs, and the swaps. The replica actor that owns the log calls
 * {@link planCleaning} every log.cleaner.backoff.ms and, when a plan comes back, {@link cleanLog}.
 *
 * ```
 *  logStartOffset     firstDirtyOffset            cleanEndOffset       active segment
 *  |  clean (cleaned before)  |  dirty (appended since)  |  uncleanable   |  (never touched)
 *  |<---------------- cleanable: segments rewritten ---->|
 * ```
 *
 * - The cleanable range is the longest run of whole segments from the oldest that ends before the
 *   active segment, below min(high watermark, recovery point), and before the first dirty segment
 *   whose largest timestamp is within min.compaction.lag.ms of now (KIP-58).
 * - A plan is made when the dirty ratio, dirty bytes / cleanable bytes, exceeds
 *   min.cleanable.dirty.ratio (Kafka's `>`), or when the first dirty segment's first batch is older
 *   than max.compaction.lag.ms (KIP-354), or when a tombstone's delete horizon has passed (KIP-534).
 * - Cleaning builds the offset map over the dirty segments (CPU job `compaction-offset-map`), then
 *   rewrites the cleanable segments in groups of adjacent segments whose sizes add up to at most
 *   segment.bytes (Kafka's groupSegmentsBySize), each group one CPU job (`compaction-filter`)
 *   followed by a short synchronous swap on the caller's turn (Log.replaceWithCleaned). The CPU
 *   jobs run on `ctx.cpu` (piscina in production), so produce and fetch go on meanwhile: appends
 *   land in the active segment, reads see the old segments until their group is swapped.
 * - A group that is no longer there as planned (retention, DeleteRecords, truncation meanwhile)
 *   ends the pass without marking anything clean; the next pass starts over.
 *
 * The offset map holds every key of the dirty range (Kafka bounds it by log.cleaner.dedupe.buffer.size
 * and cleans less per pass); segment bytes are read whole, a group at a time.
 */
import type { Logger } from '../io/logger';
import { asBuffer, type CpuJobs } from '../runtime/cpu-jobs';
import type { FilterResult, FilterStats, OffsetMap } from './compaction-filter';
import type { FilterJobInput, OffsetMapJobInput } from './compaction-jobs';
import type { Log, SegmentInfo } from './log';

const INT32_MAX = 0x7fffffff;

/** The topic settings the cleaner follows (Kafka's names in the docs). */
export interface CleanerConfig {
  /** min.cleanable.dirty.ratio, 0..1. */
  minCleanableDirtyRatio: number;
  /** min.compaction.lag.ms (>= 0). */
  minCompactionLagMs: number;
  /** max.compaction.lag.ms (>= 1; Number.MAX_SAFE_INTEGER = none). */
  maxCompactionLagMs: number;
  /** delete.retention.ms (>= 0). */
  deleteRetentionMs: number;
  /** segment.bytes: the largest group of segments cleaned into one. */
  segmentBytes: number;
}

/** Why a plan was made. */
export type CleaningReason = 'dirty-ratio' | 'max-compaction-lag' | 'delete-horizon';

/** What {@link planCleaning} decided. Offsets are segment boundaries. */
export interface CleaningPlan {
  reason: CleaningReason;
  firstDirtyOffset: number;
  /** Exclusive end of the cleanable range (a segment base offset). */
  cleanEndOffset: number;
  cleanBytes: number;
  dirtyBytes: number;
  /** dirtyBytes / (cleanBytes + dirtyBytes). */
  dirtyRatio: number;
  /** Base offsets of the dirty segments the offset map is built from, oldest first. */
  dirtySegments: number[];
  /** Groups of adjacent segments, each cleaned into one segment named by its first base offset. */
  groups: Array<{ baseOffsets: number[] }>;
}

/** Arguments of {@link planCleaning}. */
export interface PlanArgs {
  config: CleanerConfig;
  /** The replica's high watermark: nothing at or above it is cleaned. */
  highWatermark: number;
  /** Wall clock, ms since the epoch. */
  nowMs: number;
  /** Earliest delete horizon of a retained tombstone from earlier passes (-1: none known). */
  pendingDeleteHorizonMs: number;
}

/**
 * Decides whether and what to clean (module doc). Reads segment headers only; no CPU job. Returns
 * null when there is nothing worth cleaning. Asserts nothing about the log beyond its own invariants.
 */
export function planCleaning(log: Log, args: PlanArgs): CleaningPlan | null {
  const { config, nowMs } = args;
  const infos = log.segmentInfos();
  const firstDirty = log.firstDirtyOffset;
  const limit = Math.min(args.highWatermark, log.recoveryPoint);
  const cleanable: SegmentInfo[] = [];
  for (const info of infos) {
    if (info.active || info.endOffset > limit) break;
    const dirty = info.endOffset > firstDirty;
    if (dirty && config.minCompactionLagMs > 0 && info.largestTimestampMs > nowMs - config.minCompactionLagMs) break;
    cleanable.push(info);
  }
  if (cleanable.length === 0) return null;
  let cleanBytes = 0;
  let dirtyBytes = 0;
  const dirtySegments: number[] = [];
  for (const info of cleanable) {
    if (info.endOffset > firstDirty) {
      dirtyBytes += info.sizeBytes;
      dirtySegments.push(info.baseOffset);
    } else {
      cleanBytes += info.sizeBytes;
    }
  }
  const total = cleanBytes + dirtyBytes;
  const dirtyRatio = total === 0 ? 0 : dirtyBytes / total;
  const firstDirtyInfo = infos.find((i) => i.endOffset > firstDirty && !i.active);
  const lagMs =
    firstDirtyInfo !== undefined && firstDirtyInfo.firstBatchTimestampMs >= 0
      ? nowMs - firstDirtyInfo.firstBatchTimestampMs
      : -1;
  let reason: CleaningReason | null = null;
  if (dirtyBytes > 0 && dirtyRatio > config.minCleanableDirtyRatio) reason = 'dirty-ratio';
  else if (dirtyBytes > 0 && lagMs > config.maxCompactionLagMs) reason = 'max-compaction-lag';
  else if (args.pendingDeleteHorizonMs >= 0 && nowMs >= args.pendingDeleteHorizonMs && total > 0)
    reason = 'delete-horizon';
  if (reason === null) return null;
  return {
    reason,
    firstDirtyOffset: firstDirty,
    cleanEndOffset: cleanable[cleanable.length - 1]!.endOffset,
    cleanBytes,
    dirtyBytes,
    dirtyRatio,
    dirtySegments,
    groups: groupSegmentsBySize(cleanable, config.segmentBytes),
  };
}

/**
 * Kafka's groupSegmentsBySize: adjacent segments in order, a new group whenever adding the next
 * would pass `segmentBytes` or an int32 offset range from the group's base.
 */
export function groupSegmentsBySize(
  segments: readonly SegmentInfo[],
  segmentBytes: number,
): Array<{ baseOffsets: number[] }> {
  const groups: Array<{ baseOffsets: number[] }> = [];
  let current: number[] = [];
  let bytes = 0;
  let base = 0;
  for (const s of segments) {
    if (current.length > 0 && (bytes + s.sizeBytes > segmentBytes || s.endOffset - 1 - base > INT32_MAX)) {
      groups.push({ baseOffsets: current });
      current = [];
    }
    if (current.length === 0) {
      base = s.baseOffset;
      bytes = 0;
    }
    current.push(s.baseOffset);
    bytes += s.sizeBytes;
  }
  if (current.length > 0) groups.push({ baseOffsets: current });
  return groups;
}

/** Outcome of {@link cleanLog}. */
export interface CleaningOutcome {
  /** False when the log changed under the pass (or it was cancelled): nothing was marked clean. */
  completed: boolean;
  groupsSwapped: number;
  stats: FilterStats;
  /** Earliest delete horizon of a tombstone still in the cleaned range (-1: none). */
  earliestDeleteHorizonMs: number;
}

/** Arguments of {@link cleanLog}. */
export interface CleanArgs {
  plan: CleaningPlan;
  cpu: CpuJobs;
  deleteRetentionMs: number;
  /** Wall clock at the start of the pass, ms since the epoch (delete horizons are measured from it). */
  nowMs: number;
  /** Whether the caller still owns the log (false after a delete or stop): checked after each job. */
  isCurrent: () => boolean;
  logger: Logger;
}

function emptyStats(): FilterStats {
  return {
    batchesRead: 0,
    batchesWritten: 0,
    batchesCopied: 0,
    recordsRead: 0,
    recordsRetained: 0,
    tombstonesRemoved: 0,
    keylessRemoved: 0,
    undecodableBatches: 0,
    emptyBatchesRetained: 0,
    bytesRead: 0,
    bytesWritten: 0,
  };
}

function addStats(into: FilterStats, more: FilterStats): void {
  for (const k of Object.keys(into) as Array<keyof FilterStats>) into[k] += more[k];
}

/**
 * Runs one cleaning pass of `plan` over `log` (module doc). Segment bytes are read on the caller's
 * turn; the offset map and each group's filter run as CPU jobs; each group's swap is synchronous.
 * When every group was swapped, marks the log clean up to the plan's cleanEndOffset. Job errors
 * (a segment that does not decode as batches) reject; the log is unchanged from the failing group on.
 */
export async function cleanLog(log: Log, args: CleanArgs): Promise<CleaningOutcome> {
  const { plan, cpu } = args;
  const stats = emptyStats();
  let earliest = -1;
  const outcome = (completed: boolean, groupsSwapped: number): CleaningOutcome => ({
    completed,
    groupsSwapped,
    stats,
    earliestDeleteHorizonMs: earliest,
  });
  const segmentBytes = (base: number): Buffer => log.readSegmentBytes(base);
  const present = (bases: readonly number[]): boolean => {
    const live = new Set(
      log
        .segmentInfos()
        .filter((i) => !i.active)
        .map((i) => i.baseOffset),
    );
    return bases.every((b) => live.has(b));
  };

  if (!present(plan.dirtySegments)) return outcome(false, 0);
  const mapInput: OffsetMapJobInput = {
    segments: plan.dirtySegments.map(segmentBytes),
    fromOffset: plan.firstDirtyOffset,
    toOffsetExclusive: plan.cleanEndOffset,
  };
  const offsetMap = await cpu.run<OffsetMap>('compaction-offset-map', mapInput);
  if (!args.isCurrent()) return outcome(false, 0);

  let swapped = 0;
  for (const group of plan.groups) {
    if (!args.isCurrent() || !present(group.baseOffsets)) return outcome(false, swapped);
    const parts = group.baseOffsets.map(segmentBytes);
    const sizes = parts.map((p) => p.length);
    const input: FilterJobInput = {
      bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts),
      offsetMap,
      nowMs: args.nowMs,
      deleteRetentionMs: args.deleteRetentionMs,
      // As of this group's turn: a producer's last batch only moves forward, so a stale entry keeps one extra empty batch at worst.
      producerLastOffsets: log.producerLastOffsets(),
    };
    const result = await cpu.run<FilterResult>('compaction-filter', input);
    if (!args.isCurrent()) return outcome(false, swapped);
    const bytes = asBuffer(result.bytes); // a Uint8Array when it crossed a thread
    if (!log.replaceWithCleaned(group.baseOffsets, sizes, bytes)) {
      args.logger.info({ dir: log.dir, group: group.baseOffsets }, 'log changed during cleaning: pass abandoned');
      return outcome(false, swapped);
    }
    swapped++;
    addStats(stats, result.stats);
    if (result.earliestDeleteHorizonMs >= 0 && (earliest < 0 || result.earliestDeleteHorizonMs < earliest))
      earliest = result.earliestDeleteHorizonMs;
  }
  log.markCleanedUpTo(plan.cleanEndOffset);
  return outcome(true, swapped);
}
