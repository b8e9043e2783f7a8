/**
 * Model-based property test of Log on the simulated disk, against an array model of the batches
 * appended (with their record timestamps) and of the segments:
 * - appends with explicit record timestamps (monotone, shuffled, none, LogAppendTime; some gzip
 *   compressed) under a fake clock that commands advance: the model predicts every roll, by size
 *   and by time (segment.ms from the first batch's timestamp, or from creation without one);
 * - flushes, crashes (lost or torn unsynced writes) with reopen, clean and unclean restarts: the log
 *   must be a prefix of what was appended holding every flushed batch (DESIGN.md invariant 6),
 *   recovery changes no byte of an intact .log/.index and is idempotent;
 * - asynchronous flushes (Log.flushAsync on a disk whose fsyncs complete only when a command says
 *   so, a few files at a time): appends, rolls, retention, synchronous flushes and crashes interleave
 *   with them; a completed one covers exactly the LEO at its start, and a crash while one is in
 *   flight keeps at least what earlier completed flushes covered (a prefix, as always);
 * - truncations, retention by time and by bytes under a high watermark, DeleteRecords: the model
 *   computes which segments go and the log start offset (Kafka's deleteOldSegments);
 * - reads (whole batches, maxBytes / HW / KIP-74), offsetForTimestamp (the first retained record
 *   with timestamp >= t) and maxTimestampOffset (the earliest retained record with the largest one);
 * - every `.timeindex` passes kafka-dump-log's checks and ends inactive segments with their max.
 * The high watermark never passes what is flushed (write.caching=false), as the replica keeps it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compressBatch } from '../../../src/client/batch';
import { CompressionCodec } from '../../../src/protocol/record-batch/compression';
import { stampLogAppendTime } from '../../../src/protocol/record-batch/view';
import { Log, type LogConfig } from '../../../src/storage/log';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import {
  makeRecordBatch,
  manualClock,
  recordingLogger,
  splitBatches,
  timeIndexProblems,
  type ManualClock,
} from '../../unit/storage/helpers';

const DIR = '/data/t-0';
const T0 = 1_700_000_000_000;
const EPOCH = 3;

interface ModelBatch {
  /** As stored (offsets and epoch assigned). */
  bytes: Buffer;
  base: number;
  last: number;
  /** The header's maxTimestamp. */
  maxTs: number;
  /** Each record's offset and timestamp (LogAppendTime: the batch's maxTimestamp). */
  records: Array<{ offset: number; ts: number }>;
}

interface ModelSegment {
  base: number;
  createdMs: number;
  lastModifiedMs: number;
}

interface Model {
  /** Every batch still in a segment (some may lie below the log start offset), in offset order. */
  batches: ModelBatch[];
  segments: ModelSegment[];
  logStartOffset: number;
  /** Offsets below this are fsynced. */
  flushed: number;
  /** recovery-point and log-start-offset checkpoints as the replica would have written them. */
  checkpointRp: number;
  checkpointLogStartOffset: number;
  clock: ManualClock;
  /** The LEO when the asynchronous flush in flight started, or null when none is. */
  inFlight: number | null;
}

interface Real {
  /** Asynchronous fsyncs complete only in SyncProgress / FinishAsyncFlush. */
  fs: MemoryFileSystem;
  log: Log;
  config: LogConfig;
  /** The asynchronous flush in flight. */
  flush: Promise<number> | null;
}

/** Forgets the asynchronous flush in flight (a crash failed it, or the log was reopened under it). */
function dropInFlight(m: Model, r: Real): void {
  m.inFlight = null;
  r.flush = null;
}

function leoOf(m: Model): number {
  const active = m.segments[m.segments.length - 1]!.base;
  const last = m.batches[m.batches.length - 1];
  return last === undefined ? active : Math.max(active, last.last + 1);
}

const batchesIn = (m: Model, i: number) => {
  const base = m.segments[i]!.base;
  const next = m.segments[i + 1]?.base ?? Number.POSITIVE_INFINITY;
  return m.batches.filter((b) => b.base >= base && b.base < next);
};
const sizeOf = (batches: ModelBatch[]) => batches.reduce((n, b) => n + b.bytes.length, 0);
const retained = (m: Model) => m.batches.filter((b) => b.last >= m.logStartOffset);

