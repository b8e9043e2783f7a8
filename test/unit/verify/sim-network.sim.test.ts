/**
 * SimClient: requests through each simulated broker's real API handlers reach the right actors and
 * answer as a Kafka client expects (a produce to a follower is NOT_LEADER_OR_FOLLOWER, a fetch is
 * bounded by the HW, group offsets go through the coordinator, topic configs change).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootCluster } from '../../helpers/cluster-harness';
import { SimClient } from '../../../src/verify/sim-network';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { decodeRecordBatches } from '../../../src/protocol/record-batch/decode';
import { ErrorCode } from '../../../src/protocol/error-codes';

const batch = (value: string) => buildRecordBatch([{ key: null, value: Buffer.from(value), headers: [] }]);

test('produce, fetch, group offsets and topic changes go through the handlers of the broker asked', async () => {
  const cluster = await bootCluster(7);
  try {
    const client = new SimClient(cluster);
    assert.equal(await client.createTopic(1, 'n', 1, 3, { 'min.insync.replicas': '2' }), ErrorCode.NONE);
    assert.equal(await client.createTopic(2, 'n', 1, 3), ErrorCode.TOPIC_ALREADY_EXISTS);
    await cluster.awaitApplied((await cluster.image()).offset);
    const p = await cluster.partition('n');
    const follower = p.replicas.find((b) => b !== p.leader)!;

    const onFollower = await client.produce(follower, 'n', 0, batch('x'), -1);
    assert.equal(onFollower.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const acked = await client.produce(p.leader, 'n', 0, batch('a'), -1);
    assert.deepEqual([acked.errorCode, acked.baseOffset], [ErrorCode.NONE, 0]);
    const second = await client.produce(p.leader, 'n', 0, batch('b'), 1);
    assert.deepEqual([second.errorCode, second.baseOffset], [ErrorCode.NONE, 1]);
    await cluster.converge('n');

    const read = await client.fetch(p.leader, 'n', 0, 0);
    assert.equal(read.errorCode, ErrorCode.NONE);
    assert.equal(read.highWatermark, 2);
    const values = decodeRecordBatches(read.records!).flatMap((b) => b.records.map((r) => r.value!.toString()));
    assert.deepEqual(values, ['a', 'b']);
    assert.equal((await client.fetch(follower, 'n', 0, 0)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);

    const metadata = await client.metadata(follower, 'n');
    assert.deepEqual(metadata.partitions, [{ partition: 0, leader: p.leader, leaderEpoch: p.leaderEpoch }]);

    const coordinator = await client.findCoordinator(0, 'g');
    assert.equal(coordinator.errorCode, ErrorCode.NONE);
    assert.equal(await client.offsetCommit(coordinator.nodeId, 'g', 'n', 0, 2), ErrorCode.NONE);
    assert.deepEqual(await client.offsetFetch(coordinator.nodeId, 'g', 'n', 0), { errorCode: 0, offset: 2 });

    const producer = await client.initProducerId(p.leader);
    assert.equal(producer.errorCode, ErrorCode.NONE);
    assert.ok(producer.producerId >= 0);

    assert.equal(await client.alterTopicConfigs(0, 'n', { 'min.insync.replicas': '3' }), ErrorCode.NONE);
    assert.equal(await client.createPartitions(0, 'n', 2), ErrorCode.NONE);
    await cluster.awaitApplied((await cluster.image()).offset);
    assert.equal((await cluster.image()).topics.find((t) => t.name === 'n')!.partitions.length, 2);
  } finally {
    await cluster.sim.shutdown();
  }
});
