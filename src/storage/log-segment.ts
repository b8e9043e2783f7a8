/**
 * One segment of a partition log, Kafka's LogSegment: a `.log` file of record batches v2 exactly as
 * stored by Kafka, its sparse `.index` and its `.timeindex`, all named by the segment's base offset
 * padded to 20 digits (`00000000000000000000.log`). Positions are byte positions in the `.log`
 * (int32, so a segment stays below 2 GiB); offsets are logical record offsets (absolute);
 * timestamps are ms since the epoch.
 *
 * ```
 *  .log       | batch 100..104 | batch 105..105 | batch 106..130 | ...
 *             0                612              700  <- positions (bytes)
 *  .index       (130 - base, 700)   one entry per indexIntervalBytes: last offset of a batch -> its start
 *  .timeindex   (t, 130 - base)     next to an .index entry when the max timestamp so far grew:
 *                                   max timestamp so far -> last offset of the batch holding it
 * ```
 *
 * Batches are read by scanning headers in chunks (never a read per 12-byte header), starting from
 * the index entry at or below the wanted offset. `recover` re-checks every batch (length, magic,
 * CRC-32C, dense offsets), truncates a torn or corrupt tail and rebuilds both indexes.
 *
 * The segment tracks Kafka's per-segment times: the max timestamp so far and the offset of its
 * batch (retention by time, ListOffsets -3), the first batch's maxTimestamp (`rollingBasedTimestamp`,
 * segment.ms rolls), the creation time (rolls when batches carry no timestamp) and a last-modified
 * time. Kafka reads the last one from the file's mtime; the FileSystem contract has no stat, so it is
 * kept in memory from the injected clock: set at create, load, append and truncation.
 */
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import type { Clock } from '../io/clock';
import type { Logger } from '../io/logger';
import * as L from '../protocol/record-batch/layout';
import { batchSizeAt, checkBatch, lastOffsetDeltaOf, maxTimestampOf } from '../protocol/record-batch/view';
import { settleAll, syncHandleAsync, type FileHandle, type FileSystem } from '../io/file-system';
import { OffsetIndex } from './offset-index';
import { recordTimestamps, type Decompress } from './record-timestamps';
import { NO_TIMESTAMP, TimeIndex, type TimestampOffset } from './time-index';

/** Suffix of segment data files. */
export const LOG_FILE_SUFFIX = '.log';
/** Suffix of offset index files. */
export const INDEX_FILE_SUFFIX = '.index';
/** Suffix of time index files. */
export const TIME_INDEX_FILE_SUFFIX = '.timeindex';

const INT32_MAX = 0x7fffffff;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Header scans read this much at a time (many small batch headers per read). */
const HEADER_SCAN_CHUNK_BYTES = 16 * 1024;
/** Recovery reads (and CRC-checks) this much at a time, or one whole batch if larger. */
const RECOVERY_CHUNK_BYTES = 1024 * 1024;
/** Shared by header scans on this thread (scans are synchronous and never nested). */
const headerScratch = Buffer.allocUnsafe(HEADER_SCAN_CHUNK_BYTES);

/** `00000000000000000042` + suffix: Kafka's LogFileUtils.filenamePrefixFromOffset. */
export function segmentFileName(baseOffset: number, suffix: string): string {
  assert.ok(Number.isSafeInteger(baseOffset) && baseOffset >= 0, `segment base offset ${baseOffset}`);
  return String(baseOffset).padStart(20, '0') + suffix;
}

/** Parses `<20 digits>.log` / `.index` / `.timeindex`; null for any other name. */
export function parseSegmentFileName(name: string): { baseOffset: number; suffix: string } | null {
  const m = /^(\d{20})(\.log|\.index|\.timeindex)$/.exec(name);
  if (m === null) return null;
  const baseOffset = Number(m[1]);
  return Number.isSafeInteger(baseOffset) ? { baseOffset, suffix: m[2]! } : null;
}

/** What a segment needs to open its files. */
export interface LogSegmentArgs {
  fs: FileSystem;
  /** The partition directory. */
  dir: string;
  /** First offset this segment may hold; names its files. */
  baseOffset: number;
  /** Bytes of log between offset index entries (Kafka's index.interval.bytes). */
  indexIntervalBytes: number;
  logger: Logger;
  /** Creation and last-modified times (wall clock, `nowMs`). */
  clock: Clock;
  /**
   * The log may be compacted (cleanup.policy=compact): a batch may start past the previous batch's
   * next offset (gaps left by the cleaner), so recovery and lookups accept increasing, not dense,
   * offsets. Default false: a gap is corruption.
   */
  allowOffsetGaps?: boolean;
}

/** A batch header as seen by a scan (no records decoded). */
export interface BatchHeader {
  /** Byte position of the batch in the .log. */
  position: number;
  baseOffset: number;
  /** baseOffset + lastOffsetDelta. */
  lastOffset: number;
  /** Whole batch size in bytes (12 + batchLength). */
  sizeBytes: number;
  /** The batch's maxTimestamp field, ms since the epoch (the append time in a LogAppendTime batch). */
  maxTimestampMs: number;
  /** The attributes field (codec, timestamp type, transactional, control bits). */
  attributes: number;
  /** The partitionLeaderEpoch field (-1 when unknown). */
  partitionLeaderEpoch: number;
  /** The producerId field (-1: not an idempotent producer's batch). */
  producerId: number;
  producerEpoch: number;
  /** The baseSequence field (-1 when none). */
  baseSequence: number;
}

/** Kafka's FileRecords.TimestampAndOffset: a record found by a timestamp search. */
export interface TimestampAndOffset {
  /** Logical offset of the record. */
  offset: number;
  /** The record's timestamp, ms since the epoch. */
  timestamp: number;
  /** partitionLeaderEpoch of the batch holding it, -1 if unknown. */
  leaderEpoch: number;
}

/** Kafka's TimestampOffset.UNKNOWN: no timestamp seen yet. */
const UNKNOWN_MAX: TimestampOffset = { timestampMs: NO_TIMESTAMP, offset: -1 };

