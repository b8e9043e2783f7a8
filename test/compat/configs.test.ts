/**
 * Topic configs through a real Skiff process, with real admin clients:
 *
 * - CreateTopics with configs (kafkajs `createTopics` configEntries, confluent-kafka AdminClient),
 *   read back with DescribeConfigs by kafkajs, confluent-kafka and kafka-python (with synonyms):
 *   overrides are DYNAMIC_TOPIC_CONFIG, everything else DEFAULT_CONFIG with Kafka's defaults (the
 *   broker runs with no config of its own).
 * - AlterConfigs (kafkajs `alterConfigs`, confluent-kafka 1.7 `alter_configs`, kafka-python
 *   `alter_configs`; none of the three clients has IncrementalAlterConfigs): the set given
 *   replaces the topic's overrides, as in Kafka. IncrementalAlterConfigs (SET, DELETE) is checked
 *   over a raw socket, since no client here sends it.
 * - An invalid value (retention.ms=abc) gets INVALID_CONFIG from every client and changes nothing.
 * - max.message.bytes is honoured: at 1000, a 5000-byte record gets MESSAGE_TOO_LARGE
 *   (confluent-kafka, kafka-python, kafkajs) while a small one is accepted.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigResourceTypes, Kafka, logLevel, type Admin, type ConfigEntries } from 'kafkajs';
import { ApiKey } from '../../src/protocol';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { WireClient } from '../helpers/wire-client';
import { withBrokerLog } from './clients';
import { pythonOp, type OpError } from './ops';

const TIMEOUT_MS = 60_000;
const DEFAULT_CONFIG = 5;

/** The overrides every created topic gets. */
const OVERRIDES: Record<string, string> = {
  'retention.ms': '3600000',
  'segment.bytes': '1048576',
  'cleanup.policy': 'compact',
  'max.message.bytes': '200000',
};
/** Kafka 3.8's defaults for the same names, and a few others that are never overridden here. */
const KAFKA_DEFAULTS: Record<string, string> = {
  'retention.ms': '604800000',
  'segment.bytes': '1073741824',
  'cleanup.policy': 'delete',
  'max.message.bytes': '1048588',
  'retention.bytes': '-1',
  'min.insync.replicas': '1',
  'compression.type': 'producer',
  'message.timestamp.type': 'CreateTime',
};

type Described = Record<string, { value: string | null; source: string }>;

const SOURCE_NAMES: Record<number, string> = {
  1: 'DYNAMIC_TOPIC_CONFIG',
  4: 'STATIC_BROKER_CONFIG',
  5: 'DEFAULT_CONFIG',
};

/** Checks `described` against the expected overrides (DYNAMIC_TOPIC_CONFIG) and defaults (DEFAULT_CONFIG). */
function assertConfigs(described: Described, overrides: Record<string, string>, what: string): void {
  const expected: Described = {};
  const actual: Described = {};
  for (const name of Object.keys(KAFKA_DEFAULTS)) {
    expected[name] =
      name in overrides
        ? { value: overrides[name]!, source: 'DYNAMIC_TOPIC_CONFIG' }
        : { value: KAFKA_DEFAULTS[name]!, source: 'DEFAULT_CONFIG' };
    const d = described[name];
    actual[name] = d === undefined ? { value: '(missing)', source: '(missing)' } : { value: d.value, source: d.source };
  }
  assert.deepEqual(actual, expected, `${what}: value and source per config`);
}

async function describeWithKafkajs(admin: Admin, topic: string): Promise<Described> {
  const res = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    includeSynonyms: false,
  });
  assert.equal(res.resources.length, 1);
  assert.equal(res.resources[0]!.errorCode, 0, `kafkajs describeConfigs ${topic}: ${res.resources[0]!.errorMessage}`);
  const out: Described = {};
  for (const e of res.resources[0]!.configEntries as ConfigEntries[]) {
    out[e.configName] = { value: e.configValue, source: SOURCE_NAMES[e.configSource] ?? String(e.configSource) };
    assert.equal(
      e.isDefault,
      e.configSource === DEFAULT_CONFIG,
      `kafkajs ${e.configName}: isDefault ${e.isDefault} with source ${e.configSource}`,
    );
  }
  return out;
}

async function describeWithConfluent(bootstrap: string, topic: string): Promise<Described> {
  const r = await pythonOp<{ error: OpError | null; configs: Described }>('confluent-kafka', {
    op: 'describe-configs',
    bootstrap,
    topic,
  });
  assert.equal(r.error, null, `confluent-kafka describe_configs ${topic}`);
  return r.configs;
}

