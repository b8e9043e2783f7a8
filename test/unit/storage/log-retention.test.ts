/**
 * Log: retention by time and size (Kafka's UnifiedLog.deleteOldSegments), DeleteRecords (KIP-107)
 * and the log start offset across restarts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Log, type LogConfig } from '../../../src/storage/log';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import {
  makeRecordBatch,
  manualClock,
  recordingLogger,
  splitBatches,
  timeIndexProblems,
  type LogLine,
  type ManualClock,
} from './helpers';

const DIR = '/data/events-0';
const T0 = 1_700_000_000_000;
const HOUR = 3600 * 1000;

interface OpenOpts extends Partial<LogConfig> {
  clock?: ManualClock;
  recoveryPoint?: number;
  logStartOffset?: number;
  lines?: LogLine[];
}

function open(fs: MemoryFileSystem, opts: OpenOpts = {}): Log {
  return Log.open({
    fs,
    dir: DIR,
    config: {
      segmentBytes: opts.segmentBytes ?? 100_000,
      indexIntervalBytes: opts.indexIntervalBytes ?? 100,
      segmentMs: opts.segmentMs ?? HOUR,
    },
    recoveryPoint: opts.recoveryPoint ?? 0,
    ...(opts.logStartOffset === undefined ? {} : { logStartOffset: opts.logStartOffset }),
    logger: recordingLogger(opts.lines),
    clock: opts.clock ?? manualClock(T0),
  });
}

/**
 * Four segments rolled by time (segment.ms = 30 min), each of 3 batches of 2 records:
 * segment k (base 6k) holds timestamps T0 + k hours + {0, 1, 2} minutes. LEO 24.
 */
function fourHours(fs = new MemoryFileSystem(), clock = manualClock(T0 + 4 * HOUR)) {
  const log = open(fs, { clock, segmentMs: HOUR / 2 });
  for (let k = 0; k < 4; k++) {
    for (let m = 0; m < 3; m++) {
      const t = T0 + k * HOUR + 1 + m * 60_000;
      log.append(makeRecordBatch({ timestamps: [t, t - 1], valueBytes: 20 }), 1);
    }
  }
  assert.deepEqual(log.segmentBaseOffsets(), [0, 6, 12, 18]);
  return { fs, log, clock };
}

