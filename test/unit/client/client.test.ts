import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EARLIEST_TIMESTAMP, KafkaClient, LATEST_TIMESTAMP } from '../../../src/client/client';
import { Consumer, type ConsumedRecord } from '../../../src/client/consumer';
import { UnsupportedApiError } from '../../../src/client/errors';
import { partitionForKey } from '../../../src/client/partitioner';
import { Producer, type RecordMetadata } from '../../../src/client/producer';
import { ApiKey } from '../../../src/protocol/api-keys';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { removeDir, startTestBroker, type TestBroker } from '../../helpers/in-process-broker';

/** Reads every record of the assigned partitions up to their current end. */
async function readAll(
  client: KafkaClient,
  topic: string,
  partitions: number[],
  offset = 0,
): Promise<ConsumedRecord[]> {
  const consumer = new Consumer(client, { maxWaitMs: 50 });
  consumer.assign(partitions.map((partition) => ({ topic, partition, offset })));
  await consumer.refreshEndOffsets();
  const out: ConsumedRecord[] = [];
  while (!consumer.allAtEnd()) out.push(...(await consumer.poll()));
  return out;
}

describe('KafkaClient, Producer and Consumer against an in-process broker', () => {
  let broker: TestBroker;
  let client: KafkaClient;

  before(async () => {
    broker = await startTestBroker();
    client = await KafkaClient.connect({ brokers: `127.0.0.1:${broker.port}` });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
    if (broker) removeDir(broker.dataDir);
  });

  it('negotiates versions: the highest both sides speak, Produce at least v3', () => {
    const connection = client.bootstrapConnection;
    assert.ok(connection.versionFor(ApiKey.Produce, 3) >= 3);
    assert.equal(
      connection.versionFor(ApiKey.Metadata),
      Math.min(13, connection.apiVersions.get(ApiKey.Metadata)!.maxVersion),
    );
    assert.equal(connection.versionFor(ApiKey.Produce), 12, 'capped below v13, which names topics by id only');
    assert.equal(connection.versionFor(ApiKey.Fetch), 12, 'capped below v13, which names topics by id only');
    assert.equal(
      connection.versionFor(ApiKey.JoinGroup),
      Math.min(9, connection.apiVersions.get(ApiKey.JoinGroup)!.maxVersion),
    );
    assert.throws(
      () => connection.versionFor(ApiKey.SaslHandshake),
      (err: unknown) => err instanceof UnsupportedApiError,
    );
    assert.equal(client.supports(ApiKey.SaslHandshake), false);
  });

  it('does not auto-create topics through Metadata', async () => {
    const md = await client.metadata(['client-not-created']);
    assert.equal(md.topics[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const again = await client.metadata(['client-not-created']);
    assert.equal(again.topics[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('creates and deletes topics, reporting per-topic errors', async () => {
    const created = await client.createTopics([
      { name: 'client-admin', numPartitions: 2, configs: { 'retention.ms': '60000' } },
    ]);
    assert.deepEqual(
      created.map((r) => [r.name, r.errorCode]),
      [['client-admin', ErrorCode.NONE]],
    );
    const twice = await client.createTopics([{ name: 'client-admin' }]);
    assert.equal(twice[0]!.errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
    assert.equal((await client.topicMetadata('client-admin')).partitions.length, 2);
    const deleted = await client.deleteTopics(['client-admin', 'client-never-was']);
    assert.equal(deleted.find((r) => r.name === 'client-admin')!.errorCode, ErrorCode.NONE);
    assert.equal(deleted.find((r) => r.name === 'client-never-was')!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('pipelines up to 5 produce requests and keeps each partition in send order', async () => {
    await client.createTopics([{ name: 'client-pipeline', numPartitions: 3 }]);
    const producer = new Producer(client, { batchSizeBytes: 300, maxInFlight: 5, compression: 'lz4' });
    const acks: Array<RecordMetadata | Error> = [];
    for (let i = 0; i < 2000; i++) {
      await producer.send({ topic: 'client-pipeline', key: `key-${i % 13}`, value: `value-${i}` }, (err, md) =>
        acks.push(err ?? md!),
      );
    }
    await new Promise((resolve) => setImmediate(resolve));
    const inFlight = (await client.connection(0)).inFlight;
    assert.ok(inFlight > 1 && inFlight <= 5, `in flight: ${inFlight}`);
    await producer.flush();
    assert.equal(acks.length, 2000);
    assert.ok(acks.every((a) => !(a instanceof Error)));

    const records = await readAll(client, 'client-pipeline', [0, 1, 2]);
    assert.equal(records.length, 2000);
    for (const r of records) assert.equal(r.partition, partitionForKey(r.key!, 3));
    for (let k = 0; k < 13; k++) {
      const values = records
        .filter((r) => r.key!.toString() === `key-${k}`)
        .map((r) => Number(r.value!.toString().slice(6)));
      assert.deepEqual(
        values,
        [...values].sort((a, b) => a - b),
        `key-${k} keeps its order`,
      );
    }
  });

  it('acks=0 resolves with offset -1 and the records still arrive', async () => {
    await client.createTopics([{ name: 'client-acks0', numPartitions: 1 }]);
    const producer = new Producer(client, { acks: 0 });
    const md = await Promise.all(
      Array.from({ length: 20 }, (_, i) => producer.produce({ topic: 'client-acks0', value: `v${i}` })),
    );
    assert.ok(md.every((m) => m.offset === -1));
    const consumer = new Consumer(client, { maxWaitMs: 100 });
    consumer.assign([{ topic: 'client-acks0', partition: 0, offset: 0 }]);
    const got: ConsumedRecord[] = [];
    for (let i = 0; i < 50 && got.length < 20; i++) got.push(...(await consumer.poll()));
    assert.deepEqual(
      got.map((r) => r.value!.toString()),
      md.map((_, i) => `v${i}`),
    );
  });

  it('fetches from the middle of a compressed batch, and finds offsets by timestamp', async () => {
    await client.createTopics([{ name: 'client-mid', numPartitions: 1 }]);
    const producer = new Producer(client, { compression: 'gzip', lingerMs: 50, batchSizeBytes: 1 << 20 });
    const t0 = 1_700_000_000_000;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        producer.produce({ topic: 'client-mid', partition: 0, value: `m${i}`, timestamp: t0 + i * 1000 }),
      ),
    );
    const raw = await client.request(ApiKey.Fetch, null, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      topics: [{ topic: 'client-mid', partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }],
    });
    const batch = (raw.responses as Array<{ partitions: Array<{ records: Buffer }> }>)[0]!.partitions[0]!.records;
    assert.equal(batch.readInt16BE(21) & 7, 1, 'one gzip batch');
    assert.equal(batch.readInt32BE(57), 10, 'holding all 10 records');
    const fromFour = await readAll(client, 'client-mid', [0], 4);
    assert.deepEqual(
      fromFour.map((r) => r.offset),
      [4, 5, 6, 7, 8, 9],
    );
    assert.deepEqual(
      fromFour.map((r) => r.timestamp),
      [4, 5, 6, 7, 8, 9].map((i) => t0 + i * 1000),
    );
    const offsets = await client.listOffsets('client-mid', [{ partition: 0, timestamp: t0 + 6500 }]);
    assert.equal(offsets.get(0)!.offset, 7);
    const ends = await client.listOffsets('client-mid', [{ partition: 0, timestamp: EARLIEST_TIMESTAMP }]);
    const latest = await client.listOffsets('client-mid', [{ partition: 0, timestamp: LATEST_TIMESTAMP }]);
    assert.deepEqual([ends.get(0)!.offset, latest.get(0)!.offset], [0, 10]);
  });

  it('sends any API with a table through request(), at the negotiated version', async () => {
    const body = await client.request(ApiKey.Metadata, null, { topics: [], allowAutoTopicCreation: false });
    assert.ok(Array.isArray(body.brokers) && (body.brokers as unknown[]).length === 1);
    await assert.rejects(client.request(ApiKey.SaslHandshake, null, {}), UnsupportedApiError);
  });

  it('rejects a send to a missing topic or partition without a callback', async () => {
    const producer = new Producer(client);
    await assert.rejects(producer.send({ topic: 'client-missing', value: 'x' }), /UNKNOWN_TOPIC_OR_PARTITION/);
    await client.createTopics([{ name: 'client-one', numPartitions: 1 }]);
    await assert.rejects(
      producer.send({ topic: 'client-one', partition: 3, value: 'x' }),
      /UNKNOWN_TOPIC_OR_PARTITION/,
    );
  });
});
