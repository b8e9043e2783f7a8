/**
 * One partition replica's log (Kafka's UnifiedLog/LocalLog, minus retention and compaction): the
 * directory `<log.dir>/<topic>-<partition>/` holding segments `<20-digit base offset>.log/.index`.
 *
 * ```
 *  logStartOffset        recoveryPoint                      logEndOffset (LEO)
 *  |  00..00.log (full)  |  00..0500.log (full) |  00..0900.log (active)  |
 *  |<----- fsynced ----->|<-------- maybe only in the page cache ------->|
 * ```
 *
 * Offsets are dense: each appended batch starts at the LEO. The recovery point is the offset below
 * which everything is fsynced; `flush()` advances it to the LEO. On open, segments that may hold
 * data at or beyond the recovery point are re-validated (CRC-32C, dense offsets), a torn or corrupt
 * tail is truncated and every later segment deleted (Kafka's LogLoader.recoverLog), and damaged
 * indexes are rebuilt. The recovery point passed in is a hint, bounded by what the log holds.
 */
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import type { Clock, Logger } from '../runtime/actor';
import * as L from '../protocol/record-batch/layout';
import {
  baseOffsetNumber,
  batchSizeAt,
  lastOffsetDeltaOf,
  setBaseOffset,
  setPartitionLeaderEpoch,
} from '../protocol/record-batch/view';
import type { FileSystem } from './file-system';
import { INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX, LogSegment, parseSegmentFileName, segmentFileName, type LogSegmentArgs } from './log-segment';

const INT32_MAX = 0x7fffffff;

/** Log settings, with Kafka's meaning (topic configs segment.bytes, index.interval.bytes). */
export interface LogConfig {
  /** Roll to a new segment when the active one would exceed this many bytes (1 .. 2^31-1). */
  segmentBytes: number;
  /** Bytes of log between offset index entries (>= 0). */
  indexIntervalBytes: number;
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

/** A partition log (see module doc). Owned by one replica actor; synchronous; not thread-safe. */
export class Log {
  readonly dir: string;
  private readonly fs: FileSystem;
  private readonly config: LogConfig;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly segments: LogSegment[];
  private leo: number;
  private rp: number;
  private lso: number;
  /** Segment files were created or deleted since the last directory sync. */
  private dirDirty: boolean;
  private closed = false;

  private constructor(args: LogOpenArgs, segments: LogSegment[], state: { rp: number; lso: number; dirDirty: boolean }) {
    this.dir = args.dir;
    this.fs = args.fs;
    this.config = args.config;
    this.logger = args.logger;
    this.clock = args.clock;
    this.segments = segments;
    this.leo = segments[segments.length - 1]!.nextOffset;
    this.rp = state.rp;
    this.lso = state.lso;
    this.dirDirty = state.dirDirty;
    this.checkInvariants();
  }

