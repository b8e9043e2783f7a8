/**
 * A full disk (ENOSPC on every write and fsync of one broker, SimFaults.diskFull) on the paths a
 * replica writes outside its appends (issue 12 item 1's findings, once test/unit/verify/findings):
 * the leader-epoch checkpoint a follower writes when it is elected leader, and the fsync of a
 * follower's truncation after a leader change. Kafka's LogDirFailureChannel takes the log dir offline
 * on any IOException (UnifiedLog.maybeHandleIOException, ReplicaManager.handleLogDirFailure); Skiff's
 * replica goes offline in the same way: KAFKA_STORAGE_ERROR to every request, out of the ISR at once,
 * another ISR member leads, and nothing throws uncaught (the simulation's default `onActorError:
 * 'fail'` fails the run on an uncaught actor error). RF=3, min.insync.replicas=1, acks=all. No
 * acknowledged record is lost, and once its disk has room and its broker restarts, the replica rejoins
 * the ISR with the leader's log.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootCluster } from '../../helpers/cluster-harness';
import type { ClusterSim } from '../../helpers/cluster-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { LATEST_TIMESTAMP } from '../../../src/protocol/sentinels';
import { readLeaderEpochCheckpoint } from '../../../src/storage/checkpoint';
import type { Logger } from '../../../src/io/logger';

const TOPIC = 't';
const LAG_MAX_MS = 10_000;

/** A silent logger that keeps the messages of the warn lines, for the check of which write failed. */
function warnRecorder(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    error: () => undefined,
    warn: (_fields, msg) => {
      warnings.push(msg ?? '');
    },
    child: () => logger,
  };
  return { logger, warnings };
}

/**
 * Three brokers (replica.lag.time.max.ms = LAG_MAX_MS) with TOPIC (one partition, RF=3,
 * min.insync.replicas=1); their warn lines go to `warnings`.
 */
async function bootWithTopic(seed: number, onActorError: 'fail' | 'restart' = 'fail') {
  const { logger, warnings } = warnRecorder();
  const cluster = await bootCluster(seed, {
    logger,
    onActorError,
    properties: { 'replica.lag.time.max.ms': String(LAG_MAX_MS) },
  });
  await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '1' });
  const start = await cluster.partition(TOPIC);
  // The controller elects the first live ISR member in replica order: `next` leads after the leader.
  const [next, other] = start.replicas.filter((b) => b !== start.leader) as [number, number];
  return { cluster, start, next, other, warnings };
}

/** Values produced with acks=all (retrying while the leader moves), each answered NONE. */
async function produceAcked(cluster: ClusterSim, values: string[], acks = -1): Promise<string[]> {
  const replies = await cluster.produce(TOPIC, values, acks);
  assert.deepEqual(
    replies.map((r) => r.errorCode),
    values.map(() => ErrorCode.NONE),
    `acks=${acks} produces succeed`,
  );
  return values;
}

/**
 * The full disk took `failed`'s replica offline: the controller holds it offline and out of the ISR,
 * `leader` leads in a newer epoch than `sinceEpoch`, and the replica answers a fetch, a ListOffsets
 * and a produce KAFKA_STORAGE_ERROR.
 */
async function assertOffline(cluster: ClusterSim, failed: number, leader: number, sinceEpoch: number): Promise<void> {
  const p = await cluster.partition(TOPIC);
  assert.equal(p.leader, leader, `broker ${leader} leads`);
  assert.ok(p.leaderEpoch > sinceEpoch, `a newer leader epoch (${p.leaderEpoch} > ${sinceEpoch})`);
  assert.ok(!p.isr.includes(failed), `broker ${failed} is out of the ISR ${p.isr}`);
  const image = await cluster.image();
  assert.deepEqual(
    image.brokers.find((b) => b.nodeId === failed)?.offlineReplicas,
    [{ topicId: p.topicId, partition: 0 }],
    'the controller holds the replica offline',
  );
  const replica = cluster.replica(failed, p.topicId);
  const fetched = await cluster.ask(replica, 'replica.fetch', { fetchOffset: 0, maxBytes: 1 << 20, minOneBatch: true });
  assert.equal(fetched.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'a fetch from the offline replica');
  const listed = await cluster.ask(replica, 'replica.list-offsets', { timestamp: LATEST_TIMESTAMP });
  assert.equal(listed.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'a ListOffsets of the offline replica');
  const produced = await cluster.sim.runUntil(cluster.sendProduce(failed, p.topicId, 'refused', -1));
  assert.equal(produced.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'a produce to the offline replica');
}

/** Every value of `acked` is in broker `brokerId`'s log, once. */
function assertHolds(cluster: ClusterSim, brokerId: number, acked: string[]): void {
  const values = cluster.logValues(brokerId, TOPIC).map((r) => r.value);
  for (const v of acked)
    assert.equal(values.filter((x) => x === v).length, 1, `acknowledged ${v} is in broker ${brokerId}'s log once`);
}

/**
 * Makes broker `brokerId`'s disk refuse: `ENOSPC` on every write and fsync (SimFaults.diskFull), or
 * `EIO` on every fsync of its files of TOPIC-0. Returns the function that heals it.
 */
function failDisk(cluster: ClusterSim, brokerId: number, code: 'ENOSPC' | 'EIO'): () => void {
  if (code === 'ENOSPC') {
    cluster.faults.diskFull(brokerId, true);
    return () => cluster.faults.diskFull(brokerId, false);
  }
  const dir = `${cluster.configs[brokerId]!.logDirs[0]}/${TOPIC}-0/`;
  return cluster.fs.addFault((op) => (op.syscall === 'fsync' && op.path.startsWith(dir) ? 'EIO' : null));
}

