/**
 * Group commit of one replica's log: when appends become durable (Kafka's UnifiedLog.flush as driven
 * by flush.messages / flush.ms, and, with write.caching=false, after every append: the durability
 * contract).
 *
 * Pipelined: one asynchronous fsync (Log.flushAsync) is in flight at a time while appends go on; when
 * it completes (re-entering the actor through a zero-delay timer, so a crashed actor never runs
 * again) the replica's `onFlushed` moves the HW to what it covered, and the next flush starts at once
 * if anything is unflushed: one fsync covers every append made during the previous one.
 * Unless something waits for it: a flush that nothing waits on (no acks=all produce, no read parked
 * for the HW, no wait for a new leader's HW, and the replica leads: a follower's fsync is what its
 * leader's HW waits on) starts no sooner than {@link UNAWAITED_FLUSH_LINGER_MS} after the previous
 * one completed, so a stream of acks=1 appends costs a few hundred fsyncs a second instead of one per
 * disk round trip; a waiter that arrives meanwhile starts it at once ({@link GroupCommit.expedite}).
 * flush.messages uses the synchronous flush (Log.flush), never while an asynchronous one is in
 * flight (two racing fsyncs may split a writeback error between them): then it runs when that one
 * has completed.
 *
 * A flush that fails on the disk (a KafkaStorageError: EIO, ENOSPC on fsync) goes to the replica's
 * `onFlushFailed`, never counts as durable, and no flush starts while the log refuses writes (its
 * storageFailure); the replica re-establishes a durable prefix and schedules again. Any other error
 * (a programmer error) still crashes the actor.
 *
 * State written only by the replica actor's turns (its messages, its timers); the replica reads
 * {@link GroupCommit.isClosed}.
 */
import type { ActorContext } from '../runtime/actor';
import type { TimerHandle } from '../io/clock';
import { KafkaStorageError, type Log } from '../storage/log';

/** The topic configs group commit reads (ReplicaLogConfig's names). */
export interface GroupCommitConfig {
  /** flush.messages: records appended since the last flush that force a synchronous one. */
  flushMessages: number;
  /** flush.ms: the interval of timed flushes, null when unset. */
  flushMs: number | null;
  /** write.caching: the HW counts the page cache, so appends need no flush of their own. */
  writeCaching: boolean;
}

/**
 * How long after a completed flush the next one waits when nothing waits for it (ms). Nothing an
 * acks=1 or acks=0 producer was promised depends on it (its answer never waits for the fsync); it
 * delays only the HW that a later reader would see, and such a reader, parked, expedites it.
 */
export const UNAWAITED_FLUSH_LINGER_MS = 5;

/** What group commit needs of its replica. */
export interface GroupCommitHost {
  /**
   * Whether anything waits for the next flush: an acks=all produce, a read parked for the HW, a wait
   * for a new leader's HW, or the replica follows (its leader's HW counts its fsynced offset).
   */
  flushAwaited(): boolean;
  /** The replica's log, null once deleted. */
  log(): Log | null;
  config(): GroupCommitConfig;
  /** A flush completed (asynchronous or timed): the recovery point moved; recompute the HW. */
  onFlushed(ctx: ActorContext): void;
  /** A flush failed on the disk: the log now refuses writes ({@link Log.storageFailure}). */
  onFlushFailed(ctx: ActorContext, error: KafkaStorageError): void;
}

