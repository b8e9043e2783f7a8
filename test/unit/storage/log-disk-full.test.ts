/**
 * A full disk and failing I/O under the Log (issue 10, F15 DiskFull / F16 DiskError): ENOSPC at every
 * file-system call of an append, of a roll and of a flush. Each case checks that the append is
 * refused with a KafkaStorageError, that no partial batch or half-created segment is left, that what
 * was appended before reads back unchanged and dense, and that once the disk takes writes again the
 * next append lands at the next offset.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KafkaStorageError, Log, type LogConfig } from '../../../src/storage/log';
import { MemoryFileSystem, type FsOperation } from '../../../src/io/memory-file-system';
import { fixedClock, makeBatch, recordingLogger, splitBatches } from './helpers';

const DIR = '/data/orders-0';

function open(fs: MemoryFileSystem, config: Partial<LogConfig> = {}): Log {
  return Log.open({
    fs,
    dir: DIR,
    // index.interval.bytes 0: every append also writes an offset and a time index entry.
    config: { segmentBytes: config.segmentBytes ?? 100_000, indexIntervalBytes: config.indexIntervalBytes ?? 0 },
    recoveryPoint: 0,
    logger: recordingLogger(),
    clock: fixedClock(),
  });
}

function readAll(log: Log): Buffer {
  const r = log.read(log.logStartOffset, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
  assert.equal(r.kind, 'ok');
  return r.kind === 'ok' ? r.records : Buffer.alloc(0);
}

/** Appends `count` 2-record batches with increasing timestamps; returns copies of them as stored. */
function appendMany(log: Log, count: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const batch = makeBatch({
      records: 2,
      payloadBytes: 39,
      seed: log.logEndOffset,
      baseTimestampMs: 1000 + log.logEndOffset,
    });
    log.append(batch, 1);
    out.push(Buffer.from(batch));
  }
  return out;
}

/**
 * Arms `fs` to fail the `n`-th call (1-based) matching `syscalls` with `code`; `fired()` says
 * whether it did, `calls()` how many matching calls were seen.
 */
function failNth(fs: MemoryFileSystem, n: number, code: string, syscalls: ReadonlyArray<FsOperation['syscall']>) {
  let seen = 0;
  let fired = false;
  fs.fault = (op) => {
    if (!syscalls.includes(op.syscall)) return null;
    seen++;
    if (seen !== n) return null;
    fired = true;
    return code;
  };
  return { fired: () => fired, calls: () => seen };
}

/** The log holds exactly `stored`, dense, and its files end where it does. */
function assertHolds(log: Log, fs: MemoryFileSystem, stored: Buffer[]): void {
  const bytes = readAll(log);
  assert.deepEqual(bytes, Buffer.concat(stored), 'the log reads back what was appended, nothing more');
  let next = 0;
  for (const b of splitBatches(bytes)) {
    assert.equal(b.baseOffset, next, 'offsets are dense');
    next = b.lastOffset + 1;
  }
  assert.equal(log.logEndOffset, next);
  const onDisk = log.segmentBaseOffsets().reduce((sum, base) => {
    const name = String(base).padStart(20, '0');
    return sum + fs.readFile(`${DIR}/${name}.log`).length;
  }, 0);
  assert.equal(onDisk, log.sizeBytes, 'no partial batch left in a .log file');
  assert.equal(onDisk, bytes.length);
}

const WRITE_CALLS: ReadonlyArray<FsOperation['syscall']> = ['open', 'write', 'ftruncate', 'rename'];

