/**
 * Truncation by leader epochs at cluster level, brokers crashing and returning under the real
 * controller (issue 11 item 4): KIP-101's two scenarios (a replica restarts with a log ahead of its
 * HW; two replicas fail and return in the other order) and KIP-279's fast leader changes. Each ends
 * with identical logs on every replica (DESIGN.md invariant 3) holding every acks=all record, and
 * one leader per epoch over every pushed image (invariant 5).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootCluster, ClusterSim } from '../../helpers/cluster-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { Xoshiro128 } from '../../../src/io/random';
import type { FetchReply } from '../../../src/replica/messages';

const TOPIC = 't';
const SEEDS = [41, 42, 43, 44, 45];

/** `[offset:value@partitionLeaderEpoch]` of every record on broker `b`, for comparing whole logs. */
function values(cluster: ClusterSim, b: number): string[] {
  return cluster.logValues(b, TOPIC).map((r) => `${r.offset}:${r.value}`);
}

async function ok(cluster: ClusterSim, values: string[], acks: number): Promise<void> {
  const replies = await cluster.produce(TOPIC, values, acks);
  assert.deepEqual(
    replies.map((r) => r.errorCode),
    values.map(() => ErrorCode.NONE),
    `produce ${values.join(',')} acks=${acks}`,
  );
}

/** Every broker up, logs identical, invariant 3 and 5 checked; returns the common log. */
async function endIdentical(cluster: ClusterSim): Promise<string[]> {
  cluster.setFaults(null);
  for (const b of [0, 1, 2]) if (!cluster.up.has(b)) await cluster.startBroker(b);
  await cluster.converge(TOPIC);
  await cluster.waitFor('the ISR is whole', async () => (await cluster.partition(TOPIC)).isr.length === 3);
  const log = values(cluster, 0);
  for (const b of [1, 2]) assert.deepEqual(values(cluster, b), log, `broker ${b}'s log is broker 0's`);
  // The leader's HW reaches the end once each follower's next fetch reports its LEO.
  await cluster.waitFor(
    'the HW reaches the log end',
    async () => (await cluster.assertLogsMatchBelowHighWatermark(TOPIC)) === log.length,
  );
  await cluster.assertOneLeaderPerEpoch();
  return log;
}

