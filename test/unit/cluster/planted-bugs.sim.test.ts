/**
 * The planted bugs (issue 12 item 4, src/replica/planted-bugs.ts), each in one deterministic
 * whole-cluster scenario: with its switch on, an invariant of DESIGN.md breaks the way Kafka's history
 * says it does; with it off, the same scenario keeps it. Also the checker's hook for invariant 6
 * (`replica.describe`'s recoveredLogEndOffset), and that the switches are off unless a test or the
 * verifier sets them.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { bootCluster, ClusterSim } from '../../helpers/cluster-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { CONTROLLER_ACTOR_ID } from '../../../src/controller/messages';
import { PLANTED_BUGS, plantBug, plantedBugs } from '../../../src/replica/planted-bugs';
import type { PlantedBug } from '../../../src/replica/planted-bugs';
import type { FetchReply, ProduceReply } from '../../../src/replica/messages';
import { produceHandler } from '../../../src/network/handlers/produce';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';

const TOPIC = 't';
const SEEDS = [61, 62, 63];

/** `offset:value` of every record in broker `b`'s log of the topic. */
function values(cluster: ClusterSim, b: number): string[] {
  return cluster.logValues(b, TOPIC).map((r) => `${r.offset}:${r.value}`);
}

async function ok(cluster: ClusterSim, list: string[], acks: number): Promise<void> {
  const replies = await cluster.produce(TOPIC, list, acks);
  assert.deepEqual(
    replies.map((r) => r.errorCode),
    list.map(() => ErrorCode.NONE),
    `produce ${list.join(',')} acks=${acks}`,
  );
}

/** Settles `promise` into a slot the test reads while it drives the simulation. */
function track(promise: Promise<ProduceReply>): { reply: ProduceReply | null; failed: string | null } {
  const slot: { reply: ProduceReply | null; failed: string | null } = { reply: null, failed: null };
  promise.then(
    (reply) => (slot.reply = reply),
    (error: unknown) => (slot.failed = String(error)),
  );
  return slot;
}

/**
 * A client's Produce of one single-record batch of `value` through broker `brokerId`'s real Produce
 * handler (its metadata cache routes it), without driving the simulation; settles with the
 * partition's answer as a ProduceReply.
 */
function produceThroughNetwork(
  cluster: ClusterSim,
  brokerId: number,
  value: string,
  acks: -1 | 1,
): Promise<ProduceReply> {
  const records = buildRecordBatch([{ key: null, value: Buffer.from(value), headers: [] }]);
  const response = Promise.resolve(
    produceHandler.handle({
      apiKey: produceHandler.apiKey,
      apiVersion: 9,
      correlationId: 1,
      clientId: 'planted-bugs',
      body: {
        transactionalId: null,
        acks,
        timeoutMs: 5_000,
        topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }],
      } as never,
      broker: cluster.node(brokerId),
      remote: 'sim',
    }),
  );
  return response.then((r) => {
    const p = (r as { responses: { partitionResponses: ProduceReply[] }[] }).responses[0]!.partitionResponses[0]!;
    return { ...p, baseOffset: Number(p.baseOffset), logStartOffset: Number(p.logStartOffset) };
  });
}

/** Runs `scenario` with `bug` planted (or none), every switch off again afterwards. */
async function withBug<T>(bug: PlantedBug | null, scenario: () => Promise<T>): Promise<T> {
  plantBug(bug);
  try {
    return await scenario();
  } finally {
    plantBug(null);
  }
}

afterEach(() => plantBug(null));

/**
 * KIP-101 "Scenario 1" and "Scenario 2" at cluster level, min.insync.replicas=1, the third replica
 * down: the leader A and the follower B both hold m1 and m2 (acks=all), but B's HW is 1 (the answers
 * that would tell it HW 2 are dropped). B's replica actor restarts (a worker crash: its broker and its
 * ISR membership stay), and cannot reach A before A's broker crashes; B, the one live ISR member,
 * leads. Then m3 is produced (acks=all) and A returns as a follower and catches up (`m3` 'before':
 * m3 goes before A returns; 'after': after, so A's LEO, 2, is past B's, 1, when it first fetches).
 * Both have checkpointed their HW (A 2, B 1) before the crashes.
 * Returns B's log as it leads, the final logs, and whether the logs matched below the HW at the end.
 */
