/**
 * The runner of `skiff verify` (src/verify/runner.ts) with a fake campaign whose per-run reports are
 * functions of their run seeds: the merged report does not depend on the number of worker threads,
 * and stops at the lowest failing run.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { mergeReports } from '../../../src/verify/report';
import { runOnWorkers, type CampaignModule } from '../../../src/verify/runner';
import { fakeRunReport } from './fake-campaign';

const FAKE = path.join(__dirname, 'fake-campaign.js');
const fake = (exportName: string): CampaignModule => ({ module: FAKE, exportName });

describe('verify runner', () => {
  test('seed 7, 10 runs, no failure: one worker and two workers merge to the same report, every run', async () => {
    const campaign = { seed: 7, runs: 10 };
    const finished: number[] = [];
    const one = await runOnWorkers({ campaign, workers: 1, campaignModule: fake('runCampaign') });
    const two = await runOnWorkers({
      campaign,
      workers: 2,
      campaignModule: fake('runCampaign'),
      onRun: (n) => finished.push(n),
    });
    const expected = mergeReports(Array.from({ length: 10 }, (_, r) => fakeRunReport(7, r, false)));
    assert.deepEqual(one, expected);
    assert.deepEqual(two, expected);
    assert.equal(two.runs, 10);
    assert.deepEqual(finished, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  test('seed 1, 12 runs, runs 5, 8, 11 fail: the report ends at run 5 with its counterexample, for 1, 2 and 3 workers', async () => {
    const campaign = { seed: 1, runs: 12 };
    const expected = mergeReports([0, 1, 2, 3, 4, 5].map((r) => fakeRunReport(1, r, true)));
    assert.equal(expected.runs, 6);
    assert.equal(expected.counterexample?.path, '5:0');
    assert.deepEqual(
      expected.violations.map((v) => v.message),
      [expected.counterexample?.violation.message],
    );
    for (const workers of [1, 2, 3]) {
      const report = await runOnWorkers({ campaign, workers, campaignModule: fake('runCampaignFailing') });
      assert.deepEqual(report, expected, `${workers} workers`);
    }
  });

  test('workers are capped at runs: 4 workers for 2 runs run each run once', async () => {
    const report = await runOnWorkers({
      campaign: { seed: 3, runs: 2 },
      workers: 4,
      campaignModule: fake('runCampaign'),
    });
    assert.deepEqual(report, mergeReports([fakeRunReport(3, 0, false), fakeRunReport(3, 1, false)]));
  });

  test('a run that throws rejects the campaign with its run number, on a worker and on this thread', async () => {
    for (const workers of [1, 2]) {
      await assert.rejects(
        runOnWorkers({ campaign: { seed: 5, runs: 4 }, workers, campaignModule: fake('runCampaignThrowing') }),
        /boom in run 2/,
      );
    }
  });

  test('runs and workers must be positive integers', async () => {
    await assert.rejects(
      runOnWorkers({ campaign: { seed: 1, runs: 0 }, campaignModule: fake('runCampaign') }),
      /runs must be a positive integer/,
    );
    await assert.rejects(
      runOnWorkers({ campaign: { seed: 1, runs: 3 }, workers: 0, campaignModule: fake('runCampaign') }),
      /workers must be a positive integer/,
    );
  });
});