/** Outcome of {@link LogSegment.recover}. */
export interface SegmentRecovery {
  /** Byte position the scan started at (an index entry at or below the requested offset, or 0). */
  fromPosition: number;
  /** Bytes of log kept. */
  validBytes: number;
  /** Bytes cut from the end (0 when the segment was intact). */
  truncatedBytes: number;
  /** Why the tail was cut, or null. */
  reason: string | null;
}

function offsetAt(buf: Buffer, at: number): number | null {
  const v = buf.readBigInt64BE(at);
  return v >= 0n && v <= MAX_SAFE ? Number(v) : null;
}

/**
 * Recovery's chunked batch scanner over one `.log`: reads RECOVERY_CHUNK_BYTES at a time (or one
 * whole batch when larger), so that batches are length-, magic- and CRC-checked from memory rather
 * than with a read each. Positions only move forward.
 */
class RecoveryScanner {
  private buf: Buffer;
  /** Log position of `buf[0]`. */
  private bufStart: number;
  /** Bytes of `buf` holding log data. */
  private bufLen = 0;

  constructor(
    private readonly logPath: string,
    /** Size of the `.log` in bytes. */
    private readonly sizeBytes: number,
    start: number,
    /** Reads `length` bytes at log `position` into `target[0..]`; returns the bytes read. */
    private readonly read: (target: Buffer, length: number, position: number) => number,
  ) {
    this.buf = Buffer.allocUnsafe(Math.min(RECOVERY_CHUNK_BYTES, Math.max(sizeBytes - start, 0)));
    this.bufStart = start;
  }

  /**
   * `checkBatch` for the batch at log `position`: its size in bytes, or why it is torn or corrupt.
   * On success the whole batch is in {@link buffer} at {@link offsetOf}(position).
   */
  checkBatchAt(position: number): number | string {
    const remaining = this.sizeBytes - position;
    if (remaining < L.LOG_OVERHEAD) return checkBatch(this.buf, 0, remaining); // "short header", reads nothing
    if (position + L.LOG_OVERHEAD > this.bufStart + this.bufLen)
      this.fill(position, Math.min(remaining, RECOVERY_CHUNK_BYTES));
    const declared = L.LOG_OVERHEAD + this.buf.readInt32BE(position - this.bufStart + L.BATCH_LENGTH);
    if (
      declared >= L.RECORD_BATCH_OVERHEAD &&
      declared <= remaining &&
      position + declared > this.bufStart + this.bufLen
    )
      this.fill(position, Math.max(declared, Math.min(remaining, RECOVERY_CHUNK_BYTES)));
    return checkBatch(this.buf, position - this.bufStart, remaining);
  }

  /** The bytes read last (see {@link checkBatchAt}). */
  get buffer(): Buffer {
    return this.buf;
  }

  /** Where log `position` is in {@link buffer}. */
  offsetOf(position: number): number {
    return position - this.bufStart;
  }

  private fill(position: number, length: number): void {
    if (this.buf.length < length) this.buf = Buffer.allocUnsafe(length);
    const n = this.read(this.buf, length, position);
    assert.equal(n, length, `${this.logPath}: short read at ${position}`);
    this.bufStart = position;
    this.bufLen = length;
  }
}

/** One `.log` + `.index` + `.timeindex` triple (see module doc). Owned by its {@link Log}; not thread-safe. */
export class LogSegment {
  readonly baseOffset: number;
  readonly logPath: string;
  readonly indexPath: string;
  readonly timeIndexPath: string;
  private readonly fs: FileSystem;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly indexIntervalBytes: number;
  private allowOffsetGaps: boolean;
  private readonly logHandle: FileHandle;
  private readonly index: OffsetIndex;
  private readonly timeIndex: TimeIndex;
  private size: number;
  /** Next offset to append here; NaN until `loadNextOffset` or `recover` ran on a loaded segment. */
  private next = Number.NaN;
  private unsynced = false;
  /** Bumped by every change that makes the segment unsynced (an async sync clears `unsynced` only if unchanged). */
  private changes = 0;
  private closed = false;
  /** A failed append could not be undone (see {@link isTailDamaged}). */
  private tailDamaged = false;
  /** Kafka's maxTimestampAndOffsetSoFar: the largest batch maxTimestamp and that batch's last offset. */
  private maxSoFar: TimestampOffset;
  /** Kafka's rollingBasedTimestamp: the first batch's maxTimestamp; null = not loaded yet. */
  private rollingBasedMs: number | null = null;
  private createdAtMs: number;
  private lastModifiedAtMs: number;
  /** Why the loaded offset index was not fully valid (null if it was). */
  readonly indexProblem: string | null;
  /** Why the loaded time index was not fully valid ('missing', torn, out of order), null if it was. */
  readonly timeIndexProblem: string | null;

  private constructor(args: LogSegmentArgs, logHandle: FileHandle, sizeBytes: number) {
    this.baseOffset = args.baseOffset;
    this.fs = args.fs;
    this.logger = args.logger;
    this.clock = args.clock;
    this.indexIntervalBytes = args.indexIntervalBytes;
    this.allowOffsetGaps = args.allowOffsetGaps ?? false;
    this.logPath = posix.join(args.dir, segmentFileName(args.baseOffset, LOG_FILE_SUFFIX));
    this.indexPath = posix.join(args.dir, segmentFileName(args.baseOffset, INDEX_FILE_SUFFIX));
    this.timeIndexPath = posix.join(args.dir, segmentFileName(args.baseOffset, TIME_INDEX_FILE_SUFFIX));
    this.logHandle = logHandle;
    this.size = sizeBytes;
    // An empty segment's indexes are created with its first batch (see append): a missing one is
    // left missing, and is no problem (it has no entries to lose).
    const empty = sizeBytes === 0;
    const opened = OffsetIndex.open(args.fs, this.indexPath, args.baseOffset, sizeBytes, !empty);
    this.index = opened.index;
    this.indexProblem = opened.problem;
    let openedTime: ReturnType<typeof TimeIndex.open>;
    try {
      openedTime = TimeIndex.open(args.fs, this.timeIndexPath, args.baseOffset, !empty);
    } catch (error) {
      this.index.close();
      throw error;
    }
    this.timeIndex = openedTime.index;
    this.timeIndexProblem = openedTime.problem;
    // Kafka's readMaxTimestampAndOffsetSoFar: the last time index entry until a scan knows better.
    this.maxSoFar = this.timeIndex.lastEntry() ?? UNKNOWN_MAX;
    this.createdAtMs = args.clock.nowMs();
    this.lastModifiedAtMs = this.createdAtMs;
  }

