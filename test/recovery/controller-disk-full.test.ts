/**
 * The controller's metadata log on a full disk (a user's report: on a full tmpfs `skiff topic create`
 * and the first consumer group crashed the controller on its metadata-log append, the supervisor gave
 * up after five restarts, and until the process restarted every topic command failed and every group
 * got COORDINATOR_NOT_AVAILABLE; the next start warned of a torn tail). An in-process broker with its
 * one log dir (so the metadata log too) on a small tmpfs, filled by a ballast file and then by
 * InitProducerId allocations until the metadata log's last page is full. Expected: CreateTopics
 * answers KAFKA_STORAGE_ERROR, FindCoordinator COORDINATOR_NOT_AVAILABLE, InitProducerId
 * KAFKA_STORAGE_ERROR, on a connection that stays open; once the ballast is deleted the same commands
 * succeed with no restart (FindCoordinator creates __consumer_offsets then), and after a clean stop
 * the metadata log opens with no torn tail.
 *
 * Needs root (mount); elsewhere it is skipped, saying why.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ApiKey, ErrorCode } from '../../src/protocol';
import { MetadataLog } from '../../src/controller/metadata-log';
import { NodeFileSystem } from '../../src/io/node-file-system';
import { METADATA_DIR } from '../../src/log-dir-validation';
import { removeDir, startTestBroker, type TestBroker } from '../helpers/in-process-broker';
import { WireClient } from '../helpers/wire-client';
import { recordingLogger } from '../unit/storage/helpers';

const IS_ROOT = typeof process.getuid === 'function' && process.getuid() === 0;

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

describe('the controller on a full disk (tmpfs)', { skip: IS_ROOT ? false : 'needs root to mount a tmpfs' }, () => {
  let mountDir = '';
  let mounted = false;
  let broker: TestBroker | undefined;

  before(() => {
    mountDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-controller-full-'));
    // As root this must work: an exception here fails the suite rather than skipping it.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountDir]);
    mounted = true;
  });

  after(async () => {
    await broker?.stop().catch(() => undefined);
    if (mounted) execFileSync('umount', ['-l', mountDir]);
    removeDir(mountDir);
  });

  test(
    'CreateTopics KAFKA_STORAGE_ERROR and FindCoordinator COORDINATOR_NOT_AVAILABLE while full; both work once space is freed; no torn tail',
    { timeout: 60_000 },
    async () => {
      const dataDir = path.join(mountDir, 'data');
      broker = await startTestBroker({ 'log.dirs': dataDir, 'node.id': '1' });
      const client = await WireClient.connect(broker.port);
      try {
        const create = async (name: string) =>
          (
            await client.request(ApiKey.CreateTopics, 5, {
              topics: [{ name, numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }],
              timeoutMs: 5000,
              validateOnly: false,
            })
          ).body.topics[0];
        const initProducerId = async () =>
          (await client.request(ApiKey.InitProducerId, 1, { transactionalId: null, transactionTimeoutMs: 60_000 }))
            .body;
        const findCoordinator = async () =>
          (await client.request(ApiKey.FindCoordinator, 1, { key: 'g1', keyType: 0 })).body;

        const ballast = path.join(mountDir, 'ballast');
        fillUp(ballast);
        // The metadata log's last page may still have room: allocate producer ids (a small frame
        // each) until the disk refuses one. A 4 KiB page holds fewer than 4096 of them.
        let refusals = 0;
        for (let i = 0; i < 4096 && refusals === 0; i++) {
          const reply = await initProducerId();
          if (reply.errorCode === ErrorCode.KAFKA_STORAGE_ERROR) refusals++;
          else assert.equal(reply.errorCode, ErrorCode.NONE, JSON.stringify(reply));
        }
        assert.equal(refusals, 1, 'the metadata log filled up');
        const full = await initProducerId();
        assert.deepEqual(
          [full.errorCode, full.producerId, full.producerEpoch],
          [ErrorCode.KAFKA_STORAGE_ERROR, -1, -1],
          'InitProducerId on the full disk',
        );

        const refused = await create('newt');
        assert.equal(refused.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, JSON.stringify(refused));
        assert.match(refused.errorMessage, /metadata log/);
        const coordinator = await findCoordinator();
        assert.equal(coordinator.errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE, JSON.stringify(coordinator));
        assert.equal(client.closed, false, 'no request closed the connection');
        const listed = await client.request(ApiKey.Metadata, 5, { topics: null, allowAutoTopicCreation: false });
        assert.deepEqual(
          listed.body.topics.map((t: { name: string }) => t.name),
          [],
          'neither newt nor __consumer_offsets exists',
        );

        // Free space: the next commands succeed, with no restart.
        fs.rmSync(ballast);
        assert.equal((await initProducerId()).errorCode, ErrorCode.NONE, 'InitProducerId after space is freed');
        const created = await create('newt');
        assert.equal(created.errorCode, ErrorCode.NONE, JSON.stringify(created));
        assert.equal(created.numPartitions, 3);
        // FindCoordinator creates __consumer_offsets now; its coordinator may take a moment to load.
        let found = await findCoordinator();
        for (let i = 0; i < 50 && found.errorCode !== ErrorCode.NONE; i++) {
          await new Promise((r) => setTimeout(r, 200));
          found = await findCoordinator();
        }
        assert.equal(found.errorCode, ErrorCode.NONE, JSON.stringify(found));
        assert.equal(found.nodeId, 1);
        assert.equal(client.closed, false);
      } finally {
        client.close();
      }
      await broker.stop();
      broker = undefined;

      // After a clean stop the metadata log opens whole: no torn or corrupt tail to truncate.
      const logger = recordingLogger();
      const { log, records } = MetadataLog.open(new NodeFileSystem(), path.join(dataDir, METADATA_DIR), logger);
      log.close();
      assert.deepEqual(
        logger.lines.filter((r) => r.level === 'warn' || r.level === 'error'),
        [],
        'no torn tail',
      );
      assert.ok(
        records.some((r) => r.type === 'topic' && r.name === 'newt'),
        'newt is in the metadata log',
      );
      assert.ok(
        records.some((r) => r.type === 'topic' && r.name === '__consumer_offsets'),
        '__consumer_offsets is in the metadata log',
      );
    },
  );
});
