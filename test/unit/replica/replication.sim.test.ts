/**
 * Replication in the simulation runtime: three replicas of t-0 (brokers 0, 1, 2) fetching from their
 * leader, a fake replica manager that elects, applies AlterPartition and pushes roles
 * (test/helpers/sim-harness.ts bootCluster), virtual time and a network that can drop messages.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { decodeRecordBatches } from '../../../src/protocol/record-batch/decode';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import type { SimRuntime } from '../../../src/runtime/sim-runtime';
import type { Endpoint } from '../../../src/runtime/runtime';
import {
  ask,
  bootCluster,
  bootReplica,
  clusterReplica,
  crashBroker,
  describeReplica,
  isolate,
  logOnDisk,
  produceTo,
  REPLICA,
  restartBroker,
  TOPIC_ID,
} from '../../helpers/sim-harness';

/** Drops every message to or from any of `brokerIds`' replicas. */
function isolateAll(...brokerIds: number[]) {
  const hooks = brokerIds.map(isolate);
  return (envelope: Parameters<ReturnType<typeof isolate>>[0]) =>
    hooks.some((h) => h(envelope) === 'drop') ? ('drop' as const) : ('deliver' as const);
}

/** Lets fetches, fsyncs and pushes run for `ms` of virtual time. */
async function run(sim: SimRuntime, ms = 2000): Promise<void> {
  await sim.settle();
  await sim.advanceTime(ms);
}

/** Values and offsets of a replica's log on disk. */
function values(fs: MemoryFileSystem, brokerId: number): string[] {
  return logOnDisk(fs, brokerId).map((r) => `${r.offset}:${r.value}@${r.leaderEpoch}`);
}

async function consumerFetch(sim: SimRuntime, net: Endpoint, brokerId: number, fetchOffset = 0) {
  return ask(sim, net, clusterReplica(brokerId), 'replica.fetch', {
    fetchOffset,
    maxBytes: 1 << 20,
    minOneBatch: true,
  });
}

