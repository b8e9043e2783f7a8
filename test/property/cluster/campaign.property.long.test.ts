/**
 * The long form of the whole-cluster campaign (npm run test:long): ten times the CI campaign's runs,
 * schedules up to 40 commands, every fault kind, a different fixed seed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCampaign } from '../../../src/verify/campaign';

const RUNS = Number(process.env.SKIFF_PROPERTY_LONG_RUNS) || 3000;

test(`long whole-cluster campaign: ${RUNS} schedules of up to 40 commands`, { timeout: 30 * 60_000 }, async () => {
  const started = Date.now();
  const report = await runCampaign({ seed: 4_4_2026, runs: RUNS, maxCommands: 40 });
  console.log(JSON.stringify({ seconds: (Date.now() - started) / 1000, ...report }));
  assert.equal(report.counterexample, null, JSON.stringify(report.counterexample, null, 2));
  assert.equal(report.runs, RUNS);
  for (const strategy of ['acks=all', 'acks=all idempotent', 'commit-after-processing'] as const)
    assert.equal(report.strategies.find((s) => s.strategy === strategy)!.lost, 0, `no ${strategy} record lost`);
});
