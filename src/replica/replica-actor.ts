/**
 * A partition replica actor (DESIGN.md "Replica actor"). This issue has one broker, so every replica
 * is the leader of its partition with ISR = {itself}; the high watermark logic is already the general
 * one: HW = min over the ISR of what each member counts toward it (with write.caching=false, only
 * fsynced bytes: the durability contract), so followers slot in later.
 *
 * Group commit is pipelined: one asynchronous fsync (Log.flushAsync) is in flight at a time while
 * appends go on; when it completes (re-entering the actor through a zero-delay timer, so a crashed
 * actor never runs again) the HW moves to what it covered, acks=all produces it covers are answered,
 * and the next flush starts at once if anything is unflushed: one fsync covers every append made
 * during the previous one. flush.messages and stop() use the synchronous flush.
 * Read-your-writes is kept as when the fsync blocked the actor: a fetch that would come back empty
 * although the log holds more, a ListOffsets or a DeleteRecords that arrives while appends are not
 * yet under the HW waits (at most two fsyncs) for the flush covering the LEO as of its arrival.
 *
 * Messages (request -> reply):
 * - `produce` {records: Buffer|null, acks: -1|0|1, timeoutMs} -> ProduceReply
 * - `fetch` {fetchOffset, maxBytes, minOneBatch} -> FetchReply (reads stop at the HW)
 * - `watch` {fetchOffset, maxWaitMs} -> {ready: boolean} once the HW passes fetchOffset, or at maxWaitMs
 * - `list-offsets` {timestamp} -> ListOffsetReply (-2 earliest, -1 latest = HW, >= 0 by time)
 * - `delete` {} -> {} after closing and removing the partition directory; the actor then exits
 * - `update-config` {config: ReplicaLogConfig} -> {} (topic configs changed)
 * - `delete-records` {offset} -> {errorCode, lowWatermark} (DeleteRecords, KIP-107; -1 = the HW)
 * - `offset-for-epoch` {leaderEpoch} -> {leaderEpoch, endOffset} (OffsetForLeaderEpoch, KIP-101)
 * - `describe` {} -> {sizeBytes, logStartOffset, logEndOffset, highWatermark, firstDirtyOffset, cleaner}
 *
 * Log compaction (cleanup.policy=compact and log.cleaner.enable): every log.cleaner.backoff.ms the
 * actor plans a cleaning (storage/log-cleaner.ts); a pass runs its CPU work on `ctx.cpu` (a piscina
 * pool in production, inline in the simulation) while produce and fetch go on, and swaps each
 * cleaned group of segments in one short synchronous step of its own turn.
 */
import assert, { AssertionError } from 'node:assert/strict';
import type { Actor, ActorContext, ActorId, Envelope, TimerHandle } from '../runtime/actor';
import { ErrorCode } from '../protocol/error-codes';
import { recordsCountOf, stampLogAppendTime } from '../protocol/record-batch/view';
import { Log } from '../storage/log';
import { cleanLog, planCleaning, type CleanerConfig } from '../storage/log-cleaner';
import { readOffsetCheckpoint, readPartitionMetadata, writePartitionMetadata } from '../storage/checkpoint';
import type { ReplicaLogConfig } from '../config/topic-config';
import {
  createTimeOutOfBounds,
  keylessRecordRejection,
  toTopicCompression,
  validateProducedBatch,
} from './produce-validation';
import type { RecordError } from './produce-validation';
import { LeaderEpochCache } from './leader-epoch-cache';
import { ProducerStateTable } from './producer-state';
import * as L from '../protocol/record-batch/layout';

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
  logDirActor: ActorId;
  /** How often the recovery point and HW are sent to the log-dir actor (replica.high.watermark.checkpoint.interval.ms). */
  checkpointIntervalMs: number;
  /** How often retention runs (log.retention.check.interval.ms). */
  retentionCheckIntervalMs: number;
  /** In-sync replicas (node ids), for min.insync.replicas on acks=all. */
  isr: number[];
}