describe('replication (simulation, RF=3)', () => {
  test('the HW advances only once every ISR follower has fsynced the bytes (write.caching=false); acks=all completes then', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootCluster(101, fs, {}, { replication: { replicaLagTimeMaxMs: 120_000 } });
    sim.setFaults(isolateAll(1, 2));
    const pending = produceTo(net, 0, ['a'], -1, 120_000);
    let answered = false;
    void pending.then(() => (answered = true));
    await run(sim, 5000);
    assert.equal(answered, false, 'acks=all waits while the followers lack the bytes');
    const leader = await describeReplica(sim, net, 0);
    assert.equal(leader.logEndOffset, 1);
    assert.equal(leader.fsyncedOffset, 1, 'the leader fsynced its own append');
    assert.equal(leader.highWatermark, 0, 'the HW waits for the followers');
    sim.setFaults(null);
    const reply = await sim.runUntil(pending);
    assert.equal(reply.errorCode, ErrorCode.NONE);
    assert.equal(reply.baseOffset, 0);
    for (const b of [1, 2]) {
      const follower = await describeReplica(sim, net, b);
      assert.ok(follower.fsyncedOffset >= 1, `follower ${b} fsynced the batch before the ack`);
    }
    assert.equal((await describeReplica(sim, net, 0)).highWatermark, 1);
    await run(sim);
    for (const b of [1, 2])
      assert.equal((await describeReplica(sim, net, b)).highWatermark, 1, `follower ${b} learnt the HW`);
    assert.deepEqual(values(fs, 1), values(fs, 0));
    assert.deepEqual(values(fs, 2), values(fs, 0));
    await sim.shutdown();
  });

  test('acks=1 answers after the leader append alone; a consumer fetch never returns offsets at or above its HW', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootCluster(102, fs);
    const first = await sim.runUntil(produceTo(net, 0, ['a', 'b']));
    assert.equal(first.errorCode, ErrorCode.NONE);
    sim.setFaults(isolateAll(2));
    for (const v of ['c', 'd', 'e']) {
      const reply = await sim.runUntil(produceTo(net, 0, [v], 1));
      assert.equal(reply.errorCode, ErrorCode.NONE, 'acks=1 is answered without follower 2');
    }
    await run(sim, 1000);
    const leader = await describeReplica(sim, net, 0);
    assert.equal(leader.logEndOffset, 5);
    assert.equal(leader.highWatermark, 2, 'follower 2 (in the ISR) holds only the first batch');
    const fetched = await consumerFetch(sim, net, 0);
    assert.equal(fetched.errorCode, ErrorCode.NONE);
    const offsets = decodeRecordBatches(Buffer.from(fetched.records ?? Buffer.alloc(0))).flatMap((b) =>
      b.records.map((r) => r.offset),
    );
    assert.deepEqual(offsets, [0, 1]);
    for (const o of offsets) assert.ok(o < fetched.highWatermark, `offset ${o} below the HW ${fetched.highWatermark}`);
    await sim.shutdown();
  });

  test('a partitioned follower leaves the ISR after replica.lag.time.max.ms; acks=all: NOT_ENOUGH_REPLICAS_AFTER_APPEND, then NOT_ENOUGH_REPLICAS; healed, it rejoins', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootCluster(103, fs, { minInsyncReplicas: 3 });
    assert.equal((await sim.runUntil(produceTo(net, 0, ['a']))).errorCode, ErrorCode.NONE);
    sim.setFaults(isolateAll(2));
    const waiting = produceTo(net, 0, ['b'], -1, 120_000);
    let answered = false;
    void waiting.then(() => (answered = true));
    await run(sim, 10_000);
    assert.equal(answered, false);
    assert.deepEqual(manager.role(TOPIC_ID, 0).isr, [0, 1, 2], 'still in the ISR before replica.lag.time.max.ms');
    // The expiration check runs every replica.lag.time.max.ms / 2 (15 s): the first after 30 s of lag shrinks.
    await sim.advanceTime(40_000);
    assert.deepEqual(manager.role(TOPIC_ID, 0).isr, [0, 1], 'shrunk after replica.lag.time.max.ms of virtual time');
    const after = await sim.runUntil(waiting);
    assert.equal(after.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    const refused = await sim.runUntil(produceTo(net, 0, ['c']));
    assert.equal(refused.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS, '|ISR| 2 < min.insync.replicas 3');
    const acks1 = await sim.runUntil(produceTo(net, 0, ['d'], 1));
    assert.equal(acks1.errorCode, ErrorCode.NONE, 'acks=1 is not refused');
    sim.setFaults(null);
    await run(sim, 40_000); // the dropped fetch times out, the follower catches up and is expanded
    assert.deepEqual(manager.role(TOPIC_ID, 0).isr, [0, 1, 2], 'the healed follower rejoined the ISR');
    const ok = await sim.runUntil(produceTo(net, 0, ['e']));
    assert.equal(ok.errorCode, ErrorCode.NONE);
    await run(sim);
    assert.deepEqual(values(fs, 2), values(fs, 0));
    assert.deepEqual(values(fs, 1), values(fs, 0));
    assert.ok(manager.history.some((h) => h.startsWith('alter-partition isr 0,1 ')));
    assert.ok(manager.history.some((h) => h.startsWith('alter-partition isr 0,1,2 ')));
    await sim.shutdown();
  });

  test('a replica that does not lead answers NOT_LEADER_OR_FOLLOWER; currentLeaderEpoch older / newer gets FENCED / UNKNOWN_LEADER_EPOCH', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootCluster(104, fs);
    assert.equal((await sim.runUntil(produceTo(net, 1, ['a']))).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal((await consumerFetch(sim, net, 1)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const listed = await ask(sim, net, clusterReplica(2), 'replica.list-offsets', { timestamp: -1 });
    assert.equal(listed.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const epoch = await ask(sim, net, clusterReplica(2), 'replica.offset-for-epoch', { leaderEpoch: 0 });
    assert.equal(epoch.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    manager.elect(TOPIC_ID, 0, 0);
    await run(sim);
    const fenced = await ask(sim, net, clusterReplica(0), 'replica.fetch', {
      fetchOffset: 0,
      maxBytes: 1000,
      minOneBatch: true,
      currentLeaderEpoch: 0,
    });
    assert.equal(fenced.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    const unknown = await ask(sim, net, clusterReplica(0), 'replica.list-offsets', {
      timestamp: -1,
      currentLeaderEpoch: 5,
    });
    assert.equal(unknown.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    const current = await ask(sim, net, clusterReplica(0), 'replica.list-offsets', {
      timestamp: -1,
      currentLeaderEpoch: 1,
    });
    assert.equal(current.errorCode, ErrorCode.NONE);
    assert.equal(current.leaderEpoch, 1);
    await sim.shutdown();
  });

  test('a leader that loses leadership fails its waiting acks=all produces with NOT_LEADER_OR_FOLLOWER', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootCluster(105, fs);
    sim.setFaults(isolateAll(1, 2));
    const waiting = produceTo(net, 0, ['a']);
    await run(sim, 1000);
    sim.setFaults(null);
    manager.elect(TOPIC_ID, 0, 1);
    const reply = await sim.runUntil(waiting);
    assert.equal(reply.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    await sim.shutdown();
  });

  test('KIP-101 (1): a follower restarts with a log ahead of its HW, keeps it, and leads with it; the logs end identical', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootCluster(106, fs);
    assert.equal((await sim.runUntil(produceTo(net, 0, ['m1']))).errorCode, ErrorCode.NONE);
    const m2 = await sim.runUntil(produceTo(net, 0, ['m2']));
    assert.equal(m2.errorCode, ErrorCode.NONE);
    // Follower 1 restarts (its log holds m2, its HW may not cover it): no truncation to the HW.
    crashBroker(sim, 1);
    await restartBroker(sim, 1);
    assert.deepEqual(
      logOnDisk(fs, 1).map((r) => r.value),
      ['m1', 'm2'],
    );
    // The leader crashes before follower 1 fetched again; 1 is elected and keeps the acknowledged m2.
    crashBroker(sim, 0);
    manager.elect(TOPIC_ID, 0, 1, [1, 2]);
    await run(sim);
    assert.equal((await sim.runUntil(produceTo(net, 1, ['m3']))).errorCode, ErrorCode.NONE);
    await restartBroker(sim, 0);
    await run(sim, 5000);
    assert.deepEqual(values(fs, 1), ['0:m1@0', '1:m2@0', '2:m3@1']);
    assert.deepEqual(values(fs, 0), values(fs, 1));
    assert.deepEqual(values(fs, 2), values(fs, 1));
    await sim.shutdown();
  });

  test('KIP-101 (2): two replicas fail and return in the other order; the returning old leader truncates its divergent suffix', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootCluster(107, fs);
    assert.equal((await sim.runUntil(produceTo(net, 0, ['m1']))).errorCode, ErrorCode.NONE);
    await run(sim);
    sim.setFaults(isolateAll(1, 2));
    assert.equal((await sim.runUntil(produceTo(net, 0, ['m2'], 1))).errorCode, ErrorCode.NONE);
    // Both 0 and 1 fail; 1 returns first and leads (it never had m2), and takes m3 at offset 1.
    crashBroker(sim, 0);
    crashBroker(sim, 1);
    sim.setFaults(null);
    await restartBroker(sim, 1);
    manager.elect(TOPIC_ID, 0, 1, [1]);
    await run(sim);
    assert.equal((await sim.runUntil(produceTo(net, 1, ['m3'], 1))).errorCode, ErrorCode.NONE);
    // 0 returns as follower with [m1 m2@0]: the leader answers divergingEpoch (0, 1).
    await restartBroker(sim, 0);
    await run(sim, 5000);
    assert.deepEqual(values(fs, 1), ['0:m1@0', '1:m3@1']);
    assert.deepEqual(values(fs, 0), values(fs, 1), 'the old leader truncated m2 and fetched m3');
    assert.deepEqual(values(fs, 2), values(fs, 1));
    await sim.shutdown();
  });

  test('KIP-279: fast leader changes (P, Q, P, Q, P) end with identical logs', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootCluster(108, fs);
    const P = 0;
    const Q = 1;
    crashBroker(sim, 2); // the third replica stays down throughout
    manager.elect(TOPIC_ID, 0, P, [P, Q]);
    await run(sim);
    const write = async (leader: number, value: string) =>
      assert.equal((await sim.runUntil(produceTo(net, leader, [value], 1))).errorCode, ErrorCode.NONE, value);
    await write(P, 'x0');
    await run(sim);
    assert.deepEqual(
      logOnDisk(fs, Q).map((r) => r.value),
      ['x0'],
    );
    crashBroker(sim, P);
    manager.elect(TOPIC_ID, 0, Q, [Q]);
    await run(sim);
    await write(Q, 'y1');
    crashBroker(sim, Q);
    await restartBroker(sim, P);
    manager.elect(TOPIC_ID, 0, P, [P]);
    await run(sim);
    for (const v of ['z1', 'z2', 'z3']) await write(P, v);
    crashBroker(sim, P);
    await restartBroker(sim, Q);
    manager.elect(TOPIC_ID, 0, Q, [Q]);
    await run(sim);
    await write(Q, 'w2');
    crashBroker(sim, Q);
    await restartBroker(sim, P);
    manager.elect(TOPIC_ID, 0, P, [P]);
    await run(sim);
    for (const v of ['v4', 'v5']) await write(P, v);
    await restartBroker(sim, Q);
    await run(sim, 5000);
    assert.deepEqual(
      logOnDisk(fs, P).map((r) => r.value),
      ['x0', 'z1', 'z2', 'z3', 'v4', 'v5'],
    );
    assert.deepEqual(values(fs, Q), values(fs, P), 'Q truncated y1 and w2 (KIP-279) and fetched the rest');
    await sim.shutdown();
  });

  test("a compacted leader's log (offset gaps) replicates unchanged", async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootCluster(109, fs, {
      compactEnabled: true,
      deleteEnabled: false,
      segmentBytes: 300,
      minCleanableDirtyRatio: 0,
      cleanerBackoffMs: 1000,
      minCompactionLagMs: 0,
    });
    // Broker 2 is down (out of the ISR) while the leader's log is written and cleaned.
    crashBroker(sim, 2);
    manager.elect(TOPIC_ID, 0, 0, [0, 1]);
    await run(sim);
    for (let i = 0; i < 24; i++) {
      const records = buildRecordBatch([
        { key: Buffer.from(i % 2 === 0 ? 'even' : `odd-${i}`), value: Buffer.from(`v${i}`), headers: [] },
      ]);
      const reply = await sim.runUntil(
        net.request(clusterReplica(0), 'replica.produce', { records, acks: -1, timeoutMs: 10_000 }, 60_000),
      );
      assert.equal(reply.errorCode, ErrorCode.NONE);
    }
    await run(sim, 10_000); // the leader's cleaner runs below its HW
    const gaps = (log: { offset: number }[]) => log.some((r, i) => i > 0 && r.offset !== log[i - 1]!.offset + 1);
    const leaderLog = logOnDisk(fs, 0);
    assert.ok(leaderLog.length < 24, `the leader's cleaner removed records (${leaderLog.length} left)`);
    assert.ok(gaps(leaderLog), 'the leader log has offset gaps');
    // Broker 2 returns with its (empty) log and replicates the cleaned log from offset 0.
    await restartBroker(sim, 2);
    await run(sim, 5000);
    const follower = logOnDisk(fs, 2);
    assert.ok(gaps(follower), 'the follower appended the gaps');
    const byOffset = new Map(logOnDisk(fs, 0).map((r) => [r.offset, r.value]));
    // Its own cleaner may clean its copy further: every record it kept is the leader's at the same offset.
    for (const r of follower) assert.equal(r.value, byOffset.get(r.offset), `offset ${r.offset}`);
    assert.equal(follower[follower.length - 1]!.offset, 23, "the follower reached the leader's last offset");
    assert.equal((await describeReplica(sim, net, 2)).logEndOffset, 24);
    await sim.shutdown();
  });
});

