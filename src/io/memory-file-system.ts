/**
 * The simulation's disk: an in-memory {@link FileSystem} that remembers, for every file, what is
 * durable (synced) and what is only "in the page cache", so a simulated crash can lose or tear the
 * unsynced part. Deterministic: no clock, no randomness unless a {@link Random} is passed to `crash`.
 *
 * What is modelled (and what is simplified):
 * - File contents: every `write`/`truncate` since the file's last `sync()` is pending. `sync()` makes
 *   the whole current content durable. A crash reverts each file to its durable content.
 * - Asynchronous fsync (`syncAsync`): it covers the operations made BEFORE the call. When it
 *   completes, the file's durable content becomes its content as of the call (never less durable
 *   than it already is); operations made while it was in flight stay pending. A crash before it
 *   completes makes it fail (EIO) and leaves the durable content as it was. By default it completes
 *   on a microtask, in call order (deterministic); with `{ asyncSyncs: 'manual' }` it waits for
 *   {@link MemoryFileSystem.completeSyncs}, so tests can interleave appends and crashes with it; with a
 *   {@link SyncScheduler} set ({@link MemoryFileSystem.setSyncScheduler}) the simulation decides when
 *   each completes and whether it fails (the disk itself keeps no clock and draws no random number).
 * - Directory entries: a file created by `open(.., 'rw')`, a `rename` and an `unlink` change the
 *   directory's current entries only; `syncDir(dir)` makes that directory's current entries durable.
 *   After a crash a file that was created but whose directory was never synced is gone, and an
 *   unlinked file whose directory was not synced is back (with its durable content).
 * - Simplification: directories themselves are durable at once: `mkdirp`, `rmrf` and renaming a
 *   directory never need a `syncDir` (Kafka fsyncs the parent after creating a partition directory;
 *   we do not model losing a directory).
 * - Torn write (`crash({ kind: 'torn-last-write' })`): one file (the surviving file written last, or
 *   `path`) keeps a prefix of its pending operations: writes in order up to `keepBytes` written bytes
 *   (a write longer than the remaining budget is kept partially), with the truncations between them.
 *   Every other file loses all its pending operations, truncations included.
 * - Handles opened before a crash are dead afterwards: any use throws `EBADF`.
 * - `flipByte` corrupts a byte "at rest": in both the current and the durable content.
 * - A full disk and failing I/O (F15 DiskFull, F16 DiskError): with {@link MemoryFileSystem.capacityBytes}
 *   set, a write or a growing truncation that would take the files' total size past it fails with
 *   ENOSPC, a write after storing the part that still fits (as write(2) stores a short count and
 *   node's write loop then gets ENOSPC). A {@link FaultHook} ({@link MemoryFileSystem.fault}) may fail
 *   any open, write, ftruncate, fsync (file or directory) or rename with an errno of its choice, before
 *   it has any effect; hooks added with {@link MemoryFileSystem.addFault} are asked after it. A failed fsync makes nothing durable (the operations stay pending), so a
 *   crash afterwards loses them. Simplification: the size of a file that is unlinked but still open
 *   no longer counts against the capacity.
 */
import { posix } from 'node:path';
import type { Random } from './random';
import type { FileHandle, FileSystem } from './file-system';

/** How a {@link MemoryFileSystem.crash} treats the unsynced state. */
export type CrashMode =
  | { kind: 'lose-unsynced' }
  | {
      kind: 'torn-last-write';
      /** Bytes of the torn file's pending writes to keep (in write order). Default: random or half. */
      keepBytes?: number;
      /** The file to tear; default: the surviving file with the most recent pending write. */
      path?: string;
    };

/** What a crash did (for test diagnostics). */
export interface CrashReport {
  /** Path of the torn file, or null when nothing was torn. */
  tornPath: string | null;
  /** Bytes of pending writes kept in the torn file. */
  keptBytes: number;
}

/** A write or truncation since the last sync; `seq` orders the operations of one file. */
type PendingOp =
  { kind: 'write'; seq: number; position: number; data: Buffer } | { kind: 'truncate'; seq: number; sizeBytes: number };

