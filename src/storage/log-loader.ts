/**
 * Loads and recovers a partition directory's segments before its {@link Log} is built (Kafka's
 * LogLoader.java, a loader separate from the log). Passes, in order:
 *
 * 1. cleaner leftovers: `.cleaned` files (an unfinished cleaning) are deleted and `.swap` files (a
 *    committed one) completed, as Kafka's removeTempFilesAndCollectSwapFiles;
 * 2. listing: the `.log` files give the segments; `.index`/`.timeindex` files without one are deleted;
 * 3. recovery from the recovery point: segments wholly below it are trusted, the one holding it is
 *    re-validated from the index entry at or below it and every later one from its start (CRC-32C,
 *    dense offsets); a torn or corrupt tail is truncated and all later segments deleted (Kafka's
 *    recoverLog; the per-segment scan is LogSegment.recover). Damaged indexes are rebuilt on the
 *    way: a trusted segment's from its last valid entry, a recovered segment's by its recovery;
 * 4. the log start offset: a log ending below it (or no segment at all) restarts there, empty;
 * 5. indexes: every segment but the last gets its final time index entry if a crash lost it.
 *
 * Recovery's truncations and deletions are fsynced at once, so a crash during or after recovery
 * cannot resurrect them. Idempotent: loading an already recovered directory changes nothing.
 */
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import type { Clock } from '../io/clock';
import type { Logger } from '../io/logger';
import type { FileSystem } from '../io/file-system';
import { LOG_FILE_SUFFIX, LogSegment, parseSegmentFileName, segmentFileName, type LogSegmentArgs } from './log-segment';
import { recoverCleanerLeftovers } from './segment-swap';

/**
 * Marker file of a partition directory whose log is (or was) compacted: written, and made durable,
 * before the cleaner can leave any offset gap, and never removed while the directory lives.
 */
export const COMPACTED_MARKER = '.compacted';

/** Writes and fsyncs {@link COMPACTED_MARKER} in `dir` unless it is there. */
export function markCompacted(fs: FileSystem, dir: string): void {
  const marker = `${dir}/${COMPACTED_MARKER}`;
  if (fs.exists(marker)) return;
  fs.writeFileAtomic(marker, Buffer.from('cleanup.policy included compact\n'));
  fs.syncDir(dir);
}

/** Arguments of {@link loadLog} (what Log.open passes on from its LogOpenArgs). */
export interface LogLoaderArgs {
  fs: FileSystem;
  /** The partition directory; created if missing. */
  dir: string;
  /** index.interval.bytes of the loaded segments. */
  indexIntervalBytes: number;
  /** Offset below which the log is known to be fsynced (a hint; 0 if unknown). */
  recoveryPoint: number;
  /** From log-start-offset-checkpoint; defaults to the first segment's base offset. */
  logStartOffset: number | undefined;
  logger: Logger;
  clock: Clock;
  /** cleanup.policy contains compact now (then the marker is written). */
  compacted: boolean;
}

/** What {@link loadLog} found and did (Kafka's LoadedLogOffsets, plus what the load line reports). */
export interface LoadedLog {
  /** The segments, oldest first, at least one; the last is the active one. */
  segments: LogSegment[];
  /** min(hint, LEO), lower if the trusted part proved inconsistent; at least the first base offset. */
  recoveryPoint: number;
  /** The checkpointed value raised to the first segment's base offset, at most the LEO. */
  logStartOffset: number;
  /** The log is or was compacted (offset gaps allowed): now, or by its marker. */
  compacted: boolean;
  /** A segment's tail was cut. */
  truncated: boolean;
  /** Segments deleted by recovery. */
  deletedSegments: number;
  /** Bytes of log that recovery re-validated batch by batch (from the recovery point on). */
  scannedBytes: number;
  /** Bytes recovery cut from a torn or corrupt tail. */
  truncatedBytes: number;
}

/**
 * Opens (creating if needed) the segments in `args.dir` and recovers them (see module doc).
 * logStartOffset is the checkpointed value (log-start-offset-checkpoint), raised to the first
 * segment's base offset; a log that ends below it is emptied and restarts there. Throws on I/O
 * errors; asserts the hints are non-negative integers.
 */
