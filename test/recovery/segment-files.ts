/**
 * Reading (and damaging) a partition's segment files from outside the broker, for the recovery
 * suites. Layout (DESIGN.md "Storage layout"): `<log.dir>/<topic>-<partition>/<20-digit base>.log`
 * and `.index`.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  baseOffsetNumber,
  batchSizeAt,
  checkBatch,
  lastOffsetDeltaOf,
  recordsCountOf,
} from '../../src/protocol/record-batch/view';
import { LOG_OVERHEAD, RECORDS } from '../../src/protocol/record-batch/layout';

/** One segment's files. */
export interface SegmentFiles {
  baseOffset: number;
  logPath: string;
  indexPath: string;
}

/** A batch found in a `.log`: where it is and which offsets it holds. */
export interface StoredBatch {
  position: number;
  sizeBytes: number;
  baseOffset: number;
  lastOffset: number;
  recordsCount: number;
}

export function partitionDir(dataDir: string, topic: string, partition: number): string {
  return path.join(dataDir, `${topic}-${partition}`);
}

/** The partition's segments (by their `.log` files), in offset order. */
export function listSegments(dir: string): SegmentFiles[] {
  return fs
    .readdirSync(dir)
    .map((name) => /^(\d{20})\.log$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({
      baseOffset: Number(m[1]),
      logPath: path.join(dir, `${m[1]}.log`),
      indexPath: path.join(dir, `${m[1]}.index`),
    }))
    .sort((a, b) => a.baseOffset - b.baseOffset);
}

/** Every batch of a `.log`; asserts each is whole and CRC-valid (call it before damaging a file). */
export function readBatches(logPath: string): StoredBatch[] {
  const buf = fs.readFileSync(logPath);
  const batches: StoredBatch[] = [];
  let position = 0;
  while (position < buf.length) {
    const checked = checkBatch(buf, position, buf.length - position);
    if (typeof checked === 'string') assert.fail(`${logPath}: batch at byte ${position}: ${checked}`);
    const baseOffset = baseOffsetNumber(buf, position);
    batches.push({
      position,
      sizeBytes: batchSizeAt(buf, position),
      baseOffset,
      lastOffset: baseOffset + lastOffsetDeltaOf(buf, position),
      recordsCount: recordsCountOf(buf, position),
    });
    position += checked;
  }
  return batches;
}

/** The last batch of the partition's last segment. */
export function lastStoredBatch(dir: string): { segment: SegmentFiles; batch: StoredBatch } {
  const segments = listSegments(dir);
  assert.ok(segments.length > 0, `no segments in ${dir}`);
  const segment = segments[segments.length - 1]!;
  const batches = readBatches(segment.logPath);
  assert.ok(batches.length > 0, `${segment.logPath} is empty`);
  return { segment, batch: batches[batches.length - 1]! };
}

/** Cuts the last `bytes` bytes off a file (a torn write). */
export function tearTail(file: string, bytes: number): void {
  const size = fs.statSync(file).size;
  assert.ok(size > bytes, `${file} has only ${size} bytes`);
  fs.truncateSync(file, size - bytes);
}

/** Inverts one byte inside the records of a batch (covered by its CRC-32C, not by its length). */
export function flipByteInRecords(file: string, batch: StoredBatch): number {
  assert.ok(batch.sizeBytes > RECORDS + 1, 'batch has no record bytes');
  assert.ok(RECORDS > LOG_OVERHEAD);
  const position = batch.position + RECORDS + Math.floor((batch.sizeBytes - RECORDS) / 2);
  const fd = fs.openSync(file, 'r+');
  try {
    const one = Buffer.alloc(1);
    fs.readSync(fd, one, 0, 1, position);
    one[0]! ^= 0xff;
    fs.writeSync(fd, one, 0, 1, position);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return position;
}
