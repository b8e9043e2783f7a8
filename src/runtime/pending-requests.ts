/**
 * The requests one requester (an actor or an endpoint) is waiting on, by correlation id. Every entry
 * ends exactly once: reply, timeout ({@link RequestTimeoutError}), or a definite failure
 * ({@link ActorUnavailableError}) when the runtime learns the target is gone. Shared by the worker
 * host, the main-thread endpoints and the simulation, which differ only in their Timers.
 */
import { strict as assert } from 'node:assert';
import { ActorUnavailableError, RequestTimeoutError } from './actor';
import type { ActorId } from './actor';
import type { TimerHandle, Timers } from '../io/clock';

interface PendingRequest {
  to: ActorId;
  type: string;
  timer: TimerHandle;
  resolve(body: unknown): void;
  reject(error: Error): void;
}

/** Reasons a request fails before its timeout (see {@link ActorUnavailableError}). */
export type UnavailableReason = ActorUnavailableError['reason'];

/** Outstanding requests of one requester, keyed by correlation id (module comment). */
export class PendingRequests {
  private readonly byCorr = new Map<number, PendingRequest>();

  constructor(private readonly timers: Timers) {}

  /**
   * Registers request `corr` (unique for this requester) to `to`; resolves with the reply body, rejects
   * with RequestTimeoutError after `timeoutMs` on `timers`.
   */
  add<T>(corr: number, to: ActorId, type: string, timeoutMs: number): Promise<T> {
    assert(!this.byCorr.has(corr), `duplicate correlation id ${corr}`);
    assert(Number.isFinite(timeoutMs) && timeoutMs >= 0, `bad request timeout ${timeoutMs}`);
    return new Promise<T>((resolve, reject) => {
      const timer = this.timers.setTimeout(() => {
        this.byCorr.delete(corr);
        reject(new RequestTimeoutError(to, type, timeoutMs));
      }, timeoutMs);
      this.byCorr.set(corr, { to, type, timer, resolve: resolve as (body: unknown) => void, reject });
    });
  }

  /** Settles `corr` with a reply from `from`; false if unknown (late reply) or from the wrong sender. */
  resolve(corr: number, from: ActorId, body: unknown): boolean {
    const pending = this.byCorr.get(corr);
    if (pending === undefined || pending.to !== from) return false;
    this.finish(corr, pending);
    pending.resolve(body);
    return true;
  }

  /** Fails `corr` with ActorUnavailableError; false if unknown. */
  fail(corr: number, reason: UnavailableReason): boolean {
    const pending = this.byCorr.get(corr);
    if (pending === undefined) return false;
    this.finish(corr, pending);
    pending.reject(new ActorUnavailableError(pending.to, pending.type, reason));
    return true;
  }

  /** Fails every request addressed to one of `targets` (their worker crashed, they stopped). */
  failTo(targets: ReadonlySet<ActorId>, reason: UnavailableReason): void {
    for (const [corr, pending] of [...this.byCorr]) {
      if (targets.has(pending.to)) this.fail(corr, reason);
    }
  }

  /** Fails every request (the requester closes). */
  failAll(reason: UnavailableReason): void {
    for (const corr of [...this.byCorr.keys()]) this.fail(corr, reason);
  }

  /** Forgets every request without settling it (the requester itself is gone; nobody awaits). */
  dropAll(): void {
    for (const [corr, pending] of [...this.byCorr]) this.finish(corr, pending);
  }

  /** Number of requests in flight. */
  get size(): number {
    return this.byCorr.size;
  }

  private finish(corr: number, pending: PendingRequest): void {
    this.byCorr.delete(corr);
    this.timers.clearTimeout(pending.timer);
  }
}
