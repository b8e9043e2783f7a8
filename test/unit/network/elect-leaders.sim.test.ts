/**
 * The ElectLeaders handler really elects, through the controller, in a three-broker simulated
 * cluster (the real controller, replica managers and replicas): after a broker's crash and restart
 * leadership is off its preferred replica until a PREFERRED election moves it back, and an UNCLEAN
 * election elects a live out-of-sync replica of a partition whose whole ISR is down (the broker
 * keeps unclean.leader.election.enable=false, so only the request does it). Automatic leader
 * rebalancing is off, so every move seen here is the request's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BrokerNode } from '../../../src/broker-node';
import type { AnyApiHandler } from '../../../src/network/api-handler';
import { electLeadersHandler, PREFERRED_ELECTION, UNCLEAN_ELECTION } from '../../../src/network/handlers/elect-leaders';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { createLogger } from '../../../src/runtime/logger';
import { bootCluster, type ClusterSim } from '../../helpers/cluster-harness';

/** Broker `brokerId`'s network node on an endpoint of its own, its cache taken from the controller now. */
async function networkNode(cluster: ClusterSim, brokerId: number, name: string): Promise<BrokerNode> {
  const endpoint = cluster.sim.endpoint(`${name}/${brokerId}`);
  const node = new BrokerNode(cluster.configs[brokerId]!, createLogger({ level: 'silent' }), endpoint, {
    awaitApplied: () => Promise.resolve(),
  });
  node.applyImage(await cluster.image());
  return node;
}

/** ElectLeaders v2 through the handler on `node`: [topic, [partition, errorCode, errorMessage][]][] and the top-level code. */
async function elect(
  cluster: ClusterSim,
  node: BrokerNode,
  electionType: number,
  topicPartitions: { topic: string; partitions: number[] }[] | null,
) {
  const handler = electLeadersHandler as unknown as AnyApiHandler;
  const response: any = await cluster.sim.runUntil(
    Promise.resolve(
      handler.handle({
        apiKey: handler.apiKey,
        apiVersion: 2,
        correlationId: 1,
        clientId: 'sim',
        body: { electionType, topicPartitions, timeoutMs: 10_000 },
        broker: node,
        remote: 'sim',
      }),
    ),
  );
  return {
    errorCode: response.errorCode as number,
    results: (response.replicaElectionResults as any[]).map((t) => [
      t.topic,
      (t.partitionResult as any[]).map((p) => [p.partitionId, p.errorCode, p.errorMessage]),
    ]),
  };
}

/** Advances virtual time until `partition` of `topic` satisfies `done` (bounded), and returns it. */
async function waitFor(cluster: ClusterSim, topic: string, partition: number, done: (p: any) => boolean) {
  for (let i = 0; i < 120; i++) {
    const p = await cluster.partition(topic, partition);
    if (done(p)) return p;
    await cluster.advance(500);
  }
  assert.fail(`${topic}-${partition} did not reach the expected state`);
}

describe('ElectLeaders through the controller (simulation, three brokers)', () => {
  test('PREFERRED moves leadership back to the first replica after a crash and restart', async () => {
    const cluster = await bootCluster(21, { properties: { 'auto.leader.rebalance.enable': 'false' } });
    await cluster.createTopic('pref', 3, 3);
    const image = await cluster.image();
    const topic = image.topics.find((t) => t.name === 'pref')!;
    const ofZero = topic.partitions.find((p) => p.replicas[0] === 0);
    assert.ok(ofZero !== undefined && ofZero.leader === 0, 'broker 0 prefers and leads one partition');

    await cluster.crashBroker(0);
    await cluster.startBroker(0);
    const moved = await waitFor(cluster, 'pref', ofZero.partition, (p) => p.isr.includes(0));
    assert.notEqual(moved.leader, 0, 'leadership stayed where the crash moved it');

    const node = await networkNode(cluster, 1, 'elect-net');
    const all = await elect(cluster, node, PREFERRED_ELECTION, null);
    assert.equal(all.errorCode, ErrorCode.NONE);
    assert.deepEqual(all.results, [['pref', [[ofZero.partition, ErrorCode.NONE, null]]]], 'only the moved partition');
    const back = await cluster.partition('pref', ofZero.partition);
    assert.equal(back.leader, 0, 'the preferred replica leads again');
    assert.ok(back.leaderEpoch > moved.leaderEpoch, 'with a bumped leader epoch');
    assert.equal(node.topic('pref')?.partitions[ofZero.partition]?.leader, 0, "the node's cache took the new image");

    // Asked again, by name: nothing to do, in request order with repeats, unknown ones named.
    const again = await elect(cluster, node, PREFERRED_ELECTION, [
      { topic: 'pref', partitions: [ofZero.partition, ofZero.partition, 9] },
      { topic: 'nope', partitions: [0] },
    ]);
    const notNeeded = [ErrorCode.ELECTION_NOT_NEEDED, 'Leader election not needed for topic partition.'];
    assert.deepEqual(again.results, [
      [
        'pref',
        [
          [ofZero.partition, ...notNeeded],
          [ofZero.partition, ...notNeeded],
          [9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'No such partition as pref-9'],
        ],
      ],
      ['nope', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'No such topic as nope']]],
    ]);
    await cluster.sim.shutdown();
  });

  test('UNCLEAN elects a live out-of-sync replica of a partition whose ISR is all down', async () => {
    const cluster = await bootCluster(22, { properties: { 'auto.leader.rebalance.enable': 'false' } });
    await cluster.createTopic('dirty', 1, 3);
    const p = await cluster.partition('dirty');
    assert.equal(p.leader, p.replicas[0], 'a new topic is led by its preferred replica');
    const [first, second, last] = [p.leader, ...p.replicas.filter((b) => b !== p.leader)] as [number, number, number];
    // Crash the followers, then the leader: the ISR keeps only the leader, which is down.
    await cluster.crashBroker(second);
    await cluster.crashBroker(last);
    await cluster.crashBroker(first);
    const offline = await cluster.partition('dirty');
    assert.equal(offline.leader, -1, 'no leader');
    assert.deepEqual(offline.isr, [first]);
    await cluster.startBroker(second);
    const still = await cluster.partition('dirty');
    assert.equal(still.leader, -1, 'unclean.leader.election.enable=false: an out-of-sync replica does not lead');

    const node = await networkNode(cluster, second, 'elect-net');
    const preferred = await elect(cluster, node, PREFERRED_ELECTION, [{ topic: 'dirty', partitions: [0] }]);
    assert.deepEqual(
      preferred.results,
      [['dirty', [[0, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, 'The preferred leader was not available.']]]],
      `the preferred replica ${p.replicas[0]} is down`,
    );

    const unclean = await elect(cluster, node, UNCLEAN_ELECTION, [{ topic: 'dirty', partitions: [0] }]);
    assert.deepEqual(unclean, { errorCode: ErrorCode.NONE, results: [['dirty', [[0, ErrorCode.NONE, null]]]] });
    const elected = await cluster.partition('dirty');
    assert.equal(elected.leader, second, 'the live replica leads');
    assert.deepEqual(elected.isr, [second]);
    assert.ok(elected.leaderEpoch > p.leaderEpoch);
    const again = await elect(cluster, node, UNCLEAN_ELECTION, [{ topic: 'dirty', partitions: [0] }]);
    assert.equal(again.results[0]![1][0]![1], ErrorCode.ELECTION_NOT_NEEDED, 'it has a leader now');
    await cluster.sim.shutdown();
  });
});
