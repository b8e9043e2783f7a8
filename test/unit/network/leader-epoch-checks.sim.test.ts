/**
 * The KIP-320 epoch checks of Fetch, ListOffsets and OffsetForLeaderEpoch are the replica's, not the
 * network layer's: in a three-broker simulated cluster, each handler runs on a real `BrokerNode`
 * whose metadata cache is held back at the image from before a failover, and still answers what the
 * replica's own role says (Kafka's Partition.checkCurrentLeaderEpoch): the new leader serves a client
 * that knows the new epoch although its cache names the old leader, an older epoch is
 * FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH, on the leader and on a follower alike.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BrokerNode } from '../../../src/broker-node';
import type { MetadataImage } from '../../../src/controller/metadata-records';
import { fetchHandler } from '../../../src/network/handlers/fetch';
import { listOffsetsHandler } from '../../../src/network/handlers/list-offsets';
import { offsetForLeaderEpochHandler } from '../../../src/network/handlers/offset-for-leader-epoch';
import type { AnyApiHandler } from '../../../src/network/api-handler';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { createLogger } from '../../../src/runtime/logger';
import { bootCluster, type ClusterSim } from '../../helpers/cluster-harness';
import { batch } from '../../helpers/sim-harness';
import { fetchRequestBody } from '../../helpers/fetch-request';

const TOPIC = 'epochs';

/** A network node of broker `brokerId` on an endpoint of its own, its cache fixed at `image`. */
function staleNode(cluster: ClusterSim, brokerId: number, image: MetadataImage): BrokerNode {
  const endpoint = cluster.sim.endpoint(`stale-net/${brokerId}`);
  const node = new BrokerNode(cluster.configs[brokerId]!, createLogger({ level: 'silent' }), endpoint, {
    awaitApplied: () => Promise.resolve(),
  });
  node.applyImage(image);
  return node;
}

/** Runs `handler` at `apiVersion` on `node` with `body`, driving the simulation until it answers. */
async function call(
  cluster: ClusterSim,
  node: BrokerNode,
  handler: AnyApiHandler,
  apiVersion: number,
  body: Record<string, unknown>,
): Promise<any> {
  const response = Promise.resolve(
    handler.handle({
      apiKey: handler.apiKey,
      apiVersion,
      correlationId: 1,
      clientId: 'sim',
      body,
      broker: node,
      remote: 'sim',
    }),
  );
  return cluster.sim.runUntil(response);
}

/** Fetch v12 of partition 0 from offset 0 with `currentLeaderEpoch`, no long poll: [errorCode, record bytes]. */
async function fetch(cluster: ClusterSim, node: BrokerNode, topicId: string, currentLeaderEpoch: number) {
  const r = await call(
    cluster,
    node,
    fetchHandler as unknown as AnyApiHandler,
    12,
    fetchRequestBody({ topic: TOPIC, topicId, currentLeaderEpoch }),
  );
  const p = r.responses[0].partitions[0];
  return [p.errorCode, p.records?.length ?? 0] as const;
}

/** ListOffsets v7 latest of partition 0 with `currentLeaderEpoch`: [errorCode, offset, leaderEpoch]. */
async function listLatest(cluster: ClusterSim, node: BrokerNode, currentLeaderEpoch: number) {
  const r = await call(cluster, node, listOffsetsHandler as unknown as AnyApiHandler, 7, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch, timestamp: -1, maxNumOffsets: 1 }] }],
  });
  const p = r.topics[0].partitions[0];
  return [p.errorCode, p.offset, p.leaderEpoch] as const;
}

/** OffsetForLeaderEpoch v4 for `leaderEpoch` with `currentLeaderEpoch`: [errorCode, leaderEpoch, endOffset]. */
async function epochEnd(cluster: ClusterSim, node: BrokerNode, currentLeaderEpoch: number, leaderEpoch: number) {
  const r = await call(cluster, node, offsetForLeaderEpochHandler as unknown as AnyApiHandler, 4, {
    replicaId: -1,
    topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch, leaderEpoch }] }],
  });
  const p = r.topics[0].partitions[0];
  return [p.errorCode, p.leaderEpoch, p.endOffset] as const;
}

