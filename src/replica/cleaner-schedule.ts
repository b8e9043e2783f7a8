/**
 * When one replica's log is compacted (Kafka's LogCleanerManager choosing a log, and the cleaner
 * thread's log.cleaner.backoff.ms between checks; the cleaning itself is storage/log-cleaner.ts).
 *
 * With cleanup.policy=compact and log.cleaner.enable, every log.cleaner.backoff.ms a cleaning is
 * planned below the HW; a pass runs its CPU work on `ctx.cpu` (a piscina pool in production, inline
 * in the simulation) while produce and fetch go on, and swaps each cleaned group of segments in one
 * short synchronous step of the actor's own turn. At most one pass runs per replica.
 *
 * State written only by the replica actor's thread (its timers and the pass's completion); the
 * replica's `describe` reads a copy ({@link CleanerSchedule.describe}).
 */
import { AssertionError } from 'node:assert/strict';
import type { ActorContext } from '../runtime/actor';
import type { TimerHandle } from '../io/clock';
import type { ReplicaLogConfig } from '../config/topic-config';
import type { KafkaStorageError, Log } from '../storage/log';
import { cleanLog, planCleaning, type CleanerConfig } from '../storage/log-cleaner';

/** What the cleaner schedule needs of its replica. */
export interface CleanerHost {
  /** The replica's log, null once deleted. */
  log(): Log | null;
  config(): ReplicaLogConfig;
  /** Cleaning stops at the HW: only committed records are compacted. */
  highWatermark(): number;
  /** Log fields naming the partition. */
  readonly where: { topic: string; partition: number };
  /** A swap the disk refused left the log refusing writes ({@link Log.storageFailure}): start the storage probe. */
  onStorageFailure(ctx: ActorContext, error: KafkaStorageError): void;
}

/** The cleaner's numbers for `describe` (tests, admin). */
export interface CleanerStatus {
  /** Passes completed. */
  passes: number;
  /** A pass is running. */
  running: boolean;
  /** The last pass's reason, outcome, stats and elapsed ms, null before the first. */
  last: object | null;
}

export class CleanerSchedule {
  private cleanerTimer: TimerHandle | null = null;
  /** A cleaning pass is running (at most one per replica). */
  private cleaning = false;
  /** Earliest delete horizon of a tombstone left by the last pass (-1: none), KIP-534. */
  private pendingDeleteHorizonMs = -1;
  private cleanerPasses = 0;
  private lastCleaning: object | null = null;

  constructor(private readonly host: CleanerHost) {}

  describe(): CleanerStatus {
    return { passes: this.cleanerPasses, running: this.cleaning, last: this.lastCleaning };
  }

  /** Arms the cleaner timer when compaction is on and it is not armed (log.cleaner.backoff.ms). */
  schedule(ctx: ActorContext): void {
    const config = this.host.config();
    if (this.cleanerTimer !== null || !config.compactEnabled || !config.cleanerEnable) return;
    this.cleanerTimer = ctx.timers.setTimeout(
      () => {
        this.cleanerTimer = null;
        const log = this.host.log();
        if (log === null) return;
        this.tick(ctx, log);
        this.schedule(ctx);
      },
      Math.max(1, config.cleanerBackoffMs),
    );
  }

  /** Stops the timer (stop, delete). A running pass finishes; its result is dropped if the log changed. */
  cancel(ctx: ActorContext): void {
    if (this.cleanerTimer) ctx.timers.clearTimeout(this.cleanerTimer);
    this.cleanerTimer = null;
  }

  /** Plans a cleaning and, if there is one and none runs, starts it (the CPU work runs on ctx.cpu). */
  private tick(ctx: ActorContext, log: Log): void {
    const config = this.host.config();
    // Not marked compacted (the disk refused the marker): offset gaps would not survive a restart.
    if (this.cleaning || !config.compactEnabled || !config.cleanerEnable || !log.isCompacted) return;
    const cleanerConfig: CleanerConfig = {
      minCleanableDirtyRatio: config.minCleanableDirtyRatio,
      minCompactionLagMs: config.minCompactionLagMs,
      maxCompactionLagMs: config.maxCompactionLagMs,
      deleteRetentionMs: config.deleteRetentionMs,
      segmentBytes: config.segmentBytes,
    };
    const nowMs = ctx.clock.nowMs();
    const plan = planCleaning(log, {
      config: cleanerConfig,
      highWatermark: this.host.highWatermark(),
      nowMs,
      pendingDeleteHorizonMs: this.pendingDeleteHorizonMs,
    });
    if (plan === null) return;
    this.cleaning = true;
    const startedMs = ctx.clock.monotonicMs();
    const where = this.host.where;
    ctx.log.debug(
      {
        ...where,
        reason: plan.reason,
        dirtyRatio: plan.dirtyRatio,
        firstDirtyOffset: plan.firstDirtyOffset,
        cleanEndOffset: plan.cleanEndOffset,
        groups: plan.groups.length,
      },
      'log cleaning started',
    );
    cleanLog(log, {
      plan,
      cpu: ctx.cpu,
      deleteRetentionMs: config.deleteRetentionMs,
      nowMs,
      isCurrent: () => this.host.log() === log && !log.isClosed,
      logger: ctx.log,
    })
      .then((outcome) => {
        this.cleaning = false;
        if (this.host.log() !== log) return;
        if (outcome.completed) {
          this.cleanerPasses++;
          this.pendingDeleteHorizonMs = outcome.earliestDeleteHorizonMs;
        } else if (outcome.earliestDeleteHorizonMs >= 0) {
          this.pendingDeleteHorizonMs =
            this.pendingDeleteHorizonMs < 0
              ? outcome.earliestDeleteHorizonMs
              : Math.min(this.pendingDeleteHorizonMs, outcome.earliestDeleteHorizonMs);
        }
        this.lastCleaning = {
          reason: plan.reason,
          completed: outcome.completed,
          groupsSwapped: outcome.groupsSwapped,
          ...outcome.stats,
          elapsedMs: ctx.clock.monotonicMs() - startedMs,
        };
        ctx.log.info({ ...where, ...this.lastCleaning, cleanEndOffset: plan.cleanEndOffset }, 'log cleaned');
      })
      .catch((error: unknown) => {
        // A broken invariant crashes the actor (STYLE.md habit 3); disk contents the filter cannot
        // parse are an operating error: keep serving.
        this.cleaning = false;
        if (error instanceof AssertionError) throw error;
        if (this.host.log() === log && log.storageFailure !== null) this.host.onStorageFailure(ctx, log.storageFailure);
        ctx.log.error({ ...where, error: String(error) }, 'log cleaning failed; retrying after log.cleaner.backoff.ms');
      });
  }
}
