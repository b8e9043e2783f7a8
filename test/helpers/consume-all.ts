/**
 * Reading a topic back with Skiff's own client, for the real-broker suites (test/cluster, test/tools)
 * that check what a real client or tool stored.
 */
import * as assert from 'node:assert/strict';
import { Consumer, KafkaClient, type ConsumedRecord } from '../../src/client';

/**
 * Reads `partitions` of `topic` with Skiff's client from offset 0 until each position reaches the end
 * offset ListOffsets gives (at most `maxPolls` polls of up to 100 ms each); fails if it does not get there.
 */
export async function readAll(
  bootstrap: string,
  topic: string,
  partitions: number[],
  maxPolls = 2_000,
): Promise<ConsumedRecord[]> {
  const client = await KafkaClient.connect({ brokers: bootstrap });
  try {
    const consumer = new Consumer(client, { maxWaitMs: 100 });
    consumer.assign(partitions.map((partition) => ({ topic, partition, offset: 0 })));
    await consumer.refreshEndOffsets();
    const out: ConsumedRecord[] = [];
    for (let i = 0; i < maxPolls && !consumer.allAtEnd(); i++) out.push(...(await consumer.poll()));
    assert.ok(consumer.allAtEnd(), `${topic}: did not reach the end: ${JSON.stringify(consumer.assignments())}`);
    return out;
  } finally {
    client.close();
  }
}
