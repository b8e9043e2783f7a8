/**
 * Time as an actor sees it (STYLE.md habit 6): a clock and timers injected through its context, never
 * `Date.now` or `setTimeout`. Production gives real time (runtime/system-time.ts); the simulation gives
 * virtual time that moves only when the scheduler says so (runtime/sim-runtime.ts).
 */

/** Wall-clock and monotonic time, both in milliseconds. */
export interface Clock {
  /** Wall-clock time in ms since the Unix epoch (record timestamps, LogAppendTime). */
  nowMs(): number;
  /** Monotonic time in ms (timeouts, intervals); only differences are meaningful. */
  monotonicMs(): number;
}

/** An opaque handle returned by {@link Timers.setTimeout}. */
export type TimerHandle = { readonly id: number };

/** Timers driven by the runtime's clock (virtual time in the simulation). */
export interface Timers {
  /** Calls `fn` once after `delayMs` (0 = after the messages already queued for this thread). */
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}
