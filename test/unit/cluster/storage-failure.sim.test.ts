/**
 * A replica whose fsync failed (issue 11 item 5, KIP-112's offline log dir) in the whole simulated
 * cluster, RF=3, min.insync.replicas=2, acks=all, write.caching=false: the replica goes offline
 * (KAFKA_STORAGE_ERROR to produce, fetch and ListOffsets), the controller takes it out of the ISR at
 * once and, if it led, elects another ISR member with a bumped leader epoch; it stays out of the ISR
 * (AlterPartition naming it: INELIGIBLE_REPLICA) however long its broker runs, and rejoins only after
 * that broker restarts, recovers, truncates to the leader and catches up. No acknowledged record is lost.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootCluster } from '../../helpers/cluster-harness';
import type { ClusterSim } from '../../helpers/cluster-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { CONTROLLER_ACTOR_ID } from '../../../src/controller/messages';
import { LATEST_TIMESTAMP } from '../../../src/protocol/sentinels';
import { replicaManagerRef } from '../../../src/replica-manager/messages';
import type { Logger } from '../../../src/io/logger';

const TOPIC = 't';
const LAG_MAX_MS = 10_000;
const SEEDS = [31, 32, 33];

/** A silent logger that keeps the messages of the warn lines (with their fields), for the cut-back check. */
function warnRecorder(): { logger: Logger; warnings: { msg: string; fields: Record<string, unknown> }[] } {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const make = (bindings: object): Logger => ({
    debug: () => undefined,
    info: () => undefined,
    error: () => undefined,
    warn: (fields, msg) => {
      if (typeof fields === 'object') warnings.push({ msg: msg ?? '', fields: { ...bindings, ...fields } });
    },
    child: (more) => make({ ...bindings, ...more }),
  });
  return { logger: make({}), warnings };
}

/**
 * Three brokers (replica.lag.time.max.ms = LAG_MAX_MS) logging their warnings to `warnings`, with
 * TOPIC created (one partition, RF=3, min.insync.replicas=2); `start` is its partition then.
 */
async function bootWithTopic(seed: number) {
  const { logger, warnings } = warnRecorder();
  const cluster = await bootCluster(seed, {
    logger,
    properties: { 'replica.lag.time.max.ms': String(LAG_MAX_MS) },
  });
  await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
  return { cluster, warnings, start: await cluster.partition(TOPIC) };
}

/** The marker a replica going offline leaves beside its partition directory (its recovery point then). */
function markerOf(cluster: ClusterSim, brokerId: number): string {
  return `${cluster.configs[brokerId]!.logDirs[0]}/${TOPIC}-0.storage-failure`;
}

/**
 * Before the restart: the marker holds the failed replica's recovery point, and its log holds more
 * (bytes whose fsync failed, still readable from the page cache). Returns that recovery point.
 */
function durablePointBeforeRestart(cluster: ClusterSim, failed: number): number {
  const marker = markerOf(cluster, failed);
  assert.ok(cluster.fs.exists(marker), 'the offline replica left its marker');
  const recoveryPoint = Number(cluster.fs.readFile(marker).toString('utf8').trim());
  assert.ok(Number.isSafeInteger(recoveryPoint) && recoveryPoint > 0, `recovery point ${recoveryPoint}`);
  return recoveryPoint;
}

/** After the restart: the recovery cut the log back to that point (logged), and the marker is gone. */
function assertCutBack(
  cluster: ClusterSim,
  failed: number,
  recoveryPoint: number,
  warnings: { msg: string; fields: Record<string, unknown> }[],
): void {
  const cut = warnings.find((w) => w.msg.startsWith('log cut back to the durable point'));
  assert.ok(cut, 'the restart cut the log back');
  assert.equal(cut.fields.logEndOffset, recoveryPoint, 'to the recovery point the failure left');
  assert.ok(!cluster.fs.exists(markerOf(cluster, failed)), 'the marker is gone');
}

/** Values produced with acks=all, answered NONE. */
async function produceAcked(cluster: ClusterSim, values: string[]): Promise<string[]> {
  const replies = await cluster.produce(TOPIC, values, -1);
  assert.deepEqual(
    replies.map((r) => r.errorCode),
    values.map(() => ErrorCode.NONE),
    'acks=all produces succeed',
  );
  return values;
}

/** Fails every fsync of broker `brokerId`'s files of the topic's partition 0 with EIO. */
function failFsyncsOf(cluster: ClusterSim, brokerId: number): void {
  const dir = `${cluster.configs[brokerId]!.logDirs[0]}/${TOPIC}-0/`;
  cluster.fs.fault = (op) => (op.syscall === 'fsync' && op.path.startsWith(dir) ? 'EIO' : null);
}

/**
 * The checks while the failed replica's broker runs on: every request to it answers
 * KAFKA_STORAGE_ERROR, it is out of the ISR past twice replica.lag.time.max.ms while acks=all goes on,
 * the controller lists it offline and refuses an ISR expansion naming it.
 */
