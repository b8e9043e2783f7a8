/**
 * One partition replica's log (Kafka's UnifiedLog/LocalLog): the directory
 * `<log.dir>/<topic>-<partition>/` holding segments `<20-digit base offset>.log/.index/.timeindex`.
 * It appends, reads, flushes, truncates and rolls; loading and recovery are log-loader.ts's (Kafka's
 * LogLoader), retention's choice of segments is retention.ts's, the storage failure and its healing
 * (the cut back to a durable prefix, a refused cleaner swap's completion) are log-failure.ts's, and
 * the log cleaner (log-cleaner.ts) drives the compaction hooks at the end of the class.
 *
 * ```
 *  logStartOffset        recoveryPoint                      logEndOffset (LEO)
 *  |  00..00.log (full)  |  00..0500.log (full) |  00..0900.log (active)  |
 *  |<----- fsynced ----->|<-------- maybe only in the page cache ------->|
 * ```
 *
 * Offsets are dense (but for gaps the cleaner leaves in a compacted log): each appended batch
 * starts at the LEO. The recovery point is the offset below which everything is fsynced; `flush()`
 * advances it to the LEO, `flushAsync()` (pipelined group commit: appends go on while the disk
 * flushes) to the LEO as of its start, once its fsyncs are done. On open, segments that may hold
 * data at or beyond the recovery point are re-validated (CRC-32C, dense offsets), a torn or corrupt
 * tail is truncated and every later segment deleted, and damaged indexes are rebuilt
 * (log-loader.ts). The recovery point passed in is a hint, bounded by what the log holds.
 *
 * Segments roll on append (Kafka's UnifiedLog.maybeRoll): by size (segment.bytes), by time
 * (segment.ms, measured between batch timestamps), when an index is full (segment.index.bytes), or
 * when offsets would overflow the segment's int32 relative range. Retention deletes whole segments
 * from the oldest (Kafka's deleteOldSegments: log start offset, retention.bytes, retention.ms), never
 * at or above the high watermark; DeleteRecords (KIP-107) raises the log start offset. Reads,
 * timestamp searches and the max-timestamp lookup see only offsets >= logStartOffset.
 */
import assert from 'node:assert/strict';
import type { Clock } from '../io/clock';
import type { Logger } from '../io/logger';
import { decompress as decompressRecords } from '../protocol/record-batch/compression';
import * as L from '../protocol/record-batch/layout';
import {
  baseOffsetNumber,
  batchSizeAt,
  lastOffsetDeltaOf,
  maxTimestampOf,
  setBaseOffset,
  setPartitionLeaderEpoch,
} from '../protocol/record-batch/view';
import { settleAll, type FileSystem } from '../io/file-system';
import {
  finishPendingSwap,
  LogFailureState,
  reestablishDurablePrefix,
  type DurablePrefixTarget,
  type LogPosition,
  type PendingSwap,
} from './log-failure';
import { loadLog, markCompacted, type LoadedLog } from './log-loader';
import { LogSegment, type BatchHeader, type LogSegmentArgs, type TimestampAndOffset } from './log-segment';
import { OFFSET_INDEX_ENTRY_BYTES } from './offset-index';
import type { Decompress } from './record-timestamps';
import {
  deleteLogStartOffsetBreachedSegments,
  deleteRetentionSegments,
  type RetentionResult,
  type RetentionTarget,
} from './retention';
import {
  deleteSnapshots,
  listSnapshotOffsets,
  readProducerSnapshot,
  syncSnapshotFile,
  writeProducerSnapshot,
  writeProducerSnapshotUnsynced,
  type ProducerSnapshotEntry,
  type ProducerStateSource,
} from './producer-state-snapshot';
import { writeSwapFile } from './segment-swap';
import { asStorageError, KafkaStorageError } from './storage-error';
import { NO_TIMESTAMP, TIME_INDEX_ENTRY_BYTES } from './time-index';

export { COMPACTED_MARKER } from './log-loader';
export type { BatchHeader, TimestampAndOffset } from './log-segment';
export type { Decompress } from './record-timestamps';
export type { RetentionResult } from './retention';
export { KafkaStorageError } from './storage-error';

const INT32_MAX = 0x7fffffff;
/** Kafka's default segment.ms (log.roll.hours = 168). */
export const DEFAULT_SEGMENT_MS = 7 * 24 * 60 * 60 * 1000;
/** Kafka's default segment.index.bytes (log.index.size.max.bytes). */
export const DEFAULT_SEGMENT_INDEX_BYTES = 10 * 1024 * 1024;

/**
 * Log settings, with Kafka's meaning (topic configs segment.bytes, index.interval.bytes,
 * segment.ms, segment.index.bytes). Changes apply from the next append; index.interval.bytes
 * applies to segments created after the change (Kafka's LogSegment keeps its own).
 */
export interface LogConfig {
  /** Roll to a new segment when the active one would exceed this many bytes (1 .. 2^31-1). */
  segmentBytes: number;
  /** Bytes of log between offset index entries (>= 0). */
  indexIntervalBytes: number;
  /**
   * segment.ms / log.roll.ms (>= 1; default 7 days): roll when a batch's maxTimestamp is more than
   * this past the active segment's first batch's maxTimestamp (or, when that first batch has no
   * timestamp, when the segment was created longer ago than this). No jitter (segment.jitter.ms 0).
   */
  segmentMs?: number;
  /** segment.index.bytes (>= 4; default 10 MiB): roll when the active segment's offset or time index would hold more. */
  segmentIndexBytes?: number;
}

/** Arguments of {@link Log.open}. */
export interface LogOpenArgs {
  fs: FileSystem;
  /** The partition directory, `<log.dir>/<topic>-<partition>`; created if missing. */
  dir: string;
  config: LogConfig;
  /** Offset below which the log is known to be fsynced (from recovery-point-offset-checkpoint; 0 if unknown). */
  recoveryPoint: number;
  /** From log-start-offset-checkpoint; defaults to the first segment's base offset. */
  logStartOffset?: number;
  logger: Logger;
  clock: Clock;
  /**
   * Decompresses a compressed batch's records for record-level timestamp searches (default:
   * compression.ts's `decompress`); null answers compressed batches at batch granularity.
   */
  decompress?: Decompress | null;
  /**
   * The log is (or may have been) compacted (cleanup.policy contains compact): offsets may have gaps
   * left by the cleaner, which recovery and reads accept, and interrupted cleaner swaps are completed
   * on open (segment-swap.ts). Default false: offsets are dense and a gap is corruption.
   */
  compacted?: boolean;
  /**
   * The partition's idempotent-producer state (the replica's ProducerStateTable): snapshotted into
   * `<base>.snapshot` when a segment rolls (producer-state-snapshot.ts). Without it no snapshot is
   * written on roll.
   */
  producerState?: ProducerStateSource;
}

/** A producer-state snapshot read back by {@link Log.loadProducerSnapshot}: the offset it is valid at and its entries. */
export interface LoadedProducerSnapshot {
  offset: number;
  entries: ProducerSnapshotEntry[];
}

/**
 * One segment as the log cleaner sees it (log-cleaner.ts plans from these): its offset range
 * [baseOffset, endOffset), where endOffset is the next segment's base (the LEO for the last).
 */
export interface SegmentInfo {
  baseOffset: number;
  endOffset: number;
  sizeBytes: number;
  /** Largest batch maxTimestamp, else the last-modified time (ms since the epoch). */
  largestTimestampMs: number;
  /** The first batch's maxTimestamp, or -1 (ms since the epoch; max.compaction.lag.ms). */
  firstBatchTimestampMs: number;
  /** Whether appends go here. */
  active: boolean;
}

/** Offsets assigned to an appended batch. */
export interface LogAppendInfo {
  baseOffset: number;
  lastOffset: number;
}

/**
 * Result of {@link Log.read}: whole stored batches, unchanged, in one fresh exact-size buffer, and
 * the base offset of the first one (null when none); or out-of-range (Kafka's OFFSET_OUT_OF_RANGE).
 */
export type LogReadResult = { kind: 'ok'; records: Buffer; firstOffset: number | null } | { kind: 'out-of-range' };

/**
 * Whole stored batches as a byte range of one segment's `.log` file, for a reader on another thread
 * (the network thread's Fetch, src/network/segment-reader.ts): `sizeBytes` bytes from byte `position`
 * of the file at `path`, whose identity was `fileIdentity` (`<dev>:<ino>`) when the range was taken.
 * The bytes begin with the batch whose base offset is `baseOffset` and end with the batch whose last
 * offset is `lastOffset`, so the reader can check it read what the log meant (a segment may have
 * been deleted, or swapped by the cleaner, since).
 */
