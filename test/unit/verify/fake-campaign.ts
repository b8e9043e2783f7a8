/**
 * A small deterministic stand-in for `runCampaign` (src/verify/campaign.ts) for the runner's tests:
 * each run's report is a function of its run seed only. The runner loads it by module path in each
 * worker thread, as it loads the real campaign.
 */
import { runSeed, type VerifyReport } from '../../../src/verify/report';
import type { CampaignCall } from '../../../src/verify/runner';

/** The report of run `run` of a campaign seeded `seed`: counts derived from its run seed. */
export function fakeRunReport(seed: number, run: number, failing: boolean): VerifyReport {
  const s = runSeed(seed, run);
  const fails = failing && s % 5 === 0;
  return {
    mode: 'sim',
    runs: 1,
    faults: { 'broker-crash': s % 4, 'message-drop': (s >>> 3) % 5 },
    checks: { 'dense-offsets': 10 + (s % 7), 'log-matching': 3 },
    strategies: [
      { strategy: 'acks=1', records: 20, lost: s % 2, duplicated: 0 },
      { strategy: 'acks=all', records: 20 + (s % 3), lost: 0, duplicated: (s >>> 5) % 2 },
    ],
    violations: fails ? [{ invariant: 'acks-all-durable', message: `run ${run} lost offset ${s % 100}` }] : [],
    counterexample: fails
      ? {
          seed: s,
          path: `${run}:0`,
          commands: [`produce acks=all run ${run}`, 'crash broker 1'],
          logs: 'replica  offsets\nb0 p0    0..3\n',
          violation: { invariant: 'acks-all-durable', message: `run ${run} lost offset ${s % 100}` },
        }
      : null,
  };
}

async function campaign(options: CampaignCall, failing: boolean): Promise<VerifyReport> {
  if (options.runs !== options.firstRun + 1 || options.stride !== 1)
    throw new Error(`expected one run per call, got ${JSON.stringify(options)}`);
  const run = options.firstRun;
  // A delay that differs per run, so that with two workers runs finish out of order (the merged
  // report must not depend on it).
  await new Promise((resolve) => setTimeout(resolve, runSeed(options.seed, run) % 15));
  return fakeRunReport(options.seed, run, failing);
}

/** Never finds a counterexample. */
export function runCampaign(options: CampaignCall): Promise<VerifyReport> {
  return campaign(options, false);
}

/** Finds one in every run whose run seed is a multiple of 5. */
export function runCampaignFailing(options: CampaignCall): Promise<VerifyReport> {
  return campaign(options, true);
}

/** Throws in run 2 (after the others). */
export function runCampaignThrowing(options: CampaignCall): Promise<VerifyReport> {
  if (options.firstRun === 2) return Promise.reject(new Error('boom in run 2'));
  return campaign(options, false);
}