  /**
   * Creates an empty segment at `baseOffset` (stale files of that name are emptied). Its next offset
   * is `baseOffset`; the new files are durable only after {@link sync} and a directory sync. Only
   * the `.log` is created now: the `.index` and `.timeindex` come with the first batch (see append),
   * so a partition that is created costs two inodes fewer before it serves (issue 13 item 4).
   */
  static create(args: LogSegmentArgs): LogSegment {
    const paths = [LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX].map((suffix) =>
      posix.join(args.dir, segmentFileName(args.baseOffset, suffix)),
    );
    const logPath = paths[0]!;
    let handle: FileHandle | null = null;
    let segment: LogSegment | null = null;
    try {
      handle = args.fs.open(logPath, 'rw');
      if (handle.size() > 0) handle.truncate(0);
      segment = new LogSegment(args, handle, 0);
      segment.index.reset();
      segment.timeIndex.reset();
    } catch (error) {
      // A full disk or an I/O error half-way: close and remove whatever was created, so a failed
      // roll leaves no files behind (the caller keeps its active segment). The files are named by
      // an offset no live segment starts at (the log end offset of a non-empty active segment).
      if (segment !== null) segment.closeFiles();
      else handle?.close();
      for (const path of paths) {
        try {
          if (args.fs.exists(path)) args.fs.unlink(path);
        } catch (unlinkError) {
          args.logger.warn({ path, error: String(unlinkError) }, 'could not remove a half-created segment file');
        }
      }
      throw error;
    }
    segment.maxSoFar = UNKNOWN_MAX;
    segment.next = args.baseOffset;
    segment.markUnsynced();
    return segment;
  }

  /**
   * Opens an existing segment: loads the longest valid prefix of both indexes (creating missing
   * ones) but does not scan the log; call {@link loadNextOffset} or {@link recover} before using it.
   * Throws ENOENT if the `.log` is missing.
   */
  static load(args: LogSegmentArgs): LogSegment {
    const logPath = posix.join(args.dir, segmentFileName(args.baseOffset, LOG_FILE_SUFFIX));
    args.fs.open(logPath, 'r').close(); // ENOENT rather than creating it
    const handle = args.fs.open(logPath, 'rw');
    const sizeBytes = handle.size();
    assert.ok(sizeBytes <= INT32_MAX, `${logPath} is ${sizeBytes} bytes, beyond int32 positions`);
    return new LogSegment(args, handle, sizeBytes);
  }

  /** Size of the `.log` in bytes. */
  get sizeBytes(): number {
    return this.size;
  }

  /** Offset the next appended batch must start at (baseOffset when empty). */
  get nextOffset(): number {
    assert.ok(!Number.isNaN(this.next), `${this.logPath}: next offset not loaded`);
    return this.next;
  }

  /** Whether bytes were written or truncated since the last {@link sync} (or recovery). */
  get hasUnsyncedBytes(): boolean {
    return this.unsynced;
  }

  /** Number of offset index entries (tests, metrics, segment.index.bytes rolls). */
  get indexEntries(): number {
    return this.index.entries;
  }

  /** Number of time index entries (tests, metrics, segment.index.bytes rolls). */
  get timeIndexEntries(): number {
    return this.timeIndex.entries;
  }

  /**
   * Kafka's maxTimestampSoFar with its offset: the largest batch maxTimestamp in the segment and the
   * LAST offset of the first batch that reached it (what the time index stores); timestampMs is
   * NO_TIMESTAMP (-1) and offset -1 when no batch carries a timestamp >= 0.
   */
  get maxTimestampSoFar(): TimestampOffset {
    return this.maxSoFar;
  }

  /**
   * Kafka's LogSegment.largestTimestamp, what retention by time compares: the max timestamp so far
   * if there is one, else the segment's last-modified time (Kafka: the file's mtime; here the
   * in-memory time of the last write, or of the load). ms since the epoch.
   */
  get largestTimestampMs(): number {
    return this.maxSoFar.timestampMs >= 0 ? this.maxSoFar.timestampMs : this.lastModifiedAtMs;
  }

  /**
   * Kafka's LogSegment.getFirstBatchTimestamp: the first batch's maxTimestamp, -1 when the segment
   * is empty (max.compaction.lag.ms measures from it). One header read.
   */
  get firstBatchTimestampMs(): number {
    if (this.size === 0) return NO_TIMESTAMP;
    return this.headerAt(0)?.maxTimestampMs ?? NO_TIMESTAMP;
  }

  /** When this segment object was created or loaded (Kafka's `created`), ms since the epoch. */
  get createdMs(): number {
    return this.createdAtMs;
  }

  /** Time of the last append or truncation, or of creation/load (see module doc), ms since the epoch. */
  get lastModifiedMs(): number {
    return this.lastModifiedAtMs;
  }

  /**
   * Kafka's LogSegment.timeWaitedForRoll, in ms: when the first batch has a timestamp (>= 0), how far
   * `incomingMaxTimestampMs` (the new batch's maxTimestamp) is past it; otherwise how long ago
   * (`nowMs`) the segment was created. The log rolls when this exceeds segment.ms.
   */
  timeWaitedForRollMs(nowMs: number, incomingMaxTimestampMs: number): number {
    if (this.rollingBasedMs === null && this.size > 0) {
      const first = this.headerAt(0);
      assert.ok(first !== null, `${this.logPath}: unreadable first batch`);
      this.rollingBasedMs = first.maxTimestampMs;
    }
    const first = this.rollingBasedMs ?? NO_TIMESTAMP;
    return first >= 0 ? incomingMaxTimestampMs - first : nowMs - this.createdAtMs;
  }

  /** From now on, accept offset gaps (the log became compacted; see {@link LogSegmentArgs.allowOffsetGaps}). */
  allowGaps(): void {
    this.allowOffsetGaps = true;
  }

  /** Marks the segment as possibly not fsynced (recovered bytes may live only in the page cache). */
  markUnsynced(): void {
    this.unsynced = true;
    this.changes++;
  }

