/**
 * Log: the time index on disk, rolls by time (segment.ms) and by index size (segment.index.bytes),
 * and ListOffsets by timestamp (KIP-79) and max timestamp (KIP-734).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compressBatch } from '../../../src/client/batch';
import { CompressionCodec } from '../../../src/protocol/record-batch/compression';
import { Log, type LogConfig } from '../../../src/storage/log';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import type { Decompress } from '../../../src/storage/record-timestamps';
import {
  makeBatch,
  makeRecordBatch,
  manualClock,
  parseTimeIndex,
  recordingLogger,
  timeIndexProblems,
  type LogLine,
  type ManualClock,
} from './helpers';

const DIR = '/data/clicks-0';
const T0 = 1_700_000_000_000;

interface OpenOpts extends Partial<LogConfig> {
  clock?: ManualClock;
  recoveryPoint?: number;
  logStartOffset?: number;
  lines?: LogLine[];
  decompress?: Decompress | null;
}

function open(fs: MemoryFileSystem, opts: OpenOpts = {}): Log {
  return Log.open({
    fs,
    dir: DIR,
    config: {
      segmentBytes: opts.segmentBytes ?? 100_000,
      indexIntervalBytes: opts.indexIntervalBytes ?? 0,
      ...(opts.segmentMs === undefined ? {} : { segmentMs: opts.segmentMs }),
      ...(opts.segmentIndexBytes === undefined ? {} : { segmentIndexBytes: opts.segmentIndexBytes }),
    },
    recoveryPoint: opts.recoveryPoint ?? 0,
    ...(opts.logStartOffset === undefined ? {} : { logStartOffset: opts.logStartOffset }),
    logger: recordingLogger(opts.lines),
    clock: opts.clock ?? manualClock(T0),
    ...(opts.decompress === undefined ? {} : { decompress: opts.decompress }),
  });
}

/** Appends a batch of real records with these timestamps; returns its offsets. */
function add(
  log: Log,
  timestamps: number[],
  extra: { logAppendTimeMs?: number; epoch?: number; valueBytes?: number } = {},
) {
  const spec = {
    timestamps,
    ...(extra.logAppendTimeMs === undefined ? {} : { logAppendTimeMs: extra.logAppendTimeMs }),
    ...(extra.valueBytes === undefined ? {} : { valueBytes: extra.valueBytes }),
  };
  return log.append(makeRecordBatch(spec), extra.epoch ?? 1);
}

const timeIndexOf = (fs: MemoryFileSystem, base: number) =>
  parseTimeIndex(fs.readFile(`${DIR}/${String(base).padStart(20, '0')}.timeindex`), base);

