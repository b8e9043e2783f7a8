/**
 * The production {@link CpuJobs}: a piscina pool (a well-kept worker pool library) per worker
 * thread, created on the first job so threads that never compact pay nothing. The machine this
 * runs on is small, so each pool has at most `maxThreads` (default 1) threads, which exit after
 * `idleTimeoutMs` without work. Only runtime code imports this file.
 */
import * as path from 'node:path';
import { Piscina } from 'piscina';
import type { CpuJobName, CpuJobs, CpuTask } from './cpu-jobs';

/** Options of {@link createPiscinaCpuJobs}. */
export interface PiscinaCpuJobsOptions {
  /** Threads in the pool (>= 1; default 1). */
  maxThreads?: number;
  /** A thread idle this long exits (ms; default 30000). */
  idleTimeoutMs?: number;
}

/** A lazily created pool (see module doc); `close()` ends its threads. */
export function createPiscinaCpuJobs(options: PiscinaCpuJobsOptions = {}): CpuJobs & { close(): Promise<void> } {
  let pool: Piscina | null = null;
  return {
    run<O>(name: CpuJobName, input: unknown): Promise<O> {
      pool ??= new Piscina({
        filename: path.join(__dirname, 'cpu-job-worker.js'),
        minThreads: 0,
        maxThreads: options.maxThreads ?? 1,
        idleTimeout: options.idleTimeoutMs ?? 30_000,
      });
      return pool.run({ name, input } satisfies CpuTask) as Promise<O>;
    },
    async close(): Promise<void> {
      const p = pool;
      pool = null;
      if (p !== null) await p.destroy();
    },
  };
}
