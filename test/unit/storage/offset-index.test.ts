import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { OffsetIndex } from '../../../src/storage/offset-index';

function fresh(logSizeBytes = 1 << 20) {
  const fs = new MemoryFileSystem();
  fs.mkdirp('/p');
  const { index, problem, created } = OffsetIndex.open(fs, '/p/00000000000000000100.index', 100, logSizeBytes);
  return { fs, index, problem, created };
}

describe('OffsetIndex', () => {
  it('creates a missing file and writes 8-byte big-endian entries through', () => {
    const { fs, index, problem, created } = fresh();
    assert.equal(problem, 'missing');
    assert.ok(created);
    index.append(104, 500);
    index.append(110, 1200);
    const bytes = fs.readFile('/p/00000000000000000100.index');
    assert.deepEqual([...bytes], [0, 0, 0, 4, 0, 0, 0x01, 0xf4, 0, 0, 0, 10, 0, 0, 0x04, 0xb0]);
    assert.equal(index.sizeBytes, 16);
  });

  it('looks up the largest entry at or below an offset', () => {
    const { index } = fresh();
    assert.deepEqual(index.lookup(150), { offset: 100, position: 0 });
    for (let i = 1; i <= 100; i++) index.append(100 + i * 10, i * 1000);
    assert.deepEqual(index.lookup(100), { offset: 100, position: 0 });
    assert.deepEqual(index.lookup(109), { offset: 100, position: 0 });
    assert.deepEqual(index.lookup(110), { offset: 110, position: 1000 });
    assert.deepEqual(index.lookup(555), { offset: 550, position: 45000 });
    assert.deepEqual(index.lookup(1e9), { offset: 1100, position: 100000 });
    assert.deepEqual(index.lastEntry(), { offset: 1100, position: 100000 });
  });

  it('asserts that entries increase', () => {
    const { index } = fresh();
    index.append(105, 300);
    assert.throws(() => index.append(105, 400));
    assert.throws(() => index.append(106, 300));
    assert.throws(() => index.append(99, 400));
  });

  it('reloads a valid file and keeps only the valid prefix of a damaged one', () => {
    const { fs, index } = fresh();
    for (let i = 1; i <= 5; i++) index.append(100 + i, i * 100);
    index.close();
    const reopened = OffsetIndex.open(fs, '/p/00000000000000000100.index', 100, 1000);
    assert.equal(reopened.problem, null);
    assert.equal(reopened.index.entries, 5);
    reopened.index.close();

    // Positions beyond the log: entries 3.. dropped and cut from the file.
    const short = OffsetIndex.open(fs, '/p/00000000000000000100.index', 100, 300);
    assert.match(short.problem!, /entry 2/);
    assert.equal(short.index.entries, 2);
    assert.equal(fs.readFile('/p/00000000000000000100.index').length, 16);
    short.index.close();

    // Torn tail.
    const h = fs.open('/p/00000000000000000100.index', 'rw');
    h.write(Buffer.from([0, 0, 0]), 16);
    h.close();
    const torn = OffsetIndex.open(fs, '/p/00000000000000000100.index', 100, 1000);
    assert.match(torn.problem!, /torn/);
    assert.equal(torn.index.entries, 2);
    assert.equal(fs.readFile('/p/00000000000000000100.index').length, 16);
  });

  it('treats zeroed (preallocated-looking) entries as invalid', () => {
    const { fs, index } = fresh();
    index.append(101, 100);
    index.close();
    const h = fs.open('/p/00000000000000000100.index', 'rw');
    h.write(Buffer.alloc(32), 8);
    h.close();
    const re = OffsetIndex.open(fs, '/p/00000000000000000100.index', 100, 1000);
    assert.equal(re.index.entries, 1);
    assert.notEqual(re.problem, null);
  });

  it('truncates by position and writes deferred entries in one go', () => {
    const { fs, index } = fresh();
    for (let i = 1; i <= 4; i++) index.append(100 + i, i * 100, false);
    assert.equal(fs.readFile('/p/00000000000000000100.index').length, 0);
    index.writePending();
    assert.equal(fs.readFile('/p/00000000000000000100.index').length, 32);
    index.truncateToPosition(250);
    assert.equal(index.entries, 2);
    assert.equal(fs.readFile('/p/00000000000000000100.index').length, 16);
    index.reset();
    assert.equal(index.entries, 0);
    assert.equal(fs.readFile('/p/00000000000000000100.index').length, 0);
  });

  it('submits an fsync only when the file changed since the last one started, and answers an unchanged one with it', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    fs.mkdirp('/p');
    const { index } = OffsetIndex.open(fs, '/p/00000000000000000100.index', 100, 1 << 20);
    index.append(104, 500);
    const first = index.syncAsync();
    assert.equal(fs.pendingSyncs, 1);
    let secondDone = false;
    const second = index.syncAsync().then(() => (secondDone = true));
    assert.equal(fs.pendingSyncs, 1, 'unchanged: the fsync in flight covers it');
    await Promise.resolve();
    assert.equal(secondDone, false, 'not before the fsync in flight completes');
    fs.completeSyncs();
    await first;
    await second;
    await index.syncAsync();
    assert.equal(fs.pendingSyncs, 0, 'unchanged since a completed fsync: none');
    index.sync();
    assert.equal(fs.syncCount, 1, 'nor a synchronous one');
    index.append(110, 1200, false); // pending until the sync writes it
    const third = index.syncAsync();
    assert.equal(fs.pendingSyncs, 1, 'a write since: a new fsync');
    fs.completeSyncs();
    await third;
    index.truncateToEntries(1);
    void index.syncAsync();
    assert.equal(fs.pendingSyncs, 1, 'a truncation since: a new fsync');
    fs.completeSyncs();
  });

  it('submits a real fsync again after one failed', async () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/p');
    const { index } = OffsetIndex.open(fs, '/p/00000000000000000100.index', 100, 1 << 20);
    index.append(104, 500);
    let fsyncs = 0;
    let failing = true;
    fs.fault = (op) => {
      if (op.syscall !== 'fsync') return null;
      fsyncs++;
      return failing ? 'EIO' : null;
    };
    await assert.rejects(index.syncAsync(), /EIO/);
    failing = false;
    await index.syncAsync();
    assert.equal(fsyncs, 2, 'the failed fsync covered nothing: a second one is submitted');
  });
});
