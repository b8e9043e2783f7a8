/**
 * A new partition's partition.metadata and leader-epoch-checkpoint are written without fsync at
 * start (issue 13 item 4) and fsynced at the replica's first checkpoint tick or a clean stop. These
 * tests check both ends: a power loss before that sync loses them, and the restart writes them again
 * with the right topic id and epoch; after the tick (or a clean stop) a power loss keeps them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { readLeaderEpochCheckpoint, readPartitionMetadata } from '../../../src/storage/checkpoint';
import {
  ask,
  batch,
  bootReplica,
  LOG_DIR,
  LOG_DIR_ACTOR,
  powerCycle,
  readAll,
  REPLICA,
  TOPIC_ID,
} from '../../helpers/sim-harness';

const DIR = `${LOG_DIR}/t-0`;

function topicIdOnDisk(fs: MemoryFileSystem): string | null {
  return readPartitionMetadata(fs, `${DIR}/partition.metadata`)?.topicId ?? null;
}

describe('a new partition defers the fsync of its start-up files (simulation)', () => {
  test('a power loss before the first checkpoint tick loses them; the restart writes them again', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootReplica(3, fs);
    assert.equal(topicIdOnDisk(fs), TOPIC_ID, 'written at start (page cache)');
    assert.deepEqual(readLeaderEpochCheckpoint(fs, `${DIR}/leader-epoch-checkpoint`), [{ epoch: 0, startOffset: 0 }]);
    const syncsBefore = fs.syncCount;
    await powerCycle(sim, fs, { kind: 'lose-unsynced' }, [LOG_DIR_ACTOR, REPLICA]);
    // The restart found neither file (the crash dropped the unsynced renames) and wrote both again.
    assert.equal(topicIdOnDisk(fs), TOPIC_ID, 'partition.metadata rewritten with the topic id');
    assert.deepEqual(readLeaderEpochCheckpoint(fs, `${DIR}/leader-epoch-checkpoint`), [{ epoch: 0, startOffset: 0 }]);
    assert.equal(fs.syncCount, syncsBefore, 'the restart of an empty log fsyncs nothing either');
    const reply = await ask(sim, net, REPLICA, 'replica.produce', {
      records: batch(['a', 'b']),
      acks: -1,
      timeoutMs: 30_000,
    });
    assert.equal(reply.errorCode, ErrorCode.NONE);
    assert.equal(reply.baseOffset, 0);
    assert.deepEqual(await readAll(sim, net), ['a', 'b']);
    await sim.shutdown();
  });

  test('the first checkpoint tick fsyncs them: a power loss afterwards keeps both', async () => {
    const fs = new MemoryFileSystem();
    const { sim } = await bootReplica(4, fs);
    await sim.advanceTime(5_000);
    await sim.settle();
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(topicIdOnDisk(fs), TOPIC_ID, 'partition.metadata survived the power loss');
    assert.deepEqual(readLeaderEpochCheckpoint(fs, `${DIR}/leader-epoch-checkpoint`), [{ epoch: 0, startOffset: 0 }]);
    await sim.shutdown();
  });

  test('a clean stop fsyncs them', async () => {
    const fs = new MemoryFileSystem();
    const { sim } = await bootReplica(5, fs);
    await sim.stopActor(REPLICA);
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(topicIdOnDisk(fs), TOPIC_ID, 'partition.metadata survived the power loss');
    assert.deepEqual(readLeaderEpochCheckpoint(fs, `${DIR}/leader-epoch-checkpoint`), [{ epoch: 0, startOffset: 0 }]);
    await sim.shutdown();
  });
});
