/**
 * Apache Kafka's own tools (from the cached Kafka distribution, test/helpers/kafka-fixture.ts) against a
 * real three-broker Skiff (`skiff start --nodes 3 --fault-injection`): kafka-topics --describe agrees with
 * the admin API's /v1/partitions before and after a broker crash, kafka-verifiable-producer with
 * kafka-verifiable-consumer run while brokers are bounced, checked as Kafka's replication system test
 * (tests/kafkatest/tests/core/replication_test.py, ProduceConsumeValidateTest) checks them: every value the
 * producer saw acknowledged is consumed, and kafka-leader-election's PREFERRED and UNCLEAN elections move
 * leaders as /v1/partitions shows. The cluster runs with auto.leader.rebalance.enable=false, so every
 * leader move is a crash's, a stop's or an election's.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { describeToolRun, ensureKafkaJars, repoRoot, runKafkaTool } from '../helpers/kafka-fixture';
import {
  sleep,
  startClusterProcess,
  table,
  type AdminPartition,
  type ClusterProcess,
} from '../helpers/cluster-process';
import { createReplicatedTopic } from './cluster-checks';

const TEST_TIMEOUT_MS = 180_000;
const TOPIC_COMMAND = 'org.apache.kafka.tools.TopicCommand';
const VERIFIABLE_PRODUCER = 'org.apache.kafka.tools.VerifiableProducer';
const VERIFIABLE_CONSUMER = 'org.apache.kafka.tools.VerifiableConsumer';
/** bin/kafka-leader-election.sh's class. */
const LEADER_ELECTION = 'org.apache.kafka.tools.LeaderElectionCommand';

/** One partition line of `kafka-topics --describe`. */
interface DescribedPartition {
  partition: number;
  /** -1 for "none". */
  leader: number;
  replicas: number[];
  isr: number[];
}

const ids = (s: string): number[] => (s === '' ? [] : s.split(',').map(Number));

/** The partition lines of `kafka-topics --describe --topic <topic>` output, by partition. */
function parseDescribe(stdout: string, topic: string): DescribedPartition[] {
  const out: DescribedPartition[] = [];
  const line = /^\s+Topic: (\S+)\tPartition: (\d+)\tLeader: (\S+)\tReplicas: ([\d,]*)\tIsr: ([\d,]*)/gm;
  for (const m of stdout.matchAll(line)) {
    if (m[1] !== topic) continue;
    out.push({
      partition: Number(m[2]),
      leader: m[3] === 'none' ? -1 : Number(m[3]),
      replicas: ids(m[4]!),
      isr: ids(m[5]!),
    });
  }
  return out.sort((a, b) => a.partition - b.partition);
}

/** What /v1/partitions says of `topic`, in the describe lines' shape. */
const fromAdmin = (ps: AdminPartition[], topic: string): DescribedPartition[] =>
  ps
    .filter((p) => p.topic === topic)
    .map((p) => ({ partition: p.partition, leader: p.leader, replicas: p.replicas, isr: p.isr }))
    .sort((a, b) => a.partition - b.partition);

/** A tool left running (VerifiableConsumer, VerifiableProducer) whose JSON event lines are read as they come. */
interface StreamingTool {
  events: Array<Record<string, unknown>>;
  /** SIGTERM to its process group (its shutdown hook prints shutdown_complete), SIGKILL after 15 s. */
  stop(): Promise<void>;
  exited: Promise<number | null>;
  stderr(): string;
}

