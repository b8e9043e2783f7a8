/**
 * The topic config max.decompressed.message.bytes on the wire (Kafka 4.4: INT, default 2147483639,
 * between 1 and 2147483639, broker synonym of the same name): described with its default and
 * source, set at CreateTopics, altered incrementally, invalid values refused with INVALID_CONFIG,
 * and honoured by produce from the next batch on (each record of a compressed batch; uncompressed
 * batches are not bounded by it, as in Kafka).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey, ErrorCode } from '../../../src/protocol';
import { buildBatch } from '../../../src/client/batch';
import type { CompressionCodecId } from '../../../src/protocol/record-batch/compression';
import { WireClient } from '../../helpers/wire-client';
import { removeDir, startTestBroker, type TestBroker } from '../../helpers/in-process-broker';

const TOPIC = 2;
const NAME = 'max.decompressed.message.bytes';
/** DescribeConfigs config sources and types (Kafka's DescribeConfigsResponse). */
const DYNAMIC_TOPIC_CONFIG = 1;
const DEFAULT_CONFIG = 5;
const INT = 3;

async function create(client: WireClient, name: string, configs: Record<string, string>) {
  const res = await client.request(ApiKey.CreateTopics, 5, {
    topics: [
      {
        name,
        numPartitions: 1,
        replicationFactor: 1,
        assignments: [],
        configs: Object.entries(configs).map(([k, v]) => ({ name: k, value: v })),
      },
    ],
    timeoutMs: 5000,
    validateOnly: false,
  });
  return res.body.topics[0];
}

async function describeSetting(client: WireClient, topic: string) {
  const res = await client.request(ApiKey.DescribeConfigs, 3, {
    resources: [{ resourceType: TOPIC, resourceName: topic, configurationKeys: [NAME] }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  const result = res.body.results[0];
  assert.equal(result.errorCode, ErrorCode.NONE);
  assert.equal(result.configs.length, 1);
  return result.configs[0];
}

async function alter(client: WireClient, topic: string, value: string | null, validateOnly = false) {
  const res = await client.request(ApiKey.IncrementalAlterConfigs, 0, {
    resources: [
      {
        resourceType: TOPIC,
        resourceName: topic,
        configs: [{ name: NAME, configOperation: value === null ? 1 : 0, value }],
      },
    ],
    validateOnly,
  });
  return res.body.responses[0];
}

async function produce(client: WireClient, topic: string, records: Buffer) {
  const res = await client.request(ApiKey.Produce, 9, {
    transactionalId: null,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  });
  return res.body.responses[0].partitionResponses[0];
}

/** Three records, the middle one with a 2000-byte value (its body is a little over 2000 bytes). */
function batchWithLargeRecord(codec: CompressionCodecId): Buffer {
  const now = Date.now();
  return buildBatch(
    ['a', 'x'.repeat(2000), 'c'].map((v, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(v), timestamp: now })),
    { compression: codec },
  );
}

describe('max.decompressed.message.bytes', () => {
  let broker: TestBroker;
  let client: WireClient;

  before(async () => {
    broker = await startTestBroker({});
    client = await WireClient.connect(broker.port);
  });

  after(async () => {
    client.close();
    await broker.stop();
    removeDir(broker.dataDir);
  });

  test("is described with Kafka's default, type and broker synonym", async () => {
    assert.equal((await create(client, 'mdmb-default', {})).errorCode, ErrorCode.NONE);
    const config = await describeSetting(client, 'mdmb-default');
    assert.equal(config.value, '2147483639');
    assert.equal(config.configSource, DEFAULT_CONFIG);
    assert.equal(config.configType, INT);
    assert.equal(config.readOnly, false);
    assert.deepEqual(
      config.synonyms.map((s: { name: string; value: string; source: number }) => [s.name, s.value, s.source]),
      [[NAME, '2147483639', DEFAULT_CONFIG]],
    );
  });

  test('is set at CreateTopics and altered incrementally; invalid values get INVALID_CONFIG', async () => {
    assert.equal((await create(client, 'mdmb-set', { [NAME]: '1048576' })).errorCode, ErrorCode.NONE);
    let config = await describeSetting(client, 'mdmb-set');
    assert.deepEqual([config.value, config.configSource], ['1048576', DYNAMIC_TOPIC_CONFIG]);

    for (const [value, reason] of [
      ['0', /Value must be at least 1/],
      ['2147483640', /Value must be no more than 2147483639/],
      ['2147483648', /max\.decompressed\.message\.bytes/],
      ['big', /max\.decompressed\.message\.bytes/],
    ] as const) {
      const refused = await alter(client, 'mdmb-set', value);
      assert.equal(refused.errorCode, ErrorCode.INVALID_CONFIG, `alter to ${value}`);
      assert.match(refused.errorMessage, reason, `alter to ${value}`);
      const atCreate = await create(client, `mdmb-bad-${value}`, { [NAME]: value });
      assert.equal(atCreate.errorCode, ErrorCode.INVALID_CONFIG, `create with ${value}`);
    }
    config = await describeSetting(client, 'mdmb-set');
    assert.equal(config.value, '1048576', 'refused values leave the setting as it was');

    assert.equal((await alter(client, 'mdmb-set', '1', true)).errorCode, ErrorCode.NONE, 'validateOnly');
    assert.equal((await describeSetting(client, 'mdmb-set')).value, '1048576', 'validateOnly changes nothing');
    assert.equal((await alter(client, 'mdmb-set', '2147483639')).errorCode, ErrorCode.NONE);
    assert.equal((await describeSetting(client, 'mdmb-set')).value, '2147483639');
    assert.equal((await alter(client, 'mdmb-set', null)).errorCode, ErrorCode.NONE, 'delete');
    config = await describeSetting(client, 'mdmb-set');
    assert.deepEqual([config.value, config.configSource], ['2147483639', DEFAULT_CONFIG]);
  });

  test('is honoured by produce once altered: a compressed batch with a record over it is refused with its index', async () => {
    assert.equal((await create(client, 'mdmb-produce', {})).errorCode, ErrorCode.NONE);
    const first = await produce(client, 'mdmb-produce', batchWithLargeRecord(1));
    assert.equal(first.errorCode, ErrorCode.NONE, 'accepted under the default');
    assert.equal((await alter(client, 'mdmb-produce', '1000')).errorCode, ErrorCode.NONE);
    for (const codec of [1, 2, 3, 4] as const) {
      const refused = await produce(client, 'mdmb-produce', batchWithLargeRecord(codec));
      const message = /^Invalid record size: 20\d\d exceeds the configured maximum record size of 1000\.$/;
      assert.equal(refused.errorCode, ErrorCode.INVALID_RECORD, `codec ${codec}: ${refused.errorMessage}`);
      assert.match(refused.errorMessage, message);
      assert.deepEqual(
        refused.recordErrors.map((e: { batchIndex: number }) => e.batchIndex),
        [1],
      );
    }
    const plain = await produce(client, 'mdmb-produce', batchWithLargeRecord(0));
    assert.equal(plain.errorCode, ErrorCode.NONE, 'an uncompressed batch is not bounded by it (as in Kafka)');
    assert.equal(plain.baseOffset, 3, 'nothing was stored for the refused batches');
  });
});