  /**
   * Opens (creating if needed) the log in `args.dir` and recovers it:
   * 1. orphan `.index` files are deleted; no segment at all gives one empty segment at logStartOffset;
   * 2. segments wholly below the recovery point are trusted: their next offset is read from the last
   *    index entry on (a damaged index there has its tail rebuilt with CRC checks);
   * 3. the segment containing the recovery point is re-validated from the index entry at or below
   *    it, and every later segment from its start (CRC-32C, dense offsets);
   * 4. the first torn/corrupt batch truncates its segment and deletes all later ones; a segment whose
   *    base offset does not continue the previous one is deleted with all later ones; truncations and
   *    deletions are fsynced at once, so a crash during or after recovery cannot resurrect them.
   * The resulting recoveryPoint is min(hint, LEO) (lower if the trusted part proved inconsistent).
   * Idempotent: opening an already recovered log changes nothing. Throws on I/O errors and on a
   * config out of range.
   */
  static open(args: LogOpenArgs): Log {
    const { fs, dir, config, logger } = args;
    assert.ok(Number.isInteger(config.segmentBytes) && config.segmentBytes >= 1 && config.segmentBytes <= INT32_MAX, `segmentBytes ${config.segmentBytes}`);
    assert.ok(Number.isInteger(config.indexIntervalBytes) && config.indexIntervalBytes >= 0, `indexIntervalBytes ${config.indexIntervalBytes}`);
    assert.ok(Number.isSafeInteger(args.recoveryPoint) && args.recoveryPoint >= 0, `recoveryPoint ${args.recoveryPoint}`);
    const lsoHint = args.logStartOffset;
    assert.ok(lsoHint === undefined || (Number.isSafeInteger(lsoHint) && lsoHint >= 0), `logStartOffset ${lsoHint}`);
    const segmentArgs = (baseOffset: number): LogSegmentArgs => ({
      fs,
      dir,
      baseOffset,
      indexIntervalBytes: config.indexIntervalBytes,
      logger,
    });

    fs.mkdirp(dir);
    const loaded = listSegmentBases(fs, dir, logger).map((base) => LogSegment.load(segmentArgs(base)));
    const { kept, truncated, deleted: deletedInRecovery, rpBound } = recoverSegments(loaded, args.recoveryPoint, dir, logger);
    let deleted = deletedInRecovery;

    let lso = Math.max(lsoHint ?? 0, kept[0]?.baseOffset ?? 0);
    let recoveryBound = rpBound;
    let truncatedKept = truncated;
    const leo = kept.length > 0 ? kept[kept.length - 1]!.nextOffset : lso;
    if (kept.length === 0 || lso > leo) {
      // Kafka's LogLoader: a log ending before its start offset (or none at all) restarts there.
      if (kept.length > 0) {
        logger.warn({ dir, logStartOffset: lso, logEndOffset: leo }, 'log end offset below log start offset: deleting all segments');
        for (const s of kept) s.delete();
        deleted += kept.length;
        kept.length = 0;
        truncatedKept = null;
      }
      lso = lsoHint ?? 0;
      kept.push(LogSegment.create(segmentArgs(lso)));
      recoveryBound = lso;
    }

    // Make recovery's own changes durable, so a crash cannot resurrect what it cut.
    if (truncatedKept !== null) truncatedKept.sync();
    if (truncatedKept !== null || deleted > 0) fs.syncDir(dir);
    const logEndOffset = kept[kept.length - 1]!.nextOffset;
    const rp = Math.max(Math.min(recoveryBound, logEndOffset), kept[0]!.baseOffset);
    // The directory entries of segments beyond the recovery point may never have been synced (a
    // process crash between a roll and the next flush): the first flush syncs the directory.
    const log = new Log(args, kept, { rp, lso: Math.min(lso, logEndOffset), dirDirty: true });
    logger.info(
      { dir, logStartOffset: log.lso, logEndOffset, recoveryPoint: rp, segments: kept.length, truncated: truncatedKept !== null, deletedSegments: deleted },
      'log loaded',
    );
    return log;
  }

  /** First offset a reader may fetch. */
  get logStartOffset(): number {
    return this.lso;
  }

  /** Log end offset: the offset the next appended batch gets. */
  get logEndOffset(): number {
    return this.leo;
  }

