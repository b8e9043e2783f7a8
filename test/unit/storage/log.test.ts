import assert from 'node:assert/strict';
import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import * as L from '../../../src/protocol/record-batch/layout';
import type { FileSystem } from '../../../src/io/file-system';
import { Log, type LogConfig } from '../../../src/storage/log';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { NodeFileSystem } from '../../../src/io/node-file-system';
import { fixedClock, makeBatch, recordingLogger, removeDir, splitBatches, tmpDir, type LogLine } from './helpers';

const DIR = '/data/orders-0';
/** 100-byte batches: 61-byte header + 39 payload bytes. */
const BATCH_PAYLOAD = 39;

function open(
  fs: FileSystem,
  opts: Partial<LogConfig> & { recoveryPoint?: number; logStartOffset?: number; dir?: string; lines?: LogLine[] } = {},
): Log {
  return Log.open({
    fs,
    dir: opts.dir ?? DIR,
    config: { segmentBytes: opts.segmentBytes ?? 1000, indexIntervalBytes: opts.indexIntervalBytes ?? 150 },
    recoveryPoint: opts.recoveryPoint ?? 0,
    ...(opts.logStartOffset === undefined ? {} : { logStartOffset: opts.logStartOffset }),
    logger: recordingLogger(opts.lines),
    clock: fixedClock(),
  });
}

/** The files of a segment at base offset 0 once it holds a batch. */
const FIRST_SEGMENT_FILES = [
  '00000000000000000000.index',
  '00000000000000000000.log',
  '00000000000000000000.timeindex',
];

/** Appends `count` batches of `records` records each (100 bytes unless `payload`); returns copies as stored. */
function appendMany(log: Log, count: number, records = 2, payload = BATCH_PAYLOAD, epoch = 1): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const batch = makeBatch({ records, payloadBytes: payload, seed: log.logEndOffset + i });
    log.append(batch, epoch);
    out.push(Buffer.from(batch));
  }
  return out;
}

function readAll(log: Log): Buffer {
  const r = log.read(log.logStartOffset, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
  assert.equal(r.kind, 'ok');
  return r.kind === 'ok' ? r.records : Buffer.alloc(0);
}

describe('Log: append and roll', () => {
  it('assigns dense offsets, stamps baseOffset and leader epoch in place, names files by base offset', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs);
    assert.equal(log.logEndOffset, 0);
    const batch = makeBatch({ records: 3 });
    assert.deepEqual(log.append(batch, 7), { baseOffset: 0, lastOffset: 2 });
    assert.equal(batch.readBigInt64BE(L.BASE_OFFSET), 0n);
    assert.equal(batch.readInt32BE(L.PARTITION_LEADER_EPOCH), 7);
    const second = makeBatch({ records: 2 });
    assert.deepEqual(log.append(second, 8), { baseOffset: 3, lastOffset: 4 });
    assert.equal(second.readBigInt64BE(L.BASE_OFFSET), 3n);
    assert.equal(log.logEndOffset, 5);
    assert.deepEqual(fs.readdir(DIR), FIRST_SEGMENT_FILES);
    assert.deepEqual(fs.readFile(`${DIR}/00000000000000000000.log`), Buffer.concat([batch, second]));
    assert.deepEqual(readAll(log), Buffer.concat([batch, second]));
  });

  it('rolls when the active segment would exceed segmentBytes; an oversized batch gets a segment alone', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs, { segmentBytes: 350 });
    appendMany(log, 7); // 100 bytes each: 3 per segment
    assert.deepEqual(log.segmentBaseOffsets(), [0, 6, 12]);
    assert.equal(log.activeSegmentBaseOffset, 12);
    log.append(makeBatch({ records: 1, payloadBytes: 500 }), 1); // 561 bytes > segmentBytes
    log.append(makeBatch({ records: 1 }), 1);
    assert.deepEqual(log.segmentBaseOffsets(), [0, 6, 12, 14, 15]);
    assert.equal(log.sizeBytes, 700 + 561 + 71);
    assert.ok(fs.readdir(DIR).includes('00000000000000000014.log'));
    const fresh = open(new MemoryFileSystem(), { segmentBytes: 100 });
    fresh.append(makeBatch({ payloadBytes: 500 }), 1); // into the empty first segment
    assert.deepEqual(fresh.segmentBaseOffsets(), [0]);
  });

  it('writes a sparse index: an entry when more than indexIntervalBytes were appended since the last', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs, { segmentBytes: 100_000, indexIntervalBytes: 250 });
    appendMany(log, 12); // positions 0, 100, ..., 1100; offsets 2i, 2i+1
    const index = fs.readFile(`${DIR}/00000000000000000000.index`);
    const entries = [];
    for (let i = 0; i < index.length; i += 8) entries.push([index.readInt32BE(i), index.readInt32BE(i + 4)]);
    // Bytes since the last entry exceed 250 at positions 300, 600, 900 (entry: last offset of that batch).
    assert.deepEqual(entries, [
      [7, 300],
      [13, 600],
      [19, 900],
    ]);
  });

  it('asserts on a buffer that is not exactly one v2 batch', () => {
    const log = open(new MemoryFileSystem());
    assert.throws(() => log.append(Buffer.alloc(30), 1));
    assert.throws(() => log.append(Buffer.concat([makeBatch(), makeBatch()]), 1));
    const bad = makeBatch();
    bad.writeInt8(1, L.MAGIC);
    assert.throws(() => log.append(bad, 1));
  });

  it('appendAsFollower appends batches carrying their offsets, asserting they start at the LEO', () => {
    const leader = open(new MemoryFileSystem(), { segmentBytes: 250 });
    appendMany(leader, 5);
    const follower = open(new MemoryFileSystem(), { segmentBytes: 250 });
    const bytes = readAll(leader);
    assert.deepEqual(follower.appendAsFollower(bytes), { baseOffset: 0, lastOffset: 9 });
    assert.deepEqual(readAll(follower), bytes);
    assert.deepEqual(follower.segmentBaseOffsets(), [0, 4, 8]);
    assert.throws(() => follower.appendAsFollower(bytes));
  });
});

