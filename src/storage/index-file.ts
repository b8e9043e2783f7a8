/**
 * What an offset index and a time index share, whatever their entry format (Kafka's
 * AbstractIndex.java): fixed-size big-endian entries whose offsets are stored relative to the
 * segment's base offset as an int32, held in memory and written through to the file, which is
 * always exactly `entries * entrySize` bytes (no preallocation, so nothing to trim). An empty
 * segment's index may have no file yet: it is opened lazily ({@link IndexFile.readFile} with
 * `create` false) and created by {@link IndexFile.materialize} or the first write, so a new
 * partition creates its `.index` and `.timeindex` with its first batch rather than at creation
 * (two inodes fewer per partition created; issue 13 item 4). A missing file holds no entries.
 *
 * ```
 *  file     | entry 0 | entry 1 | ... | entry n-1 |     n = entries, each entrySize bytes
 *           [0, written) in the file; [written, n) pending until writePending
 *  memory   keys   | k0 | k1 | ... |   strictly increasing: what lookups search
 *           values | v0 | v1 | ... |   int32, non-decreasing: what truncation cuts by
 * ```
 *
 * Both formats are a search key and an int32 value: the offset index maps relative offset (key) to
 * position (value), the time index timestamp (key) to relative offset (value). A subclass gives
 * its entrySize and its entry format (how one is validated on load, encoded, and shown as an
 * absolute entry) and its own `truncateTo*`; loading, growth, the pending-write bookkeeping,
 * truncation by entry count, sync and close live here.
 */
import assert from 'node:assert/strict';
import { syncHandleAsync, type FileHandle, type FileSystem } from '../io/file-system';

/** Bytes of the relative offset both index formats store: an int32 (offset - segment base offset). */
export const RELATIVE_OFFSET_BYTES = 4;
/** Largest relative offset an index entry can hold. */
export const MAX_RELATIVE_OFFSET = 0x7fffffff;

/** An index file as read whole on open, before its entries are validated. */
export interface IndexFileContents {
  /** The open file, or null when it did not exist and was not created (`create` false). */
  handle: FileHandle | null;
  /** The bytes read (whole entries and a torn tail, if any). */
  bytes: Buffer;
  /** Size of the file when opened, in bytes. */
  fileBytes: number;
  /** True when the file did not exist and was created: a lost index ('missing'). */
  created: boolean;
}

/** The key column's type: int32 relative offsets (offset index) or timestamps (time index). */
export type IndexKeys = Int32Array | Float64Array;

/** A copy of `array` with room for `capacity` elements (>= its length). */
function grown<A extends IndexKeys>(array: A, capacity: number): A {
  assert.ok(capacity >= array.length, `grow ${array.length} to ${capacity}`);
  const bigger = (array instanceof Int32Array ? new Int32Array(capacity) : new Float64Array(capacity)) as A;
  bigger.set(array);
  return bigger;
}

/** The entry-format-agnostic part of an index file (see module doc). Not thread-safe. */
export abstract class IndexFile<Entry, Keys extends IndexKeys> {
  /** Entries in memory. */
  protected count = 0;
  /** Entries already written to the file. */
  protected written = 0;
  /** The search key of each entry (strictly increasing). */
  protected keys: Keys;
  /** The int32 value of each entry (non-decreasing). */
  protected values: Int32Array;
  /** Writes and truncations of the file so far. */
  private fileChanges = 0;
  /**
   * The last fsync started and the file changes it covers; null before the first one and after one
   * failed. An index gets an entry only every log.index.interval.bytes, so most group commits find
   * it unchanged and need no fsync of it (each costs ~0.1 ms of the replica's thread to submit,
   * measured, and a journal commit of the disk).
   */
  private lastSync: { changes: number; done: Promise<void>; settled: boolean } | null = null;

  /** The open file; null while it does not exist (see module doc: created by the first write). */
  private handle: FileHandle | null;