/**
 * A partition's Produce answer. `logStartOffset` is -1 for the errors Kafka answers without log
 * information (MESSAGE_TOO_LARGE, CORRUPT_MESSAGE); `recordErrors` names refused records (KIP-467).
 */
export interface ProduceReply {
  errorCode: number;
  errorMessage: string | null;
  baseOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  recordErrors: RecordError[];
}
export interface FetchReply {
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  records: Buffer | null;
}
export interface ListOffsetReply {
  errorCode: number;
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

interface PendingProduce {
  requiredOffset: number;
  envelope: Envelope;
  reply: ProduceReply;
  timer: TimerHandle;
}
interface PendingWatch {
  fetchOffset: number;
  envelope: Envelope;
  timer: TimerHandle;
}
/** A read parked until the HW reaches `requiredHw`; `run` handles it again then (without parking). */
interface DeferredRead {
  requiredHw: number;
  run: () => void;
}

export class ReplicaActor implements Actor {
  private log!: Log;
  private epochs!: LeaderEpochCache;
  private highWatermark = 0;
  /** Records appended since start, and how many of them a completed flush covers (flush.messages). */
  private appendedMessages = 0;
  private flushedMessages = 0;
  private flushScheduled = false;
  /** A Log.flushAsync is in flight (until its completion has been handled). */
  private flushing = false;
  /** stop() or delete() began: no new flush starts. */
  private closing = false;
  private flushTimer: TimerHandle | null = null;
  private checkpointTimer: TimerHandle | null = null;
  private retentionTimer: TimerHandle | null = null;
  private cleanerTimer: TimerHandle | null = null;
  /** A cleaning pass is running (at most one per replica). */
  private cleaning = false;
  /** Earliest delete horizon of a tombstone left by the last pass (-1: none), KIP-534. */
  private pendingDeleteHorizonMs = -1;
  /** Passes completed, and the last one's numbers (describe, tests). */
  private cleanerPasses = 0;
  private lastCleaning: object | null = null;
  private lastCheckpoint = '';
  private readonly pendingProduces: PendingProduce[] = [];
  private readonly pendingWatches: PendingWatch[] = [];
  private readonly deferredReads: DeferredRead[] = [];
  private readonly producerStates = new ProducerStateTable();
  private readonly dir: string;

  constructor(private readonly args: ReplicaArgs) {
    this.dir = `${args.logDir}/${args.topic}-${args.partition}`;
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
    this.log = Log.open({
      fs,
      dir: this.dir,
      logger: ctx.log,
      clock: ctx.clock,
      recoveryPoint: checkpointed('recovery-point-offset-checkpoint') ?? 0,
      logStartOffset: checkpointed('log-start-offset-checkpoint'),
      config: this.logConfig(),
      compacted: this.args.config.compactEnabled,
    });
    if (existingTopicId === null)
      writePartitionMetadata(fs, `${this.dir}/partition.metadata`, { topicId: this.args.topicId });
    this.epochs = LeaderEpochCache.load(fs, this.dir);
    this.epochs.assign(this.args.leaderEpoch, this.log.logEndOffset);
    // Whatever survived in the page cache is made durable before it becomes visible: after a restart the
    // leader's HW covers its whole (recovered) log, as Kafka's leader with ISR = {self} would.
    this.log.flush();
    this.updateHighWatermark(ctx);
    this.checkpointTimer = ctx.timers.setTimeout(() => this.checkpointTick(ctx), this.args.checkpointIntervalMs);
    this.retentionTimer = ctx.timers.setTimeout(() => this.retentionTick(ctx), this.args.retentionCheckIntervalMs);
    if (this.args.config.flushMs !== null) this.scheduleTimedFlush(ctx);
    this.scheduleCleaner(ctx);
    ctx.log.info(
      {
        dir: this.dir,
        logStartOffset: this.log.logStartOffset,
        logEndOffset: this.log.logEndOffset,
        leaderEpoch: this.args.leaderEpoch,
      },
      'replica started as leader',
    );
  }

