/**
 * Kafka's sparse offset index (`<baseOffset>.index`, OffsetIndex.java): 8-byte big-endian entries
 *
 * ```
 *  0  relativeOffset  int32   batch lastOffset - segment baseOffset
 *  4  position        int32   byte position of that batch in the .log
 * ```
 *
 * An entry maps the LAST offset of a batch to the byte position where that batch starts (what
 * LogSegment.append and kafka-dump-log's index check expect). Entries are strictly increasing in
 * both fields. The entries live in memory (typed arrays) and are written through to the file, which
 * is always exactly `entries * 8` bytes (no preallocation, so nothing to trim).
 */
import assert from 'node:assert/strict';
import { syncHandleAsync, type FileHandle, type FileSystem } from './file-system';

/** Bytes per index entry. */
export const OFFSET_INDEX_ENTRY_BYTES = 8;
const INT32_MAX = 0x7fffffff;

/** A logical offset and the byte position of the batch it maps to. */
export interface OffsetPosition {
  /** Logical offset (absolute). */
  offset: number;
  /** Byte position in the segment's .log. */
  position: number;
}

/** Result of {@link OffsetIndex.open}. */
export interface OffsetIndexOpen {
  index: OffsetIndex;
  /** Why entries were dropped on load (torn tail, out-of-order entry, ...), or null if all were valid. */
  problem: string | null;
  /** True when the file did not exist and was created (its directory needs a sync). */
  created: boolean;
}

