/**
 * Record timestamps through a real Skiff process, seen by real clients:
 *
 * - `message.timestamp.type=LogAppendTime` (set at CreateTopics by confluent-kafka): records
 *   produced with an old explicit timestamp come back with the broker's append time and timestamp
 *   type LogAppendTime (confluent-kafka's delivery report and consumer, kafka-python's consumer,
 *   kafkajs's decoder), and the stored batch has attributes bit 3 set.
 * - `message.timestamp.before.max.ms=60000` on a CreateTime topic: a record stamped now-1h gets
 *   INVALID_TIMESTAMP (confluent-kafka and kafka-python), one stamped now is accepted; by the
 *   default `message.timestamp.after.max.ms` (1 h) a record stamped now+2h is refused too.
 * - ListOffsets by timestamp (confluent-kafka and kafka-python `offsets_for_times`, `kcat -Q`):
 *   the exact offset of the first record at or after each target, before, on, between and after
 *   the records' timestamps.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { withBrokerLog, type PythonClient } from './clients';
import { kafkajsFetchAll } from './kafkajs-extras';
import { kcatOffsetForTime, pythonOp, readStoredBatches, type OpError } from './ops';

const TIMEOUT_MS = 60_000;
/** Slack allowed between the test's clock readings and the broker's append time. */
const CLOCK_SLACK_MS = 2_000;

interface ProduceResult {
  error: OpError | null;
  offset: number | null;
  partition: number | null;
  timestamp: number | null;
  timestamp_type?: string;
}
interface ConsumedRecord {
  offset: number;
  key: string | null;
  value: string | null;
  timestamp: number;
  timestamp_type: string;
}

async function createTopic(bootstrap: string, topic: string, configs: Record<string, string>): Promise<void> {
  const r = await pythonOp<{ error: OpError | null }>('confluent-kafka', {
    op: 'create-topic',
    bootstrap,
    topic,
    partitions: 1,
    configs,
  });
  assert.equal(r.error, null, `create ${topic} with ${JSON.stringify(configs)}`);
}

async function produce(
  client: PythonClient,
  bootstrap: string,
  topic: string,
  records: Array<{ value: string; timestamp?: number }>,
  oneByOne = false,
): Promise<ProduceResult[]> {
  const r = await pythonOp<{ results: ProduceResult[] }>(client, {
    op: 'produce',
    bootstrap,
    topic,
    partition: 0,
    records,
    one_by_one: oneByOne,
  });
  return r.results;
}

async function consume(client: PythonClient, bootstrap: string, topic: string): Promise<ConsumedRecord[]> {
  const r = await pythonOp<{ records: ConsumedRecord[]; error: OpError | null }>(client, {
    op: 'consume',
    bootstrap,
    topic,
    partition: 0,
    offset: 'beginning',
  });
  assert.equal(r.error, null, `${client} consume ${topic}`);
  return r.records;
}

function assertWithin(ts: number, lo: number, hi: number, what: string): void {
  assert.ok(
    ts >= lo - CLOCK_SLACK_MS && ts <= hi + CLOCK_SLACK_MS,
    `${what}: timestamp ${ts} (${new Date(ts).toISOString()}) is not within [${new Date(lo).toISOString()}, ${new Date(hi).toISOString()}] ± ${CLOCK_SLACK_MS} ms`,
  );
}