  receive(envelope: Envelope, ctx: ActorContext): void | Promise<void> {
    switch (envelope.type) {
      case 'produce':
        return this.produce(envelope, ctx);
      case 'fetch':
        return this.fetch(envelope, ctx);
      case 'watch':
        return this.watch(envelope, ctx);
      case 'list-offsets':
        return this.listOffsets(envelope, ctx);
      case 'delete':
        return this.delete(envelope, ctx);
      case 'update-config':
        return this.updateConfig(envelope, ctx);
      case 'delete-records':
        return this.deleteRecords(envelope, ctx);
      case 'offset-for-epoch':
        ctx.reply(
          envelope,
          this.epochs.endOffsetFor((envelope.body as { leaderEpoch: number }).leaderEpoch, this.log.logEndOffset),
        );
        return;
      case 'describe':
        ctx.reply(envelope, {
          sizeBytes: this.log.sizeBytes,
          logStartOffset: this.log.logStartOffset,
          logEndOffset: this.log.logEndOffset,
          highWatermark: this.highWatermark,
          firstDirtyOffset: this.log.firstDirtyOffset,
          cleaner: { passes: this.cleanerPasses, running: this.cleaning, last: this.lastCleaning },
        });
        return;
      default:
        ctx.log.warn({ type: envelope.type, from: envelope.from }, 'replica ignores unknown message type');
    }
  }

