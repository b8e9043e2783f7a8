/**
 * Issue 3 broker features on the wire: topic configs (create, describe with sources, incremental
 * and legacy alter, invalid values), LogAppendTime, CreateTime bounds, DeleteRecords, retention
 * moving the log start offset, ListOffsets by time and max timestamp, and connection limits.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey, ErrorCode } from '../../../src/protocol';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { decodeRecordBatches } from '../../../src/protocol/record-batch/decode';
import { decodeBatches } from '../../../src/client/batch';
import { WireClient } from '../../helpers/wire-client';
import { removeDir, startTestBroker, type TestBroker } from '../../helpers/in-process-broker';
import { fetchRequestBody } from '../../helpers/fetch-request';

const TOPIC = 2;
const BROKER = 4;

/** Records stamped now unless given (timestamp 0 would be older than any retention.ms). */
function batchAt(values: string[], timestamps?: number[]): Buffer {
  const now = Date.now();
  return buildRecordBatch(
    values.map((v, i) => ({ key: null, value: Buffer.from(v), headers: [], timestamp: timestamps?.[i] ?? now })),
  );
}

function produceBody(topic: string, records: Buffer, partition = 0) {
  return {
    transactionalId: null,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  };
}

async function produce(client: WireClient, topic: string, records: Buffer) {
  const res = await client.request(ApiKey.Produce, 7, produceBody(topic, records));
  return res.body.responses[0].partitionResponses[0];
}

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

async function describeTopic(client: WireClient, name: string, keys: string[] | null = null) {
  const res = await client.request(ApiKey.DescribeConfigs, 3, {
    resources: [{ resourceType: TOPIC, resourceName: name, configurationKeys: keys }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  return res.body.results[0];
}

async function listOffset(client: WireClient, topic: string, timestamp: number) {
  const res = await client.request(ApiKey.ListOffsets, 7, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }],
  });
  return res.body.topics[0].partitions[0];
}