describe('Log: read', () => {
  const fs = new MemoryFileSystem();
  const log = open(fs, { segmentBytes: 350, indexIntervalBytes: 150 });
  const stored = appendMany(log, 10); // offsets 0..19, 3 batches per segment
  const ok = (r: ReturnType<Log['read']>) => {
    assert.equal(r.kind, 'ok');
    return r as { kind: 'ok'; records: Buffer; firstOffset: number | null };
  };

  it('returns whole batches across segments starting with the one containing the offset', () => {
    const r = ok(log.read(5, 10_000, 20, false));
    assert.equal(r.firstOffset, 4);
    assert.deepEqual(r.records, Buffer.concat(stored.slice(2)));
    assert.equal(r.records.buffer.byteLength >= r.records.length, true);
    assert.deepEqual(
      splitBatches(r.records).map((b) => b.baseOffset),
      [4, 6, 8, 10, 12, 14, 16, 18],
    );
  });

  it('stops at maxBytes with whole batches', () => {
    assert.deepEqual(ok(log.read(0, 450, 20, true)).records, Buffer.concat(stored.slice(0, 4)));
    assert.deepEqual(ok(log.read(0, 400, 20, true)).records, Buffer.concat(stored.slice(0, 4)));
    assert.deepEqual(ok(log.read(0, 399, 20, false)).records, Buffer.concat(stored.slice(0, 3)));
  });

  it('returns one oversized batch only with minOneBatch (KIP-74)', () => {
    assert.deepEqual(ok(log.read(6, 50, 20, true)).records, stored[3]);
    const none = ok(log.read(6, 50, 20, false));
    assert.equal(none.records.length, 0);
    assert.equal(none.firstOffset, null);
  });

  it('never returns a batch whose last offset reaches the high watermark', () => {
    assert.deepEqual(ok(log.read(0, 10_000, 7, true)).records, Buffer.concat(stored.slice(0, 3)));
    assert.deepEqual(ok(log.read(0, 10_000, 8, true)).records, Buffer.concat(stored.slice(0, 4)));
    assert.equal(ok(log.read(6, 10_000, 6, true)).records.length, 0, 'the HW cap beats minOneBatch');
  });

  it('answers empty at the LEO and out-of-range outside [logStartOffset, LEO]', () => {
    const atEnd = ok(log.read(20, 10_000, 20, true));
    assert.equal(atEnd.records.length, 0);
    assert.equal(atEnd.firstOffset, null);
    assert.deepEqual(log.read(21, 10_000, 30, true), { kind: 'out-of-range' });
    assert.deepEqual(log.read(-1, 10_000, 30, true), { kind: 'out-of-range' });
  });

  it('returns a fresh buffer holding exactly the bytes read', () => {
    const r = ok(log.read(2, 250, 20, true));
    assert.equal(r.records.byteOffset, 0);
    assert.equal(r.records.buffer.byteLength, r.records.length);
  });

  it('finds every offset in every segment', () => {
    for (let o = 0; o < 20; o++) {
      const r = ok(log.read(o, 1, 20, true));
      const [b] = splitBatches(r.records);
      assert.ok(b !== undefined && b.baseOffset <= o && o <= b.lastOffset, `offset ${o}`);
    }
  });

  it('finds the first batch with maxTimestamp at or after a time (records not decodable: batch granularity)', () => {
    const lines: LogLine[] = [];
    const t = open(new MemoryFileSystem(), { segmentBytes: 250, lines });
    for (let i = 0; i < 6; i++) t.append(makeBatch({ records: 2, maxTimestampMs: 1000 + i * 10 }), 1);
    assert.deepEqual(t.offsetForTimestamp(0), { offset: 0, timestamp: 1000, leaderEpoch: 1 });
    assert.deepEqual(t.offsetForTimestamp(1025), { offset: 6, timestamp: 1030, leaderEpoch: 1 });
    assert.deepEqual(t.offsetForTimestamp(1050), { offset: 10, timestamp: 1050, leaderEpoch: 1 });
    assert.equal(t.offsetForTimestamp(1051), null);
    assert.match(JSON.stringify(lines), /cannot decode a batch's records/);
  });
});

describe('Log: flush and recovery point', () => {
  it('fsyncs dirty segments once per flush and advances the recovery point to the LEO', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs, { segmentBytes: 350 });
    assert.equal(log.hasUnflushed, true, 'a new segment needs its directory synced');
    log.flush();
    assert.equal(log.hasUnflushed, false);
    appendMany(log, 4); // two segments
    assert.equal(log.recoveryPoint, 0);
    assert.equal(log.hasUnflushed, true);
    const syncsBefore = fs.syncCount;
    const dirSyncsBefore = fs.syncDirCount;
    assert.equal(log.flush(), 8);
    assert.equal(log.recoveryPoint, 8);
    assert.equal(fs.syncCount - syncsBefore, 6, '.log, .index and .timeindex of two segments');
    assert.equal(fs.syncDirCount - dirSyncsBefore, 1);
    assert.equal(log.hasUnflushed, false);
    assert.equal(log.flush(), 8);
    assert.equal(fs.syncCount - syncsBefore, 6, 'nothing new to sync');
  });

  it('keeps every flushed batch and loses the unflushed ones on power loss', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs, { segmentBytes: 350 });
    const stored = appendMany(log, 5);
    const rp = log.flush();
    appendMany(log, 4); // rolls into unsynced segments
    fs.crash({ kind: 'lose-unsynced' });
    log = open(fs, { segmentBytes: 350, recoveryPoint: rp });
    assert.equal(log.logEndOffset, 10);
    assert.deepEqual(readAll(log), Buffer.concat(stored));
    assert.equal(log.recoveryPoint, 10);
  });

  it('bounds a recovery point hint by the log', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs);
    appendMany(log, 3);
    log.close();
    log = open(fs, { recoveryPoint: 1000 });
    assert.equal(log.logEndOffset, 6);
    assert.equal(log.recoveryPoint, 6);
  });
});

