/**
 * Producer-state snapshot files (producer-state-snapshot.ts) and the log's handling of them: written
 * on a roll and on request, fsynced; deleted with their segment by retention, above the LEO by a
 * truncation, all by a full truncation; a damaged one read back as a reason, never as entries.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { Log } from '../../../src/storage/log';
import {
  decodeProducerSnapshot,
  encodeProducerSnapshot,
  NO_COORDINATOR_EPOCH,
  parseSnapshotFileName,
  readProducerSnapshot,
  snapshotFileName,
  type ProducerSnapshotEntry,
} from '../../../src/storage/producer-state-snapshot';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { fixedClock, makeBatch, recordingLogger } from './helpers';

const DIR = '/data/t-0';

const ENTRIES: ProducerSnapshotEntry[] = [
  {
    producerId: 1000,
    producerEpoch: 3,
    coordinatorEpoch: NO_COORDINATOR_EPOCH,
    lastTimestampMs: 1_700_000_000_123,
    batches: [
      { firstSeq: 0, lastSeq: 4, baseOffset: 10, lastOffsetDelta: 4, maxTimestampMs: 1_700_000_000_100 },
      { firstSeq: 5, lastSeq: 5, baseOffset: 20, lastOffsetDelta: 0, maxTimestampMs: 1_700_000_000_123 },
    ],
  },
  {
    producerId: 2 ** 40,
    producerEpoch: 0,
    coordinatorEpoch: NO_COORDINATOR_EPOCH,
    lastTimestampMs: -1,
    batches: [{ firstSeq: 0x7ffffffe, lastSeq: 1, baseOffset: 2 ** 33, lastOffsetDelta: 3, maxTimestampMs: -1 }],
  },
];

/** A source whose entries the test sets: what the log snapshots on a roll. */
function source(entries: () => ProducerSnapshotEntry[]) {
  return { snapshotEntries: entries };
}

function entriesAt(offset: number): ProducerSnapshotEntry[] {
  return [
    {
      producerId: 1,
      producerEpoch: 0,
      coordinatorEpoch: NO_COORDINATOR_EPOCH,
      lastTimestampMs: offset,
      batches: [
        {
          firstSeq: offset - 1,
          lastSeq: offset - 1,
          baseOffset: offset - 1,
          lastOffsetDelta: 0,
          maxTimestampMs: offset,
        },
      ],
    },
  ];
}

function openLog(fs: MemoryFileSystem, leo: () => number, segmentBytes = 150) {
  return Log.open({
    fs,
    dir: DIR,
    config: { segmentBytes, indexIntervalBytes: 4096 },
    recoveryPoint: 0,
    logger: recordingLogger(),
    clock: fixedClock(),
    producerState: source(() => (leo() === 0 ? [] : entriesAt(leo()))),
  });
}

describe('producer-state snapshot format', () => {
  it('round-trips every field, and names files by their 20-digit offset', () => {
    const bytes = encodeProducerSnapshot(ENTRIES);
    assert.deepEqual(decodeProducerSnapshot(bytes), ENTRIES);
    assert.deepEqual(decodeProducerSnapshot(encodeProducerSnapshot([])), []);
    assert.equal(snapshotFileName(1234), '00000000000000001234.snapshot');
    assert.equal(parseSnapshotFileName('00000000000000001234.snapshot'), 1234);
    assert.equal(parseSnapshotFileName('00000000000000001234.log'), null);
    assert.equal(parseSnapshotFileName('1234.snapshot'), null);
  });

  it('refuses a flipped byte (CRC-32C), a torn file, trailing bytes and an unknown version with a reason', () => {
    const bytes = encodeProducerSnapshot(ENTRIES);
    for (let i = 6; i < bytes.length; i += 7) {
      const flipped = Buffer.from(bytes);
      flipped[i]! ^= 0x01;
      const result = decodeProducerSnapshot(flipped);
      assert.equal(typeof result, 'string', `byte ${i} flipped`);
      assert.match(result as string, /CRC-32C mismatch/);
    }
    for (const length of [0, 5, 9, bytes.length - 1])
      assert.equal(typeof decodeProducerSnapshot(bytes.subarray(0, length)), 'string', `torn at ${length}`);
    const versioned = Buffer.from(bytes);
    versioned.writeInt16BE(9, 0);
    assert.match(decodeProducerSnapshot(versioned) as string, /unknown snapshot version 9/);
  });
});

