/**
 * `skiff verify`'s runner: the runs of a campaign spread over worker threads. Run `r` (0..runs-1) is
 * one call of the campaign function for that run alone (`firstRun: r`, `runs: r + 1`), so it is the
 * same on any thread; an idle worker takes the next run index from a queue. The per-run reports are
 * merged in run order, and only up to the lowest run that found a counterexample: the merged report
 * (and so the printed text) is the same for any number of workers, and the same as one thread's
 * `runCampaign` over the whole campaign, which stops at its first counterexample too. Once a run
 * fails, no run past it is handed out and the workers still busy past it are terminated.
 *
 * These are ordinary Node worker_threads (this is the CLI tool, not actor code). The worker script is
 * runner-worker.js beside this file, so it works from dist/ of a checkout or an installed package.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { CampaignOptions, runCampaign } from './campaign';
import { mergeReports, type VerifyReport } from './report';

export { PLANTED_BUGS, type PlantedBug } from '../replica/planted-bugs';

/**
 * The options of a campaign that are the same for every run: campaign.ts's `CampaignOptions` without
 * `firstRun`, `stride` and `replay` (the runner sets them per run) and `onRun` (a function does not
 * cross to a worker thread; {@link RunnerOptions.onRun} reports progress instead).
 */
export type CampaignSettings = Omit<CampaignOptions, 'firstRun' | 'stride' | 'replay' | 'onRun'>;

/** What the runner passes to the campaign function for one run (or `skiff verify --replay` for a replay). */
export type CampaignCall = CampaignSettings &
  Required<Pick<CampaignOptions, 'firstRun' | 'stride'>> &
  Pick<CampaignOptions, 'replay'>;

/**
 * Where the campaign function lives: a module path (absolute, or `require`-resolvable from here) and
 * its export, called as `fn(options): Promise<VerifyReport>`. A module rather than a function because
 * each worker thread loads its own copy. Default: `runCampaign` of ./campaign.
 */
export interface CampaignModule {
  module: string;
  exportName: string;
}

/** The real campaign, src/verify/campaign.ts (loaded only when a campaign runs: it brings fast-check). */
export const DEFAULT_CAMPAIGN_MODULE: CampaignModule = {
  module: path.join(__dirname, 'campaign'),
  exportName: 'runCampaign',
};

/** Options of {@link runOnWorkers}. */
export interface RunnerOptions {
  campaign: CampaignSettings;
  /** Worker threads (default {@link defaultWorkers}); 1 runs on this thread, without a worker. */
  workers?: number;
  campaignModule?: CampaignModule;
  /** Called after each finished run (in finishing order), with how many have finished. */
  onRun?: (finished: number) => void;
}

/** The default worker count: `os.availableParallelism()`, at most `runs`, at least 1. */
export function defaultWorkers(runs: number): number {
  return Math.max(1, Math.min(os.availableParallelism(), runs));
}

/** A message from main to a runner worker: run this one run. */
export interface RunRequest {
  run: number;
}

/** A runner worker's answer: the run's report, or the error it threw (message and stack). */
export type RunResponse = { run: number; report: VerifyReport } | { run: number; error: string };

/** What a runner worker is started with. */
export interface RunnerWorkerData {
  campaign: CampaignSettings;
  campaignModule: CampaignModule;
}

/** The shape of the campaign function, which campaign.ts's `runCampaign` has (loadCampaign checks it). */
export type CampaignFunction = (options: CampaignCall) => Promise<VerifyReport>;

/** Loads the campaign function of `ref` (for this thread). */
export function loadCampaign(ref: CampaignModule): CampaignFunction {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require(ref.module) as Record<string, unknown>;
  const fn = loaded[ref.exportName];
  if (typeof fn !== 'function') throw new Error(`${ref.module} exports no function ${ref.exportName}`);
  // Whatever module the ref names, it must take what runCampaign takes.
  return fn as typeof runCampaign satisfies CampaignFunction;
}

/** The options of run `run` alone. */
export function callForRun(campaign: CampaignSettings, run: number): CampaignCall {
  return { ...campaign, runs: run + 1, firstRun: run, stride: 1 };
}

/**
 * Runs the campaign's runs over `options.workers` threads and resolves with the merged report (see
 * the file comment). Rejects with the first error a run throws (the other workers are terminated).
 */
