/**
 * Property: random keyed workloads (keys from a small set so they repeat, tombstones, every codec,
 * batches of 1-6 records) appended to a compacted log with small segments, cleaned by one or more
 * passes at random points. After each pass:
 * - key -> latest value over the whole log equals a model map of what was produced (tombstones
 *   count as a value until their delete horizon has passed, then as absent);
 * - the offsets the log serves are a subsequence of the produced offsets, each record with the key
 *   and value produced at that offset;
 * - below the cleaned end, each key appears at most once; the active segment's bytes are untouched;
 * - every batch's CRC-32C is valid (logRecords checks it) and the LEO never moves.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { manualClock } from '../../unit/storage/helpers';
import {
  CLEANER,
  cleanOnce,
  keyedBatch,
  logRecords,
  openCompacted,
  type KV,
} from '../../unit/storage/compaction-helpers';

const recordArb = fc.record({
  key: fc.integer({ min: 0, max: 7 }).map((k) => `k${k}`),
  value: fc.oneof({ weight: 5, arbitrary: fc.string({ maxLength: 12 }) }, { weight: 1, arbitrary: fc.constant(null) }),
});
const stepArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      records: fc.array(recordArb, { minLength: 1, maxLength: 6 }),
      codec: fc.constantFrom(0, 1, 2, 3, 4),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('clean' as const),
      advanceMs: fc.constantFrom(0, 10, CLEANER.deleteRetentionMs),
    }),
  },
);

describe('log cleaner (property)', () => {
  it('after any pass the log answers the model map, at produced offsets, active segment untouched, CRCs valid', async () => {
    const totals = { passes: 0, removed: 0, tombstonesRemoved: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 60 }), async (steps) => {
        const fs = new MemoryFileSystem();
        const clock = manualClock();
        const log = openCompacted(fs, clock, 400);
        const produced = new Map<number, KV>();
        let horizon = -1;
        for (const step of [...steps, { kind: 'clean' as const, advanceMs: 0 }]) {
          if (step.kind === 'append') {
            const { baseOffset } = log.append(
              keyedBatch(step.records, clock.nowMs(), step.codec as 0 | 1 | 2 | 3 | 4),
              1,
            );
            step.records.forEach((r, i) => produced.set(baseOffset + i, r));
            clock.advance(1);
            continue;
          }
          clock.advance(step.advanceMs);
          const leo = log.logEndOffset;
          const activeBase = log.activeSegmentBaseOffset;
          const activeBefore = log.read(activeBase, 1 << 30, Number.MAX_SAFE_INTEGER, true);
          const before = logRecords(log);
          const outcome = await cleanOnce(log, clock, { minCleanableDirtyRatio: 0, segmentBytes: 400 }, horizon);
          if (outcome !== null) {
            horizon = outcome.earliestDeleteHorizonMs;
            totals.passes++;
            totals.removed += outcome.stats.recordsRead - outcome.stats.recordsRetained;
            totals.tombstonesRemoved += outcome.stats.tombstonesRemoved;
          }
          const after = logRecords(log);
          assert.equal(log.logEndOffset, leo);
          assert.deepEqual(
            log.read(activeBase, 1 << 30, Number.MAX_SAFE_INTEGER, true),
            activeBefore,
            'active segment untouched',
          );
          // Every served record is the produced one at that offset; offsets strictly increase.
          for (let i = 0; i < after.length; i++) {
            const p = produced.get(after[i]!.offset);
            assert.deepEqual([after[i]!.key, after[i]!.value], [p?.key, p?.value], `record at ${after[i]!.offset}`);
            if (i > 0) assert.ok(after[i]!.offset > after[i - 1]!.offset);
          }
          // The model: latest value per key; a tombstone may be gone (then its key is absent), but a
          // live value is always the latest produced one.
          const model = new Map<string, { offset: number; value: string | null }>();
          for (const [offset, r] of [...produced.entries()].sort((a, b) => a[0] - b[0]))
            model.set(r.key, { offset, value: r.value });
          const got = new Map<string, { offset: number; value: string | null }>();
          for (const r of after) got.set(r.key, { offset: r.offset, value: r.value });
          for (const [key, m] of model) {
            if (m.value === null) {
              const g = got.get(key);
              assert.ok(
                g === undefined || (g.offset === m.offset && g.value === null),
                `tombstoned ${key}: ${JSON.stringify(g)}`,
              );
            } else {
              assert.deepEqual(got.get(key), m, `latest value of ${key}`);
            }
          }
          assert.ok(after.length <= before.length);
          // Below the cleaned end each key appears at most once.
          const cleanEnd = log.firstDirtyOffset;
          const keysBelow = after.filter((r) => r.offset < cleanEnd).map((r) => r.key);
          assert.equal(new Set(keysBelow).size, keysBelow.length, 'one record per key in the cleaned range');
        }
      }),
      { numRuns: 60 },
    );
    // The workloads exercised the cleaner, not just the checks.
    assert.ok(totals.passes > 60 && totals.removed > 500 && totals.tombstonesRemoved > 0, JSON.stringify(totals));
  });
});
