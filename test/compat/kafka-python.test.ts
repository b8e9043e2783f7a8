/**
 * kafka-python 2.0.2 (Debian python3-kafka) against a real Skiff process: KafkaAdminClient
 * (CreateTopics), KafkaProducer (Produce v7 with magic-2 batches once ApiVersions shows a >= 2.1
 * broker) and KafkaConsumer by assignment (assign + seek_to_beginning, no group: ListOffsets,
 * Fetch v4). Scripts: test/compat/python/kafka_python_*.py.
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

const TIMEOUT_MS = 150_000;

describe('kafka-python 2.0.2 round trips through Skiff', () => {
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
    'every line of the text fixture (null keys, acks=all) comes back byte-equal and in order (topic from KafkaAdminClient)',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'kafka-python-text-fixture';
        const input = fixtureRecords();
        const acked = await pythonProduce('kafka-python', {
          bootstrap,
          topic,
          records: input,
          acks: -1,
          createPartitions: 1,
          timeoutMs: 90_000,
        });
        const consumed = await pythonConsume('kafka-python', { bootstrap, topic, timeoutMs: 90_000 });
        assertDenseOffsets(consumed, 'kafka-python consumer');
        assertSameRecords(consumed, input, 'kafka-python -> kafka-python');
        assertAcksMatch(input, acked, consumed, 'kafka-python acks');
      }),
  );

  test(
    'null and empty keys and values, binary bytes and headers survive byte for byte (acks=1, auto-created topic), read back by kafka-python and confluent-kafka',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'kafka-python-edge-cases';
        // kafka-python refuses a record with both key and value null, and null header values.
        const input = edgeCaseRecords({
          nullKeyAndValue: false,
          headers: true,
          nullHeaderValues: false,
          repeatedHeaderKeys: true,
        });
        const acked = await pythonProduce('kafka-python', {
          bootstrap,
          topic,
          records: input,
          acks: 1,
          timeoutMs: 30_000,
        });
        const consumed = await pythonConsume('kafka-python', { bootstrap, topic, timeoutMs: 30_000 });
        assertSameRecords(consumed, input, 'kafka-python -> kafka-python');
        assertAcksMatch(input, acked, consumed, 'kafka-python acks');
        const viaConfluent = await pythonConsume('confluent-kafka', { bootstrap, topic, timeoutMs: 30_000 });
        assertSameRecords(viaConfluent, input, 'kafka-python -> confluent-kafka');
      }),
  );

  test('keyed records over 3 partitions: each partition keeps its keys in produce order', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      const topic = 'kafka-python-3-partitions';
      const input = keyedFixtureRecords(20_000, 50);
      const acked = await pythonProduce('kafka-python', {
        bootstrap,
        topic,
        records: input,
        acks: -1,
        createPartitions: 3,
        timeoutMs: 60_000,
      });
      const consumed = await pythonConsume('kafka-python', { bootstrap, topic, timeoutMs: 60_000 });
      assertPartitionedOrder(input, consumed, 3, 'kafka-python 3 partitions');
      assertAcksMatch(input, acked, consumed, 'kafka-python acks');
    }),
  );
});
