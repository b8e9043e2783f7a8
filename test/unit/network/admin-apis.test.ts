/**
 * APIs the Java client and Kafka's tools need beyond produce/fetch: InitProducerId with idempotent
 * sequence checks, OffsetForLeaderEpoch, CreatePartitions, DescribeLogDirs, FindCoordinator,
 * DescribeCluster.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey, ErrorCode } from '../../../src/protocol';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { WireClient } from '../../helpers/wire-client';
import { removeDir, startTestBroker, type TestBroker } from '../../helpers/in-process-broker';

function idempotentBatch(producerId: number, producerEpoch: number, baseSequence: number, values: string[]): Buffer {
  const now = Date.now();
  return buildRecordBatch(
    values.map((v) => ({ key: null, value: Buffer.from(v), headers: [], timestamp: now })),
    { producerId, producerEpoch, baseSequence },
  );
}

describe('admin and idempotence APIs', () => {
  let broker: TestBroker;
  let client: WireClient;

  before(async () => {
    broker = await startTestBroker();
    client = await WireClient.connect(broker.port);
    const res = await client.request(ApiKey.CreateTopics, 4, {
      topics: [{ name: 'admin', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(res.body.topics[0].errorCode, ErrorCode.NONE);
  });

  after(async () => {
    client.close();
    await broker.stop();
    removeDir(broker.dataDir);
  });

  async function produce(records: Buffer) {
    const res = await client.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [{ name: 'admin', partitionData: [{ index: 0, records }] }],
    });
    return res.body.responses[0].partitionResponses[0];
  }

  test('InitProducerId gives distinct ids; duplicates get their original offset, gaps and old epochs are refused', async () => {
    const first = await client.request(ApiKey.InitProducerId, 4, {
      transactionalId: null,
      transactionTimeoutMs: 60000,
      producerId: -1,
      producerEpoch: -1,
    });
    const second = await client.request(ApiKey.InitProducerId, 1, {
      transactionalId: null,
      transactionTimeoutMs: 60000,
    });
    assert.equal(first.body.errorCode, ErrorCode.NONE);
    assert.notEqual(first.body.producerId, second.body.producerId);
    const pid = first.body.producerId;
    assert.equal((await produce(idempotentBatch(pid, 0, 0, ['a', 'b']))).baseOffset, 0);
    assert.equal((await produce(idempotentBatch(pid, 0, 2, ['c']))).baseOffset, 2);
    const retry = await produce(idempotentBatch(pid, 0, 0, ['a', 'b']));
    assert.deepEqual([retry.errorCode, retry.baseOffset], [ErrorCode.NONE, 0], 'a retried batch is not appended twice');
    assert.equal(
      (await produce(idempotentBatch(pid, 0, 7, ['gap']))).errorCode,
      ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
    );
    assert.equal((await produce(idempotentBatch(pid, 1, 0, ['new epoch']))).baseOffset, 3);
    assert.equal((await produce(idempotentBatch(pid, 0, 3, ['fenced']))).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
    const txn = await client.request(ApiKey.InitProducerId, 4, {
      transactionalId: 'tx-1',
      transactionTimeoutMs: 60000,
      producerId: -1,
      producerEpoch: -1,
    });
    assert.equal(txn.body.errorCode, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  });

  test('a transactional batch without a transactional id fails the whole request with TRANSACTIONAL_ID_AUTHORIZATION_FAILED and stores nothing', async () => {
    const end = async () => {
      const res = await client.request(ApiKey.ListOffsets, 3, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: 'admin', partitions: [{ partitionIndex: 0, timestamp: -1 }] }],
      });
      return Number(res.body.topics[0].partitions[0].offset);
    };
    const before = await end();
    const now = Date.now();
    const txnBatch = buildRecordBatch([{ key: null, value: Buffer.from('txn'), headers: [], timestamp: now }], {
      producerId: 1234,
      producerEpoch: 0,
      baseSequence: 0,
      isTransactional: true,
    });
    const res = await client.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        {
          name: 'admin',
          partitionData: [
            { index: 0, records: buildRecordBatch([{ key: null, value: Buffer.from('plain'), headers: [] }]) },
            { index: 1, records: txnBatch },
          ],
        },
      ],
    });
    const codes = res.body.responses[0].partitionResponses.map((p: { errorCode: number }) => p.errorCode);
    assert.deepEqual(codes, [
      ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
      ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ]);
    assert.equal(await end(), before, 'not even the plain batch beside it was stored');
  });

  test('OffsetForLeaderEpoch answers the LEO for the current epoch and fences stale epochs', async () => {
    const res = await client.request(ApiKey.OffsetForLeaderEpoch, 4, {
      replicaId: -1,
      topics: [
        {
          topic: 'admin',
          partitions: [
            { partition: 0, currentLeaderEpoch: 0, leaderEpoch: 0 },
            { partition: 0, currentLeaderEpoch: 5, leaderEpoch: 0 },
            { partition: 3, currentLeaderEpoch: -1, leaderEpoch: 0 },
          ],
        },
      ],
    });
    const [current, future, missing] = res.body.topics[0].partitions;
    const latest = await client.request(ApiKey.ListOffsets, 3, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: 'admin', partitions: [{ partitionIndex: 0, timestamp: -1 }] }],
    });
    assert.deepEqual(
      [current.errorCode, current.leaderEpoch, current.endOffset],
      [ErrorCode.NONE, 0, latest.body.topics[0].partitions[0].offset],
    );
    assert.equal(future.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal(missing.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  test('CreatePartitions adds serving partitions; lowering the count is refused', async () => {
    let res = await client.request(ApiKey.CreatePartitions, 1, {
      topics: [{ name: 'admin', count: 3, assignments: null }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(res.body.results[0].errorCode, ErrorCode.NONE);
    const md = await client.request(ApiKey.Metadata, 4, { topics: [{ name: 'admin' }], allowAutoTopicCreation: false });
    assert.equal(md.body.topics[0].partitions.length, 3);
    const produced = await client.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        {
          name: 'admin',
          partitionData: [
            {
              index: 2,
              records: buildRecordBatch([{ key: null, value: Buffer.from('p2'), headers: [], timestamp: Date.now() }]),
            },
          ],
        },
      ],
    });
    assert.equal(produced.body.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    res = await client.request(ApiKey.CreatePartitions, 1, {
      topics: [
        { name: 'admin', count: 2, assignments: null },
        { name: 'nope', count: 2, assignments: null },
      ],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.deepEqual(
      res.body.results.map((r: any) => r.errorCode),
      [ErrorCode.INVALID_PARTITIONS, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    );
  });

  test("DescribeLogDirs v2+ carries each replica's fsynced offset (Skiff's tag 10000); v0/v1 cannot", async () => {
    // write.caching=true: the HW counts the page cache and no flush.ms/flush.messages fsyncs, so the
    // recovery point stays at 0 while the LEO moves; the default topic fsyncs before acks=-1 answers.
    const created = await client.request(ApiKey.CreateTopics, 4, {
      topics: [
        {
          name: 'admin-cached',
          numPartitions: 1,
          replicationFactor: 1,
          assignments: [],
          configs: [{ name: 'write.caching', value: 'true' }],
        },
      ],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(created.body.topics[0].errorCode, ErrorCode.NONE);
    const records = buildRecordBatch(
      ['x', 'y', 'z'].map((v) => ({ key: null, value: Buffer.from(v), headers: [], timestamp: Date.now() })),
    );
    const produced = await client.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [{ name: 'admin-cached', partitionData: [{ index: 0, records }] }],
    });
    assert.equal(produced.body.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    await produce(idempotentBatch(-1, -1, -1, ['durable']));
    const ask = async (version: number) => {
      const res = await client.request(ApiKey.DescribeLogDirs, version, {
        topics: [
          { topic: 'admin', partitions: [0] },
          { topic: 'admin-cached', partitions: [0] },
        ],
      });
      const topics = res.body.results[0].topics as Array<{ name: string; partitions: any[] }>;
      return Object.fromEntries(topics.map((t) => [t.name, t.partitions[0].fsyncedOffset]));
    };
    const leo = async (topic: string) => {
      const res = await client.request(ApiKey.ListOffsets, 1, {
        replicaId: -2,
        topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1 }] }],
      });
      return res.body.topics[0].partitions[0].offset as number;
    };
    const admin = await leo('admin');
    assert.ok(admin > 0);
    assert.equal(await leo('admin-cached'), 3);
    for (const version of [2, 4, 5])
      assert.deepStrictEqual(await ask(version), { admin, 'admin-cached': 0 }, `v${version}`);
    assert.deepStrictEqual(await ask(1), { admin: -1, 'admin-cached': -1 }, 'v1 has no tagged fields');
  });

  test('DescribeLogDirs lists partitions with their sizes; FindCoordinator and DescribeCluster name this broker', async () => {
    const dirs = await client.request(ApiKey.DescribeLogDirs, 4, { topics: null });
    const result = dirs.body.results[0];
    assert.equal(result.logDir, broker.dataDir);
    const admin = result.topics.find((t: any) => t.name === 'admin');
    assert.ok(admin.partitions.find((p: any) => p.partitionIndex === 0).partitionSize > 0);
    assert.ok(result.totalBytes > 0 && result.usableBytes > 0);
    const v0 = await client.request(ApiKey.FindCoordinator, 0, { key: 'group-a' });
    assert.deepEqual([v0.body.errorCode, v0.body.nodeId, v0.body.port], [ErrorCode.NONE, 0, broker.port]);
    const v4 = await client.request(ApiKey.FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['g1', 'g2'] });
    assert.deepEqual(
      v4.body.coordinators.map((c: any) => [c.key, c.nodeId]),
      [
        ['g1', 0],
        ['g2', 0],
      ],
    );
    const cluster = await client.request(ApiKey.DescribeCluster, 0, { includeClusterAuthorizedOperations: false });
    assert.equal(cluster.body.clusterId, broker.broker.clusterId);
    assert.deepEqual(
      cluster.body.brokers.map((b: any) => [b.brokerId, b.port]),
      [[0, broker.port]],
    );
  });
});