  /** Every offset below this is fsynced (survives power loss). */
  get recoveryPoint(): number {
    return this.rp;
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

  /** Whether a {@link flush} has anything to fsync. */
  get hasUnflushed(): boolean {
    return this.rp < this.leo || this.dirDirty || this.segments.some((s) => s.hasUnsyncedBytes);
  }

  /** Base offsets of the segments, oldest first (tests, admin). */
  segmentBaseOffsets(): number[] {
    return this.segments.map((s) => s.baseOffset);
  }

  /**
   * Appends ONE record batch v2 that the caller has validated (size, magic, CRC-32C, counts): writes
   * baseOffset = LEO and partitionLeaderEpoch = `leaderEpoch` into `batch` in place (both outside
   * the CRC), rolls a new segment first when the active one would exceed segmentBytes (a batch larger
   * than segmentBytes goes alone into an empty segment), and appends. Not fsynced: see {@link flush}.
   * Returns the offsets assigned. Asserts (programmer error) on a buffer that is not one whole batch.
   */
  append(batch: Buffer, leaderEpoch: number): LogAppendInfo {
    this.assertOpen();
    assert.equal(this.assertWholeBatch(batch, 0, batch.length), batch.length, 'append takes exactly one batch');
    assert.ok(Number.isInteger(leaderEpoch) && leaderEpoch >= 0 && leaderEpoch <= INT32_MAX, `leaderEpoch ${leaderEpoch}`);
    const delta = lastOffsetDeltaOf(batch);
    assert.ok(delta >= 0, `lastOffsetDelta ${delta}`);
    const baseOffset = this.leo;
    setBaseOffset(batch, baseOffset);
    setPartitionLeaderEpoch(batch, leaderEpoch);
    this.appendBatch(batch, baseOffset, baseOffset + delta);
    return { baseOffset, lastOffset: baseOffset + delta };
  }

  /**
   * Appends batches that already carry their offsets and leader epochs (replication: bytes fetched
   * from the leader, appended unchanged). `records` holds one or more whole batches; the first must
   * start at the LEO and each next one where the previous ended (asserted). The caller checks CRCs.
   * Returns the first base offset and the last offset appended.
   */
  appendAsFollower(records: Buffer): LogAppendInfo {
    this.assertOpen();
    assert.ok(records.length > 0, 'empty follower append');
    const firstOffset = this.leo;
    let pos = 0;
    while (pos < records.length) {
      const size = this.assertWholeBatch(records, pos, records.length - pos);
      const baseOffset = baseOffsetNumber(records, pos);
      assert.equal(baseOffset, this.leo, `follower batch at offset ${baseOffset}, log end offset ${this.leo}`);
      const delta = lastOffsetDeltaOf(records, pos);
      assert.ok(delta >= 0, `lastOffsetDelta ${delta}`);
      this.appendBatch(records.subarray(pos, pos + size), baseOffset, baseOffset + delta);
      pos += size;
    }
    return { baseOffset: firstOffset, lastOffset: this.leo - 1 };
  }

  /**
   * fsyncs every segment with unsynced bytes, then the directory if segments were created or
   * deleted; advances the recovery point to the LEO and returns it (group commit: one call covers all
   * appends so far).
   */
  flush(): number {
    this.assertOpen();
    for (const s of this.segments) if (s.hasUnsyncedBytes) s.sync();
    if (this.dirDirty) {
      this.fs.syncDir(this.dir);
      this.dirDirty = false;
    }
    this.rp = this.leo;
    this.checkInvariants();
    return this.rp;
  }

  /**
   * Reads whole batches starting with the one containing `fetchOffset`, in order, possibly across
   * segments. A batch is included only if its lastOffset < `maxOffsetExclusive` (the high watermark
   * cap) and the total stays within `maxBytes`; if `minOneBatch` (KIP-74) and the first eligible
   * batch alone exceeds `maxBytes`, it is returned whole. `fetchOffset` < logStartOffset or > LEO is
   * out-of-range; == LEO gives an empty result. Locates batches by index lookup and chunked header
   * scans, then copies with one read per segment into a fresh buffer of exactly the bytes returned.
   */
  read(fetchOffset: number, maxBytes: number, maxOffsetExclusive: number, minOneBatch: boolean): LogReadResult {
    this.assertOpen();
    if (!Number.isSafeInteger(fetchOffset) || fetchOffset < this.lso || fetchOffset > this.leo) return { kind: 'out-of-range' };
    const spans: Array<{ segment: LogSegment; position: number; sizeBytes: number }> = [];
    let total = 0;
    let firstOffset: number | null = null;
    let done = fetchOffset === this.leo;
    for (let i = this.segmentIndexFor(fetchOffset); i < this.segments.length && !done; i++) {
      const segment = this.segments[i]!;
      let spanStart = -1;
      let spanBytes = 0;
      const from = segment.baseOffset < fetchOffset ? segment.lookupPosition(fetchOffset) : 0;
      const problem = segment.forEachBatch(from, (h) => {
        if (h.lastOffset < fetchOffset) return true;
        // Dense offsets: the first batch reached must contain fetchOffset, or the index misled us.
        assert.ok(firstOffset !== null || h.baseOffset <= fetchOffset, `${segment.logPath}: no batch holds offset ${fetchOffset}`);
        if (h.lastOffset >= maxOffsetExclusive) {
          done = true;
          return false;
        }
        if (total + h.sizeBytes > maxBytes && !(total === 0 && minOneBatch)) {
          done = true;
          return false;
        }
        if (spanStart < 0) spanStart = h.position;
        if (firstOffset === null) firstOffset = h.baseOffset;
        spanBytes += h.sizeBytes;
        total += h.sizeBytes;
        done = total >= maxBytes;
        return !done;
      });
      assert.equal(problem, null, `${segment.logPath}: ${problem}`);
      if (spanBytes > 0) spans.push({ segment, position: spanStart, sizeBytes: spanBytes });
    }
    // Not from the shared pool: the buffer may be transferred to another thread whole.
    const records = Buffer.allocUnsafeSlow(total);
    let at = 0;
    for (const span of spans) {
      span.segment.readInto(records, at, span.position, span.sizeBytes);
      at += span.sizeBytes;
    }
    return { kind: 'ok', records, firstOffset };
  }

  /**
   * Earliest offset at or after logStartOffset whose batch has maxTimestamp >= `timestampMs`: the
   * batch's base offset (batch granularity, no records decoded, no time index yet: a linear scan of
   * headers), or null when no batch qualifies (Kafka's ListOffsets by timestamp answers LEO then).
   */
  offsetForTimestamp(timestampMs: number): number | null {
    this.assertOpen();
    if (this.lso >= this.leo) return null;
    for (let i = this.segmentIndexFor(this.lso); i < this.segments.length; i++) {
      const segment = this.segments[i]!;
      let found: number | null = null;
      const from = segment.baseOffset <= this.lso ? (segment.findBatch(this.lso)?.position ?? segment.sizeBytes) : 0;
      const problem = segment.forEachBatch(from, (h) => {
        if (h.maxTimestampMs < timestampMs) return true;
        found = Math.max(h.baseOffset, this.lso);
        return false;
      });
      assert.equal(problem, null, `${segment.logPath}: ${problem}`);
      if (found !== null) return found;
    }
    return null;
  }

  /**
   * Drops everything at and after `offset` (follower truncation, tests): segments with a base offset
   * above it are deleted and the segment containing it is truncated at the start of the batch
   * holding `offset` (so the LEO may end below `offset`); below the first segment's base, the log is
   * emptied and restarts at `offset`. No-op when `offset` >= LEO. Made durable at once (truncated
   * segment fsynced, directory synced) so a crash cannot bring the dropped batches back. The
   * recovery point and logStartOffset are lowered to the new LEO if above it.
   */
  truncateTo(offset: number): void {
    this.assertOpen();
    assert.ok(Number.isSafeInteger(offset) && offset >= 0, `truncate offset ${offset}`);
    if (offset >= this.leo) return;
    const before = this.leo;
    if (offset < this.segments[0]!.baseOffset) {
      for (const s of this.segments.splice(0)) s.delete();
      this.segments.push(LogSegment.create(this.segmentArgs(offset)));
      this.active.sync();
      this.fs.syncDir(this.dir);
      this.dirDirty = false;
      this.leo = offset;
      this.lso = offset;
      this.rp = offset;
    } else {
      let deleted = false;
      while (this.segments.length > 1 && this.active.baseOffset > offset) {
        this.segments.pop()!.delete();
        deleted = true;
      }
      this.active.truncateTo(offset);
      this.active.sync();
      if (deleted || this.dirDirty) {
        this.fs.syncDir(this.dir);
        this.dirDirty = false;
      }
      this.leo = this.active.nextOffset;
      this.rp = Math.min(this.rp, this.leo);
      this.lso = Math.min(this.lso, this.leo);
    }
    assert.ok(this.leo <= offset && this.leo < before, `truncateTo(${offset}) left LEO ${this.leo}`);
    this.logger.info({ dir: this.dir, offset, logEndOffset: this.leo, previousLogEndOffset: before }, 'log truncated');
    this.checkInvariants();
  }

  /** Closes all files (no flush: call {@link flush} first for a clean shutdown). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.segments) s.close();
  }

  /** Closes the log and removes its directory. */
  delete(): void {
    this.close();
    this.fs.rmrf(this.dir);
  }

  // ---- internals -------------------------------------------------------------------------------

  private get active(): LogSegment {
    return this.segments[this.segments.length - 1]!;
  }

  private segmentArgs(baseOffset: number): LogSegmentArgs {
    return { fs: this.fs, dir: this.dir, baseOffset, indexIntervalBytes: this.config.indexIntervalBytes, logger: this.logger };
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
    const before = this.leo;
    assert.equal(baseOffset, this.leo, `append at ${baseOffset}, log end offset ${this.leo}`);
    const active = this.active;
    if (active.sizeBytes > 0 && (active.sizeBytes + batch.length > this.config.segmentBytes || lastOffset - active.baseOffset > INT32_MAX)) {
      this.roll();
    }
    this.active.append(batch, baseOffset, lastOffset);
    this.leo = lastOffset + 1;
    assert.ok(this.leo > before, 'log end offset must grow');
  }

  /** Starts a new active segment at the LEO (Kafka's roll; the flusher syncs the old one later). */
  private roll(): void {
    const segment = LogSegment.create(this.segmentArgs(this.leo));
    this.segments.push(segment);
    this.dirDirty = true;
    this.logger.debug({ dir: this.dir, baseOffset: this.leo }, 'rolled new segment');
  }

  /** Asserts `buf[position..position+available)` starts with a whole v2 batch; returns its size. */
  private assertWholeBatch(buf: Buffer, position: number, available: number): number {
    assert.ok(available >= L.RECORD_BATCH_OVERHEAD, `batch of ${available} bytes is shorter than a v2 header`);
    const size = batchSizeAt(buf, position);
    assert.ok(size >= L.RECORD_BATCH_OVERHEAD && size <= available, `batchLength says ${size} bytes, ${available} given`);
    assert.equal(buf.readInt8(position + L.MAGIC), L.CURRENT_MAGIC, 'only magic 2 batches are stored');
    return size;
  }

  private assertOpen(): void {
    assert.ok(!this.closed, `log ${this.dir} is closed`);
  }

  private checkInvariants(): void {
    assert.ok(this.rp <= this.leo, `recoveryPoint ${this.rp} > logEndOffset ${this.leo}`);
    assert.ok(this.lso <= this.leo, `logStartOffset ${this.lso} > logEndOffset ${this.leo}`);
    assert.equal(this.active.nextOffset, this.leo, 'active segment disagrees with the log end offset');
    void this.clock; // kept for segment.ms rolls (a later issue)
  }
}

/** Base offsets of the `.log` files in `dir`, ascending; deletes `.index` files that lack a `.log`. */
function listSegmentBases(fs: FileSystem, dir: string, logger: Logger): number[] {
  const logBases: number[] = [];
  const indexBases: number[] = [];
  for (const name of fs.readdir(dir)) {
    const parsed = parseSegmentFileName(name);
    if (parsed === null) continue;
    (parsed.suffix === LOG_FILE_SUFFIX ? logBases : indexBases).push(parsed.baseOffset);
  }
  const logBaseSet = new Set(logBases);
  for (const base of indexBases) {
    if (logBaseSet.has(base)) continue;
    const path = posix.join(dir, segmentFileName(base, INDEX_FILE_SUFFIX));
    logger.info({ path }, 'deleting index file without a log file');
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
  rpBound: number;
}

/**
 * Steps 2-4 of {@link Log.open} over the loaded segments (ascending base offsets), with
 * `hint` = the checkpointed recovery point.
 */
function recoverSegments(loaded: LogSegment[], hint: number, dir: string, logger: Logger): SegmentsRecovery {
  const kept: LogSegment[] = [];
  let trusted = true;
  let rpBound = hint;
  let deleted = 0;
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
    if (prev !== undefined && seg.baseOffset !== prev.nextOffset) {
      deleteFrom(i, 'segment does not continue the log: deleting it and all later segments', { segment: seg.baseOffset, expected: prev.nextOffset });
      break;
    }
    kept.push(seg);
    const nextBase = i + 1 < loaded.length ? loaded[i + 1]!.baseOffset : Number.POSITIVE_INFINITY;
    let fromOffset: number;
    if (trusted && nextBase <= hint) {
      // Wholly below the recovery point: fsynced, so only structure is checked (Kafka's readNextOffset).
      if (seg.indexProblem === null) {
        const problem = seg.loadNextOffset();
        if (problem === null) continue;
        logger.warn({ segment: seg.logPath, reason: problem }, 'segment below the recovery point is damaged: recovering it');
        fromOffset = seg.baseOffset;
        trusted = false;
        rpBound = Math.min(rpBound, seg.baseOffset);
      } else {
        logger.warn({ segment: seg.indexPath, reason: seg.indexProblem }, 'rebuilding damaged offset index');
        fromOffset = Number.MAX_SAFE_INTEGER; // from its last valid entry on
      }
    } else {
      if (seg.indexProblem !== null) logger.info({ segment: seg.indexPath, reason: seg.indexProblem }, 'offset index rebuilt by recovery');
      fromOffset = trusted ? hint : seg.baseOffset;
      trusted = false;
    }
    const result = seg.recover(fromOffset);
    seg.markUnsynced(); // recovered bytes may have survived only in the page cache
    if (result.truncatedBytes > 0) {
      deleteFrom(i + 1, 'deleting segments after a truncated segment', { after: seg.baseOffset });
      return { kept, truncated: seg, deleted, rpBound };
    }
  }
  return { kept, truncated: null, deleted, rpBound };
}
