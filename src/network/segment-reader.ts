/**
 * The network thread's reads of segment files for Fetch (issue 13 item 2; docs/design-notes.md,
 * "Fetch reads segment ranges on the network thread"). A replica answers a consumer's fetch with
 * where its batches are ({@link SegmentRange}: path, file identity, position, size, first and last
 * offset) instead of copying them into an envelope; this reader reads those bytes from the page
 * cache straight into the buffer the response goes out with. Kafka's fetch does the same with
 * sendfile from its FileRecords slices; Node has no sendfile, so this is one copy where there were
 * three (segment read, msgpack pack, exact-size envelope buffer).
 *
 * Safety. Batches below the high watermark never change in place, but the replica may delete a
 * segment (retention, DeleteRecords), swap it for a cleaned one (compaction) or, after an unclean
 * election, truncate it, between its answer and this read. So a read counts only when all of these
 * hold, else {@link SegmentRangeReader.read} answers null and the handler asks the replica again for
 * bytes:
 * - the file opened by path has the identity (`<dev>:<ino>`) the replica named (a swapped or
 *   recreated file has another; a descriptor in the cache pins its inode, so the number cannot be
 *   reused while cached; a file opened afresh could in theory carry a reused number, which the
 *   batch check below still has to pass);
 * - every byte of the range was read (a truncated file reads short);
 * - the bytes are whole batches that start at the batch with the range's base offset and end exactly
 *   at the one with its last offset (batch headers only; the CRC was checked when the batch was
 *   appended).
 *
 * Descriptors stay open in a small cache (at most {@link MAX_OPEN_FILES}, least recently used closed
 * first, each closed after {@link IDLE_CLOSE_MS} unused), so a deleted segment's disk space comes back
 * within that time, as Kafka frees a deleted segment after file.delete.delay.ms (60 s).
 */
import * as fs from 'node:fs';
import { baseOffsetOf, batchSizeAt, lastOffsetDeltaOf } from '../protocol/record-batch/view';
import { RECORD_BATCH_OVERHEAD } from '../protocol/record-batch/layout';
import type { SegmentRange } from '../replica/messages';
import { responseBuffers } from './response-buffers';

/** Open segment descriptors kept at most. */
export const MAX_OPEN_FILES = 128;
/** A cached descriptor unused this long (ms) is closed. */
export const IDLE_CLOSE_MS = 30_000;
const SWEEP_INTERVAL_MS = 5_000;

interface OpenFile {
  fd: number;
  identity: string;
  lastUsedMs: number;
  /** Reads in flight on `fd`; it is closed only at 0. */
  reads: number;
  /** Dropped from the cache: close once `reads` is 0. */
  evicted: boolean;
}

/** Reads {@link SegmentRange}s (module comment); one per broker's network node. */
export class SegmentRangeReader {
  private readonly files = new Map<string, OpenFile>();
  private sweeper: NodeJS.Timeout | null = null;

  /**
   * The ranges' bytes in order in one buffer of exactly their total size, leased from
   * {@link responseBuffers} (the connection releases it once written), or null when any
   * range is no longer what the replica meant (module comment) or cannot be read (ENOENT, EIO...):
   * the caller then asks the replica for the bytes. Never rejects.
   */
  async read(ranges: readonly SegmentRange[]): Promise<Buffer | null> {
    let total = 0;
    for (const r of ranges) total += r.sizeBytes;
    // The connection gives it back once the socket has taken it (response-buffers.ts).
    const out = responseBuffers.lease(total);
    let at = 0;
    for (const range of ranges) {
      if (!(await this.readRange(range, out, at))) {
        // No read into `out` is in flight: each was awaited.
        responseBuffers.release(out);
        return null;
      }
      at += range.sizeBytes;
    }
    return out;
  }