export function loadLog(args: LogLoaderArgs): LoadedLog {
  const { fs, dir, logger, clock } = args;
  // A log that was ever compacted may have offset gaps, whatever cleanup.policy says now (a topic
  // switched from compact back to delete must not read its cleaned gaps as corruption).
  fs.mkdirp(dir);
  if (args.compacted) markCompacted(fs, dir);
  const compacted = args.compacted || fs.exists(`${dir}/${COMPACTED_MARKER}`);
  assert.ok(Number.isSafeInteger(args.recoveryPoint) && args.recoveryPoint >= 0, `recoveryPoint ${args.recoveryPoint}`);
  const startHint = args.logStartOffset;
  assert.ok(
    startHint === undefined || (Number.isSafeInteger(startHint) && startHint >= 0),
    `logStartOffset ${startHint}`,
  );
  const segmentArgs = (baseOffset: number): LogSegmentArgs => ({
    fs,
    dir,
    baseOffset,
    indexIntervalBytes: args.indexIntervalBytes,
    logger,
    clock,
    allowOffsetGaps: compacted,
  });

  // First pass: remove the cleaner's temporary files and complete its interrupted swaps.
  recoverCleanerLeftovers(fs, dir, logger);
  // Second pass: list the segments (dropping orphan index files) and open each one's indexes.
  const loaded = listSegmentBases(fs, dir, logger).map((base) => LogSegment.load(segmentArgs(base)));
  // Third pass: recover from the recovery point on, truncating a torn or corrupt tail; indexes
  // found damaged are rebuilt on the way.
  const recovery = recoverSegments(loaded, args.recoveryPoint, dir, logger, compacted);
  const kept = recovery.kept;
  let deleted = recovery.deleted;
  let truncated = recovery.truncated;
  let recoveryPointBound = recovery.recoveryPointBound;

  // Fourth pass: a log ending before its start offset (or none at all) restarts there (Kafka's LogLoader).
  let logStartOffset = Math.max(startHint ?? 0, kept[0]?.baseOffset ?? 0);
  const endOffset = kept.length > 0 ? kept[kept.length - 1]!.nextOffset : logStartOffset;
  if (kept.length === 0 || logStartOffset > endOffset) {
    if (kept.length > 0) {
      logger.warn(
        { dir, logStartOffset, logEndOffset: endOffset },
        'log end offset below log start offset: deleting all segments',
      );
      for (const s of kept) s.delete();
      deleted += kept.length;
      kept.length = 0;
      truncated = null;
    }
    logStartOffset = startHint ?? 0;
    kept.push(LogSegment.create(segmentArgs(logStartOffset)));
    recoveryPointBound = logStartOffset;
  }

  // Fifth pass, Kafka's onBecomeInactiveSegment for the inactive segments: their time index ends
  // with their max timestamp.
  for (let i = 0; i < kept.length - 1; i++) kept[i]!.onBecomeInactive();

  // Make recovery's own changes durable, so a crash cannot resurrect what it cut.
  if (truncated !== null) truncated.sync();
  if (truncated !== null || deleted > 0) fs.syncDir(dir);
  const logEndOffset = kept[kept.length - 1]!.nextOffset;
  return {
    segments: kept,
    recoveryPoint: Math.max(Math.min(recoveryPointBound, logEndOffset), kept[0]!.baseOffset),
    logStartOffset: Math.min(logStartOffset, logEndOffset),
    compacted,
    truncated: truncated !== null,
    deletedSegments: deleted,
    scannedBytes: recovery.scannedBytes,
    truncatedBytes: recovery.truncatedBytes,
  };
}

/** Base offsets of the `.log` files in `dir`, ascending; deletes `.index`/`.timeindex` files that lack a `.log`. */
function listSegmentBases(fs: FileSystem, dir: string, logger: Logger): number[] {
  const logBases: number[] = [];
  const indexFiles: Array<{ baseOffset: number; suffix: string }> = [];
  for (const name of fs.readdir(dir)) {
    const parsed = parseSegmentFileName(name);
    if (parsed === null) continue;
    if (parsed.suffix === LOG_FILE_SUFFIX) logBases.push(parsed.baseOffset);
    else indexFiles.push(parsed);
  }
  const logBaseSet = new Set(logBases);
  for (const { baseOffset, suffix } of indexFiles) {
    if (logBaseSet.has(baseOffset)) continue;
    const path = posix.join(dir, segmentFileName(baseOffset, suffix));
    // A warning, as Kafka's LogLoader gives ("Found an orphaned index file"): its .log is gone, and
    // with it whatever records it held (a crash while retention deleted the segment, or a hand).
    logger.warn({ path }, 'deleting index file without a log file');
    fs.unlink(path);
  }
  return logBases.sort((a, b) => a - b);
}

/** What {@link recoverSegments} kept and did. */
interface SegmentsRecovery {
  /** Segments that form the log, oldest first (may be empty only if `loaded` was). */
  kept: LogSegment[];
  /** The segment whose tail was cut (now the last kept one), or null. */
  truncated: LogSegment | null;
  /** Number of segments deleted. */
  deleted: number;
  /** Upper bound for the recovery point: the hint, lowered if the trusted part proved damaged. */
  recoveryPointBound: number;
  /** Bytes re-validated by {@link LogSegment.recover}, over all segments. */
  scannedBytes: number;
  /** Bytes cut from the truncated segment's tail (0 if none). */
  truncatedBytes: number;
}