describe('Log: time index on disk', () => {
  it('holds max timestamp -> last offset of its batch, ends each rolled segment with its max, as kafka-dump-log checks', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs, { segmentBytes: 250, indexIntervalBytes: 0 });
    const times = [
      [T0 + 5, T0 + 1],
      [T0 + 3],
      [T0 + 9, T0 + 2],
      [T0 + 4],
      [T0 + 20],
      [T0 + 11],
      [T0 + 30, T0 + 31],
      [T0 + 7],
    ];
    for (const t of times) add(log, t);
    assert.ok(log.segmentBaseOffsets().length >= 3);
    assert.deepEqual(timeIndexProblems(fs, DIR), []);
    // Segment 0: batches 0..1 (max +5) and 2 (+3); indexIntervalBytes 0 indexes every batch after
    // the first, with the max so far: (+5 -> 1) at batch 2, and nothing more at the roll.
    assert.deepEqual(timeIndexOf(fs, 0), [{ timestampMs: T0 + 5, offset: 1 }]);
    // Segment 3: batches 3..4 (+9), 5 (+4); at the roll its max (+9) is already the last entry... or
    // added as the final entry: either way it ends with the segment's max.
    assert.deepEqual(timeIndexOf(fs, 3).at(-1), { timestampMs: T0 + 9, offset: 4 });
    log.close();
    assert.deepEqual(timeIndexProblems(fs, DIR, true), []);
    const active = log.segmentBaseOffsets().at(-1)!;
    assert.equal(
      timeIndexOf(fs, active).at(-1)!.timestampMs,
      T0 + 31,
      'close writes the final entry of the active segment too',
    );
  });

  for (const damage of ['deleted', 'out of order', 'torn'] as const) {
    it(`rebuilds a ${damage} time index of a segment below the recovery point identically`, () => {
      const fs = new MemoryFileSystem();
      const log = open(fs, { segmentBytes: 400 });
      for (let i = 0; i < 12; i++) add(log, [T0 + i * 100, T0 + 5 - i]);
      const rp = log.flush();
      log.close();
      const path = `${DIR}/00000000000000000000.timeindex`;
      const before = fs.readFile(path);
      assert.ok(before.length >= 24);
      if (damage === 'deleted') fs.unlink(path);
      else if (damage === 'out of order')
        fs.flipByte(path, 0, 0x40); // first timestamp now huge: the second is out of order
      else {
        const h = fs.open(path, 'rw');
        h.truncate(before.length - 5);
        h.close();
      }
      const lines: LogLine[] = [];
      const reopened = open(fs, { segmentBytes: 400, recoveryPoint: rp, lines });
      assert.deepEqual(fs.readFile(path), before);
      assert.match(JSON.stringify(lines), /rebuilding damaged time index/);
      assert.equal(reopened.logEndOffset, 24);
    });
  }

  it('recovery after a power loss rebuilds the time indexes of the recovered segments', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs, { segmentBytes: 400 });
    for (let i = 0; i < 6; i++) add(log, [T0 + 100 - i, T0 + i * 50]);
    const rp = log.flush();
    for (let i = 0; i < 6; i++) add(log, [T0 + 1000 + i]);
    fs.crash({ kind: 'torn-last-write', keepBytes: 30 });
    const reopened = open(fs, { segmentBytes: 400, recoveryPoint: rp });
    assert.ok(reopened.logEndOffset >= 12);
    assert.deepEqual(timeIndexProblems(fs, DIR), []);
    const max = reopened.maxTimestampOffset();
    assert.ok(max !== null && max.timestamp >= T0 + 250);
  });
});

describe('Log: roll by time (segment.ms)', () => {
  it('rolls when a batch timestamp is more than segmentMs past the first batch of the active segment', () => {
    const log = open(new MemoryFileSystem(), { segmentMs: 1000 });
    add(log, [T0]); // 0
    add(log, [T0 + 500]); // 1
    add(log, [T0 + 1000]); // 2: exactly segmentMs, no roll (Kafka: > segment.ms)
    add(log, [T0 + 200]); // 3: non-monotone, no roll
    assert.deepEqual(log.segmentBaseOffsets(), [0]);
    add(log, [T0 + 900, T0 + 1001]); // 4..5: its max timestamp decides
    assert.deepEqual(log.segmentBaseOffsets(), [0, 4]);
    add(log, [T0 + 2001]); // 6: 1000 past the new segment's first batch (1001)
    assert.deepEqual(log.segmentBaseOffsets(), [0, 4]);
    add(log, [T0 + 2002]);
    assert.deepEqual(log.segmentBaseOffsets(), [0, 4, 7]);
  });

  it('uses the clock since the segment was created when its first batch has no timestamp', () => {
    const clock = manualClock(T0);
    const log = open(new MemoryFileSystem(), { segmentMs: 1000, clock });
    add(log, [-1]);
    clock.advance(1000);
    add(log, [-1]);
    assert.deepEqual(log.segmentBaseOffsets(), [0]);
    clock.advance(1);
    add(log, [-1]);
    assert.deepEqual(log.segmentBaseOffsets(), [0, 2]);
  });

  it('rolls LogAppendTime batches as the clock advances (their maxTimestamp is the append time)', () => {
    const clock = manualClock(T0);
    const log = open(new MemoryFileSystem(), { segmentMs: 60_000, clock });
    for (let i = 0; i < 5; i++) {
      add(log, [1, 2], { logAppendTimeMs: clock.now });
      clock.advance(20_000);
    }
    // Appends at 0, 20, 40, 60 s stay (60 is not > 60); 80 s rolls.
    assert.deepEqual(log.segmentBaseOffsets(), [0, 8]);
  });

  it('never rolls an empty segment, defaults to 7 days and takes a new segmentMs from updateConfig', () => {
    const clock = manualClock(T0);
    const log = open(new MemoryFileSystem(), { clock });
    clock.advance(30 * 24 * 3600 * 1000);
    add(log, [T0 + 1]);
    add(log, [T0 + 7 * 24 * 3600 * 1000 + 1]);
    assert.deepEqual(
      log.segmentBaseOffsets(),
      [0],
      'an empty segment does not roll; exactly 7 days later does not either',
    );
    add(log, [T0 + 7 * 24 * 3600 * 1000 + 2]);
    assert.deepEqual(log.segmentBaseOffsets(), [0, 2], 'default segment.ms: 7 days');
    log.updateConfig({ segmentBytes: 100_000, indexIntervalBytes: 0, segmentMs: 10 });
    assert.equal(log.currentConfig.segmentMs, 10);
    add(log, [T0 + 7 * 24 * 3600 * 1000 + 13]);
    assert.deepEqual(log.segmentBaseOffsets(), [0, 2, 3]);
    assert.throws(() => log.updateConfig({ segmentBytes: 100, indexIntervalBytes: 0, segmentMs: 0 }), /segmentMs/);
  });

  it('rolls when the offset or time index would exceed segment.index.bytes', () => {
    const fs = new MemoryFileSystem();
    // 24 bytes: 3 offset index entries or 2 time index entries. indexIntervalBytes 0: every batch but
    // a segment's first gets an offset entry, and a time entry when its timestamp is a new max.
    const log = open(fs, { segmentIndexBytes: 24, indexIntervalBytes: 0 });
    for (let i = 0; i < 4; i++) add(log, [T0]); // same timestamp: time entries stay at 1
    assert.deepEqual(log.segmentBaseOffsets(), [0], '3 offset entries');
    add(log, [T0]);
    assert.deepEqual(log.segmentBaseOffsets(), [0, 4], 'offset index full');
    add(log, [T0 + 1]);
    add(log, [T0 + 2]);
    add(log, [T0 + 3]);
    assert.deepEqual(log.segmentBaseOffsets(), [0, 4, 7], 'time index full after 2 entries');
  });
});