describe('Log: asynchronous flush (pipelined group commit)', () => {
  it('advances the recovery point to the LEO as of its start once its fsyncs complete; appends and rolls meanwhile wait for the next', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    const log = open(fs, { segmentBytes: 350 });
    log.flush();
    appendMany(log, 2);
    const first = log.flushAsync();
    assert.equal(log.flushInFlight, true);
    // The .log only: its .index and .timeindex have no entry since the flush before (an index entry
    // comes every log.index.interval.bytes), so they need no fsync of their own.
    assert.equal(fs.pendingSyncs, 1, '.log of the dirty segment');
    appendMany(log, 3); // rolls a second segment
    assert.deepEqual(log.segmentBaseOffsets(), [0, 6]);
    assert.equal(log.recoveryPoint, 0, 'nothing counts before the fsyncs complete');
    assert.throws(() => log.flushAsync(), /already in flight/);
    assert.throws(() => log.truncateTo(2), /in-flight flush/);
    assert.throws(() => log.close(), /in-flight flush/);
    fs.completeSyncs();
    assert.equal(await first, 4, 'the LEO when it started');
    assert.equal(log.recoveryPoint, 4);
    assert.equal(log.flushInFlight, false);
    assert.equal(log.hasUnflushed, true);
    const dirSyncs = fs.syncDirCount;
    const second = log.flushAsync();
    assert.equal(fs.syncDirCount - dirSyncs, 1, "the rolled segment's directory entry");
    assert.equal(fs.pendingSyncs, 6, 'both segments: the first was appended to while the first flush ran');
    fs.completeSyncs();
    assert.equal(await second, 10);
    assert.equal(log.hasUnflushed, false);
    await log.whenFlushed();
    log.close();
  });

  it('a crash while one is in flight keeps what earlier flushes covered and fails it', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    let log = open(fs, { segmentBytes: 350 });
    const stored = appendMany(log, 3);
    const first = log.flushAsync();
    fs.completeSyncs();
    assert.equal(await first, 6);
    appendMany(log, 4);
    const second = log.flushAsync();
    fs.completeSyncs(2); // some of its fsyncs completed, not all
    fs.crash({ kind: 'lose-unsynced' });
    await assert.rejects(second, { code: 'EIO' });
    assert.equal(log.flushInFlight, false);
    log = open(fs, { segmentBytes: 350, recoveryPoint: 6 });
    assert.ok(log.logEndOffset >= 6, `LEO ${log.logEndOffset}`);
    assert.deepEqual(readAll(log).subarray(0, 300), Buffer.concat(stored));
  });

  it('a synchronous flush while one is in flight is refused (two racing fsyncs may split a writeback error); after it, flush covers everything', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    let log = open(fs, { segmentBytes: 350 });
    const stored = appendMany(log, 5);
    const inFlight = log.flushAsync();
    assert.equal(log.hasUnflushed, true, 'in-flight segments count as unsynced until it completes');
    assert.throws(() => log.flush(), { name: 'AssertionError' });
    fs.completeSyncs();
    assert.equal(await inFlight, 10);
    assert.equal(log.flush(), 10);
    fs.crash({ kind: 'lose-unsynced' });
    log = open(fs, { segmentBytes: 350, recoveryPoint: 10 });
    assert.deepEqual(readAll(log), Buffer.concat(stored));
  });

  for (const disk of ['memory', 'node'] as const) {
    it(`(${disk} disk) the cleaner swapping a segment whose fsync is in flight: the flush completes, counts only what it synced, and a crash keeps the cleaned segment`, async () => {
      const root = disk === 'node' ? tmpDir() : null;
      try {
        const fs: FileSystem =
          disk === 'memory' ? new MemoryFileSystem({ asyncSyncs: 'manual' }) : new NodeFileSystem();
        const dir = root === null ? DIR : path.join(root, 'p-0');
        const openCompacted = (recoveryPoint: number) =>
          Log.open({
            fs,
            dir,
            config: { segmentBytes: 350, indexIntervalBytes: 150 },
            recoveryPoint,
            logger: recordingLogger(),
            clock: fixedClock(),
            compacted: true,
          });
        let log = openCompacted(0);
        const stored = appendMany(log, 5); // segments [0, 6], nothing fsynced
        assert.deepEqual(log.segmentBaseOffsets(), [0, 6]);
        const inFlight = log.flushAsync();
        // The cleaner's swap: segment 0 (whose fsyncs are in flight) becomes its batches 0 and 2.
        const cleaned = Buffer.concat([stored[0]!, stored[2]!]);
        assert.equal(log.replaceWithCleaned([0], [300], cleaned), true);
        const late = appendMany(log, 1); // offsets 10-11, after the flush started
        if (fs instanceof MemoryFileSystem) fs.completeSyncs();
        assert.equal(await inFlight, 10, 'the LEO as of its start, not the batch appended meanwhile');
        assert.equal(log.recoveryPoint, 10);
        assert.equal(log.hasUnflushed, true, 'the late batch is not covered');
        await log.whenFlushed();
        if (fs instanceof MemoryFileSystem) {
          fs.crash({ kind: 'lose-unsynced' });
        } else {
          log.close();
        }
        log = openCompacted(10);
        const expected = [
          stored[0]!,
          stored[2]!,
          stored[3]!,
          stored[4]!,
          ...(fs instanceof MemoryFileSystem ? [] : late),
        ];
        assert.deepEqual(readAll(log), Buffer.concat(expected), 'cleaned segment 0, then everything the flush covered');
        log.close();
      } finally {
        if (root !== null) removeDir(root);
      }
    });
  }

  it('on a real disk, survives retention deleting a segment whose fsync is in flight', async () => {
    const root = tmpDir();
    try {
      const fs = new NodeFileSystem();
      const dir = path.join(root, 'p-0');
      const log = open(fs, { dir, segmentBytes: 350 });
      appendMany(log, 5); // segments [0, 6]
      const inFlight = log.flushAsync();
      assert.equal(log.deleteRecordsBefore(6), 6);
      assert.deepEqual(log.segmentBaseOffsets(), [6]);
      assert.equal(await inFlight, 10);
      assert.equal(log.recoveryPoint, 10);
      assert.equal(log.hasUnflushed, false);
      await log.whenFlushed();
      log.close();
      assert.deepEqual(
        nodeFs.readdirSync(dir).filter((f) => f.endsWith('.log')),
        ['00000000000000000006.log'],
      );
    } finally {
      removeDir(root);
    }
  });
});