function reopen(m: Model, r: Real, recoveryPoint: number): void {
  r.log = Log.open({
    fs: r.fs,
    dir: DIR,
    config: r.config,
    recoveryPoint,
    logStartOffset: m.checkpointLogStartOffset,
    logger: recordingLogger(),
    clock: m.clock,
  });
}

function readAllBatches(log: Log): Buffer[] {
  const res = log.read(log.logStartOffset, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
  assert.equal(res.kind, 'ok');
  return res.kind === 'ok' ? splitBatches(res.records).map((b) => Buffer.from(b.bytes)) : [];
}

function checkCommon(m: Model, r: Real): void {
  assert.equal(r.log.logEndOffset, leoOf(m), 'LEO matches the model');
  assert.equal(r.log.logStartOffset, m.logStartOffset, 'log start offset matches the model');
  assert.deepEqual(
    r.log.segmentBaseOffsets(),
    m.segments.map((s) => s.base),
    'segments match the model',
  );
  assert.equal(r.log.sizeBytes, sizeOf(m.batches));
  assert.ok(r.log.recoveryPoint <= r.log.logEndOffset);
}

function checkTimeIndexes(r: Real): void {
  assert.deepEqual(timeIndexProblems(r.fs, DIR), [], 'every .timeindex as kafka-dump-log expects');
}

type TimestampMode = 'monotone' | 'shuffled' | 'none' | 'append-time';

class Append implements fc.Command<Model, Real> {
  constructor(
    readonly records: number,
    readonly valueBytes: number,
    readonly mode: TimestampMode,
    readonly skewMs: number,
    readonly stepMs: number,
    readonly compressed: boolean,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const now = m.clock.now;
    const timestamps = Array.from({ length: this.records }, (_, i) => {
      if (this.mode === 'none') return -1;
      if (this.mode === 'shuffled')
        return Math.max(0, now + this.skewMs + (((i * 7 + this.stepMs) % 5) - 2) * this.stepMs);
      return Math.max(0, now + this.skewMs + i * this.stepMs);
    });
    const plain = makeRecordBatch({ timestamps, valueBytes: this.valueBytes, seed: this.stepMs });
    const batch = this.compressed ? compressBatch(plain, CompressionCodec.gzip) : plain;
    if (this.mode === 'append-time') stampLogAppendTime(batch, now);
    const maxTs = Number(batch.readBigInt64BE(35));

    // The roll the model expects (Kafka's LogSegment.shouldRoll; the index never fills here).
    const active = m.segments[m.segments.length - 1]!;
    const inActive = batchesIn(m, m.segments.length - 1);
    const activeBytes = sizeOf(inActive);
    let roll = false;
    if (activeBytes > 0) {
      const first = inActive[0]!.maxTs;
      const waited = first >= 0 ? maxTs - first : now - active.createdMs;
      roll = activeBytes + batch.length > r.config.segmentBytes || waited > r.config.segmentMs!;
    }

    const base = leoOf(m);
    const info = r.log.append(batch, EPOCH);
    assert.deepEqual(info, { baseOffset: base, lastOffset: base + this.records - 1 });
    if (roll) m.segments.push({ base, createdMs: now, lastModifiedMs: now });
    m.segments[m.segments.length - 1]!.lastModifiedMs = now;
    m.batches.push({
      bytes: Buffer.from(batch),
      base,
      last: base + this.records - 1,
      maxTs,
      records: timestamps.map((ts, i) => ({ offset: base + i, ts: this.mode === 'append-time' ? now : ts })),
    });
    checkCommon(m, r);
  }
  toString = () =>
    `append(${this.records} x ${this.valueBytes} B, ${this.mode}, skew ${this.skewMs}, step ${this.stepMs}${this.compressed ? ', gzip' : ''})`;
}

class AdvanceClock implements fc.Command<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  run(m: Model): void {
    m.clock.advance(this.ms);
  }
  toString = () => `advance(${this.ms} ms)`;
}

