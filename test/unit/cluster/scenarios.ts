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
