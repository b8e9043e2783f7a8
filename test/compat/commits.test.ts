/**
 * Committed offsets with real clients (issue 5): kafkajs 2.2.4 (Consumer.commitOffsets while a
 * member; Admin.fetchOffsets), confluent-kafka (Debian 1.7.0 and PyPI: commit(asynchronous=False)
 * while a member, committed()), kafka-python (Debian 2.0.2 and PyPI 3.x: commit() while a member,
 * committed(), KafkaAdminClient.list_consumer_group_offsets) and kcat -G (librdkafka's auto commit
 * of what it consumed, on close) each commit offsets in a group of their own: distinct per client
 * and partition, with metadata where the client sends it. Every client reads its commits back;
 * then the broker is SIGKILLed and restarted on the same data; then the same offsets (and
 * metadata) come back through the same client and through another one, and a new member of each
 * group resumes every partition exactly at the committed offset. (Java's commitSync is in
 * java-clients.test.ts.)
 *
 * The broker keeps Kafka's default group.initial.rebalance.delay.ms (3000): the first case checks
 * that a second member joining a new group within the delay is in its first generation.
 *
 * Target: Skiff by default; SKIFF_GROUP_TARGET=kafka runs the same cases against the Kafka 4.4.0
 * fixture (test/helpers/kafka-fixture.ts, restarted with kill9() + restart()):
 *
 *   npm run build && SKIFF_GROUP_TARGET=kafka node scripts/run-tests.js compat/commits
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { PYPI_PYTHON, PYTHON, PYTHON_SCRIPTS_DIR, runProcess, withBrokerLog } from './clients';
import {
  consumedBy,
  KafkajsMember,
  KcatMember,
  killAllMembers,
  ownedPartitions,
  pythonMember,
  waitUntil,
  type GroupMember,
  type MemberOptions,
} from './group-members';
import { kafkajsFetchOffsets, NumberedRecords, PARTITIONS } from './group-scenarios';
import { DEFAULT_INITIAL_REBALANCE_DELAY_MS, GROUP_TARGET, startGroupTarget, type GroupTarget } from './group-target';

const CASE_TIMEOUT_MS = 60_000;
const WAIT_MS = 30_000;
const TOPIC = 'commits';
const RECORDS_PER_PARTITION = 100;

/** Offset and metadata committed per partition (metadata null when the client cannot send it). */
type Commits = Map<number, { offset: number; metadata: string | null }>;

interface CommitClient {
  name: string;
  /** Commits `wanted` as a member of `group`; resolves with what was committed. */
  commit(bootstrap: string, group: string, wanted: Commits): Promise<Commits>;
  /** The group's committed offsets through this client's own API (committed(), fetchOffsets). */
  fetch(bootstrap: string, group: string): Promise<Commits>;
  /** A member of `group` that consumes (to check where it resumes). */
  member(o: MemberOptions, name: string): Promise<GroupMember> | GroupMember;
  /** Whether commit() sends the metadata string. */
  metadata: boolean;
  /** The metadata bytes as they go on the wire, when the client changes them (default: unchanged). */
  wireMetadata?: (metadata: string) => string;
}

function explicitCommits(clientIndex: number, metadata: boolean): Commits {
  return new Map(
    Array.from({ length: PARTITIONS }, (_, p) => [
      p,
      { offset: 1 + 3 * clientIndex + 11 * p, metadata: metadata ? `skiff-${clientIndex}-${p}` : null },
    ]),
  );
}

// ------------------------------------------------------------------------------------------------
// kafkajs

function kafkajs(bootstrap: string): Kafka {
  return new Kafka({
    clientId: 'skiff-commits',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5 },
  });
}

async function kafkajsCommit(bootstrap: string, group: string, wanted: Commits): Promise<Commits> {
  const consumer = kafkajs(bootstrap).consumer({
    groupId: group,
    heartbeatInterval: 500,
    sessionTimeout: 10_000,
    maxWaitTimeInMs: 100,
  });
  let assigned: number[] = [];
  consumer.on(consumer.events.GROUP_JOIN, (e) => (assigned = e.payload.memberAssignment[TOPIC] ?? []));
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
    await consumer.run({ autoCommit: false, eachBatch: async () => undefined });
    await waitUntil('the kafkajs member to own all 6 partitions', WAIT_MS, () => assigned.length === PARTITIONS);
    await consumer.commitOffsets(
      [...wanted].map(([partition, c]) => ({
        topic: TOPIC,
        partition,
        offset: String(c.offset),
        metadata: c.metadata,
      })),
    );
  } finally {
    await consumer.disconnect();
  }
  return wanted;
}

