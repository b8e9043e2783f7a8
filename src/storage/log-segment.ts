/**
 * One segment of a partition log, Kafka's LogSegment: a `.log` file of record batches v2 exactly as
 * stored by Kafka, and its sparse `.index`, both named by the segment's base offset padded to 20
 * digits (`00000000000000000000.log`). Positions are byte positions in the `.log` (int32, so a
 * segment stays below 2 GiB); offsets are logical record offsets (absolute).
 *
 * ```
 *  .log   | batch 100..104 | batch 105..105 | batch 106..130 | ...
 *         0                612              700  <- positions (bytes)
 *  .index   (130 - base, 700)   one entry per indexIntervalBytes: last offset of a batch -> its start
 * ```
 *
 * Batches are read by scanning headers in chunks (never a read per 12-byte header), starting from
 * the index entry at or below the wanted offset. `recover` re-checks every batch (length, magic,
 * CRC-32C, dense offsets), truncates a torn or corrupt tail and rebuilds the index.
 */
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import type { Logger } from '../runtime/actor';
import * as L from '../protocol/record-batch/layout';
import { checkBatch } from '../protocol/record-batch/view';
import type { FileHandle, FileSystem } from './file-system';
import { OffsetIndex } from './offset-index';

/** Suffix of segment data files. */
export const LOG_FILE_SUFFIX = '.log';
/** Suffix of offset index files. */
export const INDEX_FILE_SUFFIX = '.index';

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

/** Parses `<20 digits>.log` / `.index`; null for any other name. */
export function parseSegmentFileName(name: string): { baseOffset: number; suffix: string } | null {
  const m = /^(\d{20})(\.log|\.index)$/.exec(name);
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
  /** The batch's maxTimestamp field, ms since the epoch. */
  maxTimestampMs: number;
}

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

/** One `.log` + `.index` pair (see module doc). Owned by its {@link Log}; not thread-safe. */
export class LogSegment {
  readonly baseOffset: number;
  readonly logPath: string;
  readonly indexPath: string;
  private readonly fs: FileSystem;
  private readonly logger: Logger;
  private readonly indexIntervalBytes: number;
  private readonly logHandle: FileHandle;
  private readonly index: OffsetIndex;
  private size: number;
  /** Next offset to append here; NaN until `loadNextOffset` or `recover` ran on a loaded segment. */
  private next = Number.NaN;
  private unsynced = false;
  private closed = false;
  /** Why the loaded index was not fully valid (null if it was). */
  readonly indexProblem: string | null;

  private constructor(args: LogSegmentArgs, logHandle: FileHandle, sizeBytes: number) {
    this.baseOffset = args.baseOffset;
    this.fs = args.fs;
    this.logger = args.logger;
    this.indexIntervalBytes = args.indexIntervalBytes;
    this.logPath = posix.join(args.dir, segmentFileName(args.baseOffset, LOG_FILE_SUFFIX));
    this.indexPath = posix.join(args.dir, segmentFileName(args.baseOffset, INDEX_FILE_SUFFIX));
    this.logHandle = logHandle;
    this.size = sizeBytes;
    const opened = OffsetIndex.open(args.fs, this.indexPath, args.baseOffset, sizeBytes);
    this.index = opened.index;
    this.indexProblem = opened.problem;
  }

  /**
   * Creates an empty segment at `baseOffset` (a stale file of that name is emptied). Its next offset
   * is `baseOffset`; the new files are durable only after {@link sync} and a directory sync.
   */
  static create(args: LogSegmentArgs): LogSegment {
    const logPath = posix.join(args.dir, segmentFileName(args.baseOffset, LOG_FILE_SUFFIX));
    const handle = args.fs.open(logPath, 'rw');
    if (handle.size() > 0) handle.truncate(0);
    const segment = new LogSegment(args, handle, 0);
    segment.index.reset();
    segment.next = args.baseOffset;
    segment.unsynced = true;
    return segment;
  }

  /**
   * Opens an existing segment: loads the longest valid prefix of its index (creating a missing one)
   * but does not scan the log; call {@link loadNextOffset} or {@link recover} before using it.
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

  /** Number of offset index entries (tests, metrics). */
  get indexEntries(): number {
    return this.index.entries;
  }

