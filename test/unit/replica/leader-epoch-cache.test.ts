/**
 * The leader-epoch cache's checkpoint on a disk that refuses writes (issue 12 item 1's full-disk
 * findings): a change stays in memory, the method throws a KafkaStorageError (so the replica takes
 * the log offline, as Kafka's LogDirFailureChannel does for an IOException on any log dir file),
 * the file keeps its previous entries, and the next write, or persistIfStale, brings it up to date.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeaderEpochCache } from '../../../src/replica/leader-epoch-cache';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { readLeaderEpochCheckpoint } from '../../../src/storage/checkpoint';
import { KafkaStorageError } from '../../../src/storage/storage-error';

const DIR = '/data/t-0';
const FILE = `${DIR}/leader-epoch-checkpoint`;

function cacheOn(fs: MemoryFileSystem): LeaderEpochCache {
  fs.mkdirp(DIR);
  const cache = LeaderEpochCache.load(fs, DIR, () => []);
  cache.assign(0, 0);
  cache.assign(1, 5);
  return cache;
}

describe('LeaderEpochCache on a disk that refuses writes', () => {
  for (const code of ['ENOSPC', 'EIO'])
    it(`assign under ${code}: a KafkaStorageError, the entry kept in memory, the file unchanged until persistIfStale`, () => {
      const fs = new MemoryFileSystem();
      const cache = cacheOn(fs);
      fs.fault = (op) => (op.syscall === 'write' || op.syscall === 'fsync' ? code : null);
      assert.throws(
        () => cache.assign(2, 9),
        (error: unknown) => error instanceof KafkaStorageError && error.code === code,
      );
      assert.equal(cache.latestEpoch, 2, 'the new epoch is in memory');
      assert.deepEqual(
        readLeaderEpochCheckpoint(fs, FILE).map((e) => e.epoch),
        [0, 1],
        'the file keeps its entries',
      );
      assert.throws(() => cache.persistIfStale(), KafkaStorageError, 'still refused');
      fs.fault = null;
      cache.persistIfStale();
      assert.deepEqual(readLeaderEpochCheckpoint(fs, FILE), cache.list(), 'written once the disk takes it');
    });

  it('persistIfStale writes nothing when the last write succeeded', () => {
    const fs = new MemoryFileSystem();
    const cache = cacheOn(fs);
    let writes = 0;
    fs.fault = (op) => {
      if (op.syscall === 'write') writes++;
      return null;
    };
    cache.persistIfStale();
    assert.equal(writes, 0);
    cache.truncateFromEnd(5);
    assert.ok(writes > 0, 'a change writes the file');
    assert.deepEqual(readLeaderEpochCheckpoint(fs, FILE), [{ epoch: 0, startOffset: 0 }]);
  });

  it('truncateFromEnd under ENOSPC keeps the truncation in memory; the next successful change writes it all', () => {
    const fs = new MemoryFileSystem();
    const cache = cacheOn(fs);
    fs.fault = (op) => (op.syscall === 'write' ? 'ENOSPC' : null);
    assert.throws(() => cache.truncateFromEnd(5), { name: 'KafkaStorageError', code: 'ENOSPC' });
    assert.equal(cache.latestEpoch, 0);
    fs.fault = null;
    cache.assign(3, 7);
    assert.deepEqual(readLeaderEpochCheckpoint(fs, FILE), [
      { epoch: 0, startOffset: 0 },
      { epoch: 3, startOffset: 7 },
    ]);
  });
});