describe('Log: ENOSPC and EIO (issue 10)', () => {
  it('ENOSPC at every write of an append (log and both indexes) leaves the log as it was; the next append succeeds', () => {
    let steps = 0;
    for (let n = 1; n < 20; n++) {
      const fs = new MemoryFileSystem();
      const log = open(fs);
      const stored = appendMany(log, 3);
      const fault = failNth(fs, n, 'ENOSPC', WRITE_CALLS);
      const batch = makeBatch({ records: 2, payloadBytes: 39, seed: 99, baseTimestampMs: 5000 });
      let failed = false;
      try {
        log.append(batch, 1);
        stored.push(Buffer.from(batch));
      } catch (error) {
        assert.ok(error instanceof KafkaStorageError, String(error));
        assert.equal(error.code, 'ENOSPC');
        failed = true;
      }
      assert.equal(failed, fault.fired(), `call ${n}: refused exactly when the fault fired`);
      fs.fault = null;
      assert.equal(log.storageFailure, null, 'a refused append does not take the log offline');
      assertHolds(log, fs, stored);
      // Space is back: the next append lands at the next offset, and the log survives a reopen.
      const next = log.logEndOffset;
      stored.push(...appendMany(log, 1));
      assert.equal(splitBatches(readAll(log)).at(-1)!.baseOffset, next);
      log.flush();
      log.close();
      const reopened = open(fs);
      assertHolds(reopened, fs, stored);
      reopened.close();
      if (!fault.fired()) break;
      steps++;
    }
    assert.ok(steps >= 3, `an append makes at least 3 writes (log, index, time index), saw ${steps}`);
  });

  for (const indexIntervalBytes of [0, 100_000]) {
    // With a large interval the roll writes the old segment's final time index entry (onBecomeInactive).
    it(`ENOSPC at every call of a roll leaves the previous segment active and no half-created files (index.interval.bytes ${indexIntervalBytes})`, () => {
      let steps = 0;
      for (let n = 1; n < 30; n++) {
        const fs = new MemoryFileSystem();
        const log = open(fs, { segmentBytes: 350, indexIntervalBytes }); // three 100-byte batches per segment
        const stored = appendMany(log, 3);
        assert.deepEqual(log.segmentBaseOffsets(), [0]);
        const filesBefore = fs.readdir(DIR);
        const fault = failNth(fs, n, 'ENOSPC', WRITE_CALLS);
        const batch = makeBatch({ records: 2, payloadBytes: 39, seed: 99, baseTimestampMs: 5000 });
        let failed = false;
        try {
          log.append(batch, 1); // rolls a segment at offset 6
          stored.push(Buffer.from(batch));
        } catch (error) {
          assert.ok(error instanceof KafkaStorageError && error.code === 'ENOSPC', String(error));
          failed = true;
        }
        assert.equal(failed, fault.fired());
        fs.fault = null;
        if (failed) {
          assert.deepEqual(log.segmentBaseOffsets(), [0], `call ${n}: the previous segment stays active`);
          assert.deepEqual(fs.readdir(DIR), filesBefore, `call ${n}: no half-created segment files`);
          assert.equal(log.activeSegmentBaseOffset, 0);
        } else {
          assert.deepEqual(log.segmentBaseOffsets(), [0, 6]);
        }
        assertHolds(log, fs, stored);
        stored.push(...appendMany(log, 1));
        assertHolds(log, fs, stored);
        log.flush();
        log.close();
        const reopened = open(fs, { segmentBytes: 350, indexIntervalBytes });
        assertHolds(reopened, fs, stored);
        reopened.close();
        if (!fault.fired()) break;
        steps++;
      }
      // Creating the .log, .index and .timeindex, then the batch's write (a segment's first batch needs no index entry).
      assert.ok(steps >= 4, `a roll and its append make at least 4 calls, saw ${steps}`);
    });
  }

  it('a disk that fills up mid-batch keeps no partial batch (a short write is cut back), and heals when space is freed', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs, { segmentBytes: 1000 });
    const stored = appendMany(log, 2);
    fs.capacityBytes = fs.usedBytes() + 1234; // room for about a dozen batches and their index entries
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      try {
        stored.push(...appendMany(log, 1));
      } catch (error) {
        assert.ok(error instanceof KafkaStorageError && error.code === 'ENOSPC', String(error));
        refused++;
      }
    }
    assert.ok(refused > 0 && stored.length > 2, `${stored.length} appended, ${refused} refused`);
    assert.ok(fs.usedBytes() <= fs.capacityBytes);
    assertHolds(log, fs, stored);
    fs.capacityBytes = null; // space freed
    const next = log.logEndOffset;
    stored.push(...appendMany(log, 3));
    assert.equal(splitBatches(readAll(log)).at(-3)!.baseOffset, next);
    assertHolds(log, fs, stored);
  });

  for (const code of ['ENOSPC', 'EIO']) {
    for (const kind of ['flush', 'flushAsync'] as const) {
      it(`${code} on an fsync (${kind}) is never counted as durable; the log refuses writes until a durable prefix is re-established`, async () => {
        for (let n = 1; n < 10; n++) {
          const fs = new MemoryFileSystem();
          const log = open(fs, { segmentBytes: 350 });
          const durable = appendMany(log, 4); // two segments
          log.flush();
          const pending = appendMany(log, 3); // crosses into a third segment
          const fault = failNth(fs, n, code, ['fsync']);
          let failed = false;
          try {
            if (kind === 'flush') log.flush();
            else await log.flushAsync();
          } catch (error) {
            assert.ok(error instanceof KafkaStorageError && error.code === code, String(error));
            failed = true;
          }
          assert.equal(failed, fault.fired());
          if (!failed) break;
          assert.equal(log.recoveryPoint, 8, 'the recovery point does not move past the failed fsync');
          assert.ok(log.storageFailure !== null);
          assert.throws(() => log.append(makeBatch({ records: 1 }), 1), KafkaStorageError);
          assert.throws(() => log.flush(), KafkaStorageError, 'a retried fsync is not trusted');
          // Readers still see everything appended (under write.caching=true they may have).
          assert.deepEqual(readAll(log), Buffer.concat([...durable, ...pending]));
          // Still failing: the probe fails too and the log keeps refusing writes.
          fs.fault = () => code;
          assert.throws(() => log.reestablishDurablePrefix(0), KafkaStorageError);
          assert.ok(log.storageFailure !== null);
          fs.fault = null;
          // Readers saw past the durable point (HW 14 > recovery point 8): only a restart may judge.
          assert.equal(log.reestablishDurablePrefix(14), false);
          assert.ok(log.storageFailure !== null);
          // The disk works again: cut back to the last durable point (never counting the failed bytes).
          assert.equal(log.reestablishDurablePrefix(8), true);
          assert.equal(log.storageFailure, null);
          assert.equal(log.logEndOffset, 8);
          assert.equal(log.recoveryPoint, 8);
          assertHolds(log, fs, durable);
          assert.deepEqual(log.segmentBaseOffsets(), [0, 6]);
          const after = appendMany(log, 2);
          assert.equal(splitBatches(readAll(log)).at(-2)!.baseOffset, 8);
          log.flush();
          // What is durable now survives a power loss.
          fs.crash({ kind: 'lose-unsynced' });
          const reopened = open(fs, { segmentBytes: 350 });
          assertHolds(reopened, fs, [...durable, ...after]);
          reopened.close();
        }
      });
    }
  }
});