async function describeWithKafkaPython(
  bootstrap: string,
  topic: string,
  overrides: Record<string, string>,
): Promise<Described> {
  const r = await pythonOp<{
    error: OpError | null;
    configs: Record<string, { value: string; source: string; synonyms: Array<[string, string, string]> }>;
  }>('kafka-python', { op: 'describe-configs', bootstrap, topic });
  assert.equal(r.error, null, `kafka-python describe_configs ${topic}`);
  // With include_synonyms, an override lists itself first (DYNAMIC_TOPIC_CONFIG), then the broker default.
  for (const [name, value] of Object.entries(overrides)) {
    const synonyms = r.configs[name]?.synonyms ?? [];
    assert.deepEqual(
      synonyms[0],
      [name, value, 'DYNAMIC_TOPIC_CONFIG'],
      `kafka-python ${name} synonyms: ${JSON.stringify(synonyms)}`,
    );
    assert.ok(
      synonyms.length >= 2 && synonyms[1]![2] === 'DEFAULT_CONFIG',
      `kafka-python ${name}: the broker default follows the override: ${JSON.stringify(synonyms)}`,
    );
  }
  return r.configs;
}

async function alterWithKafkajs(admin: Admin, topic: string, configs: Record<string, string>): Promise<void> {
  await admin.alterConfigs({
    validateOnly: false,
    resources: [
      {
        type: ConfigResourceTypes.TOPIC,
        name: topic,
        configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
      },
    ],
  });
}