/** A file-system call a {@link FaultHook} may fail (`path` is the file's, or the directory's for a directory fsync). */
export interface FsOperation {
  syscall: 'open' | 'write' | 'ftruncate' | 'fsync' | 'rename';
  path: string;
  /** `open`: whether the call creates the file. */
  creates?: boolean;
}

/**
 * Decides whether `op` fails: returns an errno code (`ENOSPC`, `EIO`, ...) to throw (or, for an
 * asynchronous fsync, to reject with) before the call has any effect, or null to let it run.
 */
export type FaultHook = (op: FsOperation) => string | null;

/**
 * Decides when an asynchronous fsync of `path` completes: calls `complete` once, later (a timer of the
 * simulation), with null to let it make durable what it covers or with an errno (`EIO`, `ENOSPC`) to
 * fail it, making nothing durable. A crash before `complete` fails it with EIO whatever it passes.
 */
export type SyncScheduler = (path: string, complete: (errorCode: string | null) => void) => void;

/** Options of {@link MemoryFileSystem}. */
export interface MemoryFileSystemOptions {
  /**
   * When `syncAsync` completes: `microtask` (default) on a microtask after the call, in call order;
   * `manual` only when the test calls {@link MemoryFileSystem.completeSyncs}.
   */
  asyncSyncs?: 'microtask' | 'manual';
}

/** An asynchronous fsync in flight. */
interface QueuedSync {
  file: MemFile;
  path: string;
  /** Operations with seq <= upToSeq become durable. */
  upToSeq: number;
  generation: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** Builds a Node-style error with `code`, `syscall` and `path`, like node:fs throws. */
export function fsError(code: string, syscall: string, path: string, detail?: string): NodeJS.ErrnoException {
  const err = new Error(`${code}: ${detail ?? code.toLowerCase()}, ${syscall} '${path}'`) as NodeJS.ErrnoException;
  err.code = code;
  err.syscall = syscall;
  err.path = path;
  return err;
}

class MemFile {
  /** Current content is data[0, size); bytes in [size, data.length) are always zero. */
  data: Buffer = Buffer.alloc(0);
  size = 0;
  /** When null, the durable content is data[0, durableSize) (only appends since the last sync). */
  durableSnapshot: Buffer | null = null;
  durableSize = 0;
  pending: PendingOp[] = [];
  lastWriteSeq = 0;
  /** Sequence number of this file's last write or truncation. */
  opSeq = 0;

  durableContent(): Buffer {
    return Buffer.from(this.durableSnapshot ?? this.data.subarray(0, this.durableSize));
  }

  private protectDurable(fromPosition: number): void {
    if (this.durableSnapshot === null && fromPosition < this.durableSize) {
      this.durableSnapshot = Buffer.from(this.data.subarray(0, this.durableSize));
    }
  }

  private ensureCapacity(sizeBytes: number): void {
    if (sizeBytes <= this.data.length) return;
    const grown = Buffer.alloc(Math.max(sizeBytes, this.data.length * 2, 256));
    this.data.copy(grown, 0, 0, this.size);
    this.data = grown;
  }

  applyWrite(data: Uint8Array, position: number): void {
    this.protectDurable(position);
    this.ensureCapacity(position + data.length);
    this.data.set(data, position);
    this.size = Math.max(this.size, position + data.length);
  }

  applyTruncate(sizeBytes: number): void {
    this.protectDurable(sizeBytes);
    if (sizeBytes < this.size) this.data.fill(0, sizeBytes, this.size);
    else this.ensureCapacity(sizeBytes);
    this.size = sizeBytes;
  }

  sync(): void {
    this.durableSize = this.size;
    this.durableSnapshot = null;
    this.pending = [];
  }