  /** Marks the segment as possibly not fsynced (recovered bytes may live only in the page cache). */
  markUnsynced(): void {
    this.unsynced = true;
  }

  /**
   * For a segment below the recovery point (Kafka's readNextOffset): scans batch headers from the
   * last index entry to the end of the file to learn the next offset, checking the structure (sizes,
   * magic, dense offsets, the index entry matching its batch) but not CRCs. Index entries missing
   * after the last one (an index write lost in a crash) are added on the way, so the index ends up
   * as a rebuild would make it. Returns null on success or a reason; on failure the caller recovers
   * the segment instead.
   */
  loadNextOffset(): string | null {
    const last = this.index.lastEntry();
    let expected: number | null = last === null ? this.baseOffset : null;
    let bad: string | null = null;
    const missing: Array<{ offset: number; position: number }> = [];
    let entryPosition = this.index.lastPosition;
    const problem = this.forEachBatch(last?.position ?? 0, (h) => {
      if (expected === null && h.lastOffset !== last!.offset) {
        bad = `index entry (${last!.offset}, ${last!.position}) does not match batch ending at ${h.lastOffset}`;
      } else if (expected !== null && h.baseOffset !== expected) {
        bad = `batch at position ${h.position} starts at offset ${h.baseOffset}, expected ${expected}`;
      } else if (h.position - entryPosition > this.indexIntervalBytes) {
        missing.push({ offset: h.lastOffset, position: h.position });
        entryPosition = h.position;
      }
      expected = h.lastOffset + 1;
      return bad === null;
    });
    if (problem !== null || bad !== null) return problem ?? bad;
    assert.ok(expected !== null);
    if (missing.length > 0) {
      this.logger.info({ segment: this.indexPath, entries: missing.length }, 'adding offset index entries missing after the last one');
      for (const e of missing) this.index.append(e.offset, e.position, false);
      this.index.writePending();
      this.unsynced = true;
    }
    this.next = expected;
    return null;
  }

  /**
   * Kafka's LogSegment.recover: re-validates batches from the index entry at or below `fromOffset`
   * (from position 0 if there is none or it does not match its batch) to the end: each batch must
   * pass `checkBatch` (length, magic, CRC-32C) and continue the offsets densely. The first failure
   * truncates the `.log` there (logged as a warning with the reason and bytes dropped). Index entries
   * from the start position on are rebuilt, so the index ends up identical to a full rebuild.
   * Idempotent: recovering an intact segment changes nothing.
   */
  recover(fromOffset: number): SegmentRecovery {
    this.assertOpen();
    let start = 0;
    let expected = this.baseOffset;
    if (fromOffset > this.baseOffset) {
      const entry = this.index.lookup(fromOffset);
      if (entry.position > 0) {
        const h = this.headerAt(entry.position);
        if (h !== null && h.lastOffset === entry.offset) {
          start = entry.position;
          expected = h.baseOffset;
        }
      }
    }
    if (start === 0) this.index.reset();
    else this.index.truncateToPosition(start);

    let buf = Buffer.allocUnsafe(Math.min(RECOVERY_CHUNK_BYTES, Math.max(this.size - start, 0)));
    let bufStart = start;
    let bufLen = 0;
    const fill = (position: number, length: number): void => {
      if (buf.length < length) buf = Buffer.allocUnsafe(length);
      const n = this.readAt(buf, 0, length, position);
      assert.equal(n, length, `${this.logPath}: short read at ${position}`);
      bufStart = position;
      bufLen = length;
    };

    let pos = start;
    let reason: string | null = null;
    while (pos < this.size) {
      const remaining = this.size - pos;
      let checked: number | string;
      if (remaining < L.LOG_OVERHEAD) {
        checked = checkBatch(buf, 0, remaining); // "short header", reads nothing
      } else {
        if (pos + L.LOG_OVERHEAD > bufStart + bufLen) fill(pos, Math.min(remaining, RECOVERY_CHUNK_BYTES));
        const declared = L.LOG_OVERHEAD + buf.readInt32BE(pos - bufStart + L.BATCH_LENGTH);
        if (declared >= L.RECORD_BATCH_OVERHEAD && declared <= remaining && pos + declared > bufStart + bufLen) {
          fill(pos, Math.max(declared, Math.min(remaining, RECOVERY_CHUNK_BYTES)));
        }
        checked = checkBatch(buf, pos - bufStart, remaining);
      }
      if (typeof checked === 'string') {
        reason = checked;
        break;
      }
      const at = pos - bufStart;
      const base = offsetAt(buf, at + L.BASE_OFFSET);
      const delta = buf.readInt32BE(at + L.LAST_OFFSET_DELTA);
      if (base !== expected) reason = `batch starts at offset ${base ?? 'out of range'}, expected ${expected}`;
      else if (delta < 0) reason = `negative lastOffsetDelta ${delta}`;
      else if (base + delta - this.baseOffset > INT32_MAX) reason = `offset ${base + delta} beyond the segment's int32 range`;
      if (reason !== null) break;
      const lastOffset = base! + delta;
      if (pos - this.index.lastPosition > this.indexIntervalBytes) this.index.append(lastOffset, pos, false);
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
      this.unsynced = true;
    }
    this.index.writePending();
    this.next = expected;
    return { fromPosition: start, validBytes: pos, truncatedBytes, reason };
  }

