/**
 * Stateless CPU jobs (DESIGN.md "piscina pool"): pure functions of msgpack/structured-clone-able
 * input that an actor hands off so its own turn stays short, e.g. log compaction's decompress /
 * filter / recompress of segment bytes. An actor reaches them only through `ctx.cpu`
 * ({@link CpuJobs}); it never imports piscina (STYLE.md habit 6).
 *
 * - Production (worker-host.ts): one piscina pool per worker thread, created on the first job, with
 *   few threads (the pool's threads run `cpu-job-worker.ts`, which calls the job's export).
 * - Simulation and tests ({@link inlineCpuJobs}): the same function runs on the caller's thread in a
 *   microtask, so results and their order are deterministic.
 *
 * Buffers in an input or output cross a thread by structured clone and arrive as Uint8Array views:
 * a job function accepts either (see `asBuffer`).
 */
import { loadExport, type ModuleRef } from './module-ref';

/** The registered jobs: name -> the module export (relative to dist/src) that computes it. */
export const cpuJobKinds = {
  'compaction-offset-map': { module: 'storage/compaction-jobs', export: 'offsetMapJob' },
  'compaction-filter': { module: 'storage/compaction-jobs', export: 'filterJob' },
} as const satisfies Record<string, ModuleRef>;

/** A registered job name. */
export type CpuJobName = keyof typeof cpuJobKinds;

/** What an actor uses to run a CPU job (`ctx.cpu`). */
export interface CpuJobs {
  /**
   * Runs job `name` on `input`; resolves with its output or rejects with the job's error. Never
   * blocks the caller's thread in production; inline runners compute it in a microtask.
   */
  run<O = unknown>(name: CpuJobName, input: unknown): Promise<O>;
}

/** The job function of `name` (loaded on first use). */
export function loadCpuJob(name: string): (input: unknown) => unknown {
  const ref = (cpuJobKinds as Record<string, ModuleRef | undefined>)[name];
  if (ref === undefined) throw new Error(`unknown CPU job ${name}`);
  const fn = loadExport(ref);
  if (typeof fn !== 'function') throw new Error(`${ref.module}#${ref.export} is not a function`);
  return fn as (input: unknown) => unknown;
}

/** The task a piscina worker receives. */
export interface CpuTask {
  name: string;
  input: unknown;
}

/** Runs every job on the calling thread, in a microtask (simulation, tests, tools). */
export const inlineCpuJobs: CpuJobs = {
  run<O>(name: CpuJobName, input: unknown): Promise<O> {
    return Promise.resolve().then(() => loadCpuJob(name)(input) as O);
  },
};

/** Copies-free view of a Uint8Array (what structured clone delivers) as a Buffer. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
