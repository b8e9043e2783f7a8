/**
 * `skiff consume --group` and `skiff perf consume --group` end to end: real `node bin/skiff.js`
 * processes as members of consumer groups on a Skiff broker process, beside a kafkajs member
 * (the project's devDependency, with a `range` assigner as Java's consumer offers) in the same
 * group. What was committed is read back with kafkajs's admin client (OffsetFetch), independently
 * of skiff's own summary line.
 */
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { AssignerProtocol, Kafka, logLevel, type Admin, type Consumer, type PartitionAssigner } from 'kafkajs';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { runCommand, SKIFF_BIN, type RunResult } from '../helpers/run-command';

const TIMEOUT_MS = 120_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it returns true; fails with `what` after `timeoutMs`. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** A kafkajs assigner named `range` doing Kafka's RangeAssignor, so kafkajs and skiff share a protocol. */
const kafkajsRange: PartitionAssigner = ({ cluster }) => ({
  name: 'range',
  version: 0,
  async assign({ members, topics }) {
    const ids = members.map((m) => m.memberId).sort();
    const out = new Map<string, Record<string, number[]>>(ids.map((id) => [id, {}]));
    for (const topic of topics) {
      const count = cluster.findTopicPartitionMetadata(topic).length;
      const per = Math.floor(count / ids.length);
      const extra = count % ids.length;
      let next = 0;
      ids.forEach((id, i) => {
        const n = per + (i < extra ? 1 : 0);
        out.get(id)![topic] = Array.from({ length: n }, (_, k) => next + k);
        next += n;
      });
    }
    return ids.map((memberId) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({
        version: 0,
        assignment: out.get(memberId)!,
        userData: Buffer.alloc(0),
      }),
    }));
  },
  protocol({ topics }) {
    return {
      name: 'range',
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
    };
  },
});

/** A long-running `skiff consume` whose stdout lines and stderr are collected as they come. */
interface Running {
  proc: ChildProcess;
  lines: string[];
  stderr(): string;
  /** SIGINT (Ctrl-C) and the exit code. */
  interrupt(): Promise<number | null>;
}

