/**
 * Log compaction through a real Skiff process, seen by real clients (kafkajs produces, confluent-
 * kafka/librdkafka and kafka-python consume by assignment). The broker runs with
 * `log.cleaner.backoff.ms=200`; the topic has cleanup.policy=compact, segment.bytes=2048,
 * min.cleanable.dirty.ratio=0.01 and delete.retention.ms=3000.
 *
 * - 20 keys x 15 versions (some sends gzip-compressed), then filler records of another key that
 *   roll the segment holding the last versions: within a bounded wait, consuming from the beginning
 *   gives exactly one record per key, its latest value, at the offset the producer was told.
 * - kafka-dump-log (Kafka's DumpLogSegments) reads the cleaned first segment: every batch valid,
 *   offsets as consumed, and --verify-index-only passes.
 * - Tombstones for 5 keys: first the older values go and the tombstones stay (consumers see them);
 *   once delete.retention.ms has passed, the tombstones go too and those keys are gone.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CompressionTypes, Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { describeToolRun, runKafkaTool } from '../helpers/kafka-fixture';
import { withBrokerLog } from './clients';
import { pythonOp, waitFor, type OpError } from './ops';

const TIMEOUT_MS = 120_000;
const KEYS = 20;
const VERSIONS = 15;
const DELETE_RETENTION_MS = 3000;

interface Consumed {
  records: Array<{ offset: number; key: string | null; value: string | null }>;
  error: OpError | null;
}

describe('cleanup.policy=compact: the log cleaner keeps the latest record per key; tombstones go after delete.retention.ms', () => {
  let broker: BrokerProcess;
  let bootstrap: string;
  let admin: Admin;
  let producer: Producer;
  const topic = 'compacted';
  /** Every record produced: key -> [offset, value] in produce order. */
  const produced: Array<{ offset: number; key: string; value: string | null }> = [];

  before(async () => {
    broker = await startBrokerProcess({ overrides: { 'log.cleaner.backoff.ms': '200' } });
    bootstrap = `127.0.0.1:${broker.port}`;
    const kafka = new Kafka({
      clientId: 'skiff-compat-compaction',
      brokers: [bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 2 },
    });
    admin = kafka.admin();
    await admin.connect();
    producer = kafka.producer();
    await producer.connect();
  });
  after(async () => {
    await producer?.disconnect();
    await admin?.disconnect();
    await broker?.stop();
  });

  async function send(messages: Array<{ key: string; value: string | null }>, gzip = false): Promise<void> {
    const [meta] = await producer.send({
      topic,
      acks: -1,
      compression: gzip ? CompressionTypes.GZIP : CompressionTypes.None,
      messages: messages.map((m) => ({ ...m, partition: 0 })),
    });
    assert.equal(meta!.errorCode, 0);
    const base = Number(meta!.baseOffset);
    messages.forEach((m, i) => produced.push({ offset: base + i, key: m.key, value: m.value }));
  }

  /** Rolls the segment holding everything so far, with filler records (one key) of ~2 segments. */
  async function rollPastEverything(): Promise<void> {
    for (let i = 0; i < 8; i++) await send([{ key: 'filler', value: `filler-${i}-${'f'.repeat(500)}` }]);
  }

  async function consumeAll(
    client: 'confluent-kafka' | 'kafka-python' = 'confluent-kafka',
  ): Promise<Consumed['records']> {
    const c = await pythonOp<Consumed>(client, {
      op: 'consume',
      bootstrap,
      topic,
      partition: 0,
      offset: 0,
      reset: 'earliest',
    });
    assert.equal(c.error, null, `${client} consume: ${JSON.stringify(c.error)}`);
    return c.records;
  }

  /** The latest produced record of each key (filler excluded). */
  function latestProduced(): Map<string, { offset: number; value: string | null }> {
    const m = new Map<string, { offset: number; value: string | null }>();
    for (const p of produced) if (p.key !== 'filler') m.set(p.key, { offset: p.offset, value: p.value });
    return m;
  }

  test(
    'many versions per key: consumers from the beginning get exactly the latest value per key at its original offset',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        await admin.createTopics({
          topics: [
            {
              topic,
              numPartitions: 1,
              replicationFactor: 1,
              configEntries: [
                { name: 'cleanup.policy', value: 'compact' },
                { name: 'segment.bytes', value: '2048' },
                { name: 'min.cleanable.dirty.ratio', value: '0.01' },
                { name: 'delete.retention.ms', value: String(DELETE_RETENTION_MS) },
              ],
            },
          ],
          waitForLeaders: true,
        });
        for (let v = 0; v < VERSIONS; v++) {
          await send(
            Array.from({ length: KEYS }, (_, k) => ({
              key: `key-${String(k).padStart(2, '0')}`,
              value: `value-${k}-v${v}`,
            })),
            v % 3 === 1,
          );
        }
        await rollPastEverything();
        const expected = latestProduced();
        assert.equal(produced.length, KEYS * VERSIONS + 8);

        const records = await waitFor(
          'the cleaner to leave one record per key',
          30_000,
          async () => {
            const got = await consumeAll();
            const keyed = got.filter((r) => r.key !== 'filler');
            return keyed.length === KEYS ? got : undefined;
          },
          500,
        );
        const keyed = records.filter((r) => r.key !== 'filler');
        assert.deepEqual(
          keyed.map((r) => [r.key, r.offset, r.value]),
          [...expected.entries()].sort((a, b) => a[1].offset - b[1].offset).map(([k, v]) => [k, v.offset, v.value]),
          'exactly the latest value per key, at the offsets the producer was given',
        );
        const offsets = records.map((r) => r.offset);
        assert.ok(
          offsets.every((o, i) => i === 0 || o > offsets[i - 1]!),
          'offsets increase',
        );
        assert.ok(
          records[records.length - 1]!.offset === produced[produced.length - 1]!.offset,
          'the last record is there',
        );
        // kafka-python (its own fetch parsing) agrees.
        const viaPython = (await consumeAll('kafka-python')).filter((r) => r.key !== 'filler');
        assert.deepEqual(
          viaPython.map((r) => [r.key, r.offset, r.value]),
          keyed.map((r) => [r.key, r.offset, r.value]),
        );
      }),
  );

  test(
    'kafka-dump-log reads a cleaned segment: valid batches at the kept offsets; its indexes verify',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const dir = path.join(broker.dataDir, `${topic}-0`);
        // The first segment with batches: cleaning may leave an earlier one empty (all its records superseded).
        const logs = fs
          .readdirSync(dir)
          .filter((f) => /^\d{20}\.log$/.test(f))
          .sort();
        const nonEmpty = logs.filter((f) => fs.statSync(path.join(dir, f)).size > 0);
        assert.ok(nonEmpty.length > 1, `cleaned segments hold batches: ${logs.join(', ')}`);
        const first = path.join(dir, nonEmpty[0]!);
        const dump = await runKafkaTool(
          'org.apache.kafka.tools.DumpLogSegments',
          ['--files', first, '--deep-iteration'],
          { timeoutMs: 60_000 },
        );
        assert.equal(dump.code, 0, describeToolRun('DumpLogSegments', [first], dump));
        const batchLines = dump.stdout.split('\n').filter((l) => l.startsWith('baseOffset: '));
        assert.ok(batchLines.length > 0, dump.stdout);
        assert.ok(
          batchLines.every((l) => /isvalid: true/.test(l)),
          dump.stdout,
        );
        const dumped = [...dump.stdout.matchAll(/^\| offset: (\d+)/gm)].map((m) => Number(m[1]));
        const consumed = (await consumeAll()).map((r) => r.offset);
        assert.deepEqual(dumped, consumed.slice(0, dumped.length), 'the dumped records are the first consumed ones');
        const base = first.slice(0, -'.log'.length);
        const verify = await runKafkaTool(
          'org.apache.kafka.tools.DumpLogSegments',
          ['--files', `${base}.index,${base}.timeindex`, '--verify-index-only'],
          { timeoutMs: 60_000 },
        );
        assert.equal(verify.code, 0, describeToolRun('DumpLogSegments', ['--verify-index-only'], verify));
        assert.doesNotMatch(verify.stdout + verify.stderr, /mismatch|corrupt|Exception/i, verify.stdout);
      }),
  );

  test(
    'tombstones: older values go first, the tombstones stay for delete.retention.ms, then the keys are gone',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const deleted = ['key-00', 'key-01', 'key-02', 'key-03', 'key-04'];
        await send(deleted.map((key) => ({ key, value: null })));
        const tombstonedAtMs = Date.now();
        await rollPastEverything();

        const withTombstones = await waitFor(
          'the cleaner to drop the values the tombstones replace',
          20_000,
          async () => {
            const got = (await consumeAll()).filter((r) => r.key !== 'filler');
            return got.length === KEYS ? got : undefined;
          },
          300,
        );
        const seenAtMs = Date.now();
        const expected = latestProduced();
        assert.deepEqual(
          withTombstones.map((r) => [r.key, r.offset, r.value]),
          [...expected.entries()].sort((a, b) => a[1].offset - b[1].offset).map(([k, v]) => [k, v.offset, v.value]),
        );
        assert.deepEqual(
          withTombstones.filter((r) => r.value === null).map((r) => r.key),
          deleted,
          'the tombstones are served',
        );
        assert.ok(seenAtMs - tombstonedAtMs < DELETE_RETENTION_MS + 20_000);

        const final = await waitFor(
          'tombstones to vanish after delete.retention.ms',
          30_000,
          async () => {
            const got = (await consumeAll()).filter((r) => r.key !== 'filler');
            return got.length === KEYS - deleted.length ? got : undefined;
          },
          500,
        );
        assert.ok(Date.now() - tombstonedAtMs >= DELETE_RETENTION_MS, 'not before delete.retention.ms');
        assert.deepEqual(
          final.map((r) => [r.key, r.offset, r.value]),
          [...expected.entries()]
            .filter(([k]) => !deleted.includes(k))
            .sort((a, b) => a[1].offset - b[1].offset)
            .map(([k, v]) => [k, v.offset, v.value]),
        );
      }),
  );
});
