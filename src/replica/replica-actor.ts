/**
 * A partition replica actor (DESIGN.md "Replica actor"): a dispatcher over the partition's `Log`
 * (storage/) and the roles it delegates to. Its role (leader or follower, leader epoch, partition
 * epoch, ISR, topic config) comes from its broker's replica manager: asked for at start
 * (`replica-manager.replica-state`, never from spawn arguments) and pushed on every change
 * (`replica.update-role`, Kafka's Partition.makeLeader / makeFollower). HW = min over the ISR of what
 * each member counts toward it (with write.caching=false, only fsynced bytes: the durability
 * contract).
 *
 * As leader (leader-state.ts) it validates and appends produces, tracks each follower's LEO, fsynced
 * offset and caught-up time from its fetches, answers follower fetches up to the LEO (at once when
 * there are bytes, else parked until bytes arrive, the HW moves or maxWaitMs), answers a follower
 * whose last fetched epoch diverges with `divergingEpoch` (KIP-320), shrinks the ISR of followers not
 * caught up within replica.lag.time.max.ms and expands it for followers that reached the HW in its
 * epoch (`replica-manager.alter-partition`, one in flight). As follower (follower-fetcher.ts) it
 * fetches from the leader's replica actor, truncates to the end of the largest common epoch, appends
 * the batches unchanged (epoch cache and producer state built from them) and takes the HW from the
 * reply. A replica that does not lead answers produce, consumer fetch, ListOffsets and
 * OffsetForLeaderEpoch NOT_LEADER_OR_FOLLOWER; a currentLeaderEpoch older than its epoch gets
 * FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH (KIP-320).
 *
 * Roles (each in its own file):
 * - produce validation (produce-validation.ts: header and CRC-32C only, no record decoding) and
 *   idempotent-producer state (producer-state.ts); offset assignment is Log.append;
 * - group commit (group-commit.ts): when appends become durable, and so when the HW may move;
 * - the purgatory (purgatory.ts): acks=all produces waiting for the HW, fetch long polls waiting for
 *   data, and reads deferred until a flush covers the LEO. Read-your-writes is kept as when the fsync
 *   blocked the actor: a fetch that would come back empty although the log holds more, a ListOffsets
 *   or a DeleteRecords that arrives while appends are not yet under the HW waits (at most two fsyncs)
 *   for the flush covering the LEO as of its arrival;
 * - the cleaner schedule (cleaner-schedule.ts): when the log is compacted;
 * - retention and checkpoints (here: two timers);
 * - storage errors (storage-probe.ts): a full disk or an I/O error is an operating error. An append
 *   the disk refuses is undone by the log and answered KAFKA_STORAGE_ERROR; the next produce simply
 *   tries again. A failed fsync (or an append that could not be undone) makes the log refuse writes:
 *   produces get KAFKA_STORAGE_ERROR, those waiting for the HW are answered so, reads go on up to the
 *   HW, and a probe every STORAGE_PROBE_INTERVAL_MS re-establishes a durable prefix (the log cut back
 *   to its last fsynced point, which the HW never passed under write.caching=false) and reopens the
 *   partition for writes; a replica of a replicated partition goes offline instead (KIP-112). An I/O
 *   error writing the leader-epoch checkpoint or truncating the log (role changes, follower
 *   truncation: {@link ReplicaActor.writeOrGoOffline}) is handled as a failed fsync, never thrown.
 *
 * Its messages (`replica.produce`, `replica.fetch`, `replica.watch`, `replica.list-offsets`,
 * `replica.delete`, `replica.update-config`, `replica.delete-records`, `replica.offset-for-epoch`,
 * `replica.describe`, `replica.await-leader-hw`) are declared with their bodies and replies in messages.ts (ReplicaMessages).
 */
import assert from 'node:assert/strict';
import { forgetCheckpointEntries } from './log-dir-actor';
import type { Actor, ActorContext, ActorRef, Envelope, EnvelopeOf } from '../runtime/actor';
import { allocateWithHeadroom, whileLent } from '../runtime/envelope';
import type { TimerHandle } from '../io/clock';
import { ErrorCode } from '../protocol/error-codes';
import { recordsCountOf, stampLogAppendTime } from '../protocol/record-batch/view';
import {
  DELETE_RECORDS_HIGH_WATERMARK,
  EARLIEST_TIMESTAMP,
  INVALID_HIGH_WATERMARK,
  INVALID_LAST_STABLE_OFFSET,
  INVALID_LOG_START_OFFSET,
  INVALID_LOW_WATERMARK,
  INVALID_OFFSET,
  LATEST_TIMESTAMP,
  MAX_TIMESTAMP,
  NO_PARTITION_LEADER_EPOCH,
  NO_TIMESTAMP,
  UNKNOWN_OFFSET,
  UNKNOWN_TIMESTAMP,
} from '../protocol/sentinels';
import { KafkaStorageError, Log } from '../storage/log';
import {
  LEADER_EPOCH_CHECKPOINT_FILE,
  PARTITION_METADATA_FILE,
  readOffsetCheckpointEntry,
  readPartitionMetadata,
  syncFiles,
  writePartitionMetadata,
} from '../storage/checkpoint';
import type { ReplicaLogConfig } from '../config/topic-config';
import {
  createTimeOutOfBounds,
  keylessRecordRejection,
  toTopicCompression,
  validateProducedBatch,
} from './produce-validation';
import { LeaderEpochCache } from './leader-epoch-cache';
import { lastSequenceOf, ProducerStateTable, rebuildProducerState } from './producer-state';
import {
  DeferredRead,
  DelayedFetch,
  DelayedFollowerFetch,
  DelayedLeaderHighWatermark,
  DelayedProduce,
  ReplicaPurgatory,
} from './purgatory';
import { LeaderState } from './leader-state';
import { plantedBugs } from './planted-bugs';
import { FollowerFetcher, type FollowerFetchSettings, type NextFetch } from './follower-fetcher';
import {
  checkBatch,
  partitionLeaderEpochOf,
  baseOffsetNumber,
  lastOffsetDeltaOf,
  batchSizeAt,
} from '../protocol/record-batch/view';
import { GroupCommit } from './group-commit';
import { CleanerSchedule } from './cleaner-schedule';
import { StorageProbe } from './storage-probe';
import * as L from '../protocol/record-batch/layout';
import { replicaActorId } from './messages';
import type {
  FetchReply,
  ListOffsetReply,
  LogDirMessages,
  PartitionCheckpointBody,
  PartitionRole,
  ProduceReply,
  ReplicaHostMessages,
  ReplicaMessages,
} from './messages';

/**
 * How long the replica waits for its log-dir actor (the final checkpoint on stop, `log-dir.forget` on delete).
 * That actor is local and answers within a turn; past this it is stuck or gone, and the replica goes
 * on: a missing final checkpoint only makes recovery scan from the previous one.
 */
const LOG_DIR_REQUEST_TIMEOUT_MS = 5000;

/**
 * How long the replica waits for its replica manager (its role at start, an AlterPartition). The
 * manager is local; an AlterPartition goes on to the controller, which appends it to the metadata
 * log first. Past this the ISR change is given up and retried by the next expiration check.
 */
const MANAGER_REQUEST_TIMEOUT_MS = 30_000;

/** The broker-level replication settings (Kafka's replica.* configs) a replica leads and follows with. */
export interface ReplicationSettings extends FollowerFetchSettings {
  /** replica.lag.time.max.ms: an ISR follower not caught up this long is shrunk out (checked every half of it). */
  replicaLagTimeMaxMs: number;
}

/** Spawn arguments of a replica actor. */
export interface ReplicaArgs {
  topic: string;
  topicId: string;
  partition: number;
  /** The log dir (one of log.dirs) holding `<topic>-<partition>/`. */
  logDir: string;
  brokerId: number;
  /** The broker's epoch (KIP-903), sent in follower fetches. */
  brokerEpoch: number;
  /** The broker's replica manager: the source of the replica's role and topic config. */
  manager: ActorRef<ReplicaHostMessages>;
  /** The log-dir actor that writes this dir's checkpoint files. */
  logDirActor: ActorRef<LogDirMessages>;
  /** How often the recovery point and HW are sent to the log-dir actor (replica.high.watermark.checkpoint.interval.ms). */
  checkpointIntervalMs: number;
  /** How often retention runs (log.retention.check.interval.ms). */
  retentionCheckIntervalMs: number;
  replication: ReplicationSettings;
}

export type { FetchReply, ListOffsetReply, ProduceReply } from './messages';
export { STORAGE_PROBE_INTERVAL_MS } from './storage-probe';

/** A replica's envelope of kind `K`. */
type ReplicaEnvelope<K extends keyof ReplicaMessages & string> = EnvelopeOf<ReplicaMessages, K>;

/**
 * One partition replica. Its state (the log, the HW, the purgatory, group commit, the cleaner
 * schedule, idempotent-producer state) is written only by this actor, on the worker thread that hosts
 * it: by its messages, its timers, and the completions of its asynchronous flushes (through a
 * zero-delay timer) and cleaning passes (a promise on the same thread). Nothing else holds a
 * reference. Others read copies: the network handlers get the HW and log start offset in fetch and
 * ListOffsets replies (the log start also in produce replies), the log-dir actor gets the recovery
 * point, HW and log start offset in `log-dir.checkpoint` messages (every
 * replica.high.watermark.checkpoint.interval.ms, and at once when the log start moves), and
 * `replica.describe` answers sizes and cleaner numbers.
 */
export class ReplicaActor implements Actor<ReplicaMessages> {
  /** The open log: null before start() and after delete. */
  private log: Log | null = null;
  private epochs!: LeaderEpochCache;
  private highWatermark = 0;
  private checkpointTimer: TimerHandle | null = null;
  private retentionTimer: TimerHandle | null = null;
  private lastCheckpoint = '';
  private readonly purgatory = new ReplicaPurgatory();
  private readonly groupCommit: GroupCommit;
  private readonly cleaner: CleanerSchedule;
  private readonly producerStates = new ProducerStateTable();
  private readonly dir: string;
  private readonly storageProbe: StorageProbe;
  /** The topic's effective config, as of the last role (or update-config). */
  private config!: ReplicaLogConfig;
  /** The partition's role as the manager last published it; null before start (or when unassigned). */
  private role: PartitionRole | null = null;
  /** The leader side of the current epoch; null while following. */
  private leaderState: LeaderState | null = null;
  private readonly fetcher: FollowerFetcher;
  private isrExpirationTimer: TimerHandle | null = null;
  /** The LEO right after this start's own recovery (before any truncation a leader ordered); -1 before start. */
  private recoveredLogEndOffset = -1;
  /** partition.metadata was written without fsync at start (a new partition): {@link syncCreationFiles}. */
  private creationFilesUnsynced = false;
  /**
   * The planted bug `fencedLeaderAppends` only: the leader side of the epoch this replica led when a
   * newer epoch demoted it, so it goes on taking produces; null otherwise (always, in production).
   */
  private fencedLeader: LeaderState | null = null;

