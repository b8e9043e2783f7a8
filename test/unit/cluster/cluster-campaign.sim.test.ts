/**
 * The whole-cluster property campaign (cluster-campaign.ts) for a fixed fast-check seed and a few
 * runs, so the unit suite stays fast and replays the same schedules; the long campaign
 * (cluster.sim.long.test.ts) runs hundreds with fresh seeds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterCampaign, runCampaign } from './cluster-campaign';

test('campaign: 16 generated schedules of produce / crash / start / isolate / heal / time keep invariants 3, 4 and 5', async () => {
  const totals = await clusterCampaign(16, 25, 20261201);
  assert.ok(totals.acked > 0, 'acks=all records were acknowledged');
  assert.ok(totals.leaderEpochs > 16, `leaders changed (${totals.leaderEpochs} leader epochs over 16 runs)`);
});

test('a fixed schedule: a cut follower, acks=1 writes, the leader crashes, brokers return in turn', async () => {
  const stats = await runCampaign(7, [
    { kind: 'produce', acks: -1, count: 3 },
    { kind: 'isolate', broker: 1 },
    { kind: 'produce', acks: 1, count: 2 },
    { kind: 'advance', ms: 4000 },
    { kind: 'produce', acks: -1, count: 2 },
    { kind: 'crash-leader' },
    { kind: 'heal' },
    { kind: 'produce', acks: -1, count: 2 },
    { kind: 'crash-leader' },
    { kind: 'start', broker: 0 },
    { kind: 'start', broker: 1 },
    { kind: 'produce', acks: 1, count: 2 },
    { kind: 'start', broker: 2 },
    { kind: 'advance', ms: 2000 },
  ]);
  assert.ok(stats.acked >= 3, `acks=all records acknowledged: ${stats.acked}`);
  assert.ok(stats.leaderEpochs >= 2, 'the leader changed');
});