async function highWatermarkTruncationRun(
  seed: number,
  m3: 'before' | 'after' = 'before',
): Promise<{
  leaderLogAtElection: string[];
  logs: string[][];
  logMatching: string | null;
}> {
  const cluster = await bootCluster(seed, { properties: { 'min.insync.replicas': '1' } });
  await cluster.createTopic(TOPIC, 1, 3);
  const start = await cluster.partition(TOPIC);
  const a = start.leader;
  const [b, c] = start.replicas.filter((x) => x !== a) as [number, number];
  await cluster.crashBroker(c);
  await ok(cluster, ['m1'], -1);
  const aRef = cluster.replica(a, start.topicId);
  const bRef = cluster.replica(b, start.topicId);
  cluster.setFaults((envelope) =>
    envelope.isReply === true &&
    envelope.from === aRef &&
    envelope.to === bRef &&
    (envelope.body as FetchReply).highWatermark >= 2
      ? 'drop'
      : 'deliver',
  );
  await ok(cluster, ['m2'], -1);
  // Past replica.high.watermark.checkpoint.interval.ms: A checkpoints HW 2, B HW 1.
  await cluster.advance(6_000);
  const before = await cluster.ask(bRef, 'replica.describe', {});
  assert.equal(before.logEndOffset, 2, 'B holds both acknowledged records');
  assert.equal(before.highWatermark, 1, "B's HW lags the leader's by one fetch");
  assert.deepEqual([...(await cluster.partition(TOPIC)).isr].sort(), [a, b].sort(), 'A and B are the ISR');
  // B restarts and fetches nothing from A before A dies.
  cluster.setFaults((envelope) => (envelope.from === bRef && envelope.to === aRef ? 'drop' : 'deliver'));
  cluster.sim.crash(bRef, 'simulated worker crash');
  await cluster.sim.restart(bRef);
  await cluster.advance(10);
  await cluster.crashBroker(a);
  cluster.setFaults(null);
  const elected = await cluster.partition(TOPIC);
  assert.equal(elected.leader, b, 'B, the live ISR member, leads');
  await cluster.advance(10);
  const leaderLogAtElection = values(cluster, b);
  if (m3 === 'before') await ok(cluster, ['m3'], -1);
  await cluster.startBroker(a);
  await cluster.startBroker(c);
  await cluster.waitFor('the ISR is whole', async () => (await cluster.partition(TOPIC)).isr.length === 3);
  if (m3 === 'after') {
    await ok(cluster, ['m3'], -1);
    await cluster.converge(TOPIC);
  }
  await cluster.advance(1_000);
  let logMatching: string | null = null;
  await cluster.assertLogsMatchBelowHighWatermark(TOPIC).catch((error: unknown) => (logMatching = String(error)));
  const logs = [0, 1, 2].map((x) => values(cluster, x));
  await cluster.sim.shutdown();
  return { leaderLogAtElection, logs, logMatching };
}

/**
 * A leader crash during an acks=all produce, RF=3, min.insync.replicas=2: the followers fetch nothing
 * (the leader's replica traffic is cut) while m2 is produced with acks=all; then the leader's broker
 * crashes and a follower leads. Returns the answer m2 got before the crash (null: none yet) and the
 * new leader's log.
 */
async function leaderCrashDuringAcksAllRun(
  seed: number,
): Promise<{ answerBeforeCrash: ProduceReply | null; newLeaderLog: string[] }> {
  const cluster = await bootCluster(seed);
  await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
  await ok(cluster, ['m1'], -1);
  const p = await cluster.partition(TOPIC);
  cluster.setFaults(ClusterSim.isolateReplicas(p.leader));
  const m2 = track(cluster.sendProduce(p.leader, p.topicId, 'm2', -1, { timeoutMs: 5_000 }));
  await cluster.advance(200);
  assert.equal(m2.failed, null);
  const answerBeforeCrash = m2.reply;
  assert.deepEqual(values(cluster, p.leader), ['0:m1', '1:m2'], 'the leader appended m2');
  await cluster.crashBroker(p.leader);
  cluster.setFaults(null);
  const next = await cluster.partition(TOPIC);
  assert.ok(next.leader >= 0 && next.leader !== p.leader, 'a follower leads');
  await cluster.advance(200);
  const newLeaderLog = values(cluster, next.leader);
  await cluster.sim.shutdown();
  return { answerBeforeCrash, newLeaderLog };
}

/**
 * A leader demoted while it lives, RF=3: the preferred replica P crashes (B leads), returns and
 * rejoins the ISR, and a preferred election gives P the partition back (a newer leader epoch). A
 * client with stale metadata then produces z1 (acks=1) and z2 (acks=all) to B, the demoted leader;
 * the partition goes on with n1 and n2 (acks=all) through P. `route` 'replica': straight to B's
 * replica actor; 'network': through B's broker's Produce handler, whose metadata cache lags (the
 * controller's pushes to B's network node are dropped from the election on), so it routes to B's
 * replica, which alone knows it was demoted. Returns B's answers and the final logs.
 */