  constructor(private readonly args: ReplicaArgs) {
    this.dir = `${args.logDir}/${args.topic}-${args.partition}`;
    this.fetcher = new FollowerFetcher({
      brokerId: args.brokerId,
      brokerEpoch: args.brokerEpoch,
      settings: args.replication,
      fetchPosition: () => {
        const log = this.log;
        if (log === null || log.storageFailure !== null || this.groupCommit.isClosed) return null;
        return {
          fetchOffset: log.logEndOffset,
          // Pre-KIP-101 (planted bug): no epoch, so the leader never answers a diverging epoch.
          lastFetchedEpoch: plantedBugs.truncateToHighWatermark ? -1 : this.epochs.latestEpoch,
          fsyncedOffset: log.recoveryPoint,
        };
      },
      onFetchReply: (ctx, reply) => this.onFetchReply(ctx, reply),
    });
    this.groupCommit = new GroupCommit({
      flushAwaited: () =>
        !this.isLeader ||
        this.purgatory.produces.size > 0 ||
        this.purgatory.fetches.size > 0 ||
        this.purgatory.deferredReads.size > 0 ||
        this.purgatory.leaderHighWatermarks.size > 0,
      log: () => this.log,
      config: () => this.config,
      onFlushed: (ctx) => {
        this.updateHighWatermark(ctx);
        // Reads parked for the replica's own flush (its HW may wait on followers).
        this.purgatory.deferredReads.checkAndComplete(ctx.timers);
        const log = this.log;
        if (log !== null && !this.isLeader) this.fetcher.onFlushed(ctx, log.recoveryPoint);
      },
      onFlushFailed: (ctx, error) => this.storageProbe.onStorageFailure(ctx, error),
    });
    this.cleaner = new CleanerSchedule({
      log: () => this.log,
      config: () => this.config,
      highWatermark: () => this.highWatermark,
      where: { topic: args.topic, partition: args.partition },
      onStorageFailure: (ctx, error) => this.storageProbe.onStorageFailure(ctx, error),
    });
    this.storageProbe = new StorageProbe({
      log: () => this.log,
      highWatermark: () => this.highWatermark,
      isClosing: () => this.groupCommit.isClosed,
      replicated: () => (this.role?.replicas.length ?? 1) > 1,
      onOffline: (ctx, error) => this.goOffline(ctx, error),
      dir: this.dir,
      onRefusingWrites: (ctx) => {
        this.purgatory.produces.abortAll(ctx.timers, ErrorCode.KAFKA_STORAGE_ERROR);
        this.purgatory.deferredReads.abortAll(ctx.timers, ErrorCode.KAFKA_STORAGE_ERROR);
      },
      onHealed: (ctx, previousLogEndOffset) => {
        // Idempotent-producer state may name batches that were cut: rebuilt from what is left (Kafka's truncateTo).
        const log = this.openLog();
        const leo = log.logEndOffset;
        if (leo < previousLogEndOffset) rebuildProducerState(this.producerStates, log);
        // The leader-epoch checkpoint too, when a write of it failed (it may be what sent the log here).
        // So is the compacted marker.
        const epochsWritten = this.writeOrGoOffline(ctx, 'the partition files after healing', () => {
          if (leo < previousLogEndOffset) this.epochs.truncateFromEnd(leo);
          this.epochs.persistIfStale();
          if (this.config.compactEnabled && !log.isCompacted) log.enableCompaction();
        });
        if (!epochsWritten) return; // the log refuses writes again: the probe runs again
        this.updateHighWatermark(ctx);
        // A follower stopped fetching while its log refused writes.
        if (!this.isLeader) this.fetcher.resume(ctx);
      },
    });
  }