async function assertStaysOffline(cluster: ClusterSim, failed: number, acked: string[]): Promise<void> {
  const p = await cluster.partition(TOPIC);
  const replica = cluster.replica(failed, p.topicId);
  const fetched = await cluster.ask(replica, 'replica.fetch', { fetchOffset: 0, maxBytes: 1 << 20, minOneBatch: true });
  assert.equal(fetched.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'a fetch from the offline replica');
  const listed = await cluster.ask(replica, 'replica.list-offsets', { timestamp: LATEST_TIMESTAMP });
  assert.equal(listed.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'a ListOffsets of the offline replica');
  const produced = await cluster.sim.runUntil(cluster.sendProduce(failed, p.topicId, 'refused', -1));
  assert.equal(produced.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'a produce to the offline replica');
  const local = await cluster.ask(replicaManagerRef(failed), 'replica-manager.await-applied', { offset: 0 });
  assert.deepEqual(
    local.offline.map((o) => `${o.topic}-${o.partition}`),
    [`${TOPIC}-0`],
    'its broker lists the partition offline (net.local-state)',
  );
  const image = await cluster.image();
  assert.deepEqual(
    image.brokers.find((b) => b.nodeId === failed)?.offlineReplicas,
    [{ topicId: p.topicId, partition: 0 }],
    'the controller holds the replica offline',
  );

  for (let i = 0; i < 3; i++) {
    acked.push(...(await produceAcked(cluster, [`during-${i}`])));
    await cluster.advance(LAG_MAX_MS);
    assert.ok(!(await cluster.partition(TOPIC)).isr.includes(failed), `still out of the ISR after ${i + 1} lag times`);
  }
  const now = await cluster.partition(TOPIC);
  const leaderEpoch = image.brokers.find((b) => b.nodeId === now.leader)!.brokerEpoch;
  const expansion = await cluster.ask(CONTROLLER_ACTOR_ID, 'controller.alter-partition', {
    brokerId: now.leader,
    brokerEpoch: leaderEpoch,
    topicId: now.topicId,
    partition: 0,
    leaderEpoch: now.leaderEpoch,
    partitionEpoch: now.partitionEpoch,
    newIsr: [...now.isr, failed].sort((a, b) => a - b),
  });
  assert.equal(expansion.errorCode, ErrorCode.INELIGIBLE_REPLICA, 'an ISR expansion naming the offline replica');
  assert.equal(cluster.logValues(failed, TOPIC).filter((r) => r.value.startsWith('during-')).length, 0);
}

/** After the restart of the failed replica's broker: back in the ISR, logs identical, nothing acknowledged lost. */
async function assertRejoins(cluster: ClusterSim, failed: number, acked: string[]): Promise<void> {
  await cluster.waitFor(`broker ${failed} rejoins the ISR after its restart`, async () =>
    (await cluster.partition(TOPIC)).isr.includes(failed),
  );
  const image = await cluster.image();
  assert.equal(image.brokers.find((b) => b.nodeId === failed)?.offlineReplicas, undefined, 'a new registration');
  acked.push(...(await produceAcked(cluster, ['after'])));
  await cluster.converge(TOPIC);
  const values = cluster.logValues(0, TOPIC).map((r) => r.value);
  for (const b of [1, 2]) assert.deepEqual(cluster.logValues(b, TOPIC), cluster.logValues(0, TOPIC), `broker ${b}`);
  for (const v of acked) assert.ok(values.includes(v), `acknowledged ${v} is in the log`);
  assert.equal(await cluster.assertLogsMatchBelowHighWatermark(TOPIC), values.length);
  assert.ok((await cluster.assertOneLeaderPerEpoch()) >= 1);
}

