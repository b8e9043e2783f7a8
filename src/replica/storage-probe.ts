/**
 * Storage errors of one replica (the replica side of Kafka's LogDirFailureChannel, which takes a
 * failed log dir offline until a restart). It owns the refusal state and the storage probe:
 * - an append the disk refuses (a full disk) is undone by the log and answered KAFKA_STORAGE_ERROR
 *   with its errno; the next produce simply tries again, so appends resume by themselves once space
 *   is free (one warning per run of refusals, one line when appends resume);
 * - a failed fsync (or an append, a deletion or a cleaner swap that could not be undone) makes the
 *   log refuse writes (Log.storageFailure): {@link StorageProbe.onStorageFailure} answers the produces
 *   waiting for the HW and the reads parked for a flush (through the host), and arms the probe, which
 *   every {@link STORAGE_PROBE_INTERVAL_MS} re-establishes a durable prefix (Log.reestablishDurablePrefix:
 *   the log cut back to its last fsynced point and fsynced again) and reopens the partition for writes.
 *   That is for a partition with a single assigned replica only (nobody else can lead it). A replica of
 *   a partition with more replicas goes offline instead, as Kafka's does (KIP-112): the host answers
 *   KAFKA_STORAGE_ERROR, leaves the ISR through the controller, and stays so until its broker restarts,
 *   so it never rejoins with an HW over bytes whose fsync failed. An I/O error on the leader-epoch
 *   checkpoint or in a truncation (the replica's writeOrGoOffline: Log.failStorage, then
 *   {@link StorageProbe.onStorageFailure}) takes the same way.
 *
 * Durability: the cut never goes below the high watermark. The probe passes the HW as the floor, and
 * the log refuses (changing nothing) when its recovery point is below it: under write.caching=false
 * the HW never passes the recovery point, so nothing acknowledged or read is cut; under
 * write.caching=true readers may have seen bytes that were never fsynced, and the partition then
 * refuses writes until a restart's recovery judges them.
 *
 * State written only by the replica actor's turns (its messages, its timers), as group-commit.ts and
 * cleaner-schedule.ts.
 */
import type { ActorContext } from '../runtime/actor';
import type { TimerHandle } from '../io/clock';
import { KafkaStorageError, type Log, type LogAppendInfo } from '../storage/log';

/**
 * How often a replica whose log refuses writes after a failed fsync tries to re-establish a durable
 * prefix (Log.reestablishDurablePrefix). Kafka has no counterpart: its log dir stays offline until
 * a restart. Once a second costs nothing while the disk is still failing and heals within a second.
 */
export const STORAGE_PROBE_INTERVAL_MS = 1000;

/** What the storage probe needs of its replica. */
export interface StorageProbeHost {
  /** The replica's log, null before start and once deleted. */
  log(): Log | null;
  /** The floor of the cut (see the module doc). */
  highWatermark(): number;
  /** The replica is stopping or deleted (group commit closed): the probe stops. */
  isClosing(): boolean;
  /**
   * The partition has more than one assigned replica: a failed fsync takes this replica offline until
   * its broker restarts ({@link onOffline}) instead of arming the probe, as Kafka takes a failed log
   * dir offline (KIP-112), since another replica can lead. With one replica nobody else can: the probe heals it.
   */
  replicated(): boolean;
  /**
   * The log refuses writes and the partition is replicated: the replica goes offline for good (until
   * its broker restarts); called once, after {@link onRefusingWrites}.
   */
  onOffline(ctx: ActorContext, error: KafkaStorageError): void;
  /** The partition directory (log lines). */
  readonly dir: string;
  /**
   * The log refuses writes: answer the produces waiting for the HW and the reads parked for a flush
   * with KAFKA_STORAGE_ERROR (the HW will not pass them before the probe cuts the log back).
   */
  onRefusingWrites(ctx: ActorContext): void;
  /**
   * The log takes writes again, cut back from `previousLogEndOffset` to its LEO: forget idempotent-
   * producer state past it and recompute the HW.
   */
  onHealed(ctx: ActorContext, previousLogEndOffset: number): void;
}

export class StorageProbe {
  /** The probe's timer while the log refuses writes, else null. */
  private timer: TimerHandle | null = null;
  /** The last append failed on the disk (a full disk): one warning per run of failures, one line when appends resume. */
  private appendsFailing = false;
  /** The errno of the last refused append (for the produce answer's message). */
  private lastAppendErrno = 'EIO';
  /** Offline until a restart (a replicated partition's storage failure): the probe never runs. */
  private offline = false;

  constructor(private readonly host: StorageProbeHost) {}

