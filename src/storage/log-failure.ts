/**
 * A log's storage failure and its healing (the part of Kafka's LogDirFailureChannel that concerns one
 * log, and what Kafka has no counterpart for: it keeps a failed log dir offline until a restart). It
 * owns the sticky failure ({@link LogFailureState}: why the log refuses writes and flushes), the cut
 * back to a durable prefix ({@link reestablishDurablePrefix}) and the completion of a cleaner swap
 * the disk refused past its commit point ({@link finishPendingSwap}). The log (log.ts) keeps the
 * undo of a refused append or roll, which is woven into append, and hands this file a narrow view of
 * itself ({@link DurablePrefixTarget}), as it does retention.ts.
 *
 * ```
 *  logStartOffset      HW <= recoveryPoint (write.caching=false)      logEndOffset
 *  |<------------ fsynced ------------>|<--- maybe lost: a failed fsync --->|
 *                                      ^ the cut: recoveryPosition (byte position), no read past it
 * ```
 *
 * Durability: a failed fsync never moves the recovery point, and the failure is sticky (Linux reports
 * a writeback error to one fsync per descriptor only, so a retried fsync may succeed over dropped
 * pages). The cut goes back to the recovery point, the last offset a successful fsync covered, and
 * never below the high watermark: {@link reestablishDurablePrefix} refuses, changing nothing, when the
 * recovery point is below the HW it is given. With write.caching=false the HW never passes the recovery
 * point, so no acknowledged or read record is cut; with write.caching=true readers may have seen bytes
 * past it, which only a restart's recovery may judge.
 */
import assert from 'node:assert/strict';
import type { FileSystem } from '../io/file-system';
import type { Logger } from '../io/logger';
import type { LogSegment } from './log-segment';
import { SWAP_FILE_SUFFIX } from './segment-swap';
import { asStorageError, type KafkaStorageError } from './storage-error';

/** A byte position in the log: the segment (by base offset) and a position in its `.log`. */
export interface LogPosition {
  baseOffset: number;
  position: number;
}

/**
 * A cleaner swap past its commit point that the disk refused to complete: the swap file's base offset
 * and the old segments it replaces, still in the log's segments.
 */
export interface PendingSwap {
  base: number;
  group: LogSegment[];
}

/**
 * Why a log refuses writes and flushes, or null (Kafka's LogDirFailureChannel, per log). Sticky until
 * {@link reestablishDurablePrefix} succeeds: Linux reports a writeback error to one fsync per
 * descriptor only, so a retried fsync may succeed although the bytes were never written.
 */
export class LogFailureState {
  private failure: KafkaStorageError | null = null;

  /**
   * @param dir the partition directory (log lines)
   * @param recoveryPoint the log's recovery point, for the log line
   */
  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
    private readonly recoveryPoint: () => number,
  ) {}

  /** The failure, or null when the log takes writes. */
  get current(): KafkaStorageError | null {
    return this.failure;
  }

  /** Throws the failure, if any. */
  throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }

  /**
   * Makes the log refuse writes with `error` (the first failure is kept unless `replace`); returns
   * `error` for the caller to throw. Logged once per failure.
   */
  failWith(error: KafkaStorageError, replace = false): KafkaStorageError {
    if (this.failure === null || replace) {
      if (this.failure === null)
        this.logger.error(
          { dir: this.dir, errno: error.code, error: error.message, recoveryPoint: this.recoveryPoint() },
          'log refuses writes after a storage error',
        );
      this.failure = error;
    }
    return error;
  }

  /** The log takes writes again (a durable prefix was re-established). */
  clear(): void {
    this.failure = null;
  }
}

/** What healing needs of a log (log.ts builds it over its own state). */
export interface DurablePrefixTarget {
  /** The partition directory. */
  readonly dir: string;
  readonly fs: FileSystem;
  readonly logger: Logger;
  readonly failure: LogFailureState;
  /** The segments, oldest first; the last is the active one. Spliced by {@link finishPendingSwap}. */
  readonly segments: LogSegment[];
  logEndOffset(): number;
  /** Every offset below it is fsynced. */
  recoveryPoint(): number;
  /** Where the batch at the recovery point starts, null when unknown. */
  recoveryPosition(): LogPosition | null;
  /** The swap {@link finishPendingSwap} completes, or null. */
  pendingSwap(): PendingSwap | null;
  /** The pending swap was completed. */
  clearPendingSwap(): void;
  /** Loads the segment file at `baseOffset` (LogSegment.load with the log's settings). */
  loadSegment(baseOffset: number): LogSegment;
  /** Log.truncateTo: drops everything at and after `offset`, made durable at once. */
  truncateTo(offset: number): void;
  /** Unlinks the active segment's files, then drops it from the log; the directory is then unsynced. */
  popActiveSegment(): void;
  /** The active segment was cut at the recovery point: the LEO is `offset` (the log start offset at most it). */
  cutTo(offset: number): void;
  /**
   * Everything the log holds is fsynced, the directory too: the recovery point (and its position)
   * move to the LEO and the cleaner's first dirty offset is at most it.
   */
  markDurable(): void;
  checkInvariants(): void;
}

