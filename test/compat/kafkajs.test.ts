/**
 * kafkajs 2.2.4 against a real Skiff process: Admin createTopics (CreateTopics v3),
 * fetchTopicMetadata (Metadata v6), fetchTopicOffsets (ListOffsets v3) and Producer (Produce v7,
 * acks=-1). kafkajs's consumer needs consumer groups, so what it produces is read back with
 * kafka-python, confluent-kafka and kcat.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel, Partitioners, type Admin, type IHeaders, type Message, type Producer } from 'kafkajs';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { kcatConsume, pythonConsume, withBrokerLog } from './clients';
import { assertDenseOffsets, assertSameRecords, record, type TestRecord } from './record-file';
import { assertPartitionedOrder, edgeCaseRecords, fixtureRecords, keyedFixtureRecords } from './workloads';

const TIMEOUT_MS = 120_000;
/** Messages per producer.send (kafkajs sends one batch per partition per call). */
const SEND_CHUNK = 5_000;

/**
 * A record as a kafkajs message. kafkajs takes headers as an object (a repeated key as an array),
 * so headers must arrive grouped by key; it cannot send a null header value.
 */
function toMessage(r: TestRecord): Message {
  const headers: IHeaders = {};
  for (const [key, value] of r.headers) {
    assert.ok(value !== null, 'kafkajs cannot send a null header value');
    const existing = headers[key];
    if (existing === undefined) headers[key] = value;
    else headers[key] = [...(Array.isArray(existing) ? existing : [existing as Buffer]), value];
  }
  return { key: r.key, value: r.value, headers, partition: r.partition >= 0 ? r.partition : undefined };
}

/** Sends `records` in order, SEND_CHUNK per call, acks=-1; resolves with each call's base offsets. */
async function sendAll(
  producer: Producer,
  topic: string,
  records: readonly TestRecord[],
): Promise<Array<{ partition: number; baseOffset: number }[]>> {
  const results = [];
  for (let i = 0; i < records.length; i += SEND_CHUNK) {
    const metadata = await producer.send({
      topic,
      acks: -1,
      messages: records.slice(i, i + SEND_CHUNK).map(toMessage),
    });
    for (const m of metadata)
      assert.equal(m.errorCode, 0, `produce to ${topic}-${m.partition} failed with error ${m.errorCode}`);
    results.push(metadata.map((m) => ({ partition: m.partition, baseOffset: Number(m.baseOffset) })));
  }
  return results;
}

describe('kafkajs 2.2.4 round trips through Skiff', () => {
  let broker: BrokerProcess;
  let bootstrap: string;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;

  before(async () => {
    broker = await startBrokerProcess();
    bootstrap = `127.0.0.1:${broker.port}`;
    kafka = new Kafka({
      clientId: 'skiff-compat-kafkajs',
      brokers: [bootstrap],
      logLevel: logLevel.ERROR,
      retry: { retries: 3 },
    });
    admin = kafka.admin();
    await admin.connect();
    producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
  });
  after(async () => {
    await producer?.disconnect();
    await admin?.disconnect();
    await broker?.stop();
  });

  test(
    'every line of the text fixture (null keys) comes back byte-equal and in order; metadata and offsets agree',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'kafkajs-text-fixture';
        assert.equal(
          await admin.createTopics({
            topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
            waitForLeaders: true,
          }),
          true,
        );
        const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
        assert.equal(metadata.topics.length, 1);
        assert.equal(metadata.topics[0]!.name, topic);
        assert.deepEqual(
          metadata.topics[0]!.partitions.map((p) => [p.partitionId, p.partitionErrorCode]),
          [[0, 0]],
        );
        assert.ok(metadata.topics[0]!.partitions[0]!.leader >= 0, 'partition 0 has a leader');

        const input = fixtureRecords();
        const sends = await sendAll(producer, topic, input);
        sends.forEach((s, k) =>
          assert.deepEqual(s, [{ partition: 0, baseOffset: k * SEND_CHUNK }], `send ${k} base offset`),
        );
        const offsets = await admin.fetchTopicOffsets(topic);
        assert.deepEqual(
          offsets.map((o) => [o.partition, o.low, o.high]),
          [[0, '0', String(input.length)]],
        );

        const consumed = await pythonConsume('kafka-python', { bootstrap, topic, timeoutMs: 90_000 });
        assertDenseOffsets(consumed, 'kafka-python consumer');
        assertSameRecords(consumed, input, 'kafkajs -> kafka-python');
      }),
  );

  test(
    'null and empty keys and values, binary bytes and headers (empty values, a repeated key) survive byte for byte, read back by confluent-kafka',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'kafkajs-edge-cases';
        await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
        const input = [
          ...edgeCaseRecords({
            nullKeyAndValue: true,
            headers: true,
            nullHeaderValues: false,
            repeatedHeaderKeys: false,
          }),
          record('h5', 'repeated header key', [
            ['dup', Buffer.from('1')],
            ['dup', Buffer.from('3')],
            ['other', Buffer.from('2')],
          ]),
        ];
        await sendAll(producer, topic, input);
        const consumed = await pythonConsume('confluent-kafka', { bootstrap, topic, timeoutMs: 30_000 });
        assertDenseOffsets(consumed, 'confluent-kafka consumer');
        assertSameRecords(consumed, input, 'kafkajs -> confluent-kafka');
      }),
  );

  test(
    'keyed records over 3 partitions: each partition keeps its keys in produce order (read back by kcat)',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'kafkajs-3-partitions';
        await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
        const input = keyedFixtureRecords(30_000, 50);
        await sendAll(producer, topic, input);
        const offsets = await admin.fetchTopicOffsets(topic);
        const consumed: TestRecord[] = [];
        for (const partition of [0, 1, 2])
          consumed.push(...(await kcatConsume({ bootstrap, topic, partition, timeoutMs: 30_000 })));
        assertPartitionedOrder(input, consumed, 3, 'kafkajs 3 partitions');
        const counts = [0, 1, 2].map((p) => consumed.filter((r) => r.partition === p).length);
        assert.deepEqual(
          offsets.sort((a, b) => a.partition - b.partition).map((o) => Number(o.high)),
          counts,
          'fetchTopicOffsets high = records per partition',
        );
      }),
  );
});
