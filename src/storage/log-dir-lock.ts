/**
 * The log-dir lock: Kafka takes a file lock on `<log.dir>/.lock` so two brokers never share a log
 * dir. Node has no portable flock, so the lock file holds the owner's pid: a dir whose `.lock`
 * names another live process is refused; a stale lock (the owner died, e.g. SIGKILL) is taken over.
 * Used by the broker at start-up, before any actor opens the dir (async fs: the main thread never
 * blocks on files).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = '.lock';

/** Whether a process with this pid exists (signal 0 probes without signalling). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock of `logDir` for this process (creating the dir). Throws an Error naming the owner
 * when another live process holds it.
 */
export async function lockLogDir(logDir: string): Promise<void> {
  await fsp.mkdir(logDir, { recursive: true });
  const lockPath = path.join(logDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await fsp.writeFile(lockPath, `${process.pid}\n`, { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number((await fsp.readFile(lockPath, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processAlive(owner)) {
      throw new Error(`log dir ${logDir} is in use by another broker (process ${owner} holds ${lockPath})`);
    }
    // Stale (its owner is gone) or ours from an earlier start in this process: take it over.
    await fsp.rm(lockPath, { force: true });
  }
  throw new Error(`could not take the lock ${lockPath}`);
}

/** Releases the lock if this process holds it. */
export async function unlockLogDir(logDir: string): Promise<void> {
  const lockPath = path.join(logDir, LOCK_FILE);
  const owner = Number((await fsp.readFile(lockPath, 'utf8').catch(() => '')).trim());
  if (owner === process.pid) await fsp.rm(lockPath, { force: true });
}
