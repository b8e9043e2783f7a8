/**
 * Kafka's time index (`<baseOffset>.timeindex`, TimeIndex.java): 12-byte big-endian entries
 *
 * ```
 *  0  timestamp       int64   the segment's largest batch maxTimestamp so far (ms since the epoch)
 *  8  relativeOffset  int32   last offset of the batch holding that timestamp - segment baseOffset
 * ```
 *
 * An entry (t, o) says: the batch ending at offset o is the first in the segment whose maxTimestamp
 * reaches t, and every batch before it has a smaller one (what kafka-dump-log's time index check
 * verifies). Entries are added next to offset index entries (LogSegment.append: when the running
 * maximum grew since the last entry), plus one final entry for the segment's maximum when it stops
 * being the active segment, is closed or is recovered. Timestamps strictly increase, offsets never
 * decrease; a timestamp below 0 (NO_TIMESTAMP = -1) is never indexed.
 *
 * Like {@link OffsetIndex}, entries live in memory and are written through; the file is always
 * exactly `entries * 12` bytes (Kafka preallocates and trims; readers see the same entries).
 * Timestamps are JS numbers: exact up to 2^53 ms (year 287396), beyond that rounded.
 */
import assert from 'node:assert/strict';
import { syncHandleAsync, type FileHandle, type FileSystem } from './file-system';

/** Bytes per time index entry. */
export const TIME_INDEX_ENTRY_BYTES = 12;
/** Kafka's RecordBatch.NO_TIMESTAMP. */
export const NO_TIMESTAMP = -1;
const INT32_MAX = 0x7fffffff;

/** A timestamp and the (absolute) offset it maps to: Kafka's TimestampOffset. */
export interface TimestampOffset {
  /** ms since the epoch (NO_TIMESTAMP = -1 when unknown). */
  timestampMs: number;
  /** Logical offset (absolute): the last offset of the batch holding `timestampMs`. */
  offset: number;
}

/** Result of {@link TimeIndex.open}. */
export interface TimeIndexOpen {
  index: TimeIndex;
  /** Why entries were dropped on load (torn tail, out-of-order entry, ...), 'missing', or null if all were valid. */
  problem: string | null;
  /** True when the file did not exist and was created. */
  created: boolean;
}

/** One segment's time index (see module doc). Not thread-safe; owned by its LogSegment. */
export class TimeIndex {
  private timestamps: Float64Array;
  private relOffsets: Int32Array;
  private count = 0;
  /** Entries already written to the file. */
  private written = 0;

  private constructor(
    readonly path: string,
    /** The segment's base offset: entries store offsets relative to it. */
    readonly baseOffset: number,
    private readonly handle: FileHandle,
    capacity: number,
  ) {
    this.timestamps = new Float64Array(Math.max(capacity, 8));
    this.relOffsets = new Int32Array(Math.max(capacity, 8));
  }

  /**
   * Opens (creating if missing) the time index at `path` and loads its longest valid prefix:
   * timestamps >= 0 and strictly increasing, relative offsets >= 0 and non-decreasing (Kafka's
   * TimeIndex.sanityCheck, entry by entry). Invalid trailing entries and a torn partial entry are
   * cut from the file and reported in `problem`; whether the entries agree with the log (offsets
   * below the segment's next offset) is the segment's check. Throws on I/O errors.
   */
  static open(fs: FileSystem, path: string, baseOffset: number): TimeIndexOpen {
    const created = !fs.exists(path);
    const handle = fs.open(path, 'rw');
    const fileBytes = handle.size();
    const bytes = Buffer.alloc(fileBytes);
    const read = handle.read(bytes, 0, fileBytes, 0);
    const whole = Math.floor(read / TIME_INDEX_ENTRY_BYTES);
    const index = new TimeIndex(path, baseOffset, handle, whole);
    let problem: string | null = created ? 'missing' : null;
    if (read % TIME_INDEX_ENTRY_BYTES !== 0) problem = `torn tail of ${read % TIME_INDEX_ENTRY_BYTES} bytes`;
    let prevTimestamp = NO_TIMESTAMP;
    let prevRel = 0;
    for (let i = 0; i < whole; i++) {
      const timestampMs = Number(bytes.readBigInt64BE(i * TIME_INDEX_ENTRY_BYTES));
      const rel = bytes.readInt32BE(i * TIME_INDEX_ENTRY_BYTES + 8);
      if (timestampMs <= prevTimestamp || rel < prevRel) {
        problem = `entry ${i} (timestamp ${timestampMs}, relative offset ${rel}) out of order`;
        break;
      }
      index.timestamps[index.count] = timestampMs;
      index.relOffsets[index.count] = rel;
      index.count++;
      prevTimestamp = timestampMs;
      prevRel = rel;
    }
    index.written = index.count;
    if (fileBytes !== index.count * TIME_INDEX_ENTRY_BYTES) handle.truncate(index.count * TIME_INDEX_ENTRY_BYTES);
    return { index, problem, created };
  }

