/**
 * A full disk on a sole replica's role-change path (issue 12 item 1's full-disk findings, RF=1):
 * a new leader epoch's leader-epoch checkpoint and the compacted marker of cleanup.policy=compact are
 * writes the disk may refuse. Neither throws (the simulation fails the test on an uncaught actor
 * error): the log refuses writes (produces answered KAFKA_STORAGE_ERROR, what was acknowledged stays
 * readable), and once the disk takes writes again the storage probe heals the partition and writes
 * the files it could not (the checkpoint with the new epoch, the marker).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { readLeaderEpochCheckpoint } from '../../../src/storage/checkpoint';
import { COMPACTED_MARKER } from '../../../src/storage/log-loader';
import { STORAGE_PROBE_INTERVAL_MS, type ProduceReply } from '../../../src/replica/replica-actor';
import type { SimRuntime } from '../../../src/runtime/sim-runtime';
import type { Endpoint } from '../../../src/runtime/runtime';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { ask, bootReplica, LOG_DIR, readAll, REPLICA, TOPIC_ID } from '../../helpers/sim-harness';

const DIR = `${LOG_DIR}/t-0`;

/** An acks=all produce of one record of `value`, keyed by it (a compacted topic refuses keyless records). */
async function produce(sim: SimRuntime, net: Endpoint, value: string): Promise<ProduceReply> {
  const records = buildRecordBatch([{ key: Buffer.from(value), value: Buffer.from(value), headers: [] }]);
  return ask(sim, net, REPLICA, 'replica.produce', { records, acks: -1, timeoutMs: 30_000 });
}

/** Every write and fsync fails with ENOSPC. */
function fillDisk(fs: MemoryFileSystem): void {
  fs.fault = (op) => (op.syscall === 'write' || op.syscall === 'fsync' ? 'ENOSPC' : null);
}

/**
 * While the disk is full: a produce is refused KAFKA_STORAGE_ERROR and `acked` reads back. Then the
 * disk takes writes again: after the probe interval a produce lands at the next offset.
 */
async function assertRefusesThenHeals(sim: SimRuntime, net: Endpoint, fs: MemoryFileSystem, acked: string[]) {
  const refused = await produce(sim, net, 'refused');
  assert.equal(refused.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'a produce while the disk is full');
  assert.deepEqual(await readAll(sim, net), acked, 'what was acknowledged reads back');
  fs.fault = null;
  await sim.advanceTime(2 * STORAGE_PROBE_INTERVAL_MS);
  await sim.settle();
  const reply = await produce(sim, net, 'after');
  assert.equal(reply.errorCode, ErrorCode.NONE, 'a produce once the disk takes writes again');
  assert.equal(reply.baseOffset, acked.length, 'at the next offset');
  assert.deepEqual(await readAll(sim, net), [...acked, 'after']);
}

describe('a full disk on the role-change path of a sole replica (simulation, RF=1)', () => {
  test('a new leader epoch whose leader-epoch checkpoint the disk refuses: the log refuses writes, then heals and writes the epoch', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootReplica(61, fs);
    const acked = ['a0', 'a1'];
    for (const [i, v] of acked.entries()) assert.equal((await produce(sim, net, v)).baseOffset, i);
    fillDisk(fs);
    const role = manager.elect(TOPIC_ID, 0, 0);
    await sim.settle();
    assert.deepEqual(
      readLeaderEpochCheckpoint(fs, `${DIR}/leader-epoch-checkpoint`).map((e) => e.epoch),
      [0],
      'the checkpoint on the disk lacks the new epoch',
    );
    await assertRefusesThenHeals(sim, net, fs, acked);
    assert.deepEqual(readLeaderEpochCheckpoint(fs, `${DIR}/leader-epoch-checkpoint`), [
      { epoch: 0, startOffset: 0 },
      { epoch: role.leaderEpoch, startOffset: 2 },
    ]);
    await sim.shutdown();
  });

  test('cleanup.policy=compact whose compacted marker the disk refuses: the log refuses writes, then heals and writes the marker', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net, manager } = await bootReplica(62, fs);
    const acked = ['a0'];
    assert.equal((await produce(sim, net, 'a0')).errorCode, ErrorCode.NONE);
    fillDisk(fs);
    manager.setConfig(TOPIC_ID, 0, { compactEnabled: true });
    await sim.settle();
    assert.ok(!fs.exists(`${DIR}/${COMPACTED_MARKER}`), 'no marker while the disk is full');
    await assertRefusesThenHeals(sim, net, fs, acked);
    assert.ok(fs.exists(`${DIR}/${COMPACTED_MARKER}`), 'the marker once it heals');
    await sim.shutdown();
  });
});
