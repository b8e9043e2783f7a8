/**
 * A broker's network layer and its replica manager's local state (`net.local-state` pushes and
 * `replica-manager.await-applied` replies: partitions offline here, group coordinators running here)
 * in the simulated cluster: a state that arrives after a newer one is ignored, so a push a fault
 * delayed does not take back a coordinator the newer state named (campaign counterexample
 * 395675786:0:4:14:9:10@W:B: the push of the image before __consumer_offsets existed, delayed
 * 267 ms, arrived after the one naming the new coordinator, and the coordinator's broker answered
 * COORDINATOR_LOAD_IN_PROGRESS for good).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootCluster } from '../../helpers/cluster-harness';
import { SimClient } from '../../../src/verify/sim-network';
import { ErrorCode } from '../../../src/protocol/error-codes';
import type { LocalBrokerState } from '../../../src/replica-manager/messages';

const TOPIC = 't';
const GROUP = 'g';
const SEEDS = [41, 42, 43];

describe('a delayed net.local-state push does not undo a newer local state (simulation)', () => {
  for (const seed of SEEDS)
    test(`seed ${seed}: the push of the image before __consumer_offsets, delayed past the one naming the coordinator, leaves the coordinator serving`, async () => {
      const cluster = await bootCluster(seed, { properties: { 'offsets.topic.num.partitions': '1' } });
      await cluster.createTopic(TOPIC, 1, 3);
      const client = new SimClient(cluster);
      let delayed = 0;
      // Only the states naming no coordinator are late: those of the images before the offsets topic.
      cluster.setFaults((envelope) => {
        if (envelope.type !== 'net.local-state') return 'deliver';
        if ((envelope.body as LocalBrokerState).coordinators.length > 0) return 'deliver';
        delayed++;
        return { delayMs: 500 };
      });
      // A metadata change: every replica manager applies it and pushes its state (late).
      assert.equal(await client.alterTopicConfigs(0, TOPIC, { 'min.insync.replicas': '1' }), ErrorCode.NONE);
      const pushedLate = delayed;
      assert.ok(pushedLate >= 1, 'the pushes of the config change are delayed');
      // The first FindCoordinator creates __consumer_offsets; its leader's manager starts the coordinator.
      const found = await client.findCoordinator(0, GROUP);
      assert.equal(found.errorCode, ErrorCode.NONE, 'FindCoordinator');
      assert.ok(found.nodeId >= 0);
      await cluster.advance(1_000); // past the late pushes' due time

      assert.equal(
        cluster.node(found.nodeId).groupCoordinatorFor(GROUP).errorCode,
        ErrorCode.NONE,
        `broker ${found.nodeId} still routes ${GROUP} to its coordinator`,
      );
      assert.deepEqual(
        await client.offsetFetch(found.nodeId, GROUP, TOPIC, 0),
        { errorCode: ErrorCode.NONE, offset: -1 },
        'OffsetFetch before any commit',
      );
      assert.equal(await client.offsetCommit(found.nodeId, GROUP, TOPIC, 0, 7), ErrorCode.NONE, 'OffsetCommit');
      assert.deepEqual(await client.offsetFetch(found.nodeId, GROUP, TOPIC, 0), {
        errorCode: ErrorCode.NONE,
        offset: 7,
      });
      await cluster.sim.shutdown();
    });
});