describe('leader epoch checks are made by the replica, not the metadata cache (simulation, RF=3)', () => {
  test('after a failover, nodes whose cache still shows the old leader answer as the replicas do', async () => {
    const cluster = await bootCluster(11);
    await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
    const before = await cluster.partition(TOPIC);
    const produced = await cluster.ask(cluster.replica(before.leader, before.topicId), 'replica.produce', {
      records: batch(['a', 'b', 'c']),
      acks: -1,
      timeoutMs: 10_000,
    });
    assert.equal(produced.errorCode, ErrorCode.NONE);
    const staleImage = await cluster.image();

    await cluster.crashBroker(before.leader);
    const after = await cluster.partition(TOPIC);
    assert.notEqual(after.leader, before.leader);
    assert.ok(after.leaderEpoch > before.leaderEpoch);
    await cluster.awaitApplied((await cluster.image()).offset);
    const follower = after.isr.find((b) => b !== after.leader);
    assert.ok(follower !== undefined, 'a follower is left in the ISR');
    // HW 3 reaches the new leader with its followers' fetches.
    for (let i = 0; i < 40; i++) {
      const d = await cluster.ask(cluster.replica(after.leader, after.topicId), 'replica.describe', {});
      if (d.highWatermark === 3) break;
      await cluster.advance(250);
    }

    const leaderNode = staleNode(cluster, after.leader, staleImage);
    const followerNode = staleNode(cluster, follower, staleImage);
    assert.equal(leaderNode.topic(TOPIC)?.partitions[0]?.leader, before.leader, 'the cache lags: old leader');
    const current = after.leaderEpoch;
    const old = before.leaderEpoch;

    // The new leader's replica serves a client that knows the new epoch, or sends none.
    const [fetchCode, fetchBytes] = await fetch(cluster, leaderNode, after.topicId, current);
    assert.equal(fetchCode, ErrorCode.NONE);
    assert.ok(fetchBytes > 0, 'the records below the HW');
    assert.equal((await fetch(cluster, leaderNode, after.topicId, -1))[0], ErrorCode.NONE);
    assert.deepEqual(await listLatest(cluster, leaderNode, current), [ErrorCode.NONE, 3, current]);
    assert.deepEqual(await epochEnd(cluster, leaderNode, current, old), [ErrorCode.NONE, old, 3]);

    // An older epoch is fenced, a newer one unknown, with Kafka's -1 sentinels.
    assert.deepEqual(await fetch(cluster, leaderNode, after.topicId, old), [ErrorCode.FENCED_LEADER_EPOCH, 0]);
    assert.deepEqual(await fetch(cluster, leaderNode, after.topicId, current + 1), [ErrorCode.UNKNOWN_LEADER_EPOCH, 0]);
    assert.deepEqual(await listLatest(cluster, leaderNode, old), [ErrorCode.FENCED_LEADER_EPOCH, -1, -1]);
    assert.deepEqual(await listLatest(cluster, leaderNode, current + 1), [ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1]);
    assert.deepEqual(await epochEnd(cluster, leaderNode, old, old), [ErrorCode.FENCED_LEADER_EPOCH, -1, -1]);
    assert.deepEqual(await epochEnd(cluster, leaderNode, current + 1, old), [ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1]);

    // A follower checks the epoch first too, then says it does not lead.
    assert.deepEqual(await fetch(cluster, followerNode, after.topicId, old), [ErrorCode.FENCED_LEADER_EPOCH, 0]);
    assert.deepEqual(await fetch(cluster, followerNode, after.topicId, current), [ErrorCode.NOT_LEADER_OR_FOLLOWER, 0]);
    assert.deepEqual(await listLatest(cluster, followerNode, current), [ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1]);
    assert.deepEqual(await epochEnd(cluster, followerNode, current + 1, old), [ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1]);
    await cluster.sim.shutdown();
  });
});