describe('Log: offsetForTimestamp (ListOffsets by time, KIP-79)', () => {
  it('answers the first record whose timestamp reaches the target, across segments, or null', () => {
    const fs = new MemoryFileSystem();
    const log = open(fs, { segmentBytes: 300, indexIntervalBytes: 0 });
    add(log, [T0 + 10, T0 + 50, T0 + 30], { epoch: 4 }); // 0..2
    add(log, [T0 + 40, T0 + 60], { epoch: 5 }); // 3..4
    add(log, [T0 + 20, T0 + 70, T0 + 55], { epoch: 5 }); // 5..7
    add(log, [T0 + 80], { epoch: 6 }); // 8
    assert.ok(log.segmentBaseOffsets().length >= 2);
    assert.deepEqual(log.offsetForTimestamp(0), { offset: 0, timestamp: T0 + 10, leaderEpoch: 4 });
    assert.deepEqual(log.offsetForTimestamp(T0 + 11), { offset: 1, timestamp: T0 + 50, leaderEpoch: 4 });
    assert.deepEqual(log.offsetForTimestamp(T0 + 51), { offset: 4, timestamp: T0 + 60, leaderEpoch: 5 });
    assert.deepEqual(log.offsetForTimestamp(T0 + 56), { offset: 4, timestamp: T0 + 60, leaderEpoch: 5 });
    assert.deepEqual(log.offsetForTimestamp(T0 + 61), { offset: 6, timestamp: T0 + 70, leaderEpoch: 5 });
    assert.deepEqual(log.offsetForTimestamp(T0 + 80), { offset: 8, timestamp: T0 + 80, leaderEpoch: 6 });
    assert.equal(log.offsetForTimestamp(T0 + 81), null);
    assert.throws(() => log.offsetForTimestamp(-1), /timestamp/);
  });

  it('gives every record of a LogAppendTime batch its append time', () => {
    const log = open(new MemoryFileSystem());
    add(log, [T0 + 500, T0 + 900]); // 0..1 CreateTime
    add(log, [5, 1, 3], { logAppendTimeMs: T0 + 700 }); // 2..4, all at T0 + 700
    assert.deepEqual(log.offsetForTimestamp(T0 + 600), { offset: 1, timestamp: T0 + 900, leaderEpoch: 1 });
    assert.deepEqual(log.offsetForTimestamp(T0 + 901), null);
    log.deleteRecordsBefore(3);
    assert.deepEqual(log.offsetForTimestamp(T0 + 600), { offset: 3, timestamp: T0 + 700, leaderEpoch: 1 });
  });

  it('decompresses a compressed batch to find the record; without a decompressor answers the batch', () => {
    const fs = new MemoryFileSystem();
    const build = () =>
      compressBatch(
        makeRecordBatch({ timestamps: [T0 + 10, T0 + 40, T0 + 20], valueBytes: 50 }),
        CompressionCodec.gzip,
      );
    const log = open(fs);
    log.append(build(), 2);
    assert.deepEqual(log.offsetForTimestamp(T0 + 30), { offset: 1, timestamp: T0 + 40, leaderEpoch: 2 });
    assert.deepEqual(log.maxTimestampOffset(), { offset: 1, timestamp: T0 + 40, leaderEpoch: 2 });
    log.close();
    const plain = open(fs, { decompress: null, recoveryPoint: 3 });
    assert.deepEqual(plain.offsetForTimestamp(T0 + 30), { offset: 0, timestamp: T0 + 40, leaderEpoch: 2 });
    assert.deepEqual(plain.maxTimestampOffset(), { offset: 0, timestamp: T0 + 40, leaderEpoch: 2 });
  });

  it('ignores records below the log start offset, even inside the first batch that reaches the target', () => {
    const log = open(new MemoryFileSystem(), { segmentBytes: 250 });
    add(log, [T0 + 10, T0 + 90, T0 + 20, T0 + 30]); // 0..3
    add(log, [T0 + 40]); // 4
    add(log, [T0 + 95]); // 5
    log.deleteRecordsBefore(2);
    assert.deepEqual(log.offsetForTimestamp(T0 + 25), { offset: 3, timestamp: T0 + 30, leaderEpoch: 1 });
    assert.deepEqual(log.offsetForTimestamp(T0 + 50), { offset: 5, timestamp: T0 + 95, leaderEpoch: 1 });
  });
});