  /** Number of entries. */
  get entries(): number {
    return this.count;
  }

  /** File size in bytes once pending entries are written. */
  get sizeBytes(): number {
    return this.count * TIME_INDEX_ENTRY_BYTES;
  }

  /** Entry `i` (0-based) with its absolute offset. */
  entry(i: number): TimestampOffset {
    assert.ok(i >= 0 && i < this.count, `time index entry ${i} of ${this.count}`);
    return { timestampMs: this.timestamps[i]!, offset: this.baseOffset + this.relOffsets[i]! };
  }

  /** The last entry, or null when empty. */
  lastEntry(): TimestampOffset | null {
    return this.count === 0 ? null : this.entry(this.count - 1);
  }

  /**
   * Kafka's TimeIndex.lookup: the entry with the largest timestamp <= `targetTimestampMs` (binary
   * search), or (NO_TIMESTAMP, baseOffset) when there is none. Every batch before the one ending at
   * the returned offset has a maxTimestamp below the target, so a search may start at that batch.
   */
  lookup(targetTimestampMs: number): TimestampOffset {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timestamps[mid]! <= targetTimestampMs) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? { timestampMs: NO_TIMESTAMP, offset: this.baseOffset } : this.entry(found);
  }

  /**
   * Kafka's TimeIndex.maybeAppend: adds (timestampMs, offset) when `timestampMs` exceeds the last
   * entry's timestamp (or NO_TIMESTAMP when empty), else does nothing; returns whether it added.
   * When added, `offset` must not be below the last entry's (asserted: callers track a running maximum).
   * Written to the file at once unless `writeThrough` is false (see {@link writePending}).
   */
  maybeAppend(timestampMs: number, offset: number, writeThrough = true): boolean {
    const rel = offset - this.baseOffset;
    const last = this.lastEntry();
    if (timestampMs <= (last?.timestampMs ?? NO_TIMESTAMP)) return false;
    if (last !== null)
      assert.ok(offset >= last.offset, `time index offset ${offset} below the last entry's ${last.offset}`);
    assert.ok(rel >= 0 && rel <= INT32_MAX, `time index offset ${offset} not relative to base ${this.baseOffset}`);
    if (this.count === this.timestamps.length) {
      const timestamps = new Float64Array(this.count * 2);
      const relOffsets = new Int32Array(this.count * 2);
      timestamps.set(this.timestamps);
      relOffsets.set(this.relOffsets);
      this.timestamps = timestamps;
      this.relOffsets = relOffsets;
    }
    this.timestamps[this.count] = timestampMs;
    this.relOffsets[this.count] = rel;
    this.count++;
    if (writeThrough) this.writePending();
    return true;
  }

  /** Writes entries appended with `writeThrough = false` (one write). */
  writePending(): void {
    if (this.written === this.count) return;
    const bytes = Buffer.allocUnsafe((this.count - this.written) * TIME_INDEX_ENTRY_BYTES);
    for (let i = this.written; i < this.count; i++) {
      const at = (i - this.written) * TIME_INDEX_ENTRY_BYTES;
      bytes.writeBigInt64BE(BigInt(this.timestamps[i]!), at);
      bytes.writeInt32BE(this.relOffsets[i]!, at + 8);
    }
    this.handle.write(bytes, this.written * TIME_INDEX_ENTRY_BYTES);
    this.written = this.count;
  }

  /** Kafka's TimeIndex.truncateTo: drops every entry whose offset is >= `offset`. */
  truncateToOffset(offset: number): void {
    let keep = this.count;
    while (keep > 0 && this.baseOffset + this.relOffsets[keep - 1]! >= offset) keep--;
    this.truncateToEntries(keep);
  }

  /** Keeps the first `entries` entries (file truncated to match). */
  truncateToEntries(entries: number): void {
    assert.ok(entries >= 0 && entries <= this.count);
    if (entries === this.count) return;
    this.count = entries;
    if (this.written > entries) {
      this.written = entries;
      this.handle.truncate(entries * TIME_INDEX_ENTRY_BYTES);
    }
  }

  /** Drops all entries. */
  reset(): void {
    this.truncateToEntries(0);
  }

  /** fsyncs the index file (pending entries first). */
  sync(): void {
    this.writePending();
    this.handle.sync();
  }

  /** Writes pending entries now, then fsyncs the index file asynchronously (see FileHandle.syncAsync). */
  syncAsync(): Promise<void> {
    try {
      this.writePending();
    } catch (error) {
      return Promise.reject(error);
    }
    return syncHandleAsync(this.handle);
  }

  /** Writes pending entries and closes the file. */
  close(): void {
    this.writePending();
    this.handle.close();
  }
}