  /**
   * Appends one batch (or several contiguous ones) already carrying offsets `baseOffset` ..
   * `lastOffset`; `baseOffset` must equal {@link nextOffset}. Adds an index entry when more than
   * indexIntervalBytes were appended since the last one (Kafka's rule, checked before this batch).
   */
  append(batch: Buffer, baseOffset: number, lastOffset: number): void {
    this.assertOpen();
    assert.equal(baseOffset, this.nextOffset, `${this.logPath}: append at ${baseOffset}, next offset ${this.next}`);
    assert.ok(lastOffset >= baseOffset && lastOffset - this.baseOffset <= INT32_MAX, `bad last offset ${lastOffset}`);
    assert.ok(this.size + batch.length <= INT32_MAX, `${this.logPath}: segment would exceed int32 positions`);
    const position = this.size;
    this.logHandle.write(batch, position);
    this.size += batch.length;
    if (position - this.index.lastPosition > this.indexIntervalBytes) this.index.append(lastOffset, position);
    this.next = lastOffset + 1;
    this.unsynced = true;
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
    // Offsets are dense (no compaction yet): a batch starting past `offset` means a corrupt index
    // entry sent the scan too far. Crash rather than serve the wrong batch.
    const batch = found as BatchHeader | null;
    assert.ok(batch === null || batch.baseOffset <= offset, `${this.indexPath}: index entry skipped offset ${offset}`);
    return batch;
  }

  /**
   * Byte position to start a header scan for `offset`: the index entry at or below it (Kafka's
   * OffsetIndex.lookup), 0 if none. The batch holding `offset`, if any, starts there or later.
   */
  lookupPosition(offset: number): number {
    return this.index.lookup(offset).position;
  }

  /** Copies `length` bytes from byte `position` of the `.log` into `target[targetOffset..]`. */
  readInto(target: Buffer, targetOffset: number, position: number, length: number): void {
    assert.ok(position >= 0 && position + length <= this.size, `${this.logPath}: read [${position}, +${length}) beyond ${this.size}`);
    const n = this.readAt(target, targetOffset, length, position);
    assert.equal(n, length, `${this.logPath}: short read at ${position}`);
  }

  /**
   * Kafka's LogSegment.truncateTo: drops the batch containing `offset` and everything after it
   * (truncation is at a batch boundary, so the next offset may end up below `offset`). Returns the
   * bytes dropped. Not synced: the caller syncs.
   */
  truncateTo(offset: number): number {
    this.assertOpen();
    const batch = this.findBatch(offset);
    if (batch === null) return 0;
    const dropped = this.size - batch.position;
    this.logHandle.truncate(batch.position);
    this.index.truncateToPosition(batch.position);
    this.size = batch.position;
    this.next = batch.baseOffset;
    this.unsynced = true;
    return dropped;
  }

  /** fsyncs the `.log` and the `.index`. */
  sync(): void {
    this.assertOpen();
    this.logHandle.sync();
    this.index.sync();
    this.unsynced = false;
  }

  /** Closes both files (no sync). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.index.close();
    this.logHandle.close();
  }

  /** Closes and unlinks both files (durable once the caller syncs the directory). */
  delete(): void {
    this.close();
    this.fs.unlink(this.logPath);
    if (this.fs.exists(this.indexPath)) this.fs.unlink(this.indexPath);
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
