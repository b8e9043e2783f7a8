/**
 * Review of the full-disk change (review-diskfull), Log level: a compaction swap the disk refuses
 * half-way must leave the log readable (fails on main as of 4448ac9).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Log } from '../../../src/storage/log';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { fixedClock, makeBatch, recordingLogger } from './helpers';

const DIR = '/data/compacted-0';

function open(fs: MemoryFileSystem): Log {
  return Log.open({
    fs,
    dir: DIR,
    config: { segmentBytes: 350, indexIntervalBytes: 0 },
    recoveryPoint: 0,
    logger: recordingLogger(),
    clock: fixedClock(),
    compacted: true,
  });
}

describe('full-disk review: compaction swap', () => {
  for (const syscall of ['rename', 'fsync', 'write'] as const) {
    it(`F4: ${syscall} failing (EIO/ENOSPC) in the middle of replaceWithCleaned leaves every segment in the log`, () => {
      const fs = new MemoryFileSystem();
      const log = open(fs);
      for (let i = 0; i < 7; i++)
        log.append(makeBatch({ records: 2, payloadBytes: 39, seed: i, baseTimestampMs: 1000 + i }), 1);
      log.flush();
      const bases = log.segmentBaseOffsets();
      assert.ok(bases.length >= 3, `segments ${bases.join(',')}`);
      const first = log.segmentInfos()[0]!;
      const cleaned = log.readSegmentBytes(first.baseOffset); // "cleaned" to itself
      const before = log.read(0, 1 << 20, log.logEndOffset, true);
      let swapSteps = 0;
      fs.fault = (op) => {
        // Only calls after the swap file is in place: the rename of .swap over .log and what follows.
        if (op.path.endsWith('.cleaned') || (op.path.endsWith('.log.swap') && op.syscall !== 'rename')) return null;
        if (op.syscall !== syscall) return null;
        swapSteps++;
        return swapSteps === (syscall === 'fsync' ? 2 : 1) ? (syscall === 'write' ? 'ENOSPC' : 'EIO') : null;
      };
      try {
        log.replaceWithCleaned([first.baseOffset], [first.sizeBytes], cleaned);
      } catch (error) {
        // a storage error is fine; what matters is the state it leaves
        void error;
      }
      fs.fault = null;
      assert.deepEqual(log.segmentBaseOffsets(), bases, 'no segment vanished from the log');
      const after = log.read(0, 1 << 20, log.logEndOffset, true);
      assert.deepEqual(after, before, 'the log reads back unchanged');
    });
  }

  for (const syscall of ['rename', 'fsync', 'write'] as const) {
    it(`F4: after ${syscall} failed mid-swap, the log refuses writes until healing completes the swap, and a crash then keeps it`, () => {
      const fs = new MemoryFileSystem();
      const log = open(fs);
      for (let i = 0; i < 7; i++)
        log.append(makeBatch({ records: 2, payloadBytes: 39, seed: i, baseTimestampMs: 1000 + i }), 1);
      log.flush();
      const bases = log.segmentBaseOffsets();
      const [first, second] = log.segmentInfos();
      // "Clean" the first two segments into one holding both (every record kept).
      const cleaned = Buffer.concat([
        log.readSegmentBytes(first!.baseOffset),
        log.readSegmentBytes(second!.baseOffset),
      ]);
      const before = log.read(0, 1 << 20, log.logEndOffset, true);
      let steps = 0;
      fs.fault = (op) => {
        if (op.path.endsWith('.cleaned') || (op.path.endsWith('.log.swap') && op.syscall !== 'rename')) return null;
        if (op.syscall !== syscall) return null;
        steps++;
        return steps === (syscall === 'fsync' ? 2 : 1) ? (syscall === 'write' ? 'ENOSPC' : 'EIO') : null;
      };
      assert.throws(
        () =>
          log.replaceWithCleaned(
            [first!.baseOffset, second!.baseOffset],
            [first!.sizeBytes, second!.sizeBytes],
            cleaned,
          ),
        (error: Error) => error.name === 'KafkaStorageError',
      );
      fs.fault = null;
      assert.notEqual(log.storageFailure, null, 'a half-done swap makes the log refuse writes');
      assert.deepEqual(log.segmentBaseOffsets(), bases, 'the old segments still serve reads');
      assert.deepEqual(log.read(0, 1 << 20, log.logEndOffset, true), before);
      assert.equal(log.reestablishDurablePrefix(0), true);
      assert.equal(log.storageFailure, null);
      assert.deepEqual(log.segmentBaseOffsets(), [bases[0], ...bases.slice(2)], 'the swap completed');
      assert.deepEqual(log.read(0, 1 << 20, log.logEndOffset, true), before);
      log.close();
      fs.crash({ kind: 'lose-unsynced' });
      const reopened = open(fs);
      assert.deepEqual(reopened.segmentBaseOffsets(), [bases[0], ...bases.slice(2)]);
      assert.deepEqual(reopened.read(0, 1 << 20, reopened.logEndOffset, true), before);
      reopened.close();
    });
  }
});

describe('full-disk review: asynchronous flush', () => {
  it('F3: an asynchronous flush that succeeds after the log recorded a failure does not advance the recovery point', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    const log = Log.open({
      fs,
      dir: '/data/t-0',
      config: { segmentBytes: 1 << 20, indexIntervalBytes: 0 },
      recoveryPoint: 0,
      logger: recordingLogger(),
      clock: fixedClock(),
    });
    log.append(makeBatch({ records: 2, seed: 1 }), 1);
    const inFlight = log.flushAsync();
    // An append fails and its undo fails too: the log records a failure while the fsync is in flight.
    fs.fault = (op) => (op.syscall === 'write' ? 'ENOSPC' : op.syscall === 'ftruncate' ? 'EIO' : null);
    assert.throws(() => log.append(makeBatch({ records: 2, seed: 2 }), 1), { name: 'KafkaStorageError' });
    fs.fault = null;
    assert.notEqual(log.storageFailure, null);
    fs.completeSyncs();
    assert.equal(await inFlight, 0);
    assert.equal(log.recoveryPoint, 0, 'the success is meaningless once a failure was recorded');
    log.close();
  });
});

describe('full-disk review: truncation', () => {
  it('L1: an unlink the disk refuses during truncateTo leaves the segment in the log (no later offsets over files still on disk)', () => {
    const inner = new MemoryFileSystem();
    let failUnlink = false;
    const fs = new Proxy(inner, {
      get(target, prop) {
        if (prop === 'unlink')
          return (path: string) => {
            if (failUnlink && path.endsWith('.log'))
              throw Object.assign(new Error(`EIO: unlink ${path}`), { code: 'EIO', syscall: 'unlink' });
            target.unlink(path);
          };
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const log = Log.open({
      fs,
      dir: '/data/t-0',
      config: { segmentBytes: 350, indexIntervalBytes: 0 },
      recoveryPoint: 0,
      logger: recordingLogger(),
      clock: fixedClock(),
    });
    for (let i = 0; i < 7; i++) log.append(makeBatch({ records: 2, payloadBytes: 39, seed: i }), 1);
    log.flush();
    const bases = log.segmentBaseOffsets();
    assert.ok(bases.length >= 3, `segments ${bases.join(',')}`);
    const leo = log.logEndOffset;
    failUnlink = true;
    assert.throws(() => log.truncateTo(1), { code: 'EIO' });
    failUnlink = false;
    assert.deepEqual(log.segmentBaseOffsets(), bases, 'the segment whose file stayed is still in the log');
    assert.equal(log.logEndOffset, leo);
    assert.equal(log.read(0, 1 << 20, leo, true).kind, 'ok');
    log.truncateTo(1);
    assert.deepEqual(log.segmentBaseOffsets(), [0]);
    log.close();
  });
});