  /**
   * For a segment below the recovery point (Kafka's readNextOffset): scans batch headers from the
   * last index entry to the end of the file to learn the next offset, checking the structure (sizes,
   * magic, dense offsets, the index entry matching its batch) but not CRCs. Index entries missing
   * after the last one (an index write lost in a crash) are added on the way, time index entries
   * with them, so the indexes end up as a rebuild would make them. The max timestamp so far is the
   * last time index entry's, raised by the batches scanned (a final time index entry lost in a
   * crash); time index entries past the end of the log are dropped. Returns null on success or a
   * reason; on failure the caller recovers the segment instead.
   */
  loadNextOffset(): string | null {
    const last = this.index.lastEntry();
    let expected: number | null = last === null ? this.baseOffset : null;
    let bad: string | null = null;
    const missing: Array<{ offset: number; position: number; max: TimestampOffset }> = [];
    let entryPosition = this.index.lastPosition;
    let max = this.timeIndex.lastEntry() ?? UNKNOWN_MAX;
    const problem = this.forEachBatch(last?.position ?? 0, (h) => {
      if (expected === null && h.lastOffset !== last!.offset) {
        bad = `index entry (${last!.offset}, ${last!.position}) does not match batch ending at ${h.lastOffset}`;
      } else if (expected !== null && (this.allowOffsetGaps ? h.baseOffset < expected : h.baseOffset !== expected)) {
        bad = `batch at position ${h.position} starts at offset ${h.baseOffset}, expected ${expected}`;
      } else {
        if (h.maxTimestampMs > max.timestampMs) max = { timestampMs: h.maxTimestampMs, offset: h.lastOffset };
        if (h.position - entryPosition > this.indexIntervalBytes) {
          missing.push({ offset: h.lastOffset, position: h.position, max });
          entryPosition = h.position;
        }
      }
      expected = h.lastOffset + 1;
      return bad === null;
    });
    if (problem !== null || bad !== null) return problem ?? bad;
    assert.ok(expected !== null);
    this.next = expected;
    const lastTime = this.timeIndex.lastEntry();
    const timeBeyondLog = lastTime !== null && lastTime.offset >= expected;
    if (timeBeyondLog) {
      this.logger.warn(
        { segment: this.timeIndexPath, offset: lastTime.offset, nextOffset: expected },
        'dropping time index entries beyond the log',
      );
      this.timeIndex.truncateToOffset(expected);
      this.markUnsynced();
    }
    if (missing.length > 0) {
      this.logger.info(
        { segment: this.indexPath, entries: missing.length },
        'adding offset index entries missing after the last one',
      );
      for (const e of missing) {
        this.index.append(e.offset, e.position, false);
        if (!timeBeyondLog && e.max.timestampMs >= 0)
          this.timeIndex.maybeAppend(e.max.timestampMs, e.max.offset, false);
      }
      this.index.writePending();
      this.timeIndex.writePending();
      this.markUnsynced();
    }
    if (timeBeyondLog) this.reloadMaxTimestamp();
    else this.maxSoFar = max;
    return null;
  }

  /**
   * Kafka's LogSegment.recover: re-validates batches from the index entry at or below `fromOffset`
   * (from position 0 if there is none or it does not match its batch) to the end: each batch must
   * pass `checkBatch` (length, magic, CRC-32C) and continue the offsets densely. The first failure
   * truncates the `.log` there (logged as a warning with the reason and bytes dropped). Offset index
   * entries from the start position on are rebuilt, so that index ends up identical to a full
   * rebuild. The time index keeps its entries for offsets before the start batch, regains entries
   * lost at offset index entries before the start (a header scan from its last kept entry), is
   * rebuilt from the start on, and gets the final entry for the segment's max timestamp (as Kafka's
   * recover appends it). Idempotent: recovering a recovered segment changes nothing.
   */
  recover(fromOffset: number): SegmentRecovery {
    this.assertOpen();
    const start = this.recoveryStart(fromOffset);
    const scanner = new RecoveryScanner(this.logPath, this.size, start.position, (target, length, position) =>
      this.readAt(target, 0, length, position),
    );
    let pos = start.position;
    let expected = start.expectedOffset;
    let max = start.maxSoFar;
    let reason: string | null = null;
    while (pos < this.size) {
      const checked = scanner.checkBatchAt(pos);
      if (typeof checked === 'string') {
        reason = checked;
        break;
      }
      const buf = scanner.buffer;
      const at = scanner.offsetOf(pos);
      const base = offsetAt(buf, at + L.BASE_OFFSET);
      const delta = buf.readInt32BE(at + L.LAST_OFFSET_DELTA);
      reason = this.continuityProblem(base, delta, expected);
      if (reason !== null) break;
      assert.ok(base !== null, 'continuityProblem rejects a base offset out of range');
      const lastOffset = base + delta;
      const batchMaxTimestampMs = Number(buf.readBigInt64BE(at + L.MAX_TIMESTAMP));
      if (batchMaxTimestampMs > max.timestampMs) max = { timestampMs: batchMaxTimestampMs, offset: lastOffset };
      if (pos - this.index.lastPosition > this.indexIntervalBytes) {
        this.index.append(lastOffset, pos, false);
        if (max.timestampMs >= 0) this.timeIndex.maybeAppend(max.timestampMs, max.offset, false);
      }
      expected = lastOffset + 1;
      pos += checked;
    }

    const truncatedBytes = this.size - pos;
    if (truncatedBytes > 0) {
      this.logger.warn(
        { segment: this.logPath, position: pos, droppedBytes: truncatedBytes, reason },
        'truncating torn or corrupt segment tail',
      );
      this.logHandle.truncate(pos);
      this.size = pos;
      this.markUnsynced();
      this.touch();
    }
    // Kafka: "a normally closed segment always appends the biggest timestamp ever seen".
    if (max.timestampMs >= 0) this.timeIndex.maybeAppend(max.timestampMs, max.offset, false);
    this.index.writePending();
    this.timeIndex.writePending();
    this.maxSoFar = max;
    this.rollingBasedMs = null;
    this.next = expected;
    return { fromPosition: start.position, validBytes: pos, truncatedBytes, reason };
  }