export interface SegmentRange {
  path: string;
  fileIdentity: string;
  position: number;
  sizeBytes: number;
  baseOffset: number;
  lastOffset: number;
}

/**
 * Result of {@link Log.readRanges}: the batches {@link Log.read} would return, as one range per
 * segment, in order (empty when none), or out-of-range.
 */
export type LogRangesResult = { kind: 'ok'; ranges: SegmentRange[] } | { kind: 'out-of-range' };

/** One segment's part of a read: its batches from `position`, `sizeBytes` long. */
interface ReadSpan {
  segment: LogSegment;
  position: number;
  sizeBytes: number;
  baseOffset: number;
  lastOffset: number;
}

/** What {@link Log.open} found and did, for the broker's start-up summary (sizes in bytes). */
export interface LogLoadSummary {
  /** Segments of the loaded log. */
  segments: number;
  /** Bytes re-validated batch by batch from the recovery point on. */
  scannedBytes: number;
  /** Bytes cut from a torn or corrupt tail. */
  truncatedBytes: number;
  /** Segments recovery deleted (after a truncated one, or not continuing the log). */
  deletedSegments: number;
}

/** A partition log (see module doc). Owned by one replica actor; synchronous but for {@link Log.flushAsync}; not thread-safe. */
export class Log {
  readonly dir: string;
  private readonly fs: FileSystem;
  private config: LogConfig;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly decompress: Decompress | null;
  private readonly producerState: ProducerStateSource | null;
  /** Snapshot files written on a roll and not yet fsynced (the next flush syncs them). */
  private unsyncedSnapshots: string[] = [];
  private readonly segments: LogSegment[];
  private compacted: boolean;
  /** Kafka's cleaner checkpoint (in memory): offsets below it were cleaned at least once. */
  private firstDirty: number;
  // ES private fields, read by the public getters of the same names. logStartOffset is Kafka's log
  // start offset (Kafka's "LSO" is the last stable offset, which the replica tracks).
  #logEndOffset: number;
  #recoveryPoint: number;
  #logStartOffset: number;
  /** Segment files were created or deleted since the last directory sync. */
  private dirDirty: boolean;
  private closed = false;
  /** The {@link flushAsync} in flight (at most one), or null. */
  private flushing: Promise<number> | null = null;
  /** Why the log refuses writes and flushes (see {@link storageFailure}; log-failure.ts). */
  private readonly failure: LogFailureState;
  /**
   * Where the batch at the recovery point starts (the segment holding it and a byte position in it),
   * so {@link reestablishDurablePrefix} can cut there without reading bytes that may be lost; null
   * when unknown (just opened, or the cleaner rewrote that segment).
   */
  private recoveryPosition: LogPosition | null = null;
  /**
   * A cleaner swap past its commit point that the disk refused to complete (see
   * {@link finishPendingSwap}), still in {@link segments}. Completed before anything else changes
   * the set of segments.
   */
  private pendingSwap: PendingSwap | null = null;

  /** What retention.ts sees of this log (see {@link RetentionTarget}). */
  private readonly retention: RetentionTarget;
  /** What log-failure.ts sees of this log (see {@link DurablePrefixTarget}). */
  private readonly durable: DurablePrefixTarget;
  /** What loading this log found and did; the broker sums these into one start-up line. */
  readonly loadSummary: LogLoadSummary;

