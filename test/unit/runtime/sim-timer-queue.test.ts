/**
 * The simulation's timer queue (a binary heap) fires timers by (due time, creation order) and skips
 * cancelled ones: checked against a sorted reference over random adds, cancels and takes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SimTimerQueue, type SimTimer } from '../../../src/runtime/sim-timer-queue';

type Op = { kind: 'add'; dueMs: number } | { kind: 'cancel'; pick: number } | { kind: 'take' };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), dueMs: fc.integer({ min: 0, max: 20 }) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('take' as const) }),
);

test('timers come out by due time, then creation, without the cancelled ones', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const queue = new SimTimerQueue();
      let live: SimTimer[] = [];
      let seq = 0;
      const taken: number[] = [];
      const expected: number[] = [];
      const earliest = (): SimTimer | undefined => [...live].sort((a, b) => a.dueMs - b.dueMs || a.seq - b.seq)[0];
      for (const o of ops) {
        if (o.kind === 'add') live.push(queue.add(null, () => {}, o.dueMs, ++seq, false));
        else if (o.kind === 'cancel' && live.length > 0) {
          const victim = live[o.pick % live.length]!;
          queue.cancel(victim.id);
          live = live.filter((t) => t !== victim);
        } else if (o.kind === 'take') {
          const want = earliest();
          const got = queue.peek();
          assert.equal(got?.id, want?.id);
          if (got !== undefined) {
            queue.take(got);
            taken.push(got.id);
            expected.push(want!.id);
            live = live.filter((t) => t !== got);
          }
        }
        assert.equal(queue.size, live.length);
      }
      assert.deepEqual(taken, expected);
    }),
    { numRuns: 300, seed: 13 },
  );
});
