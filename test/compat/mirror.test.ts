/**
 * `skiff mirror` from a Skiff broker process into the Kafka 4.4 fixture, checked with kafkajs (a
 * real client) on both sides and Skiff's own client for reading partitions by assignment.
 *
 * Source: `orders` (3 partitions, a retention.ms override; keys, headers, CreateTimes in the past; a
 * tombstone; partition 2's log start moved to 3 by DeleteRecords) and `compacted` (cleanup.policy
 * compact, 2 KiB segments: 12 keys x 6 versions plus filler, cleaned until the log has gaps). A
 * kafkajs consumer group `g1` consumed part of each partition on Skiff, committed and left; group
 * `live` is still consuming (Stable) while mirror runs.
 *
 * - One run: the topics exist on Kafka with the partition count and the overrides Kafka accepts
 *   (segment.bytes=2048 is refused by Kafka and reported); every partition holds the source's
 *   records in order, with keys, values, headers and timestamps, each tagged with its source offset;
 *   `live` is skipped with the reason; a kafkajs consumer of `g1` on Kafka reads exactly the
 *   records g1 had not consumed on Skiff, compacted topic included, nothing lost or repeated.
 * - A second run copies nothing and does not rewind g1 (now further along on Kafka).
 * - `--follow`: records produced to Skiff afterwards appear on Kafka in order, a group that commits
 *   on Skiff meanwhile gets its translated offsets on Kafka, and SIGTERM stops it (exit 0).
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import {
  ConfigResourceTypes,
  Kafka,
  logLevel,
  type Admin,
  type Consumer as KafkajsConsumer,
  type Producer,
} from 'kafkajs';
import { KafkaClient } from '../../src/client/client';
import { Consumer } from '../../src/client/consumer';
import { SOURCE_OFFSET_HEADER } from '../../src/cli/mirror-offset-map';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { startKafka, type KafkaFixture } from '../helpers/kafka-fixture';
import { runCommand, SKIFF_BIN, type RunResult } from '../helpers/run-command';
import { waitFor } from './ops';

const TEST_TIMEOUT_MS = 240_000;
const ORDERS = 'orders';
const COMPACTED = 'compacted';
const KEYS = 12;
const VERSIONS = 6;
/** CreateTimes of the produced records: an hour ago, so any target accepts them. */
const BASE_TS = Date.now() - 3_600_000;

/** A record as compared between the clusters (header values as strings, mirror's header apart). */
interface Rec {
  offset: number;
  key: string | null;
  value: string | null;
  timestamp: number;
  headers: Array<[string, string | null]>;
  /** The value of the mirror's source-offset header, null when absent. */
  sourceOffset: number | null;
}

const key = (topic: string, partition: number): string => `${topic}/${partition}`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads partitions from their log start to their high watermark with Skiff's client (by assignment). */
async function readAll(bootstrap: string, topic: string): Promise<Map<number, Rec[]>> {
  const client = await KafkaClient.connect({ brokers: bootstrap, clientId: 'mirror-test-reader' });
  try {
    const md = await client.topicMetadata(topic);
    const starts = await client.listOffsets(
      topic,
      md.partitions.map((p) => ({ partition: p.partition, timestamp: -2 })),
    );
    const consumer = new Consumer(client, { maxWaitMs: 100 });
    consumer.assign(
      md.partitions.map((p) => ({ topic, partition: p.partition, offset: starts.get(p.partition)!.offset })),
    );
    await consumer.refreshEndOffsets();
    const out = new Map<number, Rec[]>(md.partitions.map((p) => [p.partition, []]));
    const deadline = Date.now() + 30_000;
    while (!consumer.allAtEnd()) {
      assert.ok(Date.now() < deadline, `reading ${topic} from ${bootstrap} did not reach the end`);
      for (const r of await consumer.poll()) {
        const mirrorHeader = r.headers.find((h) => h.key === SOURCE_OFFSET_HEADER);
        out.get(r.partition)!.push({
          offset: r.offset,
          key: r.key?.toString() ?? null,
          value: r.value?.toString() ?? null,
          timestamp: r.timestamp,
          headers: r.headers
            .filter((h) => h.key !== SOURCE_OFFSET_HEADER)
            .map((h) => [h.key, h.value?.toString() ?? null]),
          sourceOffset: mirrorHeader?.value ? Number(mirrorHeader.value.toString()) : null,
        });
      }
    }
    return out;
  } finally {
    client.close();
  }
}

