/**
 * Many partitions of one topic on one broker (issue 13, "cheap partitions"): every partition gets a
 * leader that accepts a produce as soon as CreateTopics has answered, and the replica manager spreads
 * the new partitions over log.dirs by Kafka's rule (the dir holding the fewest partitions), which it
 * now counts once per metadata image instead of once per partition. Deleting the topic removes
 * every partition (their checkpoint entries too) before DeleteTopics answers.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KafkaClient } from '../../../src/client/client';
import { Producer, type RecordMetadata } from '../../../src/client/producer';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { removeDir, startTestBroker, type TestBroker } from '../../helpers/in-process-broker';

const PARTITIONS = 300;

describe('a topic of many partitions on one broker', () => {
  let broker: TestBroker;
  let client: KafkaClient;
  const root = mkdtempSync(path.join(os.tmpdir(), 'skiff-many-'));
  const dirs = [path.join(root, 'a'), path.join(root, 'b')];

  before(async () => {
    broker = await startTestBroker({ 'log.dirs': dirs.join(',') }, root);
    client = await KafkaClient.connect({ brokers: `127.0.0.1:${broker.port}` });
  });
  after(async () => {
    client?.close();
    await broker?.stop();
    removeDir(root);
  });

  it('creates every partition with a leader that takes a produce at once, split evenly over log.dirs', async () => {
    const [created] = await client.createTopics([{ name: 'many', numPartitions: PARTITIONS }], {
      timeoutMs: 120_000,
    });
    assert.equal(created?.errorCode, ErrorCode.NONE);
    const producer = new Producer(client, { acks: -1 });
    const acked: RecordMetadata[] = [];
    const failed: string[] = [];
    for (let p = 0; p < PARTITIONS; p++)
      await producer.send({ topic: 'many', partition: p, key: null, value: `v${p}` }, (err, md) => {
        if (err) failed.push(`${p}: ${String(err)}`);
        else if (md) acked.push(md);
      });
    await producer.flush();
    assert.deepEqual(failed, []);
    assert.equal(acked.length, PARTITIONS);
    assert.deepEqual(
      acked.map((md) => md.partition).sort((a, b) => a - b),
      Array.from({ length: PARTITIONS }, (_, p) => p),
    );
    assert.ok(
      acked.every((md) => md.offset === 0),
      'the first record of each partition is at offset 0',
    );
    const perDir = dirs.map((d) => readdirSync(d).filter((n) => /^many-\d+$/.test(n)));
    assert.deepEqual(
      perDir.map((names) => names.length),
      [PARTITIONS / 2, PARTITIONS / 2],
    );
    assert.equal(new Set(perDir.flat()).size, PARTITIONS, 'each partition in exactly one log dir');
  });

  it('deletes them all by the time DeleteTopics answers, checkpoint entries too; the name is free again', async () => {
    const [deleted] = await client.deleteTopics(['many'], { timeoutMs: 120_000 });
    assert.equal(deleted?.errorCode, ErrorCode.NONE);
    for (const dir of dirs) {
      assert.deepEqual(
        readdirSync(dir).filter((n) => /^many-\d+$/.test(n)),
        [],
        `no partition directory left in ${dir}`,
      );
      for (const file of ['recovery-point-offset-checkpoint', 'log-start-offset-checkpoint'])
        assert.doesNotMatch(readFileSync(path.join(dir, file), 'utf8'), /^many /m, `${file} in ${dir}`);
    }
    const [again] = await client.createTopics([{ name: 'many', numPartitions: 2 }], { timeoutMs: 120_000 });
    assert.equal(again?.errorCode, ErrorCode.NONE);
    const producer = new Producer(client, { acks: -1 });
    let offset = -1;
    await producer.send({ topic: 'many', partition: 1, key: null, value: 'again' }, (err, md) => {
      assert.ifError(err);
      offset = md!.offset;
    });
    await producer.flush();
    assert.equal(offset, 0, 'the new topic starts at offset 0');
  });
});