export class GroupCommit {
  /** Records appended since start, and how many of them a completed flush covers (flush.messages). */
  private appendedMessages = 0;
  private flushedMessages = 0;
  /** A zero-delay timer will start a flush. */
  private flushScheduled = false;
  /** A Log.flushAsync is in flight (until its completion has been handled). */
  private flushing = false;
  /** flush.messages was reached while an asynchronous flush was in flight: flush when it completes. */
  private syncFlushDue = false;
  /** The replica is stopping or deleted: no new flush starts. */
  private closed = false;
  /** The flush.ms timer. */
  private flushTimer: TimerHandle | null = null;
  /** The next flush waits for this timer (nothing waited for it); {@link expedite} cuts it short. */
  private lingerTimer: TimerHandle | null = null;
  /** When the last asynchronous flush completed (the actor's monotonic clock, ms). */
  private lastFlushedAtMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly host: GroupCommitHost) {}

  /** No flush will start any more (stop() or delete() began). */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Arms the flush.ms timer if flush.ms is set (replica start). */
  start(ctx: ActorContext): void {
    if (this.host.config().flushMs !== null) this.scheduleTimedFlush(ctx);
  }

  /**
   * `records` records were appended: flush synchronously once flush.messages are unflushed, else
   * (write.caching=false) schedule a group commit.
   */
  appended(ctx: ActorContext, log: Log, records: number): void {
    this.appendedMessages += records;
    const config = this.host.config();
    if (this.appendedMessages - this.flushedMessages >= config.flushMessages) {
      // Never a second fsync beside the asynchronous one: Linux reports a writeback error to one
      // fsync per descriptor, so one of two racing fsyncs could succeed over pages the other saw
      // lost. The flush runs once that one has completed (acks wait for the HW meanwhile anyway).
      if (this.flushing || log.flushInFlight) this.syncFlushDue = true;
      else this.flushNow(ctx, log);
    } else if (!config.writeCaching) this.schedule(ctx);
  }

  /** flush.messages: the synchronous flush (Log.flush); a storage error goes to the host's `onFlushFailed`. */
  private flushNow(ctx: ActorContext, log: Log): void {
    this.syncFlushDue = false;
    try {
      log.flush();
    } catch (error) {
      if (!(error instanceof KafkaStorageError)) throw error;
      this.host.onFlushFailed(ctx, error);
      return;
    }
    this.flushedMessages = this.appendedMessages;
  }

  /**
   * Group commit: one fsync for every append handled before the zero-delay timer fires. While a
   * flush is in flight nothing is scheduled: its completion starts the next one.
   */
  schedule(ctx: ActorContext): void {
    if (this.flushScheduled || this.flushing) return;
    this.flushScheduled = true;
    ctx.timers.setTimeout(() => {
      this.flushScheduled = false;
      this.startOrLinger(ctx);
    }, 0);
  }

  /**
   * Something now waits for the next flush (an acks=all produce or a read parked for the HW): a flush
   * lingering for {@link UNAWAITED_FLUSH_LINGER_MS} starts now.
   */
  expedite(ctx: ActorContext): void {
    if (this.lingerTimer === null) return;
    ctx.timers.clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    this.startFlush(ctx);
  }

  /** Starts a flush now, or, when nothing waits for it and the last one completed just now, a little later. */
  private startOrLinger(ctx: ActorContext): void {
    if (this.lingerTimer !== null) return;
    const wait = this.lastFlushedAtMs + UNAWAITED_FLUSH_LINGER_MS - ctx.clock.monotonicMs();
    if (wait > 0 && !this.host.flushAwaited()) {
      this.lingerTimer = ctx.timers.setTimeout(() => {
        this.lingerTimer = null;
        this.startFlush(ctx);
      }, wait);
      return;
    }
    this.startFlush(ctx);
  }

  /** flush.ms changed: the timer restarts with the new interval (or stops when unset). */
  restartTimedFlush(ctx: ActorContext): void {
    this.cancelTimedFlush(ctx);
    if (this.host.config().flushMs !== null) this.scheduleTimedFlush(ctx);
  }

  /** The replica stops or is deleted: no new flush starts, and the flush.ms timer stops. */
  close(ctx: ActorContext): void {
    this.closed = true;
    this.cancelTimedFlush(ctx);
    if (this.lingerTimer !== null) ctx.timers.clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
  }

  private cancelTimedFlush(ctx: ActorContext): void {
    if (this.flushTimer) ctx.timers.clearTimeout(this.flushTimer);
    this.flushTimer = null;
  }

  private scheduleTimedFlush(ctx: ActorContext): void {
    this.flushTimer = ctx.timers.setTimeout(
      () => {
        const log = this.host.log();
        if (log === null) return;
        if (log.hasUnflushed) this.startFlush(ctx);
        this.scheduleTimedFlush(ctx);
      },
      Math.max(1, this.host.config().flushMs ?? 1000),
    );
  }

  /**
   * Starts an asynchronous flush unless one is in flight. Its completion comes back through a
   * zero-delay timer (the actor's own turn; never after a crash); a storage error goes to the host's
   * `onFlushFailed` there, any other error is thrown there (crashing the actor). Nothing starts while
   * the log refuses writes.
   */
  private startFlush(ctx: ActorContext): void {
    const log = this.host.log();
    if (this.flushing || this.closed || log === null || log.storageFailure !== null) return;
    const messages = this.appendedMessages;
    const flushed = log.flushAsync();
    this.flushing = true;
    flushed.then(
      () => ctx.timers.setTimeout(() => this.onFlushed(ctx, messages), 0),
      (error: unknown) =>
        ctx.timers.setTimeout(() => {
          this.flushing = false;
          this.syncFlushDue = false; // the log refuses writes: nothing to flush until the probe heals it
          if (!(error instanceof KafkaStorageError)) throw error;
          const current = this.host.log();
          if (this.closed || current === null) return;
          this.host.onFlushFailed(ctx, error);
          // The storage probe may have healed the log before this report: appends made meanwhile saw
          // this flush in flight and scheduled none, so their group commit starts now.
          if (current.storageFailure === null && !this.host.config().writeCaching && current.hasUnflushed)
            this.schedule(ctx);
        }, 0),
    );
  }

  /** A flush started when `messages` records were appended has completed. */
  private onFlushed(ctx: ActorContext, messages: number): void {
    this.flushing = false;
    this.lastFlushedAtMs = ctx.clock.monotonicMs();
    const log = this.host.log();
    if (this.closed || log === null) return;
    this.flushedMessages = Math.max(this.flushedMessages, messages);
    if (this.syncFlushDue && log.storageFailure === null) this.flushNow(ctx, log);
    this.syncFlushDue = false;
    if (log.storageFailure !== null) return; // flushNow handed the failure to the host
    this.host.onFlushed(ctx);
    // Pipelining: everything appended while that fsync ran goes into the next one, now (or, when
    // nothing waits for it, after the linger).
    if (!this.host.config().writeCaching && log.hasUnflushed) this.startOrLinger(ctx);
  }
}