  protected constructor(
    private readonly fs: FileSystem,
    readonly path: string,
    /** The segment's base offset: entries store offsets relative to it. */
    readonly baseOffset: number,
    handle: FileHandle | null,
    /** Bytes per entry (Kafka's entrySize). */
    protected readonly entrySize: number,
    /** An empty key column; its length is the initial capacity. */
    keys: Keys,
  ) {
    this.handle = handle;
    this.keys = keys;
    this.values = new Int32Array(keys.length);
  }

  /**
   * Opens the index file at `path` and reads it whole. A missing file is created when `create` is
   * true, else left missing (handle null, no bytes) for the first write to create. Throws on I/O errors.
   */
  protected static readFile(fs: FileSystem, path: string, create = true): IndexFileContents {
    const missing = !fs.exists(path);
    // Left missing, it is an empty segment's index not written yet: no entries, nothing lost.
    if (missing && !create) return { handle: null, bytes: Buffer.alloc(0), fileBytes: 0, created: false };
    const handle = fs.open(path, 'rw');
    const fileBytes = handle.size();
    const bytes = Buffer.alloc(fileBytes);
    const read = handle.read(bytes, 0, fileBytes, 0);
    return { handle, bytes: bytes.subarray(0, read), fileBytes, created: missing };
  }

  /** The open file, created now if it does not exist yet. */
  private file(): FileHandle {
    this.handle ??= this.fs.open(this.path, 'rw');
    return this.handle;
  }

  /**
   * Creates the (empty) file if it does not exist yet (its name is durable with the caller's next
   * directory sync; an empty file has nothing of its own to fsync). Throws on I/O errors (a full disk).
   */
  materialize(): void {
    this.file();
  }

  /** Entry `i` (0-based), with its absolute offset. */
  abstract entry(i: number): Entry;

  /**
   * Validates the entry at `bytes[at..at+entrySize)` (the `i`-th in the file) against the last one
   * kept, and keeps it with {@link push}: null, or why it is invalid (then it and every later entry
   * are dropped).
   */
  protected abstract loadEntry(bytes: Buffer, at: number, i: number): string | null;

  /** Encodes entry `i` into `bytes[at..at+entrySize)`. */
  protected abstract encodeEntry(bytes: Buffer, at: number, i: number): void;

  /**
   * Loads the longest valid prefix of `contents` (entry by entry with {@link loadEntry}) and cuts
   * invalid trailing entries and a torn partial entry from the file. Returns why entries were
   * dropped ('missing' for a created file), or null if all were valid; the caller decides whether
   * to rebuild from the log.
   */
  protected load(contents: IndexFileContents): string | null {
    const { bytes, fileBytes, created } = contents;
    const whole = Math.floor(bytes.length / this.entrySize);
    let problem: string | null = created ? 'missing' : null;
    if (bytes.length % this.entrySize !== 0) problem = `torn tail of ${bytes.length % this.entrySize} bytes`;
    for (let i = 0; i < whole; i++) {
      const invalid = this.loadEntry(bytes, i * this.entrySize, i);
      if (invalid !== null) {
        problem = invalid;
        break;
      }
    }
    this.written = this.count;
    if (fileBytes !== this.count * this.entrySize) this.truncateFile(this.count * this.entrySize);
    return problem;
  }

  /** Number of entries. */
  get entries(): number {
    return this.count;
  }

  /** File size in bytes once pending entries are written. */
  get sizeBytes(): number {
    return this.count * this.entrySize;
  }

  /** The last entry, or null when empty. */
  lastEntry(): Entry | null {
    return this.count === 0 ? null : this.entry(this.count - 1);
  }

  /** Adds an entry in memory (the arrays doubled when full); the caller has checked the order. */
  protected push(key: number, value: number): void {
    if (this.count === this.keys.length) {
      this.keys = grown(this.keys, this.count * 2);
      this.values = grown(this.values, this.count * 2);
    }
    this.keys[this.count] = key;
    this.values[this.count] = value;
    this.count++;
  }

