/**
 * Creating a topic on a full disk (a user's report: `skiff topic create full2` on a full tmpfs closed
 * the connection, the topic was missing from `topic list`, and after space was freed a second create
 * said TOPIC_ALREADY_EXISTS). An in-process broker has two log dirs: the first (holding the metadata
 * log, so the controller can commit) on the ordinary temp dir, the second on a small tmpfs that a
 * ballast file fills to the last byte. The new topic's partition goes to the second dir (fewest
 * partitions) and its replica cannot start there. Expected, as in Kafka with an offline log dir: the
 * CreateTopics answer is KAFKA_STORAGE_ERROR naming ENOSPC and saying the topic was created; the same
 * connection stays open and serves; Metadata lists the topic with the partition's KAFKA_STORAGE_ERROR
 * and this broker as its offline replica; produce and fetch answer KAFKA_STORAGE_ERROR; once the
 * ballast is deleted the broker's periodic retry starts the replica, and kafkajs produces to it and
 * kcat reads the records back, without a restart.
 *
 * Needs root (mount); elsewhere it is skipped, saying why.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { OFFLINE_REPLICA_RETRY_MS } from '../../src/broker';
import { ApiKey, ErrorCode } from '../../src/protocol';
import { buildRecordBatch } from '../../src/protocol/record-batch/builder';
import { removeDir, startTestBroker, type TestBroker } from '../helpers/in-process-broker';
import { WireClient } from '../helpers/wire-client';
import { kcatConsume } from '../compat/clients';
import { fetchRequestBody } from '../helpers/fetch-request';

const IS_ROOT = typeof process.getuid === 'function' && process.getuid() === 0;
const TOPIC = 'full2';
const NODE_ID = 1;

/** Writes `file` until the file system refuses (ENOSPC): 64 KiB chunks, then single bytes for the last page. */
function fillUp(file: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (const chunk of [Buffer.alloc(64 * 1024, 1), Buffer.alloc(1, 1)]) {
      for (;;) {
        try {
          fs.writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

function produceBody(records: Buffer) {
  return {
    transactionalId: null,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }],
  };
}

function fetchBody() {
  return fetchRequestBody({ topic: TOPIC });
}

async function partitionMetadata(client: WireClient) {
  const md = await client.request(ApiKey.Metadata, 5, { topics: [{ name: TOPIC }], allowAutoTopicCreation: false });
  const topic = md.body.topics[0];
  assert.equal(topic.errorCode, ErrorCode.NONE, 'the topic exists: the controller committed it');
  return topic.partitions[0] as { errorCode: number; leaderId: number; offlineReplicas: number[] };
}

describe('creating a topic on a full disk (tmpfs)', { skip: IS_ROOT ? false : 'needs root to mount a tmpfs' }, () => {
  let mountDir = '';
  let mounted = false;
  let firstDir = '';
  let broker: TestBroker | undefined;

  before(() => {
    mountDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-create-full-'));
    firstDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-create-full-meta-'));
    // As root this must work: an exception here fails the suite rather than skipping it.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountDir]);
    mounted = true;
  });

  after(async () => {
    await broker?.stop().catch(() => undefined);
    if (mounted) execFileSync('umount', ['-l', mountDir]);
    removeDir(mountDir);
    removeDir(firstDir);
  });

  test(
    'CreateTopics answers KAFKA_STORAGE_ERROR, the connection serves on, the partition is offline, then online once space is freed',
    { timeout: 60_000 },
    async () => {
      const fullDir = path.join(mountDir, 'data');
      broker = await startTestBroker({ 'log.dirs': `${firstDir},${fullDir}`, 'node.id': String(NODE_ID) });
      const client = await WireClient.connect(broker.port);
      try {
        const create = (name: string) =>
          client.request(ApiKey.CreateTopics, 5, {
            topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
            timeoutMs: 5000,
            validateOnly: false,
          });
        // The first partition goes to the first dir (a tie goes to the first), so the next goes to the tmpfs.
        assert.equal((await create('warm')).body.topics[0].errorCode, ErrorCode.NONE);
        assert.ok(fs.existsSync(path.join(firstDir, 'warm-0')));
        const ballast = path.join(mountDir, 'ballast');
        fillUp(ballast);

        const created = (await create(TOPIC)).body.topics[0];
        assert.equal(created.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, JSON.stringify(created));
        assert.match(created.errorMessage, /was created/);
        assert.match(created.errorMessage, /ENOSPC/);
        assert.equal(created.numPartitions, 1, 'the topic exists, so its shape is reported');
        assert.ok(fs.existsSync(path.join(fullDir, `${TOPIC}-0`)), 'the partition was placed on the full dir');

        // The same connection keeps serving.
        const offline = await partitionMetadata(client);
        assert.equal(offline.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
        assert.equal(offline.leaderId, NODE_ID);
        assert.deepEqual(offline.offlineReplicas, [NODE_ID]);
        const listed = await client.request(ApiKey.Metadata, 5, { topics: null, allowAutoTopicCreation: false });
        assert.ok(
          listed.body.topics.some((t: { name: string }) => t.name === TOPIC),
          'topic list shows it',
        );
        const refused = await client.request(
          ApiKey.Produce,
          7,
          produceBody(buildRecordBatch([{ key: null, value: Buffer.from('x'), headers: [] }])),
        );
        assert.equal(refused.body.responses[0].partitionResponses[0].errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
        const fetched = await client.request(ApiKey.Fetch, 11, fetchBody());
        assert.equal(fetched.body.responses[0].partitions[0].errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
        assert.equal((await create(TOPIC)).body.topics[0].errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
        assert.equal(client.closed, false, 'no request closed the connection');

        // Free space: the broker's retry brings the partition online, with no restart.
        fs.rmSync(ballast);
        const deadline = Date.now() + 4 * OFFLINE_REPLICA_RETRY_MS;
        let online = await partitionMetadata(client);
        while (online.errorCode !== ErrorCode.NONE && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 200));
          online = await partitionMetadata(client);
        }
        assert.equal(online.errorCode, ErrorCode.NONE, 'online again after space is freed');
        assert.deepEqual(online.offlineReplicas, []);

        const bootstrap = `127.0.0.1:${broker.port}`;
        const { Kafka, logLevel } = await import('kafkajs');
        const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
        const producer = kafka.producer({ allowAutoTopicCreation: false });
        await producer.connect();
        try {
          const [meta] = await producer.send({
            topic: TOPIC,
            acks: -1,
            messages: [
              { key: 'a', value: 'one' },
              { key: 'b', value: 'two' },
            ],
          });
          assert.equal(Number(meta!.baseOffset), 0);
        } finally {
          await producer.disconnect();
        }
        const records = await kcatConsume({ bootstrap, topic: TOPIC, partition: 0, timeoutMs: 20_000 });
        assert.deepEqual(
          records.map((r) => r.value?.toString()),
          ['one', 'two'],
        );
      } finally {
        client.close();
      }
    },
  );
});
