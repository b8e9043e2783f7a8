/**
 * The client across a crashed broker: once its bootstrap broker is gone, metadata requests go to the
 * next known broker that answers, not again and again to the dead first one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KafkaClient } from '../../../src/client/client';
import { withTestCluster } from '../../helpers/in-process-broker';

test('after its bootstrap broker crashes, the client asks another broker for metadata', async () => {
  await withTestCluster(2, {}, async (cluster) => {
    const [first, second] = cluster.brokers();
    const client = await KafkaClient.connect({ brokers: `127.0.0.1:${first!.port}` });
    try {
      await client.createTopics([{ name: 'f', numPartitions: 2, replicationFactor: 2 }]);
      const before = await client.topicMetadata('f');
      assert.equal(before.partitions.length, 2);
      await cluster.crashBroker(first!.nodeId);
      const after = await client.topicMetadata('f');
      assert.equal(after.partitions.length, 2, `answered by broker ${second!.nodeId}`);
      assert.ok(
        after.partitions.every((p) => p.leader === second!.nodeId),
        'the survivor leads every partition',
      );
    } finally {
      client.close();
    }
  });
});