function kafkajsFetch(bootstrap: string, group: string): Promise<Commits> {
  return kafkajsFetchOffsets(bootstrap, group, TOPIC);
}

// ------------------------------------------------------------------------------------------------
// Python clients (python/group_member.py commit | committed)

async function groupOp<T>(python: string, args: string[]): Promise<T> {
  const r = await runProcess(
    python,
    [path.join(PYTHON_SCRIPTS_DIR, 'group_member.py'), ...args, '--timeout', String(WAIT_MS / 1000)],
    { timeoutMs: WAIT_MS + 10_000, cwd: PYTHON_SCRIPTS_DIR },
  );
  if (r.code !== 0 || r.timedOut)
    throw new Error(
      `group_member.py ${args.join(' ')}: ${r.timedOut ? 'timed out' : `exit ${r.code}`}\n--- stderr ---\n${r.stderr.slice(-5000)}`,
    );
  const lines = r.stdout.toString('utf8').trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}

function pythonClient(
  name: string,
  client: 'confluent' | 'kafka-python',
  python: string,
  metadata: boolean,
  wireMetadata?: (m: string) => string,
): CommitClient {
  const common = (bootstrap: string, group: string): string[] => [
    '--client',
    client,
    '--bootstrap',
    bootstrap,
    '--group',
    group,
    '--topic',
    TOPIC,
    '--partitions',
    String(PARTITIONS),
  ];
  return {
    name,
    metadata,
    wireMetadata,
    async commit(bootstrap, group, wanted) {
      const offsets = Object.fromEntries([...wanted].map(([p, c]) => [String(p), [c.offset, c.metadata]]));
      await groupOp(python, ['commit', ...common(bootstrap, group), '--offsets', JSON.stringify(offsets)]);
      return wanted;
    },
    async fetch(bootstrap, group) {
      const r = await groupOp<{
        committed: Record<string, [number | null, string | null]>;
        admin?: Record<string, [number, string]>;
      }>(python, ['committed', ...common(bootstrap, group)]);
      const commits: Commits = new Map();
      for (const [p, [offset, md]] of Object.entries(r.committed))
        if (offset !== null) commits.set(Number(p), { offset, metadata: metadata ? md : null });
      if (r.admin !== undefined) {
        const viaAdmin: Commits = new Map(
          Object.entries(r.admin).map(([p, [offset, md]]) => [Number(p), { offset, metadata: metadata ? md : null }]),
        );
        assert.deepEqual(
          sorted(viaAdmin),
          sorted(commits),
          `${name}: KafkaAdminClient.list_consumer_group_offsets vs KafkaConsumer.committed`,
        );
      }
      return commits;
    },
    member: (o, memberName) => pythonMember(memberName, client, python, o),
  };
}

// ------------------------------------------------------------------------------------------------
// kcat -G: commits what it consumed (auto commit on close)

async function kcatConsumeAndCommit(bootstrap: string, group: string, count: number): Promise<Commits> {
  const args = [
    '-b',
    bootstrap,
    '-G',
    group,
    TOPIC,
    '-c',
    String(count),
    '-u',
    '-f',
    '%p %o\\n',
    '-X',
    'auto.offset.reset=earliest',
    '-X',
    'enable.auto.commit=true',
    '-X',
    'heartbeat.interval.ms=500',
    '-X',
    'session.timeout.ms=10000',
  ];
  const r = await runProcess('kcat', args, { timeoutMs: WAIT_MS });
  if (r.code !== 0 || r.timedOut)
    throw new Error(`kcat ${args.join(' ')}: ${r.timedOut ? 'timed out' : `exit ${r.code}`}\n${r.stderr.slice(-4000)}`);
  const commits: Commits = new Map();
  const lines = r.stdout.toString('utf8').trim().split('\n');
  assert.equal(lines.length, count, `kcat -c ${count} printed ${lines.length} records`);
  for (const line of lines) {
    const [p, o] = line.split(' ').map(Number) as [number, number];
    const prev = commits.get(p)?.offset ?? 0;
    assert.equal(
      o,
      prev,
      `kcat read partition ${p} offset ${o} after ${prev - 1} (a member that starts from scratch reads from 0)`,
    );
    commits.set(p, { offset: o + 1, metadata: null });
  }
  return commits;
}

