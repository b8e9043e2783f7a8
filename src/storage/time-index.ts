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
 * Like {@link OffsetIndex}, entries live in memory and are written through (index-file.ts, Kafka's
 * AbstractIndex); the file is always exactly `entries * 12` bytes (Kafka preallocates and trims;
 * readers see the same entries).
 * Timestamps are JS numbers: exact up to 2^53 ms (year 287396), beyond that rounded.
 */
import assert from 'node:assert/strict';
import type { FileSystem } from '../io/file-system';
import { IndexFile, MAX_RELATIVE_OFFSET, RELATIVE_OFFSET_BYTES, type IndexFileContents } from './index-file';

/** Bytes per time index entry. */
export const TIME_INDEX_ENTRY_BYTES = 12;
/** Kafka's RecordBatch.NO_TIMESTAMP. */
export const NO_TIMESTAMP = -1;
/** Byte offsets of an entry's fields (see the module doc's table). */
const TIMESTAMP_AT = 0;
const TIMESTAMP_BYTES = 8;
const RELATIVE_OFFSET_AT = TIMESTAMP_AT + TIMESTAMP_BYTES;
// An entry is exactly its int64 and int32 fields: Kafka's TimeIndex and kafka-dump-log read 12-byte entries.
assert.equal(RELATIVE_OFFSET_AT + RELATIVE_OFFSET_BYTES, TIME_INDEX_ENTRY_BYTES, 'time index entry layout');

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
  /** True when the file did not exist and was created (never with `create` false). */
  created: boolean;
}

/**
 * One segment's time index (see module doc): keys are timestamps, values relative offsets. Not
 * thread-safe; owned by its LogSegment.
 */
export class TimeIndex extends IndexFile<TimestampOffset, Float64Array> {
  private constructor(fs: FileSystem, path: string, baseOffset: number, contents: IndexFileContents) {
    const capacity = Math.max(Math.floor(contents.bytes.length / TIME_INDEX_ENTRY_BYTES), 8);
    super(fs, path, baseOffset, contents.handle, TIME_INDEX_ENTRY_BYTES, new Float64Array(capacity));
  }

  /**
   * Opens (creating if missing) the time index at `path` and loads its longest valid prefix:
   * timestamps >= 0 and strictly increasing, relative offsets >= 0 and non-decreasing (Kafka's
   * TimeIndex.sanityCheck, entry by entry). Invalid trailing entries and a torn partial entry are
   * cut from the file and reported in `problem`; whether the entries agree with the log (offsets
   * below the segment's next offset) is the segment's check. With `create` false a missing file is
   * left for the first write to create (an empty segment's; see IndexFile). Throws on I/O errors.
   */
  static open(fs: FileSystem, path: string, baseOffset: number, create = true): TimeIndexOpen {
    const contents = IndexFile.readFile(fs, path, create);
    const index = new TimeIndex(fs, path, baseOffset, contents);
    const problem = index.load(contents);
    return { index, problem, created: contents.created };
  }

  protected override loadEntry(bytes: Buffer, at: number, i: number): string | null {
    const timestampMs = Number(bytes.readBigInt64BE(at + TIMESTAMP_AT));
    const rel = bytes.readInt32BE(at + RELATIVE_OFFSET_AT);
    const prevTimestamp = this.count === 0 ? NO_TIMESTAMP : this.keys[this.count - 1]!;
    const prevRel = this.count === 0 ? 0 : this.values[this.count - 1]!;
    if (timestampMs <= prevTimestamp || rel < prevRel)
      return `entry ${i} (timestamp ${timestampMs}, relative offset ${rel}) out of order`;
    this.push(timestampMs, rel);
    return null;
  }

  protected override encodeEntry(bytes: Buffer, at: number, i: number): void {
    bytes.writeBigInt64BE(BigInt(this.keys[i]!), at + TIMESTAMP_AT);
    bytes.writeInt32BE(this.values[i]!, at + RELATIVE_OFFSET_AT);
  }

  /** Entry `i` (0-based) with its absolute offset. */
  entry(i: number): TimestampOffset {
    assert.ok(i >= 0 && i < this.count, `time index entry ${i} of ${this.count}`);
    return { timestampMs: this.keys[i]!, offset: this.baseOffset + this.values[i]! };
  }

  /**
   * Kafka's TimeIndex.lookup: the entry with the largest timestamp <= `targetTimestampMs` (binary
   * search), or (NO_TIMESTAMP, baseOffset) when there is none. Every batch before the one ending at
   * the returned offset has a maxTimestamp below the target, so a search may start at that batch.
   */
  lookup(targetTimestampMs: number): TimestampOffset {
    const found = this.largestLowerBoundSlot(targetTimestampMs);
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
    assert.ok(
      rel >= 0 && rel <= MAX_RELATIVE_OFFSET,
      `time index offset ${offset} not relative to base ${this.baseOffset}`,
    );
    this.push(timestampMs, rel);
    if (writeThrough) this.writePending();
    return true;
  }

  /** Kafka's TimeIndex.truncateTo: drops every entry whose offset is >= `offset`. */
  truncateToOffset(offset: number): void {
    this.truncateToValuesBelow(offset - this.baseOffset);
  }
}