class Flush implements fc.Command<Model, Real> {
  /** Log.flush asserts no asynchronous flush is in flight (two racing fsyncs may split a writeback error). */
  check = (m: Readonly<Model>) => m.inFlight === null;
  run(m: Model, r: Real): void {
    const rp = r.log.flush();
    assert.equal(rp, leoOf(m));
    assert.equal(r.log.hasUnflushed, false);
    m.flushed = rp;
    m.checkpointRp = rp;
    m.checkpointLogStartOffset = m.logStartOffset;
    checkCommon(m, r);
  }
  toString = () => 'flush';
}

class StartAsyncFlush implements fc.Command<Model, Real> {
  check = (m: Readonly<Model>) => m.inFlight === null;
  run(m: Model, r: Real): void {
    const flush = r.log.flushAsync();
    flush.catch(() => undefined); // a crash fails it; FinishAsyncFlush awaits it
    r.flush = flush;
    m.inFlight = leoOf(m);
    assert.equal(r.log.flushInFlight, true);
    checkCommon(m, r);
  }
  toString = () => 'flushAsync';
}

/** Some of the fsyncs in flight complete (which makes their files durable, nothing more). */
class SyncProgress implements fc.Command<Model, Real> {
  constructor(readonly count: number) {}
  check = () => true;
  run(_m: Model, r: Real): void {
    r.fs.completeSyncs(this.count);
  }
  toString = () => `complete ${this.count} fsyncs`;
}

class FinishAsyncFlush implements fc.AsyncCommand<Model, Real> {
  check = (m: Readonly<Model>) => m.inFlight !== null;
  async run(m: Model, r: Real): Promise<void> {
    const target = m.inFlight!;
    r.fs.completeSyncs();
    // The recovery point when it completed (maybe earlier, once SyncProgress had completed its fsyncs).
    const rp = await r.flush!;
    assert.ok(rp >= target, `a completed flush covers the LEO at its start (${target}), got ${rp}`);
    assert.ok(rp <= r.log.recoveryPoint);
    assert.equal(r.log.flushInFlight, false);
    dropInFlight(m, r);
    // Everything below what it reported must survive any later crash (Crash checks it): it never
    // claims more than it synced.
    m.flushed = Math.max(m.flushed, rp);
    m.checkpointRp = rp;
    m.checkpointLogStartOffset = m.logStartOffset;
    checkCommon(m, r);
  }
  toString = () => 'finish flushAsync';
}

/** After a reopen: the model keeps the segments and batches the real log kept (a prefix), all loaded now. */
function adoptReopened(m: Model, r: Real): void {
  const bases = r.log.segmentBaseOffsets();
  assert.deepEqual(
    bases,
    m.segments.slice(0, bases.length).map((s) => s.base),
    'the segments left are a prefix of the model',
  );
  m.segments.length = bases.length;
  for (const s of m.segments) s.createdMs = s.lastModifiedMs = m.clock.now;
  const leo = r.log.logEndOffset;
  m.batches = m.batches.filter((b) => b.last < leo);
  m.flushed = Math.min(m.flushed, leo);
  m.checkpointRp = Math.min(m.checkpointRp, leo);
}

class Crash implements fc.Command<Model, Real> {
  constructor(
    readonly torn: boolean,
    readonly keepBytes: number,
    readonly fullScan: boolean,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    // An asynchronous flush in flight fails: only earlier completed flushes count (m.flushed).
    r.fs.crash(this.torn ? { kind: 'torn-last-write', keepBytes: this.keepBytes } : { kind: 'lose-unsynced' });
    dropInFlight(m, r);
    reopen(m, r, this.fullScan ? 0 : m.checkpointRp);
    const expected = retained(m);
    const got = readAllBatches(r.log);
    const flushed = expected.filter((b) => b.last < m.flushed).length;
    assert.ok(got.length >= flushed, `kept ${got.length} batches, ${flushed} were flushed`);
    assert.ok(got.length <= expected.length, 'no batch beyond what was appended');
    for (let i = 0; i < got.length; i++)
      assert.deepEqual(got[i], expected[i]!.bytes, `batch ${i} survives byte for byte`);
    adoptReopened(m, r);
    checkCommon(m, r);
    checkTimeIndexes(r);
  }
  toString = () =>
    `crash(${this.torn ? `torn keep ${this.keepBytes}` : 'lose-unsynced'}${this.fullScan ? ', hint 0' : ''})`;
}

