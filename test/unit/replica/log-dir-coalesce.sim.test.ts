/**
 * The log-dir actor coalesces checkpoint reports: every report that reached it before its zero-delay
 * write timer fired goes into one write of the three checkpoint files, and the requests among them
 * are answered after that write (issue 13: N replicas reporting at once made N rewrites of N entries).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { readOffsetCheckpoint } from '../../../src/storage/checkpoint';
import { logDirActorId } from '../../../src/replica/messages';
import { SimRuntime } from '../../../src/runtime/sim-runtime';

const LOG_DIR = '/data/log-dir-0';

test('a burst of checkpoint reports is one write of the files, and requests are answered after it', async () => {
  const fs = new MemoryFileSystem();
  const sim = new SimRuntime({ seed: 7, fs });
  const id = logDirActorId(0, 0);
  await sim.spawn(
    id,
    'log-dir',
    { logDir: LOG_DIR, clusterId: 'c', nodeId: 0, directoryId: 'AAAAAAAAAAAAAAAAAAAAAQ' },
    { pool: 'broker', brokerId: 0 },
  );
  const renames: string[] = [];
  fs.fault = (op) => {
    if (op.syscall === 'rename' && op.path.includes('recovery-point-offset-checkpoint')) renames.push(op.path);
    return null;
  };
  const net = sim.endpoint('net');
  const partitions = 200;
  for (let p = 0; p < partitions - 1; p++)
    net.send(id, 'log-dir.checkpoint', {
      topic: 't',
      partition: p,
      recoveryPoint: p,
      highWatermark: p + 1,
      logStartOffset: 0,
    });
  const last = net.request(
    id,
    'log-dir.checkpoint',
    { topic: 't', partition: partitions - 1, recoveryPoint: 9, highWatermark: 10, logStartOffset: 3 },
    60_000,
  );
  await sim.settle();
  assert.deepEqual(await last, {});
  const recovery = readOffsetCheckpoint(fs, `${LOG_DIR}/recovery-point-offset-checkpoint`);
  const hw = readOffsetCheckpoint(fs, `${LOG_DIR}/replication-offset-checkpoint`);
  const start = readOffsetCheckpoint(fs, `${LOG_DIR}/log-start-offset-checkpoint`);
  assert.equal(recovery.length, partitions);
  assert.equal(recovery.find((e) => e.partition === 17)?.offset, 17);
  assert.equal(hw.find((e) => e.partition === 17)?.offset, 18);
  assert.equal(recovery.find((e) => e.partition === partitions - 1)?.offset, 9);
  assert.equal(start.find((e) => e.partition === partitions - 1)?.offset, 3);
  assert.ok(
    renames.length >= 1 && renames.length < 10,
    `${partitions} reports made ${renames.length} writes of the recovery-point file`,
  );
  await sim.shutdown();
});
