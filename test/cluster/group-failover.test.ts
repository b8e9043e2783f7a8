/**
 * Consumer groups of real clients survive a crash of their coordinator's broker (issue 11 item 7,
 * DESIGN.md invariant 7), against `skiff start --nodes 3 --port 0 --fault-injection`:
 * - `__consumer_offsets` is created at the first FindCoordinator with RF = min(3, brokers) = 3;
 * - one group per client (the Java KafkaConsumer, librdkafka through confluent-kafka, kafkajs), each
 *   committing synchronously after every poll, named so that all three groups' coordinators sit on
 *   one broker; the test crashes that broker through the admin API while they consume, then produces
 *   more;
 * - FindCoordinator names the partition's new leader; the commits acknowledged before the crash are
 *   served by the new coordinator; every member goes on to the end without skipping an offset, and
 *   re-delivers nothing it had committed (a synchronous commit allows re-delivery only past the last
 *   acknowledged commit);
 * - fresh members of the same groups then start exactly at the committed offsets.
 * Every wait is bounded; the clients run in parallel: 55-83 s on this (shared, loaded) two-core host.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { PYTHON, repoRoot } from '../compat/clients';
import { compileJavaClient, javaRuntimeClasspath, resolveJavaLib } from '../compat/java-client';
import {
  consumedBy,
  KafkajsMember,
  killAllMembers,
  lastCommits,
  ProcessMember,
  pythonMember,
  waitUntil,
  type GroupMember,
} from '../compat/group-members';
import { WireClient } from '../helpers/wire-client';
import { startClusterProcess, type ClusterProcess } from '../helpers/cluster-process';
import { ApiKey } from '../../src/protocol/api-keys';
import { ErrorCode } from '../../src/protocol/error-codes';
import { offsetsPartitionFor, OFFSETS_TOPIC } from '../../src/group/offsets-records';

const ROOT = repoRoot();
const TOPIC = 'failover';
const PARTITIONS = 3;
const OFFSETS_PARTITIONS = 50;
/** Records per partition produced before the crash, after it, and for the fresh members. */
const PHASE_RECORDS = [150, 150, 100] as const;
const MEMBER_TIMEOUT_MS = 200_000;
/**
 * How long each phase may take. A kafkajs consumer that exhausts its connection retries against the
 * crashed broker restarts itself after a backoff that reaches 15 s and more (seen in a test:long
 * run: "Restarting the consumer in 14590ms"), and then rejoins and commits: 40 s was too short.
 */
const WAIT_MS = 70_000;

// ------------------------------------------------------------------------------------------------
// The Java client (test/compat/java-client.ts finds the jars and compiles it)

const JAVA_DIR = path.join(ROOT, 'test', 'java');

async function javaClasspath(): Promise<string[]> {
  const lib = await resolveJavaLib();
  const classes = await compileJavaClient(lib);
  return [...javaRuntimeClasspath(lib), classes];
}

function javaMember(classpath: string[], name: string, bootstrap: string, group: string): ProcessMember {
  return new ProcessMember(
    name,
    'java',
    [
      '-XX:+UseSerialGC',
      '-Xmx256m',
      '-XX:TieredStopAtLevel=1',
      `-Dlog4j2.configurationFile=${path.join(JAVA_DIR, 'log4j2.properties')}`,
      `-Dskiff.timeoutMs=${MEMBER_TIMEOUT_MS}`,
      '-cp',
      classpath.join(path.delimiter),
      'SkiffJavaClient',
      'group-member',
      '--bootstrap',
      bootstrap,
      '--group',
      group,
      '--topic',
      TOPIC,
      '--config',
      'session.timeout.ms=10000',
      '--config',
      'heartbeat.interval.ms=500',
    ],
    { cwd: ROOT, timeoutMs: MEMBER_TIMEOUT_MS },
  );
}

// ------------------------------------------------------------------------------------------------
// Checks

/** Every offset in [from, to) of every partition, as `p:o` keys. */
function expectedOffsets(from: number, to: number): Set<string> {
  const out = new Set<string>();
  for (let p = 0; p < PARTITIONS; p++) for (let o = from; o < to; o++) out.add(`${p}:${o}`);
  return out;
}

function consumedKeys(m: GroupMember): Set<string> {
  return new Set(consumedBy(m).map(([p, o]) => `${p}:${o}`));
}

/**
 * Walks `m`'s events in order: a record delivered again must lie at or past the last commit of its
 * partition that was acknowledged before that delivery (a synchronous commit allows nothing else).
 */
function assertNoCommittedRedelivery(m: GroupMember): void {
  const committed = new Map<number, number>();
  const seen = new Set<string>();
  for (const e of m.events) {
    if (e.ev === 'committed')
      for (const [p, o] of Object.entries(e.offsets))
        committed.set(Number(p), Math.max(committed.get(Number(p)) ?? 0, o));
    if (e.ev !== 'records') continue;
    for (const [p, o] of e.records) {
      const key = `${p}:${o}`;
      if (seen.has(key))
        assert.ok(
          o >= (committed.get(p) ?? 0),
          `${m.name}: offset ${o} of partition ${p} delivered again after a commit of ${committed.get(p)} was acknowledged`,
        );
      seen.add(key);
    }
  }
}