describe('topic configs: CreateTopics configs, DescribeConfigs sources, AlterConfigs, INVALID_CONFIG, max.message.bytes', () => {
  let broker: BrokerProcess;
  let bootstrap: string;
  let kafka: Kafka;
  let admin: Admin;

  before(async () => {
    broker = await startBrokerProcess();
    bootstrap = `127.0.0.1:${broker.port}`;
    kafka = new Kafka({
      clientId: 'skiff-compat-configs',
      brokers: [bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 2 },
    });
    admin = kafka.admin();
    await admin.connect();
  });
  after(async () => {
    await admin?.disconnect();
    await broker?.stop();
  });

  test(
    'configs set at creation (kafkajs, confluent-kafka) read back by kafkajs, confluent-kafka and kafka-python with their sources',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const viaKafkajs = 'cfg-created-by-kafkajs';
        const created = await admin.createTopics({
          topics: [
            {
              topic: viaKafkajs,
              numPartitions: 1,
              replicationFactor: 1,
              configEntries: Object.entries(OVERRIDES).map(([name, value]) => ({ name, value })),
            },
          ],
          waitForLeaders: true,
        });
        assert.equal(created, true);
        assertConfigs(await describeWithKafkajs(admin, viaKafkajs), OVERRIDES, 'kafkajs describeConfigs');
        assertConfigs(
          await describeWithConfluent(bootstrap, viaKafkajs),
          OVERRIDES,
          'confluent-kafka describe_configs',
        );
        assertConfigs(
          await describeWithKafkaPython(bootstrap, viaKafkajs, OVERRIDES),
          OVERRIDES,
          'kafka-python describe_configs',
        );

        const viaConfluent = 'cfg-created-by-confluent';
        const r = await pythonOp<{ error: OpError | null }>('confluent-kafka', {
          op: 'create-topic',
          bootstrap,
          topic: viaConfluent,
          partitions: 1,
          configs: OVERRIDES,
        });
        assert.equal(r.error, null, 'confluent-kafka create_topics with configs');
        assertConfigs(
          await describeWithConfluent(bootstrap, viaConfluent),
          OVERRIDES,
          'confluent-kafka describe_configs (created by confluent-kafka)',
        );
        assertConfigs(
          await describeWithKafkajs(admin, viaConfluent),
          OVERRIDES,
          'kafkajs describeConfigs (created by confluent-kafka)',
        );
      }),
  );

  test(
    'AlterConfigs (kafkajs, confluent-kafka, kafka-python) replaces the overrides; the change reads back',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'cfg-altered';
        await admin.createTopics({
          topics: [
            {
              topic,
              numPartitions: 1,
              replicationFactor: 1,
              configEntries: Object.entries(OVERRIDES).map(([name, value]) => ({ name, value })),
            },
          ],
          waitForLeaders: true,
        });

        // kafkajs: the same set with retention.ms changed.
        const changed = { ...OVERRIDES, 'retention.ms': '7200000' };
        await alterWithKafkajs(admin, topic, changed);
        assertConfigs(
          await describeWithKafkajs(admin, topic),
          changed,
          'after kafkajs alterConfigs (retention.ms changed)',
        );
        assertConfigs(
          await describeWithConfluent(bootstrap, topic),
          changed,
          'confluent-kafka after kafkajs alterConfigs',
        );

        // kafkajs: AlterConfigs with one entry leaves only that override; the rest fall back to defaults.
        await alterWithKafkajs(admin, topic, { 'retention.ms': '1800000' });
        assertConfigs(
          await describeWithKafkajs(admin, topic),
          { 'retention.ms': '1800000' },
          'after kafkajs alterConfigs with only retention.ms',
        );

        // confluent-kafka 1.7 alter_configs (AlterConfigs).
        const confluentSet = { 'segment.bytes': '2097152', 'cleanup.policy': 'compact,delete' };
        let r = await pythonOp<{ error: OpError | null }>('confluent-kafka', {
          op: 'alter-configs',
          bootstrap,
          topic,
          configs: confluentSet,
        });
        assert.equal(r.error, null, 'confluent-kafka alter_configs');
        const afterConfluent = await describeWithConfluent(bootstrap, topic);
        assert.deepEqual(afterConfluent['segment.bytes'], {
          ...afterConfluent['segment.bytes'],
          value: '2097152',
          source: 'DYNAMIC_TOPIC_CONFIG',
        });
        assert.deepEqual(afterConfluent['cleanup.policy'], {
          ...afterConfluent['cleanup.policy'],
          value: 'compact,delete',
          source: 'DYNAMIC_TOPIC_CONFIG',
        });
        assert.deepEqual(
          afterConfluent['retention.ms'],
          { ...afterConfluent['retention.ms'], value: KAFKA_DEFAULTS['retention.ms'], source: 'DEFAULT_CONFIG' },
          'retention.ms is no longer overridden',
        );

        // kafka-python alter_configs (AlterConfigs).
        r = await pythonOp<{ error: OpError | null }>('kafka-python', {
          op: 'alter-configs',
          bootstrap,
          topic,
          configs: { 'max.message.bytes': '300000' },
        });
        assert.equal(r.error, null, 'kafka-python alter_configs');
        assertConfigs(
          await describeWithKafkaPython(bootstrap, topic, { 'max.message.bytes': '300000' }),
          { 'max.message.bytes': '300000' },
          'after kafka-python alter_configs',
        );
      }),
  );

  test(
    'IncrementalAlterConfigs (raw socket: none of the clients sends it) sets and deletes single overrides, keeping the rest',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'cfg-incremental';
        await admin.createTopics({
          topics: [
            {
              topic,
              numPartitions: 1,
              replicationFactor: 1,
              configEntries: Object.entries(OVERRIDES).map(([name, value]) => ({ name, value })),
            },
          ],
          waitForLeaders: true,
        });
        const wire = await WireClient.connect(broker.port);
        try {
          const res = await wire.request(ApiKey.IncrementalAlterConfigs, 0, {
            resources: [
              {
                resourceType: 2,
                resourceName: topic,
                configs: [
                  { name: 'retention.ms', configOperation: 0, value: '5400000' },
                  { name: 'cleanup.policy', configOperation: 1, value: null },
                ],
              },
            ],
            validateOnly: false,
          });
          assert.deepEqual(
            res.body.responses.map((r: { errorCode: number; resourceName: string }) => [r.resourceName, r.errorCode]),
            [[topic, 0]],
          );
        } finally {
          wire.close();
        }
        const expected = { ...OVERRIDES, 'retention.ms': '5400000' };
        delete (expected as Record<string, string>)['cleanup.policy'];
        assertConfigs(
          await describeWithKafkajs(admin, topic),
          expected,
          'after IncrementalAlterConfigs SET retention.ms, DELETE cleanup.policy',
        );
      }),
  );

  test(
    'retention.ms=abc gets INVALID_CONFIG from kafkajs alterConfigs, confluent-kafka create_topics and kafka-python alter_configs, and changes nothing',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'cfg-invalid';
        await admin.createTopics({
          topics: [
            {
              topic,
              numPartitions: 1,
              replicationFactor: 1,
              configEntries: [{ name: 'retention.ms', value: '3600000' }],
            },
          ],
          waitForLeaders: true,
        });

        await assert.rejects(
          alterWithKafkajs(admin, topic, { 'retention.ms': 'abc' }),
          (e: Error & { type?: string }) => {
            assert.equal(
              e.type,
              'INVALID_CONFIG',
              `kafkajs alterConfigs retention.ms=abc: ${e.name} ${e.type} ${e.message}`,
            );
            return true;
          },
        );
        const kp = await pythonOp<{ error: OpError | null }>('kafka-python', {
          op: 'alter-configs',
          bootstrap,
          topic,
          configs: { 'retention.ms': 'abc' },
        });
        assert.equal(kp.error?.code, 40, `kafka-python alter_configs retention.ms=abc: ${JSON.stringify(kp.error)}`);
        assert.equal(kp.error?.name, 'InvalidConfigurationError');
        const described = await describeWithKafkajs(admin, topic);
        assert.deepEqual(
          described['retention.ms'],
          { value: '3600000', source: 'DYNAMIC_TOPIC_CONFIG' },
          'the refused alters changed nothing',
        );

        const refused = 'cfg-invalid-at-create';
        const cc = await pythonOp<{ error: OpError | null }>('confluent-kafka', {
          op: 'create-topic',
          bootstrap,
          topic: refused,
          partitions: 1,
          configs: { 'retention.ms': 'abc' },
        });
        assert.equal(
          cc.error?.name,
          'INVALID_CONFIG',
          `confluent-kafka create_topics retention.ms=abc: ${JSON.stringify(cc.error)}`,
        );
        assert.equal(cc.error?.code, 40);
        const topics = await admin.listTopics();
        assert.ok(!topics.includes(refused), `${refused} was created despite INVALID_CONFIG`);
      }),
  );

  test(
    'max.message.bytes=1000: a 5000-byte record gets MESSAGE_TOO_LARGE (confluent-kafka, kafka-python, kafkajs), a 100-byte one is accepted',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'cfg-max-message-bytes';
        await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
        await alterWithKafkajs(admin, topic, { 'max.message.bytes': '1000' });
        assert.deepEqual((await describeWithKafkajs(admin, topic))['max.message.bytes'], {
          value: '1000',
          source: 'DYNAMIC_TOPIC_CONFIG',
        });

        type Result = { error: OpError | null; offset: number | null };
        const confluent = await pythonOp<{ results: Result[] }>('confluent-kafka', {
          op: 'produce',
          bootstrap,
          topic,
          partition: 0,
          one_by_one: true,
          records: [
            { key: 'big', value_size: 5000 },
            { key: 'small', value_size: 100 },
          ],
        });
        assert.equal(
          confluent.results[0]!.error?.name,
          'MSG_SIZE_TOO_LARGE',
          `confluent-kafka 5000 bytes: ${JSON.stringify(confluent.results[0])}`,
        );
        assert.equal(confluent.results[0]!.error?.code, 10);
        assert.deepEqual(
          confluent.results[1],
          { ...confluent.results[1], error: null, offset: 0 },
          'confluent-kafka 100 bytes',
        );

        const kafkaPython = await pythonOp<{ results: Result[] }>('kafka-python', {
          op: 'produce',
          bootstrap,
          topic,
          partition: 0,
          records: [
            { key: 'big', value_size: 5000 },
            { key: 'small', value_size: 100 },
          ],
        });
        assert.equal(
          kafkaPython.results[0]!.error?.name,
          'MessageSizeTooLargeError',
          `kafka-python 5000 bytes: ${JSON.stringify(kafkaPython.results[0])}`,
        );
        assert.equal(kafkaPython.results[0]!.error?.code, 10);
        assert.deepEqual(
          kafkaPython.results[1],
          { ...kafkaPython.results[1], error: null, offset: 1 },
          'kafka-python 100 bytes',
        );

        const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
        await producer.connect();
        try {
          await assert.rejects(
            producer.send({
              topic,
              acks: -1,
              messages: [{ key: 'big', value: Buffer.alloc(5000, 0x61), partition: 0 }],
            }),
            (e: Error & { type?: string; cause?: { type?: string } }) => {
              const type = e.type ?? e.cause?.type;
              assert.equal(type, 'MESSAGE_TOO_LARGE', `kafkajs 5000 bytes: ${e.name} ${type} ${e.message}`);
              return true;
            },
          );
          const ok = await producer.send({
            topic,
            acks: -1,
            messages: [{ key: 'small', value: Buffer.alloc(100, 0x61), partition: 0 }],
          });
          assert.deepEqual(
            ok.map((m) => [m.errorCode, Number(m.baseOffset)]),
            [[0, 2]],
            'kafkajs 100 bytes',
          );
        } finally {
          await producer.disconnect();
        }
      }),
  );
});