/**
 * Pass 3 of {@link loadLog} over the loaded segments (ascending base offsets), with
 * `hint` = the checkpointed recovery point:
 * - a segment wholly below the recovery point is trusted: its next offset is read from the last
 *   index entry on (a damaged offset index there has its tail rebuilt with CRC checks; a damaged
 *   time index is rebuilt whole from batch headers); if that finds it damaged, it is recovered;
 * - the segment containing the recovery point is re-validated from the index entry at or below
 *   it, and every later segment from its start;
 * - the first torn/corrupt batch truncates its segment and deletes all later ones; a segment whose
 *   base offset does not continue the previous one is deleted with all later ones.
 */
function recoverSegments(
  loaded: LogSegment[],
  hint: number,
  dir: string,
  logger: Logger,
  allowOffsetGaps: boolean,
): SegmentsRecovery {
  const kept: LogSegment[] = [];
  let trusted = true;
  let recoveryPointBound = hint;
  let deleted = 0;
  let scannedBytes = 0;
  const deleteFrom = (i: number, msg: string, fields: object): void => {
    const later = loaded.slice(i);
    if (later.length === 0) return;
    logger.warn({ dir, deletedSegments: later.length, ...fields }, msg);
    for (const s of later) s.delete();
    deleted += later.length;
  };
  for (let i = 0; i < loaded.length; i++) {
    const seg = loaded[i]!;
    const prev = kept[kept.length - 1];
    if (
      prev !== undefined &&
      (allowOffsetGaps ? seg.baseOffset < prev.nextOffset : seg.baseOffset !== prev.nextOffset)
    ) {
      deleteFrom(i, 'segment does not continue the log: deleting it and all later segments', {
        segment: seg.baseOffset,
        expected: prev.nextOffset,
      });
      break;
    }
    kept.push(seg);
    const nextBase = i + 1 < loaded.length ? loaded[i + 1]!.baseOffset : Number.POSITIVE_INFINITY;
    let fromOffset: number;
    if (trusted && nextBase <= hint) {
      // Wholly below the recovery point: fsynced, so only structure is checked (Kafka's readNextOffset).
      if (seg.indexProblem === null) {
        let problem: string | null = null;
        if (seg.timeIndexProblem !== null) {
          logger.warn({ segment: seg.timeIndexPath, reason: seg.timeIndexProblem }, 'rebuilding damaged time index');
          problem = seg.rebuildTimeIndex();
        }
        problem ??= seg.loadNextOffset();
        if (problem === null) continue;
        logger.warn(
          { segment: seg.logPath, reason: problem },
          'segment below the recovery point is damaged: recovering it',
        );
        fromOffset = seg.baseOffset;
        trusted = false;
        recoveryPointBound = Math.min(recoveryPointBound, seg.baseOffset);
      } else {
        logger.warn({ segment: seg.indexPath, reason: seg.indexProblem }, 'rebuilding damaged offset index');
        if (seg.timeIndexProblem !== null)
          logger.warn({ segment: seg.timeIndexPath, reason: seg.timeIndexProblem }, 'rebuilding damaged time index');
        fromOffset = Number.MAX_SAFE_INTEGER; // from its last valid entry on
      }
    } else {
      if (seg.indexProblem !== null)
        logger.info({ segment: seg.indexPath, reason: seg.indexProblem }, 'offset index rebuilt by recovery');
      if (seg.timeIndexProblem !== null)
        logger.info({ segment: seg.timeIndexPath, reason: seg.timeIndexProblem }, 'time index rebuilt by recovery');
      fromOffset = trusted ? hint : seg.baseOffset;
      trusted = false;
    }
    const indexRebuilt = fromOffset === Number.MAX_SAFE_INTEGER;
    const result = seg.recover(fromOffset);
    // Bytes past the recovery point may have survived only in the page cache, so the next flush
    // fsyncs them (and a truncated or re-indexed segment's new state); a segment that ends at or
    // below it (the active one after a clean shutdown) was fsynced whole, and syncing it again would
    // cost every partition an fsync at start-up.
    if (seg.nextOffset > recoveryPointBound || result.truncatedBytes > 0 || indexRebuilt) seg.markUnsynced();
    scannedBytes += result.validBytes - result.fromPosition;
    if (result.truncatedBytes > 0) {
      deleteFrom(i + 1, 'deleting segments after a truncated segment', { after: seg.baseOffset });
      return {
        kept,
        truncated: seg,
        deleted,
        recoveryPointBound,
        scannedBytes,
        truncatedBytes: result.truncatedBytes,
      };
    }
  }
  return { kept, truncated: null, deleted, recoveryPointBound, scannedBytes, truncatedBytes: 0 };
}