/** Every file of the partition directory by name. */
function snapshot(fs: MemoryFileSystem): Map<string, Buffer> {
  return new Map(fs.readdir(DIR).map((name) => [name, fs.readFile(`${DIR}/${name}`)]));
}

const logAndOffsetIndexes = (files: Map<string, Buffer>) =>
  new Map([...files].filter(([name]) => !name.endsWith('.timeindex')));

class Restart implements fc.Command<Model, Real> {
  constructor(
    readonly clean: boolean,
    readonly fullScan: boolean,
  ) {}
  /** A clean close waits for the flush in flight (Log.close asserts it); a process crash does not. */
  check = (m: Readonly<Model>) => !this.clean || m.inFlight === null;
  run(m: Model, r: Real): void {
    if (this.clean) r.log.close();
    // The old process's fsyncs may still complete later (SyncProgress); its flush counts for nothing.
    dropInFlight(m, r);
    const before = snapshot(r.fs);
    const hint = this.fullScan ? 0 : m.checkpointRp;
    reopen(m, r, hint);
    const after = snapshot(r.fs);
    // The time index may gain its final entry (Kafka's recover appends it) or lose entries only a
    // close added mid-file; it is checked against the log below instead.
    assert.deepEqual([...after.keys()], [...before.keys()], 'no file appears or goes');
    assert.deepEqual(
      logAndOffsetIndexes(after),
      logAndOffsetIndexes(before),
      'recovering an intact log changes no .log/.index byte',
    );
    reopen(m, r, hint);
    assert.deepEqual(snapshot(r.fs), after, 'recovery is idempotent');
    assert.equal(readAllBatches(r.log).length, retained(m).length, 'a process restart loses nothing');
    adoptReopened(m, r);
    checkCommon(m, r);
    checkTimeIndexes(r);
  }
  toString = () => `restart(${this.clean ? 'clean' : 'no close'}${this.fullScan ? ', hint 0' : ''})`;
}

class Truncate implements fc.Command<Model, Real> {
  constructor(readonly fraction: number) {}
  /** Log.truncateTo asserts no flush is in flight (a follower truncates after awaiting it). */
  check = (m: Readonly<Model>) => m.batches.length > 0 && m.inFlight === null;
  run(m: Model, r: Real): void {
    const leo = leoOf(m);
    const offset = Math.floor(Math.sqrt(this.fraction) * leo); // biased towards short cuts
    r.log.truncateTo(offset);
    const now = m.clock.now;
    if (offset < m.segments[0]!.base) {
      m.batches = [];
      m.segments = [{ base: offset, createdMs: now, lastModifiedMs: now }];
      m.logStartOffset = offset;
    } else {
      m.segments = m.segments.filter((s, i) => i === 0 || s.base <= offset);
      const keep = m.batches.findIndex((b) => b.last >= offset);
      if (keep >= 0) m.batches.length = keep;
      const active = m.segments[m.segments.length - 1]!;
      active.lastModifiedMs = now;
      if (batchesIn(m, m.segments.length - 1).length === 0) active.createdMs = now;
      m.logStartOffset = Math.min(m.logStartOffset, leoOf(m));
    }
    m.flushed = Math.min(m.flushed, leoOf(m));
    m.checkpointRp = Math.min(m.checkpointRp, leoOf(m));
    m.checkpointLogStartOffset = Math.min(m.checkpointLogStartOffset, m.logStartOffset);
    checkCommon(m, r);
  }
  toString = () => `truncateTo(${this.fraction.toFixed(2)} of LEO)`;
}

/**
 * The model's Kafka deleteOldSegments pass: deletes the longest run of oldest segments below `hw`
 * passing `predicate` (never an empty last one), rolling first when that is all. Returns the count.
 */
