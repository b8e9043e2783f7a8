/**
 * Test helpers for storage: minimal valid record batches v2 (61-byte header + arbitrary record
 * bytes, CRC-32C over [21, end)), batches of real records with chosen timestamps, a recording
 * logger, fixed and manual clocks, batch splitting, and a time index check in the manner of
 * kafka-dump-log's (DumpLogSegments.dumpTimeIndex).
 */
import { crc32c } from '@node-rs/crc32';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Clock } from '../../../src/io/clock';
import type { Logger } from '../../../src/io/logger';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { decodeRecordBatch } from '../../../src/protocol/record-batch/decode';
import { decompress } from '../../../src/protocol/record-batch/compression';
import * as L from '../../../src/protocol/record-batch/layout';
import { stampLogAppendTime } from '../../../src/protocol/record-batch/view';
import type { FileSystem } from '../../../src/io/file-system';

export interface BatchSpec {
  /** recordsCount (lastOffsetDelta = records - 1). Default 1. */
  records?: number;
  /** Bytes after the 61-byte header. Default 10. */
  payloadBytes?: number;
  /** Byte value of the payload (default: a pattern from `seed`). */
  seed?: number;
  baseTimestampMs?: number;
  maxTimestampMs?: number;
}

/** A structurally valid v2 batch with baseOffset 0 and a correct CRC-32C. */
export function makeBatch(spec: BatchSpec = {}): Buffer {
  const records = spec.records ?? 1;
  const payload = spec.payloadBytes ?? 10;
  const seed = spec.seed ?? 7;
  const buf = Buffer.alloc(L.RECORD_BATCH_OVERHEAD + payload);
  buf.writeBigInt64BE(0n, L.BASE_OFFSET);
  buf.writeInt32BE(buf.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
  buf.writeInt32BE(-1, L.PARTITION_LEADER_EPOCH);
  buf.writeInt8(2, L.MAGIC);
  buf.writeInt16BE(0, L.ATTRIBUTES);
  buf.writeInt32BE(records - 1, L.LAST_OFFSET_DELTA);
  buf.writeBigInt64BE(BigInt(spec.baseTimestampMs ?? 1_700_000_000_000), L.BASE_TIMESTAMP);
  buf.writeBigInt64BE(BigInt(spec.maxTimestampMs ?? spec.baseTimestampMs ?? 1_700_000_000_000), L.MAX_TIMESTAMP);
  buf.writeBigInt64BE(-1n, L.PRODUCER_ID);
  buf.writeInt16BE(-1, L.PRODUCER_EPOCH);
  buf.writeInt32BE(-1, L.BASE_SEQUENCE);
  buf.writeInt32BE(records, L.RECORDS_COUNT);
  for (let i = 0; i < payload; i++) buf[L.RECORDS + i] = (seed * 31 + i * 7) & 0xff;
  buf.writeUInt32BE(crc32c(buf.subarray(L.ATTRIBUTES)) >>> 0, L.CRC);
  return buf;
}

/** Batch headers of a buffer of whole batches. */
export function splitBatches(records: Buffer): Array<{ baseOffset: number; lastOffset: number; bytes: Buffer }> {
  const out: Array<{ baseOffset: number; lastOffset: number; bytes: Buffer }> = [];
  let pos = 0;
  while (pos < records.length) {
    const size = L.LOG_OVERHEAD + records.readInt32BE(pos + L.BATCH_LENGTH);
    const baseOffset = Number(records.readBigInt64BE(pos));
    out.push({
      baseOffset,
      lastOffset: baseOffset + records.readInt32BE(pos + L.LAST_OFFSET_DELTA),
      bytes: records.subarray(pos, pos + size),
    });
    pos += size;
  }
  return out;
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: object | string;
  msg?: string;
}

/** A Logger that keeps every line (children share the list). */
export function recordingLogger(lines: LogLine[] = []): Logger & { lines: LogLine[] } {
  const at = (level: LogLine['level']) => (fields: object | string, msg?: string) => {
    lines.push({ level, fields, msg });
  };
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => recordingLogger(lines),
  };
}

/** A clock stuck at `nowMs`. */
export function fixedClock(nowMs = 1_700_000_000_000): Clock {
  return { nowMs: () => nowMs, monotonicMs: () => 0 };
}

