/**
 * What a hard crash of a partition leader's broker may and may not lose, on a real three-broker Skiff
 * (`skiff start --nodes 3 --fault-injection`, RF = 3): an acks=1 producer's acknowledged records that the
 * old leader never replicated may be gone (counted, not forbidden), while a consumer never sees an offset at
 * or above the high watermark of the Fetch response that carried it, and everything it saw is in every ISR
 * member's log afterwards (DESIGN.md invariants 2 and 4, issue 11).
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConnectionError, KafkaClient, decodeBatches } from '../../src/client';
import { ApiKey } from '../../src/protocol/api-keys';
import { ErrorCode } from '../../src/protocol/error-codes';
import * as L from '../../src/protocol/record-batch/layout';
import { sleep, startClusterProcess, table, type ClusterProcess } from '../helpers/cluster-process';
import { readAll } from '../helpers/consume-all';
import { createReplicatedTopic, indexOf, logRecords, startProducer, valueOf } from './cluster-checks';
import { fetchRequestBody } from '../helpers/fetch-request';

const TEST_TIMEOUT_MS = 180_000;

/** A record a consumer got, with the high watermark of the Fetch response that carried it. */
interface Seen {
  offset: number;
  value: string | null;
  responseHighWatermark: number;
}

/**
 * Fetches `topic-partition` from its current leader (Fetch with replica id -1, as a consumer) from offset 0
 * until `shouldStop()` says so and the position has reached the last HW seen, following leader changes (a
 * connection error or a retriable error refreshes the metadata). Returns every record in the order seen.
 * Bounded by `deadlineMs`.
 */
async function fetchWatching(
  bootstrap: string,
  topic: string,
  partition: number,
  shouldStop: (position: number) => boolean,
  deadlineMs: number,
): Promise<{ seen: Seen[]; fetches: number; errors: string[]; leaders: Set<number> }> {
  // A new client after each connection error: KafkaClient keeps asking the first broker of its last
  // Metadata for metadata, which is the crashed one when broker 0 crashed; connect() tries every address.
  let client = await KafkaClient.connect({ brokers: bootstrap });
  const seen: Seen[] = [];
  const errors: string[] = [];
  let position = 0;
  let fetches = 0;
  const leaders = new Set<number>();
  try {
    while (!shouldStop(position)) {
      assert.ok(Date.now() < deadlineMs, `fetching ${topic}-${partition} did not finish (position ${position})`);
      try {
        const md = await client.topicMetadata(topic);
        const leader = md.partitions[partition]?.leader ?? -1;
        if (leader < 0) {
          await sleep(50);
          continue;
        }
        const connection = await client.connection(leader);
        const body = (await connection.send(
          ApiKey.Fetch,
          connection.versionFor(ApiKey.Fetch, 4),
          fetchRequestBody({ topic, partition, fetchOffset: position, maxWaitMs: 100, partitionMaxBytes: 1 << 18 }),
          { timeoutMs: 10_000 },
        ))!;
        fetches++;
        leaders.add(leader);
        const p = (body.responses as Array<{ partitions: Array<Record<string, unknown>> }>)[0]?.partitions[0];
        assert.ok(p !== undefined, 'the Fetch response has the partition');
        const errorCode = p.errorCode as number;
        if (errorCode !== ErrorCode.NONE) {
          errors.push(`broker ${leader}: error ${errorCode}`);
          await sleep(50);
          continue;
        }
        const responseHighWatermark = p.highWatermark as number;
        const records = p.records as Buffer | null;
        for (const batch of records === null ? [] : decodeBatches(records)) {
          const next = batch.baseOffset + batch.lastOffsetDelta + 1;
          if (next <= position) continue;
          if ((batch.attributes & L.CONTROL_FLAG_MASK) === 0)
            for (const r of batch.records)
              if (r.offset >= position)
                seen.push({ offset: r.offset, value: r.value?.toString('utf8') ?? null, responseHighWatermark });
          position = next;
        }
      } catch (err) {
        errors.push((err as Error).message); // a crashed leader: reconnect, refresh the metadata and go on
        await sleep(50);
        if (err instanceof ConnectionError) {
          client.close();
          client = await KafkaClient.connect({ brokers: bootstrap });
        }
      }
    }
    return { seen, fetches, errors, leaders };
  } finally {
    client.close();
  }
}

