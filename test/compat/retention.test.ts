/**
 * Retention and DeleteRecords through a real Skiff process, seen by real clients. The broker runs
 * with `log.retention.check.interval.ms=500` and `log.segment.bytes=16384`; a topic with
 * `retention.bytes=40000` gets ~200 KB from kcat (batch.size=4000, so batches stay well below a
 * segment).
 *
 * - Retention deletes whole old segments: the earliest offset (kafka-python `beginning_offsets`,
 *   confluent-kafka `get_watermark_offsets`, kafkajs `fetchTopicOffsets`) rises above 0 within a
 *   bounded wait, equals the base offset of the oldest segment file left, and the remaining
 *   segments hold about retention.bytes.
 * - A consumer that asks for offset 0 (now out of range) with auto.offset.reset=earliest starts at
 *   the new log start offset (kafka-python and confluent-kafka), and the records from there are
 *   exactly those produced.
 * - DeleteRecords (kafkajs `admin.deleteTopicRecords`) moves the earliest offset to exactly the
 *   requested offset, mid-segment; offset -1 deletes up to the high watermark; an offset past the
 *   high watermark gets OFFSET_OUT_OF_RANGE.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { kcatProduce, withBrokerLog } from './clients';
import { pythonOp, waitFor, type OpError } from './ops';

const TIMEOUT_MS = 60_000;
const SEGMENT_BYTES = 16_384;
const RETENTION_BYTES = 40_000;
const RECORDS = 2_000;

/** Value of record i: 100 bytes, its index first. */
function valueOf(i: number): string {
  return `rec-${String(i).padStart(6, '0')}-`.padEnd(100, 'x');
}

interface PartitionErrors {
  partitions?: Array<{ partition: number; error?: { type?: string } }>;
}
interface Consumed {
  records: Array<{ offset: number; value: string | null }>;
  error: OpError | null;
}

