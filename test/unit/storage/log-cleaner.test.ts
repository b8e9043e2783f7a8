import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompressionCodec } from '../../../src/protocol/record-batch/compression';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { planCleaning } from '../../../src/storage/log-cleaner';
import { cleanerFilePath, recoverCleanerLeftovers } from '../../../src/storage/segment-swap';
import { inlineCpuJobs } from '../../../src/runtime/cpu-jobs';
import { cleanLog } from '../../../src/storage/log-cleaner';
import { manualClock, recordingLogger } from './helpers';
import {
  CLEANER,
  cleanOnce,
  DIR,
  keyedBatch,
  latestByKey,
  logRecords,
  openCompacted,
  PowerCut,
  PowerCutFileSystem,
  type KV,
} from './compaction-helpers';
import { COMPACTED_MARKER, Log } from '../../../src/storage/log';

const KEYS = 10;

/** Appends `rounds` batches of 2 records (keys cycling), values `key@round`; returns what was written. */
function produceVersions(
  log: Log,
  clock: ReturnType<typeof manualClock>,
  rounds: number,
  codec: 0 | 1 | 2 | 3 | 4 = 0,
): Array<{ offset: number; key: string; value: string | null }> {
  const written: Array<{ offset: number; key: string; value: string | null }> = [];
  for (let i = 0; i < rounds; i++) {
    const kvs: KV[] = [0, 1].map((j) => ({ key: `k${(i * 3 + j * 7) % KEYS}`, value: `v${i}.${j}` }));
    const { baseOffset } = log.append(keyedBatch(kvs, clock.nowMs(), codec), 1);
    kvs.forEach((kv, j) => written.push({ offset: baseOffset + j, key: kv.key, value: kv.value }));
    clock.advance(10);
  }
  return written;
}

/** The records below `end`: exactly one per key, each the latest written below `end`, at its original offset. */
function assertLatestPerKeyBelow(
  records: ReturnType<typeof logRecords>,
  written: ReturnType<typeof logRecords>,
  end: number,
): void {
  const expected = latestByKey(written.filter((w) => w.offset < end));
  const got = records.filter((r) => r.offset < end);
  assert.deepEqual(
    got.map((r) => [r.key, r.offset, r.value]).sort(),
    [...expected.entries()].map(([k, v]) => [k, v.offset, v.value]).sort(),
  );
}

/** A compacted log with 60 versioned records, cleaned once: what was written and what was kept. */
async function cleanedLog() {
  const fs = new MemoryFileSystem();
  const clock = manualClock();
  const log = openCompacted(fs, clock);
  const written = produceVersions(log, clock, 60);
  await cleanOnce(log, clock);
  return { fs, clock, log, written, kept: logRecords(log) };
}

