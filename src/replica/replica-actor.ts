/**
 * A partition replica actor (DESIGN.md "Replica actor"): a dispatcher over the partition's `Log`
 * (storage/) and the roles it delegates to. This issue has one broker, so every replica is the leader
 * of its partition with ISR = {itself}; the high watermark logic is already the general one: HW = min
 * over the ISR of what each member counts toward it (with write.caching=false, only fsynced bytes:
 * the durability contract), so followers slot in later.
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
 *   partition for writes.
 *
 * Its messages (`replica.produce`, `replica.fetch`, `replica.watch`, `replica.list-offsets`,
 * `replica.delete`, `replica.update-config`, `replica.delete-records`, `replica.offset-for-epoch`,
 * `replica.describe`) are declared with their bodies and replies in messages.ts (ReplicaMessages).
 */
import assert from 'node:assert/strict';
import type { Actor, ActorContext, ActorRef, Envelope, EnvelopeOf } from '../runtime/actor';
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
  NO_SEQUENCE,
  NO_TIMESTAMP,
  UNKNOWN_OFFSET,
  UNKNOWN_TIMESTAMP,
} from '../protocol/sentinels';
import { KafkaStorageError, Log } from '../storage/log';
import { readOffsetCheckpoint, readPartitionMetadata, writePartitionMetadata } from '../storage/checkpoint';
import type { ReplicaLogConfig } from '../config/topic-config';
import {
  createTimeOutOfBounds,
  keylessRecordRejection,
  toTopicCompression,
  validateProducedBatch,
} from './produce-validation';
import { LeaderEpochCache } from './leader-epoch-cache';
import { ProducerStateTable } from './producer-state';
import { DeferredRead, DelayedFetch, DelayedProduce, ReplicaPurgatory } from './purgatory';
import { GroupCommit } from './group-commit';
import { CleanerSchedule } from './cleaner-schedule';
import { StorageProbe } from './storage-probe';
import * as L from '../protocol/record-batch/layout';
import type {
  FetchReply,
  ListOffsetReply,
  LogDirMessages,
  PartitionCheckpointBody,
  ProduceReply,
  ReplicaMessages,
} from './messages';

/**
 * How long the replica waits for its log-dir actor (the final checkpoint on stop, `log-dir.forget` on delete).
 * That actor is local and answers within a turn; past this it is stuck or gone, and the replica goes
 * on: a missing final checkpoint only makes recovery scan from the previous one.
 */
const LOG_DIR_REQUEST_TIMEOUT_MS = 5000;

/** Spawn arguments of a replica actor. */
export interface ReplicaArgs {
  topic: string;
  topicId: string;
  partition: number;
  /** The log dir (one of log.dirs) holding `<topic>-<partition>/`. */
  logDir: string;
  brokerId: number;
  leaderEpoch: number;
  config: ReplicaLogConfig;
  /** The log-dir actor that writes this dir's checkpoint files. */
  logDirActor: ActorRef<LogDirMessages>;
  /** How often the recovery point and HW are sent to the log-dir actor (replica.high.watermark.checkpoint.interval.ms). */
  checkpointIntervalMs: number;
  /** How often retention runs (log.retention.check.interval.ms). */
  retentionCheckIntervalMs: number;
  /** In-sync replicas (node ids), for min.insync.replicas on acks=all. */
  isr: number[];
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

