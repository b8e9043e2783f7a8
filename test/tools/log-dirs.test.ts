/**
 * DescribeLogDirs with Skiff's tagged FsyncedOffset (tag 10000) and real Kafka code on both sides:
 * Kafka's own kafka-log-dirs (LogDirsCommand, through the Java admin client, which asks the newest
 * version both speak: flexible, so the tag is in every partition) still decodes Skiff's response,
 * unknown tag skipped (KIP-482); and `skiff topic describe` against a Kafka broker, which never
 * sends the tag, prints no FSYNCED-OFFSET column even where Kafka's own fsync trails its LEO.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { KafkaClient } from '../../src/client';
import { fsyncedOffsets } from '../../src/cli/topic-command';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { describeToolRun, runKafkaTool, startKafka, type KafkaFixture } from '../helpers/kafka-fixture';
import { runCommand, SKIFF_BIN } from '../helpers/run-command';

const TIMEOUT_MS = 180_000;
const LOG_DIRS_COMMAND = 'org.apache.kafka.tools.LogDirsCommand';

/** kafka-log-dirs --describe's JSON line (LogDirsCommand: `{"brokers":[...],"version":1}`). */
interface LogDirsJson {
  version: number;
  brokers: Array<{
    broker: number;
    logDirs: Array<{
      logDir: string;
      error: string | null;
      partitions: Array<{ partition: string; size: number; offsetLag: number; isFuture: boolean }>;
    }>;
  }>;
}

describe('DescribeLogDirs FsyncedOffset with real Kafka code', () => {
  let skiff: BrokerProcess;
  let kafka: KafkaFixture;

  before(
    async () => {
      [skiff, kafka] = await Promise.all([startBrokerProcess(), startKafka()]);
    },
    { timeout: 150_000 },
  );
  after(async () => {
    await skiff?.stop();
    await kafka?.stop();
  });

  test("kafka-log-dirs --describe reads Skiff's response with the tag in it", { timeout: TIMEOUT_MS }, async () => {
    const bootstrap = `127.0.0.1:${skiff.port}`;
    const client = await KafkaClient.connect({ brokers: bootstrap });
    try {
      const [r] = await client.createTopics([{ name: 'log-dirs', numPartitions: 2, replicationFactor: 1 }]);
      assert.equal(r?.errorCode, 0, r?.errorMessage ?? '');
      const produced = await runCommand(
        process.execPath,
        [SKIFF_BIN, 'produce', 'log-dirs', '-p', '1', '--brokers', bootstrap],
        'a\nb\nc\n',
      );
      assert.equal(produced.code, 0, produced.stderr);
      // The tag is really on the wire (fsynced 3 = the LEO after acks=all with write.caching=false).
      const md = await client.topicMetadata('log-dirs');
      assert.deepStrictEqual([...(await fsyncedOffsets(client, md))].sort(), [
        [0, 0],
        [1, 3],
      ]);
    } finally {
      client.close();
    }
    const args = ['--bootstrap-server', bootstrap, '--describe', '--topic-list', 'log-dirs'];
    const run = await runKafkaTool(LOG_DIRS_COMMAND, args, { timeoutMs: 60_000 });
    assert.equal(run.code, 0, describeToolRun(LOG_DIRS_COMMAND, args, run));
    const jsonLine = run.stdout.split('\n').find((l) => l.startsWith('{'));
    assert.ok(jsonLine !== undefined, describeToolRun(LOG_DIRS_COMMAND, args, run));
    const parsed = JSON.parse(jsonLine) as LogDirsJson;
    assert.equal(parsed.brokers.length, 1);
    const dir = parsed.brokers[0]?.logDirs[0];
    assert.equal(dir?.error, null);
    assert.equal(dir?.logDir, skiff.dataDir);
    const partitions = [...(dir?.partitions ?? [])].sort((a, b) => a.partition.localeCompare(b.partition));
    assert.deepStrictEqual(
      partitions.map((p) => [p.partition, p.offsetLag, p.isFuture]),
      [
        ['log-dirs-0', 0, false],
        ['log-dirs-1', 0, false],
      ],
    );
    assert.ok((partitions[1]?.size ?? 0) > 0, jsonLine);
  });

  test(
    'skiff topic describe against Kafka: no FSYNCED-OFFSET column (Kafka sends no tag)',
    { timeout: TIMEOUT_MS },
    async () => {
      const skiffCli = (args: string[], input = '') =>
        runCommand(process.execPath, [SKIFF_BIN, ...args, '--brokers', kafka.bootstrap], input);
      // Kafka's default flush.ms is Long.MAX_VALUE: its own recovery point may well trail the LEO here.
      const created = await skiffCli(['topic', 'create', 'kafka-fsync', '-p', '1']);
      assert.equal(created.code, 0, created.stdout + created.stderr);
      const produced = await skiffCli(['produce', 'kafka-fsync', '-p', '0'], 'a\nb\n');
      assert.equal(produced.code, 0, produced.stderr);
      const described = await skiffCli(['topic', 'describe', 'kafka-fsync']);
      assert.equal(described.code, 0, described.stderr);
      assert.match(
        described.stdout,
        /^PARTITION\s+LEADER\s+EPOCH\s+REPLICAS\s+ISR\s+LOG-START-OFFSET\s+HIGH-WATERMARK\s+LOG-END-OFFSET$/m,
        described.stdout,
      );
      assert.match(described.stdout, /^0\s+\d+\s+\d+\s+\[\d+\]\s+\[\d+\]\s+0\s+2\s+2$/m, described.stdout);
      assert.doesNotMatch(described.stdout, /FSYNCED/);
      const client = await KafkaClient.connect({ brokers: kafka.bootstrap });
      try {
        const md = await client.topicMetadata('kafka-fsync');
        assert.deepStrictEqual([...(await fsyncedOffsets(client, md))], [], 'Kafka decodes as -1: nothing to show');
      } finally {
        client.close();
      }
    },
  );
});
