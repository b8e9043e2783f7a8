import assert from 'node:assert/strict';
import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { NodeFileSystem } from '../../../src/io/node-file-system';
import { removeDir, tmpDir } from '../storage/helpers';

describe('NodeFileSystem', () => {
  const root = tmpDir();
  after(() => removeDir(root));
  const fs = new NodeFileSystem();

  it('opens, writes at positions, reads, truncates and syncs', () => {
    const dir = path.join(root, 'a', 'b');
    fs.mkdirp(dir);
    fs.mkdirp(dir);
    const file = path.join(dir, 'f');
    const h = fs.open(file, 'rw');
    h.write(Buffer.from('hello'), 0);
    h.write(Buffer.from('!'), 6);
    assert.equal(h.size(), 7);
    const out = Buffer.alloc(10);
    assert.equal(h.read(out, 0, 10, 0), 7);
    assert.equal(h.read(out, 0, 10, 7), 0);
    h.truncate(5);
    h.sync();
    h.close();
    h.close();
    assert.equal(fs.readFile(file).toString(), 'hello');
    assert.throws(() => h.size(), { code: 'EBADF' });
    assert.throws(() => fs.open(path.join(dir, 'missing'), 'r'), { code: 'ENOENT' });
    assert.deepEqual(fs.readdir(dir), ['f']);
    fs.syncDir(dir);
  });

  it('writeFileAtomic replaces via a temp file and leaves no temp behind', () => {
    const file = path.join(root, 'cp');
    fs.writeFileAtomic(file, Buffer.from('one'));
    fs.writeFileAtomic(file, Buffer.from('two'));
    assert.equal(nodeFs.readFileSync(file, 'utf8'), 'two');
    assert.ok(!fs.exists(`${file}.tmp`));
  });

  it('renames, unlinks and removes trees', () => {
    const a = path.join(root, 'x');
    fs.writeFileAtomic(a, Buffer.from('x'));
    fs.rename(a, path.join(root, 'y'));
    assert.ok(!fs.exists(a));
    fs.unlink(path.join(root, 'y'));
    assert.ok(!fs.exists(path.join(root, 'y')));
    fs.mkdirp(path.join(root, 't', 'u'));
    fs.rmrf(path.join(root, 't'));
    fs.rmrf(path.join(root, 't'));
    assert.ok(!fs.exists(path.join(root, 't')));
  });

  it('syncAsync fsyncs on the thread pool; a close while it is in flight waits for it', async () => {
    const file = path.join(root, 'async');
    const h = fs.open(file, 'rw');
    h.write(Buffer.from('durable'), 0);
    await h.syncAsync!();
    h.write(Buffer.from('!'), 7);
    const inFlight = [h.syncAsync!(), h.syncAsync!()];
    h.close();
    assert.throws(() => h.syncAsync!(), { code: 'EBADF' });
    await Promise.all(inFlight);
    h.close();
    assert.equal(fs.readFile(file).toString(), 'durable!');
  });
});
