/**
 * Elections in a three-broker cluster with the real controller, replica managers and replicas
 * (issue 11, "Tests that must exist and pass"): a crashed leader's broker hands its partitions to the
 * first live ISR member in assignment order with a larger leader epoch, and a controller that crashes
 * in the middle of an election (around broker-down, or with the fence frame torn on disk) converges to
 * one live leader per partition. Every image the controller pushed is checked for DESIGN.md's
 * invariant 5 (leader epochs only grow; at most one leader per epoch); the logs for invariant 3.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Packr } from 'msgpackr';
import { crc32c } from '@node-rs/crc32';
import { bootCluster, DATA_DIR } from '../../helpers/cluster-harness';
import type { ClusterSim } from '../../helpers/cluster-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { CONTROLLER_ACTOR_ID } from '../../../src/controller/messages';

const TOPIC = 't';
const PARTITIONS = 3;
const SEEDS = [11, 12, 13, 14, 15, 16];
const METADATA_LOG = `${DATA_DIR}/__skiff_metadata/metadata.log`;

/** Writes `count` acks=all records to every partition of TOPIC and asserts each is acknowledged. */
async function produceAll(cluster: ClusterSim, prefix: string, count = 3): Promise<void> {
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const values = Array.from({ length: count }, (_, i) => `${prefix}-p${partition}-${i}`);
    const replies = await cluster.produce(TOPIC, values, -1, { partition });
    assert.deepEqual(
      replies.map((r) => r.errorCode),
      values.map(() => ErrorCode.NONE),
      `${prefix}: acks=all to partition ${partition}`,
    );
  }
}

/** Every partition has a leader on a running broker, the broker `down` is in no ISR. */
async function settledWithout(cluster: ClusterSim, down: number): Promise<boolean> {
  const image = await cluster.image();
  return image.topics.every((t) =>
    t.partitions.every((p) => p.leader >= 0 && cluster.up.has(p.leader) && !p.isr.includes(down)),
  );
}

/** Starts every stopped broker, waits for every partition's replicas to hold identical logs, checks invariant 3. */
async function healAndConverge(cluster: ClusterSim): Promise<void> {
  for (let b = 0; b < cluster.nodes; b++) if (!cluster.up.has(b)) await cluster.startBroker(b);
  for (let partition = 0; partition < PARTITIONS; partition++) {
    await cluster.converge(TOPIC, undefined, partition);
    assert.ok((await cluster.assertLogsMatchBelowHighWatermark(TOPIC, partition)) > 0);
  }
}