describe('leader crash on a 3-broker cluster, RF=3', () => {
  let cluster: ClusterProcess;

  before(async () => {
    cluster = await startClusterProcess();
  });
  after(async () => {
    await cluster?.stop();
  });

  test(
    "an acks=1 run (confluent-kafka) across a crash of the leader's broker counts its losses: acknowledged = found at the acked offset + found elsewhere + lost, and every stored record is one that was sent",
    { timeout: TEST_TIMEOUT_MS },
    async (t) => {
      const topic = 'acks-one-crash';
      const count = 20_000;
      await createReplicatedTopic(cluster, topic, 1);
      const producer = startProducer({
        bootstrap: cluster.bootstrap,
        topic,
        count,
        acks: 1,
        rate: 8_000,
        timeoutS: 120,
      });
      await producer.reported(6_000);
      const victim = (await cluster.partition(topic, 0)).leader;
      await cluster.crash(victim);
      await producer.reported(12_000);
      await cluster.start(victim);
      const result = await producer.done;
      const [p] = await cluster.waitForInSync(topic);

      const stored = await readAll(cluster.bootstrap, topic, [0]);
      assert.deepEqual(
        stored.map((r) => r.offset),
        stored.map((_, i) => i),
        'offsets are dense from 0',
      );
      const sent = new Set(Array.from({ length: count }, (_, i) => valueOf(i)));
      const notSent = stored.filter((r) => !sent.has(r.value?.toString('utf8') ?? ''));
      assert.deepEqual(notSent, [], 'found ⊆ sent: every stored value is one the producer sent');
      const valueAt = new Map(stored.map((r) => [r.offset, r.value?.toString('utf8')]));
      const storedValues = new Set(valueAt.values());
      let atOffset = 0;
      let elsewhere = 0;
      const lost: number[] = [];
      for (const [index, partition, offset] of result.acks) {
        assert.equal(partition, 0);
        if (valueAt.get(offset) === valueOf(index)) atOffset++;
        else if (storedValues.has(valueOf(index))) elsewhere++;
        else lost.push(index);
      }
      t.diagnostic(
        `crashed leader ${victim}: sent ${count}, acked ${result.acks.length}, failed ${result.errors.length}; ` +
          `found at the acked offset ${atOffset}, at another offset ${elsewhere}, lost ${lost.length}` +
          (lost.length > 0 ? ` (indexes ${lost[0]}..${lost[lost.length - 1]})` : '') +
          `; stored ${stored.length}`,
      );
      assert.equal(result.acks.length + result.errors.length, count, 'one delivery report per record');
      assert.equal(new Set(result.acks.map(([i]) => i)).size, result.acks.length, 'each record acked at most once');
      assert.equal(atOffset + elsewhere + lost.length, result.acks.length, 'acknowledged = found + lost');
      assert.equal(p!.perReplica[0]!.highWatermark, stored.length, 'the consumer read up to the HW');
      const storedIndexes = stored.map((r) => indexOf(r.value?.toString('utf8') ?? ''));
      assert.ok(
        storedIndexes.every((i) => i >= 0 && i < count),
        'every stored record is one of the numbered records',
      );
    },
  );

  test(
    "a consumer never receives an offset at or above the high watermark of the Fetch response that carried it, across a leader crash under acks=1; every consumed record is in every ISR member's log afterwards",
    { timeout: TEST_TIMEOUT_MS },
    async (t) => {
      const topic = 'hw-watch';
      const count = 20_000;
      await createReplicatedTopic(cluster, topic, 1);
      let producerDone = false;
      let finalHighWatermark = Number.POSITIVE_INFINITY;
      const watching = fetchWatching(
        cluster.bootstrap,
        topic,
        0,
        (position) => producerDone && position >= finalHighWatermark,
        Date.now() + 150_000,
      );
      const producer = startProducer({
        bootstrap: cluster.bootstrap,
        topic,
        count,
        acks: 1,
        rate: 6_000,
        timeoutS: 120,
      });
      await producer.reported(5_000);
      const victim = (await cluster.partition(topic, 0)).leader;
      await cluster.crash(victim);
      await producer.reported(10_000);
      await cluster.start(victim);
      const result = await producer.done;
      const [p] = await cluster.waitForInSync(topic);
      finalHighWatermark = p!.perReplica[0]!.highWatermark;
      producerDone = true;
      const { seen, fetches, errors, leaders } = await watching;
      t.diagnostic(
        `crashed leader ${victim}; acked ${result.acks.length}; ${fetches} fetch responses, ${seen.length} records, ` +
          `${errors.length} errors followed (${errors.slice(0, 3).join('; ')}); fetched from leaders ${[...leaders]}; ` +
          `final HW ${finalHighWatermark}`,
      );

      const aboveHw = seen.filter((s) => s.offset >= s.responseHighWatermark);
      assert.deepEqual(aboveHw.slice(0, 10), [], `${aboveHw.length} records at or above their response's HW`);
      assert.deepEqual(
        seen.map((s) => s.offset),
        seen.map((_, i) => i),
        'the consumer saw dense offsets from 0, each once',
      );
      assert.equal(seen.length, finalHighWatermark, 'it read up to the final HW');
      assert.ok(
        leaders.has(victim) && leaders.size >= 2,
        `the consumer followed the leader from ${victim}: ${[...leaders]}`,
      );
      assert.deepEqual([...p!.isr].sort(), [0, 1, 2], table([p!]));
      for (const id of p!.isr) {
        const log = new Map(logRecords(cluster.segmentBytes(id, topic, 0)).map((r) => [r.offset, r.value]));
        const missing = seen.filter((s) => log.get(s.offset) !== s.value);
        assert.deepEqual(missing.slice(0, 10), [], `node-${id}: ${missing.length} consumed records not in its log`);
      }
    },
  );
});
