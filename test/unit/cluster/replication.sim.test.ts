/**
 * Replication across brokers with the real actors (controller, replica managers, replicas, log-dir
 * actors) in the deterministic simulation: the whole cluster as `skiff start --nodes 3` wires it.
 * Checks DESIGN.md's invariants 3 (log matching below the HW) and 4 (acks=all survives failover),
 * and Kafka's documented loss of an acks=1 record its leader never replicated.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootCluster } from '../../helpers/cluster-harness';
import type { ClusterSim } from '../../helpers/cluster-harness';
import { batch } from '../../helpers/sim-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { CONTROLLER_ACTOR_ID } from '../../../src/controller/messages';
import { replicaManagerRef } from '../../../src/replica-manager/messages';

const TOPIC = 't';

/** Errors on which a Kafka client refreshes its metadata and retries (the leader moved or is not there yet). */
const RETRIABLE: ReadonlySet<number> = new Set([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE]);

/**
 * Produces one single-record batch per value to the partition's current leader, retrying as a client
 * does (up to 20 times, 100 ms apart) while the leader is moving; returns the final error codes.
 */
async function produce(cluster: ClusterSim, values: string[], acks: number): Promise<number[]> {
  const codes: number[] = [];
  for (const value of values) {
    let code: number = ErrorCode.UNKNOWN_SERVER_ERROR;
    for (let attempt = 0; attempt < 20; attempt++) {
      const p = await cluster.partition(TOPIC);
      if (p.leader < 0) code = ErrorCode.LEADER_NOT_AVAILABLE;
      else
        code = await cluster
          .ask(cluster.replica(p.leader, p.topicId), 'replica.produce', {
            records: batch([value]),
            acks,
            timeoutMs: 10_000,
          })
          .then(
            (reply) => reply.errorCode,
            () => ErrorCode.NOT_LEADER_OR_FOLLOWER, // the replica is not there (yet): as the network layer answers
          );
      if (!RETRIABLE.has(code)) break;
      await cluster.advance(100);
    }
    codes.push(code);
  }
  return codes;
}

/** Waits (virtual time) until every broker in `brokers` holds the same log bytes for the topic. */
async function converge(cluster: ClusterSim, brokers: number[], maxMs = 60_000): Promise<void> {
  for (let waited = 0; waited <= maxMs; waited += 500) {
    const logs = brokers.map((b) => cluster.logBytes(b, TOPIC).toString('hex'));
    if (logs.every((l) => l === logs[0])) return;
    await cluster.advance(500);
  }
  assert.fail(`replicas on ${brokers.join(',')} did not converge in ${maxMs} ms`);
}