describe('elections (simulation, real controller and replica managers)', () => {
  for (const seed of SEEDS)
    test(`seed ${seed}: a crashed leader broker's partitions go to the first live ISR member in assignment order with a larger leader epoch`, async () => {
      const cluster = await bootCluster(seed);
      await cluster.createTopic(TOPIC, PARTITIONS, 3, { 'min.insync.replicas': '2' });
      await produceAll(cluster, 'a');
      // Two crashes in a row: the second election picks from the ISR the first one left.
      const first = seed % 3;
      const second = (first + 1) % 3;
      let elections = 0;
      for (const victim of [first, second]) {
        const before = (await cluster.image()).topics[0]!.partitions;
        await cluster.crashBroker(victim);
        const after = (await cluster.image()).topics[0]!.partitions;
        for (const [i, p] of after.entries()) {
          const was = before[i]!;
          assert.ok(!p.isr.includes(victim), `partition ${i}: broker ${victim} left the ISR`);
          if (was.leader === victim) {
            const expected = was.replicas.find((r) => r !== victim && was.isr.includes(r) && cluster.up.has(r));
            assert.ok(expected !== undefined, `partition ${i} had a live ISR member`);
            assert.equal(p.leader, expected, `partition ${i}: the first live ISR member in ${was.replicas}`);
            assert.ok(p.leaderEpoch > was.leaderEpoch, `partition ${i}: a larger leader epoch`);
            elections++;
          } else {
            assert.equal(p.leader, was.leader, `partition ${i}: a leader on a live broker keeps leading`);
            assert.equal(p.leaderEpoch, was.leaderEpoch, `partition ${i}: no election, no new leader epoch`);
            assert.ok(
              p.partitionEpoch > was.partitionEpoch,
              `partition ${i}: the ISR change bumps the partition epoch`,
            );
          }
        }
        // The new leaders serve: min.insync.replicas=1 would be needed after the second crash.
        if (victim === first) await produceAll(cluster, 'b');
      }
      // One broker left of three: acks=all with min.insync.replicas=2 is refused, acks=1 works. The
      // leader must know its shrunk ISR first (else it appends and answers ..._AFTER_APPEND).
      await cluster.awaitApplied((await cluster.image()).offset);
      const refused = await cluster.produce(TOPIC, ['c'], -1);
      assert.equal(refused[0]!.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
      await healAndConverge(cluster);
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const values = cluster.logValues(0, TOPIC, partition).map((r) => r.value);
        const acked = [...['a', 'b'].flatMap((x) => [0, 1, 2].map((i) => `${x}-p${partition}-${i}`))];
        assert.deepEqual(values, acked, `partition ${partition}: every acks=all record, once, in order`);
      }
      // Each partition's first epoch and one more per election (restarted brokers follow: no more elections).
      assert.equal(await cluster.assertOneLeaderPerEpoch(), PARTITIONS + elections);
      await cluster.sim.shutdown();
    });

  test('the controller crashing around broker-down converges to one live leader per partition with growing epochs', async () => {
    const outcomes = { fencedBeforeCrash: 0, fencedAfterRestart: 0 };
    for (const seed of SEEDS) {
      const cluster = await bootCluster(seed);
      await cluster.createTopic(TOPIC, PARTITIONS, 3, { 'min.insync.replicas': '2' });
      await produceAll(cluster, 'a');
      const victim = seed % 3;
      // The broker dies; the cluster tells the controller; the controller dies somewhere around it.
      await cluster.sim.crashBroker(victim);
      cluster.up.delete(victim);
      const told = cluster.net
        .request(CONTROLLER_ACTOR_ID, 'controller.broker-down', { brokerId: victim, reason: 'crashed' }, 60_000)
        .catch(() => null);
      await cluster.steps(seed % 4);
      const fencedBefore = cluster.pushedImages.some((i) => i.brokers.some((b) => b.nodeId === victim && b.fenced));
      await cluster.restartController();
      await told;
      if (fencedBefore) outcomes.fencedBeforeCrash++;
      else outcomes.fencedAfterRestart++;
      // A broker-down the dead controller never took is made up by the session timeout of the new one.
      await cluster.waitFor(`seed ${seed}: leaders move off broker ${victim}`, () => settledWithout(cluster, victim));
      assert.ok((await cluster.image()).controllerEpoch >= 2, 'the restarted controller has a larger epoch');
      await produceAll(cluster, 'b');
      await healAndConverge(cluster);
      assert.ok((await cluster.assertOneLeaderPerEpoch()) >= PARTITIONS);
      await cluster.sim.shutdown();
    }
    // Both sides of the race happened across the seeds.
    assert.ok(outcomes.fencedBeforeCrash > 0 && outcomes.fencedAfterRestart > 0, JSON.stringify(outcomes));
  });

  test('the controller crashing while it fences a broker whose heartbeats stopped converges once they return', async () => {
    const outcomes = { fencedBeforeCrash: 0, notYet: 0 };
    for (const seed of SEEDS) {
      const cluster = await bootCluster(seed);
      await cluster.createTopic(TOPIC, PARTITIONS, 3, { 'min.insync.replicas': '2' });
      await produceAll(cluster, 'a');
      const silent = seed % 3;
      const manager = `replica-manager/${silent}`;
      // The broker runs on but its heartbeats are lost: broker.session.timeout.ms (9 s) later it is fenced.
      cluster.setFaults((envelope) =>
        envelope.from === manager && envelope.type === 'controller.broker-heartbeat' ? 'drop' : 'deliver',
      );
      await cluster.advance(8_000 + (seed % 4) * 500);
      await cluster.steps(seed % 5);
      if ((await cluster.image()).brokers[silent]!.fenced) outcomes.fencedBeforeCrash++;
      else outcomes.notYet++;
      await cluster.restartController();
      // The restarted controller gives the silent broker a whole session, then fences it.
      await cluster.waitFor(`seed ${seed}: broker ${silent} fenced`, async () => {
        const image = await cluster.image();
        return (
          image.brokers[silent]!.fenced &&
          image.topics[0]!.partitions.every((p) => p.leader >= 0 && p.leader !== silent && !p.isr.includes(silent))
        );
      });
      await produceAll(cluster, 'b');
      // Heartbeats return: told it is fenced, the broker registers again and catches up.
      cluster.setFaults(null);
      await cluster.waitFor(`seed ${seed}: broker ${silent} back in every ISR`, async () =>
        (await cluster.image()).topics[0]!.partitions.every((p) => p.isr.includes(silent)),
      );
      for (let partition = 0; partition < PARTITIONS; partition++) await cluster.converge(TOPIC, undefined, partition);
      assert.ok((await cluster.assertOneLeaderPerEpoch()) >= PARTITIONS);
      await cluster.sim.shutdown();
    }
    assert.ok(outcomes.fencedBeforeCrash > 0 && outcomes.notYet > 0, JSON.stringify(outcomes));
  });

  test('a fence frame torn on disk by the controller crash is dropped at restart; the session timeout fences again', async () => {
    for (const seed of SEEDS) {
      const cluster = await bootCluster(seed);
      await cluster.createTopic(TOPIC, PARTITIONS, 3, { 'min.insync.replicas': '2' });
      await produceAll(cluster, 'a');
      const victim = (seed + 1) % 3;
      const before = await cluster.image();
      await cluster.sim.crashBroker(victim);
      cluster.up.delete(victim);
      const intactBytes = cluster.fs.readFile(METADATA_LOG).length;
      await cluster.restartController(() => {
        // The controller died while writing the frame that fences the victim: part of it reached the disk.
        const body = new Packr({ useRecords: false }).pack([
          { type: 'fence-broker', brokerId: victim, brokerEpoch: before.brokers[victim]!.brokerEpoch },
        ]);
        const frame = Buffer.alloc(8 + body.length);
        frame.writeUInt32BE(body.length, 0);
        frame.writeUInt32BE(crc32c(body) >>> 0, 4);
        body.copy(frame, 8);
        const file = cluster.fs.open(METADATA_LOG, 'rw');
        file.write(frame.subarray(0, 8 + (seed % body.length)), intactBytes);
        file.sync();
        file.close();
      });
      // Replay dropped the torn frame: the victim was not fenced by it, and what followed is intact.
      const restarted = await cluster.image();
      assert.equal(restarted.offset, before.offset + 1, 'the intact frames and the new controller epoch');
      assert.equal(restarted.brokers[victim]!.fenced, false, 'the torn fence never took effect');
      await cluster.waitFor(`seed ${seed}: leaders move off broker ${victim}`, () => settledWithout(cluster, victim));
      await produceAll(cluster, 'b');
      await healAndConverge(cluster);
      assert.ok((await cluster.assertOneLeaderPerEpoch()) >= PARTITIONS);
      await cluster.sim.shutdown();
    }
  });
});
