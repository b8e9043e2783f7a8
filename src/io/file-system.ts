/**
 * The storage API actors use: a small synchronous file-system surface. Actors may block their own
 * worker thread on it (DESIGN.md); the network thread never calls it. The one asynchronous call is
 * the optional {@link FileHandle.syncAsync}, so that a group-commit fsync need not block the actor
 * (use {@link syncHandleAsync}, which falls back to `sync()`). Two implementations:
 * `NodeFileSystem` (node:fs) and `MemoryFileSystem` (the simulation's disk, which can lose unsynced
 * bytes or tear the last write on a simulated crash).
 *
 * Paths are POSIX-style strings. Errors are thrown as Node-style errors with a `code` (`ENOENT`, ...).
 */
export interface FileHandle {
  /** Reads up to `length` bytes at byte `position` into `buffer[offset..]`; returns bytes read (0 at EOF). */
  read(buffer: Uint8Array, offset: number, length: number, position: number): number;
  /** Writes all of `data` at byte `position`. */
  write(data: Uint8Array, position: number): void;
  /** Current size in bytes. */
  size(): number;
  /** Truncates (or extends with zeros) to `sizeBytes`. */
  truncate(sizeBytes: number): void;
  /** Makes every write so far durable (fsync / fdatasync). */
  sync(): void;
  /**
   * Optional asynchronous fsync: resolves once every write made BEFORE the call is durable (the
   * calling thread is free meanwhile). Writes made while it is in flight may or may not be covered:
   * a caller must never count them as durable. Rejects with the fsync error. Closing the handle
   * while a sync is in flight is allowed (the descriptor is released when the sync is done).
   */
  syncAsync?(): Promise<void>;
  /**
   * The open file's identity as `<dev>:<ino>` (decimal), present only where the file is a real file
   * that another thread of this process can open by its path and read (NodeFileSystem). A Fetch
   * answer names it so that the network thread, which reads the segment bytes itself, can tell it
   * opened the same file (src/network/segment-reader.ts). MemoryFileSystem has none.
   */
  identity?(): string;
  close(): void;
}

/** `handle.syncAsync()` when the handle has it, else `sync()` now (a throw becomes a rejection). */
export function syncHandleAsync(handle: FileHandle): Promise<void> {
  try {
    if (handle.syncAsync !== undefined) return handle.syncAsync();
    handle.sync();
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Waits for every promise to settle (so nothing started is left running unobserved), then rejects
 * with the first rejection, if any.
 */
export async function settleAll(promises: Array<Promise<unknown>>): Promise<void> {
  const results = await Promise.allSettled(promises);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
}

export interface FileSystem {
  /** Opens a file: `r` read-only, `rw` read-write creating it if missing. */
  open(path: string, mode: 'r' | 'rw'): FileHandle;
  exists(path: string): boolean;
  /** Creates a directory and its parents (no error if present). */
  mkdirp(path: string): void;
  /** Names (not paths) of the entries in a directory, sorted. */
  readdir(path: string): string[];
  /** Whole-file read; throws ENOENT if missing. */
  readFile(path: string): Buffer;
  /**
   * Atomic replace: writes `data` to `path.tmp`, fsyncs it, renames it over `path`, fsyncs the
   * directory (Kafka's checkpoint discipline). When writing or fsyncing the temp file fails (ENOSPC,
   * EIO) or the rename fails, the temp file is removed and `path` keeps its previous contents.
   */
  writeFileAtomic(path: string, data: Uint8Array): void;
  rename(from: string, to: string): void;
  unlink(path: string): void;
  /** Removes a directory tree (no error if missing). */
  rmrf(path: string): void;
  /** fsyncs a directory so that entries created/renamed in it are durable. */
  syncDir(path: string): void;
}