  /**
   * Where {@link recover} starts scanning for `fromOffset`: at the offset index entry at or below it
   * when that entry matches its batch and the time index before it can be restored (both indexes
   * are then cut there, a damaged time index rebuilt from the segment's start up to it), else at
   * position 0 with both indexes emptied. Returns the position, the offset the batch there must
   * start at, and the max timestamp so far before it.
   */
  private recoveryStart(fromOffset: number): { position: number; expectedOffset: number; maxSoFar: TimestampOffset } {
    if (fromOffset > this.baseOffset) {
      const entry = this.index.lookup(fromOffset);
      if (entry.position > 0) {
        const h = this.headerAt(entry.position);
        if (h !== null && h.lastOffset === entry.offset) {
          this.index.truncateToPosition(entry.position);
          // A damaged time index is not trusted at all: rebuilt from the segment's start.
          if (this.timeIndexProblem !== null) this.timeIndex.reset();
          else this.timeIndex.truncateToOffset(h.baseOffset);
          const before = this.restoreTimeIndexBefore(entry.position);
          if (before !== null) return { position: entry.position, expectedOffset: h.baseOffset, maxSoFar: before };
        }
      }
    }
    this.index.reset();
    this.timeIndex.reset();
    return { position: 0, expectedOffset: this.baseOffset, maxSoFar: UNKNOWN_MAX };
  }

  /**
   * Whether a batch whose header says `base` (null: beyond a safe integer) and `delta`
   * (lastOffsetDelta) may follow a batch that ended just before `expected`: offsets continue densely
   * (in a compacted log, at or after `expected`), never run backwards, and stay within the segment's
   * int32 relative range. Null, or the reason recovery truncates there.
   */
  private continuityProblem(base: number | null, delta: number, expected: number): string | null {
    if (base === null || (this.allowOffsetGaps ? base < expected : base !== expected))
      return `batch starts at offset ${base ?? 'out of range'}, expected ${this.allowOffsetGaps ? 'at least ' : ''}${expected}`;
    if (delta < 0) return `negative lastOffsetDelta ${delta}`;
    if (base + delta - this.baseOffset > INT32_MAX) return `offset ${base + delta} beyond the segment's int32 range`;
    return null;
  }

  /**
   * Rebuilds a damaged time index of a segment whose log and offset index are trusted (below the
   * recovery point): a header scan of the whole segment re-adds an entry at each offset index
   * entry where the max timestamp grew (no final entry: see {@link onBecomeInactive}). Returns null,
   * or a reason when the headers are not well formed (the caller then recovers the segment).
   */
  rebuildTimeIndex(): string | null {
    this.assertOpen();
    this.timeIndex.reset();
    const max = this.restoreTimeIndexBefore(this.size);
    if (max === null) return `${this.logPath}: batch headers not well formed`;
    this.timeIndex.writePending();
    this.maxSoFar = max;
    this.markUnsynced();
    return null;
  }

  /**
   * For a recovery starting at byte `start` (an offset index entry, or the end of the segment; both
   * indexes already cut there): scans batch headers from the offset index entry at or below the
   * last kept time index entry up to `start`, returning the max timestamp so far at `start` and
   * re-adding time index entries (not yet written) at the offset index entries passed whose time
   * entry is missing. Null if the headers there are not well formed.
   */
  private restoreTimeIndexBefore(start: number): TimestampOffset | null {
    const last = this.timeIndex.lastEntry();
    let max = last ?? UNKNOWN_MAX;
    const from = last === null ? 0 : this.index.lookup(last.offset).position;
    let k = this.index.entries;
    while (k > 0 && this.index.entry(k - 1).position >= from) k--;
    let end = from;
    const problem = this.forEachBatch(from, (h) => {
      if (h.position >= start) return false;
      if (h.maxTimestampMs > max.timestampMs) max = { timestampMs: h.maxTimestampMs, offset: h.lastOffset };
      if (k < this.index.entries && this.index.entry(k).position === h.position) {
        if (max.timestampMs >= 0) this.timeIndex.maybeAppend(max.timestampMs, max.offset, false);
        k++;
      }
      end = h.position + h.sizeBytes;
      return true;
    });
    return problem === null && end === start ? max : null;
  }

  /**
   * Kafka's LogSegment.append for ONE batch already carrying offsets `baseOffset` .. `lastOffset`
   * (`baseOffset` must equal {@link nextOffset}; `batch` is exactly one v2 batch): writes it, raises
   * the max timestamp so far to the batch's maxTimestamp (with the batch's LAST offset, Kafka's
   * offsetOfMaxTimestamp for v2), and when more than indexIntervalBytes were appended since the last
   * index entry (checked before this batch) adds an offset index entry and, if the max timestamp
   * grew past the last time index entry, a time index entry. The first batch of the segment sets
   * the rolling-based timestamp.
   */
  append(batch: Buffer, baseOffset: number, lastOffset: number): void {
    this.assertOpen();
    // A follower of a compacted leader appends batches with the cleaner's gaps between them.
    if (this.allowOffsetGaps)
      assert.ok(baseOffset >= this.nextOffset, `${this.logPath}: append at ${baseOffset}, next offset ${this.next}`);
    else
      assert.equal(baseOffset, this.nextOffset, `${this.logPath}: append at ${baseOffset}, next offset ${this.next}`);
    assert.ok(lastOffset >= baseOffset && lastOffset - this.baseOffset <= INT32_MAX, `bad last offset ${lastOffset}`);
    assert.ok(
      batch.length >= L.RECORD_BATCH_OVERHEAD && batchSizeAt(batch, 0) === batch.length,
      `${this.logPath}: append takes one whole batch`,
    );
    assert.equal(
      baseOffset + lastOffsetDeltaOf(batch),
      lastOffset,
      `${this.logPath}: last offset disagrees with the batch`,
    );
    assert.ok(this.size + batch.length <= INT32_MAX, `${this.logPath}: segment would exceed int32 positions`);
    assert.ok(!this.tailDamaged, `${this.logPath}: append after a failed rollback`);
    const position = this.size;
    const before = { maxSoFar: this.maxSoFar, rollingBasedMs: this.rollingBasedMs };
    const entries = { index: this.index.entries, timeIndex: this.timeIndex.entries };
    const maxTimestampMs = maxTimestampOf(batch);
    try {
      // The first batch creates the index files (an empty segment has none yet; see create). The
      // caller's flush syncs the directory: a new segment's log marks it changed until then.
      if (position === 0) {
        this.index.materialize();
        this.timeIndex.materialize();
      }
      this.logHandle.write(batch, position);
      this.size += batch.length;
      if (position === 0) this.rollingBasedMs = maxTimestampMs;
      if (maxTimestampMs > this.maxSoFar.timestampMs)
        this.maxSoFar = { timestampMs: maxTimestampMs, offset: lastOffset };
      if (position - this.index.lastPosition > this.indexIntervalBytes) {
        this.index.append(lastOffset, position);
        if (this.maxSoFar.timestampMs >= 0) this.timeIndex.maybeAppend(this.maxSoFar.timestampMs, this.maxSoFar.offset);
      }
    } catch (error) {
      // A full disk (or EIO) on the .log or an index write: undo the whole append so no partial
      // batch or dangling index entry stays (a short write may have stored part of the batch).
      this.size = position;
      this.maxSoFar = before.maxSoFar;
      this.rollingBasedMs = before.rollingBasedMs;
      this.markUnsynced();
      try {
        this.index.rollbackTo(entries.index);
        this.timeIndex.rollbackTo(entries.timeIndex);
        this.logHandle.truncate(position);
      } catch (undoError) {
        this.tailDamaged = true;
        this.logger.error(
          { segment: this.logPath, position, error: String(error), undoError: String(undoError) },
          'could not undo a failed append: the segment may end with a partial batch',
        );
      }
      throw error;
    }
    this.next = lastOffset + 1;
    this.markUnsynced();
    this.touch();
  }

