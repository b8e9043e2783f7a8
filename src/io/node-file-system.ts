/**
 * The production {@link FileSystem}: synchronous node:fs calls (an actor blocks only its own worker
 * thread). `sync()` is fsync(2); `syncAsync()` is fsync(2) on libuv's thread pool (`fs.fsync` with a
 * callback on the same descriptor), so the actor's thread keeps working while the disk flushes; a
 * `close()` during it is deferred until it is done (the descriptor must not be reused under it).
 * `writeFileAtomic` is Kafka's checkpoint discipline: write
 * `path.tmp`, fsync it, rename it over `path`, fsync the directory. Errors are node:fs's own
 * (`ENOENT`, `EISDIR`, ...). Actor code reaches node:fs only through this class (`ctx.fs`): the layer
 * check (scripts/check-layers.ts) bans node:fs in every file actors import, this one excepted. Process-level
 * code outside that closure (src/broker.ts, src/log-dir-lock.ts, cli/) uses node:fs itself.
 */
import * as fs from 'node:fs';
import { dirname } from 'node:path';
import type { FileHandle, FileSystem } from './file-system';

class NodeFileHandle implements FileHandle {
  private fd: number | null;
  /** Asynchronous fsyncs in flight on `fd` (or on `closingFd` once closed). */
  private syncsInFlight = 0;
  /** A descriptor whose close waits for the syncs in flight. */
  private closingFd: number | null = null;
  private fileIdentity: string | null = null;

  constructor(
    fd: number,
    private readonly path: string,
  ) {
    this.fd = fd;
  }

  private get openFd(): number {
    if (this.fd === null) {
      const err = new Error(`EBADF: handle closed, '${this.path}'`) as NodeJS.ErrnoException;
      err.code = 'EBADF';
      throw err;
    }
    return this.fd;
  }

  identity(): string {
    if (this.fileIdentity === null) {
      const st = fs.fstatSync(this.openFd, { bigint: true });
      this.fileIdentity = `${st.dev}:${st.ino}`;
    }
    return this.fileIdentity;
  }

  read(buffer: Uint8Array, offset: number, length: number, position: number): number {
    const fd = this.openFd;
    let done = 0;
    while (done < length) {
      const n = fs.readSync(fd, buffer, offset + done, length - done, position + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  write(data: Uint8Array, position: number): void {
    const fd = this.openFd;
    let done = 0;
    while (done < data.length) {
      done += fs.writeSync(fd, data, done, data.length - done, position + done);
    }
  }

  size(): number {
    return fs.fstatSync(this.openFd).size;
  }

  truncate(sizeBytes: number): void {
    fs.ftruncateSync(this.openFd, sizeBytes);
  }

  sync(): void {
    fs.fsyncSync(this.openFd);
  }

  syncAsync(): Promise<void> {
    const fd = this.openFd;
    this.syncsInFlight++;
    return new Promise<void>((resolve, reject) => {
      fs.fsync(fd, (err) => {
        this.syncsInFlight--;
        if (this.syncsInFlight === 0 && this.closingFd !== null) {
          const closing = this.closingFd;
          this.closingFd = null;
          try {
            fs.closeSync(closing);
          } catch {
            // Nothing to do: the handle is closed as far as its owner knows.
          }
        }
        if (err) reject(err);
        else resolve();
      });
    });
  }

  close(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    if (this.syncsInFlight > 0) this.closingFd = fd;
    else fs.closeSync(fd);
  }
}

/** {@link FileSystem} over node:fs synchronous calls. */
export class NodeFileSystem implements FileSystem {
  open(path: string, mode: 'r' | 'rw'): FileHandle {
    const flags = mode === 'r' ? fs.constants.O_RDONLY : fs.constants.O_RDWR | fs.constants.O_CREAT;
    return new NodeFileHandle(fs.openSync(path, flags, 0o644), path);
  }

  exists(path: string): boolean {
    return fs.existsSync(path);
  }

  mkdirp(path: string): void {
    fs.mkdirSync(path, { recursive: true });
  }

  readdir(path: string): string[] {
    return fs.readdirSync(path).sort();
  }

  readFile(path: string): Buffer {
    return fs.readFileSync(path);
  }

  writeFileAtomic(path: string, data: Uint8Array): void {
    const tmp = `${path}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o644);
    try {
      let done = 0;
      while (done < data.length) done += fs.writeSync(fd, data, done, data.length - done, done);
      fs.fsyncSync(fd);
    } catch (error) {
      // A full disk (ENOSPC) or an I/O error: the temp file goes, so its space comes back; `path`
      // keeps its previous contents.
      fs.rmSync(tmp, { force: true });
      throw error;
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.renameSync(tmp, path);
    } catch (error) {
      fs.rmSync(tmp, { force: true });
      throw error;
    }
    this.syncDir(dirname(path));
  }

  rename(from: string, to: string): void {
    fs.renameSync(from, to);
  }

  unlink(path: string): void {
    fs.unlinkSync(path);
  }

  rmrf(path: string): void {
    fs.rmSync(path, { recursive: true, force: true });
  }

  syncDir(path: string): void {
    const fd = fs.openSync(path, fs.constants.O_RDONLY);
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}