/**
 * The operator mends the disk of `failed` (`heal`) and its broker (and `crashed`, when down) restart: each
 * rejoins the ISR, the three logs end identical, every acknowledged value is in them, and at most one
 * leader led each epoch.
 */
async function assertRejoin(
  cluster: ClusterSim,
  failed: number,
  heal: () => void,
  crashed: number | null,
  acked: string[],
) {
  heal();
  await cluster.crashBroker(failed);
  await cluster.startBroker(failed);
  if (crashed !== null) await cluster.startBroker(crashed);
  await cluster.waitFor(
    'every replica is back in the ISR',
    async () => (await cluster.partition(TOPIC)).isr.length === 3,
    4 * LAG_MAX_MS,
  );
  const image = await cluster.image();
  assert.equal(image.brokers.find((b) => b.nodeId === failed)?.offlineReplicas, undefined, 'a new registration');
  acked.push(...(await produceAcked(cluster, ['after-restart'])));
  await cluster.converge(TOPIC);
  for (const b of [0, 1, 2]) assertHolds(cluster, b, acked);
  assert.equal(await cluster.assertLogsMatchBelowHighWatermark(TOPIC), cluster.logValues(0, TOPIC).length);
  assert.ok((await cluster.assertOneLeaderPerEpoch()) >= 1);
}

describe('a full disk on a replica becoming leader or truncating takes it offline (simulation, RF=3, acks=all)', () => {
  for (const [seed, onActorError] of [
    [1, 'fail'],
    [2, 'fail'],
    [1, 'restart'],
  ] as const)
    test(`seed ${seed} (onActorError ${onActorError}): the follower elected after the leader crashes cannot write its leader-epoch checkpoint: it goes offline and the other follower leads`, async () => {
      const { cluster, start, next, other, warnings } = await bootWithTopic(seed, onActorError);
      const acked = await produceAcked(cluster, ['a0', 'a1']);
      await cluster.converge(TOPIC);

      const heal = failDisk(cluster, next, 'ENOSPC');
      await cluster.crashBroker(start.leader);
      // `next` is elected first; assigning its epoch writes the checkpoint, which the disk refuses.
      await cluster.waitFor(`broker ${other} leads`, async () => (await cluster.partition(TOPIC)).leader === other);
      await assertOffline(cluster, next, other, start.leaderEpoch + 1);
      assert.ok(
        warnings.includes(`assigning leader epoch ${start.leaderEpoch + 1} failed on the disk`),
        'the epoch checkpoint is what failed',
      );
      const epochsOfNext = readLeaderEpochCheckpoint(
        cluster.fs,
        `${cluster.configs[next]!.logDirs[0]}/${TOPIC}-0/leader-epoch-checkpoint`,
      );
      assert.deepEqual(
        epochsOfNext.map((e) => e.epoch),
        [start.leaderEpoch],
        'its checkpoint on the disk never took the epoch it failed to lead',
      );

      acked.push(...(await produceAcked(cluster, ['b0', 'b1'])));
      assertHolds(cluster, other, acked);
      assert.equal(
        cluster.logValues(next, TOPIC).filter((r) => r.value.startsWith('b')).length,
        0,
        'the offline replica fetches nothing',
      );
      await assertRejoin(cluster, next, heal, start.leader, acked);
      await cluster.sim.shutdown();
    });

  for (const [seed, code] of [
    [2, 'ENOSPC'],
    [3, 'ENOSPC'],
    [2, 'EIO'],
  ] as const)
    test(`seed ${seed}: a follower truncating its divergent suffix after a leader change cannot fsync the truncation (${code}): it goes offline and acks=all goes on`, async () => {
      const { cluster, start, next, other, warnings } = await bootWithTopic(seed);
      const acked = await produceAcked(cluster, ['a0']);
      await cluster.converge(TOPIC);
      // `next` misses b0 (cut for less than the lag time: it stays in the ISR); `other` holds it.
      const cut = cluster.faults.partition(next, start.leader, 'both');
      await produceAcked(cluster, ['b0'], 1);
      await cluster.waitFor('the other follower holds b0', () => cluster.logValues(other, TOPIC).length === 2, 5_000);
      cluster.faults.remove(cut);
      const heal = failDisk(cluster, other, code);
      await cluster.crashBroker(start.leader);
      assert.equal((await cluster.partition(TOPIC)).leader, next, 'the follower without b0 leads');

      // `other` finds its b0 past the new epoch's start and truncates it: the truncation's fsync fails.
      await cluster.waitFor(
        `broker ${other} leaves the ISR`,
        async () => !(await cluster.partition(TOPIC)).isr.includes(other),
        LAG_MAX_MS / 2,
      );
      await assertOffline(cluster, other, next, start.leaderEpoch);
      assert.ok(warnings.includes('truncating the log to 1 failed on the disk'), 'the truncation is what failed');
      acked.push(...(await produceAcked(cluster, ['c0', 'c1'])));
      assertHolds(cluster, next, acked);
      assert.deepEqual(
        cluster.logValues(next, TOPIC).map((r) => r.value),
        ['a0', 'c0', 'c1'],
        "the new leader's log: b0 (acks=1, on no ISR member that leads) is gone",
      );
      await assertRejoin(cluster, other, heal, start.leader, acked);
      assert.ok(!cluster.logValues(other, TOPIC).some((r) => r.value === 'b0'), 'the rejoined replica dropped b0');
      await cluster.sim.shutdown();
    });
});