  /**
   * A failed append could not be undone (the truncation back failed too): the files may hold bytes
   * past {@link sizeBytes}. Appends to this segment are refused (asserted) until {@link truncateToPosition}
   * cuts the files again.
   */
  get isTailDamaged(): boolean {
    return this.tailDamaged;
  }

  /**
   * Cuts the segment at byte `position`, a batch boundary whose batch starts at `nextOffset` (both
   * known to the caller, e.g. the last durable point), WITHOUT reading anything at or past it: the
   * bytes there may be unreadable after a failed fsync. Index entries for the dropped batches go;
   * the max timestamp so far is re-read from what stays. Not synced: the caller syncs.
   */
  truncateToPosition(position: number, nextOffset: number): void {
    this.assertOpen();
    assert.ok(position >= 0 && position <= this.size, `${this.logPath}: truncate to ${position} of ${this.size}`);
    assert.ok(nextOffset >= this.baseOffset, `${this.logPath}: next offset ${nextOffset} below the base`);
    this.logHandle.truncate(position);
    this.index.truncateToPosition(position);
    this.timeIndex.truncateToOffset(nextOffset);
    this.size = position;
    this.next = nextOffset;
    this.tailDamaged = false;
    this.markUnsynced();
    this.reloadMaxTimestamp();
    this.touch();
    if (this.size === 0) {
      this.createdAtMs = this.lastModifiedAtMs;
      this.rollingBasedMs = null;
    }
  }

  /**
   * Kafka's LogSegment.onBecomeInactiveSegment (a roll, or the log's load for all but the last
   * segment): appends the time index entry for the segment's max timestamp if it is not the last
   * entry already, so the file ends with the segment's largest timestamp (retention and kafka-dump-log
   * read it there). Not synced: the next flush syncs it.
   */
  onBecomeInactive(): void {
    this.assertOpen();
    const entries = this.timeIndex.entries;
    try {
      if (this.maxSoFar.timestampMs >= 0 && this.timeIndex.maybeAppend(this.maxSoFar.timestampMs, this.maxSoFar.offset))
        this.markUnsynced();
    } catch (error) {
      // A full disk: the entry is dropped again (the segment stays as it was; the roll fails).
      this.markUnsynced();
      this.timeIndex.rollbackTo(entries);
      throw error;
    }
  }

  /**
   * Visits batch headers from byte `fromPosition` (a batch start) in order until `visit` returns
   * false or the end of the segment. Reads headers in chunks. Returns null, or a reason if the bytes
   * are not a well-formed batch sequence (size, magic, offset range); CRCs are not checked.
   */
  forEachBatch(fromPosition: number, visit: (header: BatchHeader) => boolean): string | null {
    this.assertOpen();
    let pos = fromPosition;
    let chunkStart = 0;
    let chunkLen = 0;
    let lastBatchBytes = 0;
    while (pos < this.size) {
      const remaining = this.size - pos;
      if (remaining < L.RECORD_BATCH_OVERHEAD) return `short batch header at position ${pos}: ${remaining} bytes`;
      if (pos < chunkStart || pos + L.RECORD_BATCH_OVERHEAD > chunkStart + chunkLen) {
        // After a batch too big for a chunk, the next is likely too: read just its header.
        const want = lastBatchBytes > HEADER_SCAN_CHUNK_BYTES / 2 ? L.RECORD_BATCH_OVERHEAD : HEADER_SCAN_CHUNK_BYTES;
        chunkLen = this.readAt(headerScratch, 0, Math.min(want, remaining), pos);
        chunkStart = pos;
        if (chunkLen < L.RECORD_BATCH_OVERHEAD) return `short read at position ${pos}`;
      }
      const at = pos - chunkStart;
      const sizeBytes = L.LOG_OVERHEAD + headerScratch.readInt32BE(at + L.BATCH_LENGTH);
      if (sizeBytes < L.RECORD_BATCH_OVERHEAD || sizeBytes > remaining) {
        return `bad batch size ${sizeBytes} at position ${pos} (${remaining} bytes left)`;
      }
      const magic = headerScratch.readInt8(at + L.MAGIC);
      if (magic !== L.CURRENT_MAGIC) return `bad magic ${magic} at position ${pos}`;
      const baseOffset = offsetAt(headerScratch, at + L.BASE_OFFSET);
      const delta = headerScratch.readInt32BE(at + L.LAST_OFFSET_DELTA);
      if (baseOffset === null || delta < 0) return `bad offsets at position ${pos}`;
      const header: BatchHeader = {
        position: pos,
        baseOffset,
        lastOffset: baseOffset + delta,
        sizeBytes,
        maxTimestampMs: Number(headerScratch.readBigInt64BE(at + L.MAX_TIMESTAMP)),
        attributes: headerScratch.readInt16BE(at + L.ATTRIBUTES),
        partitionLeaderEpoch: headerScratch.readInt32BE(at + L.PARTITION_LEADER_EPOCH),
        producerId: Number(headerScratch.readBigInt64BE(at + L.PRODUCER_ID)),
        producerEpoch: headerScratch.readInt16BE(at + L.PRODUCER_EPOCH),
        baseSequence: headerScratch.readInt32BE(at + L.BASE_SEQUENCE),
      };
      if (!visit(header)) return null;
      pos += sizeBytes;
      lastBatchBytes = sizeBytes;
    }
    return null;
  }