describe('replica role from the replica manager', () => {
  test('a topic config survives a worker restart: max.message.bytes=100 still refuses 500-byte records', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootReplica(110, fs);
    const big = buildRecordBatch([{ key: null, value: Buffer.alloc(500, 1), headers: [] }]);
    const produce = () =>
      ask(sim, net, REPLICA, 'replica.produce', { records: Buffer.from(big), acks: 1, timeoutMs: 1000 });
    assert.equal((await produce()).errorCode, ErrorCode.NONE);
    manager.setConfig(TOPIC_ID, 0, { maxMessageBytes: 100 });
    await sim.settle();
    assert.equal((await produce()).errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    sim.crash(REPLICA);
    await sim.restart(REPLICA);
    await sim.settle();
    assert.equal(
      (await produce()).errorCode,
      ErrorCode.MESSAGE_TOO_LARGE,
      'the restarted replica asked for its config',
    );
    await sim.shutdown();
  });

  test('a restart after the leader epoch moved starts in the current epoch (no epoch-cache assertion)', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootReplica(111, fs);
    const produce = (v: string) =>
      ask(sim, net, REPLICA, 'replica.produce', {
        records: buildRecordBatch([{ key: null, value: Buffer.from(v), headers: [] }]),
        acks: -1,
        timeoutMs: 1000,
      });
    assert.equal((await produce('a')).errorCode, ErrorCode.NONE);
    manager.elect(TOPIC_ID, 0, 0);
    manager.elect(TOPIC_ID, 0, 0);
    await sim.settle();
    assert.equal((await produce('b')).errorCode, ErrorCode.NONE);
    sim.crash(REPLICA);
    await sim.restart(REPLICA);
    await sim.settle();
    assert.equal((await produce('c')).errorCode, ErrorCode.NONE);
    const e0 = await ask(sim, net, REPLICA, 'replica.offset-for-epoch', { leaderEpoch: 0, currentLeaderEpoch: 2 });
    assert.deepEqual(e0, { leaderEpoch: 0, endOffset: 1 });
    const e2 = await ask(sim, net, REPLICA, 'replica.offset-for-epoch', { leaderEpoch: 2 });
    assert.deepEqual(e2, { leaderEpoch: 2, endOffset: 3 });
    const byTime = await ask(sim, net, REPLICA, 'replica.list-offsets', { timestamp: 0 });
    assert.equal(byTime.offset, 0);
    assert.equal(byTime.leaderEpoch, 0, 'a timestamp lookup answers the epoch of the batch found');
    await sim.shutdown();
  });
});
