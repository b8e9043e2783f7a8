/**
 * `skiff group list|describe|reset-offsets|delete` end to end: the real `node bin/skiff.js` against
 * a broker where kafkajs consumers (npm, the project's devDependency) form a real consumer group
 * and commit offsets. Assertions read the commands' output and check it against what kafkajs
 * reported (member ids and assignments from its GROUP_JOIN events) and, independently, against
 * kafkajs's admin client (fetchOffsets, listGroups).
 *
 * Target: a Skiff broker process (default), or the Kafka 4.4 fixture with SKIFF_GROUP_CLI_TARGET=kafka
 * (test/helpers/kafka-fixture.ts), since the commands must work against Kafka too.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { startKafka, type KafkaFixture } from '../helpers/kafka-fixture';
import { runCommand, SKIFF_BIN, type RunResult } from '../helpers/run-command';

const TARGET = process.env.SKIFF_GROUP_CLI_TARGET === 'kafka' ? 'kafka' : 'skiff';
const TEST_TIMEOUT_MS = 120_000;
const TOPIC = 'cli-grp';
const GROUP = 'cli-grp-g';

/** Runs `skiff ARGS` (killed after 60 s). */
function run(args: string[]): Promise<RunResult> {
  return runCommand(process.execPath, [SKIFF_BIN, ...args], '', { timeoutMs: 60_000 });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The OFFSETS section of `skiff group describe` as rows of cells (after its header). */
function offsetRows(stdout: string): string[][] {
  const lines = stdout.split('\n');
  const header = lines.findIndex((l) =>
    /^TOPIC\s+PARTITION\s+CURRENT-OFFSET\s+LOG-END-OFFSET\s+LAG\s+CONSUMER-ID\s+HOST\s+CLIENT-ID$/.test(l),
  );
  assert.ok(header >= 0, `no offsets header in:\n${stdout}`);
  return lines
    .slice(header + 1)
    .filter((l) => l.trim() !== '')
    .map((l) => l.trim().split(/\s+/));
}

/** The `KEY  value` summary line of `skiff group describe`. */
function summary(stdout: string, key: string): string | undefined {
  return new RegExp(`^${key}\\s+(\\S.*)$`, 'm').exec(stdout)?.[1];
}

describe(`skiff group against ${TARGET === 'kafka' ? 'the Kafka 4.4 fixture' : 'a Skiff broker process'}`, () => {
  let skiffBroker: BrokerProcess | undefined;
  let kafkaBroker: KafkaFixture | undefined;
  let brokers: string;
  let kafka: Kafka;
  let producer: Producer;
  const consumers: Consumer[] = [];
  /** Base of the records' CreateTimes (ms): p0 offsets 0-4 at base+0..4, 5-8 at base+100..103. */
  const base = Math.floor(Date.now() / 1000) * 1000 - 600_000;

  async function skiff(args: string[], expect = 0): Promise<RunResult> {
    const r = await run([...args, '--brokers', brokers]);
    assert.equal(r.code, expect, `skiff ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r;
  }

  before(
    async () => {
      if (TARGET === 'kafka') {
        kafkaBroker = await startKafka();
        brokers = kafkaBroker.bootstrap;
      } else {
        skiffBroker = await startBrokerProcess();
        brokers = `127.0.0.1:${skiffBroker.port}`;
      }
      kafka = new Kafka({
        clientId: 'cli-grp-test',
        brokers: [brokers],
        logLevel: logLevel.NOTHING,
        retry: { retries: 10, initialRetryTime: 200 },
      });
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({
        topics: [{ topic: TOPIC, numPartitions: 3, replicationFactor: 1 }],
        waitForLeaders: true,
      });
      await admin.disconnect();
      producer = kafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      await producer.send({
        topic: TOPIC,
        acks: -1,
        messages: Array.from({ length: 5 }, (_, i) => ({
          partition: 0,
          key: `k${i}`,
          value: `p0-${i}`,
          timestamp: String(base + i),
        })),
      });
      await producer.send({
        topic: TOPIC,
        acks: -1,
        messages: Array.from({ length: 3 }, (_, i) => ({
          partition: 1,
          key: `k${i}`,
          value: `p1-${i}`,
          timestamp: String(base + i),
        })),
      });
    },
    { timeout: 150_000 },
  );

  after(async () => {
    for (const c of consumers) await c.disconnect().catch(() => undefined);
    await producer?.disconnect().catch(() => undefined);
    await skiffBroker?.stop();
    await kafkaBroker?.stop();
  });

  test(
    'list, describe, refusals while Stable; describe with lag, reset-offsets (dry run, --execute, clamping, datetime), delete once Empty',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      // Two kafkajs members; each commits what it read after every batch.
      const joins = new Map<string, { memberId: string; assignment: number[]; generation: number }>();
      let generation = 0;
      const seen: string[] = [];
      for (const clientId of ['cli-grp-c1', 'cli-grp-c2']) {
        const k = new Kafka({
          clientId,
          brokers: [brokers],
          logLevel: logLevel.NOTHING,
          retry: { retries: 10, initialRetryTime: 200 },
        });
        const consumer = k.consumer({
          groupId: GROUP,
          sessionTimeout: 10_000,
          heartbeatInterval: 500,
          rebalanceTimeout: 10_000,
        });
        consumers.push(consumer);
        consumer.on(consumer.events.GROUP_JOIN, (e) => {
          const p = e.payload as unknown as { memberId: string; memberAssignment: Record<string, number[]> };
          joins.set(clientId, {
            memberId: p.memberId,
            assignment: [...(p.memberAssignment[TOPIC] ?? [])].sort(),
            generation: ++generation,
          });
        });
        await consumer.connect();
        await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatch: async ({ batch, resolveOffset }) => {
            for (const m of batch.messages) {
              seen.push(m.value!.toString());
              resolveOffset(m.offset);
            }
            const last = batch.messages[batch.messages.length - 1];
            if (last !== undefined)
              await consumer.commitOffsets([
                { topic: batch.topic, partition: batch.partition, offset: String(Number(last.offset) + 1) },
              ]);
          },
        });
      }
      // Bounded wait: both members joined one generation whose assignments split the 3 partitions,
      // and every record has been read (and so committed).
      const settled = (): boolean => {
        const all = [...joins.values()];
        return (
          all.length === 2 &&
          all
            .flatMap((j) => j.assignment)
            .sort()
            .join(',') === '0,1,2' &&
          all.every((j) => j.assignment.length > 0) &&
          new Set(seen).size === 8
        );
      };
      for (let i = 0; i < 300 && !settled(); i++) await sleep(100);
      assert.ok(settled(), `group did not settle: joins ${JSON.stringify([...joins])}, seen ${seen.length}`);
      const admin = kafka.admin();
      await admin.connect();
      try {
        for (let i = 0; i < 100; i++) {
          const o = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
          const byP = new Map(o[0]!.partitions.map((p) => [p.partition, p.offset]));
          if (byP.get(0) === '5' && byP.get(1) === '3') break;
          await sleep(100);
        }
        await sleep(500);

        const listed = await skiff(['group', 'list']);
        assert.match(listed.stdout, /^GROUP\s+PROTOCOL-TYPE\s+STATE$/m);
        assert.match(listed.stdout, new RegExp(`^${GROUP}\\s+consumer\\s+Stable$`, 'm'), listed.stdout);

        const stable = await skiff(['group', 'describe', GROUP]);
        assert.equal(summary(stable.stdout, 'STATE'), 'Stable', stable.stdout);
        assert.equal(summary(stable.stdout, 'PROTOCOL-TYPE'), 'consumer');
        assert.equal(summary(stable.stdout, 'PROTOCOL'), 'RoundRobinAssigner');
        assert.equal(summary(stable.stdout, 'MEMBERS'), '2');
        const owners = new Map<number, { clientId: string; memberId: string }>();
        for (const [clientId, j] of joins) {
          for (const p of j.assignment) owners.set(p, { clientId, memberId: j.memberId });
          const memberLine = stable.stdout.split('\n').find((l) => l.startsWith(`${j.memberId} `));
          assert.ok(memberLine !== undefined, `member ${j.memberId} not listed:\n${stable.stdout}`);
          const cells = memberLine.trim().split(/\s+/);
          assert.deepEqual(
            [cells[0], cells[1], cells[2], cells[4]],
            [j.memberId, '-', clientId, `${TOPIC}:${j.assignment.join(',')}`],
            memberLine,
          );
          assert.match(cells[3]!, /127\.0\.0\.1/);
        }
        const rows = offsetRows(stable.stdout);
        assert.deepEqual(
          rows.map((r) => [r[0], r[1], r[2], r[3], r[4], r[5], r[7]]),
          [
            [TOPIC, '0', '5', '5', '0', owners.get(0)!.memberId, owners.get(0)!.clientId],
            [TOPIC, '1', '3', '3', '0', owners.get(1)!.memberId, owners.get(1)!.clientId],
            [TOPIC, '2', '-', '0', '-', owners.get(2)!.memberId, owners.get(2)!.clientId],
          ],
          stable.stdout,
        );

        const refused = await skiff(
          ['group', 'reset-offsets', GROUP, '--topic', TOPIC, '--to-earliest', '--execute'],
          1,
        );
        assert.equal(
          refused.stderr.trim(),
          `Error: Assignments can only be reset if the group '${GROUP}' is inactive, but the current state is Stable.`,
        );
        assert.equal(refused.stdout, '');
        const notEmpty = await skiff(['group', 'delete', GROUP], 1);
        assert.match(notEmpty.stdout, new RegExp(`^${GROUP}\\s+NON_EMPTY_GROUP$`, 'm'));

        // Both members leave (LeaveGroup): Empty, offsets kept. Four more records on partition 0.
        for (const c of consumers.splice(0)) await c.disconnect();
        await producer.send({
          topic: TOPIC,
          acks: -1,
          messages: Array.from({ length: 4 }, (_, i) => ({
            partition: 0,
            key: `late${i}`,
            value: `p0-late-${i}`,
            timestamp: String(base + 100 + i),
          })),
        });
        let empty: RunResult | undefined;
        for (let i = 0; i < 50; i++) {
          empty = await skiff(['group', 'describe', GROUP]);
          if (summary(empty.stdout, 'STATE') === 'Empty') break;
          await sleep(200);
        }
        assert.equal(summary(empty!.stdout, 'STATE'), 'Empty', empty!.stdout);
        assert.equal(summary(empty!.stdout, 'MEMBERS'), '0');
        assert.match(empty!.stdout, new RegExp(`^\\(consumer group '${GROUP}' has no active members\\)$`, 'm'));
        assert.deepEqual(offsetRows(empty!.stdout), [
          [TOPIC, '0', '5', '9', '4', '-', '-', '-'],
          [TOPIC, '1', '3', '3', '0', '-', '-', '-'],
        ]);
        assert.match((await skiff(['group', 'list'])).stdout, new RegExp(`^${GROUP}\\s+consumer\\s+Empty$`, 'm'));

        // Dry run (the default): the plan, nothing committed.
        const dry = await skiff(['group', 'reset-offsets', GROUP, '--topic', TOPIC, '--to-earliest']);
        assert.deepEqual(
          dry.stdout
            .trimEnd()
            .split('\n')
            .map((l) => l.trim().split(/\s+/)),
          [
            ['GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET'],
            [GROUP, TOPIC, '0', '0'],
            [GROUP, TOPIC, '1', '0'],
            [GROUP, TOPIC, '2', '0'],
          ],
        );
        assert.match(dry.stderr, /dry run: nothing committed/);
        const fetched = async (): Promise<Record<number, string>> => {
          const o = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
          return Object.fromEntries(o[0]!.partitions.map((p) => [p.partition, p.offset]));
        };
        assert.deepEqual(await fetched(), { 0: '5', 1: '3', 2: '-1' });

        // --to-offset past the end is clamped to the log end (with Kafka's warning); dry run.
        const clamped = await skiff([
          'group',
          'reset-offsets',
          GROUP,
          '--topic',
          `${TOPIC}:0`,
          '--to-offset',
          '100',
          '--dry-run',
        ]);
        assert.match(clamped.stdout, new RegExp(`^${GROUP}\\s+${TOPIC}\\s+0\\s+9$`, 'm'));
        assert.match(
          clamped.stderr,
          new RegExp(
            `New offset \\(100\\) is higher than latest offset for topic partition ${TOPIC}-0\\. Value will be set to 9`,
          ),
        );

        // --execute: partition 0 to offset 7, partition 1 to the latest, partition 2 to the earliest.
        const executed = await skiff([
          'group',
          'reset-offsets',
          GROUP,
          '--topic',
          `${TOPIC}:0`,
          '--to-offset',
          '7',
          '--execute',
        ]);
        assert.match(executed.stdout, new RegExp(`^${GROUP}\\s+${TOPIC}\\s+0\\s+7$`, 'm'));
        assert.doesNotMatch(executed.stderr, /dry run/);
        await skiff(['group', 'reset-offsets', GROUP, '--topic', `${TOPIC}:1,2`, '--to-earliest', '--execute']);
        assert.deepEqual(await fetched(), { 0: '7', 1: '0', 2: '0' });

        // --to-datetime: the first record at or after base+100 ms is offset 5 on partition 0; none on 1 and 2 (-> log end).
        const byTime = await skiff([
          'group',
          'reset-offsets',
          GROUP,
          '--topic',
          TOPIC,
          '--to-datetime',
          new Date(base + 100).toISOString(),
          '--execute',
        ]);
        assert.deepEqual(
          byTime.stdout
            .trimEnd()
            .split('\n')
            .slice(1)
            .map((l) => l.trim().split(/\s+/).slice(2)),
          [
            ['0', '5'],
            ['1', '3'],
            ['2', '0'],
          ],
        );
        assert.deepEqual(await fetched(), { 0: '5', 1: '3', 2: '0' });
        const afterReset = await skiff(['group', 'describe', GROUP]);
        assert.deepEqual(
          offsetRows(afterReset.stdout).map((r) => r.slice(0, 5)),
          [
            [TOPIC, '0', '5', '9', '4'],
            [TOPIC, '1', '3', '3', '0'],
            [TOPIC, '2', '0', '0', '0'],
          ],
        );
        const latest = await skiff(['group', 'reset-offsets', GROUP, '--all-topics', '--to-latest', '--execute']);
        assert.deepEqual(
          latest.stdout
            .trimEnd()
            .split('\n')
            .slice(1)
            .map((l) => l.trim().split(/\s+/).slice(2)),
          [
            ['0', '9'],
            ['1', '3'],
            ['2', '0'],
          ],
        );
        assert.deepEqual(await fetched(), { 0: '9', 1: '3', 2: '0' });

        // A new member of the group starts at the committed offsets: nothing left to read but what we add.
        await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition: 1, value: 'after-reset' }] });
        const c3 = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 500 });
        consumers.push(c3);
        const third: string[] = [];
        await c3.connect();
        await c3.subscribe({ topics: [TOPIC], fromBeginning: true });
        await c3.run({ eachMessage: async ({ message }) => void third.push(message.value!.toString()) });
        for (let i = 0; i < 200 && third.length === 0; i++) await sleep(100);
        await sleep(500);
        assert.deepEqual(third, ['after-reset']);
        for (const c of consumers.splice(0)) await c.disconnect();

        // Delete: OK once Empty; then gone from list and describe; deleting again is GROUP_ID_NOT_FOUND.
        let deleted: RunResult | undefined;
        for (let i = 0; i < 50; i++) {
          deleted = await run(['group', 'delete', GROUP, '--brokers', brokers]);
          if (deleted.code === 0) break;
          await sleep(200); // until the coordinator has processed the LeaveGroup
        }
        assert.equal(deleted!.code, 0, deleted!.stdout + deleted!.stderr);
        assert.match(deleted!.stdout, new RegExp(`^${GROUP}\\s+OK$`, 'm'));
        assert.doesNotMatch((await skiff(['group', 'list'])).stdout, new RegExp(`^${GROUP}\\s`, 'm'));
        assert.ok(!(await admin.listGroups()).groups.some((g) => g.groupId === GROUP), 'kafkajs still lists the group');
        const gone = await skiff(['group', 'describe', GROUP], 1);
        assert.equal(gone.stderr.trim(), `Error: Consumer group '${GROUP}' does not exist.`);
        const again = await skiff(['group', 'delete', GROUP, 'cli-grp-never'], 1);
        assert.match(again.stdout, new RegExp(`^${GROUP}\\s+GROUP_ID_NOT_FOUND$`, 'm'));
        assert.match(again.stdout, /^cli-grp-never\s+GROUP_ID_NOT_FOUND$/m);
      } finally {
        await admin.disconnect();
      }
    },
  );

  test(
    'reset-offsets of a group that never existed (Dead) commits, creating it Empty; usage errors exit 2',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const group = 'cli-grp-fresh';
      const r = await skiff([
        'group',
        'reset-offsets',
        group,
        '--topic',
        `${TOPIC}:1`,
        '--to-offset',
        '2',
        '--execute',
      ]);
      assert.match(r.stdout, new RegExp(`^${group}\\s+${TOPIC}\\s+1\\s+2$`, 'm'));
      const described = await skiff(['group', 'describe', group]);
      assert.equal(summary(described.stdout, 'STATE'), 'Empty', described.stdout);
      assert.deepEqual(
        offsetRows(described.stdout).map((x) => x.slice(0, 5)),
        [[TOPIC, '1', '2', '4', '2']],
      );
      const unknownTopic = await skiff(
        ['group', 'reset-offsets', group, '--topic', 'cli-grp-no-topic', '--to-earliest'],
        1,
      );
      assert.match(unknownTopic.stderr, /UNKNOWN_TOPIC_OR_PARTITION/);
      const unknownPartition = await skiff(
        ['group', 'reset-offsets', group, '--topic', `${TOPIC}:7`, '--to-earliest'],
        1,
      );
      assert.match(unknownPartition.stderr, /UNKNOWN_TOPIC_OR_PARTITION.*cli-grp-7|cli-grp-7.*do not exist/);
      for (const args of [
        ['group', 'reset-offsets', group, '--topic', TOPIC],
        ['group', 'reset-offsets', group, '--topic', TOPIC, '--to-earliest', '--to-latest'],
        ['group', 'reset-offsets', group, '--to-earliest'],
        ['group', 'reset-offsets', group, '--topic', `${TOPIC}:x`, '--to-earliest'],
        ['group', 'describe'],
      ]) {
        const u = await run([...args, '--brokers', brokers]);
        assert.equal(u.code, 2, `${args.join(' ')}: ${u.stderr}`);
      }
      assert.match((await skiff(['group', 'delete', group])).stdout, new RegExp(`^${group}\\s+OK$`, 'm'));
    },
  );
});