async function demotedLeaderRun(
  seed: number,
  route: 'replica' | 'network',
): Promise<{
  acks1: ProduceReply | null;
  acksAll: ProduceReply | null;
  logs: string[][];
  isr: number[];
}> {
  const cluster = await bootCluster(seed, { properties: { 'min.insync.replicas': '1' } });
  await cluster.createTopic(TOPIC, 1, 3);
  const start = await cluster.partition(TOPIC);
  const preferred = start.replicas[0]!;
  assert.equal(start.leader, preferred);
  await ok(cluster, ['m1'], -1);
  await cluster.crashBroker(preferred);
  const interim = await cluster.partition(TOPIC);
  const b = interim.leader;
  assert.ok(b >= 0 && b !== preferred);
  await ok(cluster, ['m2'], -1);
  await cluster.startBroker(preferred);
  await cluster.waitFor('the preferred replica rejoins the ISR', async () =>
    (await cluster.partition(TOPIC)).isr.includes(preferred),
  );
  if (route === 'network')
    cluster.setFaults((envelope) =>
      envelope.type === 'metadata.update' && envelope.to === `net/${b}` ? 'drop' : 'deliver',
    );
  const elected = await cluster.ask(CONTROLLER_ACTOR_ID, 'controller.elect-leaders', {
    electionType: 0,
    partitions: [{ topic: TOPIC, partition: 0 }],
  });
  assert.equal(elected.results[0]!.errorCode, ErrorCode.NONE, JSON.stringify(elected.results[0]));
  await cluster.awaitApplied((await cluster.image()).offset);
  const after = await cluster.partition(TOPIC);
  assert.equal(after.leader, preferred, 'the preferred replica leads again');
  assert.ok(after.leaderEpoch > interim.leaderEpoch);
  const send = (value: string, acks: -1 | 1) =>
    route === 'replica'
      ? cluster.sendProduce(b, start.topicId, value, acks, { timeoutMs: 5_000 })
      : produceThroughNetwork(cluster, b, value, acks);
  const z1 = track(send('z1', 1));
  const z2 = track(send('z2', -1));
  await cluster.advance(50);
  await ok(cluster, ['n1'], -1);
  await ok(cluster, ['n2'], -1);
  await cluster.advance(6_000);
  assert.equal(z1.failed, null);
  assert.equal(z2.failed, null);
  cluster.setFaults(null);
  await cluster.converge(TOPIC);
  const logs = [0, 1, 2].map((x) => values(cluster, x));
  const isr = (await cluster.partition(TOPIC)).isr;
  await cluster.sim.shutdown();
  return { acks1: z1.reply, acksAll: z2.reply, logs, isr };
}