type Disk = {
  name: string;
  make(): { fs: FileSystem; dir: string; cleanup(): void };
  /** Cuts the file to `sizeBytes` as a torn write would. */
  tear(fs: FileSystem, file: string, sizeBytes: number): void;
  flip(fs: FileSystem, file: string, position: number): void;
};

const disks: Disk[] = [
  {
    name: 'MemoryFileSystem',
    make: () => ({ fs: new MemoryFileSystem(), dir: DIR, cleanup: () => {} }),
    tear: (fs, file, sizeBytes) => {
      // Everything up to the last batch is synced; the last batch is written but torn by the crash.
      const mem = fs as MemoryFileSystem;
      const pending = mem.unsyncedBytes(file);
      const durable = mem.readFile(file).length - pending;
      mem.crash({ kind: 'torn-last-write', path: file, keepBytes: sizeBytes - durable });
    },
    flip: (fs, file, position) => (fs as MemoryFileSystem).flipByte(file, position),
  },
  {
    name: 'NodeFileSystem',
    make: () => {
      const root = tmpDir();
      return { fs: new NodeFileSystem(), dir: path.join(root, 'orders-0'), cleanup: () => removeDir(root) };
    },
    tear: (_fs, file, sizeBytes) => nodeFs.truncateSync(file, sizeBytes),
    flip: (_fs, file, position) => {
      const bytes = nodeFs.readFileSync(file);
      bytes[position]! ^= 0xff;
      nodeFs.writeFileSync(file, bytes);
    },
  },
];