  /**
   * Kafka's AbstractIndex.largestLowerBoundSlotFor: the slot of the largest key <= `target`
   * (binary search), or -1 when every key exceeds it.
   */
  protected largestLowerBoundSlot(target: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid]! <= target) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Drops the trailing entries whose value is >= `value` (what both `truncateTo*` cut by). */
  protected truncateToValuesBelow(value: number): void {
    let keep = this.count;
    while (keep > 0 && this.values[keep - 1]! >= value) keep--;
    this.truncateToEntries(keep);
  }

  /** Writes entries appended with `writeThrough = false` (one write). */
  writePending(): void {
    if (this.written === this.count) return;
    const bytes = Buffer.allocUnsafe((this.count - this.written) * this.entrySize);
    for (let i = this.written; i < this.count; i++) this.encodeEntry(bytes, (i - this.written) * this.entrySize, i);
    this.fileChanges++;
    this.file().write(bytes, this.written * this.entrySize);
    this.written = this.count;
  }

  private truncateFile(sizeBytes: number): void {
    // A file not created yet is empty already.
    if (this.handle === null && sizeBytes === 0) return;
    this.fileChanges++;
    this.file().truncate(sizeBytes);
  }

  /** Keeps the first `entries` entries (file truncated to match). */
  truncateToEntries(entries: number): void {
    assert.ok(entries >= 0 && entries <= this.count);
    if (entries === this.count) return;
    this.count = entries;
    if (this.written > entries) {
      this.written = entries;
      this.truncateFile(entries * this.entrySize);
    }
  }

  /**
   * Undoes entries added since the index held `entries` after a failed write (a full disk): drops
   * them in memory and cuts the file back to the entries already written, which also removes a
   * partial entry a short write may have left. Throws when the truncation itself fails.
   */
  rollbackTo(entries: number): void {
    assert.ok(entries >= 0 && entries <= this.count, `index rollback to ${entries} of ${this.count} entries`);
    this.count = entries;
    this.written = Math.min(this.written, entries);
    this.truncateFile(this.written * this.entrySize);
  }

  /** Drops all entries. */
  reset(): void {
    this.truncateToEntries(0);
  }

  /**
   * fsyncs the index file (pending entries first); none when a completed fsync already covers every
   * change to the file.
   */
  sync(): void {
    this.writePending();
    const last = this.lastSync;
    if (last !== null && last.settled && last.changes === this.fileChanges) return;
    const changes = this.fileChanges;
    // No file (nothing was ever written to it): nothing to make durable, as after an fsync.
    if (this.handle === null) {
      this.lastSync = { changes, done: Promise.resolve(), settled: true };
      return;
    }
    this.lastSync = null;
    this.handle.sync();
    this.lastSync = { changes, done: Promise.resolve(), settled: true };
  }

  /**
   * Writes pending entries now, then fsyncs the index file asynchronously (see FileHandle.syncAsync).
   * When the file has not changed since the last fsync started, that fsync's promise is the answer
   * (it covers everything written before this call): no second one is submitted.
   */
  syncAsync(): Promise<void> {
    try {
      this.writePending();
    } catch (error) {
      return Promise.reject(error);
    }
    const last = this.lastSync;
    if (last !== null && last.changes === this.fileChanges) return last.done;
    const handle = this.handle;
    if (handle === null) {
      this.lastSync = { changes: this.fileChanges, done: Promise.resolve(), settled: true };
      return this.lastSync.done;
    }
    const entry = { changes: this.fileChanges, done: Promise.resolve(), settled: false };
    entry.done = syncHandleAsync(handle).then(
      () => {
        entry.settled = true;
      },
      (error: unknown) => {
        // A failed fsync covers nothing: the next sync submits a real one.
        if (this.lastSync === entry) this.lastSync = null;
        throw error;
      },
    );
    this.lastSync = entry;
    return entry.done;
  }

  /** Writes pending entries and closes the file (if it exists). */
  close(): void {
    this.writePending();
    this.handle?.close();
  }
}
