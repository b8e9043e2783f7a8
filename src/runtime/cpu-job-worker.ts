/**
 * The piscina worker entry (compiled to dist/src/runtime/cpu-job-worker.js): runs one
 * {@link CpuTask} by calling the registered job's export (cpu-jobs.ts). Stateless.
 */
import { loadCpuJob, type CpuTask } from './cpu-jobs';

/** piscina calls the module's export with each task. */
export = function runCpuTask(task: CpuTask): unknown {
  return loadCpuJob(task.name)(task.input);
};
