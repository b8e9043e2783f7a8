/**
 * ISR shrink and expand at cluster level (issue 11 item 5) with the real controller, replica managers
 * and replicas: a follower broker whose fetches the simulated network drops leaves the ISR once
 * replica.lag.time.max.ms has passed without it catching up, acks=all keeps working with
 * min.insync.replicas=2 on the two left, and the follower rejoins once healed and caught up.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootCluster, ClusterSim } from '../../helpers/cluster-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';

const TOPIC = 't';
const LAG_MAX_MS = 10_000;
const SEEDS = [21, 22, 23, 24, 25];

describe('ISR shrink and expand (simulation, real controller and replica managers)', () => {
  for (const seed of SEEDS)
    test(`seed ${seed}: a cut-off follower leaves the ISR after replica.lag.time.max.ms, acks=all goes on with min.insync.replicas=2, it rejoins once healed`, async () => {
      const cluster = await bootCluster(seed, { properties: { 'replica.lag.time.max.ms': String(LAG_MAX_MS) } });
      await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
      const start = await cluster.partition(TOPIC);
      const followers = start.replicas.filter((b) => b !== start.leader);
      const cut = followers[seed % 2]!;
      const other = followers[(seed + 1) % 2]!;
      assert.deepEqual(
        (await cluster.produce(TOPIC, ['a0', 'a1'], -1)).map((r) => r.errorCode),
        [ErrorCode.NONE, ErrorCode.NONE],
      );

      cluster.setFaults(ClusterSim.isolateReplicas(cut));
      const cutAtMs = cluster.sim.elapsedMs;
      // The ISR still names the cut follower, so this acks=all waits until the leader shrinks it away.
      const waiting = cluster.sendProduce(start.leader, start.topicId, 'b0', -1, { timeoutMs: 3 * LAG_MAX_MS });
      let shrunkAtMs = -1;
      await cluster.waitFor(
        `broker ${cut} leaves the ISR`,
        async () => {
          const isr = (await cluster.partition(TOPIC)).isr;
          if (!isr.includes(cut) && shrunkAtMs < 0) shrunkAtMs = cluster.sim.elapsedMs;
          return shrunkAtMs >= 0;
        },
        3 * LAG_MAX_MS,
      );
      const reply = await cluster.sim.runUntil(waiting);
      assert.equal(reply.errorCode, ErrorCode.NONE, 'the waiting acks=all produce completes once the ISR shrank');
      assert.ok(shrunkAtMs - cutAtMs >= LAG_MAX_MS, `not before replica.lag.time.max.ms (${shrunkAtMs - cutAtMs} ms)`);
      assert.ok(shrunkAtMs - cutAtMs <= 2 * LAG_MAX_MS, `soon after it (${shrunkAtMs - cutAtMs} ms)`);
      const afterShrink = await cluster.partition(TOPIC);
      assert.equal(afterShrink.leader, start.leader, 'no election: the leader is still up');
      assert.equal(afterShrink.leaderEpoch, start.leaderEpoch);
      assert.deepEqual([...afterShrink.isr].sort(), [start.leader, other].sort());
      assert.ok(afterShrink.partitionEpoch > start.partitionEpoch, 'the shrink bumped the partition epoch');

      // Two in the ISR, min.insync.replicas=2: acks=all answers without the cut follower.
      const values = Array.from({ length: 5 }, (_, i) => `c${i}`);
      assert.deepEqual(
        (await cluster.produce(TOPIC, values, -1)).map((r) => r.errorCode),
        values.map(() => ErrorCode.NONE),
      );
      assert.deepEqual(
        cluster.logValues(cut, TOPIC).map((r) => r.value),
        ['a0', 'a1'],
        'the cut follower fetched nothing',
      );
      await cluster.assertLogsMatchBelowHighWatermark(TOPIC);

      cluster.setFaults(null);
      await cluster.waitFor(`broker ${cut} rejoins the ISR`, async () =>
        (await cluster.partition(TOPIC)).isr.includes(cut),
      );
      await cluster.converge(TOPIC);
      const expected = ['a0', 'a1', 'b0', ...values];
      for (const b of [0, 1, 2])
        assert.deepEqual(
          cluster.logValues(b, TOPIC).map((r) => r.value),
          expected,
          `broker ${b}`,
        );
      assert.equal(await cluster.assertLogsMatchBelowHighWatermark(TOPIC), expected.length);
      const end = await cluster.partition(TOPIC);
      assert.equal(end.leaderEpoch, start.leaderEpoch, 'shrink and expand are no elections');
      assert.equal(await cluster.assertOneLeaderPerEpoch(), 1);
      await cluster.sim.shutdown();
    });

  test('two followers cut off: both leave the ISR, acks=all gets NOT_ENOUGH_REPLICAS, acks=1 works; healed, acks=all again', async () => {
    for (const seed of SEEDS) {
      const cluster = await bootCluster(seed, { properties: { 'replica.lag.time.max.ms': String(LAG_MAX_MS) } });
      await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
      const start = await cluster.partition(TOPIC);
      const followers = start.replicas.filter((b) => b !== start.leader);
      cluster.setFaults(ClusterSim.isolateReplicas(...followers));
      // A follower at the leader's LEO is in sync however long it is silent (Kafka's rule): write first.
      assert.equal((await cluster.produce(TOPIC, ['y'], 1))[0]!.errorCode, ErrorCode.NONE);
      await cluster.waitFor('the ISR shrinks to the leader', async () => {
        const isr = (await cluster.partition(TOPIC)).isr;
        return isr.length === 1 && isr[0] === start.leader;
      });
      assert.equal((await cluster.produce(TOPIC, ['x'], -1))[0]!.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
      assert.equal((await cluster.produce(TOPIC, ['w'], 1))[0]!.errorCode, ErrorCode.NONE);
      cluster.setFaults(null);
      await cluster.waitFor('the ISR is whole again', async () => (await cluster.partition(TOPIC)).isr.length === 3);
      assert.equal((await cluster.produce(TOPIC, ['z'], -1))[0]!.errorCode, ErrorCode.NONE);
      await cluster.converge(TOPIC);
      assert.deepEqual(
        cluster.logValues(followers[0]!, TOPIC).map((r) => r.value),
        ['y', 'w', 'z'],
        'the refused record was never appended',
      );
      await cluster.sim.shutdown();
    }
  });
});