/** A fresh temporary directory (tests may use node:fs; storage code may not). */
export function tmpDir(prefix = 'skiff-storage-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Removes a directory made by {@link tmpDir}. */
export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** A clock whose time tests move: `clock.nowMs()` is `clock.now`. */
export interface ManualClock extends Clock {
  now: number;
  advance(ms: number): void;
}

/** A {@link ManualClock} starting at `startMs`. */
export function manualClock(startMs = 1_700_000_000_000): ManualClock {
  const clock: ManualClock = {
    now: startMs,
    nowMs: () => clock.now,
    monotonicMs: () => clock.now,
    advance: (ms: number) => {
      clock.now += ms;
    },
  };
  return clock;
}

export interface RecordBatchSpec {
  /** One record per timestamp (ms; -1 = NO_TIMESTAMP). */
  timestamps: number[];
  /** Value bytes per record (default 10). */
  valueBytes?: number;
  seed?: number;
  /** Stamp as a LogAppendTime batch with this append time (every record then carries it). */
  logAppendTimeMs?: number;
}

/**
 * An uncompressed v2 batch of real records with the given timestamps (baseTimestamp = the first,
 * maxTimestamp = the largest, as Kafka's producer writes them), baseOffset 0, valid CRC-32C.
 */
export function makeRecordBatch(spec: RecordBatchSpec): Buffer {
  const valueBytes = spec.valueBytes ?? 10;
  const seed = spec.seed ?? 1;
  const batch = buildRecordBatch(
    spec.timestamps.map((timestamp, i) => ({
      key: null,
      value: Buffer.alloc(valueBytes, (seed + i) & 0xff),
      timestamp,
    })),
    { baseTimestamp: spec.timestamps[0]!, partitionLeaderEpoch: -1 },
  );
  if (spec.logAppendTimeMs !== undefined) stampLogAppendTime(batch, spec.logAppendTimeMs);
  return batch;
}

/** The entries of a `.timeindex` file: (timestamp, absolute offset). */
export function parseTimeIndex(bytes: Buffer, baseOffset: number): Array<{ timestampMs: number; offset: number }> {
  const out: Array<{ timestampMs: number; offset: number }> = [];
  for (let at = 0; at + 12 <= bytes.length; at += 12) {
    out.push({ timestampMs: Number(bytes.readBigInt64BE(at)), offset: baseOffset + bytes.readInt32BE(at + 8) });
  }
  return out;
}

/** Largest record timestamp of a stored batch (decoding its records, as kafka-dump-log does). */
function batchRecordMaxTimestamp(batch: Buffer): number {
  const attributes = batch.readInt16BE(L.ATTRIBUTES);
  if ((attributes & L.TIMESTAMP_TYPE_MASK) !== 0) return Number(batch.readBigInt64BE(L.MAX_TIMESTAMP));
  let plain = batch;
  const codec = attributes & L.COMPRESSION_CODEC_MASK;
  if (codec !== 0) {
    const records = decompress(codec, batch.subarray(L.RECORDS));
    plain = Buffer.concat([batch.subarray(0, L.RECORDS), records]);
    plain.writeInt32BE(plain.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
    plain.writeInt16BE(attributes & ~L.COMPRESSION_CODEC_MASK, L.ATTRIBUTES);
  }
  try {
    return Math.max(-1, ...decodeRecordBatch(plain).records.map((r) => r.timestamp));
  } catch {
    return Number(batch.readBigInt64BE(L.MAX_TIMESTAMP)); // makeBatch's payload is not records
  }
}

/**
 * Checks every `.timeindex` in `dir` the way kafka-dump-log's index verification does, and more:
 * each entry's offset is the LAST offset of a batch of its segment whose records' largest timestamp
 * is the entry's timestamp, timestamps strictly increase, every earlier batch of the segment has a
 * smaller maxTimestamp, and (for every segment but the last, when `finalEntries`) the last entry is
 * the segment's max timestamp. Returns a list of problems (empty when all is well).
 */
export function timeIndexProblems(fs: FileSystem, dir: string, finalEntries = true): string[] {
  const problems: string[] = [];
  const bases = fs
    .readdir(dir)
    .filter((n) => n.endsWith('.log'))
    .map((n) => Number(n.slice(0, 20)))
    .sort((a, b) => a - b);
  bases.forEach((base, i) => {
    const name = String(base).padStart(20, '0');
    const batches = splitBatches(fs.readFile(`${dir}/${name}.log`)).map((b) => ({
      ...b,
      maxTimestampMs: Number(b.bytes.readBigInt64BE(L.MAX_TIMESTAMP)),
    }));
    const entries = fs.exists(`${dir}/${name}.timeindex`)
      ? parseTimeIndex(fs.readFile(`${dir}/${name}.timeindex`), base)
      : [];
    let prev = -1;
    for (const e of entries) {
      const at = batches.findIndex((b) => b.lastOffset >= e.offset);
      const b = batches[at];
      if (b === undefined || b.lastOffset !== e.offset) {
        problems.push(`${name}.timeindex: entry (${e.timestampMs}, ${e.offset}) is not a batch's last offset`);
        continue;
      }
      if (batchRecordMaxTimestamp(Buffer.from(b.bytes)) !== e.timestampMs)
        problems.push(`${name}.timeindex: entry (${e.timestampMs}, ${e.offset}) mismatches its batch`);
      if (e.timestampMs <= prev) problems.push(`${name}.timeindex: timestamp ${e.timestampMs} not increasing`);
      if (batches.slice(0, at).some((x) => x.maxTimestampMs >= e.timestampMs))
        problems.push(`${name}.timeindex: entry (${e.timestampMs}, ${e.offset}) is not the first batch reaching it`);
      prev = e.timestampMs;
    }
    if (finalEntries && i < bases.length - 1) {
      const max = Math.max(-1, ...batches.map((b) => b.maxTimestampMs));
      const last = entries[entries.length - 1];
      if (max >= 0 && last?.timestampMs !== max)
        problems.push(`${name}.timeindex: ends at ${last?.timestampMs}, segment max ${max}`);
    }
  });
  return problems;
}