/**
 * The partitions (`topic/partition`, sorted) named by mirror's per-partition lines of group
 * `groupId`; each must appear on one line only (README's migration step 4 counts on it).
 */
function groupPartitionLines(stdout: string, groupId: string): string[] {
  const prefix = `group ${groupId} `;
  const partitions = stdout
    .split('\n')
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length, line.indexOf(':')));
  assert.equal(new Set(partitions).size, partitions.length, `one line per partition of ${groupId}:\n${stdout}`);
  return partitions.sort();
}

/** Strips what differs between the clusters by design (offsets, the mirror's header). */
const content = (r: Rec): unknown => [r.key, r.value, r.timestamp, r.headers];

describe('skiff mirror: Skiff broker -> Kafka 4.4 fixture', () => {
  let skiff: BrokerProcess;
  let kafka: KafkaFixture;
  let source: string;
  let target: string;
  let skiffKafka: Kafka;
  let kafkaKafka: Kafka;
  let skiffAdmin: Admin;
  let kafkaAdmin: Admin;
  let producer: Producer;
  let liveConsumer: KafkajsConsumer | undefined;
  /** g1's committed offsets on Skiff, by topic/partition. */
  const committedOnSkiff = new Map<string, number>();
  /** The source's records right before the first mirror run. */
  const sourceRecords = new Map<string, Map<number, Rec[]>>();

  async function mirror(args: string[] = []): Promise<RunResult> {
    const r = await runCommand(
      process.execPath,
      [SKIFF_BIN, 'mirror', '--brokers', source, '--to', target, ...args],
      '',
      {
        timeoutMs: 120_000,
      },
    );
    return r;
  }

  before(
    async () => {
      [skiff, kafka] = await Promise.all([
        startBrokerProcess({ overrides: { 'log.cleaner.backoff.ms': '200' } }),
        startKafka(),
      ]);
      source = `127.0.0.1:${skiff.port}`;
      target = kafka.bootstrap;
      const opts = { logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 200 } };
      skiffKafka = new Kafka({ ...opts, clientId: 'mirror-test-skiff', brokers: [source] });
      kafkaKafka = new Kafka({ ...opts, clientId: 'mirror-test-kafka', brokers: [target] });
      skiffAdmin = skiffKafka.admin();
      kafkaAdmin = kafkaKafka.admin();
      await Promise.all([skiffAdmin.connect(), kafkaAdmin.connect()]);
      producer = skiffKafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
    },
    { timeout: 150_000 },
  );

  after(async () => {
    await liveConsumer?.disconnect().catch(() => undefined);
    await producer?.disconnect().catch(() => undefined);
    await skiffAdmin?.disconnect().catch(() => undefined);
    await kafkaAdmin?.disconnect().catch(() => undefined);
    await skiff?.stop();
    await kafka?.stop();
  });

  /** Consumes with group `groupId` on Skiff until each partition has had `limits` records, committing each. */
  async function consumeOnSkiff(groupId: string, limits: Map<string, number>): Promise<void> {
    const consumer = skiffKafka.consumer({ groupId, maxWaitTimeInMs: 200, retry: { retries: 10 } });
    await consumer.connect();
    await consumer.subscribe({ topics: [ORDERS, COMPACTED], fromBeginning: true });
    const seen = new Map<string, number>();
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        const k = key(topic, partition);
        const n = seen.get(k) ?? 0;
        if (n >= (limits.get(k) ?? 0)) {
          consumer.pause([{ topic, partitions: [partition] }]);
          return;
        }
        seen.set(k, n + 1);
        const next = Number(message.offset) + 1;
        await consumer.commitOffsets([{ topic, partition, offset: String(next) }]);
        committedOnSkiff.set(k, next);
        if ([...limits].every(([lk, limit]) => (seen.get(lk) ?? 0) >= limit)) resolveDone();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      done,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`group ${groupId} did not reach its limits: ${[...seen]}`)), 60_000);
      }),
    ]);
    clearTimeout(timer);
    await consumer.disconnect();
  }

  test(
    'one run: topics, configs, records in order with keys, headers and timestamps; g1 resumes on Kafka exactly where it stopped on Skiff',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      // --- the source ---
      await skiffAdmin.createTopics({
        topics: [
          {
            topic: ORDERS,
            numPartitions: 3,
            replicationFactor: 1,
            configEntries: [{ name: 'retention.ms', value: '604800001' }],
          },
          {
            topic: COMPACTED,
            numPartitions: 1,
            replicationFactor: 1,
            configEntries: [
              { name: 'cleanup.policy', value: 'compact' },
              { name: 'segment.bytes', value: '2048' },
              { name: 'min.cleanable.dirty.ratio', value: '0.01' },
            ],
          },
        ],
        waitForLeaders: true,
      });
      for (let p = 0; p < 3; p++) {
        await producer.send({
          topic: ORDERS,
          acks: -1,
          messages: Array.from({ length: 10 }, (_, i) => ({
            partition: p,
            key: i === 7 ? null : `k-${p}-${i}`,
            value: p === 1 && i === 5 ? null : `order-${p}-${i}`,
            timestamp: String(BASE_TS + p * 1000 + i),
            headers: i % 3 === 0 ? {} : { trace: `t-${p}-${i}`, source: 'skiff' },
          })),
        });
      }
      await skiffAdmin.fetchTopicOffsets(ORDERS); // loads the topic's metadata into kafkajs's admin client
      await skiffAdmin.deleteTopicRecords({ topic: ORDERS, partitions: [{ partition: 2, offset: '3' }] });
      for (let v = 0; v < VERSIONS; v++) {
        await producer.send({
          topic: COMPACTED,
          acks: -1,
          messages: Array.from({ length: KEYS }, (_, k) => ({
            partition: 0,
            key: `key-${String(k).padStart(2, '0')}`,
            value: `value-${k}-v${v}-${'x'.repeat(40)}`,
            timestamp: String(BASE_TS + 10_000 + v * 100 + k),
            headers: { version: String(v) },
          })),
        });
      }
      // Filler records of one key roll the segments holding the versions above, so they get cleaned.
      for (let i = 0; i < 8; i++)
        await producer.send({
          topic: COMPACTED,
          acks: -1,
          messages: [
            {
              partition: 0,
              key: 'filler',
              value: `filler-${i}-${'f'.repeat(500)}`,
              timestamp: String(BASE_TS + 20_000 + i),
            },
          ],
        });
      const produced = KEYS * VERSIONS + 8;
      let previous = '';
      const compacted = await waitFor(
        'the cleaner to leave one record per key (gaps in the source log), and to settle',
        60_000,
        async () => {
          const recs = (await readAll(source, COMPACTED)).get(0)!;
          const offsets = recs.map((r) => r.offset).join(',');
          const settled = offsets === previous;
          previous = offsets;
          return settled && recs.filter((r) => r.key !== 'filler').length === KEYS ? recs : undefined;
        },
        1000,
      );
      assert.ok(compacted.length < produced, `compacted: ${compacted.length} of ${produced} records left`);
      assert.ok(
        compacted.some((r, i) => i > 0 && r.offset !== compacted[i - 1]!.offset + 1),
        `the source log has gaps: ${compacted.map((r) => r.offset).join(',')}`,
      );
      const ordersOnSkiff = await readAll(source, ORDERS);
      assert.equal(ordersOnSkiff.get(2)![0]!.offset, 3, 'DeleteRecords moved partition 2 log start to 3');

      // --- the groups: g1 consumed part of each partition and left; `live` keeps consuming ---
      const compactedLimit = Math.floor(compacted.length / 2);
      await consumeOnSkiff(
        'g1',
        new Map([
          [key(ORDERS, 0), 4],
          [key(ORDERS, 1), 10],
          [key(ORDERS, 2), 2],
          [key(COMPACTED, 0), compactedLimit],
        ]),
      );
      assert.equal(committedOnSkiff.get(key(ORDERS, 2)), 5);
      assert.equal(committedOnSkiff.get(key(COMPACTED, 0)), compacted[compactedLimit - 1]!.offset + 1);
      const fetched = await skiffAdmin.fetchOffsets({ groupId: 'g1', topics: [ORDERS, COMPACTED] });
      for (const t of fetched)
        for (const p of t.partitions)
          assert.equal(
            Number(p.offset),
            committedOnSkiff.get(key(t.topic, p.partition)),
            `g1 ${t.topic}/${p.partition}`,
          );
      liveConsumer = skiffKafka.consumer({ groupId: 'live', maxWaitTimeInMs: 200 });
      await liveConsumer.connect();
      await liveConsumer.subscribe({ topics: [ORDERS], fromBeginning: true });
      let liveJoined!: () => void;
      const joined = new Promise<void>((resolve) => (liveJoined = resolve));
      liveConsumer.on(liveConsumer.events.GROUP_JOIN, () => liveJoined());
      await liveConsumer.run({ eachMessage: async () => undefined });
      await joined;

      // The source as mirror will see it (the cleaner has settled: the tail segment is active).
      sourceRecords.set(ORDERS, await readAll(source, ORDERS));
      sourceRecords.set(COMPACTED, await readAll(source, COMPACTED));
      assert.deepEqual(
        sourceRecords
          .get(COMPACTED)!
          .get(0)!
          .map((r) => r.offset),
        compacted.map((r) => r.offset),
        'the compacted log did not change while g1 consumed',
      );

      // --- mirror ---
      const r = await mirror();
      assert.equal(r.code, 0, `mirror exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
      assert.match(r.stdout, /topic orders: created on the target with 3 partitions, configs retention\.ms=604800001/);
      assert.match(
        r.stdout,
        /topic compacted: created on the target with 1 partitions, configs .*cleanup\.policy=compact/,
      );
      assert.match(r.stdout, /topic compacted: config segment\.bytes=2048 not copied: the target refused it/);
      assert.match(r.stdout, /group live: not mirrored: it is Stable on the source/);
      // One line per partition of g1, each committed now (orders/2's log start moved: source 5 is target 2).
      assert.match(r.stdout, /^group g1 orders\/0: source offset 4 -> target offset 4$/m);
      assert.match(r.stdout, /^group g1 orders\/1: source offset 10 -> target offset 10$/m);
      assert.match(r.stdout, /^group g1 orders\/2: source offset 5 -> target offset 2$/m);
      assert.match(r.stdout, /^group g1 compacted\/0: source offset \d+ -> target offset \d+$/m);
      assert.deepEqual(groupPartitionLines(r.stdout, 'g1'), ['compacted/0', 'orders/0', 'orders/1', 'orders/2']);
      assert.doesNotMatch(r.stdout, /__consumer_offsets/);
      await liveConsumer.disconnect();
      liveConsumer = undefined;

      // Topics and configs on Kafka.
      const listed = await kafkaAdmin.listTopics();
      assert.ok(!listed.some((t) => t.startsWith('__') && t !== '__consumer_offsets'), listed.join(','));
      const md = await kafkaAdmin.fetchTopicMetadata({ topics: [ORDERS, COMPACTED] });
      assert.deepEqual(md.topics.map((t) => [t.name, t.partitions.length]).sort(), [
        [COMPACTED, 1],
        [ORDERS, 3],
      ]);
      const configs = await kafkaAdmin.describeConfigs({
        includeSynonyms: false,
        resources: [
          { type: ConfigResourceTypes.TOPIC, name: ORDERS, configNames: ['retention.ms'] },
          {
            type: ConfigResourceTypes.TOPIC,
            name: COMPACTED,
            configNames: ['cleanup.policy', 'min.cleanable.dirty.ratio'],
          },
        ],
      });
      const configValue = (topic: string, name: string): string | undefined =>
        configs.resources.find((x) => x.resourceName === topic)?.configEntries.find((e) => e.configName === name)
          ?.configValue;
      assert.equal(configValue(ORDERS, 'retention.ms'), '604800001');
      assert.equal(configValue(COMPACTED, 'cleanup.policy'), 'compact');
      assert.equal(configValue(COMPACTED, 'min.cleanable.dirty.ratio'), '0.01');

      // Records on Kafka: the source's, in order, each tagged with its source offset.
      for (const topic of [ORDERS, COMPACTED]) {
        const onKafka = await readAll(target, topic);
        for (const [p, recs] of sourceRecords.get(topic)!) {
          const copy = onKafka.get(p)!;
          assert.deepEqual(copy.map(content), recs.map(content), `${topic}/${p}: same records in the same order`);
          assert.deepEqual(
            copy.map((c) => c.sourceOffset),
            recs.map((s) => s.offset),
            `${topic}/${p}: each copy names its source offset`,
          );
          assert.deepEqual(
            copy.map((c) => c.offset),
            recs.map((_, i) => i),
            `${topic}/${p}: dense target offsets`,
          );
        }
      }

      // g1 on Kafka: a kafkajs consumer of the group reads exactly what g1 had not consumed on Skiff.
      const expected = new Map<string, unknown[]>();
      let expectedTotal = 0;
      for (const [topic, byPartition] of sourceRecords)
        for (const [p, recs] of byPartition) {
          const c = committedOnSkiff.get(key(topic, p)) ?? 0;
          const rest = recs.filter((x) => x.offset >= c).map((x) => [x.key, x.value]);
          expected.set(key(topic, p), rest);
          expectedTotal += rest.length;
        }
      assert.ok(expectedTotal > 0);
      const got = new Map<string, unknown[]>();
      let gotTotal = 0;
      const resumed = kafkaKafka.consumer({ groupId: 'g1', maxWaitTimeInMs: 200 });
      await resumed.connect();
      await resumed.subscribe({ topics: [ORDERS, COMPACTED], fromBeginning: false });
      await resumed.run({
        eachMessage: async ({ topic, partition, message }) => {
          const list = got.get(key(topic, partition)) ?? [];
          list.push([message.key?.toString() ?? null, message.value?.toString() ?? null]);
          got.set(key(topic, partition), list);
          gotTotal++;
        },
      });
      try {
        // Too few records (a translation too far ahead) shows in the comparison below, not as a timeout.
        await waitFor(`g1 to read ${expectedTotal} records on Kafka`, 30_000, async () =>
          gotTotal >= expectedTotal ? true : undefined,
        ).catch(() => undefined);
        await sleep(3000); // anything repeated or extra would arrive now
      } finally {
        await resumed.disconnect();
      }
      for (const [k, rest] of expected)
        assert.deepEqual(got.get(k) ?? [], rest, `g1 on Kafka, ${k}: exactly the records it had not consumed on Skiff`);
      assert.equal(gotTotal, expectedTotal, 'nothing repeated');
    },
  );

  test(
    'a second run copies nothing and does not rewind g1, which moved on on Kafka',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      // A group that joined on Skiff and left without committing anything.
      const idle = skiffKafka.consumer({ groupId: 'idle', maxWaitTimeInMs: 200 });
      await idle.connect();
      await idle.subscribe({ topics: [ORDERS], fromBeginning: false });
      let idleJoined!: () => void;
      const idleJoin = new Promise<void>((resolve) => (idleJoined = resolve));
      idle.on(idle.events.GROUP_JOIN, () => idleJoined());
      await idle.run({ autoCommit: false, eachMessage: async () => undefined });
      await idleJoin;
      await idle.disconnect();
      const idleOffsets = await skiffAdmin.fetchOffsets({ groupId: 'idle', topics: [ORDERS] });
      assert.deepEqual(
        idleOffsets.flatMap((t) => t.partitions.map((p) => p.offset)),
        ['-1', '-1', '-1'],
        'idle committed nothing on Skiff',
      );
      const endsBefore = await kafkaAdmin.fetchTopicOffsets(ORDERS);
      const g1Before = await kafkaAdmin.fetchOffsets({ groupId: 'g1', topics: [ORDERS, COMPACTED] });
      const r = await mirror();
      assert.equal(r.code, 0, `mirror exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
      assert.match(r.stdout, /^mirror: 0 records copied$/m);
      assert.match(r.stdout, /topic orders partition 0: resuming after source offset 9/);
      // README step 4's check: one line per group partition, whether committed, already there or kept.
      assert.match(
        r.stdout,
        /^group g1 orders\/0: target offset 10 kept: it is ahead of source offset 4 \(target 4\)$/m,
      );
      assert.match(r.stdout, /^group g1 orders\/1: source offset 10 -> target offset 10 \(already there\)$/m);
      assert.match(
        r.stdout,
        /^group g1 orders\/2: target offset 7 kept: it is ahead of source offset 5 \(target 2\)$/m,
      );
      assert.match(r.stdout, /^group g1 compacted\/0: target offset \d+ kept: it is ahead of source offset \d+/m);
      assert.deepEqual(groupPartitionLines(r.stdout, 'g1'), ['compacted/0', 'orders/0', 'orders/1', 'orders/2']);
      // `live` left after the first run: Empty now, its offsets are committed on this run.
      assert.deepEqual(groupPartitionLines(r.stdout, 'live'), ['orders/0', 'orders/1', 'orders/2']);
      assert.match(r.stdout, /^group live orders\/0: source offset \d+ -> target offset \d+$/m);
      assert.match(r.stdout, /^group idle: nothing to mirror: no committed offsets on the source$/m);
      assert.deepEqual(groupPartitionLines(r.stdout, 'idle'), []);
      assert.deepEqual(await kafkaAdmin.fetchTopicOffsets(ORDERS), endsBefore);
      assert.deepEqual(await kafkaAdmin.fetchOffsets({ groupId: 'g1', topics: [ORDERS, COMPACTED] }), g1Before);
      for (const topic of [ORDERS, COMPACTED]) {
        const onKafka = await readAll(target, topic);
        for (const [p, recs] of sourceRecords.get(topic)!)
          assert.equal(onKafka.get(p)!.length, recs.length, `${topic}/${p}: no duplicates`);
      }
    },
  );

  test(
    '--follow: new records appear on Kafka in order, group offsets are re-translated, SIGTERM stops it',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const child = spawn(
        process.execPath,
        [SKIFF_BIN, 'mirror', '--brokers', source, '--to', target, '--follow', '--group-interval-ms', '500'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      try {
        await waitFor('mirror --follow to catch up', 60_000, async () =>
          /following new records/.test(stdout) ? true : undefined,
        );
        const fresh = Array.from({ length: 6 }, (_, i) => ({
          partition: i % 2,
          key: `new-${i}`,
          value: `new-order-${i}`,
          timestamp: String(BASE_TS + 50_000 + i),
          headers: { trace: `new-${i}` },
        }));
        for (const m of fresh) await producer.send({ topic: ORDERS, acks: -1, messages: [m] });
        await producer.send({
          topic: COMPACTED,
          acks: -1,
          messages: [{ partition: 0, key: 'key-00', value: 'value-0-latest', timestamp: String(BASE_TS + 60_000) }],
        });
        // A group that commits on Skiff while mirror follows: `late` at orders/0 offset 12 (before the third new record).
        await skiffAdmin.setOffsets({ groupId: 'late', topic: ORDERS, partitions: [{ partition: 0, offset: '12' }] });

        const want = (p: number): string[] => fresh.filter((m) => m.partition === p).map((m) => m.value);
        const tail = await waitFor(
          'the new records on Kafka',
          30_000,
          async () => {
            const onKafka = await readAll(target, ORDERS);
            const news = (p: number): Rec[] => onKafka.get(p)!.filter((x) => x.key?.startsWith('new-') === true);
            return news(0).length === want(0).length && news(1).length === want(1).length ? onKafka : undefined;
          },
          300,
        );
        for (const p of [0, 1]) {
          const news = tail.get(p)!.filter((x) => x.key?.startsWith('new-') === true);
          assert.deepEqual(
            news.map((x) => x.value),
            want(p),
            `orders/${p}: the new records, in order`,
          );
          assert.deepEqual(
            news.map((x) => x.sourceOffset),
            want(p).map((_, i) => 10 + i),
          );
          assert.deepEqual(
            news.map((x) => x.headers),
            want(p).map((_, i) => [['trace', `new-${2 * i + p}`]]),
          );
          assert.equal(
            tail.get(p)!.length,
            sourceRecords.get(ORDERS)!.get(p)!.length + want(p).length,
            'no duplicates',
          );
        }
        await waitFor('the latest compacted record on Kafka', 30_000, async () => {
          const recs = (await readAll(target, COMPACTED)).get(0)!;
          return recs[recs.length - 1]?.value === 'value-0-latest' ? true : undefined;
        });
        // orders/0 on Kafka: source offsets 0-9 at 0-9, then 10, 11 at 10, 11: source 12 is target 12.
        const late = await waitFor('late on Kafka', 30_000, async () => {
          const o = await kafkaAdmin.fetchOffsets({ groupId: 'late', topics: [ORDERS] });
          const p0 = o[0]?.partitions.find((x) => x.partition === 0);
          return p0 !== undefined && p0.offset !== '-1' ? p0.offset : undefined;
        });
        assert.equal(late, '12');
      } finally {
        child.kill('SIGTERM');
        const code = await exited;
        clearTimeout(killTimer);
        assert.equal(code, 0, `mirror --follow exited ${code} after SIGTERM\nstdout:\n${stdout}\nstderr:\n${stderr}`);
      }
      assert.match(stdout, /group late orders\/0: source offset 12 -> target offset 12/);
      assert.match(stdout, /^mirror: stopped$/m);
    },
  );
});