  /**
   * Closes every cached descriptor (those being read close when their read ends); a later read opens
   * files again (a broker restarted in the same process).
   */
  close(): void {
    for (const path of [...this.files.keys()]) this.evict(path);
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** Descriptors cached now (tests). */
  openFiles(): number {
    return this.files.size;
  }

  private async readRange(range: SegmentRange, out: Buffer, at: number): Promise<boolean> {
    const file = this.acquire(range);
    if (file === null) return false;
    file.reads++;
    let ok = false;
    try {
      let done = 0;
      while (done < range.sizeBytes) {
        const n = await readAt(file.fd, out, at + done, range.sizeBytes - done, range.position + done);
        if (n === 0) break;
        done += n;
      }
      ok = done === range.sizeBytes && holdsBatches(out.subarray(at, at + range.sizeBytes), range);
    } catch {
      ok = false;
    } finally {
      file.reads--;
      // Evict only this descriptor: the path may name a newer one now (a swap), and an evicted
      // descriptor closes when its last read ends, whether that read failed or not.
      if (!ok && this.files.get(range.path) === file) this.evict(range.path);
      else if (file.evicted && file.reads === 0) closeQuietly(file.fd);
    }
    return ok;
  }

  /** The cached descriptor of `range.path` if it is the file the replica named, else a new one; null if none. */
  private acquire(range: SegmentRange): OpenFile | null {
    const now = Date.now();
    const cached = this.files.get(range.path);
    if (cached !== undefined) {
      if (cached.identity === range.fileIdentity) {
        cached.lastUsedMs = now;
        // Map order is recency order: move it to the end.
        this.files.delete(range.path);
        this.files.set(range.path, cached);
        return cached;
      }
      this.evict(range.path); // the path names another file now (swapped or recreated)
    }
    let fd: number;
    try {
      fd = fs.openSync(range.path, fs.constants.O_RDONLY);
    } catch {
      return null; // deleted since the replica answered
    }
    let identity: string;
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      identity = `${st.dev}:${st.ino}`;
    } catch {
      closeQuietly(fd);
      return null;
    }
    if (identity !== range.fileIdentity) {
      closeQuietly(fd);
      return null;
    }
    const file: OpenFile = { fd, identity, lastUsedMs: now, reads: 0, evicted: false };
    this.files.set(range.path, file);
    while (this.files.size > MAX_OPEN_FILES) this.evict(this.files.keys().next().value as string);
    this.startSweeper();
    return file;
  }

  private evict(path: string): void {
    const file = this.files.get(path);
    if (file === undefined) return;
    this.files.delete(path);
    file.evicted = true;
    if (file.reads === 0) closeQuietly(file.fd);
  }

  private startSweeper(): void {
    if (this.sweeper !== null) return;
    this.sweeper = setInterval(() => {
      const cutoff = Date.now() - IDLE_CLOSE_MS;
      for (const [path, file] of [...this.files]) if (file.lastUsedMs <= cutoff) this.evict(path);
      if (this.files.size === 0 && this.sweeper !== null) {
        clearInterval(this.sweeper);
        this.sweeper = null;
      }
    }, SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }
}

/**
 * Whether `bytes` are whole record batches, the first with base offset `range.baseOffset` and the
 * last with last offset `range.lastOffset` (headers only).
 */
export function holdsBatches(bytes: Buffer, range: Pick<SegmentRange, 'baseOffset' | 'lastOffset'>): boolean {
  let pos = 0;
  let lastOffset = -1;
  while (pos < bytes.length) {
    if (bytes.length - pos < RECORD_BATCH_OVERHEAD) return false;
    const baseOffset = Number(baseOffsetOf(bytes, pos));
    if (pos === 0 && baseOffset !== range.baseOffset) return false;
    const size = batchSizeAt(bytes, pos);
    if (size < RECORD_BATCH_OVERHEAD || pos + size > bytes.length) return false;
    lastOffset = baseOffset + lastOffsetDeltaOf(bytes, pos);
    pos += size;
  }
  return pos === bytes.length && lastOffset === range.lastOffset;
}

function readAt(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.read(fd, buffer, offset, length, position, (error, n) => (error ? reject(error) : resolve(n))),
  );
}

function closeQuietly(fd: number): void {
  fs.close(fd, () => undefined);
}