function sorted(c: Commits): Array<[number, number, string | null]> {
  return [...c].sort((a, b) => a[0] - b[0]).map(([p, { offset, metadata }]) => [p, offset, metadata]);
}

// ------------------------------------------------------------------------------------------------

const CLIENTS: CommitClient[] = [
  {
    name: 'kafkajs 2.2.4',
    metadata: true,
    commit: kafkajsCommit,
    fetch: kafkajsFetch,
    member: (o, name) => KafkajsMember.start(name, o),
  },
  pythonClient('confluent-kafka 1.7.0 (Debian)', 'confluent', PYTHON, false),
  // confluent-kafka 2.x sends the metadata string with its C terminator (strlen + 1 bytes), against
  // Kafka 4.4 too; its own committed() cuts it there, other clients see the NUL.
  pythonClient('confluent-kafka from PyPI', 'confluent', PYPI_PYTHON, true, (m) => `${m}\u0000`),
  pythonClient('kafka-python 2.0.2 (Debian)', 'kafka-python', PYTHON, true),
  pythonClient('kafka-python 3.x from PyPI', 'kafka-python', PYPI_PYTHON, true),
  {
    name: 'kcat -G (librdkafka 2.0.2)',
    metadata: false,
    commit: (bootstrap, group) => kcatConsumeAndCommit(bootstrap, group, 250),
    // kcat cannot query committed offsets: its own check is where a new kcat -G member resumes (below).
    fetch: () => Promise.resolve(new Map()),
    member: (o, name) => new KcatMember(name, o),
  },
];
/**
 * Reads another client's commits back: kafka-python from PyPI for kafkajs's group, kafkajs for the
 * others. (confluent-kafka from PyPI is not used for kafkajs's group: its committed() fails with
 * UnicodeDecodeError on that metadata, a client bug seen against Kafka 4.4 too.)
 */
const otherClient = (c: CommitClient): CommitClient => (c === CLIENTS[0] ? CLIENTS[4]! : CLIENTS[0]!);
const groupOf = (i: number): string => `commits-g${i}`;

