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
 * is always exactly `entries * 8` bytes; loading, pending writes, sync and close are index-file.ts's
 * (Kafka's AbstractIndex), this file holds the entry format, the lookup and truncation by position.
 */
import assert from 'node:assert/strict';
import type { FileSystem } from '../io/file-system';
import { IndexFile, MAX_RELATIVE_OFFSET, RELATIVE_OFFSET_BYTES, type IndexFileContents } from './index-file';

/** Bytes per index entry. */
export const OFFSET_INDEX_ENTRY_BYTES = 8;
const INT32_MAX = 0x7fffffff;
/** Byte offsets of an entry's fields (see the module doc's table). */
const RELATIVE_OFFSET_AT = 0;
const POSITION_AT = RELATIVE_OFFSET_AT + RELATIVE_OFFSET_BYTES;
const POSITION_BYTES = 4;
// An entry is exactly its two int32 fields: Kafka's OffsetIndex and kafka-dump-log read 8-byte entries.
assert.equal(POSITION_AT + POSITION_BYTES, OFFSET_INDEX_ENTRY_BYTES, 'offset index entry layout');

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
  /** True when the file did not exist and was created (never with `create` false). */
  created: boolean;
}

/**
 * One segment's offset index (see module doc): keys are relative offsets, values byte positions.
 * Not thread-safe; owned by its {@link LogSegment}.
 */
export class OffsetIndex extends IndexFile<OffsetPosition, Int32Array> {
  private constructor(
    fs: FileSystem,
    path: string,
    baseOffset: number,
    contents: IndexFileContents,
    /** Size of the segment's .log when opened: loaded entries must point below it. */
    private readonly logSizeBytes: number,
  ) {
    const capacity = Math.max(Math.floor(contents.bytes.length / OFFSET_INDEX_ENTRY_BYTES), 16);
    super(fs, path, baseOffset, contents.handle, OFFSET_INDEX_ENTRY_BYTES, new Int32Array(capacity));
  }

  /**
   * Opens (creating if missing) the index at `path` and loads its longest valid prefix: entries
   * must be strictly increasing in offset and position, with 0 < position < `logSizeBytes`.
   * Invalid trailing entries (and a torn partial entry) are cut from the file and reported in
   * `problem`; the caller decides whether to rebuild from the log. With `create` false a missing
   * file is left for the first write to create (an empty segment's; see IndexFile).
   */
  static open(fs: FileSystem, path: string, baseOffset: number, logSizeBytes: number, create = true): OffsetIndexOpen {
    const contents = IndexFile.readFile(fs, path, create);
    const index = new OffsetIndex(fs, path, baseOffset, contents, logSizeBytes);
    const problem = index.load(contents);
    return { index, problem, created: contents.created };
  }

  protected override loadEntry(bytes: Buffer, at: number, i: number): string | null {
    const rel = bytes.readInt32BE(at + RELATIVE_OFFSET_AT);
    const position = bytes.readInt32BE(at + POSITION_AT);
    const prevRel = this.count === 0 ? -1 : this.keys[this.count - 1]!;
    const prevPosition = this.count === 0 ? 0 : this.values[this.count - 1]!;
    if (rel <= prevRel || position <= prevPosition || position >= this.logSizeBytes)
      return `entry ${i} (relative offset ${rel}, position ${position}) out of order or beyond log size ${this.logSizeBytes}`;
    this.push(rel, position);
    return null;
  }

  protected override encodeEntry(bytes: Buffer, at: number, i: number): void {
    bytes.writeInt32BE(this.keys[i]!, at + RELATIVE_OFFSET_AT);
    bytes.writeInt32BE(this.values[i]!, at + POSITION_AT);
  }

  /** Entry `i` (0-based) as absolute offset and position. */
  entry(i: number): OffsetPosition {
    assert.ok(i >= 0 && i < this.count, `index entry ${i} of ${this.count}`);
    return { offset: this.baseOffset + this.keys[i]!, position: this.values[i]! };
  }

  /** Byte position of the last entry, 0 when empty (Kafka's "bytes since last index entry" base). */
  get lastPosition(): number {
    return this.count === 0 ? 0 : this.values[this.count - 1]!;
  }

  /**
   * Kafka's OffsetIndex.lookup: the entry with the largest offset <= `targetOffset` (binary search),
   * or (baseOffset, position 0) when there is none. The batch containing `targetOffset`, if any,
   * starts at or after the returned position.
   */
  lookup(targetOffset: number): OffsetPosition {
    const found = this.largestLowerBoundSlot(targetOffset - this.baseOffset);
    return found < 0 ? { offset: this.baseOffset, position: 0 } : this.entry(found);
  }

  /**
   * Appends an entry: `offset` is the last offset of the batch starting at byte `position`. Both must
   * exceed the last entry's. Written to the file at once unless `writeThrough` is false (then
   * {@link writePending} writes all deferred entries in one write; recovery uses this).
   */
  append(offset: number, position: number, writeThrough = true): void {
    const rel = offset - this.baseOffset;
    assert.ok(rel >= 0 && rel <= MAX_RELATIVE_OFFSET, `index offset ${offset} not relative to base ${this.baseOffset}`);
    assert.ok(position > 0 && position <= INT32_MAX, `index position ${position}`);
    if (this.count > 0) {
      assert.ok(rel > this.keys[this.count - 1]!, `index offset ${offset} not increasing`);
      assert.ok(position > this.values[this.count - 1]!, `index position ${position} not increasing`);
    }
    this.push(rel, position);
    if (writeThrough) this.writePending();
  }

  /** Drops every entry whose batch starts at or after byte `position` (log truncation, rebuild). */
  truncateToPosition(position: number): void {
    this.truncateToValuesBelow(position);
  }
}