describe('skiff consume --group against a Skiff broker process', () => {
  let broker: BrokerProcess;
  let brokers: string;
  let kafka: Kafka;
  let admin: Admin;
  const running: Running[] = [];
  const kafkajsConsumers: Consumer[] = [];

  async function skiff(args: string[], input = '', expect = 0): Promise<RunResult> {
    const r = await runCommand(process.execPath, [SKIFF_BIN, ...args, '--brokers', brokers], input, {
      timeoutMs: 60_000,
    });
    assert.equal(r.code, expect, `skiff ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r;
  }

  function start(args: string[]): Running {
    const proc = spawn(process.execPath, [SKIFF_BIN, ...args, '--brokers', brokers], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let pending = '';
    let err = '';
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      pending += d;
      const parts = pending.split('\n');
      pending = parts.pop()!;
      lines.push(...parts);
    });
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
    const r: Running = {
      proc,
      lines,
      stderr: () => err,
      interrupt: async () => {
        proc.kill('SIGINT');
        return exited;
      },
    };
    running.push(r);
    return r;
  }

  /** Committed offsets of `group` for `topic` from kafkajs's admin (partition -> offset, -1 none). */
  async function committed(group: string, topic: string): Promise<Record<number, number>> {
    const [t] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    return Object.fromEntries((t?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  }

  /** Produces `perPartition` records `p:i` to every partition of `topic`. */
  async function produce(topic: string, partitions: number, perPartition: number, from = 0): Promise<void> {
    for (let p = 0; p < partitions; p++) {
      const lines = Array.from({ length: perPartition }, (_, i) => `${p}:${from + i}`);
      await skiff(['produce', topic, '-p', String(p)], lines.join('\n') + '\n');
    }
  }

  before(async () => {
    // No initial rebalance delay: each join here completes at once (Kafka's default waits 3 s).
    broker = await startBrokerProcess({ overrides: { 'group.initial.rebalance.delay.ms': '0' } });
    brokers = `127.0.0.1:${broker.port}`;
    kafka = new Kafka({ clientId: 'consume-group-test', brokers: [brokers], logLevel: logLevel.NOTHING });
    admin = kafka.admin();
    await admin.connect();
  });
  after(async () => {
    for (const r of running) if (r.proc.exitCode === null) r.proc.kill('SIGKILL');
    for (const c of kafkajsConsumers) await c.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
    await broker?.stop();
  });

  for (const mode of ['record', 'partition', 'batch', 'auto', 'none'] as const) {
    test(
      `--commit ${mode}: after 12 records, what is committed follows the mode; a restart resumes from it`,
      { timeout: TIMEOUT_MS },
      async () => {
        const topic = `cg-${mode}`;
        const group = `cg-${mode}-g`;
        await skiff(['topic', 'create', topic, '-p', '3']);
        await produce(topic, 3, 10);
        const first = await skiff([
          'consume',
          topic,
          '--group',
          group,
          '--commit',
          mode,
          '--from-beginning',
          '-n',
          '12',
          '--format',
          '%v\\n',
        ]);
        const firstLines = first.stdout.trimEnd().split('\n');
        assert.equal(firstLines.length, 12);
        // Per partition: the offset after the last record printed (values are `p:offset`).
        const printed: Record<number, number> = {};
        for (const l of firstLines) {
          const [p, o] = l.split(':').map(Number);
          printed[p!] = Math.max(printed[p!] ?? 0, o! + 1);
        }
        const got = await committed(group, topic);
        if (mode === 'none') {
          assert.deepEqual(got, { 0: -1, 1: -1, 2: -1 });
          assert.match(
            first.stderr,
            new RegExp(
              `^group ${group}: this run committed nothing; the group has no committed offsets for these partitions \\(--commit none, 0 commits\\)$`,
              'm',
            ),
          );
        } else {
          // Every mode commits exactly what was printed by the time the command exits, never past it.
          const expected = { 0: printed[0] ?? -1, 1: printed[1] ?? -1, 2: printed[2] ?? -1 };
          assert.deepEqual(got, expected);
          const listed = Object.entries(printed)
            .sort(([a], [b]) => Number(a) - Number(b))
            .map(([p, o]) => `${topic}/${p}=${o}`)
            .join(' ');
          const m = new RegExp(
            `^group ${group}: committed ${listed} \\(--commit ${mode}, (\\d+) commits?\\)$`,
            'm',
          ).exec(first.stderr);
          assert.ok(m, first.stderr);
          const commits = Number(m[1]);
          if (mode === 'record') assert.equal(commits, 12, 'one commit per record');
          if (mode === 'auto') assert.equal(commits, 1, 'within 5 s: only the commit on exit');
          if (mode === 'partition' || mode === 'batch') assert.ok(commits >= 1 && commits <= 12);
        }
        // A second run of the group resumes from the commits (or, with none, from the beginning again).
        const second = await skiff([
          'consume',
          topic,
          '--group',
          group,
          '--commit',
          mode,
          '--from-beginning',
          '-n',
          '18',
        ]);
        const secondLines = second.stdout.trimEnd().split('\n');
        assert.equal(secondLines.length, 18);
        if (mode === 'none') {
          assert.ok(
            secondLines.some((l) => firstLines.includes(l)),
            'without commits the restart reads them again',
          );
        } else {
          const all = [...firstLines, ...secondLines].sort();
          const want = [0, 1, 2].flatMap((p) => Array.from({ length: 10 }, (_, i) => `${p}:${i}`)).sort();
          assert.deepEqual(all, want, 'nothing lost, nothing read twice across the restart');
        }
      },
    );
  }

  test(
    'two skiff consume --group processes split the partitions; --commit auto commits while running; a leave gives the rest to the other',
    { timeout: TIMEOUT_MS },
    async () => {
      const topic = 'cg-split';
      const group = 'cg-split-g';
      await skiff(['topic', 'create', topic, '-p', '4']);
      const args = ['consume', topic, '--group', group, '--commit', 'auto', '--auto-commit-interval-ms', '300'];
      const a = start(args);
      const b = start(args);
      await waitFor('a Stable group of two', async () => {
        const { groups } = await admin.describeGroups([group]);
        return groups[0]?.state === 'Stable' && groups[0].members.length === 2;
      });
      const { groups } = await admin.describeGroups([group]);
      const owned = groups[0]!.members.map((m) =>
        (AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[topic] ?? []).sort(),
      );
      assert.deepEqual(owned.flat().sort(), [0, 1, 2, 3]);
      assert.deepEqual(
        owned.map((o) => o.length),
        [2, 2],
      );
      await produce(topic, 4, 5);
      await waitFor('20 records between them', () => a.lines.length + b.lines.length === 20);
      // Each process printed exactly the records of two partitions.
      for (const r of [a, b]) {
        const partitions = new Set(r.lines.map((l) => Number(l.split(':')[0])));
        assert.equal(partitions.size, 2, r.lines.join(' '));
        assert.equal(r.lines.length, 10);
      }
      // Auto commits every 300 ms while the processes run.
      await waitFor('the auto commits', async () => {
        const c = await committed(group, topic);
        return [0, 1, 2, 3].every((p) => c[p] === 5);
      });
      // b leaves (Ctrl-C: LeaveGroup); a rejoins, takes all four partitions and reads what comes next.
      assert.equal(await b.interrupt(), 0);
      assert.match(
        b.stderr(),
        new RegExp(`^group ${group}: committed ${topic}/\\d=5 ${topic}/\\d=5 \\(--commit auto, \\d+ commits?\\)$`, 'm'),
      );
      await produce(topic, 4, 2, 5);
      await waitFor('a reads the new records of every partition', () => a.lines.length === 18);
      assert.deepEqual(
        a.lines
          .slice(10)
          .map((l) => l.split(':')[0])
          .sort(),
        ['0', '0', '1', '1', '2', '2', '3', '3'],
      );
      assert.equal(await a.interrupt(), 0);
      assert.deepEqual(await committed(group, topic), { 0: 7, 1: 7, 2: 7, 3: 7 });
    },
  );

  test(
    'a kafkajs member and skiff consume --group share a group: partitions split, nothing read twice, skiff takes over when kafkajs leaves',
    { timeout: TIMEOUT_MS },
    async () => {
      const topic = 'cg-mixed';
      const group = 'cg-mixed-g';
      await skiff(['topic', 'create', topic, '-p', '4']);
      const consumer = kafka.consumer({
        groupId: group,
        partitionAssigners: [kafkajsRange],
        sessionTimeout: 10_000,
        heartbeatInterval: 500,
        rebalanceTimeout: 10_000,
      });
      kafkajsConsumers.push(consumer);
      const viaKafkajs: string[] = [];
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          viaKafkajs.push(message.value!.toString());
        },
      });
      const s = start(['consume', topic, '--group', group, '--commit', 'batch', '--from-beginning']);
      await waitFor('a Stable group of kafkajs and skiff', async () => {
        const { groups } = await admin.describeGroups([group]);
        return groups[0]?.state === 'Stable' && groups[0].members.length === 2;
      });
      await produce(topic, 4, 5);
      await waitFor('20 records between them', () => viaKafkajs.length + s.lines.length === 20);
      const skiffPartitions = new Set(s.lines.map((l) => l.split(':')[0]));
      const kafkajsPartitions = new Set(viaKafkajs.map((l) => l.split(':')[0]));
      assert.equal(skiffPartitions.size, 2, s.lines.join(' '));
      assert.equal(kafkajsPartitions.size, 2, viaKafkajs.join(' '));
      assert.deepEqual([...skiffPartitions, ...kafkajsPartitions].sort(), ['0', '1', '2', '3']);
      await waitFor('skiff batch commits of its partitions', async () => {
        const c = await committed(group, topic);
        return [...skiffPartitions].every((p) => c[Number(p)] === 5);
      });
      await consumer.disconnect(); // LeaveGroup: skiff's heartbeat sees REBALANCE_IN_PROGRESS and rejoins
      await produce(topic, 4, 1, 5);
      await waitFor('skiff reads every partition after kafkajs left', () => s.lines.length === 14, 40_000);
      assert.deepEqual(s.lines.slice(10).sort(), ['0:5', '1:5', '2:5', '3:5']);
      assert.equal(await s.interrupt(), 0);
    },
  );

  test(
    'perf consume --group reads from the group commits and says what it committed',
    { timeout: TIMEOUT_MS },
    async () => {
      const topic = 'cg-perf';
      const group = 'cg-perf-g';
      await skiff(['topic', 'create', topic, '-p', '2']);
      await produce(topic, 2, 50);
      const first = await skiff([
        'perf',
        'consume',
        '--topic',
        topic,
        '--records',
        '60',
        '--group',
        group,
        '--commit',
        'batch',
      ]);
      assert.match(first.stdout, /^60 records received, /m);
      const m = new RegExp(
        `^group ${group}: committed ${topic}/0=(\\d+) ${topic}/1=(\\d+) \\(--commit batch, \\d+ commits?\\)$`,
        'm',
      ).exec(first.stdout);
      assert.ok(m, first.stdout);
      assert.equal(Number(m[1]) + Number(m[2]), 60);
      assert.deepEqual(await committed(group, topic), { 0: Number(m[1]), 1: Number(m[2]) });
      // The rest (40) from the commits; asking for more ends after --timeout-ms without new records,
      // and the rate covers the records read, not that final wait.
      const started = Date.now();
      const rest = await skiff(
        ['perf', 'consume', '--topic', topic, '--records', '41', '--group', group, '--timeout-ms', '1500'],
        '',
        1,
      );
      const wallMs = Date.now() - started;
      const r = /^40 records received, ([\d.]+) records\/sec \([\d.]+ MB\/sec\), [\d.]+ MB in (\d+) ms\.$/m.exec(
        rest.stdout,
      );
      assert.ok(r, rest.stdout);
      assert.ok(Number(r[2]) < wallMs - 1500, `${r[2]} ms reported, ${wallMs} ms in all with a 1500 ms final wait`);
      assert.ok(
        Math.abs(Number(r[1]) - (40 * 1000) / Math.max(Number(r[2]), 1e-3)) / Number(r[1]) < 0.2 || Number(r[2]) === 0,
      );
      // This run commits the partitions it read from (each to its end); the group has both at 50.
      assert.match(
        rest.stdout,
        new RegExp(`^group ${group}: committed (${topic}/[01]=50 ?){1,2} \\(--commit auto, 1 commit\\)$`, 'm'),
      );
      assert.deepEqual(await committed(group, topic), { 0: 50, 1: 50 });
    },
  );

  test(
    'usage: group options need --group, and --group excludes --partition/--offset',
    { timeout: TIMEOUT_MS },
    async () => {
      const a = await skiff(['consume', 'cg-perf', '--commit', 'record'], '', 2);
      assert.match(a.stderr, /--commit and --auto-commit-interval-ms need --group/);
      const b = await skiff(['consume', 'cg-perf', '--group', 'x', '-p', '0'], '', 2);
      assert.match(b.stderr, /--group takes partitions and offsets from the group/);
      const c = await skiff(
        ['consume', 'cg-perf', '--group', 'x', '--commit', 'batch', '--auto-commit-interval-ms', '10'],
        '',
        2,
      );
      assert.match(c.stderr, /--auto-commit-interval-ms goes with --commit auto/);
    },
  );
});
