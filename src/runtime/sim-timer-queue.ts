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

/** True when `a` fires before `b`: earlier due time, then earlier creation. */
function before(a: SimTimer, b: SimTimer): boolean {
  return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.seq < b.seq);
}

/**
 * Virtual timers ordered by due time, then creation (module comment): a binary min-heap, so adding,
 * taking the earliest and dropping cancelled timers cost O(log n) each. (A sorted array cost O(n) per
 * add and per take: a run whose requests each set a 30 s timeout timer, cancelled on reply, slowed to a
 * crawl with a million of them queued.)
 */
export class SimTimerQueue {
  private readonly heap: SimTimer[] = [];
  private readonly byId = new Map<number, SimTimer>();
  private nextId = 1;

  /** Adds a timer due at `dueMs`; returns it (its `id` is the handle). */
  add(owner: ActorId | null, fn: () => void, dueMs: number, seq: number, zeroDelay: boolean): SimTimer {
    assert(Number.isFinite(dueMs), `bad timer due time ${dueMs}`);
    const timer: SimTimer = { id: this.nextId++, seq, dueMs, owner, zeroDelay, fn, cancelled: false };
    this.heap.push(timer);
    this.siftUp(this.heap.length - 1);
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
    while (this.heap.length > 0 && (this.heap[0] as SimTimer).cancelled) this.popTop();
    return this.heap[0];
  }

  /** Removes `timer`, which must be the earliest live one (it is about to fire). */
  take(timer: SimTimer): void {
    assert(this.peek() === timer, 'only the earliest timer can fire');
    this.popTop();
    this.byId.delete(timer.id);
  }

  /** Live timers. */
  get size(): number {
    return this.byId.size;
  }

  private popTop(): void {
    const last = this.heap.pop() as SimTimer;
    if (this.heap.length === 0) return;
    this.heap[0] = last;
    this.siftDown(0);
  }

  private siftUp(index: number): void {
    const heap = this.heap;
    const timer = heap[index] as SimTimer;
    while (index > 0) {
      const parent = (index - 1) >>> 1;
      const above = heap[parent] as SimTimer;
      if (!before(timer, above)) break;
      heap[index] = above;
      index = parent;
    }
    heap[index] = timer;
  }

  private siftDown(index: number): void {
    const heap = this.heap;
    const timer = heap[index] as SimTimer;
    const n = heap.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(heap[right] as SimTimer, heap[left] as SimTimer) ? right : left;
      const below = heap[child] as SimTimer;
      if (!before(below, timer)) break;
      heap[index] = below;
      index = child;
    }
    heap[index] = timer;
  }
}