/**
 * The committed offsets of `group` (partition -> offset) through kafkajs's admin client (OffsetFetch).
 * A coordinator that has just moved answers COORDINATOR_LOAD_IN_PROGRESS (retriable) while it loads:
 * asked again up to 40 times, 250 ms apart, as a client's retry policy would.
 */
async function committedOffsets(admin: Admin, group: string): Promise<Map<number, number>> {
  for (let attempt = 1; ; attempt++) {
    try {
      const [topic] = await admin.fetchOffsets({ groupId: group, topics: [TOPIC] });
      return new Map((topic?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
    } catch (error) {
      const retriable = (error as { retriable?: unknown }).retriable === true;
      if (!retriable || attempt >= 40) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

async function produce(admin: Kafka, phase: number, from: number, count: number): Promise<void> {
  const producer = admin.producer({ allowAutoTopicCreation: false, retry: { retries: 20, initialRetryTime: 200 } });
  await producer.connect();
  try {
    for (let p = 0; p < PARTITIONS; p++)
      await producer.send({
        topic: TOPIC,
        acks: -1,
        messages: Array.from({ length: count }, (_, i) => ({ partition: p, value: `ph${phase}-p${p}-${from + i}` })),
      });
  } finally {
    await producer.disconnect();
  }
}

// ------------------------------------------------------------------------------------------------

describe('consumer groups survive a crash of their coordinator broker (--nodes 3, real clients)', () => {
  let cluster: ClusterProcess;
  let kafka: Kafka;
  let admin: Admin;
  let classpath: string[];
  let bootstrap: string;

  before(async () => {
    const [cp, started] = await Promise.all([
      javaClasspath(),
      startClusterProcess({ overrides: { 'group.initial.rebalance.delay.ms': '0' } }),
    ]);
    classpath = cp;
    cluster = started;
    bootstrap = cluster.bootstrap;
    kafka = new Kafka({
      clientId: 'failover-test',
      brokers: cluster.ports.map((p) => `127.0.0.1:${p}`),
      logLevel: logLevel.NOTHING,
      retry: { retries: 20, initialRetryTime: 200 },
    });
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    killAllMembers();
    await admin?.disconnect().catch(() => undefined);
    await cluster?.stop();
  });

  test(
    'Java, librdkafka and kafkajs groups rejoin at the new coordinator and resume from their commits',
    { timeout: 240_000 },
    async (t) => {
      assert.ok(
        await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3 }] }),
      );

      // The first FindCoordinator creates __consumer_offsets: RF min(offsets.topic.replication.factor 3, 3 brokers).
      const wire = await WireClient.connect(cluster.ports[0]!);
      const probe = await wire.request(ApiKey.FindCoordinator, 3, { key: 'probe', keyType: 0 });
      assert.equal(probe.body.errorCode, ErrorCode.NONE);
      const offsetsPartitions = (await cluster.partitions()).filter((p) => p.topic === OFFSETS_TOPIC);
      assert.equal(offsetsPartitions.length, OFFSETS_PARTITIONS);
      for (const p of offsetsPartitions) assert.equal(p.replicas.length, 3, `${OFFSETS_TOPIC}-${p.partition} has RF 3`);
      const leaderOf = (group: string): number =>
        offsetsPartitions.find((p) => p.partition === offsetsPartitionFor(group, OFFSETS_PARTITIONS))!.leader;

      // One group per client, all coordinated by the same broker (the victim).
      const victim = leaderOf('failover-java-0');
      const groupFor = (client: string): string => {
        for (let i = 0; i < 1000; i++)
          if (leaderOf(`failover-${client}-${i}`) === victim) return `failover-${client}-${i}`;
        assert.fail(`no group name for ${client} coordinated by broker ${victim}`);
      };
      const groups = { java: groupFor('java'), librdkafka: groupFor('librdkafka'), kafkajs: groupFor('kafkajs') };
      for (const group of Object.values(groups)) {
        const found = await wire.request(ApiKey.FindCoordinator, 3, { key: group, keyType: 0 });
        assert.equal(found.body.nodeId, victim, `FindCoordinator(${group}) names broker ${victim}`);
      }
      wire.close();

      const before1 = PHASE_RECORDS[0] + PHASE_RECORDS[1];
      await produce(kafka, 0, 0, PHASE_RECORDS[0]);
      const opts = (group: string) => ({ bootstrap, group, topic: TOPIC, timeoutMs: MEMBER_TIMEOUT_MS });
      const members: GroupMember[] = [
        javaMember(classpath, 'java', bootstrap, groups.java),
        pythonMember('librdkafka', 'confluent', PYTHON, opts(groups.librdkafka)),
        await KafkajsMember.start('kafkajs', opts(groups.kafkajs), true),
      ];
      // Before the crash: every member has consumed and committed part of the topic.
      await waitUntil(
        'every member committed something',
        WAIT_MS,
        () => members.every((m) => lastCommits(m).size > 0),
        members,
      );

      const crashAtMs = Date.now();
      const commitsBeforeCrash = members.map((m) => lastCommits(m));
      await cluster.crash(victim);

      // FindCoordinator now names each group partition's new leader.
      const alive = cluster.ports.filter((_, i) => i !== victim);
      const wire2 = await WireClient.connect(alive[0]!);
      for (const group of Object.values(groups)) {
        let nodeId = -1;
        for (let i = 0; i < 50 && (nodeId === -1 || nodeId === victim); i++) {
          const found = await wire2.request(ApiKey.FindCoordinator, 3, { key: group, keyType: 0 });
          nodeId = found.body.errorCode === ErrorCode.NONE ? found.body.nodeId : -1;
          if (nodeId === -1 || nodeId === victim) await new Promise((r) => setTimeout(r, 200));
        }
        const p = (await cluster.partitions()).find(
          (x) => x.topic === OFFSETS_TOPIC && x.partition === offsetsPartitionFor(group, OFFSETS_PARTITIONS),
        )!;
        assert.notEqual(p.leader, victim);
        assert.equal(nodeId, p.leader, `FindCoordinator(${group}) names the new leader ${p.leader}`);
      }
      wire2.close();

      // Invariant 7: what was acknowledged before the crash is served by the new coordinator.
      for (const [i, group] of Object.values(groups).entries()) {
        const now = await committedOffsets(admin, group);
        for (const [p, o] of commitsBeforeCrash[i]!)
          assert.ok(
            (now.get(p) ?? -1) >= o,
            `${group}: partition ${p} committed ${now.get(p)} after the crash, ${o} before`,
          );
      }

      await produce(kafka, 1, PHASE_RECORDS[0], PHASE_RECORDS[1]);
      const all = expectedOffsets(0, before1);
      await waitUntil(
        `every member consumed offsets 0..${before1 - 1} of every partition`,
        WAIT_MS,
        () => members.every((m) => [...all].every((k) => consumedKeys(m).has(k))),
        members,
      );
      await waitUntil(
        'every member committed the end of every partition',
        WAIT_MS,
        () => members.every((m) => [0, 1, 2].every((p) => lastCommits(m).get(p) === before1)),
        members,
      );
      await Promise.all(members.map((m) => m.stop()));
      for (const m of members)
        t.diagnostic(
          `${m.name}: ${m.events.filter((e) => e.ev === 'commit-failed').length} failed commits, ` +
            `${m.events.filter((e) => e.ev === 'assigned' && e.t > crashAtMs).length} assignments after the crash, ` +
            `${consumedBy(m).length - consumedKeys(m).size} re-deliveries` +
            (m instanceof KafkajsMember ? `, ${m.restarts} consumer restarts` : ''),
        );
      for (const m of members) {
        assertNoCommittedRedelivery(m);
        const outside = [...consumedKeys(m)].filter((k) => !all.has(k));
        assert.deepEqual(outside, [], `${m.name} consumed only produced offsets`);
        assert.ok(
          m.events.some((e) => e.t > crashAtMs && e.ev === 'committed'),
          `${m.name} committed after the crash`,
        );
      }
      for (const group of Object.values(groups))
        assert.deepEqual(
          [...(await committedOffsets(admin, group))].sort((a, b) => a[0] - b[0]),
          [0, 1, 2].map((p) => [p, before1]),
          `${group}: the final commits are at the new coordinator`,
        );

      // Fresh members of the same groups start exactly at the committed offsets.
      await produce(kafka, 2, before1, PHASE_RECORDS[2]);
      const end = before1 + PHASE_RECORDS[2];
      const fresh: GroupMember[] = [
        javaMember(classpath, 'java-2', bootstrap, groups.java),
        pythonMember('librdkafka-2', 'confluent', PYTHON, opts(groups.librdkafka)),
        await KafkajsMember.start('kafkajs-2', opts(groups.kafkajs), true),
      ];
      const rest = expectedOffsets(before1, end);
      await waitUntil(
        `every fresh member consumed offsets ${before1}..${end - 1}`,
        WAIT_MS,
        () => fresh.every((m) => [...rest].every((k) => consumedKeys(m).has(k))),
        fresh,
      );
      await Promise.all(fresh.map((m) => m.stop()));
      for (const m of fresh) {
        const early = consumedBy(m).filter(([, o]) => o < before1);
        assert.deepEqual(early, [], `${m.name} re-read nothing below the committed offsets`);
        assertNoCommittedRedelivery(m);
      }
    },
  );
});
