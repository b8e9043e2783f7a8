/**
 * Long campaigns of the whole-cluster simulation (npm run test:long): the scenarios of
 * test/unit/cluster/ over many more seeds, and the property campaign over hundreds of fresh schedules.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterCampaign } from './cluster-campaign';
import { highWatermarkRun, powerLossClusterRun } from './scenarios';
import type { CrashMode } from '../../../src/io/memory-file-system';

const LONG_TIMEOUT_MS = 20 * 60_000;

test(
  'campaign over 1000 fresh schedules of up to 40 commands: invariants 3, 4 and 5',
  { timeout: LONG_TIMEOUT_MS },
  async () => {
    const totals = await clusterCampaign(1000, 40, undefined, 15 * 60_000);
    assert.ok(totals.leaderEpochs > 1000, `leaders changed: ${JSON.stringify(totals)}`);
  },
);

test('the HW bounds consumers over 200 seeds (invariant 2)', { timeout: LONG_TIMEOUT_MS }, async () => {
  let read = 0;
  for (let seed = 1000; seed < 1200; seed++) read += (await highWatermarkRun(seed)).consumed;
  assert.ok(read > 0);
});

test(
  'power loss of the whole cluster over 100 seeds per crash mode and write.caching',
  { timeout: LONG_TIMEOUT_MS },
  async () => {
    const modes: CrashMode[] = [{ kind: 'lose-unsynced' }, { kind: 'torn-last-write' }];
    for (const mode of modes)
      for (const writeCaching of [false, true]) {
        let acked = 0;
        let lost = 0;
        for (let seed = 2000; seed < 2100; seed++) {
          const run = await powerLossClusterRun(seed, mode, writeCaching);
          assert.equal(run.acked, run.survived + run.lost);
          acked += run.acked;
          lost += run.lost;
        }
        assert.ok(acked > 0);
        if (writeCaching) assert.ok(lost > 0, `${mode.kind}: write.caching=true lost some acknowledged records`);
        else assert.equal(lost, 0);
      }
  },
);