  /**
   * Completes an asynchronous fsync started when `opSeq` was `upToSeq`: the pending operations up to
   * it become durable (applied in order to the durable content), later ones stay pending.
   */
  syncUpTo(upToSeq: number): void {
    let k = 0;
    while (k < this.pending.length && this.pending[k]!.seq <= upToSeq) k++;
    if (k === 0) return; // a later sync() already covered them
    if (k === this.pending.length) {
      this.sync();
      return;
    }
    const durable = new MemFile();
    durable.applyWrite(this.durableContent(), 0);
    for (const op of this.pending.slice(0, k)) {
      if (op.kind === 'write') durable.applyWrite(op.data, op.position);
      else durable.applyTruncate(op.sizeBytes);
    }
    const rest = this.pending.slice(k);
    const durableSize = durable.size;
    // The current content still starts with the new durable content unless a later operation
    // reaches below its end: then the durable content needs its own copy.
    const untouched = rest.every((op) =>
      op.kind === 'write' ? op.position >= durableSize : op.sizeBytes >= durableSize,
    );
    this.durableSnapshot = untouched ? null : Buffer.from(durable.data.subarray(0, durableSize));
    this.durableSize = durableSize;
    this.pending = rest;
  }

  pendingWriteBytes(): number {
    let n = 0;
    for (const op of this.pending) if (op.kind === 'write') n += op.data.length;
    return n;
  }

  /** Crash: back to durable content, then replays pending ops with a budget of `keepBytes` written bytes. */
  revert(keepBytes: number): number {
    const durable = this.durableContent();
    this.data = Buffer.alloc(0);
    this.size = 0;
    this.durableSnapshot = null;
    this.durableSize = 0;
    this.applyWrite(durable, 0);
    // A prefix of the pending ops survives: it stops once `keepBytes` written bytes are used up
    // (so with 0 nothing survives, truncations included).
    let budget = keepBytes;
    for (const op of this.pending) {
      if (budget <= 0) break;
      if (op.kind === 'truncate') {
        this.applyTruncate(op.sizeBytes);
        continue;
      }
      const kept = Math.min(budget, op.data.length);
      this.applyWrite(op.data.subarray(0, kept), op.position);
      budget -= kept;
      if (kept < op.data.length) break;
    }
    this.pending = [];
    // After the reboot what is on disk is all there is: it is durable now.
    this.sync();
    return keepBytes - Math.max(budget, 0);
  }
}

class MemDir {
  entries = new Map<string, MemNode>();
  durableEntries = new Map<string, MemNode>();
}

type MemNode = MemFile | MemDir;

class MemHandle implements FileHandle {
  private closed = false;
  constructor(
    private readonly owner: MemoryFileSystem,
    private readonly file: MemFile,
    private readonly path: string,
    private readonly mode: 'r' | 'rw',
    private readonly generation: number,
  ) {}

  private live(syscall: string): MemFile {
    if (this.closed) throw fsError('EBADF', syscall, this.path, 'handle closed');
    if (this.owner.generation !== this.generation)
      throw fsError('EBADF', syscall, this.path, 'handle from before a crash');
    return this.file;
  }

  read(buffer: Uint8Array, offset: number, length: number, position: number): number {
    const file = this.live('read');
    const n = Math.max(0, Math.min(length, file.size - position));
    if (n > 0) buffer.set(file.data.subarray(position, position + n), offset);
    return n;
  }

  write(data: Uint8Array, position: number): void {
    const file = this.live('write');
    if (this.mode === 'r') throw fsError('EBADF', 'write', this.path, 'opened read-only');
    this.owner.checkFault({ syscall: 'write', path: this.path });
    // A full disk stores what fits, then fails (write(2)'s short count, then ENOSPC).
    const room = this.owner.roomFor(file, position + data.length);
    const stored = room === null ? data : data.subarray(0, Math.max(0, room - position));
    if (stored.length > 0) {
      file.applyWrite(stored, position);
      file.pending.push({ kind: 'write', seq: ++file.opSeq, position, data: Buffer.from(stored) });
      file.lastWriteSeq = this.owner.nextWriteSeq();
    }
    if (stored.length < data.length) throw fsError('ENOSPC', 'write', this.path, 'no space left on device');
  }

