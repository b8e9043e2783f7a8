/**
 * Apache Kafka's own command-line tools against a real Skiff process, run from the jars of the
 * Kafka fixture (`java -cp '<lib>/*' <class>`, see scripts/kafka-fixture.sh): the classes behind
 * kafka-topics, kafka-console-producer, kafka-console-consumer (also with --group), kafka-configs,
 * kafka-leader-election, kafka-producer-perf-test, kafka-verifiable-producer,
 * kafka-verifiable-consumer, kafka-consumer-groups and kafka-dump-log. Every run has a timeout;
 * results are checked through the tool's own output and independently through Skiff's client
 * library (or, for kafka-dump-log, against what was produced).
 *
 * SKIFF_TOOLS_TARGET=kafka runs the same cases against the Kafka fixture instead (a sanity check
 * of the cases themselves).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KafkaClient, partitionForKey } from '../../src/client';
import { buildBatch, decodeBatches } from '../../src/client/batch';
import { fetchGroupOffsets } from '../../src/client/group-admin';
import { ApiKey } from '../../src/protocol/api-keys';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import {
  describeToolRun,
  runKafkaTool,
  startKafka,
  type KafkaFixture,
  type ToolOptions,
  type ToolResult,
} from '../helpers/kafka-fixture';
import { readAll } from '../helpers/consume-all';
import { fetchRequestBody } from '../helpers/fetch-request';

const TEST_TIMEOUT_MS = 180_000;
const TOOL_TIMEOUT_MS = 60_000;

const TOPIC_COMMAND = 'org.apache.kafka.tools.TopicCommand';
const CONSOLE_PRODUCER = 'org.apache.kafka.tools.ConsoleProducer';
const CONSOLE_CONSUMER = 'org.apache.kafka.tools.consumer.ConsoleConsumer';
const CONFIG_COMMAND = 'org.apache.kafka.tools.ConfigCommand';
const PRODUCER_PERFORMANCE = 'org.apache.kafka.tools.ProducerPerformance';
const VERIFIABLE_PRODUCER = 'org.apache.kafka.tools.VerifiableProducer';
const DUMP_LOG_SEGMENTS = 'org.apache.kafka.tools.DumpLogSegments';
const LEADER_ELECTION_COMMAND = 'org.apache.kafka.tools.LeaderElectionCommand';
const CONSUMER_GROUP_COMMAND = 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand';
const VERIFIABLE_CONSUMER = 'org.apache.kafka.tools.VerifiableConsumer';

/** Runs a tool and asserts it exited 0 (or, with `expectFailure`, that it exited non-zero). */
async function tool(
  cls: string,
  args: string[],
  opts: ToolOptions & { expectFailure?: boolean } = {},
): Promise<ToolResult> {
  const r = await runKafkaTool(cls, args, { timeoutMs: TOOL_TIMEOUT_MS, ...opts });
  assert.equal(r.timedOut, false, `timed out: ${describeToolRun(cls, args, r)}`);
  if (opts.expectFailure === true) assert.notEqual(r.code, 0, `expected a failure: ${describeToolRun(cls, args, r)}`);
  else assert.equal(r.code, 0, describeToolRun(cls, args, r));
  return r;
}

/** Output lines (a final newline ends the last line; it does not start an empty one). */
const lines = (out: string): string[] => (out === '' ? [] : out.replace(/\n$/, '').split('\n'));

const str = (b: Buffer | null): string | null => (b === null ? null : b.toString('utf8'));