for (const disk of disks) {
  describe(`Log: recovery on ${disk.name}`, () => {
    const cleanups: Array<() => void> = [];
    after(() => cleanups.forEach((c) => c()));
    const setup = () => {
      const made = disk.make();
      cleanups.push(made.cleanup);
      return made;
    };
    const segmentBytes = 350;

    /**
     * 8 batches (offsets 0..15) over segments 0, 6 and 12; all synced but the last batch (position
     * 100 of segment 12), so a crash can tear only that one.
     */
    function build() {
      const { fs, dir } = setup();
      const log = open(fs, { dir, segmentBytes });
      const stored = appendMany(log, 7);
      const rp = log.flush();
      stored.push(...appendMany(log, 1));
      const last = path.posix.join(dir, '00000000000000000012.log');
      return { fs, dir, log, stored, rp, last };
    }

    it('truncates a torn last batch', () => {
      const { fs, dir, log, stored, rp, last } = build();
      const lines: LogLine[] = [];
      log.close();
      disk.tear(fs, last, 140);
      const reopened = open(fs, { dir, segmentBytes, recoveryPoint: rp, lines });
      assert.equal(reopened.logEndOffset, 14);
      assert.deepEqual(readAll(reopened), Buffer.concat(stored.slice(0, 7)));
      const warn = lines.find((l) => l.level === 'warn');
      assert.ok(warn !== undefined, 'recovery logs the truncation');
      assert.match(JSON.stringify(warn.fields), /torn batch.*"droppedBytes":40|droppedBytes":40.*torn batch/);
      assert.equal(reopened.recoveryPoint, 14);
    });

    it('truncates a last batch with a flipped byte (CRC-32C)', () => {
      const { fs, dir, log, stored, rp, last } = build();
      log.close();
      disk.flip(fs, last, 180);
      const lines: LogLine[] = [];
      const reopened = open(fs, { dir, segmentBytes, recoveryPoint: rp, lines });
      assert.equal(reopened.logEndOffset, 14);
      assert.deepEqual(readAll(reopened), Buffer.concat(stored.slice(0, 7)));
      assert.match(JSON.stringify(lines.filter((l) => l.level === 'warn')), /CRC-32C mismatch/);
    });

    it('deletes segments after a corrupt one', () => {
      const { fs, dir, log, stored } = build();
      log.flush();
      log.close();
      disk.flip(fs, path.posix.join(dir, '00000000000000000006.log'), 150); // second batch of segment 2
      const reopened = open(fs, { dir, segmentBytes, recoveryPoint: 6 });
      assert.equal(reopened.logEndOffset, 8);
      assert.deepEqual(reopened.segmentBaseOffsets(), [0, 6]);
      assert.deepEqual(readAll(reopened), Buffer.concat(stored.slice(0, 4)));
      assert.ok(!fs.exists(path.posix.join(dir, '00000000000000000012.log')));
    });

    it('rebuilds a deleted index identically', () => {
      const { fs, dir, log } = build();
      log.flush();
      log.close();
      const index = path.posix.join(dir, '00000000000000000000.index');
      const before = fs.readFile(index);
      assert.ok(before.length > 0);
      fs.unlink(index);
      const reopened = open(fs, { dir, segmentBytes, recoveryPoint: 16 });
      assert.deepEqual(fs.readFile(index), before);
      assert.equal(reopened.logEndOffset, 16);
      assert.ok(reopened.read(3, 1, 14, true).kind === 'ok');
    });

    it('rebuilds a corrupt index identically', () => {
      const { fs, dir, log } = build();
      log.flush();
      log.close();
      const index = path.posix.join(dir, '00000000000000000000.index');
      const before = fs.readFile(index);
      disk.flip(fs, index, 4); // first entry's position: now far beyond the log
      const lines: LogLine[] = [];
      const reopened = open(fs, { dir, segmentBytes, recoveryPoint: 16, lines });
      assert.deepEqual(fs.readFile(index), before);
      assert.equal(reopened.logEndOffset, 16);
      assert.match(JSON.stringify(lines), /rebuilding damaged offset index/);
    });

    it('recovery is idempotent: opening twice gives the same LEO and bytes', () => {
      const { fs, dir, log, rp, last } = build();
      log.close();
      disk.tear(fs, last, 140);
      for (const hint of [0, rp]) {
        const first = open(fs, { dir, segmentBytes, recoveryPoint: hint });
        const firstBytes = readAll(first);
        const firstLeo = first.logEndOffset;
        first.close();
        const files = fs.readdir(dir).map((n) => [n, fs.readFile(path.posix.join(dir, n))]);
        const second = open(fs, { dir, segmentBytes, recoveryPoint: hint });
        assert.equal(second.logEndOffset, firstLeo);
        assert.deepEqual(readAll(second), firstBytes);
        second.close();
        assert.deepEqual(
          fs.readdir(dir).map((n) => [n, fs.readFile(path.posix.join(dir, n))]),
          files,
        );
      }
    });

    it('truncateTo drops batches at and after an offset, durably', () => {
      const { fs, dir, log, stored } = build();
      log.truncateTo(9); // inside batch 8..9 of segment 6
      assert.equal(log.logEndOffset, 8);
      assert.deepEqual(log.segmentBaseOffsets(), [0, 6]);
      assert.deepEqual(readAll(log), Buffer.concat(stored.slice(0, 4)));
      const appended = appendMany(log, 1);
      assert.equal(log.logEndOffset, 10);
      if (fs instanceof MemoryFileSystem) fs.crash({ kind: 'lose-unsynced' });
      else log.close();
      const reopened = open(fs, { dir, segmentBytes, recoveryPoint: 0 });
      const expected = fs instanceof MemoryFileSystem ? stored.slice(0, 4) : [...stored.slice(0, 4), ...appended];
      assert.deepEqual(readAll(reopened), Buffer.concat(expected));
      reopened.truncateTo(0);
      assert.equal(reopened.logEndOffset, 0);
      assert.deepEqual(reopened.segmentBaseOffsets(), [0]);
      reopened.delete();
      assert.ok(!fs.exists(dir));
    });
  });
}

describe('Log: open edge cases', () => {
  it('creates the directory and starts at logStartOffset when there are no segments', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs, { logStartOffset: 42 });
    assert.equal(log.logStartOffset, 42);
    assert.equal(log.logEndOffset, 42);
    // The index files come with the first batch (two inodes fewer per partition created).
    assert.deepEqual(fs.readdir(DIR), ['00000000000000000042.log']);
    assert.deepEqual(log.read(41, 100, 100, true), { kind: 'out-of-range' });
    appendMany(log, 1);
    assert.deepEqual(fs.readdir(DIR), [
      '00000000000000000042.index',
      '00000000000000000042.log',
      '00000000000000000042.timeindex',
    ]);
  });

  it('an empty log reopens without index files and without a warning; its first batch creates them, durable with its flush', () => {
    const fs = new MemoryFileSystem();
    const lines: LogLine[] = [];
    let log = open(fs, { lines });
    log.flush();
    log.close();
    log = open(fs, { lines });
    assert.deepEqual(fs.readdir(DIR), ['00000000000000000000.log'], 'a reopen creates no index file');
    assert.deepEqual(
      lines.filter((l) => l.level === 'warn' || /index/.test(l.msg ?? '')),
      [],
      'a missing index of an empty segment is nothing to rebuild',
    );
    const stored = appendMany(log, 6, 2, BATCH_PAYLOAD);
    log.flush();
    // Power loss after the flush: the index files' names were made durable with it.
    fs.crash({ kind: 'lose-unsynced' });
    log = open(fs, { lines, recoveryPoint: 12 });
    assert.deepEqual(fs.readdir(DIR), FIRST_SEGMENT_FILES);
    assert.deepEqual(
      lines.filter((l) => l.level === 'warn'),
      [],
      'indexes intact after the crash',
    );
    assert.ok(
      fs.readFile(`${DIR}/00000000000000000000.index`).length > 0,
      'the offset index holds entries (one every 150 bytes)',
    );
    assert.deepEqual(readAll(log), Buffer.concat(stored));
    log.close();
  });

  it('a refused creation of an index file undoes the first append; a retry creates both and survives a power loss', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs);
    let fail = true;
    fs.fault = (op) => (fail && op.syscall === 'open' && op.path.endsWith('.timeindex') ? 'EIO' : null);
    assert.throws(() => appendMany(log, 1), /EIO/);
    assert.equal(log.logEndOffset, 0, 'the append was undone');
    fail = false;
    const stored = appendMany(log, 3);
    log.flush();
    fs.crash({ kind: 'lose-unsynced' });
    const lines: LogLine[] = [];
    log = open(fs, { lines, recoveryPoint: 6 });
    assert.deepEqual(fs.readdir(DIR), FIRST_SEGMENT_FILES);
    assert.deepEqual(
      lines.filter((l) => l.level === 'warn'),
      [],
    );
    assert.deepEqual(readAll(log), Buffer.concat(stored));
    log.close();
  });

  it('a non-empty segment whose index files are gone still rebuilds them (only an empty one may lack them)', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs);
    const stored = appendMany(log, 6);
    log.flush();
    log.close();
    fs.unlink(`${DIR}/00000000000000000000.index`);
    fs.unlink(`${DIR}/00000000000000000000.timeindex`);
    const lines: LogLine[] = [];
    log = open(fs, { lines, recoveryPoint: 12 });
    // The active segment is re-validated from the recovery point, its indexes rebuilt on the way.
    assert.match(JSON.stringify(lines), /"reason":"missing".*offset index rebuilt by recovery/);
    assert.deepEqual(fs.readdir(DIR), FIRST_SEGMENT_FILES);
    assert.deepEqual(readAll(log), Buffer.concat(stored));
    log.close();
  });

  it('deletes an index without a log and a segment that does not continue the log', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs, { segmentBytes: 350 });
    appendMany(log, 4);
    log.flush();
    log.close();
    fs.open(`${DIR}/00000000000000000500.index`, 'rw').close();
    fs.open(`${DIR}/00000000000000000900.log`, 'rw').close();
    const lines: LogLine[] = [];
    log = open(fs, { segmentBytes: 350, recoveryPoint: 8, lines });
    assert.deepEqual(log.segmentBaseOffsets(), [0, 6]);
    assert.ok(
      lines.some((l) => l.level === 'warn' && l.msg === 'deleting index file without a log file'),
      'an orphaned index file is warned about, as in Kafka',
    );
    assert.ok(!fs.exists(`${DIR}/00000000000000000500.index`));
    assert.ok(!fs.exists(`${DIR}/00000000000000000900.log`));
    assert.equal(log.logEndOffset, 8);
  });

  it('clamps logStartOffset into the log, and starts over past a log that ended before it', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs);
    appendMany(log, 3);
    log.flush();
    log.close();
    log = open(fs, { recoveryPoint: 6, logStartOffset: 3 });
    assert.equal(log.logStartOffset, 3);
    assert.deepEqual(log.read(2, 100, 100, true), { kind: 'out-of-range' });
    assert.equal((log.read(3, 1, 100, true) as { firstOffset: number }).firstOffset, 2);
    log.close();
    log = open(fs, { recoveryPoint: 6, logStartOffset: 50 });
    assert.equal(log.logStartOffset, 50);
    assert.equal(log.logEndOffset, 50);
    assert.deepEqual(log.segmentBaseOffsets(), [50]);
  });

  it('starts over at logStartOffset when recovery cut the log below it', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs);
    appendMany(log, 3);
    log.flush();
    log.close();
    fs.flipByte(`${DIR}/00000000000000000000.log`, 250);
    log = open(fs, { recoveryPoint: 0, logStartOffset: 5 });
    assert.equal(log.logEndOffset, 5);
    assert.deepEqual(log.segmentBaseOffsets(), [5]);
    fs.crash({ kind: 'lose-unsynced' });
    log = open(fs, { recoveryPoint: 0, logStartOffset: 5 });
    assert.deepEqual(log.segmentBaseOffsets(), [5]);
  });

  it('recovers a damaged segment below the recovery point and lowers the recovery point', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs, { segmentBytes: 350 });
    appendMany(log, 7);
    log.flush();
    log.close();
    // Cut segment 0 mid-batch although the hint says it is fsynced.
    const h = fs.open(`${DIR}/00000000000000000000.log`, 'rw');
    h.truncate(250);
    h.close();
    log = open(fs, { segmentBytes: 350, recoveryPoint: 14 });
    assert.equal(log.logEndOffset, 4);
    assert.deepEqual(log.segmentBaseOffsets(), [0]);
    assert.equal(log.recoveryPoint, 0);
  });
});