describe('topic configs and log features', () => {
  let broker: TestBroker;
  let client: WireClient;

  before(async () => {
    broker = await startTestBroker({ 'log.retention.check.interval.ms': '200', 'log.retention.ms': '604800000' });
    client = await WireClient.connect(broker.port);
  });

  after(async () => {
    client.close();
    await broker.stop();
    removeDir(broker.dataDir);
  });

  test('configs set at CreateTopics are described with their sources, and altered incrementally', async () => {
    const created = await create(client, 'configured', { 'retention.ms': '3600000', 'cleanup.policy': 'delete' });
    assert.equal(created.errorCode, ErrorCode.NONE);
    let described = await describeTopic(client, 'configured');
    assert.equal(described.errorCode, ErrorCode.NONE);
    const byName = new Map(described.configs.map((c: any) => [c.name, c]));
    assert.equal((byName.get('retention.ms') as any).value, '3600000');
    assert.equal((byName.get('retention.ms') as any).configSource, 1, 'DYNAMIC_TOPIC_CONFIG');
    assert.equal((byName.get('segment.bytes') as any).value, '1073741824');
    assert.equal((byName.get('segment.bytes') as any).configSource, 5, 'DEFAULT_CONFIG');
    assert.equal((byName.get('retention.bytes') as any).configSource, 5);
    assert.equal((byName.get('write.caching') as any).value, 'false');

    const altered = await client.request(ApiKey.IncrementalAlterConfigs, 0, {
      resources: [
        {
          resourceType: TOPIC,
          resourceName: 'configured',
          configs: [
            { name: 'retention.ms', configOperation: 1, value: null },
            { name: 'max.message.bytes', configOperation: 0, value: '2000' },
            { name: 'cleanup.policy', configOperation: 2, value: 'compact' },
          ],
        },
      ],
      validateOnly: false,
    });
    assert.equal(altered.body.responses[0].errorCode, ErrorCode.NONE);
    described = await describeTopic(client, 'configured', ['retention.ms', 'max.message.bytes', 'cleanup.policy']);
    assert.deepEqual(
      described.configs.map((c: any) => [c.name, c.value, c.configSource]),
      [
        ['cleanup.policy', 'delete,compact', 1],
        ['max.message.bytes', '2000', 1],
        ['retention.ms', '604800000', 4],
      ],
    );
    const big = await produce(client, 'configured', batchAt(['x'.repeat(5000)]));
    assert.equal(big.errorCode, ErrorCode.MESSAGE_TOO_LARGE, 'max.message.bytes is honoured from then on');
  });

  test('invalid values get INVALID_CONFIG with a reason; unknown topics UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const bad = await create(client, 'bad-config', { 'retention.ms': 'abc' });
    assert.equal(bad.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(bad.errorMessage, /retention\.ms/);
    await create(client, 'alter-me', {});
    const res = await client.request(ApiKey.AlterConfigs, 0, {
      resources: [
        { resourceType: TOPIC, resourceName: 'alter-me', configs: [{ name: 'segment.bytes', value: '-5' }] },
        { resourceType: TOPIC, resourceName: 'ghost', configs: [{ name: 'segment.bytes', value: '100000' }] },
        { resourceType: TOPIC, resourceName: 'alter-me2', configs: [{ name: 'no.such.config', value: '1' }] },
      ],
      validateOnly: false,
    });
    assert.deepEqual(
      res.body.responses.map((r: any) => r.errorCode),
      [ErrorCode.INVALID_CONFIG, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    );
    const brokerDescribe = await client.request(ApiKey.DescribeConfigs, 3, {
      resources: [
        {
          resourceType: BROKER,
          resourceName: '0',
          configurationKeys: ['log.retention.check.interval.ms', 'num.partitions'],
        },
      ],
      includeSynonyms: false,
      includeDocumentation: true,
    });
    assert.deepEqual(
      brokerDescribe.body.results[0].configs.map((c: any) => [c.name, c.value, c.configSource]),
      [
        ['num.partitions', '1', 5],
        ['log.retention.check.interval.ms', '200', 4],
      ],
    );
  });

  test('LogAppendTime topics get the broker time, and the response carries it', async () => {
    await create(client, 'append-time', { 'message.timestamp.type': 'LogAppendTime' });
    const before = Date.now();
    const res = await produce(client, 'append-time', batchAt(['a', 'b'], [1000, 2000]));
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.ok(
      res.logAppendTimeMs >= before && res.logAppendTimeMs <= Date.now(),
      `logAppendTimeMs ${res.logAppendTimeMs}`,
    );
    const fetched = await client.request(ApiKey.Fetch, 11, fetchRequestBody({ topic: 'append-time' }));
    const [batch] = decodeRecordBatches(fetched.body.responses[0].partitions[0].records);
    assert.equal(batch!.attributes & 0x08, 0x08, 'timestamp type bit set');
    assert.equal(batch!.maxTimestamp, res.logAppendTimeMs);
  });

  test('CreateTime outside message.timestamp.before/after.max.ms gets INVALID_TIMESTAMP', async () => {
    await create(client, 'bounded', {
      'message.timestamp.before.max.ms': '60000',
      'message.timestamp.after.max.ms': '60000',
    });
    const now = Date.now();
    assert.equal(
      (await produce(client, 'bounded', batchAt(['old'], [now - 3_600_000]))).errorCode,
      ErrorCode.INVALID_TIMESTAMP,
    );
    assert.equal(
      (await produce(client, 'bounded', batchAt(['future'], [now + 3_600_000]))).errorCode,
      ErrorCode.INVALID_TIMESTAMP,
    );
    assert.equal((await produce(client, 'bounded', batchAt(['now'], [now]))).errorCode, ErrorCode.NONE);
  });

  test('ListOffsets by timestamp finds the first record at or after it; -3 finds the max timestamp', async () => {
    await create(client, 'timed', { 'message.timestamp.before.max.ms': '9223372036854775807' });
    const t0 = Date.now() - 100_000;
    await produce(client, 'timed', batchAt(['a', 'b', 'c'], [t0, t0 + 1000, t0 + 2000]));
    await produce(client, 'timed', batchAt(['d', 'e'], [t0 + 3000, t0 + 50_000]));
    await produce(client, 'timed', batchAt(['f'], [t0 + 4000]));
    assert.equal((await listOffset(client, 'timed', t0 - 10)).offset, 0);
    assert.equal((await listOffset(client, 'timed', t0 + 1)).offset, 1);
    assert.equal((await listOffset(client, 'timed', t0 + 2000)).offset, 2);
    assert.equal((await listOffset(client, 'timed', t0 + 2500)).offset, 3);
    const mid = await listOffset(client, 'timed', t0 + 3500);
    assert.deepEqual([mid.offset, mid.timestamp], [4, t0 + 50_000]);
    assert.equal((await listOffset(client, 'timed', t0 + 60_000)).offset, -1, 'none after: -1');
    const max = await listOffset(client, 'timed', -3);
    assert.deepEqual([max.offset, max.timestamp], [4, t0 + 50_000]);
  });

  test('min.insync.replicas above the ISR refuses acks=all with NOT_ENOUGH_REPLICAS; acks=1 still appends', async () => {
    await create(client, 'min-isr', { 'min.insync.replicas': '2' });
    assert.equal((await produce(client, 'min-isr', batchAt(['x']))).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
    const res = await client.request(ApiKey.Produce, 7, { ...produceBody('min-isr', batchAt(['y'])), acks: 1 });
    assert.equal(res.body.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    const altered = await client.request(ApiKey.IncrementalAlterConfigs, 0, {
      resources: [
        {
          resourceType: TOPIC,
          resourceName: 'min-isr',
          configs: [{ name: 'min.insync.replicas', configOperation: 0, value: '1' }],
        },
      ],
      validateOnly: false,
    });
    assert.equal(altered.body.responses[0].errorCode, ErrorCode.NONE);
    assert.equal((await produce(client, 'min-isr', batchAt(['z']))).baseOffset, 1);
  });

  test('write.caching and flush.messages can be changed on a live topic', async () => {
    await create(client, 'caching', { 'write.caching': 'true', 'flush.messages': '1' });
    for (let i = 0; i < 5; i++) assert.equal((await produce(client, 'caching', batchAt([`c${i}`]))).baseOffset, i);
    const altered = await client.request(ApiKey.IncrementalAlterConfigs, 1, {
      resources: [
        {
          resourceType: TOPIC,
          resourceName: 'caching',
          configs: [
            { name: 'write.caching', configOperation: 0, value: 'false' },
            { name: 'flush.ms', configOperation: 0, value: '50' },
          ],
        },
      ],
      validateOnly: false,
    });
    assert.equal(altered.body.responses[0].errorCode, ErrorCode.NONE);
    assert.equal((await produce(client, 'caching', batchAt(['after']))).baseOffset, 5);
    assert.equal((await listOffset(client, 'caching', -1)).offset, 6);
  });

  test('compacted topics refuse records without a key (INVALID_RECORD); keyed ones are appended', async () => {
    await create(client, 'compacted', { 'cleanup.policy': 'compact' });
    assert.equal((await produce(client, 'compacted', batchAt(['no key']))).errorCode, ErrorCode.INVALID_RECORD);
    const keyed = buildRecordBatch([
      { key: Buffer.from('k'), value: Buffer.from('v'), headers: [], timestamp: Date.now() },
    ]);
    assert.equal((await produce(client, 'compacted', keyed)).errorCode, ErrorCode.NONE);
  });

  test('compression.type rewrites batches of another codec into the topic codec (as Kafka does); `producer` keeps them', async () => {
    assert.equal(
      (await create(client, 'zstd-topic', { 'compression.type': 'zstd', 'compression.zstd.level': '9' })).errorCode,
      ErrorCode.NONE,
    );
    assert.equal(
      (await create(client, 'brotli-topic', { 'compression.type': 'brotli' })).errorCode,
      ErrorCode.INVALID_CONFIG,
    );
    const now = Date.now();
    const plain = buildRecordBatch(
      ['a', 'b', 'c'].map((v, i) => ({
        key: Buffer.from(`k${i}`),
        value: Buffer.from(v),
        headers: [{ key: 'h', value: Buffer.from(v) }],
        timestamp: now + 2 - i,
      })),
    );
    assert.equal((await produce(client, 'zstd-topic', plain)).baseOffset, 0);
    const fetched = await client.request(ApiKey.Fetch, 11, fetchRequestBody({ topic: 'zstd-topic' }));
    const stored: Buffer = fetched.body.responses[0].partitions[0].records;
    assert.equal(stored.readInt16BE(21) & 0x07, 4, 'stored as zstd');
    const [batch] = decodeBatches(stored);
    assert.equal(batch!.maxTimestamp, now + 2, 'maxTimestamp of the rewritten batch');
    assert.deepEqual(
      batch!.records.map((r) => [
        r.offset,
        r.key!.toString(),
        r.value!.toString(),
        r.headers[0]!.value!.toString(),
        r.timestamp,
      ]),
      [
        [0, 'k0', 'a', 'a', now + 2],
        [1, 'k1', 'b', 'b', now + 1],
        [2, 'k2', 'c', 'c', now],
      ],
    );
  });

  test('a topic name colliding with another through . and _ is refused', async () => {
    assert.equal((await create(client, 'a.b', {})).errorCode, ErrorCode.NONE);
    assert.equal((await create(client, 'a_b', {})).errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
  });

  test('DeleteRecords moves the log start offset; reads below it are out of range', async () => {
    await create(client, 'trimmed', { 'segment.bytes': '1024' });
    for (let i = 0; i < 20; i++) await produce(client, 'trimmed', batchAt([`v${i}`.padEnd(100, '.')]));
    const res = await client.request(ApiKey.DeleteRecords, 1, {
      topics: [{ name: 'trimmed', partitions: [{ partitionIndex: 0, offset: 12 }] }],
      timeoutMs: 5000,
    });
    assert.deepEqual(
      [res.body.topics[0].partitions[0].errorCode, res.body.topics[0].partitions[0].lowWatermark],
      [ErrorCode.NONE, 12],
    );
    assert.equal((await listOffset(client, 'trimmed', -2)).offset, 12);
    const past = await client.request(ApiKey.DeleteRecords, 1, {
      topics: [{ name: 'trimmed', partitions: [{ partitionIndex: 0, offset: 99 }] }],
      timeoutMs: 5000,
    });
    assert.equal(past.body.topics[0].partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    const fetched = await client.request(ApiKey.Fetch, 11, fetchRequestBody({ topic: 'trimmed', fetchOffset: 3 }));
    assert.equal(fetched.body.responses[0].partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    // Kafka's error partition carries no offsets (the client resets with ListOffsets, asserted above).
    assert.deepEqual(
      [fetched.body.responses[0].partitions[0].highWatermark, fetched.body.responses[0].partitions[0].logStartOffset],
      [-1, -1],
    );
  });

  test('retention.bytes deletes whole old segments and the log start offset follows', async () => {
    await create(client, 'retained', { 'segment.bytes': '1024', 'retention.bytes': '3000' });
    for (let i = 0; i < 40; i++) await produce(client, 'retained', batchAt([`r${i}`.padEnd(150, '.')]));
    const deadline = Date.now() + 10_000;
    let start = 0;
    while (Date.now() < deadline && start === 0) {
      start = (await listOffset(client, 'retained', -2)).offset;
      if (start === 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(start > 0, 'retention ran');
    assert.ok(40 - start <= (40 * 3000) / 150 / 2, `at most about retention.bytes remain (log start ${start})`);
    assert.equal((await listOffset(client, 'retained', -1)).offset, 40);
  });
});

describe('connection limits', () => {
  test('max.connections closes connections over the limit; connections.max.idle.ms closes idle ones', async () => {
    const broker = await startTestBroker({ 'max.connections': '3', 'connections.max.idle.ms': '500' });
    try {
      const open = await Promise.all([0, 1, 2].map(() => WireClient.connect(broker.port)));
      const extra = await WireClient.connect(broker.port);
      assert.equal(await extra.waitClosed(2000), true, 'the 4th connection is closed');
      assert.equal((await open[0]!.request(ApiKey.ApiVersions, 2, {})).body.errorCode, ErrorCode.NONE);
      for (const c of open) assert.equal(await c.waitClosed(5000), true, 'idle connections are closed');
      const again = await WireClient.connect(broker.port);
      assert.equal(
        (await again.request(ApiKey.ApiVersions, 2, {})).body.errorCode,
        ErrorCode.NONE,
        'slots free up again',
      );
      again.close();
    } finally {
      await broker.stop();
      removeDir(broker.dataDir);
    }
  });
});

describe('log start offset across restarts', () => {
  test('DeleteRecords survives a clean restart', async () => {
    let broker = await startTestBroker();
    try {
      let client = await WireClient.connect(broker.port);
      await create(client, 'trim-restart', {});
      for (let i = 0; i < 10; i++) await produce(client, 'trim-restart', batchAt([`v${i}`]));
      const res = await client.request(ApiKey.DeleteRecords, 1, {
        topics: [{ name: 'trim-restart', partitions: [{ partitionIndex: 0, offset: 7 }] }],
        timeoutMs: 5000,
      });
      assert.equal(res.body.topics[0].partitions[0].lowWatermark, 7);
      client.close();
      broker = await broker.restart();
      client = await WireClient.connect(broker.port);
      assert.equal((await listOffset(client, 'trim-restart', -2)).offset, 7);
      assert.equal((await listOffset(client, 'trim-restart', -1)).offset, 10);
      client.close();
    } finally {
      await broker.stop();
      removeDir(broker.dataDir);
    }
  });
});