describe('planted bugs (simulation, whole cluster)', () => {
  test('every switch is off by default, and only tests and src/verify set one', () => {
    assert.deepEqual(PLANTED_BUGS, ['truncateToHighWatermark', 'ackBeforeHighWatermark', 'fencedLeaderAppends']);
    for (const bug of PLANTED_BUGS) assert.equal(plantedBugs[bug], false, `${bug} is off`);
    const root = path.resolve(__dirname, '../../../../src');
    const setters: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const file = path.join(dir, name);
        if (statSync(file).isDirectory()) walk(file);
        else if (name.endsWith('.ts')) {
          const text = readFileSync(file, 'utf8');
          if (/plantBug\(|plantedBugs(\.\w+|\[[^\]]+\])\s*=[^=]/.test(text)) setters.push(path.relative(root, file));
        }
      }
    };
    walk(root);
    const outside = setters.filter(
      (f) => !f.startsWith(`verify${path.sep}`) && f !== path.join('replica', 'planted-bugs.ts'),
    );
    assert.deepEqual(outside, [], 'no production code sets a planted bug');
  });

  test('truncateToHighWatermark (KIP-101 scenario 1): a restarted follower drops an acks=all record to its HW and leads without it', async () => {
    for (const seed of SEEDS) {
      const off = await withBug(null, () => highWatermarkTruncationRun(seed));
      assert.deepEqual(
        off.leaderLogAtElection,
        ['0:m1', '1:m2'],
        `seed ${seed}: the new leader kept m2 (leader epochs)`,
      );
      const on = await withBug('truncateToHighWatermark', () => highWatermarkTruncationRun(seed));
      assert.ok(
        !on.leaderLogAtElection.includes('1:m2'),
        `seed ${seed}: with the bug the new leader lost the acknowledged m2: ${on.leaderLogAtElection.join(',')}`,
      );
      assert.deepEqual(on.leaderLogAtElection, ['0:m1'], 'it truncated to its checkpointed HW, 1');
    }
  });

  test('truncateToHighWatermark (KIP-101 scenario 2): the old leader keeps m2 below its HW, the new one holds m3 there: logs diverge below the HW', async () => {
    for (const seed of SEEDS) {
      const off = await withBug(null, () => highWatermarkTruncationRun(seed));
      assert.equal(off.logMatching, null, `seed ${seed}: logs match below the HW`);
      for (const log of off.logs) assert.deepEqual(log, ['0:m1', '1:m2', '2:m3'], `seed ${seed}: identical logs`);
      const on = await withBug('truncateToHighWatermark', () => highWatermarkTruncationRun(seed));
      assert.match(
        on.logMatching ?? '',
        /differs from the leader's|holds more batches/,
        `seed ${seed}: invariant 3 broke`,
      );
      const distinct = new Set(on.logs.map((l) => l.join(',')));
      assert.ok(distinct.size > 1, `seed ${seed}: the replicas' logs diverged: ${[...distinct].join(' | ')}`);
      assert.ok(
        on.logs.some((l) => l.includes('1:m2')) && on.logs.some((l) => !l.includes('1:m2')),
        `seed ${seed}: offset 1 holds m2 on one replica and not on another`,
      );
    }
  });

  test("truncateToHighWatermark: a returning replica whose LEO is past the new leader's truncates to it (pre-KIP-101 OFFSET_OUT_OF_RANGE), and the acknowledged m2 is gone from every log", async () => {
    for (const seed of SEEDS) {
      const off = await withBug(null, () => highWatermarkTruncationRun(seed, 'after'));
      for (const log of off.logs) assert.deepEqual(log, ['0:m1', '1:m2', '2:m3'], `seed ${seed}: identical logs`);
      const on = await withBug('truncateToHighWatermark', () => highWatermarkTruncationRun(seed, 'after'));
      assert.equal(on.logMatching, null, `seed ${seed}: the logs match again`);
      for (const log of on.logs) assert.deepEqual(log, ['0:m1', '1:m3'], `seed ${seed}: m2 lost everywhere`);
    }
  });

  test('ackBeforeHighWatermark: an acks=all record acknowledged before the followers fetched it is lost with its leader', async () => {
    for (const seed of SEEDS) {
      const off = await withBug(null, () => leaderCrashDuringAcksAllRun(seed));
      assert.equal(off.answerBeforeCrash, null, `seed ${seed}: acks=all waits for the HW`);
      assert.deepEqual(off.newLeaderLog, ['0:m1'], 'm2 was never acknowledged, and it is gone');
      const on = await withBug('ackBeforeHighWatermark', () => leaderCrashDuringAcksAllRun(seed));
      assert.equal(on.answerBeforeCrash?.errorCode, ErrorCode.NONE, `seed ${seed}: m2 acknowledged at once`);
      assert.equal(on.answerBeforeCrash?.baseOffset, 1);
      assert.deepEqual(on.newLeaderLog, ['0:m1'], `seed ${seed}: the acknowledged m2 is lost (invariant 4)`);
    }
  });

  for (const route of ['replica', 'network'] as const)
    test(`fencedLeaderAppends (${route === 'replica' ? 'a stale client at the replica' : 'through the Produce handler of a broker whose metadata lags'}): a demoted leader acknowledges acks=1 and acks=all writes that the partition loses`, async () => {
      for (const seed of SEEDS) {
        const off = await withBug(null, () => demotedLeaderRun(seed, route));
        assert.equal(off.acks1?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, `seed ${seed}: acks=1 refused`);
        assert.equal(off.acksAll?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, `seed ${seed}: acks=all refused`);
        for (const log of off.logs) assert.deepEqual(log, ['0:m1', '1:m2', '2:n1', '3:n2'], `seed ${seed}`);
        const on = await withBug('fencedLeaderAppends', () => demotedLeaderRun(seed, route));
        assert.equal(on.acks1?.errorCode, ErrorCode.NONE, `seed ${seed}: the demoted leader took z1 (acks=1)`);
        assert.equal(
          on.acksAll?.errorCode,
          ErrorCode.NONE,
          `seed ${seed}: the demoted leader acknowledged z2 (acks=all)`,
        );
        assert.equal(on.acksAll?.baseOffset, on.acks1!.baseOffset + 1);
        for (const log of on.logs) {
          assert.deepEqual(log, ['0:m1', '1:m2', '2:n1', '3:n2'], `seed ${seed}: the partition went on without z1, z2`);
          assert.ok(
            !log.some((r) => r.endsWith(':z2')),
            `seed ${seed}: the acknowledged acks=all z2 is lost (invariant 4)`,
          );
        }
      }
    });
});