describe('retention.bytes deletes old segments; DeleteRecords moves the log start offset', () => {
  let broker: BrokerProcess;
  let bootstrap: string;
  let admin: Admin;

  before(async () => {
    broker = await startBrokerProcess({
      overrides: { 'log.retention.check.interval.ms': '500', 'log.segment.bytes': String(SEGMENT_BYTES) },
    });
    bootstrap = `127.0.0.1:${broker.port}`;
    admin = new Kafka({
      clientId: 'skiff-compat-retention',
      brokers: [bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 2 },
    }).admin();
    await admin.connect();
  });
  after(async () => {
    await admin?.disconnect();
    await broker?.stop();
  });

  async function produceAll(topic: string): Promise<void> {
    const input = Buffer.from(Array.from({ length: RECORDS }, (_, i) => `${valueOf(i)}\n`).join(''));
    await kcatProduce({
      bootstrap,
      topic,
      input,
      partition: 0,
      config: { 'batch.size': '4000', 'linger.ms': '1' },
      timeoutMs: 30_000,
    });
  }

  async function earliestViaKafkaPython(topic: string): Promise<{ beginning: number; end: number }> {
    return pythonOp<{ beginning: number; end: number }>('kafka-python', {
      op: 'offsets',
      bootstrap,
      topic,
      partition: 0,
    });
  }

  function segmentFiles(topic: string): Array<{ base: number; size: number }> {
    const dir = path.join(broker.dataDir, `${topic}-0`);
    return fs
      .readdirSync(dir)
      .filter((f) => /^\d{20}\.log$/.test(f))
      .sort()
      .map((f) => ({ base: Number(f.slice(0, 20)), size: fs.statSync(path.join(dir, f)).size }));
  }

  test(
    'retention.bytes=40000: the earliest offset rises to the oldest remaining segment; consumers reset from offset 0 to it',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'retention-bytes';
        await admin.createTopics({
          topics: [
            {
              topic,
              numPartitions: 1,
              replicationFactor: 1,
              configEntries: [{ name: 'retention.bytes', value: String(RETENTION_BYTES) }],
            },
          ],
          waitForLeaders: true,
        });
        await produceAll(topic);
        assert.ok(
          segmentFiles(topic).length > 1 || (await earliestViaKafkaPython(topic)).beginning > 0,
          'the log rolled into several segments',
        );

        // Wait until retention has run and the earliest offset is stable (same answer twice, 1 s apart).
        let previous = -1;
        const offsets = await waitFor(
          'kafka-python beginning_offsets to rise above 0 and settle',
          20_000,
          async () => {
            const o = await earliestViaKafkaPython(topic);
            const settled = o.beginning > 0 && o.beginning === previous;
            previous = o.beginning;
            return settled ? o : undefined;
          },
          1_000,
        );
        const low = offsets.beginning;
        assert.equal(offsets.end, RECORDS, 'the high watermark is untouched by retention');

        const segments = segmentFiles(topic);
        assert.equal(
          segments[0]?.base,
          low,
          `the earliest offset is the base offset of the oldest segment left (${JSON.stringify(segments)})`,
        );
        const kept = segments.reduce((n, s) => n + s.size, 0);
        assert.ok(
          kept <= RETENTION_BYTES + SEGMENT_BYTES,
          `${kept} bytes kept in ${segments.length} segments, retention.bytes ${RETENTION_BYTES} + one segment ${SEGMENT_BYTES}`,
        );

        const watermarks = await pythonOp<{ low: number; high: number }>('confluent-kafka', {
          op: 'watermarks',
          bootstrap,
          topic,
          partition: 0,
        });
        assert.deepEqual(watermarks, { low, high: RECORDS }, 'confluent-kafka get_watermark_offsets');
        const kafkajsOffsets = await admin.fetchTopicOffsets(topic);
        assert.deepEqual(
          kafkajsOffsets.map((o) => [o.partition, Number(o.low), Number(o.high)]),
          [[0, low, RECORDS]],
          'kafkajs fetchTopicOffsets',
        );

        // Offset 0 is out of range now: auto.offset.reset=earliest restarts at the log start offset.
        for (const client of ['kafka-python', 'confluent-kafka'] as const) {
          const consumed = await pythonOp<Consumed>(client, {
            op: 'consume',
            bootstrap,
            topic,
            partition: 0,
            offset: 0,
            reset: 'earliest',
          });
          assert.equal(consumed.error, null, `${client} consume from 0`);
          assert.equal(consumed.records[0]?.offset, low, `${client}: first record after the reset`);
          assert.equal(
            consumed.records.length,
            RECORDS - low,
            `${client}: records from the log start offset to the end`,
          );
          consumed.records.forEach((r, i) => {
            assert.equal(r.offset, low + i);
            assert.equal(r.value, valueOf(low + i), `${client} offset ${r.offset}`);
          });
        }
      }),
  );

  test(
    'DeleteRecords (kafkajs deleteTopicRecords) moves the earliest offset to the requested offset; -1 means the high watermark; past it is OFFSET_OUT_OF_RANGE',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'delete-records';
        await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
        await produceAll(topic);
        assert.deepEqual(await earliestViaKafkaPython(topic), { beginning: 0, end: RECORDS });
        await admin.fetchTopicOffsets(topic); // loads the topic's metadata into the admin client

        const target = 777; // mid-segment: the log start offset is not a segment boundary
        await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(target) }] });
        assert.deepEqual(
          await earliestViaKafkaPython(topic),
          { beginning: target, end: RECORDS },
          'kafka-python beginning/end offsets after DeleteRecords',
        );
        const watermarks = await pythonOp<{ low: number; high: number }>('confluent-kafka', {
          op: 'watermarks',
          bootstrap,
          topic,
          partition: 0,
        });
        assert.deepEqual(watermarks, { low: target, high: RECORDS }, 'confluent-kafka watermarks after DeleteRecords');

        const fromStart = await pythonOp<Consumed>('confluent-kafka', {
          op: 'consume',
          bootstrap,
          topic,
          partition: 0,
          offset: 'beginning',
        });
        assert.equal(fromStart.error, null);
        assert.equal(
          fromStart.records[0]?.offset,
          target,
          'consuming from the beginning starts at the requested offset',
        );
        assert.equal(fromStart.records[0]?.value, valueOf(target));
        assert.equal(fromStart.records.length, RECORDS - target);
        const fromZero = await pythonOp<Consumed>('kafka-python', {
          op: 'consume',
          bootstrap,
          topic,
          partition: 0,
          offset: 0,
          reset: 'earliest',
          max: 5,
        });
        assert.equal(fromZero.error, null);
        assert.deepEqual(
          fromZero.records.map((r) => r.offset),
          [target, target + 1, target + 2, target + 3, target + 4],
          'kafka-python from offset 0 resets to the requested offset',
        );

        await assert.rejects(
          admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(RECORDS + 10) }] }),
          (e: Error & PartitionErrors & { cause?: PartitionErrors }) => {
            // kafkajs's retrier wraps the KafkaJSDeleteTopicRecordsError (with per-partition errors) as the cause.
            const partitions = e.partitions ?? e.cause?.partitions;
            const type = partitions?.[0]?.error?.type;
            assert.equal(
              type,
              'OFFSET_OUT_OF_RANGE',
              `DeleteRecords past the high watermark: ${e.name} ${e.message} ${JSON.stringify(partitions)}`,
            );
            return true;
          },
        );
        assert.equal(
          (await earliestViaKafkaPython(topic)).beginning,
          target,
          'the refused DeleteRecords changed nothing',
        );

        await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '-1' }] });
        assert.deepEqual(
          await earliestViaKafkaPython(topic),
          { beginning: RECORDS, end: RECORDS },
          'DeleteRecords to -1 (the high watermark) empties the partition',
        );
      }),
  );
});
