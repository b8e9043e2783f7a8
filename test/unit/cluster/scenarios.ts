/**
 * Whole-cluster simulation scenarios that run for a few seeds in the unit tests (test/unit/cluster/)
 * and for many in the long campaign (cluster.sim.long.test.ts).
 */
import assert from 'node:assert/strict';
import { bootCluster, ClusterSim } from '../../helpers/cluster-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { decodeRecordBatches } from '../../../src/protocol/record-batch/decode';
import { Xoshiro128 } from '../../../src/io/random';
import type { ProduceReply } from '../../../src/replica/messages';
import type { CrashMode } from '../../../src/io/memory-file-system';

const TOPIC = 't';
/** Operations per high-watermark run. */
const OPS = 80;

/**
 * DESIGN.md invariant 2 under one seeded random workload (acks=all and acks=1 produces, consumer
 * fetches from the leader at random offsets, time, broker crashes and restarts, follower isolation):
 * no consumer gets an offset at or above the HW of its reply, and every consumed record is at the end
 * in every ISR member's log at the same offset.
 *
 * One seeded random workload; returns how many records consumers received, the final log's length and the leader epochs seen (to show what it exercised). */
export async function highWatermarkRun(
  seed: number,
): Promise<{ consumed: number; logLength: number; leaderEpochs: number }> {
  const random = new Xoshiro128(seed);
  const cluster = await bootCluster(seed, { properties: { 'replica.lag.time.max.ms': '3000' } });
  await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
  const pending: Promise<ProduceReply | null>[] = [];
  const consumed = new Map<number, string>();
  let isolated: number | null = null;
  for (let op = 0; op < OPS; op++) {
    const p = await cluster.partition(TOPIC);
    const roll = random.int(100);
    if (roll < 40) {
      if (p.leader >= 0 && cluster.up.has(p.leader))
        pending.push(
          cluster.sendProduce(p.leader, p.topicId, `v${op}`, random.int(2) === 0 ? -1 : 1).catch(() => null),
        );
    } else if (roll < 75) {
      if (p.leader < 0 || !cluster.up.has(p.leader)) continue;
      const leader = cluster.replica(p.leader, p.topicId);
      const described = await cluster.ask(leader, 'replica.describe', {}).catch(() => null);
      if (described === null) continue;
      const reply = await cluster
        .ask(leader, 'replica.fetch', {
          fetchOffset: random.int(described.highWatermark + 1),
          maxBytes: 1 << 20,
          minOneBatch: true,
        })
        .catch(() => null);
      if (reply === null || reply.errorCode !== ErrorCode.NONE || reply.records === null) continue;
      for (const batch of decodeRecordBatches(Buffer.from(reply.records)))
        for (const [k, record] of batch.records.entries()) {
          const offset = batch.baseOffset + k;
          assert.ok(
            offset < reply.highWatermark,
            `seed ${seed}: a consumer got offset ${offset} in a reply with HW ${reply.highWatermark}`,
          );
          const value = record.value!.toString();
          const earlier = consumed.get(offset);
          assert.ok(earlier === undefined || earlier === value, `seed ${seed}: offset ${offset} read as two values`);
          consumed.set(offset, value);
        }
    } else if (roll < 85) {
      await cluster.advance(random.int(1000));
    } else if (roll < 92) {
      // Crash a broker (at most one down at a time), or start the one that is down.
      const down = [0, 1, 2].find((b) => !cluster.up.has(b));
      if (down !== undefined) await cluster.startBroker(down);
      else await cluster.crashBroker(random.int(3));
    } else if (isolated === null) {
      const follower = p.replicas.find((b) => b !== p.leader && cluster.up.has(b));
      if (follower !== undefined) {
        isolated = follower;
        cluster.setFaults(ClusterSim.isolateReplicas(follower));
      }
    } else {
      isolated = null;
      cluster.setFaults(null);
    }
  }
  cluster.setFaults(null);
  for (const b of [0, 1, 2]) if (!cluster.up.has(b)) await cluster.startBroker(b);
  await cluster.sim.runUntil(Promise.all(pending));
  await cluster.converge(TOPIC);
  const end = await cluster.partition(TOPIC);
  for (const b of end.isr) {
    const log = new Map(cluster.logValues(b, TOPIC).map((r) => [r.offset, r.value]));
    for (const [offset, value] of consumed)
      assert.equal(log.get(offset), value, `seed ${seed}: consumed offset ${offset} is in ISR member ${b}'s log`);
  }
  await cluster.assertLogsMatchBelowHighWatermark(TOPIC);
  const leaderEpochs = await cluster.assertOneLeaderPerEpoch();
  const logLength = cluster.logValues(end.leader, TOPIC).length;
  await cluster.sim.shutdown();
  return { consumed: consumed.size, logLength, leaderEpochs };
}