describe('log cleaner', () => {
  it('a topic where keys repeat keeps exactly the latest value per key, offsets unchanged; tombstones disappear after delete.retention.ms', async () => {
    const fs = new MemoryFileSystem();
    const clock = manualClock();
    const log = openCompacted(fs, clock);
    const written = produceVersions(log, clock, 80);
    const activeBefore = log.activeSegmentBaseOffset;
    const activeBytes = log.read(activeBefore, 1 << 30, Number.MAX_SAFE_INTEGER, true);
    assert.ok(log.segmentBaseOffsets().length > 5, 'many segments');

    const outcome = await cleanOnce(log, clock);
    assert.ok(outcome !== null && outcome.completed);
    assert.equal(log.firstDirtyOffset, activeBefore);
    const after = logRecords(log);
    assertLatestPerKeyBelow(after, written, activeBefore);
    // The active segment is untouched, and the log as a whole still answers the latest value per key.
    assert.deepEqual(log.read(activeBefore, 1 << 30, Number.MAX_SAFE_INTEGER, true), activeBytes);
    assert.deepEqual(latestByKey(after), latestByKey(written));
    assert.equal(log.logEndOffset, written.length, 'LEO unchanged');
    const cleanedSegments = log.segmentBaseOffsets().filter((b) => b < activeBefore).length;
    assert.equal(await cleanOnce(log, clock), null, 'nothing dirty: no second pass');

    // Tombstones for k0..k4, then enough records of other keys to move them out of the active segment.
    const tombstones: KV[] = [0, 1, 2, 3, 4].map((k) => ({ key: `k${k}`, value: null }));
    const t = log.append(keyedBatch(tombstones, clock.nowMs()), 1);
    tombstones.forEach((kv, j) => written.push({ offset: t.baseOffset + j, key: kv.key, value: null }));
    for (let i = 0; i < 12; i++) {
      const { baseOffset } = log.append(keyedBatch([{ key: 'k9', value: `late${i}` }], clock.nowMs()), 1);
      written.push({ offset: baseOffset, key: 'k9', value: `late${i}` });
    }
    const active2 = log.activeSegmentBaseOffset;
    assert.ok(active2 > t.baseOffset + 4);
    const second = await cleanOnce(log, clock);
    assert.ok(second !== null && second.completed);
    assert.ok(
      log.segmentBaseOffsets().filter((b) => b < activeBefore).length < cleanedSegments,
      'small cleaned segments were grouped into fewer',
    );
    const withTombstones = logRecords(log);
    assertLatestPerKeyBelow(withTombstones, written, active2);
    assert.deepEqual(
      withTombstones.filter((r) => r.value === null).map((r) => [r.key, r.offset]),
      tombstones.map((kv, j) => [kv.key, t.baseOffset + j]),
    );
    assert.equal(second.earliestDeleteHorizonMs, clock.nowMs() + CLEANER.deleteRetentionMs);

    // Before delete.retention.ms nothing is due; after it, a pass removes the tombstones.
    clock.advance(CLEANER.deleteRetentionMs - 1);
    assert.equal(await cleanOnce(log, clock, {}, second.earliestDeleteHorizonMs), null);
    clock.advance(1);
    const third = await cleanOnce(log, clock, {}, second.earliestDeleteHorizonMs);
    assert.ok(third !== null && third.completed);
    assert.equal(third.stats.tombstonesRemoved, 5);
    assert.equal(third.earliestDeleteHorizonMs, -1);
    const final = logRecords(log);
    assert.deepEqual(
      final.filter((r) => ['k0', 'k1', 'k2', 'k3', 'k4'].includes(r.key)),
      [],
      'deleted keys are gone entirely',
    );
    const expectedLive = new Map([...latestByKey(written)].filter(([, v]) => v.value !== null));
    assert.deepEqual(latestByKey(final), expectedLive);
  });

  it('compressed batches (every codec) are cleaned and recompressed', async () => {
    for (const codec of [
      CompressionCodec.gzip,
      CompressionCodec.snappy,
      CompressionCodec.lz4,
      CompressionCodec.zstd,
    ] as const) {
      const fs = new MemoryFileSystem();
      const clock = manualClock();
      const log = openCompacted(fs, clock);
      const written = produceVersions(log, clock, 80, codec);
      const active = log.activeSegmentBaseOffset;
      assert.ok((await cleanOnce(log, clock))?.completed);
      assertLatestPerKeyBelow(logRecords(log), written, active);
    }
  });

  it('fetch and ListOffsets work across gaps; a reopened log (full recovery) serves the same records', async () => {
    const { fs, clock, log, written, kept } = await cleanedLog();
    const keptOffsets = new Set(kept.map((r) => r.offset));
    const gap = written.find((w) => !keptOffsets.has(w.offset) && w.offset > 0)!;
    const next = kept.find((r) => r.offset > gap.offset)!;
    const r = log.read(gap.offset, 1, Number.MAX_SAFE_INTEGER, true);
    assert.equal(r.kind, 'ok');
    assert.ok(
      r.kind === 'ok' && r.firstOffset !== null && r.firstOffset <= next.offset && r.firstOffset > gap.offset - 2,
    );
    // A timestamp search lands on a kept record at or after the time.
    const found = log.offsetForTimestamp(clock.nowMs() - 300);
    assert.ok(found !== null && keptOffsets.has(found.offset));
    log.flush();
    log.close();
    const reopened = openCompacted(fs, clock, 600, 0); // recovery point 0: every segment re-validated
    assert.deepEqual(logRecords(reopened), kept);
    assert.equal(reopened.logEndOffset, written.length);
  });

  it('a cleaned log reopened after cleanup.policy went back to delete keeps its gaps (the .compacted marker), losing nothing', async () => {
    const { fs, clock, log, written, kept } = await cleanedLog();
    assert.ok(kept.length < written.length, 'the cleaner left gaps');
    log.flush();
    log.close();
    assert.ok(fs.exists(`${DIR}/${COMPACTED_MARKER}`));
    const asDelete = Log.open({
      fs,
      dir: DIR,
      config: { segmentBytes: 600, indexIntervalBytes: 100 },
      recoveryPoint: 0,
      logger: recordingLogger(),
      clock,
    });
    assert.deepEqual(
      logRecords(asDelete),
      kept,
      'full recovery with cleanup.policy=delete reads the gaps as gaps, not corruption',
    );
    assert.equal(asDelete.logEndOffset, written.length);
  });

  it('plans by min.cleanable.dirty.ratio, min.compaction.lag.ms and max.compaction.lag.ms', async () => {
    const fs = new MemoryFileSystem();
    const clock = manualClock();
    const log = openCompacted(fs, clock);
    produceVersions(log, clock, 60);
    log.flush();
    const plan = (config = {}) =>
      planCleaning(log, {
        config: { ...CLEANER, ...config },
        highWatermark: log.logEndOffset,
        nowMs: clock.nowMs(),
        pendingDeleteHorizonMs: -1,
      });
    assert.equal(plan()?.reason, 'dirty-ratio');
    assert.equal(plan()?.dirtyRatio, 1);
    assert.equal(plan({ minCompactionLagMs: 10_000 }), null, 'every segment is younger than the lag');
    assert.equal(
      planCleaning(log, { config: CLEANER, highWatermark: 0, nowMs: clock.nowMs(), pendingDeleteHorizonMs: -1 }),
      null,
      'nothing below the HW',
    );
    await cleanOnce(log, clock);
    // A little more dirt: below the ratio, unless max.compaction.lag.ms is exceeded.
    produceVersions(log, clock, 8);
    log.flush();
    const small = plan();
    if (small !== null) assert.notEqual(small.reason, 'max-compaction-lag');
    clock.advance(5000);
    const dirtyPlan = plan({ minCleanableDirtyRatio: 1, maxCompactionLagMs: 1000 });
    if (log.firstDirtyOffset < log.activeSegmentBaseOffset) assert.equal(dirtyPlan?.reason, 'max-compaction-lag');
    assert.equal(plan({ minCleanableDirtyRatio: 1 }), null);
  });

  it('appends go on during a pass; a segment deleted meanwhile abandons it', async () => {
    const fs = new MemoryFileSystem();
    const clock = manualClock();
    const log = openCompacted(fs, clock);
    const written = produceVersions(log, clock, 60);
    log.flush();
    const plan = planCleaning(log, {
      config: CLEANER,
      highWatermark: log.logEndOffset,
      nowMs: clock.nowMs(),
      pendingDeleteHorizonMs: -1,
    })!;
    const pass = cleanLog(log, {
      plan,
      cpu: inlineCpuJobs,
      deleteRetentionMs: 60_000,
      nowMs: clock.nowMs(),
      isCurrent: () => true,
      logger: recordingLogger(),
    });
    written.push(...produceVersions(log, clock, 20)); // while the offset map job is pending
    const outcome = await pass;
    assert.ok(outcome.completed);
    assertLatestPerKeyBelow(logRecords(log), written, plan.cleanEndOffset);
    assert.equal(log.logEndOffset, written.length);

    const plan2 = planCleaning(log, {
      config: { ...CLEANER, minCleanableDirtyRatio: 0 },
      highWatermark: log.logEndOffset,
      nowMs: clock.nowMs(),
      pendingDeleteHorizonMs: -1,
    })!;
    const pass2 = cleanLog(log, {
      plan: plan2,
      cpu: inlineCpuJobs,
      deleteRetentionMs: 60_000,
      nowMs: clock.nowMs(),
      isCurrent: () => true,
      logger: recordingLogger(),
    });
    log.deleteRecordsBefore(log.segmentBaseOffsets()[1]!); // deletes the first segment under the pass
    const outcome2 = await pass2;
    assert.equal(outcome2.completed, false);
    assert.ok(log.firstDirtyOffset < plan2.cleanEndOffset, 'nothing marked clean');
  });

  it('recovery deletes a leftover .cleaned file (the swap itself is covered by the power-cut tests)', () => {
    const fs = new MemoryFileSystem();
    fs.mkdirp(DIR);
    fs.writeFileAtomic(cleanerFilePath(DIR, 0, '.cleaned'), Buffer.from('partial'));
    assert.equal(recoverCleanerLeftovers(fs, DIR, recordingLogger()), 0);
    assert.deepEqual(fs.readdir(DIR), []);
  });

  for (const mode of ['lose-unsynced', 'torn-last-write'] as const) {
    it(`a power cut at every step of a pass (${mode}) recovers the old or the cleaned records`, async () => {
      const base = new MemoryFileSystem();
      const clock = manualClock();
      const setup = openCompacted(base, clock);
      const written = produceVersions(setup, clock, 50);
      setup.flush();
      setup.close();
      const before = latestByKey(written);
      let cuts = 0;
      for (let cutAt = 0; ; cutAt++) {
        const memory = new MemoryFileSystem();
        // Copy the durable state into a fresh disk for this run.
        memory.mkdirp(DIR);
        for (const name of base.readdir(DIR)) memory.writeFileAtomic(`${DIR}/${name}`, base.readFile(`${DIR}/${name}`));
        const fs = new PowerCutFileSystem(memory);
        const log = openCompacted(fs, clock, 600, written.length);
        const oldRecords = logRecords(log);
        const active = log.activeSegmentBaseOffset;
        fs.cutAt = fs.operations + cutAt;
        let finished = false;
        try {
          finished = (await cleanOnce(log, clock))?.completed === true;
        } catch (err) {
          if (!(err instanceof PowerCut)) throw err;
        }
        memory.crash(mode === 'lose-unsynced' ? { kind: 'lose-unsynced' } : { kind: 'torn-last-write' });
        const recovered = openCompacted(memory, clock, 600, written.length);
        const records = logRecords(recovered);
        // Whatever the step, the log answers the same latest value per key, offsets are increasing
        // and each record is one that was written, at its offset.
        assert.deepEqual(latestByKey(records), before, `cut at ${cutAt}`);
        const byOffset = new Map(written.map((w) => [w.offset, w]));
        for (let i = 0; i < records.length; i++) {
          assert.deepEqual(
            byOffset.get(records[i]!.offset),
            records[i],
            `cut at ${cutAt}: record ${records[i]!.offset}`,
          );
          if (i > 0) assert.ok(records[i]!.offset > records[i - 1]!.offset);
        }
        assert.ok(
          records.filter((r) => r.offset >= active).length === oldRecords.filter((r) => r.offset >= active).length,
          'active segment intact',
        );
        assert.equal(recovered.logEndOffset, written.length);
        recovered.close();
        if (finished) {
          assertLatestPerKeyBelow(records, written, active);
          break;
        }
        cuts++;
      }
      assert.ok(cuts > 10, `the pass had ${cuts} cut points`);
    });
  }
});