  /** True once a storage failure of a replicated partition took this replica offline (until its broker restarts). */
  get isOffline(): boolean {
    return this.offline;
  }

  /** The errno a KAFKA_STORAGE_ERROR produce answer names: the log's failure's, else the last refused append's. */
  errno(log: Log): string {
    return log.storageFailure?.code ?? this.lastAppendErrno;
  }

  /**
   * Appends `batch` at the LEO with `leaderEpoch`, or returns null when the disk refuses (the log is
   * unchanged; the caller answers KAFKA_STORAGE_ERROR) or the log refuses writes after an earlier
   * failure (then the probe is started if it is not running).
   */
  appendOrRefuse(ctx: ActorContext, log: Log, batch: Buffer, leaderEpoch: number): LogAppendInfo | null {
    if (log.storageFailure !== null) return null;
    try {
      const appended = log.append(batch, leaderEpoch);
      if (this.appendsFailing) {
        this.appendsFailing = false;
        ctx.log.info({ dir: this.host.dir, baseOffset: appended.baseOffset }, 'appends resumed after storage errors');
      }
      return appended;
    } catch (error) {
      if (!(error instanceof KafkaStorageError)) throw error;
      this.lastAppendErrno = error.code;
      if (!this.appendsFailing) {
        this.appendsFailing = true;
        ctx.log.warn(
          { dir: this.host.dir, errno: error.code, error: error.message, logEndOffset: log.logEndOffset },
          'append refused by the disk: answering KAFKA_STORAGE_ERROR until an append succeeds',
        );
      }
      if (log.storageFailure !== null) this.onStorageFailure(ctx, log.storageFailure);
      return null;
    }
  }

  /**
   * The log refuses writes (a failed fsync, or an append that could not be undone): the host answers
   * what waits on the HW ({@link StorageProbeHost.onRefusingWrites}) and the probe starts. No-op while
   * the probe runs, or when the log takes writes again.
   */
  onStorageFailure(ctx: ActorContext, error: KafkaStorageError): void {
    // A failed asynchronous flush reports on a zero-delay timer: the probe may have healed the log
    // before it fires, and the produces waiting now are over the healed log.
    const log = this.host.log();
    if (this.offline || this.timer !== null || log === null || log.storageFailure === null) return;
    if (this.host.replicated()) {
      this.offline = true;
      ctx.log.error(
        { dir: this.host.dir, errno: error.code, error: error.message, recoveryPoint: log.recoveryPoint },
        'replica offline after a storage error: out of the ISR, KAFKA_STORAGE_ERROR until its broker restarts',
      );
      this.host.onRefusingWrites(ctx);
      this.host.onOffline(ctx, error);
      return;
    }
    ctx.log.error(
      { dir: this.host.dir, errno: error.code, error: error.message },
      'partition refuses writes after a storage error; retrying every STORAGE_PROBE_INTERVAL_MS',
    );
    this.host.onRefusingWrites(ctx);
    this.arm(ctx);
  }

  /** Stops the probe's timer (stop, delete). */
  cancel(ctx: ActorContext): void {
    if (this.timer) ctx.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(ctx: ActorContext): void {
    this.timer = ctx.timers.setTimeout(() => this.probe(ctx), STORAGE_PROBE_INTERVAL_MS);
  }

  /**
   * The storage probe: once no flush is in flight, cuts the log back to its last durable point and
   * fsyncs it (Log.reestablishDurablePrefix); the partition takes writes again when that succeeds,
   * else the probe runs again later. Never cuts below the HW (write.caching=true may have shown
   * readers bytes that were never fsynced): then the partition keeps refusing writes until a restart.
   */
  private probe(ctx: ActorContext): void {
    this.timer = null;
    const log = this.host.log();
    if (log === null || log.isClosed || log.storageFailure === null || this.host.isClosing()) return;
    if (log.flushInFlight) return this.arm(ctx);
    const before = log.logEndOffset;
    const highWatermark = this.host.highWatermark();
    try {
      if (!log.reestablishDurablePrefix(highWatermark)) {
        ctx.log.error(
          { dir: this.host.dir, recoveryPoint: log.recoveryPoint, highWatermark },
          'readers saw bytes past the last durable point (write.caching=true): the partition refuses writes until a restart recovers it',
        );
        return;
      }
    } catch (error) {
      if (!(error instanceof KafkaStorageError)) throw error;
      return this.arm(ctx);
    }
    ctx.log.info(
      { dir: this.host.dir, logEndOffset: log.logEndOffset, droppedOffsets: before - log.logEndOffset },
      'partition takes writes again',
    );
    this.host.onHealed(ctx, before);
  }
}