/**
 * Takes a log that refuses writes back to a durable prefix and clears the failure: finishes a pending
 * swap, cuts everything past the recovery point (the last point a successful fsync covered) without
 * reading it, then fsyncs every segment with unsynced changes and the directory again. Refuses
 * (returns false, changing nothing) when the recovery point is below `keepAtLeast` (the high
 * watermark). Throws a {@link KafkaStorageError} (replacing the failure, which stays set) when the
 * disk still refuses. The caller (Log.reestablishDurablePrefix) asserts a failure is set and no flush
 * is in flight.
 */
export function reestablishDurablePrefix(log: DurablePrefixTarget, keepAtLeast: number): boolean {
  const durable = log.recoveryPoint();
  if (durable < keepAtLeast) return false;
  const before = log.logEndOffset();
  try {
    finishPendingSwap(log);
    if (before > durable || activeOf(log).isTailDamaged) truncateToDurablePoint(log);
    for (const s of log.segments) if (s.hasUnsyncedBytes) s.sync();
    log.fs.syncDir(log.dir);
  } catch (error) {
    throw log.failure.failWith(asStorageError(error, `re-establishing a durable prefix of ${log.dir}`), true);
  }
  log.failure.clear();
  log.markDurable();
  log.logger.info(
    { dir: log.dir, logEndOffset: log.logEndOffset(), previousLogEndOffset: before },
    'log writable again: durable prefix re-established',
  );
  log.checkInvariants();
  return true;
}

/**
 * Cuts the log at the recovery point: at its tracked byte position when known (reading nothing past
 * it), else by offset (header reads).
 */
function truncateToDurablePoint(log: DurablePrefixTarget): void {
  const durable = log.recoveryPoint();
  const at = log.recoveryPosition();
  const i = at === null ? -1 : log.segments.findIndex((s) => s.baseOffset === at.baseOffset);
  if (at === null || i < 0) {
    if (log.logEndOffset() > durable) log.truncateTo(durable);
    else {
      const active = activeOf(log);
      active.truncateToPosition(active.sizeBytes, active.nextOffset);
    }
    return;
  }
  while (log.segments.length > i + 1) log.popActiveSegment();
  activeOf(log).truncateToPosition(at.position, durable);
  log.cutTo(durable);
}

/**
 * Completes a cleaner swap whose swap file is in place (steps 3-4 of segment-swap.ts, each of them
 * repeatable): unlinks the group's other files and the head's indexes, renames `<B>.log.swap` over
 * `<B>.log`, loads and syncs the new segment, and only then replaces the group's segment objects by
 * it. No-op when none is pending. On a disk error the old objects stay, the swap stays pending and
 * the log refuses writes ({@link LogFailureState}); throws that {@link KafkaStorageError}.
 */
export function finishPendingSwap(log: DurablePrefixTarget): void {
  const pending = log.pendingSwap();
  if (pending === null) return;
  const segments = log.segments;
  const first = segments.indexOf(pending.group[0]!);
  assert.ok(
    first >= 0 && pending.group.every((s, k) => segments[first + k] === s),
    `pending swap ${pending.base}: its segments left the log`,
  );
  const head = pending.group[0]!;
  let segment: LogSegment | null = null;
  try {
    for (const s of pending.group.slice(1)) unlinkIfExists(log.fs, s.logPath);
    for (const s of pending.group) {
      unlinkIfExists(log.fs, s.indexPath);
      unlinkIfExists(log.fs, s.timeIndexPath);
    }
    const swap = `${head.logPath}${SWAP_FILE_SUFFIX}`;
    if (log.fs.exists(swap)) log.fs.rename(swap, head.logPath);
    log.fs.syncDir(log.dir);
    segment = log.loadSegment(pending.base);
    const recovered = segment.recover(pending.base);
    assert.equal(recovered.truncatedBytes, 0, `cleaned segment ${pending.base} did not validate: ${recovered.reason}`);
    segment.onBecomeInactive();
    segment.sync();
    log.fs.syncDir(log.dir);
  } catch (error) {
    if (segment !== null) segment.close();
    throw log.failure.failWith(asStorageError(error, `swapping the cleaned segment ${pending.base} into ${log.dir}`));
  }
  segments.splice(first, pending.group.length, segment);
  log.clearPendingSwap();
  for (const s of pending.group) s.close(); // their files are gone or replaced: close only
  log.checkInvariants();
}

function activeOf(log: DurablePrefixTarget): LogSegment {
  return log.segments[log.segments.length - 1]!;
}

function unlinkIfExists(fs: FileSystem, path: string): void {
  if (fs.exists(path)) fs.unlink(path);
}