  size(): number {
    return this.live('fstat').size;
  }

  truncate(sizeBytes: number): void {
    const file = this.live('ftruncate');
    if (this.mode === 'r') throw fsError('EBADF', 'ftruncate', this.path, 'opened read-only');
    this.owner.checkFault({ syscall: 'ftruncate', path: this.path });
    if (this.owner.roomFor(file, sizeBytes) !== null)
      throw fsError('ENOSPC', 'ftruncate', this.path, 'no space left on device');
    file.applyTruncate(sizeBytes);
    file.pending.push({ kind: 'truncate', seq: ++file.opSeq, sizeBytes });
    file.lastWriteSeq = this.owner.nextWriteSeq();
  }

  sync(): void {
    const file = this.live('fsync');
    this.owner.checkFault({ syscall: 'fsync', path: this.path });
    file.sync();
    this.owner.syncCount++;
  }

  syncAsync(): Promise<void> {
    const file = this.live('fsync');
    try {
      this.owner.checkFault({ syscall: 'fsync', path: this.path });
    } catch (error) {
      return Promise.reject(error);
    }
    return this.owner.queueSync(file, this.path);
  }

  close(): void {
    this.closed = true;
  }
}

/** In-memory {@link FileSystem} with durable-vs-current state per file and per directory (see module doc). */
export class MemoryFileSystem implements FileSystem {
  private readonly root = new MemDir();
  /** Bumped by each crash; handles from an older generation are dead. */
  generation = 0;
  /** Number of file fsyncs so far, asynchronous ones counted when they start (tests assert group commit). */
  syncCount = 0;
  /** Number of directory fsyncs so far. */
  syncDirCount = 0;
  private writeSeq = 0;
  private readonly asyncSyncs: 'microtask' | 'manual';
  /** Asynchronous fsyncs waiting for {@link completeSyncs} (manual mode), oldest first. */
  private readonly queuedSyncs: QueuedSync[] = [];
  /**
   * The disk's size: the files' total current size may not exceed it (ENOSPC, see module doc);
   * null (default) for an unbounded disk. Tests may change it at any time (a disk freed or grown).
   */
  capacityBytes: number | null = null;
  /** Fails chosen calls with an errno (see {@link FaultHook}); null (default) for none. */
  fault: FaultHook | null = null;
  /** More fault hooks, asked after {@link fault} in the order added (a simulation's fault rules). */
  private readonly addedFaults: FaultHook[] = [];
  private syncScheduler: SyncScheduler | null = null;
  /** Asynchronous fsyncs handed to the {@link syncScheduler} and not completed yet. */
  private readonly scheduledSyncs = new Set<QueuedSync>();

  constructor(options: MemoryFileSystemOptions = {}) {
    this.asyncSyncs = options.asyncSyncs ?? 'microtask';
  }

  /** @internal Starts an asynchronous fsync of `file` covering its operations so far. */
  queueSync(file: MemFile, path: string): Promise<void> {
    this.syncCount++;
    return new Promise<void>((resolve, reject) => {
      const sync: QueuedSync = { file, path, upToSeq: file.opSeq, generation: this.generation, resolve, reject };
      if (this.asyncSyncs === 'manual') this.queuedSyncs.push(sync);
      else if (this.syncScheduler !== null) this.scheduleSync(this.syncScheduler, sync);
      else queueMicrotask(() => this.finishSync(sync));
    });
  }

  private scheduleSync(scheduler: SyncScheduler, sync: QueuedSync): void {
    this.scheduledSyncs.add(sync);
    scheduler(sync.path, (errorCode) => {
      if (!this.scheduledSyncs.delete(sync)) return; // a crash failed it already
      if (errorCode === null || sync.generation !== this.generation) this.finishSync(sync);
      else sync.reject(fsError(errorCode, 'fsync', sync.path, 'injected fault'));
    });
  }