describe("the checker's hook for invariant 6: replica.describe's recoveredLogEndOffset", () => {
  test('power loss with fsynced batches and an unsynced tail: it is the end of the fsynced batches', async () => {
    for (const seed of SEEDS) {
      const cluster = await bootCluster(seed);
      // write.caching=true: appends wait for no fsync; flush.messages=3 fsyncs the first three only.
      await cluster.createTopic(TOPIC, 1, 1, { 'write.caching': 'true', 'flush.messages': '3' });
      await ok(cluster, ['a', 'b', 'c', 'd', 'e'], 1);
      const p = await cluster.partition(TOPIC);
      const ref = cluster.replica(p.leader, p.topicId);
      const before = await cluster.ask(ref, 'replica.describe', {});
      assert.equal(before.recoveredLogEndOffset, 0, 'its first start recovered an empty log');
      assert.equal(before.logEndOffset, 5);
      assert.equal(before.fsyncedOffset, 3, 'a, b, c fsynced; d, e in the page cache');
      await cluster.powerLoss({ kind: 'lose-unsynced' });
      const after = await cluster.ask(ref, 'replica.describe', {});
      assert.equal(after.recoveredLogEndOffset, 3, `seed ${seed}: recovery kept exactly the fsynced batches`);
      assert.equal(after.logEndOffset, 3);
      assert.deepEqual(values(cluster, p.leader), ['0:a', '1:b', '2:c']);
      await cluster.sim.shutdown();
    }
  });

  test('power loss tearing the last write: it keeps the fsynced batches and is the LEO recovery left', async () => {
    for (const seed of SEEDS) {
      const cluster = await bootCluster(seed);
      await cluster.createTopic(TOPIC, 1, 1, { 'write.caching': 'true', 'flush.messages': '3' });
      await ok(cluster, ['a', 'b', 'c', 'd', 'e'], 1);
      const p = await cluster.partition(TOPIC);
      const ref = cluster.replica(p.leader, p.topicId);
      assert.equal((await cluster.ask(ref, 'replica.describe', {})).fsyncedOffset, 3);
      await cluster.powerLoss({ kind: 'torn-last-write' });
      const after = await cluster.ask(ref, 'replica.describe', {});
      assert.ok(
        after.recoveredLogEndOffset >= 3 && after.recoveredLogEndOffset <= 5,
        `seed ${seed}: recovered ${after.recoveredLogEndOffset}: the fsynced three and a prefix of the rest`,
      );
      assert.equal(after.logEndOffset, after.recoveredLogEndOffset, 'a leader alone: nothing truncated it since');
      assert.deepEqual(
        values(cluster, p.leader),
        ['0:a', '1:b', '2:c', '3:d', '4:e'].slice(0, after.recoveredLogEndOffset),
      );
      await cluster.sim.shutdown();
    }
  });

  test('a truncation its leader orders later does not move it', async () => {
    const cluster = await bootCluster(71, { properties: { 'min.insync.replicas': '1' } });
    await cluster.createTopic(TOPIC, 1, 3);
    const start = await cluster.partition(TOPIC);
    const a = start.leader;
    await ok(cluster, ['m1'], -1);
    // A takes two acks=1 records nobody fetches, then dies; another replica leads and takes m3.
    cluster.setFaults(ClusterSim.isolateReplicas(a));
    await ok(cluster, ['x1', 'x2'], 1);
    await cluster.crashBroker(a);
    cluster.setFaults(null);
    await ok(cluster, ['m3'], -1);
    await cluster.startBroker(a);
    await cluster.converge(TOPIC);
    const described = await cluster.ask(cluster.replica(a, start.topicId), 'replica.describe', {});
    assert.equal(described.recoveredLogEndOffset, 3, 'A recovered m1, x1, x2 (stopped uncleanly, all flushed)');
    assert.equal(described.logEndOffset, 2, 'then truncated to 1 by the new leader and took m3');
    assert.deepEqual(values(cluster, a), ['0:m1', '1:m3']);
    await cluster.sim.shutdown();
  });
});