  constructor(private readonly args: ReplicaArgs) {
    this.dir = `${args.logDir}/${args.topic}-${args.partition}`;
    this.groupCommit = new GroupCommit({
      log: () => this.log,
      config: () => this.args.config,
      onFlushed: (ctx) => this.updateHighWatermark(ctx),
      onFlushFailed: (ctx, error) => this.storageProbe.onStorageFailure(ctx, error),
    });
    this.cleaner = new CleanerSchedule({
      log: () => this.log,
      config: () => this.args.config,
      highWatermark: () => this.highWatermark,
      where: { topic: args.topic, partition: args.partition },
      onStorageFailure: (ctx, error) => this.storageProbe.onStorageFailure(ctx, error),
    });
    this.storageProbe = new StorageProbe({
      log: () => this.log,
      highWatermark: () => this.highWatermark,
      isClosing: () => this.groupCommit.isClosed,
      dir: this.dir,
      onRefusingWrites: (ctx) => {
        this.purgatory.produces.abortAll(ctx.timers, ErrorCode.KAFKA_STORAGE_ERROR);
        this.purgatory.deferredReads.abortAll(ctx.timers, ErrorCode.KAFKA_STORAGE_ERROR);
      },
      onHealed: (ctx, previousLogEndOffset) => {
        // Idempotent-producer state may name batches that were cut: forget those (Kafka rebuilds it on truncation).
        const leo = this.openLog().logEndOffset;
        if (leo < previousLogEndOffset) this.producerStates.truncateTo(leo);
        this.updateHighWatermark(ctx);
      },
    });
  }

