/**
 * Issue 12 item 4: the campaign must find each planted bug (src/replica/planted-bugs.ts) within its
 * budget of runs. Each bug gets a fixed campaign seed and the fault kinds that reach it; the run that
 * fails is reported without shrinking (the CLI shrinks: `skiff verify --planted-bug NAME`). The same
 * campaigns with the bug off break nothing (the CI campaign covers every fault kind; these repeat
 * the bug's own schedules). Runs and seconds to find each go to the test's output.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCampaign } from '../../../src/verify/campaign';
import type { PlantedBug } from '../../../src/replica/planted-bugs';
import type { FaultKind, InvariantName } from '../../../src/verify/report';

interface Budget {
  bug: PlantedBug;
  seed: number;
  runs: number;
  faults?: FaultKind[];
  /** The invariants the bug may break first. */
  breaks: InvariantName[];
}

const BUDGETS: Budget[] = [
  { bug: 'ackBeforeHighWatermark', seed: 1, runs: 100, breaks: ['acks-all-durable'] },
  // Found at run 84 of seed 2 until issue 13 changed start-up's fsyncs (another schedule from the same
  // seed); then at run 251 (seed 4: 316, seed 5: 33), so the budget is 400.
  { bug: 'truncateToHighWatermark', seed: 2, runs: 400, breaks: ['acks-all-durable', 'log-matching', 'converges'] },
  {
    bug: 'fencedLeaderAppends',
    seed: 3,
    runs: 200,
    faults: ['message-drop', 'broker-crash'],
    breaks: ['acks-all-durable', 'log-matching', 'converges'],
  },
];

for (const budget of BUDGETS)
  test(`the campaign finds the planted bug ${budget.bug} within ${budget.runs} runs`, async () => {
    const started = Date.now();
    const found = await runCampaign({
      seed: budget.seed,
      runs: budget.runs,
      plantedBug: budget.bug,
      shrink: false,
      ...(budget.faults ? { faults: budget.faults } : {}),
    });
    const seconds = (Date.now() - started) / 1000;
    console.log(
      JSON.stringify({ bug: budget.bug, runs: found.runs, seconds, violation: found.counterexample?.violation }),
    );
    assert.ok(found.counterexample !== null, `${budget.bug} not found in ${budget.runs} runs`);
    assert.ok(
      budget.breaks.includes(found.counterexample.violation.invariant),
      `${budget.bug} broke ${found.counterexample.violation.invariant}: ${found.counterexample.violation.message}`,
    );
    // The same runs with the bug off: nothing broken, so the violation was the bug's.
    const clean = await runCampaign({
      seed: budget.seed,
      runs: found.runs,
      shrink: false,
      ...(budget.faults ? { faults: budget.faults } : {}),
    });
    assert.equal(clean.counterexample, null, JSON.stringify(clean.counterexample?.violation));
  });