describe('truncation by leader epochs (simulation, whole cluster)', () => {
  test('KIP-101 (1): a follower restarts with a log ahead of its HW, keeps it, then leads with it', async () => {
    for (const seed of SEEDS) {
      const cluster = await bootCluster(seed, { properties: { 'min.insync.replicas': '1' } });
      await cluster.createTopic(TOPIC, 1, 3);
      const start = await cluster.partition(TOPIC);
      const [leader, follower, third] = [start.leader, ...start.replicas.filter((b) => b !== start.leader)] as [
        number,
        number,
        number,
      ];
      // Two in the ISR: the leader and the follower that will restart.
      await cluster.crashBroker(third);
      await ok(cluster, ['m1'], -1);
      // The follower learns the HW from fetch answers: drop those that would tell it HW 2, so it
      // restarts with m2 in its log and an HW of 1 (the KIP's "log ahead of the HW").
      const leaderRef = cluster.replica(leader, start.topicId);
      const followerRef = cluster.replica(follower, start.topicId);
      cluster.setFaults((envelope) =>
        envelope.isReply === true &&
        envelope.from === leaderRef &&
        envelope.to === followerRef &&
        (envelope.body as FetchReply).highWatermark >= 2
          ? 'drop'
          : 'deliver',
      );
      await ok(cluster, ['m2'], -1);
      const before = await cluster.ask(followerRef, 'replica.describe', {});
      assert.equal(before.logEndOffset, 2, 'the follower holds both acknowledged records');
      assert.equal(before.highWatermark, 1, 'its HW does not cover m2');
      cluster.setFaults(null);
      await cluster.crashBroker(follower);
      await cluster.startBroker(follower);
      assert.deepEqual(values(cluster, follower), ['0:m1', '1:m2'], 'no truncation to the HW at restart');
      await cluster.waitFor('the follower rejoins the ISR', async () =>
        (await cluster.partition(TOPIC)).isr.includes(follower),
      );
      // The leader dies; the follower, the only live ISR member, leads with m2.
      await cluster.crashBroker(leader);
      const elected = await cluster.partition(TOPIC);
      assert.equal(elected.leader, follower);
      assert.ok(elected.leaderEpoch > start.leaderEpoch);
      await ok(cluster, ['m3'], -1);
      assert.deepEqual(await endIdentical(cluster), ['0:m1', '1:m2', '2:m3']);
      await cluster.sim.shutdown();
    }
  });

  test('KIP-101 (2): two replicas fail and return in the other order; the old leader truncates its divergent suffix', async () => {
    for (const seed of SEEDS) {
      const cluster = await bootCluster(seed, { properties: { 'min.insync.replicas': '1' } });
      await cluster.createTopic(TOPIC, 1, 3);
      const start = await cluster.partition(TOPIC);
      const a = start.leader;
      const [b, c] = start.replicas.filter((x) => x !== a) as [number, number];
      await cluster.crashBroker(c);
      await ok(cluster, ['m1'], -1);
      // A takes m2 with acks=1 while B does not fetch: m2 is in A's log only.
      cluster.setFaults(ClusterSim.isolateReplicas(b));
      await ok(cluster, ['m2'], 1);
      assert.deepEqual(values(cluster, a), ['0:m1', '1:m2']);
      // A fails: B leads (epoch + 1) and takes m3 at offset 1. Then B fails too.
      await cluster.crashBroker(a);
      cluster.setFaults(null);
      assert.equal((await cluster.partition(TOPIC)).leader, b);
      await ok(cluster, ['m3'], 1);
      await cluster.crashBroker(b);
      const offline = await cluster.partition(TOPIC);
      assert.equal(offline.leader, -1, 'the last ISR member is down: no leader (unclean election is off)');
      assert.deepEqual(offline.isr, [b]);
      // They return in the other order: A first (not in the ISR: it cannot lead), then B, who leads.
      await cluster.startBroker(a);
      assert.equal((await cluster.partition(TOPIC)).leader, -1, 'A alone does not lead');
      await cluster.startBroker(b);
      assert.equal((await cluster.partition(TOPIC)).leader, b);
      const log = await endIdentical(cluster);
      assert.deepEqual(log, ['0:m1', '1:m3'], 'A truncated m2 (epoch 0) and took m3 (epoch 1) at offset 1');
      await cluster.sim.shutdown();
    }
  });

  test("KIP-279: fast leader changes, each leader's unreplicated acks=1 suffix truncated by the next, end with identical logs", async () => {
    for (const seed of SEEDS) {
      const random = new Xoshiro128(seed);
      const cluster = await bootCluster(seed, {
        properties: { 'min.insync.replicas': '1', 'replica.lag.time.max.ms': '2000' },
      });
      await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
      const acked: string[] = [];
      for (let round = 0; round < 6; round++) {
        const p = await cluster.partition(TOPIC);
        // A leader with an ISR to hand over to; wait for a returned broker to rejoin when needed.
        await cluster.waitFor(`round ${round}: an ISR of two or more`, async () => {
          const now = await cluster.partition(TOPIC);
          return now.leader >= 0 && now.isr.length >= 2;
        });
        const value = `r${round}`;
        await ok(cluster, [`${value}-all`], -1);
        acked.push(`${value}-all`);
        // The leader takes a suffix nobody fetches (acks=1), then dies; the next ISR member leads.
        const leader = (await cluster.partition(TOPIC)).leader;
        cluster.setFaults(ClusterSim.isolateReplicas(leader));
        await ok(cluster, [`${value}-lost-a`, `${value}-lost-b`], 1);
        await cluster.crashBroker(leader);
        cluster.setFaults(null);
        const next = await cluster.partition(TOPIC);
        assert.notEqual(next.leader, leader);
        assert.ok(next.leaderEpoch > p.leaderEpoch, 'a new leader, a new epoch');
        // It returns after a random moment: mid-truncation of someone else, or when things settled.
        await cluster.advance(random.int(400));
        await cluster.startBroker(leader);
        await cluster.advance(random.int(400));
      }
      const log = (await endIdentical(cluster)).map((r) => r.split(':')[1]!);
      assert.ok(!log.some((v) => v.includes('-lost-')), `no unreplicated acks=1 suffix survived: ${log}`);
      assert.deepEqual(log, acked, 'exactly the acknowledged acks=all records, in order');
      assert.ok((await cluster.partition(TOPIC)).leaderEpoch >= 6, 'six elections or more');
      await cluster.sim.shutdown();
    }
  });
});