describe('Log: a truncation the disk refuses (Kafka: UnifiedLog.truncateTo under maybeHandleIOException)', () => {
  for (const code of ['ENOSPC', 'EIO'])
    it(`an fsync of truncateTo failing with ${code} throws a KafkaStorageError, the log refuses writes, ends at the cut and counts nothing past it durable`, () => {
      const fs = new MemoryFileSystem();
      const log = open(fs, { segmentBytes: 350 }); // three 100-byte batches per segment
      const stored = appendMany(log, 5); // offsets 0-9, segments at 0 and 6
      log.flush();
      assert.deepEqual(log.segmentBaseOffsets(), [0, 6]);
      assert.equal(log.recoveryPoint, 10);
      fs.fault = (op) => (op.syscall === 'fsync' ? code : null);
      assert.throws(
        () => log.truncateTo(4),
        (error: unknown) => error instanceof KafkaStorageError && error.code === code,
      );
      fs.fault = null;
      assert.equal(log.storageFailure?.code, code, 'the log refuses writes');
      assert.equal(log.logEndOffset, 4, 'the log ends at the cut in memory');
      assert.deepEqual(log.segmentBaseOffsets(), [0], 'the segment past the cut is gone');
      assert.ok(log.recoveryPoint <= 4, `nothing past the cut counts as durable (${log.recoveryPoint})`);
      assertHolds(log, fs, stored.slice(0, 2));
      assert.throws(() => log.append(makeBatch({ records: 2, payloadBytes: 39, seed: 7 }), 1), KafkaStorageError);
      // Healing (one replica's probe) re-establishes the cut as the durable prefix.
      assert.equal(log.reestablishDurablePrefix(0), true);
      assert.equal(log.storageFailure, null);
      assert.equal(log.logEndOffset, 4);
      fs.crash({ kind: 'lose-unsynced' });
      log.close();
      const reopened = open(fs, { segmentBytes: 350 });
      assertHolds(reopened, fs, stored.slice(0, 2));
      reopened.close();
    });

  it('an ftruncate failing with EIO half-way through truncateTo (the later segments gone) leaves the log ending at the segment left, refusing writes', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs, { segmentBytes: 350 });
    const stored = appendMany(log, 8); // offsets 0-15, segments at 0, 6 and 12
    log.flush();
    assert.deepEqual(log.segmentBaseOffsets(), [0, 6, 12]);
    fs.fault = (op) => (op.syscall === 'ftruncate' ? 'EIO' : null);
    assert.throws(() => log.truncateTo(2), { name: 'KafkaStorageError', code: 'EIO' });
    fs.fault = null;
    assert.deepEqual(log.segmentBaseOffsets(), [0], 'the segments past the target went before the error');
    assert.equal(log.logEndOffset, 6, 'the log ends where its last segment does');
    assert.ok(log.recoveryPoint <= 2, `nothing past the target counts as durable (${log.recoveryPoint})`);
    assert.notEqual(log.storageFailure, null);
    assertHolds(log, fs, stored.slice(0, 3));
    log.close();
  });

  it('an fsync of truncateFullyAndStartAt failing throws a KafkaStorageError, the log refuses writes and is the fresh segment', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs);
    appendMany(log, 3);
    log.flush();
    fs.fault = (op) => (op.syscall === 'fsync' ? 'EIO' : null);
    assert.throws(() => log.truncateFullyAndStartAt(40), { name: 'KafkaStorageError', code: 'EIO' });
    fs.fault = null;
    assert.notEqual(log.storageFailure, null);
    assert.deepEqual(log.segmentBaseOffsets(), [40]);
    assert.equal(log.logStartOffset, 40);
    assert.equal(log.logEndOffset, 40);
    assert.equal(log.recoveryPoint, 40);
    log.close();
  });

  it('failStorage (an I/O error on a file beside the log, the leader-epoch checkpoint) makes the log refuse writes; anything else is rethrown', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs);
    appendMany(log, 1);
    const bug = new RangeError('not an I/O error');
    assert.throws(
      () => log.failStorage(bug, 'writing x'),
      (e: unknown) => e === bug,
    );
    assert.equal(log.storageFailure, null);
    const enospc = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    const failure = log.failStorage(enospc, 'writing the leader-epoch checkpoint');
    assert.ok(failure instanceof KafkaStorageError);
    assert.equal(failure.code, 'ENOSPC');
    assert.equal(log.storageFailure, failure);
    assert.throws(() => log.append(makeBatch({ records: 2, payloadBytes: 39, seed: 3 }), 1), KafkaStorageError);
    log.close();
  });
});
