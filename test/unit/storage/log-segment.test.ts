import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setBaseOffset } from '../../../src/protocol/record-batch/view';
import { LogSegment, parseSegmentFileName, segmentFileName } from '../../../src/storage/log-segment';
import { MemoryFileSystem } from '../../../src/storage/memory-file-system';
import { makeBatch, recordingLogger } from './helpers';

function setup(indexIntervalBytes = 100) {
  const fs = new MemoryFileSystem();
  fs.mkdirp('/p');
  const logger = recordingLogger();
  const args = { fs, dir: '/p', baseOffset: 50, indexIntervalBytes, logger };
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
    assert.equal(parseSegmentFileName('00000000000000001234.timeindex'), null);
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