  /**
   * Hands every later asynchronous fsync to `scheduler` (null: back to the constructor's mode). Manual
   * mode takes precedence. Fsyncs already in flight complete as they were started.
   */
  setSyncScheduler(scheduler: SyncScheduler | null): void {
    this.syncScheduler = scheduler;
  }

  /** Adds a fault hook asked after {@link fault}; returns the function that removes it. */
  addFault(hook: FaultHook): () => void {
    this.addedFaults.push(hook);
    return () => {
      const index = this.addedFaults.indexOf(hook);
      if (index >= 0) this.addedFaults.splice(index, 1);
    };
  }

  private finishSync(sync: QueuedSync): void {
    if (sync.generation !== this.generation) {
      sync.reject(fsError('EIO', 'fsync', sync.path, 'interrupted by a crash'));
      return;
    }
    sync.file.syncUpTo(sync.upToSeq);
    sync.resolve();
  }

  /** Asynchronous fsyncs started and not yet completed (manual mode). */
  get pendingSyncs(): number {
    return this.queuedSyncs.length;
  }

  /**
   * Manual mode: completes the `count` oldest asynchronous fsyncs in flight (all by default), making
   * durable what each covered; their promises resolve on later microtasks. Returns how many completed.
   */
  completeSyncs(count = Number.POSITIVE_INFINITY): number {
    let done = 0;
    while (done < count && this.queuedSyncs.length > 0) {
      this.finishSync(this.queuedSyncs.shift()!);
      done++;
    }
    return done;
  }

  /** @internal Throws the errno the {@link fault} hook picks for `op`, if any. */
  checkFault(op: FsOperation): void {
    let code = this.fault?.(op) ?? null;
    for (const hook of this.addedFaults) code ??= hook(op);
    if (code !== null) throw fsError(code, op.syscall, op.path, 'injected fault');
  }

  /**
   * @internal Null when `file` may grow to `sizeBytes` within {@link capacityBytes}, else the largest
   * size it may have.
   */
  roomFor(file: MemFile, sizeBytes: number): number | null {
    if (this.capacityBytes === null || sizeBytes <= file.size) return null;
    const room = this.capacityBytes - (this.usedBytes() - file.size);
    return sizeBytes <= room ? null : Math.max(file.size, room);
  }

  /** Total current size of the files reachable from the root, in bytes (each file counted once). */
  usedBytes(): number {
    const seen = new Set<MemFile>();
    let total = 0;
    const walk = (dir: MemDir): void => {
      for (const node of dir.entries.values()) {
        if (node instanceof MemDir) walk(node);
        else if (!seen.has(node)) {
          seen.add(node);
          total += node.size;
        }
      }
    };
    walk(this.root);
    return total;
  }

  /** @internal */
  nextWriteSeq(): number {
    return ++this.writeSeq;
  }

  private static parts(path: string): string[] {
    return posix
      .resolve('/', path)
      .split('/')
      .filter((p) => p.length > 0);
  }

  private lookup(path: string, syscall: string): MemNode | undefined {
    let node: MemNode = this.root;
    for (const part of MemoryFileSystem.parts(path)) {
      if (!(node instanceof MemDir)) throw fsError('ENOTDIR', syscall, path);
      const next: MemNode | undefined = node.entries.get(part);
      if (next === undefined) return undefined;
      node = next;
    }
    return node;
  }

  private parentOf(path: string, syscall: string): { dir: MemDir; name: string } {
    const parts = MemoryFileSystem.parts(path);
    if (parts.length === 0) throw fsError('EPERM', syscall, path, 'root');
    const name = parts[parts.length - 1]!;
    const parent = this.lookup('/' + parts.slice(0, -1).join('/'), syscall);
    if (parent === undefined) throw fsError('ENOENT', syscall, path);
    if (!(parent instanceof MemDir)) throw fsError('ENOTDIR', syscall, path);
    return { dir: parent, name };
  }

  private file(path: string, syscall: string): MemFile {
    const node = this.lookup(path, syscall);
    if (node === undefined) throw fsError('ENOENT', syscall, path);
    if (node instanceof MemDir) throw fsError('EISDIR', syscall, path);
    return node;
  }

