/**
 * The replica's purgatory (Kafka's DelayedOperation and DelayedOperationPurgatory,
 * core/src/main/scala/kafka/server/): requests that cannot be answered yet wait here until their
 * completion condition holds, their deadline passes, or the replica closes.
 *
 * - {@link DelayedProduce}: an acks=all produce waiting for the high watermark to pass its last offset
 *   (deadline: the request's timeoutMs; then REQUEST_TIMED_OUT).
 * - {@link DelayedFetch}: a fetch long poll (the `watch` message) waiting for data past its fetch
 *   offset (deadline: maxWaitMs; then "not ready", and the network layer fetches what there is).
 * - {@link DelayedLeaderHighWatermark}: a group coordinator waiting for its new leader's HW to reach
 *   the start of the leader epoch (deadline: maxWaitMs; then REQUEST_TIMED_OUT).
 * - {@link DeferredRead}: a fetch, ListOffsets or DeleteRecords parked until a flush covers the LEO as
 *   of its arrival, so that it sees appends still being fsynced (read-your-writes; no deadline: the
 *   flush comes within two fsyncs).
 *
 * Every operation carries its condition as a closure over the replica's state, so the purgatory knows
 * nothing of high watermarks: with followers, a DelayedFetch from a follower waits on its own
 * condition, and a DelayedProduce on the ISR's. As in Kafka, the replica tries an operation first
 * (`tryCompleteElseWatch`) and, whenever the state the conditions read may have moved (the HW
 * advanced), tries the watched ones again (`checkAndComplete`).
 */
import assert from 'node:assert/strict';
import type { ActorContext, EnvelopeOf } from '../runtime/actor';
import type { TimerHandle, Timers } from '../io/clock';
import { ErrorCode } from '../protocol/error-codes';
import type { ProduceReply, ReplicaMessages } from './messages';

/**
 * One delayed operation (Kafka's DelayedOperation). Exactly one of onComplete, onExpire and onAbort
 * runs, once: the purgatory removes the operation when one does.
 */
export abstract class DelayedOperation {
  /** @param isCompletable the completion condition, read on each try. */
  protected constructor(private readonly isCompletable: () => boolean) {}

  /** Kafka's tryComplete: answers the operation (onComplete) if its condition holds now; true if it did. */
  tryComplete(): boolean {
    if (!this.isCompletable()) return false;
    this.onComplete();
    return true;
  }

  /** The condition held: answer. */
  protected abstract onComplete(): void;
  /** The deadline passed first (Kafka's onExpiration): answer with the timeout result. */
  abstract onExpire(): void;
  /** The replica stops or is deleted first: answer with `errorCode` or what can be answered now. */
  abstract onAbort(errorCode: number): void;
}

/**
 * An acks=all produce (Kafka's DelayedProduce): `reply` is sent once `isCompletable` holds (the HW
 * passed the batch's last offset); on expiry it is sent with REQUEST_TIMED_OUT, on abort with the
 * replica's error code, both keeping its offsets.
 */
export class DelayedProduce extends DelayedOperation {
  /**
   * @param completionError read once the condition holds: an error to answer instead of success
   *   (Kafka's checkEnoughReplicasReachOffset: NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank
   *   below min.insync.replicas while the produce waited), or null.
   */
  constructor(
    private readonly ctx: ActorContext,
    private readonly envelope: EnvelopeOf<ReplicaMessages, 'replica.produce'>,
    private readonly reply: ProduceReply,
    isCompletable: () => boolean,
    private readonly completionError: () => { errorCode: number; errorMessage: string } | null = () => null,
  ) {
    super(isCompletable);
  }

  protected onComplete(): void {
    const error = this.completionError();
    this.ctx.reply(this.envelope, error === null ? this.reply : { ...this.reply, ...error });
  }

  onExpire(): void {
    this.ctx.reply(this.envelope, {
      ...this.reply,
      errorCode: ErrorCode.REQUEST_TIMED_OUT,
      errorMessage: 'acks=all produce timed out waiting for the high watermark',
    });
  }

  onAbort(errorCode: number): void {
    this.ctx.reply(this.envelope, {
      ...this.reply,
      errorCode,
      errorMessage: 'replica stopped before the high watermark covered the batch',
    });
  }
}

/**
 * A fetch long poll (Kafka's DelayedFetch; the replica's `replica.watch` message): answers `{ready: true}`
 * once `isCompletable` holds (there is data past the fetch offset) or the replica closes (the fetch
 * that follows gets the error), `{ready: false}` at maxWaitMs.
 */
export class DelayedFetch extends DelayedOperation {
  constructor(
    private readonly ctx: ActorContext,
    private readonly envelope: EnvelopeOf<ReplicaMessages, 'replica.watch'>,
    isCompletable: () => boolean,
  ) {
    super(isCompletable);
  }

  protected onComplete(): void {
    this.ctx.reply(this.envelope, { ready: true });
  }

  onExpire(): void {
    this.ctx.reply(this.envelope, { ready: false });
  }

  onAbort(): void {
    this.ctx.reply(this.envelope, { ready: true });
  }
}

/**
 * A read parked until a flush covers the LEO as of its arrival (`isCompletable`); `read` handles the
 * request again then, without parking. On abort (or an expiry, should one be armed) it is handled
 * with what the HW covers at that moment.
 */
export class DeferredRead extends DelayedOperation {
  constructor(
    private readonly read: () => void,
    isCompletable: () => boolean,
  ) {
    super(isCompletable);
  }

  protected onComplete(): void {
    this.read();
  }

  onExpire(): void {
    this.read();
  }

  onAbort(): void {
    this.read();
  }
}