function modelDeletePass(
  m: Model,
  hw: number,
  predicate: (i: number, sizeBytes: number, largestMs: number) => boolean,
): number {
  const leo = leoOf(m);
  let count = 0;
  for (let i = 0; i < m.segments.length; i++) {
    const batches = batchesIn(m, i);
    const sizeBytes = sizeOf(batches);
    const isLast = i === m.segments.length - 1;
    if (isLast && sizeBytes === 0) break;
    const upper = isLast ? leo : m.segments[i + 1]!.base;
    const maxTs = Math.max(-1, ...batches.map((b) => b.maxTs));
    const largestMs = maxTs >= 0 ? maxTs : m.segments[i]!.lastModifiedMs;
    if (!(hw >= upper && predicate(i, sizeBytes, largestMs))) break;
    count++;
  }
  if (count === 0) return 0;
  if (count === m.segments.length) m.segments.push({ base: leo, createdMs: m.clock.now, lastModifiedMs: m.clock.now });
  m.segments.splice(0, count);
  const first = m.segments[0]!.base;
  m.batches = m.batches.filter((b) => b.base >= first);
  m.logStartOffset = Math.max(m.logStartOffset, first);
  return count;
}

const logStartOffsetBreached = (m: Model) => (i: number) =>
  i + 1 < m.segments.length && m.segments[i + 1]!.base <= m.logStartOffset;

/** A high watermark between the log start offset and what is flushed. */
const hwOf = (m: Model, fraction: number) =>
  m.logStartOffset + Math.floor(fraction * (m.flushed - m.logStartOffset + 1));

/** retention.bytes: -1, or the log's size less its first `segments` fraction of segments, plus `deltaBytes` (hits Kafka's boundary). */
type RetentionBytes = { kind: 'unlimited' } | { kind: 'relative'; segments: number; deltaBytes: number };

class Retention implements fc.Command<Model, Real> {
  constructor(
    readonly retentionMs: number,
    readonly bytes: RetentionBytes,
    readonly hwFraction: number,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const hw = Math.min(hwOf(m, this.hwFraction), m.flushed);
    const now = m.clock.now;
    let retentionBytes = -1;
    if (this.bytes.kind === 'relative') {
      const drop = Math.floor(this.bytes.segments * (m.segments.length + 1));
      let dropped = 0;
      for (let i = 0; i < Math.min(drop, m.segments.length); i++) dropped += sizeOf(batchesIn(m, i));
      retentionBytes = Math.max(0, sizeOf(m.batches) - dropped + this.bytes.deltaBytes);
    }
    const result = r.log.deleteRetentionSegments(now, this.retentionMs, retentionBytes, hw);
    let deleted = modelDeletePass(m, hw, logStartOffsetBreached(m));
    if (retentionBytes >= 0) {
      const size = sizeOf(m.batches);
      if (size >= retentionBytes) {
        let excess = size - retentionBytes;
        deleted += modelDeletePass(m, hw, (_i, sizeBytes) => {
          if (excess - sizeBytes < 0) return false;
          excess -= sizeBytes;
          return true;
        });
      }
    }
    if (this.retentionMs >= 0)
      deleted += modelDeletePass(m, hw, (_i, _s, largestMs) => now - largestMs > this.retentionMs);
    assert.deepEqual(result, { deletedSegments: deleted, logStartOffset: m.logStartOffset });
    m.checkpointLogStartOffset = m.logStartOffset;
    checkCommon(m, r);
  }
  toString = () =>
    `retention(${this.retentionMs} ms, ${this.bytes.kind === 'unlimited' ? 'unlimited' : `size - ${this.bytes.segments.toFixed(2)} of segments ${this.bytes.deltaBytes >= 0 ? '+' : ''}${this.bytes.deltaBytes} B`}, hw ${this.hwFraction.toFixed(2)})`;
}

class DeleteRecords implements fc.Command<Model, Real> {
  constructor(readonly fraction: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const offset = hwOf(m, this.fraction);
    const got = r.log.deleteRecordsBefore(offset);
    if (offset > m.logStartOffset) {
      m.logStartOffset = offset;
      modelDeletePass(m, offset, logStartOffsetBreached(m));
    }
    assert.equal(got, m.logStartOffset);
    m.checkpointLogStartOffset = m.logStartOffset;
    checkCommon(m, r);
    if (m.logStartOffset > 0)
      assert.deepEqual(r.log.read(m.logStartOffset - 1, 100, m.logStartOffset + 10, true), { kind: 'out-of-range' });
  }
  toString = () => `deleteRecordsBefore(${this.fraction.toFixed(2)} of [logStartOffset, flushed])`;
}