  private dir(path: string, syscall: string): MemDir {
    const node = this.lookup(path, syscall);
    if (node === undefined) throw fsError('ENOENT', syscall, path);
    if (!(node instanceof MemDir)) throw fsError('ENOTDIR', syscall, path);
    return node;
  }

  open(path: string, mode: 'r' | 'rw'): FileHandle {
    let node = this.lookup(path, 'open');
    if (node instanceof MemDir) throw fsError('EISDIR', 'open', path);
    if (node !== undefined) this.checkFault({ syscall: 'open', path, creates: false });
    if (node === undefined) {
      if (mode === 'r') throw fsError('ENOENT', 'open', path);
      const { dir, name } = this.parentOf(path, 'open');
      this.checkFault({ syscall: 'open', path, creates: true });
      node = new MemFile();
      dir.entries.set(name, node);
    }
    return new MemHandle(this, node, path, mode, this.generation);
  }

  exists(path: string): boolean {
    try {
      return this.lookup(path, 'stat') !== undefined;
    } catch {
      return false;
    }
  }

  mkdirp(path: string): void {
    let node: MemDir = this.root;
    for (const part of MemoryFileSystem.parts(path)) {
      let next = node.entries.get(part);
      if (next === undefined) {
        next = new MemDir();
        node.entries.set(part, next);
        node.durableEntries.set(part, next);
      }
      if (!(next instanceof MemDir)) throw fsError('EEXIST', 'mkdir', path);
      node = next;
    }
  }

  readdir(path: string): string[] {
    return [...this.dir(path, 'scandir').entries.keys()].sort();
  }

  readFile(path: string): Buffer {
    const file = this.file(path, 'open');
    return Buffer.from(file.data.subarray(0, file.size));
  }

  writeFileAtomic(path: string, data: Uint8Array): void {
    const tmp = `${path}.tmp`;
    const handle = this.open(tmp, 'rw');
    try {
      handle.truncate(0);
      handle.write(data, 0);
      handle.sync();
    } catch (error) {
      // As NodeFileSystem: the temp file goes (a full disk gets its space back); `path` is untouched.
      this.unlink(tmp);
      throw error;
    } finally {
      handle.close();
    }
    try {
      this.rename(tmp, path);
    } catch (error) {
      this.unlink(tmp);
      throw error;
    }
    this.syncDir(posix.dirname(posix.resolve('/', path)));
  }

  rename(from: string, to: string): void {
    this.checkFault({ syscall: 'rename', path: from });
    const src = this.parentOf(from, 'rename');
    const node = src.dir.entries.get(src.name);
    if (node === undefined) throw fsError('ENOENT', 'rename', from);
    const dst = this.parentOf(to, 'rename');
    if (dst.dir.entries.get(dst.name) instanceof MemDir) throw fsError('EISDIR', 'rename', to);
    src.dir.entries.delete(src.name);
    dst.dir.entries.set(dst.name, node);
    if (node instanceof MemDir) {
      // Directories are durable at once (module doc).
      src.dir.durableEntries.delete(src.name);
      dst.dir.durableEntries.set(dst.name, node);
    }
  }

  unlink(path: string): void {
    const { dir, name } = this.parentOf(path, 'unlink');
    const node = dir.entries.get(name);
    if (node === undefined) throw fsError('ENOENT', 'unlink', path);
    if (node instanceof MemDir) throw fsError('EISDIR', 'unlink', path);
    dir.entries.delete(name);
  }

  rmrf(path: string): void {
    if (MemoryFileSystem.parts(path).length === 0) throw fsError('EPERM', 'rm', path, 'root');
    let parent: { dir: MemDir; name: string };
    try {
      parent = this.parentOf(path, 'rm');
    } catch {
      return;
    }
    parent.dir.entries.delete(parent.name);
    parent.dir.durableEntries.delete(parent.name);
  }