/** One segment's offset index (see module doc). Not thread-safe; owned by its {@link LogSegment}. */
export class OffsetIndex {
  private relOffsets: Int32Array;
  private positions: Int32Array;
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
    this.relOffsets = new Int32Array(Math.max(capacity, 16));
    this.positions = new Int32Array(Math.max(capacity, 16));
  }

  /**
   * Opens (creating if missing) the index at `path` and loads its longest valid prefix: entries
   * must be strictly increasing in offset and position, with 0 < position < `logSizeBytes`.
   * Invalid trailing entries (and a torn partial entry) are cut from the file and reported in
   * `problem`; the caller decides whether to rebuild from the log.
   */
  static open(fs: FileSystem, path: string, baseOffset: number, logSizeBytes: number): OffsetIndexOpen {
    const created = !fs.exists(path);
    const handle = fs.open(path, 'rw');
    const fileBytes = handle.size();
    const bytes = Buffer.alloc(fileBytes);
    const read = handle.read(bytes, 0, fileBytes, 0);
    const whole = Math.floor(read / OFFSET_INDEX_ENTRY_BYTES);
    const index = new OffsetIndex(path, baseOffset, handle, whole);
    let problem: string | null = created ? 'missing' : null;
    if (read % OFFSET_INDEX_ENTRY_BYTES !== 0) problem = `torn tail of ${read % OFFSET_INDEX_ENTRY_BYTES} bytes`;
    let prevRel = -1;
    let prevPosition = 0;
    for (let i = 0; i < whole; i++) {
      const rel = bytes.readInt32BE(i * OFFSET_INDEX_ENTRY_BYTES);
      const position = bytes.readInt32BE(i * OFFSET_INDEX_ENTRY_BYTES + 4);
      if (rel <= prevRel || position <= prevPosition || position >= logSizeBytes) {
        problem = `entry ${i} (relative offset ${rel}, position ${position}) out of order or beyond log size ${logSizeBytes}`;
        break;
      }
      index.relOffsets[index.count] = rel;
      index.positions[index.count] = position;
      index.count++;
      prevRel = rel;
      prevPosition = position;
    }
    index.written = index.count;
    if (fileBytes !== index.count * OFFSET_INDEX_ENTRY_BYTES) handle.truncate(index.count * OFFSET_INDEX_ENTRY_BYTES);
    return { index, problem, created };
  }

  /** Number of entries. */
  get entries(): number {
    return this.count;
  }

  /** File size in bytes once pending entries are written. */
  get sizeBytes(): number {
    return this.count * OFFSET_INDEX_ENTRY_BYTES;
  }

  /** Entry `i` (0-based) as absolute offset and position. */
  entry(i: number): OffsetPosition {
    assert.ok(i >= 0 && i < this.count, `index entry ${i} of ${this.count}`);
    return { offset: this.baseOffset + this.relOffsets[i]!, position: this.positions[i]! };
  }

  /** The last entry, or null when empty. */
  lastEntry(): OffsetPosition | null {
    return this.count === 0 ? null : this.entry(this.count - 1);
  }

  /** Byte position of the last entry, 0 when empty (Kafka's "bytes since last index entry" base). */
  get lastPosition(): number {
    return this.count === 0 ? 0 : this.positions[this.count - 1]!;
  }

  /**
   * Kafka's OffsetIndex.lookup: the entry with the largest offset <= `targetOffset` (binary search),
   * or (baseOffset, position 0) when there is none. The batch containing `targetOffset`, if any,
   * starts at or after the returned position.
   */
  lookup(targetOffset: number): OffsetPosition {
    const rel = targetOffset - this.baseOffset;
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.relOffsets[mid]! <= rel) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? { offset: this.baseOffset, position: 0 } : this.entry(found);
  }

  /**
   * Appends an entry: `offset` is the last offset of the batch starting at byte `position`. Both must
   * exceed the last entry's. Written to the file at once unless `writeThrough` is false (then
   * {@link writePending} writes all deferred entries in one write; recovery uses this).
   */
  append(offset: number, position: number, writeThrough = true): void {
    const rel = offset - this.baseOffset;
    assert.ok(rel >= 0 && rel <= INT32_MAX, `index offset ${offset} not relative to base ${this.baseOffset}`);
    assert.ok(position > 0 && position <= INT32_MAX, `index position ${position}`);
    if (this.count > 0) {
      assert.ok(rel > this.relOffsets[this.count - 1]!, `index offset ${offset} not increasing`);
      assert.ok(position > this.positions[this.count - 1]!, `index position ${position} not increasing`);
    }
    if (this.count === this.relOffsets.length) {
      const relOffsets = new Int32Array(this.count * 2);
      const positions = new Int32Array(this.count * 2);
      relOffsets.set(this.relOffsets);
      positions.set(this.positions);
      this.relOffsets = relOffsets;
      this.positions = positions;
    }
    this.relOffsets[this.count] = rel;
    this.positions[this.count] = position;
    this.count++;
    if (writeThrough) this.writePending();
  }

  /** Writes entries appended with `writeThrough = false` (one write). */
  writePending(): void {
    if (this.written === this.count) return;
    const bytes = Buffer.allocUnsafe((this.count - this.written) * OFFSET_INDEX_ENTRY_BYTES);
    for (let i = this.written; i < this.count; i++) {
      const at = (i - this.written) * OFFSET_INDEX_ENTRY_BYTES;
      bytes.writeInt32BE(this.relOffsets[i]!, at);
      bytes.writeInt32BE(this.positions[i]!, at + 4);
    }
    this.handle.write(bytes, this.written * OFFSET_INDEX_ENTRY_BYTES);
    this.written = this.count;
  }

  /** Drops every entry whose batch starts at or after byte `position` (log truncation, rebuild). */
  truncateToPosition(position: number): void {
    let keep = this.count;
    while (keep > 0 && this.positions[keep - 1]! >= position) keep--;
    this.truncateToEntries(keep);
  }

  /** Keeps the first `entries` entries (file truncated to match). */
  truncateToEntries(entries: number): void {
    assert.ok(entries >= 0 && entries <= this.count);
    if (entries === this.count) return;
    this.count = entries;
    if (this.written > entries) {
      this.written = entries;
      this.handle.truncate(entries * OFFSET_INDEX_ENTRY_BYTES);
    }
  }

  /** Drops all entries. */
  reset(): void {
    this.truncateToEntries(0);
  }

  /** fsyncs the index file. */
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
