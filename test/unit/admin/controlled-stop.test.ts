/**
 * `POST /v1/brokers/{id}/stop` against a real three-broker cluster in this process (worker threads,
 * TCP on 127.0.0.1, the admin API over HTTP): a clean stop of the leader's broker is a controlled
 * shutdown. A producer writing acks=all throughout sees no error but NOT_LEADER_OR_FOLLOWER, after
 * which it refreshes its metadata and retries on the new leader, as Kafka's clients do; a client
 * connected to the stopping broker sees, in that broker's own Metadata answers, the leadership move
 * away before its connection is closed; every acknowledged record is read back at its offset.
 */
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startCluster, type RunningCluster } from '../../../src/broker';
import { Consumer, KafkaClient } from '../../../src/client';
import { buildBatch } from '../../../src/client/batch';
import { buildBrokerConfig } from '../../../src/config/broker-config';
import { decodeResponse } from '../../../src/protocol';
import { ApiKey } from '../../../src/protocol/api-keys';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { createLogger } from '../../../src/runtime/logger';
import { WireClient } from '../../helpers/wire-client';
import { json, request } from './http-client';

const TOPIC = 'stopping';

/** One acks=all produce of `value` to partition 0 through broker `leader`: the partition's error and base offset. */
async function produceOne(client: KafkaClient, leader: number, value: string) {
  const body = await client.request(
    ApiKey.Produce,
    9,
    {
      transactionalId: null,
      acks: -1,
      timeoutMs: 10_000,
      topicData: [
        { name: TOPIC, partitionData: [{ index: 0, records: buildBatch([{ key: null, value: Buffer.from(value) }]) }] },
      ],
    },
    leader,
  );
  const p = (body.responses as any[])[0].partitionResponses[0];
  return { errorCode: p.errorCode as number, baseOffset: Number(p.baseOffset) };
}

/** The leader of partition 0 in a Metadata answer (-1 when none). */
async function leaderOf(client: KafkaClient): Promise<number> {
  const md = await client.metadata([TOPIC]);
  return md.topics[0]?.partitions[0]?.leader ?? -1;
}