/**
 * A follower's fetch parked at the leader (Kafka's DelayedFetch for a replica fetch): `answer` reads
 * and replies once `isCompletable` holds (bytes past its offset, or the HW moved) or at maxWaitMs;
 * on abort (the replica lost leadership, stopped) `answerError` replies with the error code.
 */
export class DelayedFollowerFetch extends DelayedOperation {
  constructor(
    private readonly answer: () => void,
    private readonly answerError: (errorCode: number) => void,
    isCompletable: () => boolean,
  ) {
    super(isCompletable);
  }

  protected onComplete(): void {
    this.answer();
  }

  onExpire(): void {
    this.answer();
  }

  onAbort(errorCode: number): void {
    this.answerError(errorCode);
  }
}

/**
 * A `replica.await-leader-hw` waiting for a new leader's HW to reach the start of its epoch:
 * `answer(errorCode)` replies with NONE once `isCompletable` holds, REQUEST_TIMED_OUT at maxWaitMs,
 * or the abort's error code (lost leadership, stop).
 */
export class DelayedLeaderHighWatermark extends DelayedOperation {
  constructor(
    private readonly answer: (errorCode: number) => void,
    isCompletable: () => boolean,
  ) {
    super(isCompletable);
  }

  protected onComplete(): void {
    this.answer(ErrorCode.NONE);
  }

  onExpire(): void {
    this.answer(ErrorCode.REQUEST_TIMED_OUT);
  }

  onAbort(errorCode: number): void {
    this.answer(errorCode);
  }
}

interface Watched<T extends DelayedOperation> {
  operation: T;
  /** The deadline's timer, or null for an operation without one. */
  timer: TimerHandle | null;
}

/**
 * Operations of one kind, answered in arrival order (Kafka's DelayedOperationPurgatory, with one
 * watch key: the partition). An operation's answer must not re-enter its purgatory (asserted).
 */
export class DelayedOperationPurgatory<T extends DelayedOperation> {
  private readonly watched: Watched<T>[] = [];
  private completing = false;

  /** Operations waiting. */
  get size(): number {
    return this.watched.length;
  }

  /**
   * Kafka's tryCompleteElseWatch: completes `operation` now if it can, else watches it until it
   * completes, `timeoutMs` passes (onExpire; null: no deadline) or {@link abortAll}. True if completed now.
   */
  tryCompleteElseWatch(operation: T, timers: Timers, timeoutMs: number | null): boolean {
    assert.ok(!this.completing, 'purgatory entered from an operation it is completing');
    if (operation.tryComplete()) return true;
    const entry: Watched<T> = { operation, timer: null };
    if (timeoutMs !== null) entry.timer = timers.setTimeout(() => this.expire(entry), Math.max(0, timeoutMs));
    this.watched.push(entry);
    return false;
  }

  /** Kafka's checkAndComplete: tries every watched operation, oldest first; returns how many completed. */
  checkAndComplete(timers: Timers): number {
    assert.ok(!this.completing, 'purgatory re-entered while completing');
    this.completing = true;
    let completed = 0;
    try {
      for (let i = 0; i < this.watched.length;) {
        const entry = this.watched[i];
        assert.ok(entry !== undefined);
        if (entry.operation.tryComplete()) {
          this.watched.splice(i, 1);
          if (entry.timer !== null) timers.clearTimeout(entry.timer);
          completed++;
        } else i++;
      }
    } finally {
      this.completing = false;
    }
    return completed;
  }

  /** Answers every watched operation with onAbort(errorCode), oldest first, and forgets them. */
  abortAll(timers: Timers, errorCode: number): void {
    for (const entry of this.watched.splice(0)) {
      if (entry.timer !== null) timers.clearTimeout(entry.timer);
      entry.operation.onAbort(errorCode);
    }
  }

  private expire(entry: Watched<T>): void {
    const index = this.watched.indexOf(entry);
    if (index < 0) return; // completed or aborted (its timer was cleared; kept for safety)
    this.watched.splice(index, 1);
    entry.operation.onExpire();
  }
}

/**
 * The replica's purgatories. Completion and abort go through them in a fixed order (deferred
 * reads, produces, fetch long polls, follower fetches, waits for a new leader's HW), so answers leave in the same order on every run.
 */
export class ReplicaPurgatory {
  readonly deferredReads = new DelayedOperationPurgatory<DeferredRead>();
  readonly produces = new DelayedOperationPurgatory<DelayedProduce>();
  readonly fetches = new DelayedOperationPurgatory<DelayedFetch>();
  readonly followerFetches = new DelayedOperationPurgatory<DelayedFollowerFetch>();
  readonly leaderHighWatermarks = new DelayedOperationPurgatory<DelayedLeaderHighWatermark>();

  /** The state the conditions read has moved (the HW advanced, the LEO grew): completes whatever now can be. */
  checkAndComplete(timers: Timers): void {
    this.deferredReads.checkAndComplete(timers);
    this.produces.checkAndComplete(timers);
    this.fetches.checkAndComplete(timers);
    this.followerFetches.checkAndComplete(timers);
    this.leaderHighWatermarks.checkAndComplete(timers);
  }

  /**
   * The replica stops, is deleted or loses leadership: deferred reads are handled with what the HW
   * covers now, produces, follower fetches and waits for a leader's HW answered with `errorCode`,
   * fetch long polls released.
   */
  abortAll(timers: Timers, errorCode: number): void {
    this.deferredReads.abortAll(timers, errorCode);
    this.produces.abortAll(timers, errorCode);
    this.fetches.abortAll(timers, errorCode);
    this.followerFetches.abortAll(timers, errorCode);
    this.leaderHighWatermarks.abortAll(timers, errorCode);
  }
}
