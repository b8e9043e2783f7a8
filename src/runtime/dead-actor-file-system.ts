/**
 * The simulation's per-actor view of the shared disk: once the actor is dead (crashed, its broker
 * crashed, or stopped) nothing it still runs may touch the disk, as nothing of a terminated worker
 * runs in production (thread-runtime's crashBroker terminates the threads). In the simulation a dead
 * actor's promise continuations are real microtasks that may still resume (an asynchronous fsync
 * the disk completes later), so without this view a dead incarnation could, for instance, truncate
 * a segment file its restarted successor has just recovered and reads from.
 */
import type { FileHandle, FileSystem } from '../io/file-system';

/** Thrown by every call of a dead actor's file system or handle (not an errno: no disk error). */
export class DeadActorFileSystemError extends Error {
  constructor(actorId: string, call: string) {
    super(`actor ${actorId} is dead: ${call} refused`);
    this.name = 'DeadActorFileSystemError';
  }
}

/**
 * Wraps `fs` for actor `actorId`: while `isDead()` is false every call goes through unchanged; once
 * true every call (of the file system and of every handle opened through it) throws a
 * {@link DeadActorFileSystemError}, and an asynchronous fsync that settles after the death never
 * settles for the actor (like its pending requests, actor-context.ts), so its continuation stays
 * suspended.
 */
export function deadActorGuardedFileSystem(fs: FileSystem, isDead: () => boolean, actorId: string): FileSystem {
  const check = (call: string): void => {
    if (isDead()) throw new DeadActorFileSystemError(actorId, call);
  };
  const guardHandle = (handle: FileHandle, path: string): FileHandle => {
    const guarded: FileHandle = {
      read: (buffer, offset, length, position) => {
        check(`read of ${path}`);
        return handle.read(buffer, offset, length, position);
      },
      write: (data, position) => {
        check(`write of ${path}`);
        handle.write(data, position);
      },
      size: () => {
        check(`size of ${path}`);
        return handle.size();
      },
      truncate: (sizeBytes) => {
        check(`truncate of ${path}`);
        handle.truncate(sizeBytes);
      },
      sync: () => {
        check(`fsync of ${path}`);
        handle.sync();
      },
      close: () => {
        check(`close of ${path}`);
        handle.close();
      },
    };
    const syncAsync = handle.syncAsync?.bind(handle);
    if (syncAsync !== undefined) {
      guarded.syncAsync = () => {
        check(`fsync of ${path}`);
        return new Promise<void>((resolve, reject) => {
          syncAsync().then(
            () => {
              if (!isDead()) resolve();
            },
            (error: unknown) => {
              if (!isDead()) reject(error);
            },
          );
        });
      };
    }
    const identity = handle.identity?.bind(handle);
    if (identity !== undefined) guarded.identity = identity;
    return guarded;
  };
  return {
    open: (path, mode) => {
      check(`open of ${path}`);
      return guardHandle(fs.open(path, mode), path);
    },
    exists: (path) => {
      check(`exists of ${path}`);
      return fs.exists(path);
    },
    mkdirp: (path) => {
      check(`mkdirp of ${path}`);
      fs.mkdirp(path);
    },
    readdir: (path) => {
      check(`readdir of ${path}`);
      return fs.readdir(path);
    },
    readFile: (path) => {
      check(`readFile of ${path}`);
      return fs.readFile(path);
    },
    writeFileAtomic: (path, data) => {
      check(`writeFileAtomic of ${path}`);
      fs.writeFileAtomic(path, data);
    },
    rename: (from, to) => {
      check(`rename of ${from}`);
      fs.rename(from, to);
    },
    unlink: (path) => {
      check(`unlink of ${path}`);
      fs.unlink(path);
    },
    rmrf: (path) => {
      check(`rmrf of ${path}`);
      fs.rmrf(path);
    },
    syncDir: (path) => {
      check(`syncDir of ${path}`);
      fs.syncDir(path);
    },
  };
}