describe('a replica whose fsync failed stays offline until its broker restarts (simulation, RF=3, min ISR 2, acks=all)', () => {
  for (const seed of SEEDS)
    test(`seed ${seed}: the leader's fsync fails: it goes offline, a follower leads (epoch+1), the waiting produce gets KAFKA_STORAGE_ERROR, it rejoins only after a crash and restart`, async () => {
      const { cluster, warnings, start } = await bootWithTopic(seed);
      const acked = await produceAcked(cluster, ['a0', 'a1', 'a2']);

      failFsyncsOf(cluster, start.leader);
      // Kafka's DelayedProduce finds the partition offline (getPartitionOrError) and answers KAFKA_STORAGE_ERROR.
      const waiting = await cluster.sim.runUntil(cluster.sendProduce(start.leader, start.topicId, 'b0', -1));
      assert.equal(waiting.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'the produce waiting at the failed leader');
      await cluster.waitFor('another replica leads', async () => {
        const p = await cluster.partition(TOPIC);
        return p.leader >= 0 && p.leader !== start.leader;
      });
      const failedOver = await cluster.partition(TOPIC);
      assert.equal(failedOver.leaderEpoch, start.leaderEpoch + 1, 'one election');
      assert.ok(!failedOver.isr.includes(start.leader), 'the failed leader left the ISR');
      assert.equal(
        failedOver.leader,
        start.replicas.find((b) => b !== start.leader),
        'the first live ISR member',
      );

      await assertStaysOffline(cluster, start.leader, acked);

      const recoveryPoint = durablePointBeforeRestart(cluster, start.leader);
      assert.ok(
        cluster.logValues(start.leader, TOPIC).length > recoveryPoint,
        'the failed leader holds b0 past its durable point',
      );
      cluster.fs.fault = null; // the operator replaced the disk
      await cluster.crashBroker(start.leader);
      await cluster.startBroker(start.leader);
      assertCutBack(cluster, start.leader, recoveryPoint, warnings);
      await assertRejoins(cluster, start.leader, acked);
      await cluster.sim.shutdown();
    });

  for (const seed of SEEDS)
    test(`seed ${seed}: a follower's fsync fails: it leaves the ISR at once (not after replica.lag.time.max.ms), acks=all goes on, it rejoins only after a stop and start`, async () => {
      const { cluster, warnings, start } = await bootWithTopic(seed);
      const follower = start.replicas.filter((b) => b !== start.leader)[seed % 2]!;
      const acked = await produceAcked(cluster, ['a0', 'a1']);

      failFsyncsOf(cluster, follower);
      const failedAtMs = cluster.sim.elapsedMs;
      // The follower fetches this and fails to fsync it; the leader's HW waits for it until the ISR shrinks.
      acked.push(...(await produceAcked(cluster, ['b0'])));
      await cluster.waitFor(
        `broker ${follower} leaves the ISR`,
        async () => !(await cluster.partition(TOPIC)).isr.includes(follower),
      );
      const shrunkAfterMs = cluster.sim.elapsedMs - failedAtMs;
      assert.ok(shrunkAfterMs < LAG_MAX_MS / 2, `at once, not after the lag time (${shrunkAfterMs} ms)`);
      const after = await cluster.partition(TOPIC);
      assert.equal(after.leader, start.leader, 'no election');
      assert.equal(after.leaderEpoch, start.leaderEpoch);

      await assertStaysOffline(cluster, follower, acked);

      const recoveryPoint = durablePointBeforeRestart(cluster, follower);
      cluster.fs.fault = null;
      await cluster.stopBroker(follower);
      await cluster.startBroker(follower);
      assertCutBack(cluster, follower, recoveryPoint, warnings);
      await assertRejoins(cluster, follower, acked);
      await cluster.sim.shutdown();
    });
});

describe('a storage failure of a crashed incarnation does not reach the restarted one (simulation)', () => {
  for (const seed of SEEDS)
    test(`seed ${seed}: the replica-offline message a fault delays past its broker's crash and restart is lost with the crashed broker: the restarted replica stays online and rejoins the ISR`, async () => {
      // Campaign counterexample 1165575262:0:79:76:81:73:82:89:89:89@//C:H: the old replica's
      // replica-offline, delayed 1587 ms, reached the restarted replica manager, which reported the
      // healthy new replica offline; with the other replicas offline too, the partition had no leader.
      const { cluster, start } = await bootWithTopic(seed);
      const follower = start.replicas.filter((b) => b !== start.leader)[seed % 2]!;
      const acked = await produceAcked(cluster, ['a0']);
      let delayed = 0;
      cluster.setFaults((envelope) => {
        if (envelope.type !== 'replica-manager.replica-offline') return 'deliver';
        delayed++;
        return { delayMs: 5_000 };
      });

      failFsyncsOf(cluster, follower);
      // acks=1: the leader answers at once; the follower fetches b0 and fails to fsync it.
      const replies = await cluster.produce(TOPIC, ['b0'], 1);
      assert.equal(replies[0]?.errorCode, ErrorCode.NONE, 'the acks=1 produce');
      await cluster.waitFor(`broker ${follower}'s replica goes offline`, async () =>
        cluster.fs.exists(markerOf(cluster, follower)),
      );
      assert.equal(delayed, 1, 'its replica-offline is held by the fault');

      cluster.fs.fault = null;
      await cluster.crashBroker(follower);
      await cluster.startBroker(follower);
      await cluster.advance(10_000); // past the held message's due time
      const local = await cluster.ask(replicaManagerRef(follower), 'replica-manager.await-applied', { offset: 0 });
      assert.deepEqual(local.offline, [], 'the restarted broker lists no replica offline');
      const image = await cluster.image();
      assert.equal(
        image.brokers.find((b) => b.nodeId === follower)?.offlineReplicas,
        undefined,
        'the controller holds no replica of the restarted broker offline',
      );
      cluster.setFaults(null);
      await assertRejoins(cluster, follower, acked);
      await cluster.sim.shutdown();
    });
});