  syncDir(path: string): void {
    const dir = this.dir(path, 'fsync');
    this.checkFault({ syscall: 'fsync', path });
    dir.durableEntries = new Map(dir.entries);
    this.syncDirCount++;
  }

  // ---- simulation controls -------------------------------------------------------------------

  /**
   * Simulates a power loss / kernel crash: every directory goes back to its durable entries and
   * every surviving file to its durable content, except that in `torn-last-write` mode one file keeps
   * a prefix of its pending writes (see module doc). `random` picks `keepBytes` when the mode does
   * not give it (uniform in [0, pending bytes]); without either, half the pending bytes are kept.
   * All handles opened before the crash become dead, and asynchronous fsyncs in flight fail with
   * EIO without making anything durable.
   */
  crash(mode: CrashMode, random?: Random): CrashReport {
    this.generation++;
    // Asynchronous fsyncs in flight never complete: they fail, having made nothing durable.
    for (const sync of this.queuedSyncs.splice(0)) this.finishSync(sync);
    for (const sync of [...this.scheduledSyncs]) {
      this.scheduledSyncs.delete(sync);
      this.finishSync(sync);
    }
    const survivors = new Map<MemFile, string>();
    const walk = (dir: MemDir, prefix: string): void => {
      for (const [name, node] of dir.durableEntries) {
        const path = `${prefix}/${name}`;
        if (node instanceof MemDir) walk(node, path);
        else if (!survivors.has(node)) survivors.set(node, path);
      }
    };
    walk(this.root, '');

    let torn: MemFile | null = null;
    if (mode.kind === 'torn-last-write') {
      if (mode.path !== undefined) {
        const wanted = posix.resolve('/', mode.path);
        for (const [file, path] of survivors) if (path === wanted) torn = file;
      } else {
        for (const file of survivors.keys()) {
          if (file.pending.length > 0 && (torn === null || file.lastWriteSeq > torn.lastWriteSeq)) torn = file;
        }
      }
    }

    let keptBytes = 0;
    let tornPath: string | null = null;
    for (const file of survivors.keys()) {
      if (file === torn) {
        const pendingBytes = file.pendingWriteBytes();
        const wanted =
          mode.kind === 'torn-last-write' && mode.keepBytes !== undefined
            ? mode.keepBytes
            : random !== undefined
              ? random.int(pendingBytes + 1)
              : Math.floor(pendingBytes / 2);
        keptBytes = file.revert(Math.max(0, Math.min(wanted, pendingBytes)));
        tornPath = survivors.get(file)!;
      } else {
        file.revert(0);
      }
    }

    const restore = (dir: MemDir): void => {
      dir.entries = new Map(dir.durableEntries);
      for (const node of dir.entries.values()) if (node instanceof MemDir) restore(node);
    };
    restore(this.root);
    return { tornPath, keptBytes };
  }

  /** Flips bits of the byte at `position` (xor `mask`) in both current and durable content. */
  flipByte(path: string, position: number, mask = 0xff): void {
    const file = this.file(path, 'flip');
    if (position < 0 || position >= file.size)
      throw new RangeError(`position ${position} outside ${path} (${file.size} bytes)`);
    file.data[position]! ^= mask;
    if (file.durableSnapshot !== null && position < file.durableSnapshot.length)
      file.durableSnapshot[position]! ^= mask;
  }

  /** Bytes written to `path` since its last sync (0 when fully synced). */
  unsyncedBytes(path: string): number {
    return this.file(path, 'stat').pendingWriteBytes();
  }

  /**
   * What of `path` a power loss would leave now: its durable content when its directory entry is
   * durable, else nothing (the checker's view of what a replica fsynced).
   */
  durableContent(path: string): Buffer {
    if (!this.exists(path) || !this.isDurableEntry(path)) return Buffer.alloc(0);
    return Buffer.from(this.file(path, 'stat').durableContent());
  }

  /** Whether `path` would survive a crash now (its directory entry is durable). */
  isDurableEntry(path: string): boolean {
    const { dir, name } = this.parentOf(path, 'stat');
    return dir.durableEntries.has(name);
  }
}