const readFrom = (log: Log, offset: number) => log.read(offset, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
const files = (fs: MemoryFileSystem) => fs.readdir(DIR);

describe('Log: retention by time (retention.ms)', () => {
  it('deletes the oldest segments whose largest timestamp is older than now - retention.ms, files and all', () => {
    const { fs, log } = fourHours();
    const now = T0 + 4 * HOUR;
    // Segment 0's largest timestamp is T0 + 2 min + 1: 3h58m before now; segment 1's 2h58m.
    assert.deepEqual(log.deleteRetentionSegments(now, 3 * HOUR, -1, 24), { deletedSegments: 1, logStartOffset: 6 });
    assert.deepEqual(log.segmentBaseOffsets(), [6, 12, 18]);
    assert.ok(!files(fs).some((n) => n.startsWith('00000000000000000000.')), '.log, .index and .timeindex are gone');
    assert.deepEqual(readFrom(log, 5), { kind: 'out-of-range' });
    assert.equal(log.deleteRetentionSegments(now, 3 * HOUR, -1, 24).deletedSegments, 0);
    assert.deepEqual(log.deleteRetentionSegments(now, 2 * HOUR, -1, 24), { deletedSegments: 1, logStartOffset: 12 });
    assert.deepEqual(log.deleteRetentionSegments(now, 0, -1, 24), { deletedSegments: 2, logStartOffset: 24 });
    assert.equal(log.deleteRetentionSegments(now, -1, -1, 24).deletedSegments, 0, 'retention.ms -1 keeps everything');
  });

  it('never deletes a segment holding offsets at or above the high watermark', () => {
    const { log } = fourHours();
    const now = T0 + 100 * HOUR;
    assert.deepEqual(log.deleteRetentionSegments(now, HOUR, -1, 11), { deletedSegments: 1, logStartOffset: 6 });
    assert.deepEqual(log.deleteRetentionSegments(now, HOUR, -1, 12), { deletedSegments: 1, logStartOffset: 12 });
    assert.deepEqual(
      log.deleteRetentionSegments(now, HOUR, -1, 23),
      { deletedSegments: 1, logStartOffset: 18 },
      'the active segment stays below the LEO',
    );
  });

  it('deletes an expired active segment when the high watermark is at the LEO, rolling a new one first (Kafka)', () => {
    const { fs, log } = fourHours();
    assert.deepEqual(log.deleteRetentionSegments(T0 + 100 * HOUR, HOUR, -1, 24), {
      deletedSegments: 4,
      logStartOffset: 24,
    });
    assert.deepEqual(log.segmentBaseOffsets(), [24]);
    assert.equal(log.logEndOffset, 24);
    // The new empty segment's index files come with its first batch.
    assert.deepEqual(files(fs), ['00000000000000000024.log']);
    assert.equal(
      log.deleteRetentionSegments(T0 + 200 * HOUR, HOUR, -1, 24).deletedSegments,
      0,
      'an empty active segment is never deleted',
    );
    log.append(makeRecordBatch({ timestamps: [T0 + 101 * HOUR] }), 2);
    assert.equal(log.logEndOffset, 25);
    assert.deepEqual(files(fs), [
      '00000000000000000024.index',
      '00000000000000000024.log',
      '00000000000000000024.timeindex',
    ]);
  });

  it('keeps segments with future timestamps, and says so', () => {
    const lines: LogLine[] = [];
    const log = open(new MemoryFileSystem(), { lines, segmentBytes: 150 });
    log.append(makeRecordBatch({ timestamps: [T0 + 10 * HOUR] }), 1);
    log.append(makeRecordBatch({ timestamps: [T0] }), 1);
    assert.equal(log.segmentBaseOffsets().length, 2);
    assert.equal(log.deleteRetentionSegments(T0 + HOUR, 0, -1, 2).deletedSegments, 0);
    assert.match(JSON.stringify(lines), /future timestamps/);
  });

  it('times a segment without any timestamp by its last write (Kafka: the file mtime)', () => {
    const clock = manualClock(T0);
    const log = open(new MemoryFileSystem(), { clock, segmentBytes: 150 });
    log.append(makeRecordBatch({ timestamps: [-1, -1] }), 1);
    clock.advance(10 * HOUR);
    log.append(makeRecordBatch({ timestamps: [-1, -1] }), 1);
    assert.deepEqual(log.segmentBaseOffsets(), [0, 2]);
    assert.equal(
      log.deleteRetentionSegments(clock.now, 10 * HOUR, -1, 4).deletedSegments,
      0,
      'exactly retention.ms old is kept',
    );
    assert.deepEqual(log.deleteRetentionSegments(clock.now + 1, 10 * HOUR, -1, 4), {
      deletedSegments: 1,
      logStartOffset: 2,
    });
  });

  it('makes deletions durable at once: a power loss does not bring segments back', () => {
    const { fs, log } = fourHours();
    log.flush();
    log.deleteRetentionSegments(T0 + 4 * HOUR, 2 * HOUR, -1, 24);
    assert.deepEqual(log.segmentBaseOffsets(), [12, 18]);
    fs.crash({ kind: 'lose-unsynced' });
    const reopened = open(fs, { recoveryPoint: 24, logStartOffset: 0 });
    assert.deepEqual(reopened.segmentBaseOffsets(), [12, 18]);
    assert.equal(reopened.logStartOffset, 12);
    assert.deepEqual(timeIndexProblems(fs, DIR), []);
  });
});

describe('Log: retention by size (retention.bytes)', () => {
  it('deletes the oldest segments while what remains still holds at least retention.bytes', () => {
    const { log } = fourHours();
    const total = log.sizeBytes;
    const segment = total / 4; // equal batches
    assert.equal(log.deleteRetentionSegments(T0, -1, total, 24).deletedSegments, 0, 'exactly at the limit');
    assert.equal(
      log.deleteRetentionSegments(T0, -1, total - segment + 1, 24).deletedSegments,
      0,
      'deleting one would go below',
    );
    assert.deepEqual(log.deleteRetentionSegments(T0, -1, total - segment, 24), {
      deletedSegments: 1,
      logStartOffset: 6,
    });
    assert.deepEqual(log.deleteRetentionSegments(T0, -1, segment, 24), { deletedSegments: 2, logStartOffset: 18 });
    assert.deepEqual(
      log.deleteRetentionSegments(T0, -1, 0, 24),
      { deletedSegments: 1, logStartOffset: 24 },
      'retention.bytes 0 empties the log (rolling first)',
    );
    assert.deepEqual(log.segmentBaseOffsets(), [24]);
    assert.equal(log.deleteRetentionSegments(T0, -1, -1, 24).deletedSegments, 0);
  });

  it('applies the log start offset, size and time passes in Kafka order, each stopping at the high watermark', () => {
    const { log } = fourHours();
    log.deleteRecordsBefore(3); // inside segment 0: nothing deleted yet
    assert.deepEqual(log.segmentBaseOffsets(), [0, 6, 12, 18]);
    const quarter = log.sizeBytes / 4;
    // Size: keep >= 2 segments' bytes (deletes 0 and 6); time: 3h keeps everything after 1h.
    assert.deepEqual(log.deleteRetentionSegments(T0 + 4 * HOUR, 3 * HOUR, 2 * quarter, 13), {
      deletedSegments: 2,
      logStartOffset: 12,
    });
    assert.deepEqual(
      log.deleteRetentionSegments(T0 + 4 * HOUR, HOUR, -1, 13),
      { deletedSegments: 0, logStartOffset: 12 },
      'segment 12 reaches the HW',
    );
  });
});

describe('Log: DeleteRecords (KIP-107) and the log start offset', () => {
  it('raises the log start offset, deletes whole segments below it and hides the rest below it', () => {
    const { fs, log } = fourHours();
    assert.equal(log.deleteRecordsBefore(8), 8);
    assert.deepEqual(log.segmentBaseOffsets(), [6, 12, 18], 'segment 0 is wholly below');
    assert.equal(log.logStartOffset, 8);
    assert.deepEqual(readFrom(log, 7), { kind: 'out-of-range' }, 'offset 7 still has bytes in segment 6');
    const r = readFrom(log, 8);
    assert.ok(r.kind === 'ok' && r.firstOffset === 8);
    assert.equal(splitBatches(r.kind === 'ok' ? r.records : Buffer.alloc(0))[0]!.baseOffset, 8);
    assert.deepEqual(log.offsetForTimestamp(0), { offset: 8, timestamp: T0 + HOUR + 60_001, leaderEpoch: 1 });
    assert.equal(log.deleteRecordsBefore(5), 8, 'never lowered');
    assert.equal(log.deleteRecordsBefore(24), 24);
    assert.deepEqual(log.segmentBaseOffsets(), [18], 'the active segment stays, even wholly below');
    assert.deepEqual(readFrom(log, 24), { kind: 'ok', records: Buffer.alloc(0), firstOffset: null });
    assert.equal(log.offsetForTimestamp(0), null);
    assert.equal(log.maxTimestampOffset(), null);
    assert.throws(() => log.deleteRecordsBefore(25), /delete records before 25/);
    assert.ok(files(fs).every((n) => n.startsWith('00000000000000000018.')));
  });

  it('keeps a checkpointed log start offset across a restart, bounded by the log', () => {
    const { fs, log } = fourHours();
    log.deleteRecordsBefore(9);
    log.flush();
    log.close();
    let reopened = open(fs, { recoveryPoint: 24, logStartOffset: 9 });
    assert.equal(reopened.logStartOffset, 9);
    assert.deepEqual(readFrom(reopened, 8), { kind: 'out-of-range' });
    reopened.close();
    reopened = open(fs, { recoveryPoint: 24, logStartOffset: 2 });
    assert.equal(reopened.logStartOffset, 6, 'a stale checkpoint is raised to the first segment');
    reopened.close();
    reopened = open(fs, { recoveryPoint: 24, logStartOffset: 30 });
    assert.equal(
      reopened.logStartOffset,
      30,
      'a log ending below its start offset starts over there (Kafka LogLoader)',
    );
    assert.deepEqual(reopened.segmentBaseOffsets(), [30]);
  });

  it('lets retention delete the segments a restart found below the log start offset', () => {
    const { fs, log } = fourHours();
    log.flush();
    log.close();
    const reopened = open(fs, { recoveryPoint: 24, logStartOffset: 13 });
    assert.deepEqual(reopened.segmentBaseOffsets(), [0, 6, 12, 18]);
    assert.deepEqual(reopened.deleteRetentionSegments(T0, -1, -1, 13), { deletedSegments: 2, logStartOffset: 13 });
  });
});