/** Bytes read from one file through its handles, and the lowest position read. */
interface FileReads {
  bytes: number;
  lowestPosition: number;
}

/** A view of `inner` that records the reads from each file through its handles (the files left as they are). */
function countingReads(inner: FileSystem): { fs: FileSystem; reads(file: string): FileReads } {
  const reads = new Map<string, FileReads>();
  const bind = (obj: object, p: string | symbol): unknown => {
    const v = Reflect.get(obj, p) as unknown;
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(obj) : v;
  };
  const fs = new Proxy(inner, {
    get(target, prop) {
      if (prop !== 'open') return bind(target, prop);
      return (file: string, mode: 'r' | 'rw') => {
        const handle = target.open(file, mode);
        return new Proxy(handle, {
          get(h, p) {
            if (p !== 'read') return bind(h, p);
            return (buffer: Uint8Array, offset: number, length: number, position: number) => {
              const n = h.read(buffer, offset, length, position);
              const r = reads.get(file) ?? { bytes: 0, lowestPosition: Number.POSITIVE_INFINITY };
              reads.set(file, { bytes: r.bytes + n, lowestPosition: Math.min(r.lowestPosition, position) });
              return n;
            };
          },
        });
      };
    },
  });
  return { fs, reads: (file) => ({ ...(reads.get(file) ?? { bytes: 0, lowestPosition: Number.POSITIVE_INFINITY }) }) };
}