describe('replication in a three-broker cluster (simulation)', () => {
  test('RF=3: acks=all is acknowledged once every ISR member holds the batch, and the logs are byte-identical', async () => {
    const cluster = await bootCluster(1);
    await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
    const p = await cluster.partition(TOPIC);
    assert.equal(p.replicas.length, 3);
    assert.deepEqual([...p.isr].sort(), [0, 1, 2]);
    const values = Array.from({ length: 10 }, (_, i) => `v${i}`);
    assert.deepEqual(
      await produce(cluster, values, -1),
      values.map(() => ErrorCode.NONE),
    );
    // acks=all came back: every ISR member holds all ten records.
    for (const b of [0, 1, 2])
      assert.deepEqual(
        cluster.logValues(b, TOPIC).map((r) => r.value),
        values,
        `broker ${b} holds every acknowledged record`,
      );
    await converge(cluster, [0, 1, 2]);
    const leader = await cluster.ask(cluster.replica(p.leader, p.topicId), 'replica.describe', {});
    assert.equal(leader.highWatermark, 10);
    await cluster.sim.shutdown();
  });

  test('a crash of the leader broker: a follower leads with a bumped epoch and every acks=all record; the old leader catches up', async () => {
    const cluster = await bootCluster(2);
    await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
    const before = await cluster.partition(TOPIC);
    const first = Array.from({ length: 20 }, (_, i) => `a${i}`);
    assert.deepEqual(
      await produce(cluster, first, -1),
      first.map(() => ErrorCode.NONE),
    );
    await cluster.crashBroker(before.leader);
    const after = await cluster.partition(TOPIC);
    assert.notEqual(after.leader, before.leader, 'a new leader');
    assert.ok(before.isr.includes(after.leader), 'from the ISR');
    assert.ok(after.leaderEpoch > before.leaderEpoch, 'with a larger leader epoch');
    assert.ok(!after.isr.includes(before.leader), 'the crashed broker left the ISR');
    const second = Array.from({ length: 5 }, (_, i) => `b${i}`);
    assert.deepEqual(
      await produce(cluster, second, -1),
      second.map(() => ErrorCode.NONE),
    );
    assert.deepEqual(
      cluster.logValues(after.leader, TOPIC).map((r) => r.value),
      [...first, ...second],
    );
    await cluster.startBroker(before.leader);
    await converge(cluster, [0, 1, 2]);
    assert.deepEqual(
      cluster.logValues(before.leader, TOPIC).map((r) => r.value),
      [...first, ...second],
    );
    // It re-enters the ISR once caught up.
    for (let i = 0; i < 60 && !(await cluster.partition(TOPIC)).isr.includes(before.leader); i++)
      await cluster.advance(500);
    assert.ok((await cluster.partition(TOPIC)).isr.includes(before.leader), 'back in the ISR');
    await cluster.sim.shutdown();
  });

  test('acks=1 records the old leader never replicated are gone after failover, as in Kafka', async () => {
    const cluster = await bootCluster(3);
    await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
    const before = await cluster.partition(TOPIC);
    assert.deepEqual(await produce(cluster, ['k0', 'k1', 'k2', 'k3', 'k4'], -1), Array(5).fill(ErrorCode.NONE));
    // Cut the followers off the leader (their fetches are dropped), then write with acks=1.
    const followers = before.replicas.filter((b) => b !== before.leader);
    const leaderReplica = cluster.replica(before.leader, before.topicId);
    cluster.sim.setFaults((envelope) =>
      (envelope.to === leaderReplica && envelope.from.startsWith('replica/')) ||
      (envelope.from === leaderReplica && envelope.to.startsWith('replica/'))
        ? 'drop'
        : 'deliver',
    );
    assert.deepEqual(await produce(cluster, ['lost5', 'lost6'], 1), [ErrorCode.NONE, ErrorCode.NONE]);
    assert.deepEqual(
      cluster.logValues(before.leader, TOPIC).map((r) => r.value),
      ['k0', 'k1', 'k2', 'k3', 'k4', 'lost5', 'lost6'],
      'the old leader appended the acks=1 records',
    );
    await cluster.crashBroker(before.leader);
    cluster.sim.setFaults(null);
    const after = await cluster.partition(TOPIC);
    assert.ok(followers.includes(after.leader));
    assert.deepEqual(await produce(cluster, ['n7'], -1), [ErrorCode.NONE]);
    await cluster.startBroker(before.leader);
    await converge(cluster, [0, 1, 2]);
    for (const b of [0, 1, 2])
      assert.deepEqual(
        cluster.logValues(b, TOPIC).map((r) => r.value),
        ['k0', 'k1', 'k2', 'k3', 'k4', 'n7'],
        `broker ${b}: the two acks=1 records are gone, the old leader truncated them`,
      );
    await cluster.sim.shutdown();
  });

  test('a replica restarted by the supervisor keeps the topic config it has now, not its spawn-time one', async () => {
    const cluster = await bootCluster(4);
    await cluster.createTopic(TOPIC, 1, 3);
    const p = await cluster.partition(TOPIC);
    const altered = await cluster.ask(CONTROLLER_ACTOR_ID, 'controller.alter-topic-configs', {
      resources: [{ topic: TOPIC, ops: [{ name: 'max.message.bytes', op: 'set', value: '100' }] }],
      incremental: true,
      validateOnly: false,
    });
    assert.equal(altered.results[0]!.errorCode, ErrorCode.NONE);
    await cluster.awaitApplied(altered.image.offset);
    const big = 'x'.repeat(500);
    assert.deepEqual(await produce(cluster, [big], 1), [ErrorCode.MESSAGE_TOO_LARGE]);
    const leader = cluster.replica(p.leader, p.topicId);
    cluster.sim.crash(leader);
    await cluster.sim.restart(leader);
    await cluster.sim.settle();
    assert.deepEqual(
      await produce(cluster, [big], 1),
      [ErrorCode.MESSAGE_TOO_LARGE],
      'still refused after the restart',
    );
    assert.deepEqual(await produce(cluster, ['small'], 1), [ErrorCode.NONE]);
    await cluster.sim.shutdown();
  });

  test('the replica managers register with broker epochs and the image lists every broker unfenced', async () => {
    const cluster = await bootCluster(5);
    const image = await cluster.image();
    assert.deepEqual(
      image.brokers.map((b) => [b.nodeId, b.fenced]),
      [
        [0, false],
        [1, false],
        [2, false],
      ],
    );
    assert.ok(image.brokers.every((b) => b.brokerEpoch >= 0));
    await cluster.crashBroker(1);
    const fenced = await cluster.image();
    assert.equal(fenced.brokers.find((b) => b.nodeId === 1)!.fenced, true);
    await cluster.startBroker(1);
    const back = await cluster.image();
    const again = back.brokers.find((b) => b.nodeId === 1)!;
    assert.equal(again.fenced, false);
    assert.ok(again.brokerEpoch > image.brokers.find((b) => b.nodeId === 1)!.brokerEpoch, 'a new broker epoch');
    // Its manager answers for its applied state.
    const state = await cluster.ask(replicaManagerRef(1), 'replica-manager.await-applied', { offset: back.offset });
    assert.ok(state.appliedOffset >= back.offset);
    await cluster.sim.shutdown();
  });
  test('a topic deleted while a broker was down leaves no log on it once it starts again', async () => {
    const cluster = await bootCluster(6);
    await cluster.createTopic(TOPIC, 1, 3);
    assert.deepEqual(await produce(cluster, ['x'], -1), [ErrorCode.NONE]);
    const dir = `${cluster.configs[2]!.logDirs[0]}/${TOPIC}-0`;
    assert.ok(cluster.fs.exists(dir));
    await cluster.crashBroker(2);
    const deleted = await cluster.ask(CONTROLLER_ACTOR_ID, 'controller.delete-topics', {
      topics: [{ name: TOPIC, topicId: null }],
    });
    assert.equal(deleted.results[0]!.errorCode, ErrorCode.NONE);
    await cluster.awaitApplied(deleted.image.offset);
    assert.ok(!cluster.fs.exists(`${cluster.configs[0]!.logDirs[0]}/${TOPIC}-0`), 'a running broker deletes at once');
    assert.ok(cluster.fs.exists(dir), 'the crashed broker still has it');
    await cluster.startBroker(2);
    assert.ok(!cluster.fs.exists(dir), 'removed at its start');
    await cluster.sim.shutdown();
  });
});