  /**
   * Kafka's translateOffset: the first batch whose lastOffset >= `offset` (the batch containing it
   * in a dense log), found via the index and a header scan; null if the segment ends before it.
   */
  findBatch(offset: number): BatchHeader | null {
    let found: BatchHeader | null = null;
    const problem = this.forEachBatch(this.index.lookup(offset).position, (h) => {
      if (h.lastOffset < offset) return true;
      found = h;
      return false;
    });
    assert.equal(problem, null, `${this.logPath}: ${problem}`);
    // Dense offsets: a batch starting past `offset` means a corrupt index entry sent the scan too
    // far; crash rather than serve the wrong batch. A compacted log has gaps: the next batch is the answer.
    const batch = found as BatchHeader | null;
    assert.ok(
      this.allowOffsetGaps || batch === null || batch.baseOffset <= offset,
      `${this.indexPath}: index entry skipped offset ${offset}`,
    );
    return batch;
  }

  /**
   * Byte position to start a header scan for `offset`: the index entry at or below it (Kafka's
   * OffsetIndex.lookup), 0 if none. The batch holding `offset`, if any, starts there or later.
   */
  lookupPosition(offset: number): number {
    return this.index.lookup(offset).position;
  }

  /**
   * The `.log` file's identity (`<dev>:<ino>`, {@link FileHandle.identity}) when another thread can
   * open it by {@link logPath} and read it (NodeFileSystem), else null (the simulation's disk).
   */
  sharedFileIdentity(): string | null {
    return this.logHandle.identity?.() ?? null;
  }

  /** Copies `length` bytes from byte `position` of the `.log` into `target[targetOffset..]`. */
  readInto(target: Buffer, targetOffset: number, position: number, length: number): void {
    assert.ok(
      position >= 0 && position + length <= this.size,
      `${this.logPath}: read [${position}, +${length}) beyond ${this.size}`,
    );
    const n = this.readAt(target, targetOffset, length, position);
    assert.equal(n, length, `${this.logPath}: short read at ${position}`);
  }

  /**
   * Kafka's LogSegment.truncateTo: drops the batch containing `offset` and everything after it
   * (truncation is at a batch boundary, so the next offset may end up below `offset`), with the
   * index entries for them; the max timestamp so far is re-read (last time index entry, then a scan
   * after it: Kafka's readLargestTimestamp). An emptied segment counts as created now. Returns the
   * bytes dropped. Not synced: the caller syncs.
   */
  truncateTo(offset: number): number {
    this.assertOpen();
    const batch = this.findBatch(offset);
    if (batch === null) return 0;
    const dropped = this.size - batch.position;
    this.logHandle.truncate(batch.position);
    this.tailDamaged = false; // whatever a failed undo left past the size is cut too
    this.index.truncateToPosition(batch.position);
    this.timeIndex.truncateToOffset(batch.baseOffset);
    this.size = batch.position;
    this.next = Math.min(batch.baseOffset, offset); // below `offset` unless it fell in a compaction gap
    this.markUnsynced();
    this.reloadMaxTimestamp();
    this.touch();
    if (this.size === 0) {
      this.createdAtMs = this.lastModifiedAtMs;
      this.rollingBasedMs = null;
    }
    return dropped;
  }

  /**
   * ListOffsets by timestamp in this segment (Kafka's LogSegment.findOffsetByTimestamp and
   * FileRecords.searchForTimestamp): the first record with timestamp >= `targetTimestampMs` and
   * offset >= `startingOffset`, or null. The time index entry at or below the target and the offset
   * index give the starting position; batches whose maxTimestamp reaches the target have their
   * records decoded (a LogAppendTime batch's records all carry its maxTimestamp). A compressed batch
   * with `decompress` null, or a batch that does not decode, answers at batch granularity: its
   * first offset >= `startingOffset` and its maxTimestamp. With `recordLevel` false every batch
   * answers so (the max-timestamp fallback when a batch's header claims more than its records hold).
   */
  findOffsetByTimestamp(
    targetTimestampMs: number,
    startingOffset: number,
    decompress: Decompress | null,
    recordLevel = true,
  ): TimestampAndOffset | null {
    this.assertOpen();
    const entry = this.timeIndex.lookup(targetTimestampMs);
    let position = this.index.lookup(Math.max(entry.offset, startingOffset)).position;
    for (;;) {
      let hit: BatchHeader | null = null;
      const problem = this.forEachBatch(position, (h) => {
        if (h.lastOffset < startingOffset || h.maxTimestampMs < targetTimestampMs) return true;
        hit = h;
        return false;
      });
      assert.equal(problem, null, `${this.logPath}: ${problem}`);
      const batch = hit as BatchHeader | null;
      if (batch === null) return null;
      const found = this.searchBatch(batch, startingOffset, decompress, recordLevel, (ts) => ts >= targetTimestampMs);
      if (found !== null) return found;
      position = batch.position + batch.sizeBytes;
    }
  }