describe('Log producer-state snapshots', () => {
  it('a roll writes <new base>.snapshot with the state as of that offset; the next flush makes it durable', () => {
    const fs = new MemoryFileSystem();
    let log: Log | null = null;
    log = openLog(fs, () => log!.logEndOffset);
    for (let i = 0; i < 6; i++) log.append(makeBatch({ payloadBytes: 40 }), 0);
    const bases = log.segmentBaseOffsets();
    assert.ok(bases.length >= 3, `rolled: ${bases.join(',')}`);
    assert.deepEqual(log.producerSnapshotOffsets(), bases.slice(1), 'one snapshot per rolled-to segment');
    assert.ok(log.hasUnflushed);
    log.flush();
    fs.crash({ kind: 'lose-unsynced' });
    for (const base of bases.slice(1)) assert.deepEqual(readProducerSnapshot(fs, DIR, base), entriesAt(base));
  });

  it('a crash before the flush loses or tears a roll snapshot, which loading skips', () => {
    const fs = new MemoryFileSystem();
    let log: Log | null = null;
    log = openLog(fs, () => log!.logEndOffset);
    for (let i = 0; i < 3; i++) log.append(makeBatch({ payloadBytes: 40 }), 0);
    log.flush();
    const durable = log.producerSnapshotOffsets();
    for (let i = 0; i < 3; i++) log.append(makeBatch({ payloadBytes: 40 }), 0);
    const newest = log.producerSnapshotOffsets().at(-1)!;
    assert.ok(newest > durable.at(-1)!);
    fs.crash({ kind: 'torn-last-write', path: `${DIR}/${snapshotFileName(newest)}`, keepBytes: 7 });
    const reopened = Log.open({
      fs,
      dir: DIR,
      config: { segmentBytes: 150, indexIntervalBytes: 4096 },
      recoveryPoint: log.recoveryPoint,
      logger: recordingLogger(),
      clock: fixedClock(),
    });
    const loaded = reopened.loadProducerSnapshot();
    assert.ok(loaded !== null && loaded.offset <= reopened.logEndOffset && loaded.offset < newest + 1);
    assert.deepEqual(loaded.entries, entriesAt(loaded.offset));
  });

  it('takeProducerSnapshot writes <LEO>.snapshot; loadProducerSnapshot returns the newest at or below the LEO', () => {
    const fs = new MemoryFileSystem();
    let log: Log | null = null;
    log = openLog(fs, () => log!.logEndOffset, 1 << 20);
    for (let i = 0; i < 3; i++) log.append(makeBatch(), 0);
    log.takeProducerSnapshot();
    assert.deepEqual(log.producerSnapshotOffsets(), [3]);
    assert.deepEqual(log.loadProducerSnapshot(), { offset: 3, entries: entriesAt(3) });
  });

  it('loading deletes snapshots above the LEO and a damaged one (with a warning), and falls back to an older one', () => {
    const fs = new MemoryFileSystem();
    let log: Log | null = null;
    log = openLog(fs, () => log!.logEndOffset);
    for (let i = 0; i < 6; i++) log.append(makeBatch({ payloadBytes: 40 }), 0);
    log.flush();
    const snapshots = log.producerSnapshotOffsets();
    const newest = snapshots[snapshots.length - 1]!;
    const older = snapshots[snapshots.length - 2]!;
    fs.writeFileAtomic(`${DIR}/${snapshotFileName(log.logEndOffset + 5)}`, encodeProducerSnapshot(ENTRIES));
    const path = `${DIR}/${snapshotFileName(newest)}`;
    fs.writeFileAtomic(path, fs.readFile(path).subarray(0, 12)); // torn
    log.close();
    const lines: ReturnType<typeof recordingLogger>['lines'] = [];
    const reopened = Log.open({
      fs,
      dir: DIR,
      config: { segmentBytes: 150, indexIntervalBytes: 4096 },
      recoveryPoint: 0,
      logger: recordingLogger(lines),
      clock: fixedClock(),
    });
    assert.deepEqual(reopened.loadProducerSnapshot(), { offset: older, entries: entriesAt(older) });
    assert.deepEqual(reopened.producerSnapshotOffsets(), snapshots.slice(0, -1));
    assert.ok(lines.some((l) => l.level === 'warn' && /damaged producer-state snapshot/.test(l.msg ?? '')));
  });

  it('truncateTo deletes the snapshots above the new LEO; truncateFullyAndStartAt deletes them all', () => {
    const fs = new MemoryFileSystem();
    let log: Log | null = null;
    log = openLog(fs, () => log!.logEndOffset);
    for (let i = 0; i < 8; i++) log.append(makeBatch({ payloadBytes: 40 }), 0);
    const snapshots = log.producerSnapshotOffsets();
    assert.ok(snapshots.length >= 3);
    log.truncateTo(snapshots[1]!);
    assert.deepEqual(log.producerSnapshotOffsets(), snapshots.slice(0, 2), 'the one at the new LEO stays');
    log.truncateTo(snapshots[1]! - 1);
    assert.deepEqual(log.producerSnapshotOffsets(), snapshots.slice(0, 1));
    log.truncateFullyAndStartAt(100);
    assert.deepEqual(log.producerSnapshotOffsets(), []);
  });

  it('retention deletes a snapshot with its segment and keeps the one of the first kept segment', () => {
    const fs = new MemoryFileSystem();
    let log: Log | null = null;
    log = openLog(fs, () => log!.logEndOffset);
    for (let i = 0; i < 8; i++) log.append(makeBatch({ payloadBytes: 40 }), 0);
    const bases = log.segmentBaseOffsets();
    log.deleteRecordsBefore(bases[2]!);
    assert.deepEqual(log.segmentBaseOffsets(), bases.slice(2));
    assert.deepEqual(log.producerSnapshotOffsets(), bases.slice(2));
    assert.ok(
      fs.readdir(DIR).every((n) => !n.endsWith('.snapshot.tmp')),
      'no temp file is left',
    );
  });

  it('forEachBatchHeader visits producer fields of the batches from an offset on', () => {
    const fs = new MemoryFileSystem();
    const log = Log.open({
      fs,
      dir: DIR,
      config: { segmentBytes: 150, indexIntervalBytes: 4096 },
      recoveryPoint: 0,
      logger: recordingLogger(),
      clock: fixedClock(),
    });
    for (let i = 0; i < 5; i++) {
      const value = Buffer.alloc(40, i);
      const records = [0, 1].map(() => ({ key: null, value, headers: [], timestamp: 1_700_000_000_000 }));
      log.append(buildRecordBatch(records, { producerId: 40 + i, producerEpoch: 2, baseSequence: i * 2 }), 0);
    }
    const seen: Array<[number, number, number, number, number]> = [];
    log.forEachBatchHeader(5, (h) =>
      seen.push([h.baseOffset, h.lastOffset, h.producerId, h.producerEpoch, h.baseSequence]),
    );
    assert.deepEqual(seen, [
      [4, 5, 42, 2, 4],
      [6, 7, 43, 2, 6],
      [8, 9, 44, 2, 8],
    ]);
  });
});