export async function runOnWorkers(options: RunnerOptions): Promise<VerifyReport> {
  const { campaign } = options;
  if (!(Number.isSafeInteger(campaign.runs) && campaign.runs >= 1))
    throw new RangeError(`runs must be a positive integer, got ${campaign.runs}`);
  const workers = Math.min(options.workers ?? defaultWorkers(campaign.runs), campaign.runs);
  if (!(Number.isSafeInteger(workers) && workers >= 1))
    throw new RangeError(`workers must be a positive integer, got ${options.workers}`);
  const campaignModule = options.campaignModule ?? DEFAULT_CAMPAIGN_MODULE;
  const state = new RunQueue(campaign.runs, options.onRun);
  if (workers === 1) {
    const runCampaign = loadCampaign(campaignModule);
    for (let run = state.next(); run !== null; run = state.next())
      state.finish(run, await runCampaign(callForRun(campaign, run)));
    return state.merged();
  }
  return runThreads(workers, { campaign, campaignModule }, state);
}

/** Hands out run indices and keeps the reports until the campaign is decided. */
class RunQueue {
  private readonly reports: (VerifyReport | undefined)[] = [];
  private nextRun = 0;
  private finished = 0;
  /** The lowest run that found a counterexample (runs when none has). */
  private firstFailure: number;

  constructor(
    private readonly runs: number,
    private readonly onRun: ((finished: number) => void) | undefined,
  ) {
    this.firstFailure = runs;
  }

  /** The next run to start, or null when every run that can matter has been handed out. */
  next(): number | null {
    if (this.nextRun >= this.firstFailure) return null;
    return this.nextRun++;
  }

  finish(run: number, report: VerifyReport): void {
    if (this.reports[run] !== undefined) throw new Error(`run ${run} reported twice`);
    this.reports[run] = report;
    this.finished++;
    if (report.counterexample !== null && run < this.firstFailure) this.firstFailure = run;
    this.onRun?.(this.finished);
  }

  /** Whether every run up to the first failure (or all of them) has its report. */
  done(): boolean {
    for (let run = 0; run < Math.min(this.firstFailure + 1, this.runs); run++)
      if (this.reports[run] === undefined) return false;
    return true;
  }

  /** Whether a running run's result can no longer matter (it is past the first failure). */
  moot(run: number): boolean {
    return run > this.firstFailure;
  }

  merged(): VerifyReport {
    const last = Math.min(this.firstFailure, this.runs - 1);
    const reports: VerifyReport[] = [];
    for (let run = 0; run <= last; run++) {
      const report = this.reports[run];
      if (report === undefined) throw new Error(`run ${run} has no report`);
      reports.push(report);
    }
    return mergeReports(reports);
  }
}

function runThreads(workers: number, data: RunnerWorkerData, state: RunQueue): Promise<VerifyReport> {
  const script = path.join(__dirname, 'runner-worker.js');
  return new Promise<VerifyReport>((resolve, reject) => {
    const threads: Worker[] = [];
    const running = new Map<Worker, number>();
    let settled = false;
    const finish = (error: Error | null): void => {
      if (settled) return;
      settled = true;
      for (const thread of threads) void thread.terminate();
      if (error !== null) reject(error);
      else {
        try {
          resolve(state.merged());
        } catch (err) {
          reject(err as Error);
        }
      }
    };
    const feed = (thread: Worker): void => {
      const run = state.next();
      if (run === null) {
        running.delete(thread);
        void thread.terminate();
      } else {
        running.set(thread, run);
        thread.postMessage({ run } satisfies RunRequest);
      }
      if (state.done()) return finish(null);
      // Runs past a counterexample cannot change the report: stop the workers busy with them.
      for (const [other, otherRun] of running) {
        if (!state.moot(otherRun)) continue;
        running.delete(other);
        void other.terminate();
      }
    };
    for (let k = 0; k < workers; k++) {
      const thread = new Worker(script, { workerData: data satisfies RunnerWorkerData });
      threads.push(thread);
      thread.on('message', (response: RunResponse) => {
        if (settled) return;
        if ('error' in response) return finish(new Error(`run ${response.run} failed: ${response.error}`));
        state.finish(response.run, response.report);
        feed(thread);
      });
      thread.on('error', (err) => finish(err));
      thread.on('exit', (code) => {
        if (!settled && running.has(thread)) finish(new Error(`verify worker exited with code ${code} mid-run`));
      });
      feed(thread);
    }
  });
}
