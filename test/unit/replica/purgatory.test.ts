/**
 * The replica's purgatory on its own: tryCompleteElseWatch answers at once or watches, checkAndComplete
 * answers what the condition now allows in arrival order, a deadline expires an operation once, abort
 * answers every watched one, and an answer that re-enters its purgatory is a programmer error.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TimerHandle, Timers } from '../../../src/io/clock';
import { DelayedOperation, DelayedOperationPurgatory } from '../../../src/replica/purgatory';

/** Timers on a hand-moved clock: `advance(ms)` runs every armed callback whose delay has passed. */
function manualTimers(): Timers & { advance(ms: number): void; armed(): number } {
  let nowMs = 0;
  let nextId = 0;
  const pending = new Map<number, { atMs: number; fn: () => void }>();
  return {
    setTimeout(fn, delayMs) {
      const handle: TimerHandle = { id: nextId++ };
      pending.set(handle.id, { atMs: nowMs + delayMs, fn });
      return handle;
    },
    clearTimeout(handle) {
      pending.delete(handle.id);
    },
    advance(ms) {
      nowMs += ms;
      for (const [id, timer] of [...pending]) {
        if (timer.atMs > nowMs) continue;
        pending.delete(id);
        timer.fn();
      }
    },
    armed: () => pending.size,
  };
}

/** An operation that records how it was answered in `answers`; `onAnswer` runs after it completes. */
class Recorded extends DelayedOperation {
  constructor(
    readonly name: string,
    private readonly answers: string[],
    isCompletable: () => boolean,
    private readonly onAnswer: () => void = () => undefined,
  ) {
    super(isCompletable);
  }
  protected onComplete(): void {
    this.answers.push(`${this.name}:complete`);
    this.onAnswer();
  }
  onExpire(): void {
    this.answers.push(`${this.name}:expire`);
  }
  onAbort(errorCode: number): void {
    this.answers.push(`${this.name}:abort(${errorCode})`);
  }
}

describe('replica purgatory', () => {
  test('an operation whose condition holds is answered at once and never watched', () => {
    const timers = manualTimers();
    const purgatory = new DelayedOperationPurgatory<Recorded>();
    const answers: string[] = [];
    assert.equal(purgatory.tryCompleteElseWatch(new Recorded('a', answers, () => true), timers, 100), true);
    assert.deepEqual(answers, ['a:complete']);
    assert.equal(purgatory.size, 0);
    assert.equal(timers.armed(), 0, 'no deadline timer for an operation answered at once');
  });

  test('checkAndComplete answers, oldest first, only those whose condition now holds, and clears their timers', () => {
    const timers = manualTimers();
    const purgatory = new DelayedOperationPurgatory<Recorded>();
    const answers: string[] = [];
    let highWatermark = 0;
    for (const [name, offset] of [
      ['p5', 5],
      ['p2', 2],
      ['p9', 9],
      ['p1', 1],
    ] as const)
      assert.equal(
        purgatory.tryCompleteElseWatch(new Recorded(name, answers, () => highWatermark > offset), timers, 1000),
        false,
      );
    assert.equal(purgatory.size, 4);
    highWatermark = 6;
    assert.equal(purgatory.checkAndComplete(timers), 3);
    assert.deepEqual(answers, ['p5:complete', 'p2:complete', 'p1:complete']);
    assert.equal(purgatory.size, 1);
    assert.equal(timers.armed(), 1, 'only the watched operation keeps its deadline');
    assert.equal(purgatory.checkAndComplete(timers), 0, 'nothing more completes without the condition moving');
  });

  test('the deadline expires a watched operation once; a completed one never expires', () => {
    const timers = manualTimers();
    const purgatory = new DelayedOperationPurgatory<Recorded>();
    const answers: string[] = [];
    let ready = false;
    purgatory.tryCompleteElseWatch(new Recorded('early', answers, () => ready), timers, 100);
    purgatory.tryCompleteElseWatch(new Recorded('late', answers, () => false), timers, 50);
    timers.advance(50);
    assert.deepEqual(answers, ['late:expire']);
    ready = true;
    purgatory.checkAndComplete(timers);
    timers.advance(100);
    assert.deepEqual(answers, ['late:expire', 'early:complete']);
    assert.equal(purgatory.size, 0);
  });

  test('a negative timeout expires at the next timer turn; a null one never', () => {
    const timers = manualTimers();
    const purgatory = new DelayedOperationPurgatory<Recorded>();
    const answers: string[] = [];
    purgatory.tryCompleteElseWatch(new Recorded('negative', answers, () => false), timers, -5);
    purgatory.tryCompleteElseWatch(new Recorded('forever', answers, () => false), timers, null);
    timers.advance(0);
    assert.deepEqual(answers, ['negative:expire']);
    timers.advance(1_000_000);
    assert.deepEqual(answers, ['negative:expire']);
    assert.equal(purgatory.size, 1);
  });

  test('abortAll answers every watched operation with the error code, oldest first, and stops their timers', () => {
    const timers = manualTimers();
    const purgatory = new DelayedOperationPurgatory<Recorded>();
    const answers: string[] = [];
    purgatory.tryCompleteElseWatch(new Recorded('a', answers, () => false), timers, 10);
    purgatory.tryCompleteElseWatch(new Recorded('b', answers, () => false), timers, null);
    purgatory.abortAll(timers, 6);
    assert.deepEqual(answers, ['a:abort(6)', 'b:abort(6)']);
    assert.equal(purgatory.size, 0);
    assert.equal(timers.armed(), 0);
    timers.advance(100);
    assert.deepEqual(answers, ['a:abort(6)', 'b:abort(6)'], 'an aborted operation does not expire');
  });

  test('an answer that watches a new operation in the same purgatory is refused (assert)', () => {
    const timers = manualTimers();
    const purgatory = new DelayedOperationPurgatory<Recorded>();
    const answers: string[] = [];
    let ready = false;
    const reentering = new Recorded(
      'r',
      answers,
      () => ready,
      () => purgatory.tryCompleteElseWatch(new Recorded('inner', answers, () => false), timers, null),
    );
    purgatory.tryCompleteElseWatch(reentering, timers, null);
    ready = true;
    assert.throws(() => purgatory.checkAndComplete(timers), /purgatory entered from an operation it is completing/);
  });
});