describe(`committed offsets with real clients survive a SIGKILL of the broker (target: ${GROUP_TARGET})`, () => {
  let target: GroupTarget;
  const committed = new Map<number, Commits>();

  before(async () => {
    target = await startGroupTarget(); // group.initial.rebalance.delay.ms: Kafka's default
    await target.createTopic(TOPIC, PARTITIONS);
    const records = new NumberedRecords();
    await records.produce(target.bootstrap, TOPIC, RECORDS_PER_PARTITION * PARTITIONS);
  });
  after(async () => {
    killAllMembers();
    await target?.stop();
  });

  test(
    `kafkajs: with group.initial.rebalance.delay.ms at its default (${DEFAULT_INITIAL_REBALANCE_DELAY_MS} ms), a member joining a new group 1 s after the first is in its first generation (3 + 3 partitions)`,
    { timeout: CASE_TIMEOUT_MS },
    () =>
      withBrokerLog(target, async () => {
        const o = {
          bootstrap: target.bootstrap,
          group: 'commits-initial-delay',
          topic: TOPIC,
          timeoutMs: CASE_TIMEOUT_MS,
        };
        // kafkajs's consumer.run() resolves after its first join: start the first member, then
        // the second 1 s later, before the first join can complete.
        const started = Date.now();
        const firstStart = KafkajsMember.start('delay-1', o);
        await new Promise((r) => setTimeout(r, 1000));
        const [first, second] = await Promise.all([firstStart, KafkajsMember.start('delay-2', o)]);
        try {
          await waitUntil(
            'both members to get their first assignment',
            WAIT_MS,
            () => [first, second].every((m) => m.events.some((e) => e.ev === 'assigned')),
            [first, second],
          );
          const firstAssignment = (m: GroupMember) => m.events.find((e) => e.ev === 'assigned')!;
          const a = firstAssignment(first);
          const b = firstAssignment(second);
          assert.ok(a.ev === 'assigned' && b.ev === 'assigned');
          assert.equal(
            a.partitions.length,
            3,
            `the first member's first assignment ${JSON.stringify(a.partitions)}: the second member joined within the delay`,
          );
          assert.deepEqual(
            [...a.partitions, ...b.partitions].sort(),
            [0, 1, 2, 3, 4, 5],
            'the first generation covers every partition once',
          );
          assert.ok(
            a.t - started >= DEFAULT_INITIAL_REBALANCE_DELAY_MS - 500,
            `the first join completed ${a.t - started} ms after the first member started: the delay holds it back`,
          );
        } finally {
          await first.stop();
          await second.stop();
        }
      }),
  );

  CLIENTS.forEach((client, i) => {
    test(
      `${client.name}: commits offsets${client.metadata ? ' with metadata' : ''} as a group member and reads them back`,
      { timeout: CASE_TIMEOUT_MS },
      () =>
        withBrokerLog(target, async () => {
          const done = await client.commit(target.bootstrap, groupOf(i), explicitCommits(i, client.metadata));
          assert.ok(done.size > 0, `${client.name} committed nothing`);
          committed.set(i, done);
          if (client.name.startsWith('kcat')) {
            assert.deepEqual(
              sorted(await otherClient(client).fetch(target.bootstrap, groupOf(i))),
              sorted(done),
              `${client.name}: commits read back by ${otherClient(client).name}`,
            );
          } else {
            assert.deepEqual(
              sorted(await client.fetch(target.bootstrap, groupOf(i))),
              sorted(done),
              `${client.name}: commits read back by the same client`,
            );
          }
        }),
    );
  });

  // The broker is SIGKILLed once, after every client committed above; the cases below read the
  // commits back from the restarted broker, so the crash is their set-up, not a test of its own.
  describe('after the broker is SIGKILLed and restarted on the same data', () => {
    before(() => withBrokerLog(target, () => target.kill9AndRestart()), { timeout: 150_000 });

    CLIENTS.forEach((client, i) => {
      test(
        `${client.name}: after the SIGKILL restart the committed offsets come back unchanged (same client and ${otherClient(client).name}) and a new member resumes at them`,
        { timeout: CASE_TIMEOUT_MS },
        () =>
          withBrokerLog(target, async () => {
            const want = committed.get(i);
            assert.ok(want !== undefined, `${client.name} did not commit before the restart`);
            if (!client.name.startsWith('kcat'))
              assert.deepEqual(
                sorted(await client.fetch(target.bootstrap, groupOf(i))),
                sorted(want),
                `${client.name}: same client`,
              );
            const other = otherClient(client);
            const viaOther = await other.fetch(target.bootstrap, groupOf(i));
            // Metadata is compared where both clients carry it.
            const both = client.metadata && other.metadata;
            const onWire = (c: Commits): Commits =>
              new Map(
                [...c].map(([p, v]) => [
                  p,
                  {
                    offset: v.offset,
                    metadata: both && v.metadata !== null ? (client.wireMetadata ?? ((m) => m))(v.metadata) : null,
                  },
                ]),
              );
            const strip = (c: Commits): Commits =>
              new Map([...c].map(([p, v]) => [p, { offset: v.offset, metadata: both ? v.metadata : null }]));
            assert.deepEqual(
              sorted(strip(viaOther)),
              sorted(onWire(want)),
              `${client.name}: read back by ${other.name}`,
            );

            const member = await client.member(
              { bootstrap: target.bootstrap, group: groupOf(i), topic: TOPIC, timeoutMs: CASE_TIMEOUT_MS },
              `${client.name} resume`,
            );
            try {
              await waitUntil(
                'the new member to read every partition to its end',
                WAIT_MS,
                () => {
                  const next = Array.from({ length: PARTITIONS }, (_, p) => want.get(p)?.offset ?? 0);
                  for (const [p, o] of consumedBy(member)) next[p] = Math.max(next[p]!, o + 1);
                  return (
                    ownedPartitions(member).length === PARTITIONS && next.every((n) => n === RECORDS_PER_PARTITION)
                  );
                },
                [member],
              );
            } finally {
              await member.stop();
            }
            for (let p = 0; p < PARTITIONS; p++) {
              const first = consumedBy(member).find(([q]) => q === p);
              const from: number = want.get(p)?.offset ?? 0;
              assert.equal(
                first?.[1],
                from < RECORDS_PER_PARTITION ? from : undefined,
                `${client.name}: the new member's first offset on partition ${p} (committed: ${want.get(p)?.offset ?? 'none'})`,
              );
            }
          }),
      );
    });
  });
});
