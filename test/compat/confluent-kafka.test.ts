/**
 * confluent-kafka 1.7.0 (Debian python3-confluent-kafka, librdkafka 2.0.2) against a real Skiff
 * process: AdminClient.create_topics (CreateTopics v4), Producer (Produce v7) and Consumer by
 * assignment (assign() to OFFSET_BEGINNING, enable.auto.commit=false, no subscribe: librdkafka
 * insists on a group.id but joins no group). Scripts: test/compat/python/confluent_*.py.
 */
import { after, before, describe, test } from 'node:test';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { pythonConsume, pythonProduce, withBrokerLog } from './clients';
import { assertDenseOffsets, assertSameRecords } from './record-file';
import {
  assertAcksMatch,
  assertPartitionedOrder,
  edgeCaseRecords,
  fixtureRecords,
  keyedFixtureRecords,
} from './workloads';

const TIMEOUT_MS = 120_000;

describe('confluent-kafka 1.7.0 (librdkafka 2.0.2) round trips through Skiff', () => {
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
    'every line of the text fixture, keyed by line number, comes back byte-equal and in order (topic from AdminClient)',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'confluent-text-fixture';
        const input = fixtureRecords((i) => `line-${i}`);
        const acked = await pythonProduce('confluent-kafka', {
          bootstrap,
          topic,
          records: input,
          acks: -1,
          createPartitions: 1,
          timeoutMs: 60_000,
        });
        const consumed = await pythonConsume('confluent-kafka', { bootstrap, topic, timeoutMs: 60_000 });
        assertDenseOffsets(consumed, 'confluent-kafka consumer');
        assertSameRecords(consumed, input, 'confluent-kafka -> confluent-kafka');
        assertAcksMatch(input, acked, consumed, 'confluent-kafka acks');
      }),
  );

  test(
    'null and empty keys and values, binary bytes, and headers with empty, null and repeated keys survive byte for byte, read back by confluent-kafka and kafka-python',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'confluent-edge-cases';
        const input = edgeCaseRecords({
          nullKeyAndValue: true,
          headers: true,
          nullHeaderValues: true,
          repeatedHeaderKeys: true,
        });
        const acked = await pythonProduce('confluent-kafka', {
          bootstrap,
          topic,
          records: input,
          acks: -1,
          createPartitions: 1,
          timeoutMs: 30_000,
        });
        const consumed = await pythonConsume('confluent-kafka', { bootstrap, topic, timeoutMs: 30_000 });
        assertSameRecords(consumed, input, 'confluent-kafka -> confluent-kafka');
        assertAcksMatch(input, acked, consumed, 'confluent-kafka acks');
        const viaKafkaPython = await pythonConsume('kafka-python', { bootstrap, topic, timeoutMs: 30_000 });
        assertSameRecords(viaKafkaPython, input, 'confluent-kafka -> kafka-python');
      }),
  );

  test('keyed records over 3 partitions: each partition keeps its keys in produce order', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      const topic = 'confluent-3-partitions';
      const input = keyedFixtureRecords(30_000, 50);
      const acked = await pythonProduce('confluent-kafka', {
        bootstrap,
        topic,
        records: input,
        acks: -1,
        createPartitions: 3,
        timeoutMs: 60_000,
      });
      const consumed = await pythonConsume('confluent-kafka', { bootstrap, topic, timeoutMs: 60_000 });
      assertPartitionedOrder(input, consumed, 3, 'confluent-kafka 3 partitions');
      assertAcksMatch(input, acked, consumed, 'confluent-kafka acks');
    }),
  );
});