  private constructor(args: LogOpenArgs, loaded: LoadedLog) {
    this.dir = args.dir;
    this.fs = args.fs;
    this.config = { ...args.config };
    this.logger = args.logger;
    this.clock = args.clock;
    this.decompress = args.decompress === undefined ? decompressRecords : args.decompress;
    this.producerState = args.producerState ?? null;
    this.segments = loaded.segments;
    this.compacted = loaded.compacted;
    this.#logEndOffset = this.segments[this.segments.length - 1]!.nextOffset;
    this.#recoveryPoint = loaded.recoveryPoint;
    this.#logStartOffset = loaded.logStartOffset;
    this.firstDirty = loaded.logStartOffset;
    this.loadSummary = {
      segments: loaded.segments.length,
      scannedBytes: loaded.scannedBytes,
      truncatedBytes: loaded.truncatedBytes,
      deletedSegments: loaded.deletedSegments,
    };
    // The directory entries of segments at or beyond the recovery point may never have been synced
    // (a process crash between a roll and the next flush): then the first flush syncs the directory.
    // A segment below it was covered by the flush that moved the recovery point past its base (a
    // flush syncs the directory after a roll), so a log loaded whole below its recovery point (a
    // clean shutdown's) skips that fsync: with many partitions it is one per partition at start-up.
    this.dirDirty = this.segments.some((s) => s.baseOffset >= loaded.recoveryPoint);
    this.retention = {
      dir: this.dir,
      logger: this.logger,
      segments: this.segments,
      logStartOffset: () => this.#logStartOffset,
      logEndOffset: () => this.#logEndOffset,
      deleteOldestSegments: (count, reason) => this.deleteOldestSegments(count, reason),
    };
    this.failure = new LogFailureState(this.dir, this.logger, () => this.#recoveryPoint);
    this.durable = {
      dir: this.dir,
      fs: this.fs,
      logger: this.logger,
      failure: this.failure,
      segments: this.segments,
      logEndOffset: () => this.#logEndOffset,
      recoveryPoint: () => this.#recoveryPoint,
      recoveryPosition: () => this.recoveryPosition,
      pendingSwap: () => this.pendingSwap,
      clearPendingSwap: () => {
        this.pendingSwap = null;
      },
      loadSegment: (baseOffset) => LogSegment.load(this.segmentArgs(baseOffset)),
      truncateTo: (offset) => this.truncateTo(offset),
      popActiveSegment: () => {
        this.dirDirty = true;
        this.popActiveSegment();
      },
      cutTo: (offset) => {
        this.#logEndOffset = offset;
        this.#logStartOffset = Math.min(this.#logStartOffset, offset);
      },
      markDurable: () => {
        this.dirDirty = false;
        this.#recoveryPoint = this.#logEndOffset;
        this.recoveryPosition = { baseOffset: this.active.baseOffset, position: this.active.sizeBytes };
        this.firstDirty = Math.min(this.firstDirty, this.#logEndOffset);
      },
      checkInvariants: () => this.checkInvariants(),
    };
    this.checkInvariants();
  }

  /**
   * Opens (creating if needed) the log in `args.dir` and recovers it with log-loader.ts's
   * {@link loadLog} (Kafka's LogLoader): cleaner leftovers completed, orphan index files deleted, a
   * torn or corrupt tail from the recovery point on truncated, damaged indexes rebuilt, and a log
   * ending below its start offset restarted there. The resulting recoveryPoint is min(hint, LEO)
   * (lower if the trusted part proved inconsistent); logStartOffset is the checkpointed value raised
   * to the first segment's base offset. Idempotent: opening an already recovered log changes
   * nothing. Throws on I/O errors and on a config out of range.
   */
  static open(args: LogOpenArgs): Log {
    validateConfig(args.config);
    const loaded = loadLog({
      fs: args.fs,
      dir: args.dir,
      indexIntervalBytes: args.config.indexIntervalBytes,
      recoveryPoint: args.recoveryPoint,
      logStartOffset: args.logStartOffset,
      logger: args.logger,
      clock: args.clock,
      compacted: args.compacted ?? false,
    });
    const log = new Log(args, loaded);
    // One line per partition: at debug (a start loads every partition; the broker logs one summary).
    args.logger.debug(
      {
        dir: args.dir,
        logStartOffset: log.logStartOffset,
        logEndOffset: log.logEndOffset,
        recoveryPoint: log.recoveryPoint,
        segments: loaded.segments.length,
        truncated: loaded.truncated,
        deletedSegments: loaded.deletedSegments,
        scannedBytes: loaded.scannedBytes,
        truncatedBytes: loaded.truncatedBytes,
      },
      'log loaded',
    );
    return log;
  }

  /** First offset a reader may fetch. */
  get logStartOffset(): number {
    return this.#logStartOffset;
  }

  /** Log end offset: the offset the next appended batch gets. */
  get logEndOffset(): number {
    return this.#logEndOffset;
  }

  /** Every offset below this is fsynced (survives power loss). */
  get recoveryPoint(): number {
    return this.#recoveryPoint;
  }

  /** Base offset of the segment appends go to. */
  get activeSegmentBaseOffset(): number {
    return this.active.baseOffset;
  }

  /** Total bytes of all `.log` files. */
  get sizeBytes(): number {
    let total = 0;
    for (const s of this.segments) total += s.sizeBytes;
    return total;
  }

  /** Whether a {@link flushAsync} is in flight. */
  get flushInFlight(): boolean {
    return this.flushing !== null;
  }

  /** Resolves once no {@link flushAsync} is in flight (never rejects: the flush's caller sees its error). */
  async whenFlushed(): Promise<void> {
    while (this.flushing !== null)
      await this.flushing.then(
        () => undefined,
        () => undefined,
      );
  }

  /** Whether a {@link flush} has anything to fsync. */
  get hasUnflushed(): boolean {
    return (
      this.#recoveryPoint < this.#logEndOffset ||
      this.dirDirty ||
      this.unsyncedSnapshots.length > 0 ||
      this.segments.some((s) => s.hasUnsyncedBytes)
    );
  }

  /** Base offsets of the segments, oldest first (tests, admin). */
  segmentBaseOffsets(): number[] {
    return this.segments.map((s) => s.baseOffset);
  }

  /** The settings in force (a copy). */
  get currentConfig(): LogConfig {
    return { ...this.config };
  }

  /**
   * Replaces the settings (topic config change; Kafka's UnifiedLog.updateConfig): segment.bytes,
   * segment.ms and segment.index.bytes apply from the next append; index.interval.bytes to segments
   * rolled afterwards. Asserts (programmer error) on values out of range.
   */
  updateConfig(config: LogConfig): void {
    this.assertOpen();
    validateConfig(config);
    this.config = { ...config };
  }

  /**
   * Appends ONE record batch v2 that the caller has validated (size, magic, CRC-32C, counts; on a
   * LogAppendTime topic already stamped): writes baseOffset = LEO and partitionLeaderEpoch =
   * `leaderEpoch` into `batch` in place (both outside the CRC), rolls a new segment first when the
   * non-empty active one would exceed segmentBytes, is older than segmentMs (by timestamps, see
   * {@link LogConfig.segmentMs}) or has a full index (a batch larger than segmentBytes goes alone
   * into an empty segment), and appends. Not fsynced: see {@link flush}.
   * Returns the offsets assigned. Asserts (programmer error) on a buffer that is not one whole batch.
   * Throws {@link KafkaStorageError} when the disk refuses (ENOSPC, EIO): the log is then exactly as
   * before (the partial batch and its index entries cut again; a segment rolled for it removed and
   * the previous one active again), so the next append simply tries again; or, when even that undo
   * failed, the log refuses writes ({@link storageFailure}) until {@link reestablishDurablePrefix}.
   * Also throws it, writing nothing, while {@link storageFailure} is set.
   */
  append(batch: Buffer, leaderEpoch: number): LogAppendInfo {
    this.assertOpen();
    this.failure.throwIfFailed();
    assert.equal(this.assertWholeBatch(batch, 0, batch.length), batch.length, 'append takes exactly one batch');
    assert.ok(
      Number.isInteger(leaderEpoch) && leaderEpoch >= 0 && leaderEpoch <= INT32_MAX,
      `leaderEpoch ${leaderEpoch}`,
    );
    const delta = lastOffsetDeltaOf(batch);
    assert.ok(delta >= 0, `lastOffsetDelta ${delta}`);
    const baseOffset = this.#logEndOffset;
    setBaseOffset(batch, baseOffset);
    setPartitionLeaderEpoch(batch, leaderEpoch);
    this.appendBatch(batch, baseOffset, baseOffset + delta);
    return { baseOffset, lastOffset: baseOffset + delta };
  }

  /**
   * Appends batches that already carry their offsets and leader epochs (replication: bytes fetched
   * from the leader, appended unchanged; Kafka's UnifiedLog.appendAsFollower). `records` holds one or
   * more whole batches; the first must start at the LEO and each next one where the previous ended
   * (asserted), except in a compacted log, where a batch may start past the LEO (the gaps the leader's
   * cleaner left; offsets still strictly increase). The caller checks CRCs. Returns the first base
   * offset and the last offset appended. On a {@link KafkaStorageError} the batches before the
   * failing one stay appended (a prefix), the failing one is undone as in {@link append}.
   * `onAppended` sees each batch right after it is appended, before the next one may roll a segment,
   * so the producer state a roll snapshots counts exactly the batches below the new segment.
   */
  appendAsFollower(records: Buffer, onAppended?: (batch: Buffer) => void): LogAppendInfo {
    this.assertOpen();
    this.failure.throwIfFailed();
    assert.ok(records.length > 0, 'empty follower append');
    const firstOffset = baseOffsetNumber(records, 0);
    let pos = 0;
    while (pos < records.length) {
      const size = this.assertWholeBatch(records, pos, records.length - pos);
      const baseOffset = baseOffsetNumber(records, pos);
      assert.ok(
        this.compacted ? baseOffset >= this.#logEndOffset : baseOffset === this.#logEndOffset,
        `follower batch at offset ${baseOffset}, log end offset ${this.#logEndOffset}${this.compacted ? ' (compacted)' : ''}`,
      );
      const delta = lastOffsetDeltaOf(records, pos);
      assert.ok(delta >= 0, `lastOffsetDelta ${delta}`);
      const batch = records.subarray(pos, pos + size);
      this.appendBatch(batch, baseOffset, baseOffset + delta);
      onAppended?.(batch);
      pos += size;
    }
    return { baseOffset: firstOffset, lastOffset: this.#logEndOffset - 1 };
  }

  /**
   * fsyncs every segment with unsynced bytes, then the directory if segments were created or
   * deleted; advances the recovery point to the LEO and returns it (group commit: one call covers all
   * appends so far). On an fsync error throws a {@link KafkaStorageError}, the recovery point does not
   * move and the log refuses writes from then on ({@link storageFailure}); throws that error again
   * while it is set. Asserts no {@link flushAsync} is in flight.
   */
  flush(): number {
    this.assertOpen();
    this.failure.throwIfFailed();
    // Two fsyncs in flight may split a writeback error: one fails, the other succeeds over lost pages.
    assert.equal(this.flushing, null, `log ${this.dir}: a synchronous flush during an in-flight flush`);
    const position = { baseOffset: this.active.baseOffset, position: this.active.sizeBytes };
    try {
      this.syncSnapshots();
      for (const s of this.segments) if (s.hasUnsyncedBytes) s.sync();
      if (this.dirDirty) {
        this.fs.syncDir(this.dir);
        this.dirDirty = false;
      }
    } catch (error) {
      throw this.failure.failWith(asStorageError(error, `fsync of ${this.dir}`));
    }
    this.#recoveryPoint = this.#logEndOffset;
    this.recoveryPosition = position;
    this.checkInvariants();
    return this.#recoveryPoint;
  }

  /**
   * Pipelined group commit: fsyncs every segment with unsynced bytes at the call asynchronously
   * (FileHandle.syncAsync; pending index entries are written and, when segments were created or
   * deleted, the directory is synced at once, synchronously), then advances the recovery point to
   * the LEO AS OF THE CALL and resolves with it. Appends, rolls, reads and retention may run while it is
   * in flight, a synchronous {@link flush} may not (asserted: two racing fsyncs may split a writeback
   * error, one failing, the other succeeding over pages lost): bytes appended meanwhile are not counted (they
   * stay unflushed for the next flush, as do segments rolled meanwhile), and a segment stays "unsynced"
   * until a sync that started after its last change has completed. At most one is in flight per log
   * (asserted); {@link truncateTo}, {@link close} and {@link delete} assert that none is (await
   * {@link whenFlushed} first). On an fsync error it rejects (after every fsync it started has
   * settled) with a {@link KafkaStorageError}, the recovery point does not move, and from then on
   * the log refuses writes and this and {@link flush} throw that error (sticky: a retried fsync can
   * falsely succeed after a writeback error) until {@link reestablishDurablePrefix} succeeds.
   */
  flushAsync(): Promise<number> {
    this.assertOpen();
    this.failure.throwIfFailed();
    assert.equal(this.flushing, null, `log ${this.dir}: a flush is already in flight`);
    const target = this.#logEndOffset;
    const targetPosition = { baseOffset: this.active.baseOffset, position: this.active.sizeBytes };
    const syncs = this.segments.filter((s) => s.hasUnsyncedBytes).map((s) => s.syncAsync());
    try {
      this.syncSnapshots(); // small files, rare (one per roll): synchronously, as the directory
    } catch (error) {
      syncs.push(Promise.reject(error));
    }
    if (this.dirDirty) {
      try {
        this.fs.syncDir(this.dir);
        this.dirDirty = false;
      } catch (error) {
        syncs.push(Promise.reject(error));
      }
    }
    const flushing = settleAll(syncs).then(
      () => {
        this.flushing = null;
        // A failure recorded meanwhile (an append that could not be undone) makes this success
        // meaningless: the probe cuts back to the recovery point as it was.
        if (this.failure.current !== null) return this.#recoveryPoint;
        // Never past what was synced; truncateTo (the only way down) cannot run meanwhile.
        const before = this.#recoveryPoint;
        this.#recoveryPoint = Math.max(this.#recoveryPoint, Math.min(target, this.#logEndOffset));
        if (this.#recoveryPoint === target && target > before) this.recoveryPosition = targetPosition;
        this.checkInvariants();
        return this.#recoveryPoint;
      },
      (error: unknown) => {
        this.flushing = null;
        throw this.failure.failWith(asStorageError(error, `fsync of ${this.dir}`));
      },
    );
    this.flushing = flushing;
    return flushing;
  }

  /**
   * Why the log refuses writes and flushes, or null when it takes them: an fsync failed (the bytes
   * it covered are never counted as durable: Linux may have dropped those dirty pages and reports
   * the error only once), or a failed append could not be undone. Reads go on meanwhile.
   */
  get storageFailure(): KafkaStorageError | null {
    return this.failure.current;
  }

  /**
   * Takes a log that refuses writes ({@link storageFailure}) back to a durable prefix and clears the
   * failure: everything past the recovery point (the last point a successful fsync covered) is cut,
   * without reading it, then every segment with unsynced changes and the directory are fsynced again.
   * Bytes appended before the failed fsync are so never counted as durable; with write.caching=false
   * nothing past the recovery point was visible to readers, so they lose nothing. Refuses (returns
   * false, changing nothing) when the recovery point is below `keepAtLeast` (the high watermark:
   * readers saw bytes past the last durable point, which only a restart's recovery may judge).
   * Throws a {@link KafkaStorageError} (the failure stays set) when the disk still refuses; the
   * caller tries again later. Asserts a failure is set and no {@link flushAsync} is in flight.
   */
  reestablishDurablePrefix(keepAtLeast: number): boolean {
    this.assertOpen();
    assert.ok(this.failure.current !== null, `log ${this.dir}: nothing to re-establish`);
    assert.equal(this.flushing, null, `log ${this.dir}: re-establishing during an in-flight flush`);
    return reestablishDurablePrefix(this.durable, keepAtLeast);
  }

  /**
   * Reads whole batches starting with the one containing `fetchOffset`, in order, possibly across
   * segments. A batch is included only if its lastOffset < `maxOffsetExclusive` (the high watermark
   * cap) and the total stays within `maxBytes`; if `minOneBatch` (KIP-74) and the first eligible
   * batch alone exceeds `maxBytes`, it is returned whole. `fetchOffset` < logStartOffset or > LEO is
   * out-of-range; == LEO gives an empty result. Locates batches by index lookup and chunked header
   * scans, then copies with one read per segment into a fresh buffer of exactly the bytes returned,
   * from `allocate` (default `Buffer.allocUnsafeSlow`; the replica passes one that leaves headroom, so
   * the buffer can be handed to another thread with its reply written in front, src/runtime/envelope.ts).
   */
  read(
    fetchOffset: number,
    maxBytes: number,
    maxOffsetExclusive: number,
    minOneBatch: boolean,
    allocate: (size: number) => Buffer = Buffer.allocUnsafeSlow,
  ): LogReadResult {
    const located = this.locateRead(fetchOffset, maxBytes, maxOffsetExclusive, minOneBatch);
    if (located === null) return { kind: 'out-of-range' };
    const { spans, total } = located;
    // Not from the shared pool: the buffer may be transferred to another thread whole.
    const records = allocate(total);
    let at = 0;
    for (const span of spans) {
      span.segment.readInto(records, at, span.position, span.sizeBytes);
      at += span.sizeBytes;
    }
    return { kind: 'ok', records, firstOffset: spans[0]?.baseOffset ?? null };
  }

  /**
   * The batches {@link read} would return for the same arguments, as byte ranges of the segment
   * files instead of bytes, for a reader on another thread; null when a segment's file cannot be
   * read by another thread ({@link LogSegment.sharedFileIdentity}: the simulation's disk), so the
   * caller uses {@link read}. Nothing is read but batch headers.
   */
  readRanges(
    fetchOffset: number,
    maxBytes: number,
    maxOffsetExclusive: number,
    minOneBatch: boolean,
  ): LogRangesResult | null {
    const located = this.locateRead(fetchOffset, maxBytes, maxOffsetExclusive, minOneBatch);
    if (located === null) return { kind: 'out-of-range' };
    const ranges: SegmentRange[] = [];
    for (const span of located.spans) {
      const fileIdentity = span.segment.sharedFileIdentity();
      if (fileIdentity === null) return null;
      ranges.push({
        path: span.segment.logPath,
        fileIdentity,
        position: span.position,
        sizeBytes: span.sizeBytes,
        baseOffset: span.baseOffset,
        lastOffset: span.lastOffset,
      });
    }
    return { kind: 'ok', ranges };
  }

  /** Where {@link read}'s batches are: one span per segment and their total size; null when out of range. */
  private locateRead(
    fetchOffset: number,
    maxBytes: number,
    maxOffsetExclusive: number,
    minOneBatch: boolean,
  ): { spans: ReadSpan[]; total: number } | null {
    this.assertOpen();
    if (!Number.isSafeInteger(fetchOffset) || fetchOffset < this.#logStartOffset || fetchOffset > this.#logEndOffset)
      return null;
    const spans: ReadSpan[] = [];
    let total = 0;
    let firstOffset: number | null = null;
    let done = fetchOffset === this.#logEndOffset;
    for (let i = this.segmentIndexFor(fetchOffset); i < this.segments.length && !done; i++) {
      const segment = this.segments[i]!;
      let span: ReadSpan | null = null;
      const from = segment.baseOffset < fetchOffset ? segment.lookupPosition(fetchOffset) : 0;
      const problem = segment.forEachBatch(from, (h) => {
        if (h.lastOffset < fetchOffset) return true;
        // Dense offsets: the first batch reached must contain fetchOffset, or the index misled us.
        // A compacted log has gaps: then the first batch after fetchOffset is the answer (Kafka's).
        assert.ok(
          this.compacted || firstOffset !== null || h.baseOffset <= fetchOffset,
          `${segment.logPath}: no batch holds offset ${fetchOffset}`,
        );
        if (h.lastOffset >= maxOffsetExclusive) {
          done = true;
          return false;
        }
        if (total + h.sizeBytes > maxBytes && !(total === 0 && minOneBatch)) {
          done = true;
          return false;
        }
        span ??= { segment, position: h.position, sizeBytes: 0, baseOffset: h.baseOffset, lastOffset: h.lastOffset };
        if (firstOffset === null) firstOffset = h.baseOffset;
        span.sizeBytes += h.sizeBytes;
        span.lastOffset = h.lastOffset;
        total += h.sizeBytes;
        done = total >= maxBytes;
        return !done;
      });
      assert.equal(problem, null, `${segment.logPath}: ${problem}`);
      if (span !== null) spans.push(span);
    }
    return { spans, total };
  }

  /**
   * ListOffsets by timestamp (KIP-79; Kafka's UnifiedLog.fetchOffsetByTimestamp): the first RECORD
   * at offset >= logStartOffset whose timestamp is >= `timestampMs` (ms since the epoch, >= 0: the
   * special values -1/-2/-3 are the caller's; anything else from a client is fine, e.g. 2^62), with
   * its timestamp and its batch's leader epoch (-1 if unknown), or null when none (Kafka then answers
   * offset -1). Record timestamps are baseTimestamp + timestampDelta, or the batch's maxTimestamp in
   * a LogAppendTime batch. Segments whose max timestamp is below the target are skipped; in the first
   * other one the time index and the offset index give where to start, then batch headers are
   * scanned and the first batch reaching the target has its records decoded. A compressed batch is
   * decompressed with the `decompress` given to {@link open} (default compression.ts); with null it
   * answers at batch granularity: its first offset >= logStartOffset and its maxTimestamp. Unlike
   * Kafka (which searches only the first segment whose largest timestamp reaches the target), a
   * segment whose qualifying records all lie below logStartOffset does not end the search.
   * The caller caps the answer by the high watermark.
   */
  offsetForTimestamp(timestampMs: number): TimestampAndOffset | null {
    this.assertOpen();
    assert.ok(timestampMs >= 0, `timestamp ${timestampMs}`); // ListOffsets' special values (< 0) are the caller's
    if (this.#logStartOffset >= this.#logEndOffset) return null;
    return this.searchTimestamp(timestampMs, true);
  }

  /**
   * ListOffsets MAX_TIMESTAMP (-3, KIP-734; Kafka's UnifiedLog.fetchOffsetByTimestamp): the record
   * with the largest timestamp at offset >= logStartOffset, the earliest one on ties (Kafka's
   * RecordBatch.offsetOfMaxTimestamp: the first record of the first batch reaching the segment's
   * max), with its timestamp and batch leader epoch; null when the log holds no record with a
   * timestamp >= 0. The maximum comes from the segments' max timestamps (batch headers; the time
   * index holds each batch's LAST offset), the record from decoding that batch (a LogAppendTime
   * batch answers its first record). A compressed batch without `decompress`, or a batch whose
   * header claims a larger timestamp than its records hold, answers at batch granularity.
   */
  maxTimestampOffset(): TimestampAndOffset | null {
    this.assertOpen();
    if (this.#logStartOffset >= this.#logEndOffset) return null;
    let max = NO_TIMESTAMP;
    for (let i = this.segmentIndexFor(this.#logStartOffset); i < this.segments.length; i++) {
      const segment = this.segments[i]!;
      const segmentMax =
        segment.baseOffset < this.#logStartOffset
          ? segment.maxTimestampFrom(this.#logStartOffset, this.decompress)
          : segment.maxTimestampSoFar.timestampMs;
      if (segmentMax > max) max = segmentMax;
    }
    if (max < 0) return null;
    const found = this.searchTimestamp(max, true) ?? this.searchTimestamp(max, false);
    assert.ok(found !== null, `no batch holds the max timestamp ${max}`);
    return found;
  }

  /**
   * Retention (Kafka's UnifiedLog.deleteOldSegments for cleanup.policy=delete) at `nowMs` (ms since
   * the epoch): retention.ts's {@link deleteRetentionSegments} deletes the oldest segments wholly
   * below logStartOffset, then beyond `retentionBytes` (-1 = unlimited), then older than
   * `retentionMs` (-1 = forever), never one holding an offset at or above `highWatermark`.
   * logStartOffset moves up to the first remaining segment's base (the LEO if all went). Files are
   * unlinked at once and the directory synced, so a crash cannot bring them back (Kafka renames
   * them `.deleted` and deletes them after file.delete.delay.ms). The caller checkpoints the new
   * logStartOffset. Asserts `highWatermark` is within [0, LEO].
   */
  deleteRetentionSegments(
    nowMs: number,
    retentionMs: number,
    retentionBytes: number,
    highWatermark: number,
  ): RetentionResult {
    this.assertOpen();
    this.finishPendingSwap();
    return deleteRetentionSegments(this.retention, nowMs, retentionMs, retentionBytes, highWatermark);
  }

  /**
   * DeleteRecords (KIP-107; Kafka's UnifiedLog.maybeIncrementLogStartOffset for
   * ClientRecordDeletion): raises logStartOffset to `offset` (no-op when not above it) and deletes
   * the segments wholly below it (as retention's first pass). Reads, ListOffsets and fetches below
   * the new start are out of range even where the bytes remain in a segment. Returns the log start
   * offset. The caller checks `offset` <= high watermark (else OFFSET_OUT_OF_RANGE) and checkpoints
   * the result (log-start-offset-checkpoint) so it survives a restart. Asserts 0 <= offset <= LEO.
   * Throws a {@link KafkaStorageError} when the disk refuses the deletion: the log start offset and
   * the segments are then unchanged in memory (some files may be unlinked; a restart starts the log
   * at the first one left).
   */
  deleteRecordsBefore(offset: number): number {
    this.assertOpen();
    assert.ok(
      Number.isSafeInteger(offset) && offset >= 0 && offset <= this.#logEndOffset,
      `delete records before ${offset}, log end offset ${this.#logEndOffset}`,
    );
    if (offset <= this.#logStartOffset) return this.#logStartOffset;
    this.finishPendingSwap();
    const before = this.#logStartOffset;
    this.#logStartOffset = offset;
    try {
      deleteLogStartOffsetBreachedSegments(this.retention, offset);
    } catch (error) {
      this.#logStartOffset = before; // the segments are all still there
      throw error;
    }
    this.logger.info(
      { dir: this.dir, logStartOffset: offset, previousLogStartOffset: before },
      'log start offset raised by DeleteRecords',
    );
    this.checkInvariants();
    return this.#logStartOffset;
  }

  /**
   * Drops everything at and after `offset` (follower truncation, tests): segments with a base offset
   * above it are deleted and the segment containing it is truncated at the start of the batch
   * holding `offset` (so the LEO may end below `offset`); below the first segment's base, the log is
   * emptied and restarts at `offset`. No-op when `offset` >= LEO. Made durable at once (truncated
   * segment fsynced, directory synced) so a crash cannot bring the dropped batches back. The
   * recovery point and logStartOffset are lowered to the new LEO if above it.
   *
   * Throws a {@link KafkaStorageError} when the disk refuses (Kafka's UnifiedLog.truncateTo under
   * maybeHandleIOException): the log then refuses writes ({@link storageFailure}), ends where the
   * truncation got to in memory (nothing past `offset` is read again), and its recovery point is
   * at most `offset`, so a restart's recovery (the storage-failure marker's cut) drops whatever
   * of the truncated suffix is still on the disk.
   */
  truncateTo(offset: number): void {
    this.assertOpen();
    assert.equal(this.flushing, null, `log ${this.dir}: truncateTo during an in-flight flush`);
    assert.ok(Number.isSafeInteger(offset) && offset >= 0, `truncate offset ${offset}`);
    if (offset >= this.#logEndOffset) return;
    this.finishPendingSwap();
    const before = this.#logEndOffset;
    try {
      if (offset < this.segments[0]!.baseOffset) {
        this.replaceWithEmptySegmentAt(offset);
      } else {
        let deleted = false;
        while (this.segments.length > 1 && this.active.baseOffset > offset) {
          this.dirDirty = true;
          this.popActiveSegment();
          deleted = true;
        }
        this.active.truncateTo(offset);
        // The log ends here in memory before the fsyncs: a failed one leaves it so (see the catch).
        this.#logEndOffset = this.active.nextOffset;
        this.#recoveryPoint = Math.min(this.#recoveryPoint, this.#logEndOffset);
        this.#logStartOffset = Math.min(this.#logStartOffset, this.#logEndOffset);
        this.active.sync();
        if (deleted || this.dirDirty) {
          this.fs.syncDir(this.dir);
          this.dirDirty = false;
        }
      }
    } catch (error) {
      throw this.failTruncation(error, offset, `truncating ${this.dir} to ${offset}`);
    }
    if (this.#recoveryPoint === this.#logEndOffset)
      this.recoveryPosition = { baseOffset: this.active.baseOffset, position: this.active.sizeBytes };
    assert.ok(
      this.#logEndOffset <= offset && this.#logEndOffset < before,
      `truncateTo(${offset}) left LEO ${this.#logEndOffset}`,
    );
    this.firstDirty = Math.min(this.firstDirty, this.#logEndOffset);
    // Kafka's truncateAndReload: state past the new LEO is gone; the owner rebuilds from what is left.
    this.deleteProducerSnapshots((o) => o > this.#logEndOffset, 'truncation');
    this.logger.info(
      { dir: this.dir, offset, logEndOffset: this.#logEndOffset, previousLogEndOffset: before },
      'log truncated',
    );
    this.checkInvariants();
  }

  /**
   * Kafka's UnifiedLog.truncateFullyAndStartAt: drops every segment and restarts the log, empty, at
   * `offset` (which may be past the LEO: a follower whose leader's log start passed its LEO). The log
   * start offset, LEO and recovery point become `offset`; made durable at once. Asserts no flush is
   * in flight. Throws a {@link KafkaStorageError} when the disk refuses, the log then refusing writes
   * as after a failed {@link truncateTo}.
   */
  truncateFullyAndStartAt(offset: number): void {
    this.assertOpen();
    assert.equal(this.flushing, null, `log ${this.dir}: truncateFullyAndStartAt during an in-flight flush`);
    assert.ok(Number.isSafeInteger(offset) && offset >= 0, `start offset ${offset}`);
    this.finishPendingSwap();
    const before = this.#logEndOffset;
    try {
      this.replaceWithEmptySegmentAt(offset);
    } catch (error) {
      throw this.failTruncation(error, Math.min(offset, this.#logEndOffset), `restarting ${this.dir} at ${offset}`);
    }
    this.recoveryPosition = { baseOffset: this.active.baseOffset, position: 0 };
    this.firstDirty = offset;
    this.deleteProducerSnapshots(() => true, 'full truncation');
    this.logger.info({ dir: this.dir, offset, previousLogEndOffset: before }, 'log truncated fully');
    this.checkInvariants();
  }

  /**
   * A truncation the disk refused (an I/O error; anything else is rethrown): nothing at or past
   * `durableAtMost` counts as durable any more (the truncation may or may not have reached the disk),
   * and the log refuses writes. Returns the {@link KafkaStorageError} to throw.
   */
  private failTruncation(error: unknown, durableAtMost: number, what: string): KafkaStorageError {
    const failure = asStorageError(error, what);
    // Segments popped before the error are gone from the log: it ends at what is left.
    this.#logEndOffset = this.active.nextOffset;
    this.#logStartOffset = Math.min(this.#logStartOffset, this.#logEndOffset);
    this.#recoveryPoint = Math.min(this.#recoveryPoint, durableAtMost, this.#logEndOffset);
    this.recoveryPosition = null;
    return this.failure.failWith(failure);
  }

  /**
   * Makes the log refuse writes after an I/O error on a file of its partition that the log does not
   * own (the leader-epoch checkpoint): Kafka's LogDirFailureChannel.maybeAddOfflineLogDir, which takes
   * the log dir offline for an IOException on any of its files. Returns `error` as a
   * {@link KafkaStorageError} (the log keeps its first failure, when it held one already). Rethrows
   * anything that is not an I/O error unchanged (a programmer error crashes the actor).
   */
  failStorage(error: unknown, what: string): KafkaStorageError {
    this.assertOpen();
    return this.failure.failWith(asStorageError(error, what));
  }

  /**
   * The first offset of each leader epoch as the batches' partitionLeaderEpoch fields give it, oldest
   * first (a header scan of every segment, no records decoded): what rebuilds a missing
   * leader-epoch-checkpoint (Kafka rebuilds its cache from the log in the same way on load).
   */
  epochStartOffsets(): Array<{ epoch: number; startOffset: number }> {
    this.assertOpen();
    const starts: Array<{ epoch: number; startOffset: number }> = [];
    for (const segment of this.segments) {
      const problem = segment.forEachBatch(0, (h) => {
        const last = starts[starts.length - 1];
        if (h.partitionLeaderEpoch >= 0 && (last === undefined || h.partitionLeaderEpoch > last.epoch))
          starts.push({ epoch: h.partitionLeaderEpoch, startOffset: h.baseOffset });
        return true;
      });
      assert.equal(problem, null, `log ${this.dir}: recovered segment unreadable: ${problem}`);
    }
    return starts;
  }

  /**
   * The header of the log's last batch, or null when the log holds none. Scans from the last
   * offset-index entry of the last non-empty segment: at most one index interval of headers (a
   * compacted segment whose tail was cleaned away still gives its last remaining batch). What the
   * replica's start checks its leader-epoch checkpoint against.
   */
  lastBatchHeader(): BatchHeader | null {
    this.assertOpen();
    const last = this.logEndOffset - 1;
    if (last < this.logStartOffset) return null;
    for (let i = this.segmentIndexFor(last); i >= 0; i--) {
      const segment = this.segments[i]!;
      if (segment.sizeBytes === 0) continue;
      let found: BatchHeader | null = null;
      const problem = segment.forEachBatch(segment.lookupPosition(last), (h) => {
        found = h;
        return true;
      });
      assert.equal(problem, null, `log ${this.dir}: recovered segment unreadable: ${problem}`);
      const batch = found as BatchHeader | null;
      if (batch !== null) return batch.lastOffset >= this.logStartOffset ? batch : null;
    }
    return null;
  }

  // ---- idempotent-producer state (producer-state-snapshot.ts; the replica's producer-state.ts owns the state) ----

  /**
   * Visits the headers of the batches whose last offset is >= `fromOffset`, oldest first (no records
   * decoded): the replay of the log tail after a producer-state snapshot (Kafka's
   * UnifiedLog.rebuildProducerState). Asserts the recovered segments read back.
   */
  forEachBatchHeader(fromOffset: number, visit: (header: BatchHeader) => void): void {
    this.assertOpen();
    for (let i = this.segmentIndexFor(fromOffset); i < this.segments.length; i++) {
      const segment = this.segments[i]!;
      const from = segment.baseOffset < fromOffset ? segment.lookupPosition(fromOffset) : 0;
      const problem = segment.forEachBatch(from, (h) => {
        if (h.lastOffset >= fromOffset) visit(h);
        return true;
      });
      assert.equal(problem, null, `log ${this.dir}: recovered segment unreadable: ${problem}`);
    }
  }

  /**
   * Writes the producer state (from {@link LogOpenArgs.producerState}) as `<LEO>.snapshot`: Kafka's
   * takeSnapshot on a clean shutdown. No-op without a producer state. Throws on I/O errors (the
   * caller may go on: a missing snapshot only makes the next start replay more of the log).
   */
  takeProducerSnapshot(): void {
    this.assertOpen();
    if (this.producerState === null) return;
    writeProducerSnapshot(this.fs, this.dir, this.#logEndOffset, this.producerState.snapshotEntries());
  }

  /**
   * The newest usable producer-state snapshot at or below the LEO, or null (Kafka's
   * ProducerStateManager.truncateAndReload on load). Snapshots above the LEO (a suffix lost in a crash
   * or truncated) are deleted first; one that does not decode (torn, CRC mismatch) is deleted with a
   * warning and the next older one is tried. Throws on I/O errors.
   */
  loadProducerSnapshot(): LoadedProducerSnapshot | null {
    this.assertOpen();
    this.deleteProducerSnapshots((o) => o > this.#logEndOffset, 'above the log end offset');
    const offsets = listSnapshotOffsets(this.fs, this.dir);
    for (let i = offsets.length - 1; i >= 0; i--) {
      const offset = offsets[i]!;
      const entries = readProducerSnapshot(this.fs, this.dir, offset);
      if (typeof entries !== 'string') return { offset, entries };
      this.logger.warn(
        { dir: this.dir, offset, reason: entries },
        'ignoring a damaged producer-state snapshot; the state is rebuilt from an older one and the log',
      );
      deleteSnapshots(this.fs, this.dir, (o) => o === offset);
    }
    return null;
  }

  /** Offsets of the producer-state snapshot files, ascending (tests, admin). */
  producerSnapshotOffsets(): number[] {
    return listSnapshotOffsets(this.fs, this.dir);
  }

  /**
   * Producer id -> last offset of its last batch (from the producer state): the batches the cleaner
   * keeps, emptied if need be, so a restart's replay still finds each producer's last sequence
   * (Kafka's LogCleaner lastRecordsOfActiveProducers). Empty without a producer state.
   */
  producerLastOffsets(): Map<number, number> {
    const last = new Map<number, number>();
    if (this.producerState === null) return last;
    for (const e of this.producerState.snapshotEntries()) {
      const b = e.batches[e.batches.length - 1];
      if (b !== undefined) last.set(e.producerId, b.baseOffset + b.lastOffsetDelta);
    }
    return last;
  }

  /** fsyncs the snapshots rolls wrote since the last flush (taken off the list first: a failure fails the flush, sticky). */
  private syncSnapshots(): void {
    const paths = this.unsyncedSnapshots;
    this.unsyncedSnapshots = [];
    for (const path of paths) syncSnapshotFile(this.fs, path);
  }

  /** Deletes the snapshots `doomed` names; a failure is logged only (loading bounds them by the LEO again). */
  private deleteProducerSnapshots(doomed: (offset: number) => boolean, reason: string): void {
    try {
      const deleted = deleteSnapshots(this.fs, this.dir, doomed);
      if (deleted.length > 0)
        this.logger.debug({ dir: this.dir, offsets: deleted, reason }, 'deleted producer-state snapshots');
    } catch (error) {
      this.logger.warn({ dir: this.dir, reason, error: String(error) }, 'producer-state snapshots not deleted');
    }
  }

  /** Every segment goes; one empty segment at `offset` takes their place (LEO, log start, recovery point). */
  private replaceWithEmptySegmentAt(offset: number): void {
    // Unlinked first, out of the log only once the new segment exists: a disk error on the way
    // leaves the segments in the log (their descriptors still read the unlinked files).
    for (const s of this.segments) s.unlinkFiles();
    const fresh = LogSegment.create(this.segmentArgs(offset));
    for (const s of this.segments.splice(0)) s.delete(); // closes; the files are gone already
    this.segments.push(fresh);
    // The log is the fresh segment in memory before the fsyncs: a failed one leaves it so.
    this.dirDirty = true;
    this.#logEndOffset = offset;
    this.#logStartOffset = offset;
    this.#recoveryPoint = offset;
    this.active.sync();
    this.fs.syncDir(this.dir);
    this.dirDirty = false;
  }

  // ---- log cleaner (log-cleaner.ts drives these) -------------------------------------------

  /**
   * cleanup.policy gained compact while open: offset gaps are accepted from now on (a log never
   * goes back: gaps may exist once cleaned).
   */
  enableCompaction(): void {
    markCompacted(this.fs, this.dir);
    this.compacted = true;
    for (const s of this.segments) s.allowGaps();
  }

  /** Whether {@link close} (or delete) ran. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether the log was opened as compacted (offset gaps allowed). */
  get isCompacted(): boolean {
    return this.compacted;
  }

  /**
   * Kafka's cleaner checkpoint: offsets below it have been cleaned at least once (in memory: a
   * restart treats the whole log as dirty, which costs one extra cleaning). Never below the log
   * start offset nor above the LEO.
   */
  get firstDirtyOffset(): number {
    return Math.min(Math.max(this.firstDirty, this.#logStartOffset), this.#logEndOffset);
  }

  /** The segments, oldest first, as the cleaner plans from them (see {@link SegmentInfo}). */
  segmentInfos(): SegmentInfo[] {
    this.assertOpen();
    return this.segments.map((s, i) => ({
      baseOffset: s.baseOffset,
      endOffset: this.segments[i + 1]?.baseOffset ?? this.#logEndOffset,
      sizeBytes: s.sizeBytes,
      largestTimestampMs: s.largestTimestampMs,
      firstBatchTimestampMs: s.firstBatchTimestampMs,
      active: i === this.segments.length - 1,
    }));
  }

  /**
   * The whole `.log` of the non-active segment at `baseOffset` (fresh buffer, not from the pool so
   * it can go to another thread). Asserts the segment exists and is not the active one.
   */
  readSegmentBytes(baseOffset: number): Buffer {
    this.assertOpen();
    const i = this.segments.findIndex((s) => s.baseOffset === baseOffset);
    assert.ok(i >= 0 && i < this.segments.length - 1, `no inactive segment at ${baseOffset}`);
    const segment = this.segments[i]!;
    const bytes = Buffer.allocUnsafeSlow(segment.sizeBytes);
    segment.readInto(bytes, 0, 0, segment.sizeBytes);
    return bytes;
  }

  /**
   * Replaces the adjacent non-active segments `group` (base offsets, oldest first, as planned with
   * {@link segmentInfos}; each of `sizesBytes` as read) by ONE segment named by the first base and
   * holding `cleaned` (whole batches with offsets in the group's range, as the filter wrote them),
   * with the crash-safe steps of segment-swap.ts, then rebuilds its indexes. A short synchronous
   * step: reads before it see the old segments, reads after it the new one. Returns false (and
   * changes nothing) when the group is no longer there as planned (retention, DeleteRecords or a
   * truncation ran meanwhile, or a segment became active). Asserts the log is compacted and the
   * cleaned batches lie in the group's offset range. Throws a {@link KafkaStorageError} when the disk
   * refuses a step: before the swap file is in place the log is unchanged; after it the old segments
   * keep serving reads, the log refuses writes ({@link storageFailure}) and the swap is completed by
   * the next {@link reestablishDurablePrefix} (or retention, DeleteRecords, truncation, cleaning;
   * a restart completes it from the swap file).
   */
  replaceWithCleaned(group: readonly number[], sizesBytes: readonly number[], cleaned: Buffer): boolean {
    this.assertOpen();
    assert.ok(this.compacted, 'only a compacted log is cleaned');
    assert.ok(group.length > 0 && group.length === sizesBytes.length, 'cleaned group');
    this.finishPendingSwap();
    const first = this.segments.findIndex((s) => s.baseOffset === group[0]);
    if (first < 0 || first + group.length >= this.segments.length) return false;
    for (let k = 0; k < group.length; k++) {
      const s = this.segments[first + k]!;
      if (s.baseOffset !== group[k] || s.sizeBytes !== sizesBytes[k]) return false;
    }
    const base = group[0]!;
    const end = this.segments[first + group.length]!.baseOffset;
    let pos = 0;
    while (pos < cleaned.length) {
      const size = this.assertWholeBatch(cleaned, pos, cleaned.length - pos);
      const b = baseOffsetNumber(cleaned, pos);
      assert.ok(
        b >= base && b + lastOffsetDeltaOf(cleaned, pos) < end,
        `cleaned batch at ${b} outside [${base}, ${end})`,
      );
      pos += size;
    }
    try {
      writeSwapFile(this.fs, this.dir, base, cleaned);
    } catch (error) {
      // Before the commit point a restart deletes the leftovers: the old segments stay as they are.
      throw asStorageError(error, `writing the cleaned segment ${base} of ${this.dir}`);
    }
    // The commit point has passed: a restart completes the swap (segment-swap.ts). The old segment
    // objects stay in the log (their descriptors still read the unlinked files) until the new one is
    // loaded and synced; when the disk refuses a step, the swap is left pending and the log refuses
    // writes until a later attempt (the storage probe, retention, the next cleaning) completes it.
    if (this.recoveryPosition !== null && group.includes(this.recoveryPosition.baseOffset))
      this.recoveryPosition = null;
    this.pendingSwap = { base, group: this.segments.slice(first, first + group.length) };
    this.finishPendingSwap();
    return true;
  }

  /** log-failure.ts's {@link finishPendingSwap}: completes a cleaner swap the disk refused, if any. */
  private finishPendingSwap(): void {
    finishPendingSwap(this.durable);
  }

  /** Records that offsets below `offset` (a segment boundary) are now clean. */
  markCleanedUpTo(offset: number): void {
    assert.ok(Number.isSafeInteger(offset) && offset <= this.#logEndOffset, `cleaned up to ${offset}`);
    this.firstDirty = Math.max(this.firstDirty, offset);
  }

  /**
   * Closes all files (no flush: call {@link flush} first for a clean shutdown). Idempotent. Asserts
   * no {@link flushAsync} is in flight (await {@link whenFlushed}).
   */
  close(): void {
    if (this.closed) return;
    assert.equal(this.flushing, null, `log ${this.dir}: close during an in-flight flush`);
    this.closed = true;
    for (const s of this.segments) s.close();
  }

  /** Closes the log and removes its directory (asserts no {@link flushAsync} is in flight, as close). */
  delete(): void {
    this.close();
    this.fs.rmrf(this.dir);
  }

  // ---- internals -------------------------------------------------------------------------------

  private get active(): LogSegment {
    return this.segments[this.segments.length - 1]!;
  }

  private segmentArgs(baseOffset: number): LogSegmentArgs {
    return {
      fs: this.fs,
      dir: this.dir,
      baseOffset,
      indexIntervalBytes: this.config.indexIntervalBytes,
      logger: this.logger,
      clock: this.clock,
      allowOffsetGaps: this.compacted,
    };
  }

  /** The first record at offset >= logStartOffset with timestamp >= `timestampMs` (see {@link offsetForTimestamp}). */
  private searchTimestamp(timestampMs: number, recordLevel: boolean): TimestampAndOffset | null {
    for (let i = this.segmentIndexFor(this.#logStartOffset); i < this.segments.length; i++) {
      const segment = this.segments[i]!;
      if (segment.maxTimestampSoFar.timestampMs < timestampMs) continue;
      const found = segment.findOffsetByTimestamp(timestampMs, this.#logStartOffset, this.decompress, recordLevel);
      if (found !== null) return found;
    }
    return null;
  }

  /** {@link RetentionTarget.deleteOldestSegments} (Kafka's deleteSegments), for retention.ts. */
  private deleteOldestSegments(count: number, reason: string): void {
    assert.ok(count > 0 && count <= this.segments.length, `delete ${count} of ${this.segments.length} segments`);
    const othersUnsynced = this.dirDirty;
    if (count === this.segments.length) {
      try {
        this.roll('retention deletes every segment');
      } catch (error) {
        throw asStorageError(error, `roll before retention in ${this.dir}`); // nothing deleted yet
      }
    }
    // Unlinked and the directory synced before the segments leave the log: when the disk refuses,
    // they stay (their descriptors still read the unlinked files) and the next pass tries again.
    const deletable = this.segments.slice(0, count);
    try {
      for (const s of deletable) s.unlinkFiles();
      this.fs.syncDir(this.dir);
    } catch (error) {
      this.dirDirty = true;
      const failure = asStorageError(error, `deleting ${count} segments of ${this.dir}`);
      // A failed directory fsync may also have consumed the error for entries made since the last
      // one (a roll past the recovery point): then the probe cuts back as after a failed flush.
      if (othersUnsynced) this.failure.failWith(failure);
      throw failure;
    }
    this.segments.splice(0, count);
    for (const s of deletable) s.delete(); // closes; the files are gone already
    this.dirDirty = false;
    const firstKept = this.segments[0]!;
    const before = this.#logStartOffset;
    this.#logStartOffset = Math.max(this.#logStartOffset, firstKept.baseOffset);
    this.#recoveryPoint = Math.max(this.#recoveryPoint, firstKept.baseOffset);
    if (this.recoveryPosition !== null && this.recoveryPosition.baseOffset < firstKept.baseOffset)
      this.recoveryPosition = { baseOffset: firstKept.baseOffset, position: 0 };
    // A snapshot is the state at its segment's base: it goes with that segment (Kafka's deleteSnapshotsBefore).
    this.deleteProducerSnapshots((o) => o < firstKept.baseOffset, reason);
    this.logger.info(
      {
        dir: this.dir,
        reason,
        deletedSegments: count,
        baseOffsets: deletable.map((s) => s.baseOffset),
        logStartOffset: this.#logStartOffset,
        previousLogStartOffset: before,
      },
      'deleted old segments',
    );
    this.checkInvariants();
  }

  /** Index of the last segment whose base offset <= `offset` (0 if none). */
  private segmentIndexFor(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.segments[mid]!.baseOffset <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  private appendBatch(batch: Buffer, baseOffset: number, lastOffset: number): void {
    const before = this.#logEndOffset;
    if (this.compacted)
      assert.ok(baseOffset >= this.#logEndOffset, `append at ${baseOffset}, log end offset ${this.#logEndOffset}`);
    else assert.equal(baseOffset, this.#logEndOffset, `append at ${baseOffset}, log end offset ${this.#logEndOffset}`);
    const active = this.active;
    let rolled = false;
    try {
      if (active.sizeBytes > 0) {
        const reason = this.rollReason(active, batch, lastOffset);
        if (reason !== null) {
          this.roll(reason);
          rolled = true;
        }
      }
      // An empty segment's first batch creates its index files: their names need a directory sync.
      if (this.active.sizeBytes === 0) this.dirDirty = true;
      this.active.append(batch, baseOffset, lastOffset); // undoes itself on a write error
    } catch (error) {
      const failure = asStorageError(error, `append at offset ${baseOffset} to ${this.dir}`);
      if (rolled) this.undoRoll();
      if (this.active.isTailDamaged) this.failure.failWith(failure);
      throw failure;
    }
    this.#logEndOffset = lastOffset + 1;
    assert.ok(this.#logEndOffset > before, 'log end offset must grow');
  }

  /** Kafka's LogSegment.shouldRoll for a non-empty active segment and the next `batch`: why to roll, or null. */
  private rollReason(active: LogSegment, batch: Buffer, lastOffset: number): string | null {
    if (active.sizeBytes + batch.length > this.config.segmentBytes) return 'segment.bytes';
    const segmentMs = this.config.segmentMs ?? DEFAULT_SEGMENT_MS;
    if (active.timeWaitedForRollMs(this.clock.nowMs(), maxTimestampOf(batch)) > segmentMs) return 'segment.ms';
    const indexBytes = this.config.segmentIndexBytes ?? DEFAULT_SEGMENT_INDEX_BYTES;
    if (active.indexEntries >= Math.floor(indexBytes / OFFSET_INDEX_ENTRY_BYTES)) return 'offset index full';
    if (active.timeIndexEntries >= Math.floor(indexBytes / TIME_INDEX_ENTRY_BYTES)) return 'time index full';
    if (lastOffset - active.baseOffset > INT32_MAX) return 'relative offset overflow';
    return null;
  }

  /**
   * Starts a new active segment at the LEO (Kafka's roll): the old one gets its final time index
   * entry (onBecomeInactiveSegment); the flusher syncs it later.
   */
  private roll(reason: string): void {
    // Kafka's roll -> producerStateManager.takeSnapshot: the state of every batch below the new base,
    // written first: it is true at the LEO whatever happens next, and a disk that refuses it refuses
    // the roll (and so the append) with nothing else changed.
    if (this.producerState !== null)
      this.unsyncedSnapshots.push(
        writeProducerSnapshotUnsynced(this.fs, this.dir, this.#logEndOffset, this.producerState.snapshotEntries()),
      );
    // The new segment first: when its files cannot be created (a full disk), create removes what it
    // made and the active segment stays active and unchanged.
    const segment = LogSegment.create(this.segmentArgs(this.#logEndOffset));
    try {
      this.active.onBecomeInactive();
    } catch (error) {
      this.removeSegment(segment);
      throw error;
    }
    this.segments.push(segment);
    this.dirDirty = true;
    this.logger.debug({ dir: this.dir, baseOffset: this.#logEndOffset, reason }, 'rolled new segment');
  }

  /**
   * The append into a just-rolled (empty) segment failed: remove that segment so the previous one is
   * active again, as if the roll had not happened (but for its final time index entry, which Kafka
   * also writes on close and later appends to it only follow).
   */
  private undoRoll(): void {
    const segment = this.segments.pop()!;
    assert.equal(segment.sizeBytes, 0, `undoing a roll of a non-empty segment ${segment.logPath}`);
    this.removeSegment(segment);
    this.dirDirty = true;
  }

  /**
   * Unlinks the active segment's files, then drops it from the log (a truncation): when the unlink
   * fails the segment stays, so the log never goes on at lower offsets with its files on disk.
   */
  private popActiveSegment(): void {
    const segment = this.active;
    segment.unlinkFiles();
    this.segments.pop();
    segment.delete(); // closes; the files are gone already
  }

  /**
   * Deletes a segment that never held a batch (a roll undone). A failure is only logged: its file,
   * named by the log end offset, is harmless: empty, or holding only the partial batch an undone
   * append could not cut, past the recovery point (recovery loads it as the last segment and cuts a
   * torn tail; a roll empties it).
   */
  private removeSegment(segment: LogSegment): void {
    try {
      segment.delete();
    } catch (error) {
      this.logger.warn(
        { segment: segment.logPath, error: String(error), partialBatch: segment.isTailDamaged },
        segment.isTailDamaged
          ? 'could not remove a rolled segment holding a partial batch'
          : 'could not remove an empty segment',
      );
    }
  }

  /** Asserts `buf[position..position+available)` starts with a whole v2 batch; returns its size. */
  private assertWholeBatch(buf: Buffer, position: number, available: number): number {
    assert.ok(available >= L.RECORD_BATCH_OVERHEAD, `batch of ${available} bytes is shorter than a v2 header`);
    const size = batchSizeAt(buf, position);
    assert.ok(
      size >= L.RECORD_BATCH_OVERHEAD && size <= available,
      `batchLength says ${size} bytes, ${available} given`,
    );
    assert.equal(buf.readInt8(position + L.MAGIC), L.CURRENT_MAGIC, 'only magic 2 batches are stored');
    return size;
  }

  private assertOpen(): void {
    assert.ok(!this.closed, `log ${this.dir} is closed`);
  }

  private checkInvariants(): void {
    assert.ok(
      this.#recoveryPoint <= this.#logEndOffset,
      `recoveryPoint ${this.#recoveryPoint} > logEndOffset ${this.#logEndOffset}`,
    );
    assert.ok(
      this.#logStartOffset <= this.#logEndOffset,
      `logStartOffset ${this.#logStartOffset} > logEndOffset ${this.#logEndOffset}`,
    );
    assert.ok(
      this.#logStartOffset >= this.segments[0]!.baseOffset,
      `logStartOffset ${this.#logStartOffset} below the first segment`,
    );
    assert.equal(this.active.nextOffset, this.#logEndOffset, 'active segment disagrees with the log end offset');
  }
}

/** Asserts (programmer error) that `config` is within Kafka's ranges (see {@link LogConfig}). */
function validateConfig(config: LogConfig): void {
  assert.ok(
    Number.isInteger(config.segmentBytes) && config.segmentBytes >= 1 && config.segmentBytes <= INT32_MAX,
    `segmentBytes ${config.segmentBytes}`,
  );
  assert.ok(
    Number.isInteger(config.indexIntervalBytes) && config.indexIntervalBytes >= 0,
    `indexIntervalBytes ${config.indexIntervalBytes}`,
  );
  assert.ok(
    config.segmentMs === undefined || (Number.isSafeInteger(config.segmentMs) && config.segmentMs >= 1),
    `segmentMs ${config.segmentMs}`,
  );
  assert.ok(
    config.segmentIndexBytes === undefined ||
      (Number.isInteger(config.segmentIndexBytes) &&
        config.segmentIndexBytes >= 4 &&
        config.segmentIndexBytes <= INT32_MAX),
    `segmentIndexBytes ${config.segmentIndexBytes}`,
  );
}