/** Runs a Kafka tool class (`kafka-fixture.sh tool`) in its own process group and collects its JSON lines. */
async function startTool(cls: string, args: string[], timeoutMs: number): Promise<StreamingTool> {
  await ensureKafkaJars();
  const child = spawn('bash', [path.join(repoRoot(), 'scripts', 'kafka-fixture.sh'), 'tool', cls, ...args], {
    cwd: repoRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const events: Array<Record<string, unknown>> = [];
  let partial = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c: string) => (stderr = (stderr + c).slice(-20_000)));
  child.stdout.on('data', (c: string) => {
    partial += c;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const l of lines) if (l.startsWith('{')) events.push(JSON.parse(l) as Record<string, unknown>);
  });
  const signal = (sig: NodeJS.Signals): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, sig);
    } catch {
      // gone already
    }
  };
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const killer = setTimeout(() => signal('SIGKILL'), timeoutMs);
  process.once('exit', () => signal('SIGKILL'));
  void exited.then(() => clearTimeout(killer));
  return {
    events,
    stderr: () => stderr,
    exited,
    async stop() {
      signal('SIGTERM');
      const hard = setTimeout(() => signal('SIGKILL'), 15_000);
      await exited;
      clearTimeout(hard);
    },
  };
}

describe("Kafka's tools against a 3-broker Skiff cluster", () => {
  let cluster: ClusterProcess;

  before(async () => {
    cluster = await startClusterProcess({ overrides: { 'auto.leader.rebalance.enable': 'false' } });
  });
  after(async () => {
    await cluster?.stop();
  });

  /** Runs kafka-topics --describe --topic and returns its partition lines (the run must exit 0). */
  async function describeTopic(topic: string): Promise<DescribedPartition[]> {
    const args = ['--bootstrap-server', cluster.bootstrap, '--describe', '--topic', topic];
    const r = await runKafkaTool(TOPIC_COMMAND, args, { timeoutMs: 60_000 });
    assert.equal(r.code, 0, describeToolRun(TOPIC_COMMAND, args, r));
    return parseDescribe(r.stdout, topic);
  }

  /** Runs kafka-leader-election with `args` (the run must exit 0) and returns its stdout. */
  async function electLeaders(args: string[]): Promise<string> {
    const all = ['--bootstrap-server', cluster.bootstrap, ...args];
    const r = await runKafkaTool(LEADER_ELECTION, all, { timeoutMs: 60_000 });
    assert.equal(r.code, 0, describeToolRun(LEADER_ELECTION, all, r));
    return r.stdout;
  }

  test(
    "kafka-topics --describe shows the Leader, Replicas and Isr of /v1/partitions, before and after the crash of a leader's broker, and after its return",
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const topic = 'tools-describe';
      await createReplicatedTopic(cluster, topic, 3, { 'min.insync.replicas': '2' });
      const before = await describeTopic(topic);
      assert.equal(before.length, 3);
      assert.deepEqual(before, fromAdmin(await cluster.partitions(), topic));
      assert.deepEqual(
        before.map((p) => p.leader).sort(),
        [0, 1, 2],
        'rack-unaware assignment spreads the leaders over the brokers',
      );

      const victim = before[0]!.leader;
      await cluster.crash(victim);
      await cluster.waitForPartitions(
        (ps) => fromAdmin(ps, topic).every((p) => p.leader !== victim && !p.isr.includes(victim)),
        `broker ${victim} out of every ISR of ${topic}`,
      );
      const admin = fromAdmin(await cluster.partitions(), topic);
      const crashed = await describeTopic(topic);
      assert.deepEqual(crashed, admin, `after the crash of broker ${victim}`);
      assert.ok(
        crashed.every((p) => p.replicas.includes(victim) && p.isr.length === 2 && p.leader !== victim),
        `broker ${victim} stays assigned, out of the ISR and leading nothing`,
      );
      const underReplicated = await runKafkaTool(
        TOPIC_COMMAND,
        ['--bootstrap-server', cluster.bootstrap, '--describe', '--topic', topic, '--under-replicated-partitions'],
        { timeoutMs: 60_000 },
      );
      assert.equal(parseDescribe(underReplicated.stdout, topic).length, 3, 'every partition is under-replicated');

      await cluster.start(victim);
      await cluster.waitForInSync(topic);
      const back = await describeTopic(topic);
      assert.deepEqual(back, fromAdmin(await cluster.partitions(), topic), `after broker ${victim} returned`);
      assert.ok(
        back.every((p) => p.isr.length === 3),
        'the ISR is full again',
      );
    },
  );

  test(
    'kafka-verifiable-producer (acks=-1) and kafka-verifiable-consumer (a group) while brokers are bounced cleanly and hard: every acknowledged value is consumed',
    { timeout: TEST_TIMEOUT_MS },
    async (t) => {
      const topic = 'tools-verifiable-bounce';
      const messages = 12_000;
      await createReplicatedTopic(cluster, topic, 3, { 'min.insync.replicas': '2' });
      const consumer = await startTool(
        VERIFIABLE_CONSUMER,
        ['--bootstrap-server', cluster.bootstrap, '--topic', topic, '--group-id', 'verifiable-bounce'].concat([
          '--reset-policy',
          'earliest',
          '--session-timeout',
          '10000',
          '--verbose',
        ]),
        TEST_TIMEOUT_MS,
      );
      try {
        const producer = await startTool(
          VERIFIABLE_PRODUCER,
          ['--bootstrap-server', cluster.bootstrap, '--topic', topic, '--max-messages', String(messages)].concat([
            '--throughput',
            '1500',
            '--acks',
            '-1',
          ]),
          TEST_TIMEOUT_MS,
        );
        const acked = (): number => producer.events.filter((e) => e.name === 'producer_send_success').length;
        const waitAcked = async (n: number): Promise<void> => {
          for (let i = 0; i < 600 && acked() < n; i++) await sleep(100);
          assert.ok(acked() >= n, `the producer acked ${acked()} of ${n} within 60 s\n${producer.stderr()}`);
        };
        const bounces: string[] = [];
        // A clean bounce (Kafka's clean_bounce: SIGTERM, a controlled shutdown; here POST /v1/brokers/{id}/stop),
        // then a hard one (SIGKILL; here the admin crash), each of the leader of a different partition; every
        // bounce waits until the ISR is full again.
        for (const [partition, kind] of [
          [0, 'clean'],
          [1, 'hard'],
        ] as const) {
          await waitAcked((partition + 1) * 3_000);
          const leader = (await cluster.partition(topic, partition)).leader;
          if (kind === 'clean') await cluster.stopBroker(leader);
          else await cluster.crash(leader);
          await sleep(1_000);
          await cluster.start(leader);
          await cluster.waitForPartitions(
            (ps) => ps.filter((p) => p.topic === topic).every((p) => p.isr.length === 3),
            `${topic}: a full ISR after the ${kind} bounce of broker ${leader}`,
          );
          bounces.push(`${kind} bounce of broker ${leader} (leader of ${topic}-${partition})`);
        }
        const producerExit = await producer.exited;
        assert.equal(producerExit, 0, `the producer exited 0\n${producer.stderr()}`);
        const successes = producer.events.filter((e) => e.name === 'producer_send_success') as Array<{
          value: string;
          partition: number;
          offset: number;
        }>;
        const failures = producer.events.filter((e) => e.name === 'producer_send_error');
        const ackedValues = new Set(successes.map((e) => e.value));

        const consumed = (): Array<{ value: string; partition: number; offset: number }> =>
          consumer.events.filter((e) => e.name === 'record_data') as Array<{
            value: string;
            partition: number;
            offset: number;
          }>;
        const missing = (): string[] => {
          const got = new Set(consumed().map((r) => r.value));
          return [...ackedValues].filter((v) => !got.has(v));
        };
        for (let i = 0; i < 600 && missing().length > 0; i++) await sleep(100);
        const lost = missing();
        const records = consumed();
        const distinct = new Set(records.map((r) => `${r.partition}/${r.offset}`)).size;
        t.diagnostic(
          `${bounces.join('; ')}; sent ${messages}, acked ${successes.length}, failed ${failures.length}; ` +
            `consumed ${records.length} records (${distinct} distinct offsets, ${records.length - distinct} redeliveries); ` +
            `send errors: ${[...new Set(failures.map((e) => `${String(e.exception)}: ${String(e.message)}`))].join(', ')}`,
        );
        assert.deepEqual(
          lost.slice(0, 20),
          [],
          `${lost.length} acknowledged values were not consumed\n${table(await cluster.partitions())}`,
        );
        assert.equal(successes.length + failures.length, messages, 'a report for every message');
        assert.equal(ackedValues.size, successes.length, 'each value acked once');
        const ackedAt = new Map(successes.map((e) => [`${e.partition}/${e.offset}`, e.value]));
        const moved = records.filter(
          (r) => ackedAt.has(`${r.partition}/${r.offset}`) && ackedAt.get(`${r.partition}/${r.offset}`) !== r.value,
        );
        assert.deepEqual(moved.slice(0, 10), [], 'every acked value is consumed at its acked offset');
      } finally {
        await consumer.stop();
      }
    },
  );

  test(
    'kafka-leader-election --election-type PREFERRED --all-topic-partitions moves every partition led off its preferred replica back to it; a second run has nothing to elect',
    { timeout: TEST_TIMEOUT_MS },
    async (t) => {
      const topic = 'tools-elect-preferred';
      await createReplicatedTopic(cluster, topic, 3);
      const created = await cluster.waitForInSync(topic);
      const target = created.find((p) => p.leader === p.replicas[0]);
      assert.ok(target !== undefined, `a new partition is led by its preferred replica\n${table(created)}`);
      const preferred = target.leader;
      await cluster.crash(preferred);
      await cluster.waitForPartitions(
        (ps) => ps.some((p) => p.topic === topic && p.partition === target.partition && p.leader !== preferred),
        `${topic}-${target.partition} led elsewhere after the crash of broker ${preferred}`,
      );
      await cluster.start(preferred);
      await cluster.waitForInSync(topic);
      const moved = await cluster.partition(topic, target.partition);
      assert.notEqual(moved.leader, preferred, `leadership stays off broker ${preferred} once it is back in the ISR`);
      assert.ok(moved.isr.includes(preferred));

      // Every partition (of every topic, earlier tests' too) led off a live, in-sync preferred replica.
      const before = await cluster.partitions();
      const offPreferred = before.filter(
        (p) => p.leader >= 0 && p.leader !== p.replicas[0] && p.isr.includes(p.replicas[0]!),
      );
      const name = (p: AdminPartition): string => `${p.topic}-${p.partition}`;
      assert.ok(
        offPreferred.some((p) => name(p) === name(moved)),
        table(before),
      );

      const first = await electLeaders(['--election-type', 'PREFERRED', '--all-topic-partitions']);
      t.diagnostic(`first run: ${first.trim()}`);
      const line = /^Successfully completed leader election \(PREFERRED\) for partitions (.+)$/m.exec(first);
      assert.ok(line !== null, `no success line in:\n${first}`);
      assert.deepEqual(line[1]!.split(', ').sort(), offPreferred.map(name).sort(), 'the partitions it names');
      assert.doesNotMatch(first, /Error completing|Valid replica already elected/);

      await cluster.waitForPartitions(
        (ps) => offPreferred.every((p) => ps.find((q) => name(q) === name(p))?.leader === p.replicas[0]),
        'every partition the tool named led by its preferred replica',
      );
      const after = await cluster.partitions();
      for (const p of offPreferred) {
        const now = after.find((q) => name(q) === name(p));
        assert.ok(now !== undefined, name(p));
        assert.equal(now.leader, p.replicas[0], `${name(p)} is led by its preferred replica\n${table(after)}`);
        assert.ok(now.leaderEpoch > p.leaderEpoch, `${name(p)}: a new leader epoch`);
        assert.deepEqual([...now.isr].sort(), [...p.isr].sort(), `${name(p)}: the ISR is unchanged`);
      }
      assert.ok(
        after.every((p) => p.leader === p.replicas[0]),
        `every partition is led by its preferred replica\n${table(after)}`,
      );

      // Nothing to elect: an all-partitions request lists only the partitions whose election was needed.
      const second = await electLeaders(['--election-type', 'PREFERRED', '--all-topic-partitions']);
      assert.equal(second.trim(), '', 'the second run prints no election');
      const unchanged = (ps: AdminPartition[]): string[] => ps.map((p) => `${name(p)} ${p.leader}@${p.leaderEpoch}`);
      assert.deepEqual(unchanged(await cluster.partitions()), unchanged(after), 'no leader or epoch moved');
    },
  );

  test(
    'kafka-leader-election --election-type UNCLEAN elects the live out-of-sync replica b of a partition with replicas [a,b] whose ISR is [a] with a down',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const topic = 'tools-elect-unclean';
      const [a, b] = [1, 2];
      const createArgs = ['--bootstrap-server', cluster.bootstrap, '--create', '--topic', topic];
      createArgs.push('--replica-assignment', `${a}:${b}`);
      const created = await runKafkaTool(TOPIC_COMMAND, createArgs, { timeoutMs: 60_000 });
      assert.equal(created.code, 0, describeToolRun(TOPIC_COMMAND, createArgs, created));
      const [initial] = await cluster.waitForInSync(topic);
      assert.deepEqual(initial?.replicas, [a, b]);
      assert.equal(initial?.leader, a);

      // b goes first, so the ISR shrinks to [a]; then a, the last ISR member, goes too.
      await cluster.crash(b);
      await cluster.waitForPartitions(
        (ps) => ps.some((p) => p.topic === topic && p.leader === a && p.isr.join() === `${a}`),
        `${topic}-0: ISR [${a}] after the crash of broker ${b}`,
      );
      await cluster.crash(a);
      await cluster.waitForPartitions(
        (ps) => ps.some((p) => p.topic === topic && p.leader === -1 && p.isr.join() === `${a}`),
        `${topic}-0: no leader, ISR [${a}] after the crash of broker ${a}`,
      );
      await cluster.start(b);
      for (let i = 0; i < 300 && (await cluster.brokers()).find((x) => x.id === b)?.state !== 'running'; i++)
        await sleep(100);
      assert.equal((await cluster.brokers()).find((x) => x.id === b)?.state, 'running', `broker ${b} is running`);
      const offline = await cluster.partition(topic, 0);
      assert.equal(offline.leader, -1, `unclean.leader.election.enable=false: broker ${b} does not lead by itself`);
      assert.deepEqual(offline.isr, [a]);

      const out = await electLeaders(['--election-type', 'UNCLEAN', '--topic', topic, '--partition', '0']);
      assert.match(
        out,
        new RegExp(`^Successfully completed leader election \\(UNCLEAN\\) for partitions ${topic}-0$`, 'm'),
      );
      await cluster.waitForPartitions(
        (ps) => ps.some((p) => p.topic === topic && p.leader !== -1),
        `${topic}-0 led after the UNCLEAN election`,
      );
      const elected = await cluster.partition(topic, 0);
      assert.equal(elected.leader, b, `broker ${b} leads\n${table([elected])}`);
      assert.deepEqual(elected.isr, [b]);
      assert.ok(elected.leaderEpoch > offline.leaderEpoch, 'a new leader epoch');

      // a comes back as a follower of b and rejoins the ISR.
      await cluster.start(a);
      const [rejoined] = await cluster.waitForInSync(topic);
      assert.equal(rejoined?.leader, b);
      assert.deepEqual([...(rejoined?.isr ?? [])].sort(), [a, b]);
    },
  );
});