describe('record timestamps: LogAppendTime, INVALID_TIMESTAMP, ListOffsets by timestamp', () => {
  let broker: BrokerProcess;
  let bootstrap: string;

  before(async () => {
    broker = await startBrokerProcess();
    bootstrap = `127.0.0.1:${broker.port}`;
  });
  after(async () => {
    await broker?.stop();
  });

  test(
    "a LogAppendTime topic stamps records with the broker's append time, not the producer's (old) timestamp",
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'ts-log-append-time';
        await createTopic(bootstrap, topic, { 'message.timestamp.type': 'LogAppendTime' });
        const old = Date.now() - 3_600_000;
        const startedAt = Date.now();
        const results = await produce(
          'confluent-kafka',
          bootstrap,
          topic,
          [0, 1, 2, 3, 4].map((i) => ({ value: `lat-${i}`, timestamp: old + i })),
        );
        const producedAt = Date.now();
        results.forEach((r, i) => {
          assert.equal(r.error, null, `record ${i} delivered`);
          assert.equal(r.offset, i);
          // Produce response LogAppendTimeMs: librdkafka reports it in the delivery report.
          assert.equal(r.timestamp_type, 'LogAppendTime', `delivery report ${i} timestamp type`);
          assertWithin(r.timestamp!, startedAt, producedAt, `delivery report ${i}`);
        });

        for (const client of ['confluent-kafka', 'kafka-python'] as const) {
          const consumed = await consume(client, bootstrap, topic);
          assert.deepEqual(
            consumed.map((r) => r.value),
            ['lat-0', 'lat-1', 'lat-2', 'lat-3', 'lat-4'],
            `${client} values`,
          );
          for (const r of consumed) {
            assert.equal(r.timestamp_type, 'LogAppendTime', `${client} offset ${r.offset} timestamp type`);
            assert.notEqual(r.timestamp, old + r.offset, `${client} offset ${r.offset} kept the producer's timestamp`);
            assertWithin(r.timestamp, startedAt, producedAt, `${client} offset ${r.offset}`);
          }
        }
        const viaKafkajs = await kafkajsFetchAll(bootstrap, topic, 0, 30_000);
        assert.equal(viaKafkajs.length, 5);
        for (const r of viaKafkajs) {
          assert.equal(r.timestampType, 1, `kafkajs offset ${r.offset}: batch timestamp type`);
          assertWithin(r.timestamp, startedAt, producedAt, `kafkajs offset ${r.offset}`);
        }

        const batches = readStoredBatches(broker.dataDir, topic, 0);
        assert.ok(batches.length > 0);
        for (const b of batches) {
          assert.equal(
            b.timestampType,
            1,
            `stored batch at ${b.baseOffset}: attributes ${b.attributes} lack the LogAppendTime bit`,
          );
          assertWithin(b.maxTimestamp, startedAt, producedAt, `stored batch at ${b.baseOffset} maxTimestamp`);
        }
      }),
  );

  test(
    'CreateTime with message.timestamp.before.max.ms=60000: now-1h gets INVALID_TIMESTAMP, now is accepted; now+2h exceeds the default after.max.ms',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'ts-bounded-create-time';
        await createTopic(bootstrap, topic, {
          'message.timestamp.type': 'CreateTime',
          'message.timestamp.before.max.ms': '60000',
        });
        const now = Date.now();
        // One record per batch (flushed one by one): a refused timestamp refuses its whole batch.
        const viaConfluent = await produce(
          'confluent-kafka',
          bootstrap,
          topic,
          [
            { value: 'too-old', timestamp: now - 3_600_000 },
            { value: 'fresh', timestamp: now },
            { value: 'too-new', timestamp: now + 2 * 3_600_000 },
          ],
          true,
        );
        assert.equal(
          viaConfluent[0]!.error?.name,
          'INVALID_TIMESTAMP',
          `confluent-kafka now-1h: ${JSON.stringify(viaConfluent[0])}`,
        );
        assert.equal(viaConfluent[0]!.error?.code, 32);
        assert.equal(viaConfluent[1]!.error, null, `confluent-kafka now: ${JSON.stringify(viaConfluent[1])}`);
        assert.equal(viaConfluent[1]!.offset, 0);
        assert.equal(
          viaConfluent[2]!.error?.name,
          'INVALID_TIMESTAMP',
          `confluent-kafka now+2h: ${JSON.stringify(viaConfluent[2])}`,
        );

        const now2 = Date.now();
        const viaKafkaPython = await produce('kafka-python', bootstrap, topic, [
          { value: 'too-old-kp', timestamp: now2 - 3_600_000 },
          { value: 'fresh-kp', timestamp: now2 },
        ]);
        assert.equal(
          viaKafkaPython[0]!.error?.name,
          'InvalidTimestampError',
          `kafka-python now-1h: ${JSON.stringify(viaKafkaPython[0])}`,
        );
        assert.equal(viaKafkaPython[0]!.error?.code, 32);
        assert.equal(viaKafkaPython[1]!.error, null, `kafka-python now: ${JSON.stringify(viaKafkaPython[1])}`);
        assert.equal(viaKafkaPython[1]!.offset, 1);

        const consumed = await consume('confluent-kafka', bootstrap, topic);
        assert.deepEqual(
          consumed.map((r) => [r.offset, r.value, r.timestamp, r.timestamp_type]),
          [
            [0, 'fresh', now, 'CreateTime'],
            [1, 'fresh-kp', now2, 'CreateTime'],
          ],
        );
      }),
  );

  test(
    'ListOffsets by timestamp: offsets_for_times (confluent-kafka, kafka-python) and kcat -Q give the first offset at or after each target',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'ts-offsets-for-times';
        await createTopic(bootstrap, topic, {});
        const t0 = Date.now() - 600_000;
        // 20 single-record batches (kafka-python, one send at a time), then 20 records in few batches (confluent-kafka).
        const first = await produce(
          'kafka-python',
          bootstrap,
          topic,
          Array.from({ length: 20 }, (_, i) => ({ value: `r${i}`, timestamp: t0 + i * 1000 })),
        );
        const second = await produce(
          'confluent-kafka',
          bootstrap,
          topic,
          Array.from({ length: 20 }, (_, i) => ({ value: `r${20 + i}`, timestamp: t0 + (20 + i) * 1000 })),
        );
        [...first, ...second].forEach((r, i) => {
          assert.equal(r.error, null, `record ${i}`);
          assert.equal(r.offset, i, `record ${i} offset`);
        });

        // [target, expected offset]; -1 = no record at or after the target.
        const cases: Array<[number, number]> = [
          [t0 - 3_600_000, 0], // long before every record
          [t0 - 1, 0],
          [t0, 0], // exactly the first
          [t0 + 1, 1], // between the first and the second
          [t0 + 500, 1],
          [t0 + 7_000, 7], // exactly a record in the single-record batches
          [t0 + 19_999, 20], // between the two producers' records
          [t0 + 20_000, 20],
          [t0 + 26_500, 27], // inside the confluent-kafka batch(es)
          [t0 + 39_000, 39], // exactly the last
          [t0 + 39_001, -1], // after every record
          [t0 + 3_600_000, -1],
        ];
        const targets = cases.map(([t]) => t);
        const expected = cases.map(([, o]) => o);

        const confluent = await pythonOp<{ offsets: number[] }>('confluent-kafka', {
          op: 'offsets-for-times',
          bootstrap,
          topic,
          partition: 0,
          timestamps: targets,
        });
        assert.deepEqual(
          confluent.offsets.map((o, i) => [targets[i]! - t0, o]),
          cases.map(([t, o]) => [t - t0, o]),
          'confluent-kafka offsets_for_times (target - t0, offset)',
        );

        const kafkaPython = await pythonOp<{ offsets: Array<number | null> }>('kafka-python', {
          op: 'offsets-for-times',
          bootstrap,
          topic,
          partition: 0,
          timestamps: targets,
        });
        assert.deepEqual(
          kafkaPython.offsets.map((o, i) => [targets[i]! - t0, o]),
          cases.map(([t, o]) => [t - t0, o === -1 ? null : o]),
          'kafka-python offsets_for_times (target - t0, offset; null = none)',
        );

        const viaKcat: Array<[number, number]> = [];
        for (const t of targets) viaKcat.push([t - t0, await kcatOffsetForTime(bootstrap, topic, 0, t)]);
        assert.deepEqual(
          viaKcat,
          cases.map(([t, o]) => [t - t0, o]),
          'kcat -Q (target - t0, offset)',
        );
        assert.equal(expected.length, targets.length);

        // The special timestamps: -2 earliest, -1 latest.
        assert.equal(await kcatOffsetForTime(bootstrap, topic, 0, -2), 0, 'kcat -Q earliest');
        assert.equal(await kcatOffsetForTime(bootstrap, topic, 0, -1), 40, 'kcat -Q latest');
      }),
  );
});
