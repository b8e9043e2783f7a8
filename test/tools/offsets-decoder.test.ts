/**
 * kafka-dump-log --offsets-decoder (Kafka 4.4's DumpLogSegments) reads Skiff's __consumer_offsets
 * segments: the group's offset commits and its group metadata decode with Kafka's own record
 * definitions, with the values a kafkajs consumer group committed. Proves the key/value layout is
 * Kafka's, so the partition can be inspected (or migrated) with Kafka's tools.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { startBrokerProcess } from '../helpers/broker-process';
import { describeToolRun, runKafkaTool } from '../helpers/kafka-fixture';
import { offsetsPartitionFor } from '../../src/group/offsets-records';

const DUMP_LOG_SEGMENTS = 'org.apache.kafka.tools.DumpLogSegments';
const GROUP = 'dump-group';
const TOPIC = 'dump-offsets';

test(
  'kafka-dump-log --offsets-decoder decodes the offsets and group metadata Skiff stored for a kafkajs group',
  { timeout: 180_000 },
  async () => {
    const broker = await startBrokerProcess({ overrides: { 'group.initial.rebalance.delay.ms': '0' } });
    try {
      const kafka = new Kafka({ brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: TOPIC,
        messages: Array.from({ length: 10 }, (_, i) => ({ value: `v${i}`, partition: i % 2 })),
      });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 1000 });
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      let seen = 0;
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          seen++;
          await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
        },
      });
      for (let i = 0; i < 60 && seen < 10; i++) await new Promise((r) => setTimeout(r, 250));
      assert.equal(seen, 10);
      await consumer.disconnect();
      const committed = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
      assert.deepEqual(committed[0]!.partitions.map((p) => [p.partition, p.offset]).sort(), [
        [0, '5'],
        [1, '5'],
      ]);
      await admin.disconnect();
    } finally {
      assert.equal(await broker.stop(), 0);
    }
    const segment = path.join(
      broker.dataDir,
      `__consumer_offsets-${offsetsPartitionFor(GROUP, 50)}`,
      '00000000000000000000.log',
    );
    assert.ok(fs.existsSync(segment), `the group's partition has a segment: ${segment}`);
    const dump = await runKafkaTool(DUMP_LOG_SEGMENTS, ['--files', segment, '--offsets-decoder'], {
      timeoutMs: 120_000,
    });
    assert.equal(dump.code, 0, describeToolRun(DUMP_LOG_SEGMENTS, [segment], dump));
    const lines = dump.stdout.split('\n').filter((l) => l.startsWith('| offset: '));
    const offsetCommits = lines.filter((l) => l.includes('"topic":"dump-offsets"'));
    assert.ok(offsetCommits.length >= 10, `every commit decodes as an offset commit:\n${dump.stdout}`);
    for (const p of [0, 1]) {
      const last = offsetCommits.filter((l) => l.includes(`"partition":${p}`)).pop();
      assert.ok(last, `a commit for partition ${p}`);
      assert.match(last, new RegExp(`"group":"${GROUP}"`));
      assert.match(last, /"offset":5\b/, `the last commit of partition ${p} holds offset 5: ${last}`);
    }
    const metadata = lines.filter((l) => l.includes('"protocolType":"consumer"'));
    assert.ok(metadata.length >= 1, `the group metadata decodes:\n${dump.stdout}`);
    assert.match(metadata[0]!, /"protocol":"RoundRobinAssigner"/);
    assert.ok(!dump.stdout.includes('Unknown'), `nothing is undecodable:\n${dump.stdout}`);
  },
);