  /**
   * The largest record timestamp at offsets >= `startingOffset` (the log start offset inside this
   * segment after DeleteRecords), NO_TIMESTAMP if none: batch maxTimestamps, except the batch
   * straddling `startingOffset`, whose records below it are left out (decoded; at batch granularity
   * when it cannot be). Scans headers from the batch holding `startingOffset`.
   */
  maxTimestampFrom(startingOffset: number, decompress: Decompress | null): number {
    this.assertOpen();
    const first = this.findBatch(startingOffset);
    if (first === null) return NO_TIMESTAMP;
    let max = NO_TIMESTAMP;
    const problem = this.forEachBatch(first.position, (h) => {
      if (h.baseOffset >= startingOffset && h.maxTimestampMs > max) max = h.maxTimestampMs;
      return true;
    });
    assert.equal(problem, null, `${this.logPath}: ${problem}`);
    if (first.baseOffset < startingOffset) {
      const records = this.readRecordTimestamps(first, decompress);
      if (records === null) {
        max = Math.max(max, first.maxTimestampMs);
      } else {
        for (const r of records) if (r.offset >= startingOffset && r.timestampMs > max) max = r.timestampMs;
      }
    }
    return max;
  }

  /** fsyncs the `.log`, the `.index` and the `.timeindex`. */
  sync(): void {
    this.assertOpen();
    this.logHandle.sync();
    this.index.sync();
    this.timeIndex.sync();
    this.unsynced = false;
  }

  /**
   * fsyncs the `.log`, the `.index` and the `.timeindex` asynchronously (pending index entries are
   * written first, now): resolves once everything written before the call is durable. The segment
   * counts as synced afterwards only if nothing changed it meanwhile ({@link hasUnsyncedBytes} stays
   * true while the sync is in flight, so a synchronous {@link sync} still covers it). Closing or
   * deleting the segment meanwhile is allowed (the files' descriptors outlive the sync).
   */
  syncAsync(): Promise<void> {
    try {
      this.assertOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    const changes = this.changes;
    return settleAll([syncHandleAsync(this.logHandle), this.index.syncAsync(), this.timeIndex.syncAsync()]).then(() => {
      if (this.changes === changes) this.unsynced = false;
    });
  }

  /**
   * Closes the files (no sync). Like Kafka's LogSegment.close, first appends the time index entry
   * for the max timestamp so far (best effort: a failure is logged, as Kafka swallows it). Idempotent.
   */
  close(): void {
    if (this.closed) return;
    try {
      if (this.maxSoFar.timestampMs >= 0) this.timeIndex.maybeAppend(this.maxSoFar.timestampMs, this.maxSoFar.offset);
    } catch (err) {
      this.logger.warn(
        { segment: this.timeIndexPath, error: String(err) },
        'could not append the final time index entry on close',
      );
    }
    this.closeFiles();
  }

  /**
   * Closes and unlinks the three files (durable once the caller syncs the directory). A file
   * already unlinked ({@link unlinkFiles}) is skipped.
   */
  delete(): void {
    this.closeFiles();
    this.unlinkFiles();
  }

  /**
   * Unlinks whichever of the three files still exist, keeping the descriptors open: the segment
   * still reads its unlinked bytes, so a caller whose later step fails can keep it in the log.
   */
  unlinkFiles(): void {
    for (const path of [this.logPath, this.indexPath, this.timeIndexPath])
      if (this.fs.exists(path)) this.fs.unlink(path);
  }

  private closeFiles(): void {
    if (this.closed) return;
    this.closed = true;
    this.index.close();
    this.timeIndex.close();
    this.logHandle.close();
  }

  private touch(): void {
    this.lastModifiedAtMs = this.clock.nowMs();
  }

  /** Kafka's readLargestTimestamp: the last time index entry, raised by a header scan after it. */
  private reloadMaxTimestamp(): void {
    const last = this.timeIndex.lastEntry();
    let max = last ?? UNKNOWN_MAX;
    const from = last === null ? 0 : this.index.lookup(last.offset).position;
    const problem = this.forEachBatch(from, (h) => {
      if (h.maxTimestampMs > max.timestampMs) max = { timestampMs: h.maxTimestampMs, offset: h.lastOffset };
      return true;
    });
    assert.equal(problem, null, `${this.logPath}: ${problem}`);
    this.maxSoFar = max;
  }

  /**
   * The first record of batch `h` at offset >= `startingOffset` whose timestamp passes `accept`, or
   * null; at batch granularity (first offset >= `startingOffset`, maxTimestamp) when the records
   * cannot be read or `recordLevel` is false.
   */
  private searchBatch(
    h: BatchHeader,
    startingOffset: number,
    decompress: Decompress | null,
    recordLevel: boolean,
    accept: (timestampMs: number) => boolean,
  ): TimestampAndOffset | null {
    const leaderEpoch = h.partitionLeaderEpoch >= 0 ? h.partitionLeaderEpoch : -1;
    const records = recordLevel ? this.readRecordTimestamps(h, decompress) : null;
    if (records === null)
      return { offset: Math.max(h.baseOffset, startingOffset), timestamp: h.maxTimestampMs, leaderEpoch };
    for (const r of records)
      if (r.offset >= startingOffset && accept(r.timestampMs))
        return { offset: r.offset, timestamp: r.timestampMs, leaderEpoch };
    return null;
  }

  /** Records of batch `h` (offsets, timestamps), or null when they cannot be read (compressed without decompress, malformed). */
  private readRecordTimestamps(
    h: BatchHeader,
    decompress: Decompress | null,
  ): Array<{ offset: number; timestampMs: number }> | null {
    const bytes = Buffer.allocUnsafe(h.sizeBytes);
    this.readInto(bytes, 0, h.position, h.sizeBytes);
    const result = recordTimestamps(bytes, decompress);
    if (result.kind === 'ok') return result.records;
    if (result.kind === 'undecodable') {
      this.logger.warn(
        { segment: this.logPath, position: h.position, reason: result.reason },
        "cannot decode a batch's records: answering at batch granularity",
      );
    }
    return null;
  }

  private headerAt(position: number): BatchHeader | null {
    let header: BatchHeader | null = null;
    const problem = this.forEachBatch(position, (h) => {
      header = h;
      return false;
    });
    return problem === null ? header : null;
  }

  private readAt(target: Uint8Array, targetOffset: number, length: number, position: number): number {
    return this.logHandle.read(target, targetOffset, length, position);
  }

  private assertOpen(): void {
    assert.ok(!this.closed, `${this.logPath}: segment closed`);
  }
}
