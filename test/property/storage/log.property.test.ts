/**
 * Model-based property test of Log on the simulated disk: random appends, flushes, crashes (lost or
 * torn unsynced writes) with reopen, clean restarts, truncations and reads, checked against an array
 * of the batches appended. After every crash the log must be a prefix of what was appended that
 * contains every flushed batch (DESIGN.md invariant 6); reads must return exactly the model's
 * batches, dense offsets, whole batches within maxBytes / HW / KIP-74 rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Log, type LogConfig } from '../../../src/storage/log';
import { MemoryFileSystem } from '../../../src/storage/memory-file-system';
import { fixedClock, makeBatch, recordingLogger, splitBatches } from '../../unit/storage/helpers';

const DIR = '/data/t-0';

interface Model {
  /** Batches as stored (offsets assigned), in order; offsets dense from 0. */
  batches: Buffer[];
  /** Leading batches known to be fsynced. */
  flushed: number;
  /** The recovery-point checkpoint a replica would have written (from flush, lowered by truncation). */
  checkpoint: number;
}

interface Real {
  fs: MemoryFileSystem;
  log: Log;
  config: LogConfig;
}

const lastOffsetOf = (b: Buffer) => Number(b.readBigInt64BE(0)) + b.readInt32BE(23);
const leoOf = (m: Model) => (m.batches.length === 0 ? 0 : lastOffsetOf(m.batches[m.batches.length - 1]!) + 1);

function reopen(r: Real, recoveryPoint: number): void {
  r.log = Log.open({ fs: r.fs, dir: DIR, config: r.config, recoveryPoint, logger: recordingLogger(), clock: fixedClock() });
}

function readAllBatches(log: Log): Buffer[] {
  const res = log.read(log.logStartOffset, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
  assert.equal(res.kind, 'ok');
  return res.kind === 'ok' ? splitBatches(res.records).map((b) => Buffer.from(b.bytes)) : [];
}

function checkCommon(m: Model, r: Real): void {
  assert.equal(r.log.logEndOffset, leoOf(m), 'LEO matches the model');
  assert.ok(r.log.recoveryPoint <= r.log.logEndOffset);
}

class Append implements fc.Command<Model, Real> {
  constructor(readonly records: number, readonly payloadBytes: number, readonly seed: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const batch = makeBatch({ records: this.records, payloadBytes: this.payloadBytes, seed: this.seed });
    const info = r.log.append(batch, 3);
    assert.equal(info.baseOffset, leoOf(m));
    assert.equal(info.lastOffset, info.baseOffset + this.records - 1);
    m.batches.push(Buffer.from(batch));
    checkCommon(m, r);
  }
  toString = () => `append(${this.records} records, ${this.payloadBytes} bytes)`;
}

class Flush implements fc.Command<Model, Real> {
  check = () => true;
  run(m: Model, r: Real): void {
    const rp = r.log.flush();
    assert.equal(rp, leoOf(m));
    assert.equal(r.log.hasUnflushed, false);
    m.flushed = m.batches.length;
    m.checkpoint = rp;
    checkCommon(m, r);
  }
  toString = () => 'flush';
}

class Crash implements fc.Command<Model, Real> {
  constructor(readonly torn: boolean, readonly keepBytes: number, readonly fullScan: boolean) {}
  check = () => true;
  run(m: Model, r: Real): void {
    r.fs.crash(this.torn ? { kind: 'torn-last-write', keepBytes: this.keepBytes } : { kind: 'lose-unsynced' });
    reopen(r, this.fullScan ? 0 : m.checkpoint);
    const got = readAllBatches(r.log);
    assert.ok(got.length >= m.flushed, `kept ${got.length} batches, ${m.flushed} were flushed`);
    assert.ok(got.length <= m.batches.length, 'no batch beyond what was appended');
    for (let i = 0; i < got.length; i++) assert.deepEqual(got[i], m.batches[i], `batch ${i} survives byte for byte`);
    m.batches.length = got.length;
    m.checkpoint = Math.min(m.checkpoint, leoOf(m));
    checkCommon(m, r);
  }
  toString = () => `crash(${this.torn ? `torn keep ${this.keepBytes}` : 'lose-unsynced'}${this.fullScan ? ', hint 0' : ''})`;
}

/** Every file of the partition directory by name. */
function snapshot(fs: MemoryFileSystem): Map<string, Buffer> {
  return new Map(fs.readdir(DIR).map((name) => [name, fs.readFile(`${DIR}/${name}`)]));
}

class Restart implements fc.Command<Model, Real> {
  constructor(readonly clean: boolean, readonly fullScan: boolean) {}
  check = () => true;
  run(m: Model, r: Real): void {
    if (this.clean) r.log.close();
    const before = snapshot(r.fs);
    reopen(r, this.fullScan ? 0 : m.checkpoint);
    assert.deepEqual(snapshot(r.fs), before, 'recovering an intact log changes no byte (index rebuilt identically)');
    assert.equal(readAllBatches(r.log).length, m.batches.length, 'a process restart loses nothing');
    checkCommon(m, r);
  }
  toString = () => `restart(${this.clean ? 'clean' : 'no close'}${this.fullScan ? ', hint 0' : ''})`;
}

class Truncate implements fc.Command<Model, Real> {
  constructor(readonly fraction: number) {}
  check = (m: Readonly<Model>) => m.batches.length > 0;
  run(m: Model, r: Real): void {
    const offset = Math.floor(Math.sqrt(this.fraction) * leoOf(m)); // biased towards short cuts
    r.log.truncateTo(offset);
    const keep = m.batches.findIndex((b) => lastOffsetOf(b) >= offset);
    if (keep >= 0) m.batches.length = keep;
    m.flushed = Math.min(m.flushed, m.batches.length);
    m.checkpoint = Math.min(m.checkpoint, leoOf(m));
    checkCommon(m, r);
  }
  toString = () => `truncateTo(${this.fraction.toFixed(2)} of LEO)`;
}

class Read implements fc.Command<Model, Real> {
  constructor(readonly fetchFraction: number, readonly maxBytes: number, readonly hwFraction: number, readonly minOneBatch: boolean) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const leo = leoOf(m);
    const fetchOffset = Math.floor(this.fetchFraction * (leo + 1));
    const hw = fetchOffset + Math.floor(this.hwFraction * (leo - fetchOffset + 1));
    const expected: Buffer[] = [];
    let total = 0;
    for (const b of m.batches) {
      if (lastOffsetOf(b) < fetchOffset) continue;
      if (lastOffsetOf(b) >= hw) break;
      if (total + b.length > this.maxBytes && !(total === 0 && this.minOneBatch)) break;
      expected.push(b);
      total += b.length;
      if (total >= this.maxBytes) break;
    }
    const res = r.log.read(fetchOffset, this.maxBytes, hw, this.minOneBatch);
    assert.equal(res.kind, 'ok');
    if (res.kind !== 'ok') return;
    assert.deepEqual(res.records, Buffer.concat(expected));
    assert.equal(res.firstOffset, expected.length === 0 ? null : Number(expected[0]!.readBigInt64BE(0)));
    let next: number | null = null;
    for (const b of splitBatches(res.records)) {
      if (next !== null) assert.equal(b.baseOffset, next, 'dense offsets');
      next = b.lastOffset + 1;
    }
    assert.deepEqual(r.log.read(leo + 1, 100, leo + 10, true), { kind: 'out-of-range' });
  }
  toString = () => `read(${this.fetchFraction.toFixed(2)}, ${this.maxBytes}, hw ${this.hwFraction.toFixed(2)}, ${this.minOneBatch})`;
}

