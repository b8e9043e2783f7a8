import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setBaseOffset } from '../../../src/protocol/record-batch/view';
import { LogSegment, parseSegmentFileName, segmentFileName } from '../../../src/storage/log-segment';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import {
  fixedClock,
  makeBatch,
  makeRecordBatch,
  manualClock,
  parseTimeIndex,
  recordingLogger,
  timeIndexProblems,
} from './helpers';

function setup(indexIntervalBytes = 100) {
  const fs = new MemoryFileSystem();
  fs.mkdirp('/p');
  const logger = recordingLogger();
  const args = { fs, dir: '/p', baseOffset: 50, indexIntervalBytes, logger, clock: fixedClock() };
  return { fs, logger, args, segment: LogSegment.create(args) };
}

/** Appends batches of `records` records and `payload` bytes; returns their [base, last, position, size]. */
function fill(segment: LogSegment, count: number, records = 2, payload = 39) {
  const out: Array<{ base: number; last: number; position: number; size: number }> = [];
  for (let i = 0; i < count; i++) {
    const batch = makeBatch({ records, payloadBytes: payload, seed: i });
    const base = segment.nextOffset;
    setBaseOffset(batch, base);
    out.push({ base, last: base + records - 1, position: segment.sizeBytes, size: batch.length });
    segment.append(batch, base, base + records - 1);
  }
  return out;
}

describe('segment file names', () => {
  it('are 20-digit zero-padded base offsets', () => {
    assert.equal(segmentFileName(0, '.log'), '00000000000000000000.log');
    assert.equal(segmentFileName(1234, '.index'), '00000000000000001234.index');
    assert.deepEqual(parseSegmentFileName('00000000000000001234.index'), { baseOffset: 1234, suffix: '.index' });
    assert.equal(parseSegmentFileName('1234.log'), null);
    assert.deepEqual(parseSegmentFileName('00000000000000001234.timeindex'), {
      baseOffset: 1234,
      suffix: '.timeindex',
    });
    assert.equal(parseSegmentFileName('00000000000000001234.txnindex'), null);
  });
});