  start(ctx: ActorContext): void {
    const { fs } = ctx;
    const existingTopicId = fs.exists(this.dir)
      ? (readPartitionMetadata(fs, `${this.dir}/partition.metadata`, ctx.log)?.topicId ?? null)
      : null;
    if (existingTopicId !== null && existingTopicId !== this.args.topicId) {
      ctx.log.warn(
        { dir: this.dir, existingTopicId, topicId: this.args.topicId },
        'partition directory belongs to a deleted topic of the same name; removing it',
      );
      fs.rmrf(this.dir);
    }
    const checkpointed = (file: string) =>
      readOffsetCheckpoint(fs, `${this.args.logDir}/${file}`, ctx.log).find(
        (c) => c.topic === this.args.topic && c.partition === this.args.partition,
      )?.offset;
    const log = Log.open({
      fs,
      dir: this.dir,
      logger: ctx.log,
      clock: ctx.clock,
      recoveryPoint: checkpointed('recovery-point-offset-checkpoint') ?? 0,
      logStartOffset: checkpointed('log-start-offset-checkpoint'),
      config: this.logConfig(),
      compacted: this.args.config.compactEnabled,
    });
    try {
      if (existingTopicId === null)
        writePartitionMetadata(fs, `${this.dir}/partition.metadata`, { topicId: this.args.topicId });
      this.epochs = LeaderEpochCache.load(fs, this.dir);
      this.epochs.assign(this.args.leaderEpoch, log.logEndOffset);
      // Whatever survived in the page cache is made durable before it becomes visible: after a restart the
      // leader's HW covers its whole (recovered) log, as Kafka's leader with ISR = {self} would.
      log.flush();
    } catch (error) {
      // A failed start (a full disk) runs no stop: the log's files are closed here, so the broker's
      // retries of the start (it keeps the partition offline meanwhile) leak no descriptors. The files
      // written so far are whole (atomic writes) and the next start reopens them as they are.
      log.close();
      throw error;
    }
    this.log = log;
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
        leaderEpoch: this.args.leaderEpoch,
      },
      'replica started as leader',
    );
  }

  receive(envelope: EnvelopeOf<ReplicaMessages>, ctx: ActorContext): void | Promise<void> {
    // The runtime delivers any kind sent to this id: `unknown` keeps a handle for the default branch.
    const unknown: Envelope = envelope;
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
        ctx.reply(envelope, this.epochs.endOffsetFor(envelope.body.leaderEpoch, this.openLog().logEndOffset));
        return;
      case 'replica.describe':
        return this.describe(envelope, ctx);
      default:
        ctx.log.warn({ type: unknown.type, from: unknown.from }, 'replica ignores unknown message type');
    }
  }

  async stop(ctx: ActorContext): Promise<void> {
    const log = this.log;
    if (log === null) return;
    this.groupCommit.close(ctx);
    await log.whenFlushed();
    if (this.log !== log) return; // deleted meanwhile
    try {
      if (log.storageFailure === null) log.flush();
    } catch (error) {
      if (!(error instanceof KafkaStorageError)) throw error;
    }
    if (log.storageFailure !== null)
      ctx.log.warn(
        { dir: this.dir, error: log.storageFailure.message },
        'stopping with a storage error: recovery on the next start re-checks the log from its recovery point',
      );
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
    });
  }

  private produce(envelope: ReplicaEnvelope<'replica.produce'>, ctx: ActorContext): void {
    const { records, acks, timeoutMs } = envelope.body;
    const rejection = validateProducedBatch(records, this.args.config.maxMessageBytes);
    if (rejection) {
      ctx.log.debug({ topic: this.args.topic, partition: this.args.partition, ...rejection }, 'produce rejected');
      ctx.reply(envelope, this.produceReply(rejection.errorCode, rejection.errorMessage, INVALID_OFFSET));
      return;
    }
    const { config } = this.args;
    if (acks === -1 && this.args.isr.length < config.minInsyncReplicas) {
      ctx.reply(
        envelope,
        this.produceReply(
          ErrorCode.NOT_ENOUGH_REPLICAS,
          `The size of the current ISR ${this.args.isr.length} is insufficient to satisfy the min.isr requirement of ${config.minInsyncReplicas}`,
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
    const lastSeq = firstSeq < 0 ? NO_SEQUENCE : (firstSeq + batch.readInt32BE(L.LAST_OFFSET_DELTA)) % 0x80000000;
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
    const appended = this.storageProbe.appendOrRefuse(ctx, log, batch, this.args.leaderEpoch);
    if (appended === null) {
      ctx.reply(envelope, this.storageErrorReply());
      return;
    }
    const { baseOffset, lastOffset } = appended;
    if (producerId >= 0)
      this.producerStates.update(
        producerId,
        producerEpoch,
        firstSeq,
        lastSeq,
        baseOffset,
        Number(batch.readBigInt64BE(L.MAX_TIMESTAMP)),
      );
    const reply = { ...this.produceReply(ErrorCode.NONE, null, baseOffset), logAppendTimeMs };
    this.groupCommit.appended(ctx, log, recordsCountOf(batch));
    if (log.storageFailure !== null) {
      // Its flush.messages fsync failed: the batch is past the durable point the probe cuts back to.
      ctx.reply(envelope, this.storageErrorReply());
      return;
    }
    this.updateHighWatermark(ctx);
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
    if (acks !== -1) {
      ctx.reply(envelope, reply);
      return;
    }
    const produce = new DelayedProduce(ctx, envelope, reply, () => this.highWatermark > lastOffset);
    this.purgatory.produces.tryCompleteElseWatch(produce, ctx.timers, timeoutMs);
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
    const { fetchOffset, maxBytes, minOneBatch } = envelope.body;
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
    const result = log.read(fetchOffset, maxBytes, this.highWatermark, minOneBatch);
    assert.equal(result.kind, 'ok', 'an offset between the log start and the HW is readable');
    ctx.reply(envelope, {
      ...base,
      errorCode: ErrorCode.NONE,
      records: result.kind === 'ok' ? result.records : null,
    } satisfies FetchReply);
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
      () => this.highWatermark > fetchOffset || fetchOffset < log.logStartOffset,
    );
    this.purgatory.fetches.tryCompleteElseWatch(fetch, ctx.timers, maxWaitMs);
  }

  private listOffsets(envelope: ReplicaEnvelope<'replica.list-offsets'>, ctx: ActorContext, mayDefer = true): void {
    const { timestamp, toLogEnd } = envelope.body;
    const leaderEpoch = this.args.leaderEpoch;
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
        leaderEpoch,
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
              leaderEpoch,
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
    try {
      await ctx.request(
        this.args.logDirActor,
        'log-dir.forget',
        { topic: this.args.topic, partition: this.args.partition },
        LOG_DIR_REQUEST_TIMEOUT_MS,
      );
    } catch (error) {
      ctx.log.warn({ error: String(error) }, 'log-dir actor did not confirm forgetting a deleted partition');
    }
    ctx.reply(envelope, {});
    ctx.exit();
  }

  private updateConfig(envelope: ReplicaEnvelope<'replica.update-config'>, ctx: ActorContext): void {
    const { config } = envelope.body;
    const flushMsChanged = config.flushMs !== this.args.config.flushMs;
    this.args.config = config;
    const log = this.openLog();
    log.updateConfig(this.logConfig());
    if (config.compactEnabled && !log.isCompacted) log.enableCompaction();
    this.cleaner.schedule(ctx);
    if (flushMsChanged) this.groupCommit.restartTimedFlush(ctx);
    // write.caching may have turned on: the HW can now count the page cache; or off: flush the rest.
    this.updateHighWatermark(ctx);
    if (!config.writeCaching && log.hasUnflushed) this.groupCommit.schedule(ctx);
    ctx.reply(envelope, {});
  }

  private logConfig() {
    const { segmentBytes, indexIntervalBytes, segmentMs, segmentIndexBytes } = this.args.config;
    return { segmentBytes, indexIntervalBytes, segmentMs, segmentIndexBytes };
  }

  private deleteRecords(envelope: ReplicaEnvelope<'replica.delete-records'>, ctx: ActorContext, mayDefer = true): void {
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
    const { config } = this.args;
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
    for (const timer of [this.checkpointTimer, this.retentionTimer]) if (timer) ctx.timers.clearTimeout(timer);
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
    const leo = this.openLog().logEndOffset;
    const deferred = new DeferredRead(read, () => this.highWatermark >= leo);
    if (!this.purgatory.deferredReads.tryCompleteElseWatch(deferred, ctx.timers, null)) this.groupCommit.schedule(ctx); // normally one is already scheduled or in flight
    return true;
  }

  /**
   * Recomputes the high watermark (Kafka's Partition.maybeIncrementLeaderHW): HW = min over the ISR of
   * each member's counted end offset. With ISR = {self}: the LEO under write.caching=true, else the
   * recovery point (everything below it is fsynced). It is called when what it reads may have moved:
   * 1. the replica started (after the start-up flush: the HW covers the recovered log);
   * 2. a produce appended (the LEO moved, and flush.messages may have flushed synchronously);
   * 3. a group-commit flush completed (the recovery point moved);
   * 4. the topic config changed (write.caching turned on: the page cache now counts);
   * 5. stop() flushed the rest.
   * With followers, an ISR change and a follower's LEO (from its fetch) join these triggers.
   * When the HW moves, the purgatory completes what it now covers.
   *
   * Invariants (asserted): the HW never decreases (write.caching turning off keeps it where it is),
   * HW <= LEO, HW >= log start offset (DeleteRecords and retention never pass the HW).
   */
  private updateHighWatermark(ctx: ActorContext): void {
    const log = this.openLog();
    const previous = this.highWatermark;
    const counted = this.args.config.writeCaching ? log.logEndOffset : log.recoveryPoint;
    assert.ok(counted <= log.logEndOffset, `counted end offset ${counted} passes the LEO ${log.logEndOffset}`);
    if (counted > previous) this.highWatermark = counted;
    assert.ok(this.highWatermark >= previous, `HW decreased from ${previous} to ${this.highWatermark}`);
    assert.ok(this.highWatermark <= log.logEndOffset, `HW ${this.highWatermark} passes the LEO ${log.logEndOffset}`);
    assert.ok(
      this.highWatermark >= log.logStartOffset,
      `HW ${this.highWatermark} below the log start offset ${log.logStartOffset}`,
    );
    if (this.highWatermark > previous) this.purgatory.checkAndComplete(ctx.timers);
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
    const body = this.checkpointBody();
    const key = `${body.recoveryPoint}/${body.highWatermark}/${body.logStartOffset}`;
    if (key !== this.lastCheckpoint) {
      this.lastCheckpoint = key;
      ctx.send(this.args.logDirActor, 'log-dir.checkpoint', body);
    }
    this.checkpointTimer = ctx.timers.setTimeout(() => this.checkpointTick(ctx), this.args.checkpointIntervalMs);
  }
}

/** Actor factory registered as kind `replica` (src/runtime/registry.ts). */
export function createReplicaActor(args: ReplicaArgs): Actor<ReplicaMessages> {
  return new ReplicaActor(args);
}
