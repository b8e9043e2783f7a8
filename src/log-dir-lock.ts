/**
 * The log-dir lock: Kafka takes a file lock on `<log.dir>/.lock` so two brokers never share a log
 * dir. Node has no portable flock, so the lock file holds the owner's pid and, on Linux, its start
 * time (/proc/<pid>/stat field 22, clock ticks since boot): a dir whose `.lock` names another live
 * process is refused; a stale lock is taken over: its owner is gone (e.g. SIGKILL), is a zombie not
 * yet reaped, or its pid now belongs to a process that started at another time (pid reuse).
 * Used by the broker at start-up, before any actor opens the dir (async fs: the main thread never
 * blocks on files).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { createLogDir, notWritable } from './log-dir-validation';
import { errnoCode, EXIT_FAILURE, StartupError } from './startup-error';

export const LOCK_FILE = '.lock';

/** State and start time of a process from /proc/<pid>/stat, or null where there is no /proc. */
async function procStat(pid: number): Promise<{ state: string; startTicks: string } | null> {
  const stat = await fsp.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  // "pid (comm) state ...": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', startTicks: fields[19] ?? '' };
}

/**
 * Whether the lock's owner still runs: the pid exists (signal 0 probes without signalling), is not
 * a zombie, and started when the lock says (when it says).
 */
async function ownerAlive(pid: number, startTicks: string | undefined): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = await procStat(pid);
  if (stat === null) return true;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return startTicks === undefined || startTicks === stat.startTicks;
}

/** What {@link lockLogDir} found. */
export interface LogDirLock {
  /**
   * The pid of another process whose lock was left behind (it ended without a clean shutdown:
   * SIGKILL, a crash, power loss), or null when the dir was unlocked (clean shutdown, or new).
   */
  staleOwner: number | null;
}

/**
 * Takes the lock of `logDir` for this process (creating the dir). Throws a {@link StartupError}
 * naming the owner when another live process holds it, and one saying so when the dir cannot be
 * written.
 */
export async function lockLogDir(logDir: string): Promise<LogDirLock> {
  await createLogDir(logDir);
  const lockPath = path.join(logDir, LOCK_FILE);
  const self = await procStat(process.pid);
  const content = self === null ? `${process.pid}\n` : `${process.pid} ${self.startTicks}\n`;
  let staleOwner: number | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await fsp.writeFile(lockPath, content, { flag: 'wx' });
      return { staleOwner };
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') throw notWritable(logDir, code);
      if (code !== 'EEXIST') throw error;
    }
    const [pidText, startTicks] = (await fsp.readFile(lockPath, 'utf8').catch(() => '')).trim().split(/\s+/);
    const owner = Number(pidText);
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && (await ownerAlive(owner, startTicks))) {
      throw new StartupError(
        `log dir ${logDir} is in use by another broker (process ${owner} holds ${lockPath}): ` +
          `stop that broker, or choose another directory with --data-dir`,
        EXIT_FAILURE,
      );
    }
    // Stale (its owner is gone) or ours from an earlier start in this process: take it over. A
    // lock naming our pid with another start time was left by an earlier process (a container's
    // pid 1 restarting, say).
    const ours = owner === process.pid && (startTicks === undefined || startTicks === self?.startTicks);
    if (Number.isInteger(owner) && owner > 0 && !ours) staleOwner = owner;
    await fsp.rm(lockPath, { force: true });
  }
  throw new Error(`could not take the lock ${lockPath}`);
}

/** Releases the lock if this process holds it. */
export async function unlockLogDir(logDir: string): Promise<void> {
  const lockPath = path.join(logDir, LOCK_FILE);
  const owner = Number((await fsp.readFile(lockPath, 'utf8').catch(() => '')).trim().split(/\s+/)[0]);
  if (owner === process.pid) await fsp.rm(lockPath, { force: true });
}