describe('LogSegment', () => {
  it('appends, indexes every indexIntervalBytes (Kafka rule) and finds batches', () => {
    const { segment } = setup(100);
    const batches = fill(segment, 10); // 100-byte batches
    assert.equal(segment.sizeBytes, 1000);
    assert.equal(segment.nextOffset, 70);
    // Entry when bytes since the last entry (or segment start) exceed 100 before the batch:
    // positions 200, 400, 600, 800 (each batch is exactly 100 bytes).
    assert.equal(segment.indexEntries, 4);
    for (const b of batches) {
      for (const o of [b.base, b.last]) assert.deepEqual(segment.findBatch(o)?.position, b.position, `offset ${o}`);
    }
    assert.equal(segment.findBatch(70), null);
  });

  it('recover keeps an intact segment and rebuilds an identical index', () => {
    const { fs, args, segment } = setup(100);
    fill(segment, 10);
    segment.sync();
    const indexBefore = fs.readFile(segment.indexPath);
    const result = segment.recover(50);
    assert.deepEqual(result, { fromPosition: 0, validBytes: 1000, truncatedBytes: 0, reason: null });
    assert.deepEqual(fs.readFile(segment.indexPath), indexBefore);
    segment.close();
    const loaded = LogSegment.load(args);
    assert.equal(loaded.indexProblem, null);
    const partial = loaded.recover(63); // from the index entry at or below 63
    assert.ok(partial.fromPosition > 0);
    assert.equal(partial.truncatedBytes, 0);
    assert.equal(loaded.nextOffset, 70);
    assert.deepEqual(fs.readFile(segment.indexPath), indexBefore);
  });

  it('recover truncates a torn last batch and logs why', () => {
    const { fs, args, segment, logger } = setup(100);
    const batches = fill(segment, 5);
    segment.close();
    const h = fs.open(segment.logPath, 'rw');
    h.truncate(batches[4]!.position + 30);
    h.close();
    const loaded = LogSegment.load(args);
    const result = loaded.recover(50);
    assert.equal(result.truncatedBytes, 30);
    assert.match(result.reason!, /torn batch/);
    assert.equal(loaded.nextOffset, batches[4]!.base);
    assert.equal(loaded.sizeBytes, batches[4]!.position);
    const warn = logger.lines.find((l) => l.level === 'warn');
    assert.ok(warn !== undefined);
    assert.equal((warn.fields as { droppedBytes: number }).droppedBytes, 30);
  });

  it('recover truncates at a CRC mismatch and at an offset gap', () => {
    const { fs, args, segment } = setup(100);
    const batches = fill(segment, 5);
    segment.close();
    fs.flipByte(segment.logPath, batches[3]!.position + 70);
    let loaded = LogSegment.load(args);
    assert.deepEqual(loaded.recover(50).reason, 'CRC-32C mismatch');
    assert.equal(loaded.nextOffset, batches[3]!.base);
    loaded.close();

    // baseOffset is outside the CRC: a gap is caught by the dense-offset check.
    const h = fs.open(segment.logPath, 'rw');
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(batches[2]!.base + 1));
    h.write(b, batches[2]!.position);
    h.close();
    loaded = LogSegment.load(args);
    assert.match(loaded.recover(50).reason!, /expected 54/);
    assert.equal(loaded.nextOffset, 54);
  });

  it('loadNextOffset scans only from the last index entry and rejects a mismatched entry', () => {
    const { fs, args, segment } = setup(100);
    fill(segment, 10);
    segment.close();
    const loaded = LogSegment.load(args);
    assert.equal(loaded.loadNextOffset(), null);
    assert.equal(loaded.nextOffset, 70);
    loaded.close();
    // Last entry (66..67 at position 800): relative offset 17 -> 16, still in order but wrong.
    fs.flipByte(segment.indexPath, 27, 0x01);
    const bad = LogSegment.load(args);
    assert.equal(bad.indexProblem, null);
    assert.match(bad.loadNextOffset()!, /does not match/);
    assert.equal(bad.recover(50).truncatedBytes, 0);
    assert.equal(bad.nextOffset, 70);
  });

  it('loadNextOffset restores index entries lost after the last one', () => {
    const { fs, args, segment } = setup(100);
    fill(segment, 10);
    segment.close();
    const full = fs.readFile(segment.indexPath);
    const h = fs.open(segment.indexPath, 'rw');
    h.truncate(8); // keep only the first entry
    h.close();
    const loaded = LogSegment.load(args);
    assert.equal(loaded.indexProblem, null);
    assert.equal(loaded.indexEntries, 1);
    assert.equal(loaded.loadNextOffset(), null);
    assert.equal(loaded.nextOffset, 70);
    assert.deepEqual(fs.readFile(segment.indexPath), full);
  });

  it('truncateTo drops the batch containing the offset and everything after', () => {
    const { segment } = setup(100);
    const batches = fill(segment, 10);
    assert.equal(segment.truncateTo(batches[6]!.base + 1), 400);
    assert.equal(segment.nextOffset, batches[6]!.base);
    assert.equal(segment.sizeBytes, 600);
    assert.equal(segment.indexEntries, 2);
    assert.equal(segment.truncateTo(1000), 0);
  });
});

/** Appends one 100-byte batch of 2 records per timestamp (header-only payload); returns [base, last, position]. */
function fillTimed(segment: LogSegment, maxTimestamps: number[]) {
  return maxTimestamps.map((maxTimestampMs, i) => {
    const batch = makeBatch({ records: 2, payloadBytes: 39, seed: i, baseTimestampMs: maxTimestampMs, maxTimestampMs });
    const base = segment.nextOffset;
    setBaseOffset(batch, base);
    const position = segment.sizeBytes;
    segment.append(batch, base, base + 1);
    return { base, last: base + 1, position };
  });
}

const timeEntries = (fs: MemoryFileSystem, segment: LogSegment) =>
  parseTimeIndex(fs.readFile(segment.timeIndexPath), segment.baseOffset);

