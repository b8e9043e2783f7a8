/**
 * Real time for the production runtime: the Clock and Timers an actor gets on a worker thread (and that
 * main-thread endpoints use for request timeouts). The simulation has its own virtual twins.
 */
import type { Clock, TimerHandle, Timers } from '../io/clock';

/** Wall clock `Date.now()` and monotonic `performance.now()`, both in ms. */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
};

/**
 * Timers on Node's event loop that remember what is live, so an actor's timers can all be cancelled
 * when it stops. A delay of 0 uses `setImmediate`, which runs after the I/O (port messages) already
 * queued, as the Timers contract asks; other delays use `setTimeout`. `wrap` runs each callback (the
 * worker host wraps them to crash the worker on a throw).
 */
/** The largest delay Node's setTimeout honours (2^31-1 ms). */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

export class TrackedTimers implements Timers {
  private nextId = 1;
  private readonly live = new Map<number, { timeout: NodeJS.Timeout } | { immediate: NodeJS.Immediate }>();

  constructor(private readonly wrap: (fn: () => void) => void = (fn) => fn()) {}

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const id = this.nextId++;
    const fire = (): void => {
      this.live.delete(id);
      this.wrap(fn);
    };
    // Node fires a delay past 2^31-1 ms after 1 ms (TimeoutOverflowWarning): clamp it to the largest
    // one (~24.8 days), so a client's Integer.MAX_VALUE timeout means "very long", never "now".
    this.live.set(
      id,
      delayMs <= 0
        ? { immediate: setImmediate(fire) }
        : { timeout: setTimeout(fire, Math.min(delayMs, MAX_TIMER_DELAY_MS)) },
    );
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    const ref = this.live.get(handle.id);
    if (ref === undefined) return;
    this.live.delete(handle.id);
    if ('timeout' in ref) clearTimeout(ref.timeout);
    else clearImmediate(ref.immediate);
  }

  /** Cancels every live timer (actor stop). */
  clearAll(): void {
    for (const id of [...this.live.keys()]) this.clearTimeout({ id });
  }

  /** Number of live timers (tests, leak checks). */
  get size(): number {
    return this.live.size;
  }
}
