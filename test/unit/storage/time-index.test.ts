import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { NO_TIMESTAMP, TimeIndex } from '../../../src/storage/time-index';

const PATH = '/p/00000000000000000100.timeindex';

function fresh() {
  const fs = new MemoryFileSystem();
  fs.mkdirp('/p');
  const { index, problem, created } = TimeIndex.open(fs, PATH, 100);
  return { fs, index, problem, created };
}

function entryBytes(timestampMs: number, relativeOffset: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeBigInt64BE(BigInt(timestampMs), 0);
  b.writeInt32BE(relativeOffset, 8);
  return b;
}

describe('TimeIndex', () => {
  it('creates a missing file and writes 12-byte big-endian entries (timestamp int64, relative offset int32) through', () => {
    const { fs, index, problem, created } = fresh();
    assert.equal(problem, 'missing');
    assert.ok(created);
    assert.ok(index.maybeAppend(1_700_000_000_000, 104));
    assert.ok(index.maybeAppend(1_700_000_000_500, 110));
    assert.deepEqual(
      fs.readFile(PATH),
      Buffer.concat([entryBytes(1_700_000_000_000, 4), entryBytes(1_700_000_000_500, 10)]),
    );
    assert.equal(index.sizeBytes, 24);
    assert.deepEqual(index.lastEntry(), { timestampMs: 1_700_000_000_500, offset: 110 });
  });

  it('maybeAppend adds only a larger timestamp, never NO_TIMESTAMP, and asserts offsets do not go back', () => {
    const { index } = fresh();
    assert.equal(index.maybeAppend(NO_TIMESTAMP, 101), false);
    assert.equal(index.maybeAppend(-5, 101), false);
    assert.equal(index.maybeAppend(0, 101), true, 'timestamp 0 is a timestamp');
    assert.equal(index.maybeAppend(50, 105), true);
    assert.equal(index.maybeAppend(50, 105), false, 'the same entry again (a final entry on close) is ignored');
    assert.equal(index.maybeAppend(40, 108), false);
    assert.throws(() => index.maybeAppend(60, 104), /below the last entry/);
    assert.equal(index.entries, 2);
  });

  it('looks up the entry with the largest timestamp at or below a target, (NO_TIMESTAMP, base) below all', () => {
    const { index } = fresh();
    assert.deepEqual(index.lookup(5000), { timestampMs: NO_TIMESTAMP, offset: 100 });
    for (let i = 1; i <= 50; i++) index.maybeAppend(1000 + i * 10, 100 + i * 3);
    assert.deepEqual(index.lookup(1009), { timestampMs: NO_TIMESTAMP, offset: 100 });
    assert.deepEqual(index.lookup(1010), { timestampMs: 1010, offset: 103 });
    assert.deepEqual(index.lookup(1255), { timestampMs: 1250, offset: 175 });
    assert.deepEqual(index.lookup(99_999), { timestampMs: 1500, offset: 250 });
  });

  it('reloads its entries and keeps only the valid prefix of a damaged file, cutting the rest', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/p');
    const good = [entryBytes(1000, 0), entryBytes(2000, 5), entryBytes(3000, 5)];
    const h = fs.open(PATH, 'rw');
    h.write(Buffer.concat([...good, entryBytes(2500, 9), entryBytes(4000, 12), Buffer.alloc(5)]), 0);
    h.close();
    const { index, problem, created } = TimeIndex.open(fs, PATH, 100);
    assert.equal(created, false);
    assert.match(problem!, /entry 3 .*out of order/);
    assert.equal(index.entries, 3);
    assert.deepEqual(index.entry(1), { timestampMs: 2000, offset: 105 });
    assert.deepEqual(fs.readFile(PATH), Buffer.concat(good));

    const torn = fs.open(PATH, 'rw');
    torn.write(Buffer.alloc(7, 1), 36);
    torn.close();
    const reopened = TimeIndex.open(fs, PATH, 100);
    assert.match(reopened.problem!, /torn tail of 7 bytes/);
    assert.equal(reopened.index.entries, 3);
    assert.equal(TimeIndex.open(fs, PATH, 100).problem, null);
  });

  it('treats a preallocated run of zeros as the end (Kafka sizes an active index up front)', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/p');
    const h = fs.open(PATH, 'rw');
    h.write(Buffer.concat([entryBytes(1000, 0), entryBytes(2000, 1), Buffer.alloc(120)]), 0);
    h.close();
    const { index, problem } = TimeIndex.open(fs, PATH, 100);
    assert.equal(index.entries, 2);
    assert.match(problem!, /entry 2/);
  });

  it('truncateToOffset drops entries at or above an offset; deferred entries are written in one go', () => {
    const { fs, index } = fresh();
    for (let i = 1; i <= 5; i++) index.maybeAppend(i * 100, 100 + i * 10, false);
    assert.equal(fs.readFile(PATH).length, 0);
    index.writePending();
    assert.equal(fs.readFile(PATH).length, 60);
    index.truncateToOffset(130);
    assert.equal(index.entries, 2);
    assert.equal(fs.readFile(PATH).length, 24);
    index.truncateToOffset(131);
    assert.equal(index.entries, 2);
    index.reset();
    assert.equal(index.entries, 0);
    assert.equal(fs.readFile(PATH).length, 0);
  });
});