describe('a controlled shutdown of one broker through the admin API (three brokers, in process)', () => {
  let cluster: RunningCluster | undefined;
  let dataDir = '';

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'skiff-stop-'));
    process.env.SKIFF_LOG_LEVEL ??= 'warn';
    const config = buildBrokerConfig(
      new Map([
        ['listeners', 'PLAINTEXT://127.0.0.1:0'],
        ['log.dirs', dataDir],
        ['num.io.threads', '1'],
        ['auto.leader.rebalance.enable', 'false'],
      ]),
    );
    cluster = await startCluster(config, createLogger({ fd: 2 }), { nodes: 3, adminPort: 0, faultInjection: true });
  });

  after(async () => {
    await cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('leadership moves before the listener closes; the producer sees only NOT_LEADER_OR_FOLLOWER retries', async () => {
    assert.ok(cluster !== undefined && cluster.adminPort !== null);
    const ports = new Map(cluster.brokers().map((b) => [b.nodeId, b.port]));
    const admin = await KafkaClient.connect({ brokers: `127.0.0.1:${ports.get(0)}` });
    const created = await admin.createTopics([
      { name: TOPIC, numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } },
    ]);
    assert.equal(created[0]?.errorCode, ErrorCode.NONE);
    const leader = await leaderOf(admin);
    assert.ok(leader >= 0, 'the topic has a leader');
    admin.close();

    // The producer bootstraps from another broker, as a client whose metadata node stays up.
    const other = [...ports.keys()].find((id) => id !== leader)!;
    const producer = await KafkaClient.connect({ brokers: `127.0.0.1:${ports.get(other)}` });
    // A client of the stopping broker asks it for metadata back to back until its connection closes.
    const watcher = await WireClient.connect(ports.get(leader)!);
    const seenLeaders: number[] = [];
    const watching = (async () => {
      for (let i = 0; i < 100_000 && !watcher.closed; i++) {
        const id = watcher.send(ApiKey.Metadata, 9, { topics: [{ name: TOPIC }], allowAutoTopicCreation: false });
        const frame = await watcher.readFrame(30_000).catch(() => null);
        if (frame === null) return;
        const decoded = decodeResponse(ApiKey.Metadata, 9, frame);
        assert.equal(decoded.correlationId, id);
        seenLeaders.push((decoded.body as any).topics[0].partitions[0].leaderId as number);
      }
    })();

    const acked: { value: string; offset: number }[] = [];
    const errors: string[] = [];
    let notLeaderRetries = 0;
    let stopped = false;
    let afterStop = 0;
    const producing = (async () => {
      let target = leader;
      for (let i = 0; i < 5000 && afterStop < 30; i++) {
        const value = `v${i}`;
        let done = false;
        for (let attempt = 0; attempt < 50 && !done; attempt++) {
          try {
            const r = await produceOne(producer, target, value);
            if (r.errorCode === ErrorCode.NONE) {
              acked.push({ value, offset: r.baseOffset });
              done = true;
            } else if (r.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
              notLeaderRetries++;
              target = await leaderOf(producer);
            } else {
              errors.push(`${value}: error code ${r.errorCode} from broker ${target}`);
              done = true;
            }
          } catch (error) {
            errors.push(`${value}: ${String(error)} (broker ${target})`);
            done = true;
          }
        }
        if (!done) errors.push(`${value}: not acknowledged after 50 attempts`);
        if (stopped) afterStop++;
      }
    })();

    while (acked.length < 50 && errors.length === 0) await new Promise((r) => setTimeout(r, 10));
    const reply = await request(cluster.adminPort, 'POST', `/v1/brokers/${leader}/stop`);
    stopped = true;
    assert.equal(reply.status, 200, reply.body);
    assert.equal((json(reply) as { state: string }).state, 'stopped');
    await producing;
    await watching;

    assert.deepEqual(errors, [], 'no produce error other than NOT_LEADER_OR_FOLLOWER');
    assert.ok(notLeaderRetries >= 1, 'the producer was told to move at least once');
    assert.ok(watcher.closed, "the stopped broker's listener closed the watcher's connection");
    const last = seenLeaders[seenLeaders.length - 1];
    assert.ok(
      last !== undefined && last !== leader && last >= 0,
      `before closing, the stopping broker answered the new leader (leaders seen: ${[...new Set(seenLeaders)].join(',')})`,
    );

    const partitions = json(await request(cluster.adminPort, 'GET', '/v1/partitions')) as any[];
    const p = partitions.find((x) => x.topic === TOPIC);
    assert.equal(p.leader, last, 'the admin API shows the same new leader');
    assert.ok(!p.isr.includes(leader), 'the stopped broker left the ISR');
    const brokers = json(await request(cluster.adminPort, 'GET', '/v1/brokers')) as any[];
    assert.equal(brokers.find((b) => b.id === leader).state, 'stopped');

    // Every acknowledged record is in the log at its acknowledged offset, each once.
    const consumer = new Consumer(producer, { maxWaitMs: 100 });
    consumer.assign([{ topic: TOPIC, partition: 0, offset: 0 }]);
    await consumer.refreshEndOffsets();
    const read = new Map<number, string>();
    for (let i = 0; i < 500 && !consumer.allAtEnd(); i++)
      for (const r of await consumer.poll()) read.set(Number(r.offset), r.value?.toString() ?? '');
    assert.ok(consumer.allAtEnd(), 'read to the end');
    for (const a of acked) assert.equal(read.get(a.offset), a.value, `offset ${a.offset}`);
    assert.equal(new Set(acked.map((a) => a.offset)).size, acked.length, 'distinct offsets');
    producer.close();
    watcher.close();

    // It comes back as a follower.
    const started = await request(cluster.adminPort, 'POST', `/v1/brokers/${leader}/start`);
    assert.equal(started.status, 200, started.body);
    assert.equal((json(started) as { state: string }).state, 'running');
  });
});
