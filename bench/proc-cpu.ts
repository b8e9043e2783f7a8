/**
 * CPU time and memory of a broker process, read from /proc (Linux): utime + stime of every thread
 * of the process and of its live descendants (the Kafka fixture's pid is a bash that runs the JVM),
 * so a benchmark can divide a broker's own CPU by the megabytes it moved (issue 13, item 1).
 *
 * Source: proc(5), fields 14 (utime) and 15 (stime) of /proc/<pid>/stat, in clock ticks
 * (`getconf CLK_TCK`, 100 on Linux x86-64 and arm64), and VmRSS of /proc/<pid>/status.
 */
import * as fs from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ; 100 on every Linux Node runs on here). */
export const CLOCK_TICKS_PER_SEC = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, clock ticks. */
  ticks: number;
}

function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): field n is rest[n - 3].
  return { pid, ppid: Number(rest[1]), ticks: Number(rest[11]) + Number(rest[12]) };
}

/** `pid` and its live descendants. */
export function processTree(pid: number): number[] {
  const all: ProcStat[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s !== null) all.push(s);
  }
  const tree = new Set<number>([pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const s of all) {
      if (!tree.has(s.pid) && tree.has(s.ppid)) {
        tree.add(s.pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

/**
 * CPU time (user + system, all threads) of `pid` and its live descendants, in milliseconds.
 * Throws if `pid` itself is gone (a crashed broker must not read as 0 CPU).
 */
export function cpuTimeMs(pid: number): number {
  if (readStat(pid) === null) throw new Error(`no process ${pid} in /proc`);
  let ticks = 0;
  for (const p of processTree(pid)) ticks += readStat(p)?.ticks ?? 0;
  return (ticks * 1000) / CLOCK_TICKS_PER_SEC;
}

/** Resident set size of `pid` and its live descendants, in MiB (VmRSS of /proc/<pid>/status). */
export function rssMiB(pid: number): number {
  let kib = 0;
  for (const p of processTree(pid)) {
    try {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m !== null) kib += Number(m[1]);
    } catch {
      // exited between the listing and the read
    }
  }
  return kib / 1024;
}

/**
 * Runs `work` and returns its result with the CPU milliseconds `pid` (and descendants) spent
 * meanwhile: the broker's own cost of the load, not the load generator's.
 */
export async function measureCpu<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  const before = cpuTimeMs(pid);
  const result = await work();
  return { result, cpuMs: cpuTimeMs(pid) - before };
}