class Read implements fc.Command<Model, Real> {
  constructor(
    readonly fetchFraction: number,
    readonly maxBytes: number,
    readonly hwFraction: number,
    readonly minOneBatch: boolean,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const leo = leoOf(m);
    const fetchOffset = m.logStartOffset + Math.floor(this.fetchFraction * (leo - m.logStartOffset + 1));
    const hw = fetchOffset + Math.floor(this.hwFraction * (leo - fetchOffset + 1));
    const expected: Buffer[] = [];
    let total = 0;
    for (const b of m.batches) {
      if (b.last < fetchOffset) continue;
      if (b.last >= hw) break;
      if (total + b.bytes.length > this.maxBytes && !(total === 0 && this.minOneBatch)) break;
      expected.push(b.bytes);
      total += b.bytes.length;
      if (total >= this.maxBytes) break;
    }
    const res = r.log.read(fetchOffset, this.maxBytes, hw, this.minOneBatch);
    assert.equal(res.kind, 'ok');
    if (res.kind !== 'ok') return;
    assert.deepEqual(res.records, Buffer.concat(expected));
    assert.equal(res.firstOffset, expected.length === 0 ? null : Number(expected[0]!.readBigInt64BE(0)));
    assert.deepEqual(r.log.read(leo + 1, 100, leo + 10, true), { kind: 'out-of-range' });
  }
  toString = () =>
    `read(${this.fetchFraction.toFixed(2)}, ${this.maxBytes}, hw ${this.hwFraction.toFixed(2)}, ${this.minOneBatch})`;
}

class OffsetForTime implements fc.Command<Model, Real> {
  constructor(
    readonly pick: number,
    readonly deltaMs: number,
  ) {}
  check = () => true;
  run(m: Model, r: Real): void {
    // Timestamps of the retained batches (the one straddling the log start offset included).
    const known = retained(m)
      .flatMap((b) => b.records.map((x) => x.ts))
      .filter((t) => t >= 0);
    const target = Math.max(0, (known.length > 0 ? known[this.pick % known.length]! : m.clock.now) + this.deltaMs);
    let expected: { offset: number; timestamp: number; leaderEpoch: number } | null = null;
    for (const b of m.batches) {
      const hit = b.records.find((x) => x.offset >= m.logStartOffset && x.ts >= target);
      if (hit !== undefined) {
        expected = { offset: hit.offset, timestamp: hit.ts, leaderEpoch: EPOCH };
        break;
      }
    }
    assert.deepEqual(r.log.offsetForTimestamp(target), expected, `first record at or after ${target}`);
  }
  toString = () => `offsetForTimestamp(#${this.pick} ${this.deltaMs >= 0 ? '+' : ''}${this.deltaMs})`;
}

class MaxTimestamp implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real): void {
    const records = m.batches.flatMap((b) => b.records).filter((x) => x.offset >= m.logStartOffset);
    const max = Math.max(-1, ...records.map((x) => x.ts));
    const hit = records.find((x) => x.ts === max);
    const expected = max < 0 || hit === undefined ? null : { offset: hit.offset, timestamp: max, leaderEpoch: EPOCH };
    assert.deepEqual(r.log.maxTimestampOffset(), expected);
  }
  toString = () => 'maxTimestampOffset';
}

/** A fraction in [0, 1), spread evenly (fc.double favours tiny values). */
const fraction = fc.integer({ min: 0, max: 999 }).map((n) => n / 1000);
const append = fc
  .record({
    records: fc.integer({ min: 1, max: 4 }),
    valueBytes: fc.oneof(fc.constantFrom(0, 20), fc.integer({ min: 0, max: 120 })),
    mode: fc.constantFrom<TimestampMode>('monotone', 'monotone', 'shuffled', 'none', 'append-time'),
    skewMs: fc.integer({ min: -3000, max: 3000 }),
    stepMs: fc.integer({ min: 0, max: 700 }),
    compressed: fc.nat(9).map((n) => n < 2),
  })
  .map((a) => new Append(a.records, a.valueBytes, a.mode, a.skewMs, a.stepMs, a.compressed));
