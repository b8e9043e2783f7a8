import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';

const bytes = (s: string) => Buffer.from(s, 'utf8');

function read(fs: MemoryFileSystem, path: string): string {
  return fs.readFile(path).toString('utf8');
}

describe('MemoryFileSystem', () => {
  it('reads, writes, truncates and lists like a file system', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/a/b');
    const h = fs.open('/a/b/f', 'rw');
    h.write(bytes('hello'), 0);
    h.write(bytes('XY'), 7);
    assert.equal(h.size(), 9);
    assert.deepEqual([...fs.readFile('/a/b/f')], [...bytes('hello'), 0, 0, ...bytes('XY')]);
    const out = Buffer.alloc(4);
    assert.equal(h.read(out, 0, 4, 7), 2);
    assert.equal(h.read(out, 0, 4, 20), 0);
    h.truncate(3);
    h.write(bytes('!'), 5);
    assert.deepEqual([...fs.readFile('/a/b/f')], [...bytes('hel'), 0, 0, ...bytes('!')]);
    assert.deepEqual(fs.readdir('/a'), ['b']);
    assert.ok(fs.exists('/a/b/f'));
    assert.throws(() => fs.open('/a/missing', 'r'), { code: 'ENOENT' });
    assert.throws(() => fs.readFile('/a'), { code: 'EISDIR' });
    assert.throws(() => fs.readdir('/a/b/f'), { code: 'ENOTDIR' });
    assert.throws(() => fs.open('/a/b/f', 'r').write(bytes('x'), 0), { code: 'EBADF' });
    fs.rmrf('/a');
    assert.ok(!fs.exists('/a/b/f'));
    fs.rmrf('/nothing-here');
  });

  it('loses unsynced bytes on a crash and keeps synced ones', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    const h = fs.open('/d/f', 'rw');
    h.write(bytes('durable'), 0);
    h.sync();
    fs.syncDir('/d');
    h.write(bytes('-lost'), 7);
    h.truncate(3); // unsynced truncation is lost too
    assert.equal(fs.unsyncedBytes('/d/f'), 5);
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(read(fs, '/d/f'), 'durable');
    assert.throws(() => h.size(), { code: 'EBADF' });
  });

  it('loses an unsynced truncation followed by a rewrite', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    const h = fs.open('/d/f', 'rw');
    h.write(bytes('original'), 0);
    h.sync();
    fs.syncDir('/d');
    h.truncate(0);
    h.write(bytes('new'), 0);
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(read(fs, '/d/f'), 'original');
    const k = fs.open('/d/f', 'rw');
    k.truncate(2);
    k.write(bytes('XYZ'), 2);
    fs.crash({ kind: 'torn-last-write', keepBytes: 1 });
    assert.equal(read(fs, '/d/f'), 'orX');
  });

  it('keeps overwritten durable bytes until sync (copy-on-write snapshot)', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    const h = fs.open('/d/f', 'rw');
    h.write(bytes('aaaa'), 0);
    h.sync();
    fs.syncDir('/d');
    h.write(bytes('bb'), 1);
    assert.equal(read(fs, '/d/f'), 'abba');
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(read(fs, '/d/f'), 'aaaa');
  });

  it('tears the last write: keeps a prefix of the unsynced tail', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    const a = fs.open('/d/a', 'rw');
    const b = fs.open('/d/b', 'rw');
    fs.syncDir('/d');
    a.write(bytes('0123'), 0);
    a.sync();
    a.write(bytes('4567'), 4);
    b.write(bytes('bbb'), 0);
    a.write(bytes('89'), 8); // last write: file a
    const report = fs.crash({ kind: 'torn-last-write', keepBytes: 5 });
    assert.deepEqual(report, { tornPath: '/d/a', keptBytes: 5 });
    assert.equal(read(fs, '/d/a'), '012345678');
    assert.equal(read(fs, '/d/b'), '');
  });

  it('picks the torn length from the random source, or tears a named file', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    const a = fs.open('/d/a', 'rw');
    fs.syncDir('/d');
    a.write(bytes('abcdef'), 0);
    const report = fs.crash(
      { kind: 'torn-last-write' },
      { next: () => 0, int: (n) => n - 1, bytes16: () => Buffer.alloc(16) },
    );
    assert.equal(report.keptBytes, 6);
    assert.equal(read(fs, '/d/a'), 'abcdef');
    const h = fs.open('/d/a', 'rw');
    h.write(bytes('XYZ'), 6);
    fs.open('/d/a2', 'rw');
    assert.equal(fs.crash({ kind: 'torn-last-write', path: '/d/a', keepBytes: 1 }).tornPath, '/d/a');
    assert.equal(read(fs, '/d/a'), 'abcdefX');
  });

  it('makes directory entries durable only after syncDir', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    const h = fs.open('/d/new', 'rw');
    h.write(bytes('x'), 0);
    h.sync();
    assert.ok(!fs.isDurableEntry('/d/new'));
    fs.crash({ kind: 'lose-unsynced' });
    assert.ok(!fs.exists('/d/new'), 'created file without a dir sync vanishes');

    const k = fs.open('/d/kept', 'rw');
    k.write(bytes('k'), 0);
    k.sync();
    fs.syncDir('/d');
    fs.unlink('/d/kept');
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(read(fs, '/d/kept'), 'k', 'unlinked file without a dir sync comes back');

    fs.rename('/d/kept', '/d/renamed');
    fs.crash({ kind: 'lose-unsynced' });
    assert.deepEqual(fs.readdir('/d'), ['kept']);
  });

  it('writeFileAtomic is durable at once and replaces atomically', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    fs.writeFileAtomic('/d/cp', bytes('one'));
    fs.writeFileAtomic('/d/cp', bytes('two'));
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(read(fs, '/d/cp'), 'two');
    assert.deepEqual(fs.readdir('/d'), ['cp']);
  });

  it('flipByte corrupts the byte at rest', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    const h = fs.open('/d/f', 'rw');
    h.write(bytes('abc'), 0);
    h.sync();
    fs.syncDir('/d');
    fs.flipByte('/d/f', 1, 0x01);
    assert.equal(read(fs, '/d/f'), 'acc');
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(read(fs, '/d/f'), 'acc');
    assert.throws(() => fs.flipByte('/d/f', 3), RangeError);
  });

  describe('syncAsync', () => {
    /** A file with durable 'abc' (entry synced) and a handle on it. */
    function durableFile(fs: MemoryFileSystem) {
      fs.mkdirp('/d');
      const h = fs.open('/d/f', 'rw');
      h.write(bytes('abc'), 0);
      h.sync();
      fs.syncDir('/d');
      return h;
    }

    it('makes durable what was written before the call, not what is written while it is in flight', async () => {
      const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
      const h = durableFile(fs);
      h.write(bytes('def'), 3);
      const synced = h.syncAsync!();
      h.write(bytes('ghi'), 6);
      assert.equal(fs.pendingSyncs, 1);
      assert.equal(fs.completeSyncs(), 1);
      await synced;
      assert.equal(read(fs, '/d/f'), 'abcdefghi', 'the current content is untouched');
      assert.equal(fs.unsyncedBytes('/d/f'), 3, 'the write made during the sync is still pending');
      fs.crash({ kind: 'lose-unsynced' });
      assert.equal(read(fs, '/d/f'), 'abcdef');
    });

    it('keeps the content as of the call durable when a later write overwrites it', async () => {
      const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
      const h = durableFile(fs);
      h.write(bytes('def'), 3);
      const synced = h.syncAsync!();
      h.write(bytes('XY'), 1); // below the end of what the sync covers
      h.truncate(5);
      fs.completeSyncs();
      await synced;
      assert.equal(read(fs, '/d/f'), 'aXYde');
      fs.crash({ kind: 'torn-last-write', path: '/d/f', keepBytes: 1 });
      assert.equal(read(fs, '/d/f'), 'aXcdef', 'durable content plus a prefix of the later operations');
    });

    it('fails on a crash before it completes and leaves the durable content as it was', async () => {
      const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
      const h = durableFile(fs);
      h.write(bytes('def'), 3);
      const synced = h.syncAsync!();
      fs.crash({ kind: 'lose-unsynced' });
      await assert.rejects(synced, { code: 'EIO' });
      assert.equal(fs.pendingSyncs, 0);
      assert.equal(read(fs, '/d/f'), 'abc');
    });

    it('never makes a file less durable than a synchronous sync made it meanwhile', async () => {
      const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
      const h = durableFile(fs);
      h.write(bytes('d'), 3);
      const first = h.syncAsync!();
      h.write(bytes('e'), 4);
      h.sync();
      h.write(bytes('f'), 5);
      fs.completeSyncs();
      await first;
      assert.equal(fs.unsyncedBytes('/d/f'), 1);
      fs.crash({ kind: 'lose-unsynced' });
      assert.equal(read(fs, '/d/f'), 'abcde');
    });

    it('completes on microtasks in call order by default, counting each sync', async () => {
      const fs = new MemoryFileSystem();
      const h = durableFile(fs);
      const g = fs.open('/d/g', 'rw');
      const order: string[] = [];
      const before = fs.syncCount;
      h.write(bytes('1'), 3);
      const a = h.syncAsync!().then(() => order.push('f'));
      g.write(bytes('2'), 0);
      const b = g.syncAsync!().then(() => order.push('g'));
      assert.equal(fs.syncCount - before, 2);
      assert.equal(fs.unsyncedBytes('/d/f'), 1, 'not durable before it completes');
      await Promise.all([a, b]);
      assert.deepEqual(order, ['f', 'g']);
      assert.equal(fs.unsyncedBytes('/d/f'), 0);
      assert.equal(fs.unsyncedBytes('/d/g'), 0);
    });

    it('still completes when the handle is closed meanwhile; a dead handle refuses to start one', async () => {
      const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
      const h = durableFile(fs);
      h.write(bytes('d'), 3);
      const synced = h.syncAsync!();
      h.close();
      fs.completeSyncs();
      await synced;
      assert.equal(fs.unsyncedBytes('/d/f'), 0);
      assert.throws(() => h.syncAsync!(), { code: 'EBADF' });
    });
  });
});