describe('Log: recovery scans only what is after the recovery point', () => {
  /**
   * 40 batches of 100 bytes (offsets 0..79, timestamps growing) over segments 0, 20, 40 and 60
   * (1,000 bytes each); flushed after 25 batches (recovery point 50, position 500 of segment 40).
   * Then the process dies (page cache kept) with its last write torn: the last batch keeps 40 of its
   * 100 bytes. Kafka's LogLoader re-validates only the segments from the recovery point on.
   */
  function crashedLog(): { fs: MemoryFileSystem; stored: Buffer[]; rp: number } {
    const fs = new MemoryFileSystem();
    const log = open(fs, { segmentBytes: 1000 });
    const stored: Buffer[] = [];
    const append = (count: number) => {
      for (let i = 0; i < count; i++) {
        const ts = 1_700_000_000_000 + log.logEndOffset;
        const batch = makeBatch({
          records: 2,
          payloadBytes: BATCH_PAYLOAD,
          seed: log.logEndOffset,
          baseTimestampMs: ts,
        });
        log.append(batch, 1);
        stored.push(Buffer.from(batch));
      }
    };
    append(25);
    const rp = log.flush();
    append(15);
    assert.deepEqual(log.segmentBaseOffsets(), [0, 20, 40, 60]);
    log.close();
    const handle = fs.open(`${DIR}/00000000000000000060.log`, 'rw');
    handle.truncate(handle.size() - 60);
    handle.close();
    return { fs, stored, rp };
  }
  const logFile = (base: number) => `${DIR}/${String(base).padStart(20, '0')}.log`;

  it('re-validates the tail from the index entry at or below the recovery point, trusts the segments below it, and still cuts the torn batch', () => {
    const { fs: mem, stored, rp } = crashedLog();
    assert.equal(rp, 50);
    const { fs, reads } = countingReads(mem);
    const log = open(fs, { segmentBytes: 1000, recoveryPoint: rp });
    const read = new Map([0, 20, 40, 60].map((base) => [base, reads(logFile(base))]));
    // Segments wholly below the recovery point: only the batch headers after their last offset index
    // entry (index.interval.bytes 150: at most the last 200 bytes), no CRC pass over the rest.
    for (const base of [0, 20]) {
      const r = read.get(base)!;
      assert.ok(r.lowestPosition >= 800 && r.bytes <= 200, `segment ${base}: ${JSON.stringify(r)}`);
    }
    // The segment holding it: CRCs from the index entry at or below position 500 (400), headers from
    // the entry before (200: the last time index entry kept, for the max timestamp so far), not from its start.
    const holding = read.get(40)!;
    assert.ok(holding.lowestPosition === 200, `segment 40: ${JSON.stringify(holding)}`);
    // After it: all of it, the torn tail included.
    assert.deepEqual(read.get(60), { bytes: 940, lowestPosition: 0 });
    assert.equal(
      log.loadSummary.scannedBytes,
      600 + 900,
      'CRC-checked: segment 40 from position 400, segment 60 up to the torn batch',
    );
    // The torn batch (offsets 78-79) is cut; everything before it is kept, below and above the recovery point.
    assert.equal(log.loadSummary.truncatedBytes, 40);
    assert.equal(log.logEndOffset, 78);
    assert.deepEqual(readAll(log), Buffer.concat(stored.slice(0, 39)));
    assert.equal(log.recoveryPoint, 50, 'what was re-validated is not yet known to be fsynced');
    assert.equal(log.hasUnflushed, true);
  });

  it('re-validates every segment when there is no recovery point (the counters above are not vacuous)', () => {
    const { fs: mem, stored } = crashedLog();
    const { fs, reads } = countingReads(mem);
    const log = open(fs, { segmentBytes: 1000, recoveryPoint: 0 });
    for (const base of [0, 20, 40]) {
      const r = reads(logFile(base));
      assert.ok(r.lowestPosition === 0 && r.bytes >= 1000, `segment ${base}: ${JSON.stringify(r)}`);
    }
    assert.equal(log.loadSummary.scannedBytes, 3900);
    assert.equal(log.logEndOffset, 78);
    assert.deepEqual(readAll(log), Buffer.concat(stored.slice(0, 39)));
  });
  it('after a clean shutdown (recovery point = LEO) the start-up fsyncs nothing', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs, { segmentBytes: 1000 });
    appendMany(log, 25);
    const rp = log.flush();
    log.close();
    const syncs = fs.syncCount;
    const dirSyncs = fs.syncDirCount;
    log = open(fs, { segmentBytes: 1000, recoveryPoint: rp });
    assert.equal(log.hasUnflushed, false);
    assert.equal(log.flush(), 50);
    assert.deepEqual([fs.syncCount - syncs, fs.syncDirCount - dirSyncs], [0, 0]);
    // An append after it is fsynced by the next flush as usual, and survives a power loss.
    appendMany(log, 1);
    assert.equal(log.flush(), 52);
    assert.ok(fs.syncCount > syncs);
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(open(fs, { segmentBytes: 1000, recoveryPoint: 52 }).logEndOffset, 52);
  });

  it('a segment at the recovery point whose directory entry was never synced gets it synced by the next flush', () => {
    const fs = new MemoryFileSystem();
    let log = open(fs);
    log.close(); // never flushed: segment 0's directory entry is not durable (the page cache keeps it)
    log = open(fs, { recoveryPoint: 0 });
    appendMany(log, 1);
    assert.equal(log.flush(), 2);
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(open(fs, { recoveryPoint: 2 }).logEndOffset, 2, 'a power loss keeps the flushed batch');
  });
});
