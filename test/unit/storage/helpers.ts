/**
 * Test helpers for storage: minimal valid record batches v2 (61-byte header + arbitrary record
 * bytes, CRC-32C over [21, end)), a recording logger, a fixed clock and batch splitting.
 */
import { crc32c } from '@node-rs/crc32';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Clock, Logger } from '../../../src/runtime/actor';
import * as L from '../../../src/protocol/record-batch/layout';

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
    out.push({ baseOffset, lastOffset: baseOffset + records.readInt32BE(pos + L.LAST_OFFSET_DELTA), bytes: records.subarray(pos, pos + size) });
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