/** What {@link powerLossClusterRun} found: acknowledged acks=all records, and which of them survived. */
export interface PowerLossAccounting {
  acked: number;
  survived: number;
  lost: number;
  /** Records in the log after the restart (acks=1 ones and unacknowledged ones included). */
  logLength: number;
}

/**
 * Power loss of every broker at once under acks=all (and some acks=1) produces in flight: after a
 * seeded number of scheduler steps the disk crashes (`mode`), every actor dies, the whole cluster
 * restarts from disk and its replicas converge. Asserts that the recovered log is dense, that every
 * record in it is one that was sent, that every acknowledged record that survived is at its
 * acknowledged offset, and that what was lost is a suffix (offsets at or past the log end after the
 * restart); with write.caching=false, that nothing acknowledged with acks=all was lost (invariant 4).
 */
export async function powerLossClusterRun(
  seed: number,
  mode: CrashMode,
  writeCaching: boolean,
): Promise<PowerLossAccounting> {
  const random = new Xoshiro128(seed);
  const cluster = await bootCluster(seed);
  await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2', 'write.caching': String(writeCaching) });
  const p = await cluster.partition(TOPIC);
  const sent = new Set<string>();
  const acked = new Map<number, string>();
  const inFlight: Promise<void>[] = [];
  const records = 20 + random.int(20);
  const crashAfter = random.int(records);
  for (let i = 0; i < records; i++) {
    const value = `v${i}`;
    const acks = random.int(4) === 0 ? 1 : -1;
    sent.add(value);
    inFlight.push(
      cluster.sendProduce(p.leader, p.topicId, value, acks).then(
        (reply) => {
          if (reply.errorCode === ErrorCode.NONE && acks === -1) acked.set(reply.baseOffset, value);
        },
        () => undefined, // the power went before the answer
      ),
    );
    await cluster.steps(1 + random.int(12));
    if (i === crashAfter) break;
  }
  await cluster.powerLoss(mode);
  await cluster.sim.runUntil(Promise.all(inFlight));
  await cluster.waitFor('a leader after the restart', async () => (await cluster.partition(TOPIC)).leader >= 0);
  await cluster.converge(TOPIC);
  const log = cluster.logValues(0, TOPIC);
  for (const [i, r] of log.entries()) {
    assert.equal(r.offset, i, `seed ${seed}: the recovered log is dense`);
    assert.ok(sent.has(r.value), `seed ${seed}: offset ${r.offset} holds ${r.value}, which was never sent`);
  }
  let survived = 0;
  for (const [offset, value] of acked) {
    if (offset < log.length) {
      assert.equal(log[offset]!.value, value, `seed ${seed}: acknowledged ${value} is at its offset ${offset}`);
      survived++;
    }
  }
  const lost = acked.size - survived;
  if (!writeCaching) assert.equal(lost, 0, `seed ${seed}: write.caching=false loses no acks=all record`);
  await cluster.assertLogsMatchBelowHighWatermark(TOPIC);
  await cluster.assertOneLeaderPerEpoch();
  // The cluster works after the restart, once the ISR is whole again: each broker that registered
  // again was fenced first and left the ISR, and rejoins after its next fetch.
  await cluster.waitFor('the ISR is whole again', async () => (await cluster.partition(TOPIC)).isr.length === 3);
  const after = await cluster.produce(TOPIC, ['after'], -1);
  assert.equal(after[0]!.errorCode, ErrorCode.NONE, `seed ${seed}: acks=all after the restart`);
  await cluster.sim.shutdown();
  return { acked: acked.size, survived, lost, logLength: log.length };
}