describe(`Kafka's own tools against ${process.env.SKIFF_TOOLS_TARGET === 'kafka' ? 'the Kafka fixture (sanity check)' : 'Skiff'}`, () => {
  let skiff: BrokerProcess | undefined;
  let kafka: KafkaFixture | undefined;
  let bootstrap: string;
  let dataDir: string;
  let client: KafkaClient;

  before(
    async () => {
      if (process.env.SKIFF_TOOLS_TARGET === 'kafka') {
        kafka = await startKafka();
        bootstrap = kafka.bootstrap;
        dataDir = path.join(kafka.dir, 'data');
      } else {
        skiff = await startBrokerProcess();
        bootstrap = `127.0.0.1:${skiff.port}`;
        dataDir = skiff.dataDir;
      }
      client = await KafkaClient.connect({ brokers: bootstrap });
    },
    { timeout: 150_000 },
  );

  after(async () => {
    client?.close();
    if (skiff !== undefined) {
      // Kafka's tools only send APIs the broker advertises: anything else is a broker bug worth seeing.
      const unsupported = skiff
        .logs()
        .split('\n')
        .filter((l) => /unknown or unsupported API/i.test(l));
      if (unsupported.length > 0)
        console.log(`# Skiff closed connections for unsupported APIs:\n# ${unsupported.slice(0, 20).join('\n# ')}`);
    }
    await skiff?.stop();
    await kafka?.stop();
  });

  /** Creates a topic with Skiff's client and waits until each partition answers ListOffsets. */
  async function createTopic(name: string, partitions: number, configs: Record<string, string> = {}): Promise<void> {
    const [r] = await client.createTopics([{ name, numPartitions: partitions, replicationFactor: 1, configs }]);
    assert.equal(r!.errorCode, 0, `create ${name}: ${r!.errorMessage}`);
    for (let i = 0; i < 100; i++) {
      try {
        await client.listOffsets(
          name,
          Array.from({ length: partitions }, (_, partition) => ({ partition, timestamp: -1 })),
        );
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    assert.fail(`${name} never became ready`);
  }

  /** Adds a Skiff log tail to a failure (unknown API keys etc. are logged there). */
  async function withLogs(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      if (skiff !== undefined) {
        const unsupported = skiff
          .logs()
          .split('\n')
          .filter((l) => /unknown or unsupported API|UNSUPPORTED_VERSION/i.test(l));
        (e as Error).message +=
          `\n--- Skiff log lines about unsupported APIs ---\n${unsupported.slice(-20).join('\n')}`;
      }
      throw e;
    }
  }

  test(
    'kafka-topics (TopicCommand): --create with --partitions and --config, --list, --describe, --alter --partitions, --delete; errors',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-topics';
        const bs = ['--bootstrap-server', bootstrap];
        const created = await tool(TOPIC_COMMAND, [
          ...bs,
          '--create',
          '--topic',
          topic,
          '--partitions',
          '3',
          '--replication-factor',
          '1',
          '--config',
          'retention.ms=3600000',
          '--config',
          'max.message.bytes=200000',
        ]);
        assert.match(created.stdout, new RegExp(`Created topic ${topic}\\.`));

        const listed = await tool(TOPIC_COMMAND, [...bs, '--list']);
        assert.ok(listed.stdout.split('\n').includes(topic), `--list: ${listed.stdout}`);

        const described = await tool(TOPIC_COMMAND, [...bs, '--describe', '--topic', topic]);
        const header = described.stdout.split('\n').find((l) => l.startsWith(`Topic: ${topic}\tTopicId:`)) ?? '';
        assert.match(header, /\tPartitionCount: 3\t/, described.stdout);
        assert.match(header, /\tReplicationFactor: 1\t/, described.stdout);
        const configs = /Configs: (.*)$/.exec(header)?.[1]?.split(',') ?? [];
        assert.ok(
          configs.includes('retention.ms=3600000') && configs.includes('max.message.bytes=200000'),
          `configs: ${header}`,
        );
        const md = await client.topicMetadata(topic);
        const leader = md.partitions[0]!.leader;
        const partitionLines = described.stdout.split('\n').filter((l) => /^\tTopic: /.test(l));
        assert.deepEqual(
          partitionLines.map((l) =>
            /Partition: (\d+)\tLeader: (-?\d+)\tReplicas: ([\d,]+)\tIsr: ([\d,]+)/.exec(l)?.slice(1),
          ),
          [0, 1, 2].map((p) => [String(p), String(leader), String(leader), String(leader)]),
          described.stdout,
        );
        // The topic id printed is the one Metadata gives.
        assert.match(header, new RegExp(`TopicId: ${md.topicId.replace(/[-+]/g, (c) => `\\${c}`)}\\t`));

        const again = await tool(TOPIC_COMMAND, [...bs, '--create', '--topic', topic, '--partitions', '1'], {
          expectFailure: true,
        });
        assert.match(again.stdout + again.stderr, /already exists/i);

        await tool(TOPIC_COMMAND, [...bs, '--alter', '--topic', topic, '--partitions', '5']);
        const grown = await tool(TOPIC_COMMAND, [...bs, '--describe', '--topic', topic]);
        assert.match(grown.stdout, /\tPartitionCount: 5\t/, grown.stdout);
        assert.equal((await client.topicMetadata(topic)).partitions.length, 5);

        const missing = await tool(TOPIC_COMMAND, [...bs, '--describe', '--topic', 'tools-no-such-topic'], {
          expectFailure: true,
        });
        assert.match(missing.stdout + missing.stderr, /does not exist|UnknownTopicOrPartition/i);

        await tool(TOPIC_COMMAND, [...bs, '--delete', '--topic', topic]);
        let names: string[] = [];
        for (let i = 0; i < 20; i++) {
          names = (await client.metadata(null)).topics.map((t) => t.name);
          if (!names.includes(topic)) break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        assert.ok(!names.includes(topic), `${topic} still listed after --delete: ${names.join(', ')}`);
        const listedAfter = await tool(TOPIC_COMMAND, [...bs, '--list']);
        assert.ok(!listedAfter.stdout.split('\n').includes(topic), listedAfter.stdout);
      }),
  );

  test(
    'kafka-console-producer -> Skiff -> kafka-console-consumer (--partition 0 --offset earliest --max-messages): keys, headers, nulls, exact bytes',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-console';
        await createTopic(topic, 1);
        const inputLines = [
          'h1:a,h2:b\tk-0|value-0',
          'h1:c\t<NULL>|value with spaces',
          'hn:<NULL>,he:\tk-2|<NULL>',
          'u:\u00e9\tk-3|\u00fcnicode \u5024',
          'h:x\tk-4|',
        ];
        await tool(
          CONSOLE_PRODUCER,
          [
            '--bootstrap-server',
            bootstrap,
            '--topic',
            topic,
            '--reader-property',
            'parse.key=true',
            '--reader-property',
            'key.separator=|',
            '--reader-property',
            'parse.headers=true',
            '--reader-property',
            'null.marker=<NULL>',
          ],
          { input: inputLines.join('\n') + '\n' },
        );

        const stored = await readAll(bootstrap, topic, [0], 500);
        assert.deepEqual(
          stored.map((r) => ({
            offset: r.offset,
            key: str(r.key),
            value: str(r.value),
            headers: r.headers.map((h) => [h.key, str(h.value)]),
          })),
          [
            {
              offset: 0,
              key: 'k-0',
              value: 'value-0',
              headers: [
                ['h1', 'a'],
                ['h2', 'b'],
              ],
            },
            { offset: 1, key: null, value: 'value with spaces', headers: [['h1', 'c']] },
            {
              offset: 2,
              key: 'k-2',
              value: null,
              headers: [
                ['hn', null],
                ['he', ''],
              ],
            },
            { offset: 3, key: 'k-3', value: '\u00fcnicode \u5024', headers: [['u', '\u00e9']] },
            { offset: 4, key: 'k-4', value: '', headers: [['h', 'x']] },
          ],
        );

        const consumed = await tool(CONSOLE_CONSUMER, [
          '--bootstrap-server',
          bootstrap,
          '--topic',
          topic,
          '--partition',
          '0',
          '--offset',
          'earliest',
          '--max-messages',
          '5',
          '--timeout-ms',
          '30000',
          '--formatter-property',
          'print.key=true',
          '--formatter-property',
          'print.headers=true',
          '--formatter-property',
          'print.offset=true',
          '--formatter-property',
          'key.separator=|',
          '--formatter-property',
          'null.literal=<NULL>',
        ]);
        assert.deepEqual(lines(consumed.stdout), [
          'Offset:0|h1:a,h2:b|k-0|value-0',
          'Offset:1|h1:c|<NULL>|value with spaces',
          'Offset:2|hn:<NULL>,he:|k-2|<NULL>',
          'Offset:3|u:\u00e9|k-3|\u00fcnicode \u5024',
          'Offset:4|h:x|k-4|',
        ]);
        assert.match(consumed.stderr, /Processed a total of 5 messages/);

        // From an offset in the middle, and only as many as asked.
        const tail = await tool(CONSOLE_CONSUMER, [
          '--bootstrap-server',
          bootstrap,
          '--topic',
          topic,
          '--partition',
          '0',
          '--offset',
          '3',
          '--max-messages',
          '2',
          '--timeout-ms',
          '30000',
        ]);
        assert.deepEqual(lines(tail.stdout), ['\u00fcnicode \u5024', '']);
      }),
  );

  test(
    "kafka-console-producer keyed over 3 partitions: Kafka's partitioner places each key, each partition keeps its order (read with kafka-console-consumer)",
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-console-keyed';
        await createTopic(topic, 3);
        const input = Array.from({ length: 60 }, (_, i) => `key-${i % 12}|value-${i}`);
        await tool(
          CONSOLE_PRODUCER,
          [
            '--bootstrap-server',
            bootstrap,
            '--topic',
            topic,
            '--reader-property',
            'parse.key=true',
            '--reader-property',
            'key.separator=|',
          ],
          { input: input.join('\n') + '\n' },
        );
        const expected = new Map<number, string[]>([
          [0, []],
          [1, []],
          [2, []],
        ]);
        for (const line of input) expected.get(partitionForKey(Buffer.from(line.split('|')[0]!), 3))!.push(line);
        for (const [partition, expectedLines] of expected) {
          const r = await tool(CONSOLE_CONSUMER, [
            '--bootstrap-server',
            bootstrap,
            '--topic',
            topic,
            '--partition',
            String(partition),
            '--offset',
            'earliest',
            '--max-messages',
            String(expectedLines.length),
            '--timeout-ms',
            '30000',
            '--formatter-property',
            'print.key=true',
            '--formatter-property',
            'key.separator=|',
          ]);
          assert.deepEqual(lines(r.stdout), expectedLines, `partition ${partition}`);
        }
      }),
  );

  test(
    'kafka-configs (ConfigCommand): --describe, --alter --add-config / --delete-config on a topic, --describe --all; a bad value is refused',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-configs';
        await createTopic(topic, 1, { 'retention.ms': '3600000' });
        const base = ['--bootstrap-server', bootstrap, '--entity-type', 'topics', '--entity-name', topic];
        const dynamic = async (): Promise<string[]> => {
          const r = await tool(CONFIG_COMMAND, [...base, '--describe']);
          assert.match(r.stdout, new RegExp(`Dynamic configs for topic ${topic} are:`));
          return r.stdout
            .split('\n')
            .filter((l) => l.startsWith('  '))
            .map((l) => l.trim().split(' ')[0]!)
            .sort();
        };
        assert.deepEqual(await dynamic(), ['retention.ms=3600000']);

        const altered = await tool(CONFIG_COMMAND, [
          ...base,
          '--alter',
          '--add-config',
          'retention.ms=7200000,cleanup.policy=compact,max.message.bytes=300000',
        ]);
        assert.match(altered.stdout, new RegExp(`Completed updating config for topic ${topic}\\.`));
        assert.deepEqual(await dynamic(), [
          'cleanup.policy=compact',
          'max.message.bytes=300000',
          'retention.ms=7200000',
        ]);

        await tool(CONFIG_COMMAND, [...base, '--alter', '--delete-config', 'cleanup.policy']);
        assert.deepEqual(await dynamic(), ['max.message.bytes=300000', 'retention.ms=7200000']);

        // Independently: DescribeConfigs through Skiff's client.
        const body = await client.request(ApiKey.DescribeConfigs, null, {
          resources: [
            {
              resourceType: 2,
              resourceName: topic,
              configurationKeys: ['retention.ms', 'cleanup.policy', 'max.message.bytes'],
            },
          ],
          includeSynonyms: false,
          includeDocumentation: false,
        });
        const entries = (
          body.results as Array<{ configs: Array<{ name: string; value: string; configSource: number }> }>
        )[0]!.configs
          .map((c) => [c.name, c.value, c.configSource])
          .sort();
        assert.deepEqual(entries, [
          ['cleanup.policy', 'delete', 5],
          ['max.message.bytes', '300000', 1],
          ['retention.ms', '7200000', 1],
        ]);

        const all = await tool(CONFIG_COMMAND, [...base, '--describe', '--all']);
        assert.match(all.stdout, new RegExp(`All configs for topic ${topic} are:`));
        assert.match(
          all.stdout,
          /^ {2}segment\.bytes=1073741824 sensitive=false synonyms=\{DEFAULT_CONFIG:log\.segment\.bytes=1073741824\}$/m,
        );
        assert.match(
          all.stdout,
          /^ {2}retention\.ms=7200000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention\.ms=7200000/m,
        );

        const bad = await tool(CONFIG_COMMAND, [...base, '--alter', '--add-config', 'retention.ms=abc'], {
          expectFailure: true,
        });
        assert.match(bad.stdout + bad.stderr, /InvalidConfigurationException|Invalid value|INVALID_CONFIG/i);
        assert.deepEqual(await dynamic(), ['max.message.bytes=300000', 'retention.ms=7200000']);
      }),
  );

  test(
    'kafka-leader-election (LeaderElectionCommand): PREFERRED and UNCLEAN on led partitions, --all-topic-partitions, an unknown topic fails',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-election';
        await createTopic(topic, 2);
        const base = ['--bootstrap-server', bootstrap];
        // What Kafka 4.4 prints for a partition already led by its preferred replica.
        const preferred = await tool(LEADER_ELECTION_COMMAND, [
          ...base,
          '--election-type',
          'PREFERRED',
          '--topic',
          topic,
          '--partition',
          '1',
        ]);
        assert.deepEqual(lines(preferred.stdout), [`Valid replica already elected for partitions ${topic}-1`]);
        const unclean = await tool(LEADER_ELECTION_COMMAND, [
          ...base,
          '--election-type',
          'UNCLEAN',
          '--topic',
          topic,
          '--partition',
          '0',
        ]);
        assert.deepEqual(lines(unclean.stdout), [`Valid replica already elected for partitions ${topic}-0`]);
        // No partition needs an election, so nothing is listed (Kafka prints nothing either).
        const all = await tool(LEADER_ELECTION_COMMAND, [
          ...base,
          '--election-type',
          'preferred',
          '--all-topic-partitions',
        ]);
        assert.deepEqual(lines(all.stdout), []);
        const unknown = await tool(
          LEADER_ELECTION_COMMAND,
          [...base, '--election-type', 'PREFERRED', '--topic', `${topic}-missing`, '--partition', '0'],
          { expectFailure: true },
        );
        assert.match(
          unknown.stdout,
          new RegExp(
            `Error completing leader election \\(PREFERRED\\) for partition: ${topic}-missing-0: org\\.apache\\.kafka\\.common\\.errors\\.UnknownTopicOrPartitionException`,
          ),
        );
        assert.match(unknown.stdout + unknown.stderr, /1 replica\(s\) could not be elected/);
        // Independently: each partition is still led by its preferred (first) replica.
        const md = await client.topicMetadata(topic);
        assert.deepEqual(
          md.partitions.map((p) => [p.partition, p.leader === p.replicas[0]]),
          [
            [0, true],
            [1, true],
          ],
        );
      }),
  );

  test(
    'kafka-producer-perf-test (ProducerPerformance): 3000 idempotent records, acks=all, lz4; every record is stored',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-perf';
        const r = await tool(PRODUCER_PERFORMANCE, [
          '--topic',
          topic,
          '--num-records',
          '3000',
          '--record-size',
          '100',
          '--throughput',
          '-1',
          '--producer-props',
          `bootstrap.servers=${bootstrap}`,
          'acks=all',
          'compression.type=lz4',
          'linger.ms=5',
        ]);
        const summary =
          /^3000 records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$/m.exec(
            r.stdout,
          );
        assert.ok(summary !== null, describeToolRun(PRODUCER_PERFORMANCE, [], r));
        assert.ok(Number(summary[1]) > 0);
        const offsets = await client.listOffsets(topic, [{ partition: 0, timestamp: -1 }]);
        assert.equal(offsets.get(0)!.offset, 3000);
        const stored = await readAll(bootstrap, topic, [0], 500);
        assert.equal(stored.length, 3000);
        assert.ok(stored.every((x) => x.value?.length === 100 && x.key === null));
        // The producer is idempotent by default (acks=all): its batches carry a producer id from InitProducerId and dense sequences.
        const fetched = await client.request(ApiKey.Fetch, 12, fetchRequestBody({ topic, lastFetchedEpoch: -1 }));
        const recordSet = (fetched.responses as Array<{ partitions: Array<{ records: Buffer | null }> }>)[0]!
          .partitions[0]!.records!;
        const fetchedBatches = decodeBatches(recordSet);
        assert.ok(fetchedBatches.length > 0);
        assert.ok(
          fetchedBatches.every(
            (b) => b.producerId >= 0 && b.producerId === fetchedBatches[0]!.producerId && b.producerEpoch === 0,
          ),
          'one producer id on every batch',
        );
        assert.ok(
          fetchedBatches.every((b) => b.baseSequence === b.baseOffset),
          'sequences follow offsets (one producer, one partition)',
        );
        assert.ok(
          fetchedBatches.every((b) => (b.attributes & 0x07) === 3),
          'lz4 batches stored as sent',
        );
      }),
  );

  test(
    'kafka-verifiable-producer (VerifiableProducer): every JSON ack (acks=-1) names a dense offset per partition and the value stored there',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-verifiable';
        await createTopic(topic, 2);
        const r = await tool(VERIFIABLE_PRODUCER, [
          '--bootstrap-server',
          bootstrap,
          '--topic',
          topic,
          '--max-messages',
          '200',
          '--acks',
          '-1',
        ]);
        const events = r.stdout
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        assert.equal(events[0]?.name, 'startup_complete');
        const acks = events.filter((e) => e.name === 'producer_send_success') as Array<{
          value: string;
          offset: number;
          partition: number;
          topic: string;
          key: string | null;
        }>;
        const failures = events.filter((e) => e.name === 'producer_send_error');
        assert.deepEqual(failures, []);
        assert.equal(acks.length, 200);
        assert.deepEqual(
          acks.map((a) => a.value).sort((a, b) => Number(a) - Number(b)),
          Array.from({ length: 200 }, (_, i) => String(i)),
        );
        const toolData = events.find((e) => e.name === 'tool_data');
        assert.equal(toolData?.sent, 200);
        assert.equal(toolData?.acked, 200);
        assert.ok(events.some((e) => e.name === 'shutdown_complete'));
        const stored = await readAll(bootstrap, topic, [0, 1], 500);
        for (const partition of [0, 1]) {
          const acked = acks.filter((a) => a.partition === partition).sort((a, b) => a.offset - b.offset);
          assert.deepEqual(
            acked.map((a) => a.offset),
            acked.map((_, i) => i),
            `partition ${partition}: offsets are dense from 0`,
          );
          assert.deepEqual(
            stored.filter((s) => s.partition === partition).map((s) => [s.offset, str(s.value)]),
            acked.map((a) => [a.offset, a.value]),
            `partition ${partition}: the stored values are the acked ones`,
          );
        }
      }),
  );

  test(
    "kafka-dump-log (DumpLogSegments) reads Skiff's segment files: --deep-iteration --print-data-log shows every record; --verify-index-only passes; index entries point at batches",
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-dump';
        await createTopic(topic, 1);
        const t0 = Date.now() - 10_000;
        const batches = [
          {
            codec: 0 as const,
            records: [
              { key: 'k0', value: 'v0', headers: [{ key: 'h1', value: Buffer.from('x') }] },
              { key: null, value: 'v1', headers: [] },
              {
                key: 'k2',
                value: null,
                headers: [
                  { key: 'a', value: null },
                  { key: 'b', value: Buffer.from('') },
                ],
              },
            ],
          },
          {
            codec: 1 as const,
            records: Array.from({ length: 5 }, (_, i) => ({
              key: `gz-${i}`,
              value: `gzip value ${i} ${'z'.repeat(40)}`,
              headers: [],
            })),
          },
          {
            codec: 4 as const,
            records: [{ key: 'zs', value: 'zstd value', headers: [{ key: 'h', value: Buffer.from('y') }] }],
          },
        ];
        let ts = t0;
        for (const b of batches) {
          const bytes = buildBatch(
            b.records.map((r) => ({
              key: r.key === null ? null : Buffer.from(r.key),
              value: r.value === null ? null : Buffer.from(r.value),
              headers: r.headers,
              timestamp: ts++,
            })),
            { compression: b.codec, baseTimestamp: ts - 1 },
          );
          const body = await client.request(ApiKey.Produce, null, {
            transactionalId: null,
            acks: -1,
            timeoutMs: 30_000,
            topicData: [
              {
                name: topic,
                topicId: (await client.topicMetadata(topic)).topicId,
                partitionData: [{ index: 0, records: bytes }],
              },
            ],
          });
          const p = (body.responses as Array<{ partitionResponses: Array<{ errorCode: number }> }>)[0]!
            .partitionResponses[0]!;
          assert.equal(p.errorCode, 0);
        }
        const segment = path.join(dataDir, `${topic}-0`, '00000000000000000000');
        assert.ok(fs.existsSync(`${segment}.log`), `no segment file ${segment}.log`);

        const dump = await tool(DUMP_LOG_SEGMENTS, [
          '--files',
          `${segment}.log`,
          '--deep-iteration',
          '--print-data-log',
        ]);
        const batchLines = dump.stdout.split('\n').filter((l) => l.startsWith('baseOffset: '));
        assert.deepEqual(
          batchLines.map((l) => [
            /baseOffset: (\d+) lastOffset: (\d+) count: (\d+)/.exec(l)?.slice(1).map(Number),
            /compresscodec: (\w+)/.exec(l)?.[1],
            /isvalid: (\w+)/.exec(l)?.[1],
            /magic: (\d)/.exec(l)?.[1],
          ]),
          [
            [[0, 2, 3], 'none', 'true', '2'],
            [[3, 7, 5], 'gzip', 'true', '2'],
            [[8, 8, 1], 'zstd', 'true', '2'],
          ],
          dump.stdout,
        );
        const recordLines = dump.stdout.split('\n').filter((l) => l.startsWith('| offset: '));
        const parsed = recordLines.map((l) => {
          const m =
            /^\| offset: (\d+) CreateTime: (\d+) keySize: (-?\d+) valueSize: (-?\d+) sequence: -?\d+ headerKeys: \[([^\]]*)\](?: key: (.*?))?(?: payload: (.*))?$/.exec(
              l,
            );
          assert.ok(m !== null, `unparsed record line: ${l}`);
          return {
            offset: Number(m[1]),
            ts: Number(m[2]) - t0,
            keySize: Number(m[3]),
            valueSize: Number(m[4]),
            headerKeys: m[5],
            key: m[6] ?? null,
            payload: m[7] ?? null,
          };
        });
        const expected = batches
          .flatMap((b) => b.records)
          .map((r, i) => ({
            offset: i,
            ts: i,
            keySize: r.key === null ? -1 : Buffer.byteLength(r.key),
            valueSize: r.value === null ? -1 : Buffer.byteLength(r.value),
            headerKeys: r.headers.map((h) => h.key).join(','),
            key: r.key,
            payload: r.value,
          }));
        assert.deepEqual(parsed, expected, dump.stdout);

        // Indexes need a segment bigger than index.interval.bytes (4096): the perf-test topic's, or a fresh one.
        const perfTopic = 'tools-dump-indexed';
        await createTopic(perfTopic, 1);
        for (let i = 0; i < 40; i++) {
          const bytes = buildBatch(
            Array.from({ length: 10 }, (_, j) => ({
              key: Buffer.from(`k${i}-${j}`),
              value: Buffer.alloc(100, 97 + (j % 26)),
              timestamp: t0 + i * 10 + j,
            })),
            { baseTimestamp: t0 + i * 10 },
          );
          const body = await client.request(ApiKey.Produce, null, {
            transactionalId: null,
            acks: -1,
            timeoutMs: 30_000,
            topicData: [
              {
                name: perfTopic,
                topicId: (await client.topicMetadata(perfTopic)).topicId,
                partitionData: [{ index: 0, records: bytes }],
              },
            ],
          });
          assert.equal(
            (body.responses as Array<{ partitionResponses: Array<{ errorCode: number }> }>)[0]!.partitionResponses[0]!
              .errorCode,
            0,
          );
        }
        const seg = path.join(dataDir, `${perfTopic}-0`, '00000000000000000000');
        const verify = await tool(DUMP_LOG_SEGMENTS, [
          '--files',
          `${seg}.index,${seg}.timeindex`,
          '--verify-index-only',
        ]);
        assert.doesNotMatch(verify.stdout + verify.stderr, /mismatch|corrupt|Exception/i, verify.stdout);

        const logDump = await tool(DUMP_LOG_SEGMENTS, ['--files', `${seg}.log`]);
        const batchAt = new Map<number, number>(); // position -> lastOffset
        for (const l of logDump.stdout.split('\n')) {
          const m = /lastOffset: (\d+).* position: (\d+)/.exec(l);
          if (m !== null) batchAt.set(Number(m[2]), Number(m[1]));
        }
        assert.equal(batchAt.size, 40, logDump.stdout);
        const indexDump = await tool(DUMP_LOG_SEGMENTS, ['--files', `${seg}.index`]);
        const entries = [...indexDump.stdout.matchAll(/^offset: (\d+) position: (\d+)$/gm)].map(
          (m) => [Number(m[1]), Number(m[2])] as const,
        );
        assert.ok(entries.length >= 5, `expected offset index entries (about one per 4 KiB): ${indexDump.stdout}`);
        for (const [offset, position] of entries)
          assert.equal(
            batchAt.get(position),
            offset,
            `index entry offset ${offset} -> position ${position} is not a batch ending at that offset`,
          );
        assert.doesNotMatch(indexDump.stdout, /mismatch/i);
        const timeDump = await tool(DUMP_LOG_SEGMENTS, ['--files', `${seg}.timeindex`]);
        const timeEntries = [...timeDump.stdout.matchAll(/^timestamp: (\d+) offset: (\d+)$/gm)].map(
          (m) => [Number(m[1]), Number(m[2])] as const,
        );
        assert.ok(timeEntries.length >= 5, timeDump.stdout);
        assert.doesNotMatch(timeDump.stdout + timeDump.stderr, /mismatch|Exception/i, timeDump.stdout);
        for (let i = 1; i < timeEntries.length; i++)
          assert.ok(
            timeEntries[i]![0] > timeEntries[i - 1]![0] && timeEntries[i]![1] > timeEntries[i - 1]![1],
            'time index entries increase',
          );
      }),
  );
  /** Committed offsets of `group` on `topic` (partition -> offset, -1 none), through Skiff's client. */
  async function committed(group: string, topic: string, partitions: number[]): Promise<number[]> {
    const o = await fetchGroupOffsets(client, group, new Map([[topic, partitions]]));
    return partitions.map((p) => o.get(topic)?.get(p)?.offset ?? -1);
  }

  test(
    'kafka-console-consumer --group: a second run continues from the offsets the first one committed on close',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-console-group';
        const group = 'tools-console-group-g';
        await createTopic(topic, 1);
        await tool(CONSOLE_PRODUCER, ['--bootstrap-server', bootstrap, '--topic', topic], {
          input: Array.from({ length: 10 }, (_, i) => `line-${i}`).join('\n') + '\n',
        });
        const args = [
          '--bootstrap-server',
          bootstrap,
          '--topic',
          topic,
          '--group',
          group,
          '--from-beginning',
          '--timeout-ms',
          '30000',
        ];
        const first = await tool(CONSOLE_CONSUMER, [...args, '--max-messages', '4']);
        assert.deepEqual(lines(first.stdout), ['line-0', 'line-1', 'line-2', 'line-3']);
        assert.deepEqual(await committed(group, topic, [0]), [4], 'the first run committed offset 4 on close');
        const second = await tool(CONSOLE_CONSUMER, [...args, '--max-messages', '6']);
        assert.deepEqual(lines(second.stdout), ['line-4', 'line-5', 'line-6', 'line-7', 'line-8', 'line-9']);
        assert.deepEqual(await committed(group, topic, [0]), [10]);
      }),
  );

  test(
    'kafka-verifiable-consumer (VerifiableConsumer): reads every record kafka-verifiable-producer wrote to 2 partitions, committing each batch',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-verifiable-consumer';
        const group = 'tools-verifiable-consumer-g';
        await createTopic(topic, 2);
        const produced = await tool(VERIFIABLE_PRODUCER, [
          '--bootstrap-server',
          bootstrap,
          '--topic',
          topic,
          '--max-messages',
          '300',
          '--acks',
          '-1',
          '--repeating-keys',
          '10',
        ]);
        const acks = produced.stdout
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { name: string; partition: number; offset: number })
          .filter((e) => e.name === 'producer_send_success');
        assert.equal(acks.length, 300);
        const ends = [0, 1].map((p) => acks.filter((a) => a.partition === p).length);
        assert.ok(
          ends.every((n) => n > 0),
          `keys 0-9 spread over both partitions: ${ends}`,
        );
        const r = await tool(VERIFIABLE_CONSUMER, [
          '--bootstrap-server',
          bootstrap,
          '--topic',
          topic,
          '--group-id',
          group,
          '--max-messages',
          '300',
          '--reset-policy',
          'earliest',
          '--session-timeout',
          '10000',
        ]);
        const events = r.stdout
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        assert.equal(events[0]?.name, 'startup_complete', r.stdout.slice(0, 2000));
        const assigned = events
          .filter((e) => e.name === 'partitions_assigned')
          .flatMap((e) => e.partitions as Array<{ topic: string; partition: number }>);
        assert.deepEqual(assigned.map((p) => `${p.topic}-${p.partition}`).sort(), [`${topic}-0`, `${topic}-1`]);
        const consumed = events
          .filter((e) => e.name === 'records_consumed')
          .flatMap(
            (e) =>
              e.partitions as Array<{
                topic: string;
                partition: number;
                count: number;
                minOffset: number;
                maxOffset: number;
              }>,
          );
        for (const p of [0, 1]) {
          const batches = consumed.filter((c) => c.partition === p).sort((a, b) => a.minOffset - b.minOffset);
          assert.equal(
            batches.reduce((n, b) => n + b.count, 0),
            ends[p],
            `partition ${p}: every record once`,
          );
          let next = 0;
          for (const b of batches) {
            assert.equal(b.minOffset, next, `partition ${p}: no gap or repeat before ${b.minOffset}`);
            assert.equal(b.maxOffset - b.minOffset + 1, b.count);
            next = b.maxOffset + 1;
          }
          assert.equal(next, ends[p]);
        }
        const commits = events.filter((e) => e.name === 'offsets_committed') as Array<{
          success: boolean;
          error?: string;
          offsets: Array<{ topic: string; partition: number; offset: number }>;
        }>;
        assert.ok(commits.length > 0, 'no offsets_committed events');
        assert.deepEqual(
          commits.filter((c) => !c.success),
          [],
        );
        const last = new Map<number, number>();
        for (const c of commits)
          for (const o of c.offsets) last.set(o.partition, Math.max(last.get(o.partition) ?? -1, o.offset));
        assert.deepEqual([last.get(0), last.get(1)], ends, 'the last commits are the log end offsets');
        assert.ok(events.some((e) => e.name === 'shutdown_complete'));
        assert.deepEqual(
          await committed(group, topic, [0, 1]),
          ends,
          'OffsetFetch returns what the consumer committed',
        );
      }),
  );

  test(
    'kafka-consumer-groups (ConsumerGroupCommand): --list, --describe with lag, --reset-offsets --to-earliest --execute, --delete',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-groups';
        const group = 'tools-groups-g';
        await createTopic(topic, 2);
        const input = Array.from({ length: 12 }, (_, i) => `key-${i}|value-${i}`);
        await tool(
          CONSOLE_PRODUCER,
          [
            '--bootstrap-server',
            bootstrap,
            '--topic',
            topic,
            '--reader-property',
            'parse.key=true',
            '--reader-property',
            'key.separator=|',
          ],
          { input: input.join('\n') + '\n' },
        );
        const ends = [0, 1].map(
          (p) => input.filter((l) => partitionForKey(Buffer.from(l.split('|')[0]!), 2) === p).length,
        );
        // A console consumer in the group reads 5 records and commits them on close.
        await tool(CONSOLE_CONSUMER, [
          '--bootstrap-server',
          bootstrap,
          '--topic',
          topic,
          '--group',
          group,
          '--from-beginning',
          '--max-messages',
          '5',
          '--timeout-ms',
          '30000',
        ]);
        const before = await committed(group, topic, [0, 1]);
        assert.ok(
          before.every((o, p) => o >= 0 && o <= ends[p]!) && before[0]! + before[1]! >= 5,
          `committed ${before}`,
        );

        const bs = ['--bootstrap-server', bootstrap];
        const listed = await tool(CONSUMER_GROUP_COMMAND, [...bs, '--list']);
        assert.ok(lines(listed.stdout).includes(group), listed.stdout);
        const withState = await tool(CONSUMER_GROUP_COMMAND, [...bs, '--list', '--state']);
        assert.ok(
          lines(withState.stdout).some((l) => new RegExp(`^${group}\\s+Empty$`).test(l.trimEnd())),
          withState.stdout,
        );

        const described = await tool(CONSUMER_GROUP_COMMAND, [...bs, '--describe', '--group', group]);
        assert.match(
          described.stdout + described.stderr,
          new RegExp(`Consumer group '${group}' has no active members\\.`),
        );
        const rows = (out: string): string[][] =>
          lines(out)
            .filter((l) => l.startsWith(`${group} `))
            .map((l) => l.trim().split(/\s+/));
        assert.deepEqual(
          rows(described.stdout)
            .map((r) => r.slice(0, 8))
            .sort(),
          [0, 1]
            .filter((p) => before[p]! >= 0)
            .map((p) => [
              group,
              topic,
              String(p),
              String(before[p]),
              String(ends[p]),
              String(ends[p]! - before[p]!),
              '-',
              '-',
            ]),
          described.stdout,
        );
        const state = await tool(CONSUMER_GROUP_COMMAND, [...bs, '--describe', '--group', group, '--state']);
        // GROUP, COORDINATOR (ID) as host:port (node id), ASSIGNMENT-STRATEGY (none while Empty), STATE, #MEMBERS.
        assert.match(
          state.stdout,
          new RegExp(`^${group}\\s+${bootstrap.replace(/\./g, '\\.')}\\s+\\(\\d+\\)\\s+-\\s+Empty\\s+0\\s*$`, 'm'),
          state.stdout,
        );

        const reset = await tool(CONSUMER_GROUP_COMMAND, [
          ...bs,
          '--reset-offsets',
          '--group',
          group,
          '--topic',
          topic,
          '--to-earliest',
          '--execute',
        ]);
        assert.deepEqual(
          rows(reset.stdout).sort(),
          [
            [group, topic, '0', '0'],
            [group, topic, '1', '0'],
          ],
          reset.stdout,
        );
        assert.deepEqual(await committed(group, topic, [0, 1]), [0, 0]);
        const afterReset = await tool(CONSUMER_GROUP_COMMAND, [...bs, '--describe', '--group', group]);
        assert.deepEqual(
          rows(afterReset.stdout)
            .map((r) => r.slice(2, 6))
            .sort(),
          [
            ['0', '0', String(ends[0]), String(ends[0])],
            ['1', '0', String(ends[1]), String(ends[1])],
          ],
        );

        const deleted = await tool(CONSUMER_GROUP_COMMAND, [...bs, '--delete', '--group', group]);
        assert.match(
          deleted.stdout,
          new RegExp(`Deletion of requested consumer groups \\('${group}'\\) was successful\\.`),
        );
        const listedAfter = await tool(CONSUMER_GROUP_COMMAND, [...bs, '--list']);
        assert.ok(!lines(listedAfter.stdout).includes(group), listedAfter.stdout);
        assert.deepEqual(await committed(group, topic, [0, 1]), [-1, -1], "the group's offsets went with it");
        const missing = await tool(CONSUMER_GROUP_COMMAND, [...bs, '--describe', '--group', group]);
        // Kafka 4.x: DescribeGroups v6 answers GROUP_ID_NOT_FOUND for a group it does not know (KIP-1043).
        assert.match(
          missing.stdout + missing.stderr,
          new RegExp(`GroupIdNotFoundException: Group ${group} not found\\.`),
        );
      }),
  );
  test(
    'kafka-consumer-groups against an active group: --describe --members and --describe show the console consumer; --reset-offsets and --delete are refused',
    { timeout: TEST_TIMEOUT_MS },
    () =>
      withLogs(async () => {
        const topic = 'tools-groups-active';
        const group = 'tools-groups-active-g';
        await createTopic(topic, 3);
        await tool(CONSOLE_PRODUCER, ['--bootstrap-server', bootstrap, '--topic', topic], {
          input: Array.from({ length: 6 }, (_, i) => `line-${i}`).join('\n') + '\n',
        });
        // A console consumer that stays in the group (it waits for more records until its timeout).
        const consumerArgs = [
          '--bootstrap-server',
          bootstrap,
          '--topic',
          topic,
          '--group',
          group,
          '--from-beginning',
          '--max-messages',
          '1000',
          '--timeout-ms',
          '20000',
          '--command-property',
          'client.id=tools-active-client',
        ];
        const running = runKafkaTool(CONSOLE_CONSUMER, consumerArgs, { timeoutMs: 60_000 });
        const bs = ['--bootstrap-server', bootstrap];
        const rows = (out: string): string[][] =>
          lines(out)
            .filter((l) => l.startsWith(`${group} `))
            .map((l) => l.trim().split(/\s+/));
        let members: string[][] = [];
        for (let i = 0; i < 60; i++) {
          const r = await runKafkaTool(CONSUMER_GROUP_COMMAND, [...bs, '--describe', '--group', group, '--members'], {
            timeoutMs: TOOL_TIMEOUT_MS,
          });
          members = rows(r.stdout);
          if (members.length === 1 && members[0]![4] === '3') break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        // GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS
        assert.equal(members.length, 1, `--members: ${JSON.stringify(members)}`);
        const [, consumerId, host, clientId, count] = members[0]!;
        assert.deepEqual([host, clientId, count], ['/127.0.0.1', 'tools-active-client', '3']);
        assert.match(consumerId!, /^tools-active-client-[0-9a-f-]{36}$/);

        let offsets: string[][] = [];
        for (let i = 0; i < 60; i++) {
          offsets = rows((await tool(CONSUMER_GROUP_COMMAND, [...bs, '--describe', '--group', group])).stdout);
          const consumed = offsets.reduce((n, r) => n + (r[3] === '-' ? 0 : Number(r[3])), 0);
          if (offsets.length === 3 && consumed === 6) break;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID: each partition owned by the one member, read to its end.
        assert.deepEqual(
          offsets.map((r) => [r[2], r[3] === r[4], r[5], r[6], r[7], r[8]]).sort(),
          ['0', '1', '2'].map((p) => [p, true, '0', consumerId, host, clientId]),
          JSON.stringify(offsets),
        );
        assert.equal(
          offsets.reduce((n, r) => n + Number(r[4]), 0),
          6,
        );

        const reset = await runKafkaTool(
          CONSUMER_GROUP_COMMAND,
          [...bs, '--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute'],
          { timeoutMs: TOOL_TIMEOUT_MS },
        );
        assert.match(
          reset.stdout + reset.stderr,
          new RegExp(
            `Assignments can only be reset if the group '${group}' is inactive, but the current state is Stable\\.`,
          ),
        );
        const del = await runKafkaTool(CONSUMER_GROUP_COMMAND, [...bs, '--delete', '--group', group], {
          timeoutMs: TOOL_TIMEOUT_MS,
        });
        assert.match(
          del.stdout + del.stderr,
          new RegExp(
            `Group '${group}' could not be deleted due to: org\\.apache\\.kafka\\.common\\.errors\\.GroupNotEmptyException`,
          ),
        );
        const after = (await committed(group, topic, [0, 1, 2])).reduce((a, b) => a + b, 0);
        assert.ok(after <= 6, `committed ${after}`);

        const done = await running;
        assert.equal(done.timedOut, false, describeToolRun(CONSOLE_CONSUMER, consumerArgs, done));
        assert.deepEqual(
          lines(done.stdout).sort(),
          Array.from({ length: 6 }, (_, i) => `line-${i}`),
        );
      }),
  );
});