describe('MemoryFileSystem: a full disk and injected faults', () => {
  it('capacityBytes: a write stores what fits, then fails with ENOSPC; freeing space lets it through', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    const h = fs.open('/d/f', 'rw');
    h.write(bytes('0123456789'), 0);
    fs.capacityBytes = 14;
    assert.throws(() => h.write(bytes('abcdefgh'), 10), { code: 'ENOSPC' });
    assert.equal(read(fs, '/d/f'), '0123456789abcd', 'the short write kept the part that fit');
    assert.throws(() => h.truncate(20), { code: 'ENOSPC' });
    h.write(bytes('AB'), 0); // overwriting needs no space
    h.truncate(10); // shrinking frees it
    assert.equal(fs.usedBytes(), 10);
    assert.throws(() => fs.writeFileAtomic('/d/cp', bytes('12345')), { code: 'ENOSPC' });
    assert.deepEqual(fs.readdir('/d'), ['f'], 'the failed atomic write left no temp file');
    fs.capacityBytes = null;
    h.write(bytes('abcdefgh'), 10);
    assert.equal(read(fs, '/d/f'), 'AB23456789abcdefgh');
  });

  it('a fault hook fails the chosen call before it has any effect; a failed fsync makes nothing durable', async () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/d');
    const h = fs.open('/d/f', 'rw');
    h.write(bytes('durable'), 0);
    h.sync();
    fs.syncDir('/d');
    const seen: string[] = [];
    fs.fault = (op) => {
      seen.push(`${op.syscall} ${op.path}`);
      return op.syscall === 'write' || op.syscall === 'fsync' ? 'EIO' : null;
    };
    assert.throws(() => h.write(bytes('x'), 7), { code: 'EIO' });
    assert.equal(read(fs, '/d/f'), 'durable');
    fs.fault = (op) => (op.syscall === 'fsync' ? 'ENOSPC' : null);
    h.write(bytes('+pending'), 7);
    assert.throws(() => h.sync(), { code: 'ENOSPC' });
    await assert.rejects(h.syncAsync!(), { code: 'ENOSPC' });
    assert.throws(() => fs.syncDir('/d'), { code: 'ENOSPC' });
    assert.equal(fs.unsyncedBytes('/d/f'), 8, 'the failed fsyncs made nothing durable');
    fs.fault = (op) => (op.syscall === 'open' && op.creates === true ? 'ENOSPC' : null);
    assert.throws(() => fs.open('/d/new', 'rw'), { code: 'ENOSPC' });
    assert.equal(fs.exists('/d/new'), false);
    fs.fault = null;
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(read(fs, '/d/f'), 'durable');
    assert.deepEqual(seen, ['write /d/f']);
  });
});
