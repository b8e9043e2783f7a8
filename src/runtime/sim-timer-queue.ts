/**
 * The simulation's timers: a queue ordered by (virtual due time, creation order), so timers due at the
 * same instant fire in the order they were set, as Node's do. Cancelled timers are marked and skipped.
 */
import { strict as assert } from 'node:assert';
import type { ActorId } from './actor';

/** One pending virtual timer. */
export interface SimTimer {
  readonly id: number;
  /** Global creation sequence (shared with messages, see SimRuntime): orders ties and zero-delay timers. */
  readonly seq: number;
  readonly dueMs: number;
  /** The actor or endpoint that set it (null: the simulator itself, e.g. a delayed message). */
  readonly owner: ActorId | null;
  /** Set with delay 0: must not fire before the owner's messages queued earlier (Timers contract). */
  readonly zeroDelay: boolean;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Virtual timers ordered by due time, then creation (module comment). */
export class SimTimerQueue {
  private readonly queue: SimTimer[] = [];
  private readonly byId = new Map<number, SimTimer>();
  private nextId = 1;

  /** Adds a timer due at `dueMs`; returns it (its `id` is the handle). */
  add(owner: ActorId | null, fn: () => void, dueMs: number, seq: number, zeroDelay: boolean): SimTimer {
    assert(Number.isFinite(dueMs), `bad timer due time ${dueMs}`);
    const timer: SimTimer = { id: this.nextId++, seq, dueMs, owner, zeroDelay, fn, cancelled: false };
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const other = this.queue[mid] as SimTimer;
      if (other.dueMs < dueMs || (other.dueMs === dueMs && other.seq < seq)) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, timer);
    this.byId.set(timer.id, timer);
    return timer;
  }

  /** Cancels timer `id` (no-op if it already fired or was cancelled). */
  cancel(id: number): void {
    const timer = this.byId.get(id);
    if (timer === undefined) return;
    timer.cancelled = true;
    this.byId.delete(id);
  }

  /** Cancels every timer of `owner` (the owner crashed or stopped). */
  cancelOwner(owner: ActorId): void {
    for (const timer of this.byId.values()) if (timer.owner === owner) this.cancel(timer.id);
  }

  /** Cancels everything. */
  cancelAll(): void {
    for (const id of [...this.byId.keys()]) this.cancel(id);
  }

  /** The earliest live timer, or undefined. */
  peek(): SimTimer | undefined {
    while (this.queue.length > 0 && (this.queue[0] as SimTimer).cancelled) this.queue.shift();
    return this.queue[0];
  }

  /** Removes `timer`, which must be the earliest live one (it is about to fire). */
  take(timer: SimTimer): void {
    assert(this.peek() === timer, 'only the earliest timer can fire');
    this.queue.shift();
    this.byId.delete(timer.id);
  }

  /** Live timers. */
  get size(): number {
    return this.byId.size;
  }
}