  async start(ctx: ActorContext): Promise<void> {
    const { role } = await ctx.request(
      this.args.manager,
      'replica-manager.replica-state',
      { topicId: this.args.topicId, partition: this.args.partition },
      MANAGER_REQUEST_TIMEOUT_MS,
    );
    if (role === null) {
      // Unassigned meanwhile: no log is opened; everything is answered NOT_LEADER_OR_FOLLOWER until the manager stops it.
      ctx.log.warn({ dir: this.dir }, 'replica started for a partition no longer assigned to this broker');
      return;
    }
    this.config = role.config;
    const { fs } = ctx;
    const existingTopicId = fs.exists(this.dir)
      ? (readPartitionMetadata(fs, `${this.dir}/partition.metadata`, ctx.log)?.topicId ?? null)
      : null;
    if (existingTopicId !== null && existingTopicId !== this.args.topicId) {
      ctx.log.warn(
        { dir: this.dir, existingTopicId, topicId: this.args.topicId },
        'partition directory belongs to a deleted topic of the same name; removing it',
      );
      // Its checkpoint entries go first, and are not read below (they are the former log's).
      await forgetCheckpointEntries(
        ctx,
        this.args.logDirActor,
        this.args.topic,
        this.args.partition,
        LOG_DIR_REQUEST_TIMEOUT_MS,
      );
      fs.rmrf(this.dir);
    }
    const checkpointed = (file: string) =>
      readOffsetCheckpointEntry(fs, `${this.args.logDir}/${file}`, this.args.topic, this.args.partition, ctx.log);
    const log = Log.open({
      fs,
      dir: this.dir,
      logger: ctx.log,
      clock: ctx.clock,
      recoveryPoint: checkpointed('recovery-point-offset-checkpoint') ?? 0,
      logStartOffset: checkpointed('log-start-offset-checkpoint'),
      config: this.logConfig(),
      compacted: this.config.compactEnabled,
      producerState: this.producerStates,
    });
    try {
      this.truncateAfterStorageFailure(ctx, log);
      // Its own recovery is done (a storage failure's cut back to its durable point included): what it kept.
      this.recoveredLogEndOffset = log.logEndOffset;
      // A log holding no records (every new partition) writes its partition.metadata and first leader
      // epoch without fsync: both are rebuilt from what the manager hands the replica if a crash loses
      // them (a missing partition.metadata is written again from the topic id; a missing checkpoint
      // is rebuilt from the batches' epochs, and an empty log's only entry is assigned again from the
      // role), and the first checkpoint tick (or a clean stop) fsyncs them. Saves four fsyncs per
      // partition created (issue 13 item 4); Kafka defers partition.metadata's fsync the same way.
      // (Deferring the checkpoint's write as well broke the long campaign's convergence after a
      // power loss that kept unsynced writes: see docs/design-notes.md.)
      const empty = log.logEndOffset === log.logStartOffset;
      if (existingTopicId === null) {
        writePartitionMetadata(
          fs,
          `${this.dir}/${PARTITION_METADATA_FILE}`,
          { topicId: this.args.topicId },
          { sync: !empty },
        );
        this.creationFilesUnsynced = empty;
      }
      // A missing checkpoint is rebuilt from the batches' epochs; entries past a recovered (cut) log go.
      this.epochs = LeaderEpochCache.load(fs, this.dir, () => log.epochStartOffsets());
      this.epochs.deferSync = empty;
      this.epochs.truncateFromEnd(log.logEndOffset);
      // A checkpoint written without fsync (a start's, or write.caching's unflushed log) can come back
      // older than batches that survived a power loss: an epoch missing below batches stamped with it
      // would send every follower's fetch back as diverging, for ever. Checked against the last batch
      // (cheap); when it is stamped with a newer epoch than the cache has there, the epochs of the
      // batches after the cache's latest entry are assigned as Kafka's LogSegment.recover does.
      this.repairEpochCache(ctx, log);
      // The newest snapshot at or below the recovered LEO plus a replay of the batch headers after it.
      const rebuilt = rebuildProducerState(this.producerStates, log);
      ctx.log.debug({ dir: this.dir, ...rebuilt, producers: this.producerStates.size }, 'producer state rebuilt');
      // Whatever survived in the page cache is made durable before it becomes visible: after a restart the
      // leader's HW covers its whole (recovered) log, as Kafka's leader with ISR = {self} would. A log
      // holding no records (every new partition) has nothing to make visible: its new files are synced
      // with its first appends' flush, which saves two fsyncs per partition created (issue 13).
      if (!empty) log.flush();
    } catch (error) {
      // A failed start (a full disk) runs no stop: the log's files are closed here, so the broker's
      // retries of the start (it keeps the partition offline meanwhile) leak no descriptors. The files
      // written so far are whole (atomic writes) and the next start reopens them as they are.
      log.close();
      // A replicated partition's replica restarted by its supervisor (its manager spawned it before)
      // that cannot start on its disk tells its manager, which reports it offline to the controller
      // so leadership moves (KIP-112) instead of the controller naming a replica that is not there.
      // A first start's failure reaches the manager as the spawn's error instead.
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && role.replicas.length > 1)
        ctx.send(this.args.manager, 'replica-manager.replica-offline', {
          topicId: this.args.topicId,
          partition: this.args.partition,
          reason: `${code}: ${(error as Error).message}`,
        });
      throw error;
    }
    this.log = log;
    // The checkpointed HW is a bound (never past the log): with followers, a new leader exposes no
    // more than that until the ISR's fetches show what it holds.
    const checkpointedHighWatermark = checkpointed('replication-offset-checkpoint') ?? 0;
    this.highWatermark = Math.max(log.logStartOffset, Math.min(checkpointedHighWatermark, log.logEndOffset));
    this.applyRole(ctx, role);
    // Only the start's own writes may skip their fsync (a lost one is rebuilt at the next start, above):
    // every later epoch is durable before it is used.
    this.epochs.deferSync = false;
    this.updateHighWatermark(ctx);
    this.checkpointTimer = ctx.timers.setTimeout(() => this.checkpointTick(ctx), this.args.checkpointIntervalMs);
    this.retentionTimer = ctx.timers.setTimeout(() => this.retentionTick(ctx), this.args.retentionCheckIntervalMs);
    this.groupCommit.start(ctx);
    this.cleaner.schedule(ctx);
    // Per partition, so at debug: the broker logs one line for the whole start.
    ctx.log.debug(
      {
        dir: this.dir,
        logStartOffset: log.logStartOffset,
        logEndOffset: log.logEndOffset,
        leader: role.leader,
        leaderEpoch: role.leaderEpoch,
      },
      role.leader === this.args.brokerId ? 'replica started as leader' : 'replica started as follower',
    );
  }

  receive(envelope: EnvelopeOf<ReplicaMessages>, ctx: ActorContext): void | Promise<void> {
    // The runtime delivers any kind sent to this id: `unknown` keeps a handle for the default branch.
    const unknown: Envelope = envelope;
    if (this.log === null && envelope.type !== 'replica.delete') return this.answerWithoutLog(envelope, ctx);
    if (this.storageProbe.isOffline && OFFLINE_REFUSED.has(envelope.type))
      return this.answerWithoutLog(envelope, ctx, ErrorCode.KAFKA_STORAGE_ERROR);
    switch (envelope.type) {
      case 'replica.produce':
        return this.produce(envelope, ctx);
      case 'replica.fetch':
        return this.fetch(envelope, ctx);
      case 'replica.watch':
        return this.watch(envelope, ctx);
      case 'replica.list-offsets':
        return this.listOffsets(envelope, ctx);
      case 'replica.delete':
        return this.delete(envelope, ctx);
      case 'replica.update-config':
        return this.updateConfig(envelope, ctx);
      case 'replica.delete-records':
        return this.deleteRecords(envelope, ctx);
      case 'replica.offset-for-epoch':
        return this.offsetForEpoch(envelope, ctx);
      case 'replica.update-role':
        this.applyRole(ctx, envelope.body);
        ctx.reply(envelope, {});
        return;
      case 'replica.follower-flushed':
        return this.followerFlushed(envelope, ctx);
      case 'replica.describe':
        return this.describe(envelope, ctx);
      case 'replica.await-leader-hw':
        return this.awaitLeaderHighWatermark(envelope, ctx);
      default:
        ctx.log.warn({ type: unknown.type, from: unknown.from }, 'replica ignores unknown message type');
    }
  }

  async stop(ctx: ActorContext): Promise<void> {
    const log = this.log;
    if (log === null) return;
    this.groupCommit.close(ctx);
    this.fetcher.stop(ctx);
    await log.whenFlushed();
    if (this.log !== log) return; // deleted meanwhile
    try {
      if (log.storageFailure === null) log.flush();
    } catch (error) {
      if (!(error instanceof KafkaStorageError)) throw error;
    }
    if (log.storageFailure === null) this.syncCreationFiles(ctx);
    if (log.storageFailure !== null)
      ctx.log.warn(
        { dir: this.dir, error: log.storageFailure.message },
        'stopping with a storage error: recovery on the next start re-checks the log from its recovery point',
      );
    else {
      // Kafka's clean-shutdown snapshot: the next start replays nothing. Without it, it replays more.
      try {
        log.takeProducerSnapshot();
      } catch (error) {
        ctx.log.warn({ dir: this.dir, error: String(error) }, 'producer-state snapshot not written on stop');
      }
    }
    this.updateHighWatermark(ctx);
    this.purgatory.abortAll(ctx.timers, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    this.clearTimers(ctx);
    try {
      await ctx.request(this.args.logDirActor, 'log-dir.checkpoint', this.checkpointBody(), LOG_DIR_REQUEST_TIMEOUT_MS);
    } catch (error) {
      ctx.log.warn({ error: String(error) }, 'final checkpoint not written; recovery will scan from the previous one');
    }
    this.openLog().close();
  }

  /**
   * Makes the leader-epoch cache agree with the log's batches at start (see start): when the last
   * batch's partitionLeaderEpoch is newer than the cache's epoch at its offset, assigns each newer
   * epoch found in the batch headers from the start of the cache's latest entry on (Kafka's
   * LogSegment.recover: `leaderEpoch > latestEpoch` assigns; older entries are kept). When it is
   * older (the cache holds an epoch the log does not support), rebuilds the cache from every batch
   * header. Throws a KafkaStorageError when the checkpoint cannot be written (the start fails).
   */
  private repairEpochCache(ctx: ActorContext, log: Log): void {
    const lastBatch = log.lastBatchHeader();
    if (lastBatch === null || lastBatch.partitionLeaderEpoch < 0) return;
    const cached = this.epochs.epochForOffset(lastBatch.baseOffset);
    if (cached === lastBatch.partitionLeaderEpoch) return;
    const before = this.epochs.list();
    if (cached === null || cached < lastBatch.partitionLeaderEpoch) {
      const from = this.epochs.startOffsetOf(this.epochs.latestEpoch) ?? log.logStartOffset;
      log.forEachBatchHeader(from, (h) => {
        if (h.partitionLeaderEpoch > this.epochs.latestEpoch) this.epochs.assign(h.partitionLeaderEpoch, h.baseOffset);
      });
    } else {
      this.epochs.rebuild(log.epochStartOffsets());
    }
    ctx.log.warn(
      { dir: this.dir, before, after: this.epochs.list() },
      'leader-epoch checkpoint behind the log; epochs assigned from the batches',
    );
  }

  /**
   * fsyncs what the start wrote without fsync (a new partition's partition.metadata and leader-epoch
   * checkpoint) and the partition directory; a no-op once done. Runs at each checkpoint tick and at
   * stop. A refusal is only warned (the next tick tries again): both files are rebuilt at the next
   * start if lost (see start), so neither the log nor the stop fails over them.
   */
  private syncCreationFiles(ctx: ActorContext): void {
    if (!this.creationFilesUnsynced && !this.epochs.unsynced) return;
    try {
      syncFiles(ctx.fs, this.dir, [PARTITION_METADATA_FILE, LEADER_EPOCH_CHECKPOINT_FILE]);
    } catch (error) {
      ctx.log.warn(
        { dir: this.dir, error: String(error) },
        'new partition files not synced (rebuilt at the next start if lost)',
      );
      return;
    }
    this.creationFilesUnsynced = false;
    this.epochs.markSynced();
  }

  /**
   * The open log. Asserts there is one: every message but `replica.delete` needs it, and none should come
   * before start() or after delete.
   */
  private openLog(): Log {
    assert.ok(this.log !== null, `replica ${this.dir}: no open log (before start or after delete)`);
    return this.log;
  }

  private describe(envelope: ReplicaEnvelope<'replica.describe'>, ctx: ActorContext): void {
    const log = this.openLog();
    ctx.reply(envelope, {
      sizeBytes: log.sizeBytes,
      logStartOffset: log.logStartOffset,
      logEndOffset: log.logEndOffset,
      highWatermark: this.highWatermark,
      fsyncedOffset: log.recoveryPoint,
      firstDirtyOffset: log.firstDirtyOffset,
      cleaner: this.cleaner.describe(),
      recovery: log.loadSummary,
      recoveredLogEndOffset: this.recoveredLogEndOffset,
    });
  }

  private produce(envelope: ReplicaEnvelope<'replica.produce'>, ctx: ActorContext): void {
    const { records, acks, timeoutMs } = envelope.body;
    const notLeader = this.leaderError(undefined);
    // A demoted leader takes produces on only under the planted bug `fencedLeaderAppends`.
    if (notLeader !== null && this.fencedLeader === null) {
      ctx.reply(
        envelope,
        this.produceReply(
          notLeader,
          `This replica of ${this.args.topic}-${this.args.partition} is not the leader`,
          INVALID_OFFSET,
        ),
      );
      return;
    }
    const role = this.role!;
    const rejection = validateProducedBatch(
      records,
      this.config.maxMessageBytes,
      this.config.maxDecompressedMessageBytes,
    );
    if (rejection) {
      ctx.log.debug({ topic: this.args.topic, partition: this.args.partition, ...rejection }, 'produce rejected');
      ctx.reply(envelope, {
        ...this.produceReply(rejection.errorCode, rejection.errorMessage, INVALID_OFFSET),
        recordErrors: rejection.recordErrors,
      });
      return;
    }
    const { config } = this;
    if (acks === -1 && role.isr.length < config.minInsyncReplicas) {
      ctx.reply(
        envelope,
        this.produceReply(
          ErrorCode.NOT_ENOUGH_REPLICAS,
          `The size of the current ISR ${role.isr.length} is insufficient to satisfy the min.isr requirement of ${config.minInsyncReplicas}`,
          INVALID_OFFSET,
        ),
      );
      return;
    }
    if (config.compactEnabled) {
      const keyless = keylessRecordRejection(records!, `${this.args.topic}-${this.args.partition}`);
      if (keyless) {
        ctx.reply(envelope, {
          ...this.produceReply(keyless.errorCode, keyless.errorMessage, INVALID_OFFSET),
          recordErrors: keyless.recordErrors,
        });
        return;
      }
    }
    // A topic compression.type other than `producer` rewrites batches of other codecs (Kafka's rule).
    const stored = toTopicCompression(records!, config);
    if (!Buffer.isBuffer(stored)) {
      ctx.reply(envelope, this.produceReply(stored.errorCode, stored.errorMessage, INVALID_OFFSET));
      return;
    }
    const batch = stored;
    const nowMs = ctx.clock.nowMs();
    let logAppendTimeMs = NO_TIMESTAMP;
    if (config.messageTimestampType === 'LogAppendTime') {
      stampLogAppendTime(batch, nowMs);
      logAppendTimeMs = nowMs;
    } else {
      const invalid = createTimeOutOfBounds(
        batch,
        nowMs,
        config.messageTimestampBeforeMaxMs,
        config.messageTimestampAfterMaxMs,
      );
      if (invalid) {
        ctx.reply(envelope, {
          ...this.produceReply(invalid.errorCode, invalid.errorMessage, INVALID_OFFSET),
          recordErrors: invalid.recordErrors,
        });
        return;
      }
    }
    // Refused before the duplicate check too: a retry waiting for the HW over bytes the storage probe
    // may cut would be acknowledged wrongly once later appends pass its offsets.
    if (this.openLog().storageFailure !== null) {
      ctx.reply(envelope, this.storageErrorReply());
      return;
    }
    const producerId = Number(batch.readBigInt64BE(L.PRODUCER_ID));
    const producerEpoch = batch.readInt16BE(L.PRODUCER_EPOCH);
    const firstSeq = batch.readInt32BE(L.BASE_SEQUENCE);
    const lastSeq = lastSequenceOf(firstSeq, batch.readInt32BE(L.LAST_OFFSET_DELTA));
    if (producerId >= 0) {
      const check = this.producerStates.check(producerId, producerEpoch, firstSeq, lastSeq);
      if (check.kind === 'error') {
        ctx.reply(envelope, this.produceReply(check.errorCode, check.errorMessage, INVALID_OFFSET));
        return;
      }
      if (check.kind === 'duplicate') {
        // A retry of a batch already in the log: answer with its original offset, and with its
        // max timestamp as logAppendTimeMs (Kafka answers from its cached BatchMetadata).
        this.replyWhenCovered(
          envelope,
          ctx,
          acks,
          timeoutMs,
          check.baseOffset + batch.readInt32BE(L.LAST_OFFSET_DELTA),
          { ...this.produceReply(ErrorCode.NONE, null, check.baseOffset), logAppendTimeMs: check.maxTimestampMs },
        );
        return;
      }
    }
    const log = this.openLog();
    const appended = this.storageProbe.appendOrRefuse(
      ctx,
      log,
      batch,
      this.fencedLeader === null ? role.leaderEpoch : this.fencedLeader.leaderEpoch,
    );
    if (appended === null) {
      ctx.reply(envelope, this.storageErrorReply());
      return;
    }
    const { baseOffset, lastOffset } = appended;
    // The batch now carries its offsets (written in place by the append).
    this.producerStates.updateFromBatch(batch);
    const reply = { ...this.produceReply(ErrorCode.NONE, null, baseOffset), logAppendTimeMs };
    this.groupCommit.appended(ctx, log, recordsCountOf(batch));
    if (log.storageFailure !== null) {
      // Its flush.messages fsync failed: the batch is past the durable point the probe cuts back to.
      ctx.reply(envelope, this.storageErrorReply());
      return;
    }
    this.updateHighWatermark(ctx);
    // Followers parked at the old LEO have bytes to fetch now.
    this.purgatory.followerFetches.checkAndComplete(ctx.timers);
    this.replyWhenCovered(envelope, ctx, acks, timeoutMs, lastOffset, reply);
  }

  /** KAFKA_STORAGE_ERROR with the errno, for a produce the disk or the offline log refused. */
  private storageErrorReply(): ProduceReply {
    const code = this.storageProbe.errno(this.openLog());
    return this.produceReply(
      ErrorCode.KAFKA_STORAGE_ERROR,
      `Disk error when trying to access log file on the disk: ${code}`,
      INVALID_OFFSET,
    );
  }

  /** acks=0/1 answer now; acks=all waits in the purgatory (DelayedProduce) until the HW passes `lastOffset`. */
  private replyWhenCovered(
    envelope: ReplicaEnvelope<'replica.produce'>,
    ctx: ActorContext,
    acks: number,
    timeoutMs: number,
    lastOffset: number,
    reply: ProduceReply,
  ): void {
    // The planted bug `ackBeforeHighWatermark`: acks=all answered once the batch is in this log (it is now).
    if (acks !== -1 || plantedBugs.ackBeforeHighWatermark) {
      ctx.reply(envelope, reply);
      return;
    }
    const produce = new DelayedProduce(
      ctx,
      envelope,
      reply,
      () => this.highWatermark > lastOffset,
      () => {
        // Kafka's checkEnoughReplicasReachOffset: the ISR (maximal, while a change is in flight) shrank below min.insync.replicas.
        const isr = this.maximalIsr();
        return isr.length < this.config.minInsyncReplicas
          ? {
              errorCode: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
              errorMessage: `The size of the current ISR ${isr.length} is insufficient to satisfy the min.isr requirement of ${this.config.minInsyncReplicas}`,
            }
          : null;
      },
    );
    if (!this.purgatory.produces.tryCompleteElseWatch(produce, ctx.timers, timeoutMs)) this.groupCommit.expedite(ctx);
  }

  private produceReply(errorCode: number, errorMessage: string | null, baseOffset: number): ProduceReply {
    // Kafka answers these without consulting the log (LogAppendInfo.UNKNOWN_LOG_APPEND_INFO).
    const withoutLog = errorCode === ErrorCode.MESSAGE_TOO_LARGE || errorCode === ErrorCode.CORRUPT_MESSAGE;
    return {
      errorCode,
      errorMessage,
      baseOffset,
      logAppendTimeMs: NO_TIMESTAMP,
      logStartOffset: withoutLog ? INVALID_OFFSET : this.openLog().logStartOffset,
      recordErrors: [],
    };
  }

  private fetch(envelope: ReplicaEnvelope<'replica.fetch'>, ctx: ActorContext, mayDefer = true): void {
    const { fetchOffset, maxBytes, minOneBatch, currentLeaderEpoch, follower } = envelope.body;
    const refused = this.leaderError(currentLeaderEpoch);
    if (refused !== null) {
      ctx.reply(envelope, fetchErrorReply(refused));
      return;
    }
    if (follower !== undefined) return this.followerFetch(envelope, ctx);
    const log = this.openLog();
    const base = {
      highWatermark: this.highWatermark,
      lastStableOffset: this.highWatermark,
      logStartOffset: log.logStartOffset,
    };
    // Kafka: below the log start or past the LEO is out of range; between the HW and the LEO is empty.
    if (fetchOffset < log.logStartOffset || fetchOffset > log.logEndOffset) {
      // Kafka's error partition response carries no offsets: HW, LSO and log start are -1.
      ctx.reply(envelope, {
        highWatermark: INVALID_HIGH_WATERMARK,
        lastStableOffset: INVALID_LAST_STABLE_OFFSET,
        logStartOffset: INVALID_LOG_START_OFFSET,
        errorCode: ErrorCode.OFFSET_OUT_OF_RANGE,
        records: null,
      } satisfies FetchReply);
      return;
    }
    if (fetchOffset >= this.highWatermark) {
      if (
        mayDefer &&
        fetchOffset < log.logEndOffset &&
        this.deferUntilFlushed(ctx, () => this.fetch(envelope, ctx, false))
      )
        return;
      ctx.reply(envelope, { ...base, errorCode: ErrorCode.NONE, records: null } satisfies FetchReply);
      return;
    }
    if (envelope.body.segmentRanges === true) {
      const ranged = log.readRanges(fetchOffset, maxBytes, this.highWatermark, minOneBatch);
      if (ranged !== null) {
        assert.equal(ranged.kind, 'ok', 'an offset between the log start and the HW is readable');
        ctx.reply(envelope, {
          ...base,
          errorCode: ErrorCode.NONE,
          records: null,
          ranges: ranged.kind === 'ok' ? ranged.ranges : [],
        } satisfies FetchReply);
        return;
      }
    }
    const result = log.read(fetchOffset, maxBytes, this.highWatermark, minOneBatch, allocateWithHeadroom);
    assert.equal(result.kind, 'ok', 'an offset between the log start and the HW is readable');
    const records = result.kind === 'ok' ? result.records : null;
    const reply = (): void => ctx.reply(envelope, { ...base, errorCode: ErrorCode.NONE, records } satisfies FetchReply);
    // The read's own buffer is handed over with the reply written in front (no copy); nothing here keeps it.
    if (records !== null) whileLent(records, reply);
    else reply();
  }

  /**
   * `replica.await-leader-hw`: answered once this replica leads and its HW reached the start offset
   * of its leader epoch (everything the previous leader may have acknowledged is then below it), at
   * maxWaitMs with REQUEST_TIMED_OUT, or NOT_LEADER_OR_FOLLOWER when it does not lead or loses
   * leadership first (makeFollower aborts the wait). A new leader's HW stays where it was until its
   * ISR has fetched what it holds (updateHighWatermark), so this may take a fetch round or two.
   */
  private awaitLeaderHighWatermark(envelope: ReplicaEnvelope<'replica.await-leader-hw'>, ctx: ActorContext): void {
    const answer = (errorCode: number): void => {
      const leader = this.leaderState;
      if (leader === null || (errorCode !== ErrorCode.NONE && errorCode !== ErrorCode.REQUEST_TIMED_OUT)) {
        ctx.reply(envelope, {
          errorCode: leader === null ? ErrorCode.NOT_LEADER_OR_FOLLOWER : errorCode,
          leaderEpoch: -1,
          leaderEpochStartOffset: INVALID_OFFSET,
          highWatermark: INVALID_OFFSET,
        });
        return;
      }
      ctx.reply(envelope, {
        errorCode,
        leaderEpoch: leader.leaderEpoch,
        leaderEpochStartOffset: leader.leaderEpochStartOffset,
        highWatermark: this.highWatermark,
      });
    };
    const wait = new DelayedLeaderHighWatermark(answer, () => {
      const leader = this.leaderState;
      return leader !== null && this.highWatermark >= leader.leaderEpochStartOffset;
    });
    if (!this.isLeader) {
      answer(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      return;
    }
    if (!this.purgatory.leaderHighWatermarks.tryCompleteElseWatch(wait, ctx.timers, envelope.body.maxWaitMs))
      this.groupCommit.expedite(ctx);
  }

  /**
   * A fetch long poll (DelayedFetch): ready once there is data below the HW at `fetchOffset`, or
   * `fetchOffset` fell below the log start (the fetch that follows answers OFFSET_OUT_OF_RANGE).
   */
  private watch(envelope: ReplicaEnvelope<'replica.watch'>, ctx: ActorContext): void {
    const { fetchOffset, maxWaitMs } = envelope.body;
    const log = this.openLog();
    const fetch = new DelayedFetch(
      ctx,
      envelope,
      // Not the leader (any more): ready, and the fetch that follows gets NOT_LEADER_OR_FOLLOWER.
      () => !this.isLeader || this.highWatermark > fetchOffset || fetchOffset < log.logStartOffset,
    );
    if (!this.purgatory.fetches.tryCompleteElseWatch(fetch, ctx.timers, maxWaitMs)) this.groupCommit.expedite(ctx);
  }

  private listOffsets(envelope: ReplicaEnvelope<'replica.list-offsets'>, ctx: ActorContext, mayDefer = true): void {
    const { timestamp, toLogEnd, currentLeaderEpoch } = envelope.body;
    const refused = this.leaderError(currentLeaderEpoch);
    if (refused !== null) {
      ctx.reply(envelope, {
        errorCode: refused,
        offset: UNKNOWN_OFFSET,
        timestamp: UNKNOWN_TIMESTAMP,
        leaderEpoch: NO_PARTITION_LEADER_EPOCH,
      } satisfies ListOffsetReply);
      return;
    }
    const leaderEpoch = this.role!.leaderEpoch;
    if (
      mayDefer &&
      timestamp !== EARLIEST_TIMESTAMP &&
      this.deferUntilFlushed(ctx, () => this.listOffsets(envelope, ctx, false))
    )
      return;
    const log = this.openLog();
    const lastFetchableOffset = toLogEnd === true ? log.logEndOffset : this.highWatermark;
    if (timestamp === EARLIEST_TIMESTAMP) {
      ctx.reply(envelope, {
        errorCode: ErrorCode.NONE,
        offset: log.logStartOffset,
        timestamp: UNKNOWN_TIMESTAMP,
        // Kafka: the epoch of the entry covering the log start.
        leaderEpoch: this.epochs.epochForOffset(log.logStartOffset) ?? leaderEpoch,
      } satisfies ListOffsetReply);
    } else if (timestamp === LATEST_TIMESTAMP) {
      ctx.reply(envelope, {
        errorCode: ErrorCode.NONE,
        offset: lastFetchableOffset,
        timestamp: UNKNOWN_TIMESTAMP,
        leaderEpoch,
      } satisfies ListOffsetReply);
    } else if (timestamp === MAX_TIMESTAMP || timestamp >= 0) {
      // MAX_TIMESTAMP: the record with the largest timestamp (KIP-734); >= 0: the first record at or after it (KIP-79).
      const found = timestamp === MAX_TIMESTAMP ? log.maxTimestampOffset() : log.offsetForTimestamp(timestamp);
      ctx.reply(
        envelope,
        found === null || found.offset >= lastFetchableOffset
          ? {
              errorCode: ErrorCode.NONE,
              offset: UNKNOWN_OFFSET,
              timestamp: UNKNOWN_TIMESTAMP,
              leaderEpoch: NO_PARTITION_LEADER_EPOCH,
            }
          : ({
              errorCode: ErrorCode.NONE,
              offset: found.offset,
              timestamp: found.timestamp,
              // KIP-320: the epoch of the batch found, not the current one.
              leaderEpoch:
                found.leaderEpoch >= 0 ? found.leaderEpoch : (this.epochs.epochForOffset(found.offset) ?? leaderEpoch),
            } satisfies ListOffsetReply),
      );
    } else {
      ctx.reply(envelope, {
        errorCode: ErrorCode.INVALID_REQUEST,
        offset: UNKNOWN_OFFSET,
        timestamp: UNKNOWN_TIMESTAMP,
        leaderEpoch: NO_PARTITION_LEADER_EPOCH,
      } satisfies ListOffsetReply);
    }
  }

  private async delete(envelope: ReplicaEnvelope<'replica.delete'>, ctx: ActorContext): Promise<void> {
    this.groupCommit.close(ctx);
    this.fetcher.stop(ctx);
    this.purgatory.abortAll(ctx.timers, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    this.clearTimers(ctx);
    await this.log?.whenFlushed();
    const log = this.log;
    if (log === null) {
      ctx.reply(envelope, {}); // a duplicate delete: the first one removed the log
      return;
    }
    this.purgatory.abortAll(ctx.timers, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION); // produced while the flush finished
    log.delete();
    this.log = null;
    this.removeStorageFailureMarker(ctx);
    await forgetCheckpointEntries(
      ctx,
      this.args.logDirActor,
      this.args.topic,
      this.args.partition,
      LOG_DIR_REQUEST_TIMEOUT_MS,
    );
    ctx.reply(envelope, {});
    ctx.exit();
  }

  private updateConfig(envelope: ReplicaEnvelope<'replica.update-config'>, ctx: ActorContext): void {
    this.applyConfig(ctx, envelope.body.config);
    ctx.reply(envelope, {});
  }

  /** The topic's configs changed (update-config, or any update-role: the config always applies). */
  private applyConfig(ctx: ActorContext, config: ReplicaLogConfig): void {
    if (JSON.stringify(config) === JSON.stringify(this.config)) return;
    const flushMsChanged = config.flushMs !== this.config.flushMs;
    this.config = config;
    const log = this.openLog();
    log.updateConfig(this.logConfig());
    // The compacted marker is a write on the role-change path too; the cleaner leaves an unmarked log alone.
    if (config.compactEnabled && !log.isCompacted)
      this.writeOrGoOffline(ctx, 'marking the log compacted', () => log.enableCompaction());
    this.cleaner.schedule(ctx);
    if (flushMsChanged) this.groupCommit.restartTimedFlush(ctx);
    // write.caching may have turned on: the HW can now count the page cache; or off: flush the rest.
    this.updateHighWatermark(ctx);
    if (!config.writeCaching && log.hasUnflushed) this.groupCommit.schedule(ctx);
  }

  private logConfig() {
    const { segmentBytes, indexIntervalBytes, segmentMs, segmentIndexBytes } = this.config;
    return { segmentBytes, indexIntervalBytes, segmentMs, segmentIndexBytes };
  }

  private deleteRecords(envelope: ReplicaEnvelope<'replica.delete-records'>, ctx: ActorContext, mayDefer = true): void {
    const refused = this.leaderError(undefined);
    if (refused !== null) {
      ctx.reply(envelope, { errorCode: refused, lowWatermark: INVALID_LOW_WATERMARK });
      return;
    }
    if (mayDefer && this.deferUntilFlushed(ctx, () => this.deleteRecords(envelope, ctx, false))) return;
    const requested = envelope.body.offset;
    const offset = requested === DELETE_RECORDS_HIGH_WATERMARK ? this.highWatermark : requested;
    if (offset < 0 || offset > this.highWatermark) {
      ctx.reply(envelope, { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: INVALID_LOW_WATERMARK });
      return;
    }
    const log = this.openLog();
    let lowWatermark = log.logStartOffset;
    try {
      if (offset > log.logStartOffset) lowWatermark = log.deleteRecordsBefore(offset);
    } catch (error) {
      if (!(error instanceof KafkaStorageError)) throw error;
      // The log start offset did not move (Log.deleteRecordsBefore); the client may retry.
      ctx.log.warn({ dir: this.dir, offset, error: error.message }, 'DeleteRecords failed on the disk');
      if (log.storageFailure !== null) this.storageProbe.onStorageFailure(ctx, log.storageFailure);
      ctx.reply(envelope, { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, lowWatermark: INVALID_LOW_WATERMARK });
      return;
    }
    this.checkpointSoon(ctx);
    ctx.reply(envelope, { errorCode: ErrorCode.NONE, lowWatermark });
  }

  /** Retention (log.retention.check.interval.ms): deletes whole segments past retention.ms / retention.bytes. */
  private retentionTick(ctx: ActorContext): void {
    const log = this.log;
    if (log === null) return;
    const { config } = this;
    if (config.deleteEnabled && (config.retentionMs >= 0 || config.retentionBytes >= 0)) {
      const before = log.logStartOffset;
      let result = { deletedSegments: 0, logStartOffset: before };
      try {
        result = log.deleteRetentionSegments(
          ctx.clock.nowMs(),
          config.retentionMs,
          config.retentionBytes,
          this.highWatermark,
        );
      } catch (error) {
        if (!(error instanceof KafkaStorageError)) throw error;
        ctx.log.warn(
          { dir: this.dir, error: error.message },
          'retention failed on the disk; retrying at the next check',
        );
        if (log.storageFailure !== null) this.storageProbe.onStorageFailure(ctx, log.storageFailure);
      }
      if (result.deletedSegments > 0) {
        ctx.log.info(
          {
            topic: this.args.topic,
            partition: this.args.partition,
            deletedSegments: result.deletedSegments,
            logStartOffset: result.logStartOffset,
            previousLogStartOffset: before,
          },
          'retention deleted segments',
        );
        this.checkpointSoon(ctx);
      }
    }
    this.retentionTimer = ctx.timers.setTimeout(() => this.retentionTick(ctx), this.args.retentionCheckIntervalMs);
  }

  /** Sends the checkpoint now (log start offset moved), so a restart does not serve deleted records. */
  private checkpointSoon(ctx: ActorContext): void {
    const body = this.checkpointBody();
    this.lastCheckpoint = `${body.recoveryPoint}/${body.highWatermark}/${body.logStartOffset}`;
    ctx.send(this.args.logDirActor, 'log-dir.checkpoint', body);
  }

  /** Stops the checkpoint, retention, cleaner and storage probe timers (group commit's flush.ms timer stops with it). */
  private clearTimers(ctx: ActorContext): void {
    for (const timer of [this.checkpointTimer, this.retentionTimer, this.isrExpirationTimer])
      if (timer) ctx.timers.clearTimeout(timer);
    this.isrExpirationTimer = null;
    this.cleaner.cancel(ctx);
    this.storageProbe.cancel(ctx);
    this.checkpointTimer = null;
    this.retentionTimer = null;
  }

  /**
   * Handles a read once the HW covers the LEO as of now, when appends are still being fsynced
   * (write.caching=false): it then sees them, as it would have had the fsync blocked the actor. `read`
   * handles the request without deferring. Returns false (the caller handles it now) when no flush will
   * come: the replica is closing.
   */
  private deferUntilFlushed(ctx: ActorContext, read: () => void): boolean {
    if (this.groupCommit.isClosed || this.openLog().storageFailure !== null) return false;
    const log = this.openLog();
    const leo = log.logEndOffset;
    // Its own flush only: with followers the HW may wait on their fetches, which no read waits for.
    const deferred = new DeferredRead(read, () => this.highWatermark >= leo || this.ownCountedOffset(log) >= leo);
    if (!this.purgatory.deferredReads.tryCompleteElseWatch(deferred, ctx.timers, null)) {
      this.groupCommit.schedule(ctx); // normally one is already scheduled, lingering or in flight
      this.groupCommit.expedite(ctx);
    }
    return true;
  }

  /**
   * Recomputes the high watermark (Kafka's Partition.maybeIncrementLeaderHW): as leader, HW = min over
   * the maximal ISR (the larger set while an AlterPartition is in flight) of each member's counted
   * end offset: under write.caching=true its LEO, else its fsynced offset (the leader's own: its
   * recovery point; a follower's: what its fetches and `replica.follower-flushed` reported). A
   * follower that has not fetched in this epoch counts nothing, so a new leader's HW stays where it
   * was until the ISR shows what it holds. A follower's HW comes from its fetch replies
   * ({@link onFetchReply}), not from here. It is called when what it reads may have moved: start, an
   * append, a completed flush, a config change, a role or ISR change, a follower's fetch or flush
   * note, stop. When the HW moves, the purgatory completes what it now covers.
   *
   * Invariants (asserted): the HW never decreases here (only a follower's truncation lowers it),
   * HW <= LEO, HW >= log start offset (DeleteRecords and retention never pass the HW).
   */
  private updateHighWatermark(ctx: ActorContext): void {
    const log = this.openLog();
    const previous = this.highWatermark;
    const leader = this.leaderState;
    if (leader !== null && this.role !== null) {
      let counted = this.ownCountedOffset(log);
      assert.ok(counted <= log.logEndOffset, `counted end offset ${counted} passes the LEO ${log.logEndOffset}`);
      for (const id of leader.maximalIsr(this.role.isr)) {
        if (id === this.args.brokerId) continue;
        counted = Math.min(counted, leader.countedOffset(id, this.config.writeCaching));
      }
      if (counted > previous) this.highWatermark = counted;
    }
    assert.ok(this.highWatermark >= previous, `HW decreased from ${previous} to ${this.highWatermark}`);
    this.assertHighWatermarkBounds(log);
    if (this.highWatermark > previous) this.purgatory.checkAndComplete(ctx.timers);
  }

  private assertHighWatermarkBounds(log: Log): void {
    assert.ok(this.highWatermark <= log.logEndOffset, `HW ${this.highWatermark} passes the LEO ${log.logEndOffset}`);
    assert.ok(
      this.highWatermark >= log.logStartOffset,
      `HW ${this.highWatermark} below the log start offset ${log.logStartOffset}`,
    );
  }

  /** What this replica counts toward the HW: its LEO under write.caching, else its recovery point (fsynced). */
  private ownCountedOffset(log: Log): number {
    return this.config.writeCaching ? log.logEndOffset : log.recoveryPoint;
  }

  // ---- role ---------------------------------------------------------------------------------

  /** This replica leads its partition (by the role it holds). */
  private get isLeader(): boolean {
    return this.leaderState !== null;
  }

  /** The ISR the HW and the min.insync.replicas checks read: the maximal one while an ISR change is in flight. */
  private maximalIsr(): number[] {
    const role = this.role;
    if (role === null) return [];
    return this.leaderState?.maximalIsr(role.isr) ?? [...role.isr];
  }

  /**
   * Kafka's Partition.localLogWithEpochOrThrow for a request only the leader serves: the KIP-320 check
   * of `currentLeaderEpoch` (undefined or -1: none) first, then leadership. Returns the error code, or
   * null when this replica serves it.
   */
  private leaderError(currentLeaderEpoch: number | undefined): number | null {
    const role = this.role;
    if (role === null) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    if (currentLeaderEpoch !== undefined && currentLeaderEpoch >= 0) {
      if (currentLeaderEpoch < role.leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
      if (currentLeaderEpoch > role.leaderEpoch) return ErrorCode.UNKNOWN_LEADER_EPOCH;
    }
    return this.isLeader ? null : ErrorCode.NOT_LEADER_OR_FOLLOWER;
  }

  /**
   * A role from the manager (at start, pushed, or in an AlterPartition answer). The config always
   * applies; the rest only when (leaderEpoch, partitionEpoch) is newer than the one held. A new
   * leader epoch (or leadership gained or lost) makes the replica leader or follower; a newer
   * partition epoch in the same leader epoch changes the ISR and assigned replicas.
   */
  private applyRole(ctx: ActorContext, role: PartitionRole): void {
    this.applyConfig(ctx, role.config);
    const current = this.role;
    if (
      current !== null &&
      !(
        role.leaderEpoch > current.leaderEpoch ||
        (role.leaderEpoch === current.leaderEpoch && role.partitionEpoch > current.partitionEpoch)
      )
    )
      return;
    const wasLeader = this.isLeader;
    const epochChanged = current === null || role.leaderEpoch !== current.leaderEpoch || role.leader !== current.leader;
    this.role = role;
    // Offline after a storage error: neither leads nor fetches until its broker restarts.
    if (this.storageProbe.isOffline) return;
    const leads = role.leader === this.args.brokerId;
    if (leads && (epochChanged || !wasLeader)) this.makeLeader(ctx);
    else if (leads) {
      this.leaderState!.resetFor(role.replicas, role.isr, ctx.clock.nowMs());
      this.updateHighWatermark(ctx);
    } else if (epochChanged || wasLeader) this.makeFollower(ctx, wasLeader);
  }

  /**
   * Kafka's Partition.makeLeader: the fetch loop stops, the new epoch starts at the LEO in the epoch
   * cache, followers' states start afresh, and the ISR expiration check runs every
   * replica.lag.time.max.ms / 2. Produces parked in an older epoch of this leader keep waiting.
   */
  private makeLeader(ctx: ActorContext): void {
    const role = this.role!;
    const log = this.openLog();
    this.fetcher.stop(ctx);
    if (role.leaderEpoch > this.epochs.latestEpoch) {
      const assigned = this.writeOrGoOffline(ctx, `assigning leader epoch ${role.leaderEpoch}`, () =>
        this.epochs.assign(role.leaderEpoch, log.logEndOffset),
      );
      // Offline (replicated): another ISR member leads. With one replica it leads a log refusing writes until the probe heals it.
      if (!assigned && this.storageProbe.isOffline) return;
    } else if (role.leaderEpoch < this.epochs.latestEpoch)
      ctx.log.warn(
        { dir: this.dir, leaderEpoch: role.leaderEpoch, latestEpoch: this.epochs.latestEpoch },
        'leading in an epoch older than the log holds',
      );
    const leader = new LeaderState(this.args.brokerId, role.leaderEpoch, log.logEndOffset);
    leader.resetFor(role.replicas, role.isr, ctx.clock.nowMs());
    this.leaderState = leader;
    this.fencedLeader = null;
    this.armIsrExpiration(ctx);
    this.updateHighWatermark(ctx);
    ctx.log.debug(
      { dir: this.dir, leaderEpoch: role.leaderEpoch, isr: role.isr, logEndOffset: log.logEndOffset },
      'became leader',
    );
  }

  /**
   * Kafka's Partition.makeFollower: a leader that lost leadership answers what waits on it
   * NOT_LEADER_OR_FOLLOWER (acks=all produces, follower fetches; parked reads re-run and get the
   * same), and the fetch loop starts against the new leader (none while the leader is -1).
   * Truncation waits for the leader's answer (divergingEpoch), never the HW alone.
   */
  private makeFollower(ctx: ActorContext, wasLeader: boolean): void {
    const role = this.role!;
    const previous = this.leaderState;
    this.leaderState = null;
    if (this.isrExpirationTimer !== null) ctx.timers.clearTimeout(this.isrExpirationTimer);
    this.isrExpirationTimer = null;
    if (wasLeader) {
      if (plantedBugs.fencedLeaderAppends) this.keepLeadingFenced(ctx, previous);
      else this.purgatory.abortAll(ctx.timers, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    }
    this.fetcher.stop(ctx);
    if (plantedBugs.truncateToHighWatermark) {
      this.truncateToHighWatermarkThenFollow(ctx, role);
      return;
    }
    this.followLeader(ctx, role);
  }

  /** Starts the fetch loop against `role`'s leader (none while the leader is -1). */
  private followLeader(ctx: ActorContext, role: PartitionRole): void {
    // A log that refuses writes sends nothing (fetchPosition is null) until the storage probe heals it.
    if (role.leader >= 0)
      this.fetcher.start(ctx, replicaActorId(role.leader, this.args.topicId, this.args.partition), role.leaderEpoch);
    ctx.log.debug({ dir: this.dir, leader: role.leader, leaderEpoch: role.leaderEpoch }, 'became follower');
  }

  /**
   * The planted bug `truncateToHighWatermark` (pre-KIP-101 Partition.makeFollower): the log is cut to
   * this replica's own HW once no flush is in flight, then it follows; its fetches carry no epoch.
   */
  private truncateToHighWatermarkThenFollow(ctx: ActorContext, role: PartitionRole): void {
    const log = this.openLog();
    log
      .whenFlushed()
      .then(() => {
        // A newer leader or epoch meanwhile runs its own makeFollower (or makeLeader); an ISR change does not.
        const now = this.role;
        if (this.log !== log || this.isLeader || now?.leaderEpoch !== role.leaderEpoch || now.leader !== role.leader)
          return;
        const before = log.logEndOffset;
        const offset = Math.max(log.logStartOffset, this.highWatermark);
        if (offset < before && !this.truncateOrGoOffline(ctx, log, offset, 'log-end')) return;
        ctx.log.info(
          {
            dir: this.dir,
            highWatermark: this.highWatermark,
            logEndOffset: log.logEndOffset,
            previousLogEndOffset: before,
          },
          'planted bug truncateToHighWatermark: follower truncated to its own high watermark',
        );
        this.followLeader(ctx, now);
      })
      .catch((error: unknown) =>
        ctx.timers.setTimeout(() => {
          throw error;
        }, 0),
      );
  }

  /**
   * The planted bug `fencedLeaderAppends`: a demoted leader keeps the leader side of the epoch it led
   * and its acks=all produces waiting (they complete as its follower HW passes them); what else waits
   * on it as leader is answered NOT_LEADER_OR_FOLLOWER as usual.
   */
  private keepLeadingFenced(ctx: ActorContext, previous: LeaderState | null): void {
    this.fencedLeader = previous;
    const code = ErrorCode.NOT_LEADER_OR_FOLLOWER;
    this.purgatory.deferredReads.abortAll(ctx.timers, code);
    this.purgatory.fetches.abortAll(ctx.timers, code);
    this.purgatory.followerFetches.abortAll(ctx.timers, code);
    this.purgatory.leaderHighWatermarks.abortAll(ctx.timers, code);
  }

  /**
   * Requests that need the log before start() opened it (the partition was unassigned):
   * NOT_LEADER_OR_FOLLOWER; or every request while the replica is offline after a storage error
   * (`code` KAFKA_STORAGE_ERROR, Kafka's answer for a partition on an offline log dir).
   */
  private answerWithoutLog(
    envelope: EnvelopeOf<ReplicaMessages>,
    ctx: ActorContext,
    code: number = ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ): void {
    switch (envelope.type) {
      case 'replica.produce':
        ctx.reply(envelope, {
          errorCode: code,
          errorMessage: null,
          baseOffset: INVALID_OFFSET,
          logAppendTimeMs: NO_TIMESTAMP,
          logStartOffset: INVALID_OFFSET,
          recordErrors: [],
        });
        return;
      case 'replica.fetch':
        ctx.reply(envelope, fetchErrorReply(code));
        return;
      case 'replica.watch':
        ctx.reply(envelope, { ready: true });
        return;
      case 'replica.list-offsets':
        ctx.reply(envelope, { errorCode: code, offset: UNKNOWN_OFFSET, timestamp: UNKNOWN_TIMESTAMP, leaderEpoch: -1 });
        return;
      case 'replica.delete-records':
        ctx.reply(envelope, { errorCode: code, lowWatermark: INVALID_LOW_WATERMARK });
        return;
      case 'replica.offset-for-epoch':
        ctx.reply(envelope, { errorCode: code, leaderEpoch: NO_PARTITION_LEADER_EPOCH, endOffset: INVALID_OFFSET });
        return;
      case 'replica.await-leader-hw':
        ctx.reply(envelope, {
          errorCode: code,
          leaderEpoch: -1,
          leaderEpochStartOffset: INVALID_OFFSET,
          highWatermark: INVALID_OFFSET,
        });
        return;
      case 'replica.update-role':
      case 'replica.update-config':
        ctx.reply(envelope, {});
        return;
      default:
        ctx.log.debug({ type: envelope.type, errorCode: code }, 'replica without a (usable) log ignores a message');
    }
  }

  /**
   * A storage error of a replicated partition (StorageProbe): the replica stops leading and fetching,
   * answers what waits on it KAFKA_STORAGE_ERROR (Kafka's DelayedProduce finds the partition offline),
   * and tells its replica manager, which reports it to the controller: it leaves the ISR and another
   * replica leads. It stays so (every request answered KAFKA_STORAGE_ERROR) until its broker restarts,
   * whose recovery takes the log back to what it holds and lets it catch up as a follower.
   */
  private goOffline(ctx: ActorContext, error: KafkaStorageError): void {
    this.leaderState = null;
    if (this.isrExpirationTimer !== null) ctx.timers.clearTimeout(this.isrExpirationTimer);
    this.isrExpirationTimer = null;
    this.fetcher.stop(ctx);
    this.purgatory.abortAll(ctx.timers, ErrorCode.KAFKA_STORAGE_ERROR);
    const { recoveryPoint } = this.openLog();
    try {
      ctx.fs.writeFileAtomic(this.storageFailureMarker, Buffer.from(`${recoveryPoint}\n`, 'utf8'));
    } catch (markerError) {
      ctx.log.warn(
        { dir: this.dir, error: String(markerError) },
        'storage-failure marker not written: the restart recovers this log from its recovery point by its CRCs only',
      );
    }
    ctx.send(this.args.manager, 'replica-manager.replica-offline', {
      topicId: this.args.topicId,
      partition: this.args.partition,
      reason: `${error.code}: ${error.message}`,
    });
  }

  /**
   * `<logDir>/<topic>-<partition>.storage-failure`: written when the replica goes offline, holding its
   * recovery point then (decimal). Beside the partition directory, not in it, so a disk failing the
   * directory's files may still take it.
   */
  private get storageFailureMarker(): string {
    return `${this.dir}.storage-failure`;
  }

  /**
   * Runs `write`, a change on the role-change, truncation or follower-append path that writes to the
   * disk (the log, the leader-epoch checkpoint). An I/O error there is Kafka's maybeHandleIOException
   * (UnifiedLog, LeaderEpochFileCache under LogDirFailureChannel): the log refuses writes
   * (Log.failStorage) and the storage probe takes a replicated partition's replica offline
   * ({@link goOffline}: out of the ISR, another replica leads) or, with one replica, arms its probe.
   * Returns false after such an error; anything else is rethrown (a programmer error crashes the actor).
   */
  private writeOrGoOffline(ctx: ActorContext, what: string, write: () => void): boolean {
    try {
      write();
      return true;
    } catch (error) {
      const failure = this.openLog().failStorage(error, what);
      ctx.log.warn({ dir: this.dir, errno: failure.code, error: failure.message }, `${what} failed on the disk`);
      this.storageProbe.onStorageFailure(ctx, failure);
      return false;
    }
  }

  /**
   * A follower's truncation (KIP-101/320, or a planted bug's): the log is cut at `offset` (when below
   * its LEO), the epoch cache trimmed from `offset` (`'target'`, even when the log is not cut) or from
   * the new LEO (`'log-end'`), producer state rebuilt from what is left, the HW lowered to the LEO. Returns false when the disk
   * refused ({@link writeOrGoOffline}: the replica is offline, or its log refuses writes).
   */
  private truncateOrGoOffline(
    ctx: ActorContext,
    log: Log,
    offset: number,
    trimEpochsFrom: 'target' | 'log-end',
  ): boolean {
    const before = log.logEndOffset;
    const done = this.writeOrGoOffline(ctx, `truncating the log to ${offset}`, () => {
      if (offset < log.logEndOffset) log.truncateTo(offset);
      this.epochs.truncateFromEnd(trimEpochsFrom === 'target' ? offset : log.logEndOffset);
    });
    if (log.logEndOffset < before) rebuildProducerState(this.producerStates, log);
    // A follower's HW follows its log down (also where a failed truncation left it).
    if (this.highWatermark > log.logEndOffset) this.highWatermark = Math.max(log.logStartOffset, log.logEndOffset);
    return done;
  }

  /**
   * At start, after a storage failure took this replica offline: the log is cut back to the recovery
   * point the failure left (the marker's), since bytes past it were in a failed fsync's page cache and
   * may read back whole (CRCs intact) without being on the disk (Linux drops the error with the
   * first fsync that reports it). The HW never passed that point under write.caching=false; the
   * follower fetches the rest from its leader. The marker goes once the cut is done.
   */
  private truncateAfterStorageFailure(ctx: ActorContext, log: Log): void {
    const { fs } = ctx;
    if (!fs.exists(this.storageFailureMarker)) return;
    const recoveryPoint = Number.parseInt(fs.readFile(this.storageFailureMarker).toString('utf8').trim(), 10);
    const before = log.logEndOffset;
    if (Number.isSafeInteger(recoveryPoint) && recoveryPoint >= log.logStartOffset && recoveryPoint < before)
      log.truncateTo(recoveryPoint);
    ctx.log.warn(
      { dir: this.dir, recoveryPoint, logEndOffset: log.logEndOffset, previousLogEndOffset: before },
      'log cut back to the durable point its storage failure left before rejoining',
    );
    this.removeStorageFailureMarker(ctx);
  }

  private removeStorageFailureMarker(ctx: ActorContext): void {
    if (!ctx.fs.exists(this.storageFailureMarker)) return;
    ctx.fs.unlink(this.storageFailureMarker);
    ctx.fs.syncDir(this.args.logDir);
  }

  /** OffsetForLeaderEpoch (KIP-101/279), from the epoch cache; the leader only, with the KIP-320 check. */
  private offsetForEpoch(envelope: ReplicaEnvelope<'replica.offset-for-epoch'>, ctx: ActorContext): void {
    const refused = this.leaderError(envelope.body.currentLeaderEpoch);
    if (refused !== null) {
      ctx.reply(envelope, { errorCode: refused, leaderEpoch: NO_PARTITION_LEADER_EPOCH, endOffset: INVALID_OFFSET });
      return;
    }
    ctx.reply(envelope, this.epochs.endOffsetFor(envelope.body.leaderEpoch, this.openLog().logEndOffset));
  }

  // ---- leader: followers' fetches, ISR ------------------------------------------------------

  /**
   * A fetch from a follower (the leader, epoch checked). The follower's diverging epoch first
   * (KIP-320: its last fetched epoch ends, in this leader's cache, before its fetch offset, or the
   * leader knows only an older epoch): answered `divergingEpoch` without bytes, state unchanged.
   * Else its fetch state (LEO = fetch offset, fsynced offset) is recorded, which may expand the ISR
   * and move the HW, and it gets the bytes from its offset up to the LEO: at once when there are
   * some, else when bytes arrive, the HW moves, or maxWaitMs passes.
   */
  private followerFetch(envelope: ReplicaEnvelope<'replica.fetch'>, ctx: ActorContext): void {
    const { fetchOffset, follower, maxWaitMs } = envelope.body;
    assert.ok(follower !== undefined);
    const log = this.openLog();
    const leader = this.leaderState!;
    if (follower.lastFetchedEpoch >= 0 && fetchOffset > log.logStartOffset) {
      const end = this.epochs.endOffsetFor(follower.lastFetchedEpoch, log.logEndOffset);
      if (end.leaderEpoch < follower.lastFetchedEpoch || end.endOffset < fetchOffset) {
        ctx.reply(envelope, {
          errorCode: ErrorCode.NONE,
          highWatermark: this.highWatermark,
          lastStableOffset: this.highWatermark,
          logStartOffset: log.logStartOffset,
          records: null,
          divergingEpoch: { epoch: end.leaderEpoch, endOffset: end.endOffset },
        } satisfies FetchReply);
        return;
      }
    }
    if (fetchOffset < log.logStartOffset || fetchOffset > log.logEndOffset) {
      // With the real log start offset, so a follower behind it restarts its log there.
      ctx.reply(envelope, { ...fetchErrorReply(ErrorCode.OFFSET_OUT_OF_RANGE), logStartOffset: log.logStartOffset });
      return;
    }
    const nowMs = ctx.clock.nowMs();
    if (
      !leader.updateFetchState(
        follower.brokerId,
        follower.brokerEpoch,
        fetchOffset,
        follower.fsyncedOffset,
        log.logEndOffset,
        nowMs,
      )
    ) {
      ctx.reply(envelope, fetchErrorReply(ErrorCode.NOT_LEADER_OR_FOLLOWER));
      return;
    }
    this.maybeExpandIsr(ctx, follower.brokerId);
    this.updateHighWatermark(ctx);
    const highWatermarkAtArrival = this.highWatermark;
    const answer = (): void => {
      const current = this.openLog();
      const base = {
        errorCode: ErrorCode.NONE,
        highWatermark: this.highWatermark,
        lastStableOffset: this.highWatermark,
        logStartOffset: current.logStartOffset,
      };
      if (fetchOffset < current.logStartOffset) {
        ctx.reply(envelope, {
          ...fetchErrorReply(ErrorCode.OFFSET_OUT_OF_RANGE),
          logStartOffset: current.logStartOffset,
        });
        return;
      }
      const result = current.read(
        fetchOffset,
        envelope.body.maxBytes,
        current.logEndOffset,
        true,
        allocateWithHeadroom,
      );
      const records = result.kind === 'ok' && result.records.length > 0 ? result.records : null;
      const reply = (): void => ctx.reply(envelope, { ...base, records });
      // No copy: the read's own buffer is handed to the follower with the reply written in front of it.
      if (records !== null) whileLent(records, reply);
      else reply();
    };
    const parked = new DelayedFollowerFetch(
      answer,
      (errorCode) => ctx.reply(envelope, fetchErrorReply(errorCode)),
      () =>
        !this.isLeader ||
        this.openLog().logEndOffset > fetchOffset ||
        this.highWatermark !== highWatermarkAtArrival ||
        fetchOffset < this.openLog().logStartOffset,
    );
    this.purgatory.followerFetches.tryCompleteElseWatch(parked, ctx.timers, maxWaitMs ?? 0);
  }

  /** A follower's fsync completed while its fetch is parked here: its fsynced offset may move the HW. */
  private followerFlushed(envelope: ReplicaEnvelope<'replica.follower-flushed'>, ctx: ActorContext): void {
    const leader = this.leaderState;
    if (leader === null) return;
    if (leader.updateFsynced(envelope.body.brokerId, envelope.body.fsyncedOffset)) this.updateHighWatermark(ctx);
  }

  /** Kafka's maybeExpandIsr: a follower outside the ISR that reached the HW in this epoch joins (one change at a time). */
  private maybeExpandIsr(ctx: ActorContext, brokerId: number): void {
    const leader = this.leaderState;
    const role = this.role;
    if (leader === null || role === null || leader.pendingIsr !== null) return;
    if (!leader.mayJoinIsr(brokerId, role.isr, this.highWatermark)) return;
    this.alterPartition(
      ctx,
      [...role.isr, brokerId].sort((a, b) => a - b),
    );
  }

  private armIsrExpiration(ctx: ActorContext): void {
    if (this.isrExpirationTimer !== null) return;
    const intervalMs = Math.max(1, Math.floor(this.args.replication.replicaLagTimeMaxMs / 2));
    this.isrExpirationTimer = ctx.timers.setTimeout(() => {
      this.isrExpirationTimer = null;
      if (this.log === null || !this.isLeader) return;
      this.maybeShrinkIsr(ctx);
      this.armIsrExpiration(ctx);
    }, intervalMs);
  }

  /** Kafka's maybeShrinkIsr (the isr-expiration task): ISR followers not caught up within replica.lag.time.max.ms leave. */
  private maybeShrinkIsr(ctx: ActorContext): void {
    const leader = this.leaderState;
    const role = this.role;
    if (leader === null || role === null || leader.pendingIsr !== null) return;
    const log = this.openLog();
    const outOfSync = leader.outOfSync(
      role.isr,
      log.logEndOffset,
      ctx.clock.nowMs(),
      this.args.replication.replicaLagTimeMaxMs,
    );
    if (outOfSync.length === 0) return;
    ctx.log.info(
      { dir: this.dir, isr: role.isr, outOfSync, logEndOffset: log.logEndOffset, highWatermark: this.highWatermark },
      'shrinking the ISR: followers not caught up within replica.lag.time.max.ms',
    );
    this.alterPartition(
      ctx,
      role.isr.filter((id) => !outOfSync.includes(id)),
    );
  }

  /**
   * Asks the manager to change the ISR to `newIsr` (AlterPartition with this role's epochs). While it
   * is in flight the HW counts the larger of the two sets; the answer's role is adopted (applyRole
   * ignores it when a push brought it first).
   */
  private alterPartition(ctx: ActorContext, newIsr: number[]): void {
    const leader = this.leaderState!;
    const role = this.role!;
    leader.pendingIsr = newIsr;
    const done = (): void => {
      if (leader.pendingIsr === newIsr) leader.pendingIsr = null;
      if (this.log !== null && this.leaderState === leader) this.updateHighWatermark(ctx);
    };
    ctx
      .request(
        this.args.manager,
        'replica-manager.alter-partition',
        {
          topicId: this.args.topicId,
          partition: this.args.partition,
          leaderEpoch: role.leaderEpoch,
          partitionEpoch: role.partitionEpoch,
          newIsr,
        },
        MANAGER_REQUEST_TIMEOUT_MS,
      )
      .then(
        (reply) => {
          if (this.log === null) return;
          if (reply.errorCode !== ErrorCode.NONE)
            ctx.log.info({ dir: this.dir, newIsr, errorCode: reply.errorCode }, 'ISR change refused');
          // Cleared first: the HW then counts the ISR the answer's role holds.
          if (leader.pendingIsr === newIsr) leader.pendingIsr = null;
          if (reply.role !== null) this.applyRole(ctx, reply.role);
          done();
        },
        (error: unknown) => {
          ctx.log.warn({ dir: this.dir, newIsr, error: String(error) }, 'ISR change got no answer');
          done();
        },
      )
      .catch((error: unknown) =>
        ctx.timers.setTimeout(() => {
          throw error;
        }, 0),
      );
  }

  // ---- follower: fetch replies --------------------------------------------------------------

  /**
   * The leader's answer to this follower's fetch (Kafka's AbstractFetcherThread.processFetchRequest):
   * a diverging epoch truncates (then fetch again at once); bytes are checked (CRC-32C), appended
   * unchanged with the leader's offsets and epochs (epoch cache and producer state updated from each
   * batch), and the HW becomes min(leader's HW, own LEO); the next fetch goes once their fsync
   * completes (write.caching=false) or at once. A leader whose log start passed this LEO restarts the
   * log there. Errors back off.
   */
  private async onFetchReply(ctx: ActorContext, reply: FetchReply): Promise<NextFetch> {
    let log = this.log;
    if (log === null || this.isLeader || this.groupCommit.isClosed) return 'stop';
    if (reply.errorCode !== ErrorCode.NONE) {
      if (reply.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE && reply.logStartOffset > log.logEndOffset) {
        await log.whenFlushed();
        if (this.log !== log || this.isLeader) return 'stop';
        const current = log;
        const restarted = this.writeOrGoOffline(ctx, `restarting the log at ${reply.logStartOffset}`, () => {
          current.truncateFullyAndStartAt(reply.logStartOffset);
          this.epochs.truncateFromEnd(0);
        });
        this.producerStates.clear();
        // Within the log whatever the disk did (the fresh segment, or the log as the error left it).
        this.highWatermark = restarted
          ? current.logEndOffset
          : Math.max(current.logStartOffset, Math.min(this.highWatermark, current.logEndOffset));
        return restarted ? 'now' : 'stop';
      }
      // Pre-KIP-101 (planted bug): this LEO is past the leader's, which no diverging epoch will say.
      if (plantedBugs.truncateToHighWatermark && reply.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE)
        return this.truncateToLeaderLogEnd(ctx, log);
      ctx.log.debug({ dir: this.dir, errorCode: reply.errorCode }, 'replica fetch refused; backing off');
      return 'back-off';
    }
    if (reply.divergingEpoch !== undefined) {
      await this.truncateOnDivergence(ctx, reply.divergingEpoch);
      return this.log === null || this.isLeader ? 'stop' : 'now';
    }
    log = this.log;
    if (log === null) return 'stop';
    const records =
      reply.records === null ? null : Buffer.from(reply.records.buffer, reply.records.byteOffset, reply.records.length);
    if (records !== null && records.length > 0) {
      for (let pos = 0; pos < records.length;) {
        const checked = checkBatch(records, pos, records.length - pos);
        if (typeof checked === 'string') {
          ctx.log.warn({ dir: this.dir, reason: checked }, 'leader sent a batch that fails its checks; backing off');
          return 'back-off';
        }
        pos += checked;
      }
      if (baseOffsetNumber(records, 0) < log.logEndOffset) return 'now'; // a reply to an older position (stale): fetch again
      try {
        // Producer state learns each batch as it is appended, so a segment roll snapshots exactly the batches below it.
        log.appendAsFollower(records, (appendedBatch) => this.producerStates.updateFromBatch(appendedBatch));
      } catch (error) {
        if (!(error instanceof KafkaStorageError)) throw error;
        ctx.log.warn({ dir: this.dir, error: error.message }, 'follower append failed on the disk');
        if (log.storageFailure !== null) this.storageProbe.onStorageFailure(ctx, log.storageFailure);
        this.afterFollowerAppend(ctx, log, records);
        return log.storageFailure !== null ? 'stop' : 'back-off';
      }
      const count = this.afterFollowerAppend(ctx, log, records);
      if (log.storageFailure !== null) return 'stop';
      this.groupCommit.appended(ctx, log, count);
    }
    const leaderHighWatermark = Math.min(reply.highWatermark, log.logEndOffset);
    if (leaderHighWatermark > this.highWatermark) {
      this.highWatermark = leaderHighWatermark;
      // The planted bug `fencedLeaderAppends`: the produces it took as a demoted leader wait on this HW.
      if (this.fencedLeader !== null) this.purgatory.produces.checkAndComplete(ctx.timers);
    }
    this.assertHighWatermarkBounds(log);
    if (log.storageFailure !== null) return 'stop';
    if (records === null || records.length === 0) return 'now';
    return this.config.writeCaching ? 'now' : 'after-flush';
  }

  /**
   * The planted bug `truncateToHighWatermark` only: a follower whose LEO is past its leader's (an
   * OFFSET_OUT_OF_RANGE within the leader's log start) asks the leader's LEO (ListOffsets, latest, to
   * the log end) and truncates to it, as pre-KIP-101 Kafka's handleOffsetOutOfRange did; then fetches
   * again at once. Backs off when the leader does not answer or its LEO is not below this one.
   */
  private async truncateToLeaderLogEnd(ctx: ActorContext, log: Log): Promise<NextFetch> {
    const leader = this.fetcher.currentLeader;
    if (leader === null) return 'back-off';
    const end = await ctx
      .request(
        leader,
        'replica.list-offsets',
        { timestamp: LATEST_TIMESTAMP, toLogEnd: true },
        MANAGER_REQUEST_TIMEOUT_MS,
      )
      .catch(() => null);
    if (this.log !== log || this.isLeader) return 'stop';
    if (end === null || end.errorCode !== ErrorCode.NONE || end.offset >= log.logEndOffset) return 'back-off';
    await log.whenFlushed();
    if (this.log !== log || this.isLeader) return 'stop';
    const before = log.logEndOffset;
    if (!this.truncateOrGoOffline(ctx, log, Math.max(end.offset, log.logStartOffset), 'log-end')) return 'stop';
    ctx.log.info(
      { dir: this.dir, leaderLogEndOffset: end.offset, logEndOffset: log.logEndOffset, previousLogEndOffset: before },
      "planted bug truncateToHighWatermark: follower past its leader's LEO truncated to it",
    );
    return 'now';
  }

  /**
   * After a follower append: the epoch cache learns each appended batch (those below the LEO: a
   * failed append keeps a prefix; producer state learnt them during the append). Returns the records
   * appended.
   */
  private afterFollowerAppend(ctx: ActorContext, log: Log, records: Buffer): number {
    let count = 0;
    for (let pos = 0; pos < records.length;) {
      const size = batchSizeAt(records, pos);
      const baseOffset = baseOffsetNumber(records, pos);
      const lastOffset = baseOffset + lastOffsetDeltaOf(records, pos);
      if (lastOffset >= log.logEndOffset) break;
      const epoch = partitionLeaderEpochOf(records, pos);
      // A failed checkpoint write keeps the entry in memory; the log refuses writes from then on (the caller stops fetching).
      if (epoch > this.epochs.latestEpoch)
        this.writeOrGoOffline(ctx, `assigning leader epoch ${epoch}`, () => this.epochs.assign(epoch, baseOffset));
      count += recordsCountOf(records.subarray(pos, pos + size));
      pos += size;
    }
    return count;
  }

  /**
   * KIP-320 truncation: the leader's `divergingEpoch` is the largest epoch it has at or below this
   * follower's last fetched epoch, with its end offset. The follower truncates to the end of the
   * largest epoch both have (its own end offset for that epoch, capped by the leader's); when it does
   * not have the leader's epoch, to the end of its largest epoch below it, and the next fetch
   * (with that older last fetched epoch) goes on from there (KIP-279). The epoch cache is trimmed
   * even when the log is not (an epoch this replica led without writing), and so is producer state;
   * the HW is cut to the new LEO if above it.
   */
  private async truncateOnDivergence(
    ctx: ActorContext,
    diverging: { epoch: number; endOffset: number },
  ): Promise<void> {
    const log = this.log;
    if (log === null) return;
    const own = this.epochs.endOffsetFor(diverging.epoch, log.logEndOffset);
    const offset =
      diverging.epoch < 0 || diverging.endOffset < 0
        ? Math.min(this.highWatermark, log.logEndOffset) // the leader knows no common epoch: Kafka falls back to the HW
        : own.endOffset < 0
          ? Math.min(diverging.endOffset, log.logEndOffset)
          : Math.min(diverging.endOffset, own.endOffset, log.logEndOffset);
    await log.whenFlushed();
    if (this.log !== log || this.isLeader) return;
    const before = log.logEndOffset;
    if (!this.truncateOrGoOffline(ctx, log, offset, 'target')) return;
    ctx.log.info(
      {
        dir: this.dir,
        divergingEpoch: diverging,
        offset,
        logEndOffset: log.logEndOffset,
        previousLogEndOffset: before,
      },
      'follower truncated to the end of the largest common leader epoch',
    );
  }

  private checkpointBody(): PartitionCheckpointBody {
    const log = this.openLog();
    return {
      topic: this.args.topic,
      partition: this.args.partition,
      recoveryPoint: log.recoveryPoint,
      highWatermark: this.highWatermark,
      logStartOffset: log.logStartOffset,
    };
  }

  private checkpointTick(ctx: ActorContext): void {
    if (this.log === null) return;
    this.syncCreationFiles(ctx);
    const body = this.checkpointBody();
    const key = `${body.recoveryPoint}/${body.highWatermark}/${body.logStartOffset}`;
    if (key !== this.lastCheckpoint) {
      this.lastCheckpoint = key;
      ctx.send(this.args.logDirActor, 'log-dir.checkpoint', body);
    }
    this.checkpointTimer = ctx.timers.setTimeout(() => this.checkpointTick(ctx), this.args.checkpointIntervalMs);
  }
}

/** What an offline replica answers KAFKA_STORAGE_ERROR (everything that reads or writes its log, or needs its role). */
const OFFLINE_REFUSED: ReadonlySet<string> = new Set([
  'replica.produce',
  'replica.fetch',
  'replica.watch',
  'replica.list-offsets',
  'replica.delete-records',
  'replica.offset-for-epoch',
  'replica.await-leader-hw',
]);

/** A fetch's error answer: Kafka's error partition response carries no offsets (HW, LSO and log start -1). */
function fetchErrorReply(errorCode: number): FetchReply {
  return {
    errorCode,
    highWatermark: INVALID_HIGH_WATERMARK,
    lastStableOffset: INVALID_LAST_STABLE_OFFSET,
    logStartOffset: INVALID_LOG_START_OFFSET,
    records: null,
  };
}

/** Actor factory registered as kind `replica` (src/runtime/registry.ts). */
export function createReplicaActor(args: ReplicaArgs): Actor<ReplicaMessages> {
  return new ReplicaActor(args);
}