describe('Log: maxTimestampOffset (ListOffsets -3, KIP-734)', () => {
  it('answers the earliest record holding the largest timestamp, across segments', () => {
    const log = open(new MemoryFileSystem(), { segmentBytes: 250 });
    assert.equal(log.maxTimestampOffset(), null, 'empty log');
    add(log, [-1]);
    assert.equal(log.maxTimestampOffset(), null, 'no timestamps');
    add(log, [T0 + 5, T0 + 70, T0 + 70]); // 1..3
    add(log, [T0 + 30]); // 4
    add(log, [T0 + 70]); // 5 (a tie, later)
    add(log, [T0 + 1, T0 + 2]); // 6..7
    assert.deepEqual(log.maxTimestampOffset(), { offset: 2, timestamp: T0 + 70, leaderEpoch: 1 });
    add(log, [T0 + 3, T0 + 71, T0 + 9]); // 8..10
    assert.deepEqual(log.maxTimestampOffset(), { offset: 9, timestamp: T0 + 71, leaderEpoch: 1 });
  });

  it('answers the first record of a LogAppendTime batch', () => {
    const log = open(new MemoryFileSystem());
    add(log, [T0 + 10]);
    add(log, [1, 2, 3], { logAppendTimeMs: T0 + 50 }); // 1..3
    assert.deepEqual(log.maxTimestampOffset(), { offset: 1, timestamp: T0 + 50, leaderEpoch: 1 });
  });

  it('leaves out records below the log start offset, in the straddling batch too', () => {
    const log = open(new MemoryFileSystem(), { segmentBytes: 1000 });
    add(log, [T0 + 90, T0 + 10, T0 + 60]); // 0..2
    add(log, [T0 + 40]); // 3
    log.deleteRecordsBefore(1);
    assert.deepEqual(log.maxTimestampOffset(), { offset: 2, timestamp: T0 + 60, leaderEpoch: 1 });
    log.deleteRecordsBefore(3);
    assert.deepEqual(log.maxTimestampOffset(), { offset: 3, timestamp: T0 + 40, leaderEpoch: 1 });
    log.deleteRecordsBefore(4);
    assert.equal(log.maxTimestampOffset(), null);
  });

  it('falls back to the batch when its header claims a timestamp no record holds', () => {
    const log = open(new MemoryFileSystem());
    add(log, [T0 + 1]);
    log.append(makeBatch({ records: 2, maxTimestampMs: T0 + 99 }), 1); // header-only payload: not decodable
    assert.deepEqual(log.maxTimestampOffset(), { offset: 1, timestamp: T0 + 99, leaderEpoch: 1 });
  });
});