describe('LogSegment: time index', () => {
  // Batches b0..b9 at positions 0, 100, .., 900; offset index entries at b2, b4, b6, b8 (indexIntervalBytes 100).
  const TIMES = [10, 30, 20, 25, 50, 40, 45, 45, 60, 55];

  it('adds an entry next to an offset index entry when the max timestamp grew: max so far -> last offset of its batch', () => {
    const { fs, segment } = setup(100);
    const b = fillTimed(segment, TIMES);
    assert.equal(segment.indexEntries, 4);
    assert.deepEqual(timeEntries(fs, segment), [
      { timestampMs: 30, offset: b[1]!.last }, // at b2: the max so far came from b1
      { timestampMs: 50, offset: b[4]!.last }, // at b4; nothing at b6 (max unchanged)
      { timestampMs: 60, offset: b[8]!.last },
    ]);
    assert.deepEqual(segment.maxTimestampSoFar, { timestampMs: 60, offset: b[8]!.last });
    assert.deepEqual(timeIndexProblems(fs, '/p', false), []);
  });

  it('appends the final entry for the segment max when it becomes inactive or is closed, once', () => {
    const { fs, args, segment } = setup(100);
    fillTimed(segment, [...TIMES, 65]); // b10 at 1000: indexed, max 65
    const b11 = fillTimed(segment, [80])[0]!; // at 1100: not indexed, max 80 has no entry yet
    assert.equal(timeEntries(fs, segment).at(-1)!.timestampMs, 65);
    segment.onBecomeInactive();
    segment.onBecomeInactive();
    assert.deepEqual(timeEntries(fs, segment).slice(-2), [
      { timestampMs: 65, offset: 71 },
      { timestampMs: 80, offset: b11.last },
    ]);
    const again = LogSegment.create({ ...args, baseOffset: 500 });
    fillTimed(again, [5, 7]);
    again.close();
    assert.deepEqual(parseTimeIndex(fs.readFile(again.timeIndexPath), 500), [{ timestampMs: 7, offset: 503 }]);
  });

  it('recover rebuilds the time index identically; a partial recovery restores entries a crash lost before its start', () => {
    const { fs, args, segment } = setup(100);
    fillTimed(segment, [...TIMES, 65, 80]);
    segment.close(); // writes the final entry, like Kafka's close
    const full = fs.readFile(segment.timeIndexPath);
    assert.equal(full.length, 5 * 12);

    let loaded = LogSegment.load(args);
    assert.equal(loaded.timeIndexProblem, null);
    loaded.recover(50);
    assert.deepEqual(fs.readFile(segment.timeIndexPath), full);
    loaded.close();

    // Keep only the first time entry: the offset index still has b4 and b8, whose entries were lost.
    const h = fs.open(segment.timeIndexPath, 'rw');
    h.truncate(12);
    h.close();
    loaded = LogSegment.load(args);
    const result = loaded.recover(67); // from the offset index entry of b8 (66..67)
    assert.equal(result.fromPosition, 800);
    assert.deepEqual(fs.readFile(segment.timeIndexPath), full);
    assert.deepEqual(loaded.maxTimestampSoFar, { timestampMs: 80, offset: 73 });
  });

  it('a missing time index is rebuilt from the log', () => {
    const { fs, args, segment } = setup(100);
    fillTimed(segment, TIMES);
    segment.close();
    const full = fs.readFile(segment.timeIndexPath);
    fs.unlink(segment.timeIndexPath);
    const loaded = LogSegment.load(args);
    assert.equal(loaded.timeIndexProblem, 'missing');
    loaded.recover(Number.MAX_SAFE_INTEGER);
    assert.deepEqual(fs.readFile(segment.timeIndexPath), full);
  });

  it('loadNextOffset takes the max from the last entry and the batches after the last offset index entry', () => {
    const { fs, args, segment } = setup(100);
    fillTimed(segment, [...TIMES, 65, 80]);
    segment.close();
    const h = fs.open(segment.timeIndexPath, 'rw');
    h.truncate(4 * 12); // lose the final (80) entry
    h.close();
    const loaded = LogSegment.load(args);
    assert.equal(loaded.loadNextOffset(), null);
    assert.deepEqual(loaded.maxTimestampSoFar, { timestampMs: 80, offset: 73 });
    assert.equal(loaded.timeIndexEntries, 4);
    loaded.onBecomeInactive();
    assert.equal(loaded.timeIndexEntries, 5);
  });

  it('truncateTo drops the time entries of the cut batches and re-reads the max timestamp', () => {
    const { fs, segment } = setup(100);
    const b = fillTimed(segment, TIMES);
    segment.truncateTo(b[8]!.base);
    assert.deepEqual(timeEntries(fs, segment), [
      { timestampMs: 30, offset: b[1]!.last },
      { timestampMs: 50, offset: b[4]!.last },
    ]);
    assert.deepEqual(segment.maxTimestampSoFar, { timestampMs: 50, offset: b[4]!.last });
    segment.truncateTo(b[4]!.base + 1);
    assert.deepEqual(segment.maxTimestampSoFar, { timestampMs: 30, offset: b[1]!.last });
    segment.truncateTo(b[0]!.base);
    assert.deepEqual(segment.maxTimestampSoFar, { timestampMs: -1, offset: -1 });
    assert.equal(segment.timeIndexEntries, 0);
  });

  it('times a roll from the first batch timestamp, or from creation when it has none; largest timestamp falls back to last-modified', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp('/p');
    const clock = manualClock(5000);
    const args = { fs, dir: '/p', baseOffset: 0, indexIntervalBytes: 100, logger: recordingLogger(), clock };
    const segment = LogSegment.create(args);
    clock.advance(100);
    assert.equal(segment.timeWaitedForRollMs(clock.now, 1_000), 100, 'empty: since creation');
    fillTimed(segment, [-1]);
    assert.equal(
      segment.timeWaitedForRollMs(clock.now + 50, 1_000),
      150,
      'first batch without timestamp: since creation',
    );
    assert.equal(segment.largestTimestampMs, 5100, 'no timestamps: last-modified time');
    const other = LogSegment.create({ ...args, baseOffset: 100 });
    fillTimed(other, [2000, 9000]);
    assert.equal(other.timeWaitedForRollMs(clock.now, 2500), 500, 'from the first batch max timestamp');
    assert.equal(other.largestTimestampMs, 9000);
    other.close();
    clock.advance(1000);
    const loaded = LogSegment.load({ ...args, baseOffset: 100 });
    assert.equal(loaded.loadNextOffset(), null);
    assert.equal(loaded.timeWaitedForRollMs(clock.now, 2600), 600, 'loaded lazily from the first batch');
    assert.equal(loaded.createdMs, 6100);
  });

  it('finds the first record at or after a timestamp, decoding the records of the batch that reaches it', () => {
    const { segment } = setup(100);
    const add = (batch: Buffer) => {
      const base = segment.nextOffset;
      setBaseOffset(batch, base);
      segment.append(batch, base, base + batch.readInt32BE(23));
    };
    add(makeRecordBatch({ timestamps: [100, 300, 200] })); // offsets 50..52
    add(makeRecordBatch({ timestamps: [250, 400] })); // 53..54
    add(makeRecordBatch({ timestamps: [10, 20], logAppendTimeMs: 500 })); // 55..56, both 500
    assert.deepEqual(segment.findOffsetByTimestamp(150, 50, null), { offset: 51, timestamp: 300, leaderEpoch: -1 });
    assert.deepEqual(
      segment.findOffsetByTimestamp(300, 52, null),
      { offset: 54, timestamp: 400, leaderEpoch: -1 },
      'records below the start offset do not count',
    );
    assert.deepEqual(segment.findOffsetByTimestamp(450, 50, null), { offset: 55, timestamp: 500, leaderEpoch: -1 });
    assert.deepEqual(segment.findOffsetByTimestamp(450, 56, null), { offset: 56, timestamp: 500, leaderEpoch: -1 });
    assert.equal(segment.findOffsetByTimestamp(501, 50, null), null);
    assert.equal(segment.maxTimestampFrom(50, null), 500);
    assert.equal(segment.maxTimestampFrom(52, null), 500);
  });
});