  async stop(ctx: ActorContext): Promise<void> {
    if (!this.log) return;
    this.closing = true;
    await this.log.whenFlushed();
    if (!this.log) return; // deleted meanwhile
    this.log.flush();
    this.updateHighWatermark(ctx);
    this.failPending(ctx, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    this.clearTimers(ctx);
    try {
      await ctx.request(this.args.logDirActor, 'checkpoint', this.checkpointBody(), 5000);
    } catch (error) {
      ctx.log.warn({ error: String(error) }, 'final checkpoint not written; recovery will scan from the previous one');
    }
    this.log.close();
  }

  private produce(envelope: Envelope, ctx: ActorContext): void {
    const { records, acks, timeoutMs } = envelope.body as { records: Buffer | null; acks: number; timeoutMs: number };
    const rejection = validateProducedBatch(records, this.args.config.maxMessageBytes);
    if (rejection) {
      ctx.log.debug({ topic: this.args.topic, partition: this.args.partition, ...rejection }, 'produce rejected');
      ctx.reply(envelope, this.produceReply(rejection.errorCode, rejection.errorMessage, -1));
      return;
    }
    const { config } = this.args;
    if (acks === -1 && this.args.isr.length < config.minInsyncReplicas) {
      ctx.reply(
        envelope,
        this.produceReply(
          ErrorCode.NOT_ENOUGH_REPLICAS,
          `The size of the current ISR ${this.args.isr.length} is insufficient to satisfy the min.isr requirement of ${config.minInsyncReplicas}`,
          -1,
        ),
      );
      return;
    }
    if (config.compactEnabled) {
      const keyless = keylessRecordRejection(records!, `${this.args.topic}-${this.args.partition}`);
      if (keyless) {
        ctx.reply(envelope, {
          ...this.produceReply(keyless.errorCode, keyless.errorMessage, -1),
          recordErrors: keyless.recordErrors,
        });
        return;
      }
    }
    // A topic compression.type other than `producer` rewrites batches of other codecs (Kafka's rule).
    const stored = toTopicCompression(records!, config);
    if (!Buffer.isBuffer(stored)) {
      ctx.reply(envelope, this.produceReply(stored.errorCode, stored.errorMessage, -1));
      return;
    }
    const batch = stored;
    const nowMs = ctx.clock.nowMs();
    let logAppendTimeMs = -1;
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
          ...this.produceReply(invalid.errorCode, invalid.errorMessage, -1),
          recordErrors: invalid.recordErrors,
        });
        return;
      }
    }
    const producerId = Number(batch.readBigInt64BE(L.PRODUCER_ID));
    const producerEpoch = batch.readInt16BE(L.PRODUCER_EPOCH);
    const firstSeq = batch.readInt32BE(L.BASE_SEQUENCE);
    const lastSeq = firstSeq < 0 ? -1 : (firstSeq + batch.readInt32BE(L.LAST_OFFSET_DELTA)) % 0x80000000;
    if (producerId >= 0) {
      const check = this.producerStates.check(producerId, producerEpoch, firstSeq, lastSeq);
      if (check.kind === 'error') {
        ctx.reply(envelope, this.produceReply(check.errorCode, check.errorMessage, -1));
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
    const { baseOffset, lastOffset } = this.log.append(batch, this.args.leaderEpoch);
    if (producerId >= 0)
      this.producerStates.update(
        producerId,
        producerEpoch,
        firstSeq,
        lastSeq,
        baseOffset,
        Number(batch.readBigInt64BE(L.MAX_TIMESTAMP)),
      );
    this.appendedMessages += recordsCountOf(batch);
    const reply = { ...this.produceReply(ErrorCode.NONE, null, baseOffset), logAppendTimeMs };
    if (this.appendedMessages - this.flushedMessages >= config.flushMessages) this.flush(ctx);
    else if (!config.writeCaching) this.scheduleFlush(ctx);
    this.updateHighWatermark(ctx);
    this.replyWhenCovered(envelope, ctx, acks, timeoutMs, lastOffset, reply);
  }

  /** acks=0/1 answer now; acks=all waits in the purgatory until the HW passes `lastOffset`. */
  private replyWhenCovered(
    envelope: Envelope,
    ctx: ActorContext,
    acks: number,
    timeoutMs: number,
    lastOffset: number,
    reply: ProduceReply,
  ): void {
    if (acks !== -1 || this.highWatermark > lastOffset) {
      ctx.reply(envelope, reply);
      return;
    }
    const timer = ctx.timers.setTimeout(() => this.expireProduce(envelope, ctx), Math.max(0, timeoutMs));
    this.pendingProduces.push({ requiredOffset: lastOffset + 1, envelope, reply, timer });
  }

  private produceReply(errorCode: number, errorMessage: string | null, baseOffset: number): ProduceReply {
    // Kafka answers these without consulting the log (LogAppendInfo.UNKNOWN_LOG_APPEND_INFO).
    const withoutLog = errorCode === ErrorCode.MESSAGE_TOO_LARGE || errorCode === ErrorCode.CORRUPT_MESSAGE;
    return {
      errorCode,
      errorMessage,
      baseOffset,
      logAppendTimeMs: -1,
      logStartOffset: withoutLog ? -1 : this.log.logStartOffset,
      recordErrors: [],
    };
  }

  private expireProduce(envelope: Envelope, ctx: ActorContext): void {
    const index = this.pendingProduces.findIndex((p) => p.envelope === envelope);
    if (index < 0) return;
    const [pending] = this.pendingProduces.splice(index, 1);
    ctx.reply(envelope, {
      ...pending!.reply,
      errorCode: ErrorCode.REQUEST_TIMED_OUT,
      errorMessage: 'acks=all produce timed out waiting for the high watermark',
    });
  }

  private fetch(envelope: Envelope, ctx: ActorContext, mayDefer = true): void {
    const { fetchOffset, maxBytes, minOneBatch } = envelope.body as {
      fetchOffset: number;
      maxBytes: number;
      minOneBatch: boolean;
    };
    const base = {
      highWatermark: this.highWatermark,
      lastStableOffset: this.highWatermark,
      logStartOffset: this.log.logStartOffset,
    };
    // Kafka: below the log start or past the LEO is out of range; between the HW and the LEO is empty.
    if (fetchOffset < this.log.logStartOffset || fetchOffset > this.log.logEndOffset) {
      // Kafka's error partition response carries no offsets: HW, LSO and log start are -1.
      ctx.reply(envelope, {
        highWatermark: -1,
        lastStableOffset: -1,
        logStartOffset: -1,
        errorCode: ErrorCode.OFFSET_OUT_OF_RANGE,
        records: null,
      } satisfies FetchReply);
      return;
    }
    if (fetchOffset >= this.highWatermark) {
      if (
        mayDefer &&
        fetchOffset < this.log.logEndOffset &&
        this.deferUntilFlushed(ctx, () => this.fetch(envelope, ctx, false))
      )
        return;
      ctx.reply(envelope, { ...base, errorCode: ErrorCode.NONE, records: null } satisfies FetchReply);
      return;
    }
    const result = this.log.read(fetchOffset, maxBytes, this.highWatermark, minOneBatch);
    assert.equal(result.kind, 'ok', 'an offset between the log start and the HW is readable');
    ctx.reply(envelope, {
      ...base,
      errorCode: ErrorCode.NONE,
      records: result.kind === 'ok' ? result.records : null,
    } satisfies FetchReply);
  }

  private watch(envelope: Envelope, ctx: ActorContext): void {
    const { fetchOffset, maxWaitMs } = envelope.body as { fetchOffset: number; maxWaitMs: number };
    if (this.highWatermark > fetchOffset || fetchOffset < this.log.logStartOffset) {
      ctx.reply(envelope, { ready: true });
      return;
    }
    const timer = ctx.timers.setTimeout(
      () => {
        const index = this.pendingWatches.findIndex((w) => w.envelope === envelope);
        if (index >= 0) this.pendingWatches.splice(index, 1);
        ctx.reply(envelope, { ready: false });
      },
      Math.max(0, maxWaitMs),
    );
    this.pendingWatches.push({ fetchOffset, envelope, timer });
  }

  private listOffsets(envelope: Envelope, ctx: ActorContext, mayDefer = true): void {
    const { timestamp } = envelope.body as { timestamp: number };
    const leaderEpoch = this.args.leaderEpoch;
    if (mayDefer && timestamp !== -2 && this.deferUntilFlushed(ctx, () => this.listOffsets(envelope, ctx, false)))
      return;
    if (timestamp === -2) {
      ctx.reply(envelope, {
        errorCode: ErrorCode.NONE,
        offset: this.log.logStartOffset,
        timestamp: -1,
        leaderEpoch,
      } satisfies ListOffsetReply);
    } else if (timestamp === -1) {
      ctx.reply(envelope, {
        errorCode: ErrorCode.NONE,
        offset: this.highWatermark,
        timestamp: -1,
        leaderEpoch,
      } satisfies ListOffsetReply);
    } else if (timestamp === -3 || timestamp >= 0) {
      // -3: the record with the largest timestamp (KIP-734); >= 0: the first record at or after it (KIP-79).
      const found = timestamp === -3 ? this.log.maxTimestampOffset() : this.log.offsetForTimestamp(timestamp);
      ctx.reply(
        envelope,
        found === null || found.offset >= this.highWatermark
          ? { errorCode: ErrorCode.NONE, offset: -1, timestamp: -1, leaderEpoch: -1 }
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
        offset: -1,
        timestamp: -1,
        leaderEpoch: -1,
      } satisfies ListOffsetReply);
    }
  }

  private async delete(envelope: Envelope, ctx: ActorContext): Promise<void> {
    this.closing = true;
    this.failPending(ctx, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    this.clearTimers(ctx);
    await this.log?.whenFlushed();
    if (!this.log) {
      ctx.reply(envelope, {}); // a duplicate delete: the first one removed the log
      return;
    }
    this.failPending(ctx, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION); // produced while the flush finished
    this.log.delete();
    this.log = undefined as unknown as Log;
    try {
      await ctx.request(
        this.args.logDirActor,
        'forget',
        { topic: this.args.topic, partition: this.args.partition },
        5000,
      );
    } catch (error) {
      ctx.log.warn({ error: String(error) }, 'log-dir actor did not confirm forgetting a deleted partition');
    }
    ctx.reply(envelope, {});
    ctx.exit();
  }

  private updateConfig(envelope: Envelope, ctx: ActorContext): void {
    const { config } = envelope.body as { config: ReplicaLogConfig };
    const flushMsChanged = config.flushMs !== this.args.config.flushMs;
    this.args.config = config;
    this.log.updateConfig(this.logConfig());
    if (config.compactEnabled && !this.log.isCompacted) this.log.enableCompaction();
    this.scheduleCleaner(ctx);
    if (flushMsChanged) {
      if (this.flushTimer) ctx.timers.clearTimeout(this.flushTimer);
      this.flushTimer = null;
      if (config.flushMs !== null) this.scheduleTimedFlush(ctx);
    }
    // write.caching may have turned on: the HW can now count the page cache; or off: flush the rest.
    this.updateHighWatermark(ctx);
    if (!config.writeCaching && this.log.hasUnflushed) this.scheduleFlush(ctx);
    ctx.reply(envelope, {});
  }

  private logConfig() {
    const { segmentBytes, indexIntervalBytes, segmentMs, segmentIndexBytes } = this.args.config;
    return { segmentBytes, indexIntervalBytes, segmentMs, segmentIndexBytes };
  }

  private deleteRecords(envelope: Envelope, ctx: ActorContext, mayDefer = true): void {
    if (mayDefer && this.deferUntilFlushed(ctx, () => this.deleteRecords(envelope, ctx, false))) return;
    const requested = (envelope.body as { offset: number }).offset;
    const offset = requested === -1 ? this.highWatermark : requested;
    if (offset < 0 || offset > this.highWatermark) {
      ctx.reply(envelope, { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: -1 });
      return;
    }
    const lowWatermark =
      offset > this.log.logStartOffset ? this.log.deleteRecordsBefore(offset) : this.log.logStartOffset;
    this.checkpointSoon(ctx);
    ctx.reply(envelope, { errorCode: ErrorCode.NONE, lowWatermark });
  }

  /** Retention (log.retention.check.interval.ms): deletes whole segments past retention.ms / retention.bytes. */
  private retentionTick(ctx: ActorContext): void {
    if (!this.log) return;
    const { config } = this.args;
    if (config.deleteEnabled && (config.retentionMs >= 0 || config.retentionBytes >= 0)) {
      const before = this.log.logStartOffset;
      const result = this.log.deleteRetentionSegments(
        ctx.clock.nowMs(),
        config.retentionMs,
        config.retentionBytes,
        this.highWatermark,
      );
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

  /** Arms the cleaner timer when compaction is on and it is not armed (log.cleaner.backoff.ms). */
  private scheduleCleaner(ctx: ActorContext): void {
    const { config } = this.args;
    if (this.cleanerTimer !== null || !config.compactEnabled || !config.cleanerEnable) return;
    this.cleanerTimer = ctx.timers.setTimeout(
      () => {
        this.cleanerTimer = null;
        if (!this.log) return;
        this.cleanerTick(ctx);
        this.scheduleCleaner(ctx);
      },
      Math.max(1, config.cleanerBackoffMs),
    );
  }

  /** Plans a cleaning and, if there is one and none runs, starts it (the CPU work runs on ctx.cpu). */
  private cleanerTick(ctx: ActorContext): void {
    const { config } = this.args;
    if (this.cleaning || !config.compactEnabled || !config.cleanerEnable) return;
    const cleanerConfig: CleanerConfig = {
      minCleanableDirtyRatio: config.minCleanableDirtyRatio,
      minCompactionLagMs: config.minCompactionLagMs,
      maxCompactionLagMs: config.maxCompactionLagMs,
      deleteRetentionMs: config.deleteRetentionMs,
      segmentBytes: config.segmentBytes,
    };
    const nowMs = ctx.clock.nowMs();
    const plan = planCleaning(this.log, {
      config: cleanerConfig,
      highWatermark: this.highWatermark,
      nowMs,
      pendingDeleteHorizonMs: this.pendingDeleteHorizonMs,
    });
    if (plan === null) return;
    const log = this.log;
    this.cleaning = true;
    const startedMs = ctx.clock.monotonicMs();
    const where = { topic: this.args.topic, partition: this.args.partition };
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
      isCurrent: () => this.log === log && !log.isClosed,
      logger: ctx.log,
    })
      .then((outcome) => {
        this.cleaning = false;
        if (this.log !== log) return;
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
        ctx.log.error({ ...where, error: String(error) }, 'log cleaning failed; retrying after log.cleaner.backoff.ms');
      });
  }

  /** Sends the checkpoint now (log start offset moved), so a restart does not serve deleted records. */
  private checkpointSoon(ctx: ActorContext): void {
    const body = this.checkpointBody();
    this.lastCheckpoint = `${body.recoveryPoint}/${body.highWatermark}/${body.logStartOffset}`;
    ctx.send(this.args.logDirActor, 'checkpoint', body);
  }

  private clearTimers(ctx: ActorContext): void {
    for (const timer of [this.checkpointTimer, this.flushTimer, this.retentionTimer, this.cleanerTimer])
      if (timer) ctx.timers.clearTimeout(timer);
    this.cleanerTimer = null;
    this.checkpointTimer = null;
    this.flushTimer = null;
    this.retentionTimer = null;
  }

  /**
   * Group commit: one fsync for every append handled before the timer fires. While a flush is in
   * flight nothing is scheduled: its completion starts the next one.
   */
  private scheduleFlush(ctx: ActorContext): void {
    if (this.flushScheduled || this.flushing) return;
    this.flushScheduled = true;
    ctx.timers.setTimeout(() => {
      this.flushScheduled = false;
      this.startFlush(ctx);
    }, 0);
  }

  private scheduleTimedFlush(ctx: ActorContext): void {
    this.flushTimer = ctx.timers.setTimeout(
      () => {
        if (!this.log) return;
        if (this.log.hasUnflushed) this.startFlush(ctx);
        this.scheduleTimedFlush(ctx);
      },
      Math.max(1, this.args.config.flushMs ?? 1000),
    );
  }

  /**
   * Starts an asynchronous flush unless one is in flight. Its completion comes back through a
   * zero-delay timer (the actor's own turn; never after a crash); an fsync error is thrown there,
   * crashing the actor's worker as a synchronous fsync error would.
   */
  private startFlush(ctx: ActorContext): void {
    if (this.flushing || this.closing || !this.log) return;
    const messages = this.appendedMessages;
    const flushed = this.log.flushAsync();
    this.flushing = true;
    flushed.then(
      () => ctx.timers.setTimeout(() => this.onFlushed(ctx, messages), 0),
      (error: unknown) =>
        ctx.timers.setTimeout(() => {
          this.flushing = false;
          throw error;
        }, 0),
    );
  }

  /**
   * Parks a read until the HW covers the LEO as of now, when appends are still being fsynced
   * (write.caching=false): it then sees them, as it would have had the fsync blocked the actor.
   * Returns false (handle it now) when nothing is pending.
   */
  private deferUntilFlushed(ctx: ActorContext, run: () => void): boolean {
    const leo = this.log.logEndOffset;
    if (this.highWatermark >= leo || this.closing) return false;
    this.deferredReads.push({ requiredHw: leo, run });
    this.scheduleFlush(ctx); // normally one is already scheduled or in flight
    return true;
  }

  /** A flush started when `messages` records were appended has completed. */
  private onFlushed(ctx: ActorContext, messages: number): void {
    this.flushing = false;
    if (this.closing || !this.log) return;
    this.flushedMessages = Math.max(this.flushedMessages, messages);
    this.updateHighWatermark(ctx);
    // Pipelining: everything appended while that fsync ran goes into the next one, now.
    if (!this.args.config.writeCaching && this.log.hasUnflushed) this.startFlush(ctx);
  }

  /** Synchronous flush (flush.messages): fsyncs everything appended so far before returning. */
  private flush(_ctx: ActorContext): void {
    this.log.flush();
    this.flushedMessages = this.appendedMessages;
  }

  /**
   * HW = min over the ISR of each member's counted end offset. With ISR = {self}: the LEO under
   * write.caching=true, else the recovery point (everything below it is fsynced).
   */
  private updateHighWatermark(ctx: ActorContext): void {
    const counted = this.args.config.writeCaching ? this.log.logEndOffset : this.log.recoveryPoint;
    assert.ok(counted <= this.log.logEndOffset, 'HW never passes the LEO');
    if (counted <= this.highWatermark) return;
    this.highWatermark = counted;
    this.completePending(ctx);
  }

  private completePending(ctx: ActorContext): void {
    for (let i = 0; i < this.deferredReads.length;) {
      const read = this.deferredReads[i]!;
      if (read.requiredHw <= this.highWatermark) {
        this.deferredReads.splice(i, 1);
        read.run();
      } else i++;
    }
    for (let i = 0; i < this.pendingProduces.length;) {
      const pending = this.pendingProduces[i]!;
      if (pending.requiredOffset <= this.highWatermark) {
        ctx.timers.clearTimeout(pending.timer);
        this.pendingProduces.splice(i, 1);
        ctx.reply(pending.envelope, pending.reply);
      } else i++;
    }
    for (let i = 0; i < this.pendingWatches.length;) {
      const watch = this.pendingWatches[i]!;
      if (this.highWatermark > watch.fetchOffset) {
        ctx.timers.clearTimeout(watch.timer);
        this.pendingWatches.splice(i, 1);
        ctx.reply(watch.envelope, { ready: true });
      } else i++;
    }
  }

  private failPending(ctx: ActorContext, errorCode: number): void {
    // Parked reads are answered with what the HW covers now.
    for (const read of this.deferredReads.splice(0)) read.run();
    for (const pending of this.pendingProduces.splice(0)) {
      ctx.timers.clearTimeout(pending.timer);
      ctx.reply(pending.envelope, {
        ...pending.reply,
        errorCode,
        errorMessage: 'replica stopped before the high watermark covered the batch',
      });
    }
    for (const watch of this.pendingWatches.splice(0)) {
      ctx.timers.clearTimeout(watch.timer);
      ctx.reply(watch.envelope, { ready: true });
    }
  }

  private checkpointBody() {
    return {
      topic: this.args.topic,
      partition: this.args.partition,
      recoveryPoint: this.log.recoveryPoint,
      highWatermark: this.highWatermark,
      logStartOffset: this.log.logStartOffset,
    };
  }

  private checkpointTick(ctx: ActorContext): void {
    if (!this.log) return;
    const body = this.checkpointBody();
    const key = `${body.recoveryPoint}/${body.highWatermark}/${body.logStartOffset}`;
    if (key !== this.lastCheckpoint) {
      this.lastCheckpoint = key;
      ctx.send(this.args.logDirActor, 'checkpoint', body);
    }
    this.checkpointTimer = ctx.timers.setTimeout(() => this.checkpointTick(ctx), this.args.checkpointIntervalMs);
  }
}

/** Actor factory registered as kind `replica` (src/runtime/registry.ts). */
export function createReplicaActor(args: ReplicaArgs): Actor {
  return new ReplicaActor(args);
}