type AnyCommand = fc.Command<Model, Real> | fc.AsyncCommand<Model, Real>;
/** Runs a synchronous command in the asynchronous model run. */
function asAsync(command: AnyCommand): fc.AsyncCommand<Model, Real> {
  return {
    check: (m) => command.check(m),
    run: async (m, r) => command.run(m, r),
    toString: () => command.toString(),
  };
}
/** One weighted command arbitrary: mostly appends, so logs grow over several segments between faults. */
const commands = [
  fc
    .oneof(
      { arbitrary: append, weight: 12 },
      { arbitrary: fc.constantFrom(1, 400, 1000, 5000, 70_000).map((ms) => new AdvanceClock(ms)), weight: 3 },
      { arbitrary: fc.constant(new Flush()), weight: 2 },
      { arbitrary: fc.constant(new StartAsyncFlush()), weight: 3 },
      { arbitrary: fc.integer({ min: 1, max: 4 }).map((n) => new SyncProgress(n)), weight: 2 },
      { arbitrary: fc.constant(new FinishAsyncFlush()), weight: 2 },
      {
        arbitrary: fc.tuple(fc.boolean(), fc.nat(800), fc.boolean()).map(([t, k, f]) => new Crash(t, k, f)),
        weight: 2,
      },
      { arbitrary: fc.tuple(fc.boolean(), fc.boolean()).map(([c, f]) => new Restart(c, f)), weight: 1 },
      { arbitrary: fraction.map((f) => new Truncate(f)), weight: 1 },
      {
        arbitrary: fc
          .tuple(
            fc.constantFrom(-1, -1, 0, 1000, 5000, 60_000),
            fc.oneof(
              fc.constant<RetentionBytes>({ kind: 'unlimited' }),
              fc.record({
                kind: fc.constant('relative' as const),
                segments: fraction,
                deltaBytes: fc.constantFrom(-1, 0, 0, 1, 50),
              }),
            ),
            fraction,
          )
          .map(([ms, bytes, hw]) => new Retention(ms, bytes, hw)),
        weight: 2,
      },
      { arbitrary: fraction.map((f) => new DeleteRecords(f)), weight: 1 },
      {
        arbitrary: fc
          .tuple(fraction, fc.integer({ min: 0, max: 1500 }), fraction, fc.boolean())
          .map(([f, b, h, o]) => new Read(f, b, h, o)),
        weight: 2,
      },
      {
        arbitrary: fc.tuple(fc.nat(), fc.constantFrom(-1, 0, 0, 1, 250)).map(([p, d]) => new OffsetForTime(p, d)),
        weight: 2,
      },
      { arbitrary: fc.constant(new MaxTimestamp()), weight: 1 },
    )
    .map(asAsync),
];

describe('Log (property, simulated disk)', () => {
  it('survives crashes as a prefix holding every flushed batch; rolls, retention, DeleteRecords and lookups match the model', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(300, 800, 2000),
        fc.constantFrom(0, 100, 400),
        fc.constantFrom(1000, 60_000),
        fc.commands(commands, { maxCommands: 80, size: 'max' }),
        async (segmentBytes, indexIntervalBytes, segmentMs, cmds) => {
          const config = { segmentBytes, indexIntervalBytes, segmentMs };
          const clock = manualClock(T0);
          const model: Model = {
            batches: [],
            segments: [{ base: 0, createdMs: T0, lastModifiedMs: T0 }],
            logStartOffset: 0,
            flushed: 0,
            checkpointRp: 0,
            checkpointLogStartOffset: 0,
            clock,
            inFlight: null,
          };
          const real: Real = {
            fs: new MemoryFileSystem({ asyncSyncs: 'manual' }),
            config,
            log: undefined as unknown as Log,
            flush: null,
          };
          reopen(model, real, 0);
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          checkTimeIndexes(real);
          // Every run ends with a power loss: the flushed batches must all be there.
          new Crash(false, 0, false).run(model, real);
        },
      ),
      {
        numRuns: 500,
        includeErrorInReport: true,
        ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH } : {}),
      },
    );
  });
});
