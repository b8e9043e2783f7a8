/**
 * Helpers for log compaction tests: keyed batches, a compacted Log on a MemoryFileSystem, one whole
 * cleaning pass with the inline CPU job runner, the log's (offset, key, value) view, and a file
 * system that "loses power" after a given number of mutating operations.
 */
import assert from 'node:assert/strict';
import { buildBatch, decodeBatches } from '../../../src/client/batch';
import type { CompressionCodecId } from '../../../src/protocol/record-batch/compression';
import { crcValid } from '../../../src/protocol/record-batch/view';
import { inlineCpuJobs } from '../../../src/runtime/cpu-jobs';
import type { FileHandle, FileSystem } from '../../../src/io/file-system';
import { Log } from '../../../src/storage/log';
import { cleanLog, planCleaning, type CleanerConfig, type CleaningOutcome } from '../../../src/storage/log-cleaner';
import type { Clock } from '../../../src/io/clock';
import { recordingLogger, splitBatches } from './helpers';

export const DIR = '/data/compacted-0';

/** One keyed record to produce: value null = tombstone. */
export interface KV {
  key: string;
  value: string | null;
}

/** A batch of keyed records (timestamps = `timestampMs`). */
export function keyedBatch(records: readonly KV[], timestampMs: number, compression: CompressionCodecId = 0): Buffer {
  return buildBatch(
    records.map((r) => ({
      key: Buffer.from(r.key),
      value: r.value === null ? null : Buffer.from(r.value),
      timestamp: timestampMs,
      headers: [{ key: 'src', value: Buffer.from(r.key) }],
    })),
    { compression },
  );
}

/** Opens a compacted log with small segments. */
export function openCompacted(fs: FileSystem, clock: Clock, segmentBytes = 600, recoveryPoint = 0): Log {
  return Log.open({
    fs,
    dir: DIR,
    config: { segmentBytes, indexIntervalBytes: 100 },
    recoveryPoint,
    logger: recordingLogger(),
    clock,
    compacted: true,
  });
}

export const CLEANER: CleanerConfig = {
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
  deleteRetentionMs: 60_000,
  segmentBytes: 600,
};

/** Plans and runs one pass (HW = LEO after a flush); null when nothing was planned. */
export async function cleanOnce(
  log: Log,
  clock: Clock,
  config: Partial<CleanerConfig> = {},
  pendingDeleteHorizonMs = -1,
): Promise<CleaningOutcome | null> {
  log.flush();
  const full = { ...CLEANER, ...config };
  const plan = planCleaning(log, {
    config: full,
    highWatermark: log.logEndOffset,
    nowMs: clock.nowMs(),
    pendingDeleteHorizonMs,
  });
  if (plan === null) return null;
  return cleanLog(log, {
    plan,
    cpu: inlineCpuJobs,
    deleteRetentionMs: full.deleteRetentionMs,
    nowMs: clock.nowMs(),
    isCurrent: () => !log.isClosed,
    logger: recordingLogger(),
  });
}

/** Every record the log serves from its start: offset, key, value (null = tombstone). */
export function logRecords(log: Log): Array<{ offset: number; key: string; value: string | null }> {
  const r = log.read(log.logStartOffset, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
  assert.equal(r.kind, 'ok');
  if (r.kind !== 'ok') return [];
  for (const b of splitBatches(r.records))
    assert.ok(crcValid(b.bytes, 0, b.bytes.length), `CRC of batch at ${b.baseOffset}`);
  return decodeBatches(r.records).flatMap((b) =>
    b.records.map((rec) => ({ offset: rec.offset, key: rec.key!.toString(), value: rec.value?.toString() ?? null })),
  );
}

/** key -> latest value (null = tombstone) of a record list, and the offset of that latest record. */
export function latestByKey(
  records: ReadonlyArray<{ offset: number; key: string; value: string | null }>,
): Map<string, { offset: number; value: string | null }> {
  const m = new Map<string, { offset: number; value: string | null }>();
  for (const r of records) m.set(r.key, { offset: r.offset, value: r.value });
  return m;
}

/** Thrown by {@link PowerCutFileSystem} at its cut. */
export class PowerCut extends Error {}

/**
 * Delegates to `inner`, but throws {@link PowerCut} instead of performing mutating operation number
 * `cutAt` (0-based: write, truncate, sync, rename, unlink, syncDir, writeFileAtomic) and every one
 * after it, as if the machine lost power just before it. `operations` counts those attempted.
 */
export class PowerCutFileSystem implements FileSystem {
  operations = 0;
  constructor(
    private readonly inner: FileSystem,
    public cutAt = Number.POSITIVE_INFINITY,
  ) {}

  private step(): void {
    if (this.operations++ >= this.cutAt) throw new PowerCut(`power cut at operation ${this.cutAt}`);
  }

  open(path: string, mode: 'r' | 'rw'): FileHandle {
    if (mode === 'rw' && !this.inner.exists(path)) this.step();
    const h = this.inner.open(path, mode);
    return {
      read: (b, o, l, p) => h.read(b, o, l, p),
      write: (d, p) => {
        this.step();
        h.write(d, p);
      },
      size: () => h.size(),
      truncate: (n) => {
        this.step();
        h.truncate(n);
      },
      sync: () => {
        this.step();
        h.sync();
      },
      close: () => h.close(),
    };
  }
  exists(path: string): boolean {
    return this.inner.exists(path);
  }
  mkdirp(path: string): void {
    this.inner.mkdirp(path);
  }
  readdir(path: string): string[] {
    return this.inner.readdir(path);
  }
  readFile(path: string): Buffer {
    return this.inner.readFile(path);
  }
  writeFileAtomic(path: string, data: Uint8Array): void {
    this.step();
    this.inner.writeFileAtomic(path, data);
  }
  rename(from: string, to: string): void {
    this.step();
    this.inner.rename(from, to);
  }
  unlink(path: string): void {
    this.step();
    this.inner.unlink(path);
  }
  rmrf(path: string): void {
    this.step();
    this.inner.rmrf(path);
  }
  syncDir(path: string): void {
    this.step();
    this.inner.syncDir(path);
  }
}