const fraction = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
/** Record bytes after the 61-byte header; 39 and 139 make 100/200-byte batches that hit index intervals exactly. */
const payloadBytes = fc.oneof(fc.constantFrom(0, 39, 139), fc.integer({ min: 0, max: 300 }));
const append = fc.tuple(fc.integer({ min: 1, max: 5 }), payloadBytes, fc.nat(255)).map(([n, p, s]) => new Append(n, p, s));
/** One weighted command arbitrary: mostly appends, so logs grow over several segments between faults. */
const commands = [
  fc.oneof(
    { arbitrary: append, weight: 10 },
    { arbitrary: fc.constant(new Flush()), weight: 2 },
    { arbitrary: fc.tuple(fc.boolean(), fc.nat(800), fc.boolean()).map(([t, k, f]) => new Crash(t, k, f)), weight: 2 },
    { arbitrary: fc.tuple(fc.boolean(), fc.boolean()).map(([c, f]) => new Restart(c, f)), weight: 1 },
    { arbitrary: fraction.map((f) => new Truncate(f)), weight: 1 },
    { arbitrary: fc.tuple(fraction, fc.integer({ min: 0, max: 1500 }), fraction, fc.boolean()).map(([f, b, h, o]) => new Read(f, b, h, o)), weight: 3 },
  ),
];

describe('Log (property, simulated disk)', () => {
  it('after any crash the log is a prefix of what was appended holding every flushed batch; reads match the model', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(300, 800, 2000),
        fc.constantFrom(0, 100, 400),
        fc.commands(commands, { maxCommands: 60, size: 'max' }),
        (segmentBytes, indexIntervalBytes, cmds) => {
          const config = { segmentBytes, indexIntervalBytes };
          const fs = new MemoryFileSystem();
          const real: Real = { fs, config, log: undefined as unknown as Log };
          reopen(real, 0);
          const model: Model = { batches: [], flushed: 0, checkpoint: 0 };
          fc.modelRun(() => ({ model, real }), cmds);
          // Every run ends with a power loss: the flushed batches must all be there.
          new Crash(false, 0, false).run(model, real);
        },
      ),
      { numRuns: 300, includeErrorInReport: true, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH } : {}) },
    );
  });
});
