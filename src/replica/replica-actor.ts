/**
 * A partition replica actor (DESIGN.md "Replica actor"). This issue has one broker, so every replica
 * is the leader of its partition with ISR = {itself}; the high watermark logic is already the general
 * one: HW = min over the ISR of what each member counts toward it (with write.caching=false, only
 * fsynced bytes: the durability contract), so followers slot in later.
 *
 * Messages (request -> reply):
 * - `produce` {records: Buffer|null, acks: -1|0|1, timeoutMs} -> ProduceReply
 * - `fetch` {fetchOffset, maxBytes, minOneBatch} -> FetchReply (reads stop at the HW)
 * - `watch` {fetchOffset, maxWaitMs} -> {ready: boolean} once the HW passes fetchOffset, or at maxWaitMs
 * - `list-offsets` {timestamp} -> ListOffsetReply (-2 earliest, -1 latest = HW, >= 0 by time)
 * - `delete` {} -> {} after closing and removing the partition directory; the actor then exits
 */
import assert from 'node:assert/strict';
import type { Actor, ActorContext, ActorId, Envelope, TimerHandle } from '../runtime/actor';
import { ErrorCode } from '../protocol/error-codes';
import { recordsCountOf } from '../protocol/record-batch/view';
import { Log } from '../storage/log';
import { readOffsetCheckpoint, readPartitionMetadata, writePartitionMetadata } from '../storage/checkpoint';
import type { ReplicaLogConfig } from '../config/topic-config';
import { validateProducedBatch } from './produce-validation';
import { LeaderEpochCache } from './leader-epoch-cache';

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
}

export interface ProduceReply { errorCode: number; errorMessage: string | null; baseOffset: number; logAppendTimeMs: number; logStartOffset: number }
export interface FetchReply { errorCode: number; highWatermark: number; lastStableOffset: number; logStartOffset: number; records: Buffer | null }
export interface ListOffsetReply { errorCode: number; offset: number; timestamp: number; leaderEpoch: number }

interface PendingProduce { requiredOffset: number; envelope: Envelope; reply: ProduceReply; timer: TimerHandle }
interface PendingWatch { fetchOffset: number; envelope: Envelope; timer: TimerHandle }

export class ReplicaActor implements Actor {
  private log!: Log;
  private epochs!: LeaderEpochCache;
  private highWatermark = 0;
  private unflushedMessages = 0;
  private flushScheduled = false;
  private flushTimer: TimerHandle | null = null;
  private checkpointTimer: TimerHandle | null = null;
  private lastCheckpoint = '';
  private readonly pendingProduces: PendingProduce[] = [];
  private readonly pendingWatches: PendingWatch[] = [];
  private readonly dir: string;

  constructor(private readonly args: ReplicaArgs) {
    this.dir = `${args.logDir}/${args.topic}-${args.partition}`;
  }

  start(ctx: ActorContext): void {
    const { fs } = ctx;
    const existingTopicId = fs.exists(this.dir) ? readPartitionMetadata(fs, `${this.dir}/partition.metadata`, ctx.log)?.topicId ?? null : null;
    if (existingTopicId !== null && existingTopicId !== this.args.topicId) {
      ctx.log.warn({ dir: this.dir, existingTopicId, topicId: this.args.topicId }, 'partition directory belongs to a deleted topic of the same name; removing it');
      fs.rmrf(this.dir);
    }
    const checkpoints = readOffsetCheckpoint(fs, `${this.args.logDir}/recovery-point-offset-checkpoint`, ctx.log);
    const recoveryPoint = checkpoints.find((c) => c.topic === this.args.topic && c.partition === this.args.partition)?.offset ?? 0;
    this.log = Log.open({
      fs, dir: this.dir, logger: ctx.log, clock: ctx.clock, recoveryPoint,
      config: { segmentBytes: this.args.config.segmentBytes, indexIntervalBytes: this.args.config.indexIntervalBytes },
    });
    if (existingTopicId === null) writePartitionMetadata(fs, `${this.dir}/partition.metadata`, { topicId: this.args.topicId });
    this.epochs = LeaderEpochCache.load(fs, this.dir);
    this.epochs.assign(this.args.leaderEpoch, this.log.logEndOffset);
    // Whatever survived in the page cache is made durable before it becomes visible: after a restart the
    // leader's HW covers its whole (recovered) log, as Kafka's leader with ISR = {self} would.
    this.log.flush();
    this.updateHighWatermark(ctx);
    this.checkpointTimer = ctx.timers.setTimeout(() => this.checkpointTick(ctx), this.args.checkpointIntervalMs);
    if (this.args.config.flushMs !== null) this.scheduleTimedFlush(ctx);
    ctx.log.info({ dir: this.dir, logStartOffset: this.log.logStartOffset, logEndOffset: this.log.logEndOffset, leaderEpoch: this.args.leaderEpoch }, 'replica started as leader');
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
      default:
        ctx.log.warn({ type: envelope.type, from: envelope.from }, 'replica ignores unknown message type');
    }
  }

  async stop(ctx: ActorContext): Promise<void> {
    if (!this.log) return;
    this.log.flush();
    this.updateHighWatermark(ctx);
    this.failPending(ctx, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    if (this.checkpointTimer) ctx.timers.clearTimeout(this.checkpointTimer);
    if (this.flushTimer) ctx.timers.clearTimeout(this.flushTimer);
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
    const batch = records!;
    const { baseOffset, lastOffset } = this.log.append(batch, this.args.leaderEpoch);
    this.unflushedMessages += recordsCountOf(batch);
    const reply = this.produceReply(ErrorCode.NONE, null, baseOffset);
    if (this.unflushedMessages >= this.args.config.flushMessages) this.flush(ctx);
    else if (!this.args.config.writeCaching) this.scheduleFlush(ctx);
    this.updateHighWatermark(ctx);
    if (acks !== -1 || this.highWatermark > lastOffset) {
      ctx.reply(envelope, reply);
      return;
    }
    const timer = ctx.timers.setTimeout(() => this.expireProduce(envelope, ctx), Math.max(0, timeoutMs));
    this.pendingProduces.push({ requiredOffset: lastOffset + 1, envelope, reply, timer });
  }

  private produceReply(errorCode: number, errorMessage: string | null, baseOffset: number): ProduceReply {
    return { errorCode, errorMessage, baseOffset, logAppendTimeMs: -1, logStartOffset: this.log.logStartOffset };
  }

  private expireProduce(envelope: Envelope, ctx: ActorContext): void {
    const index = this.pendingProduces.findIndex((p) => p.envelope === envelope);
    if (index < 0) return;
    const [pending] = this.pendingProduces.splice(index, 1);
    ctx.reply(envelope, { ...pending!.reply, errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: 'acks=all produce timed out waiting for the high watermark' });
  }

  private fetch(envelope: Envelope, ctx: ActorContext): void {
    const { fetchOffset, maxBytes, minOneBatch } = envelope.body as { fetchOffset: number; maxBytes: number; minOneBatch: boolean };
    const base = { highWatermark: this.highWatermark, lastStableOffset: this.highWatermark, logStartOffset: this.log.logStartOffset };
    // Kafka: below the log start or past the LEO is out of range; between the HW and the LEO is empty.
    if (fetchOffset < this.log.logStartOffset || fetchOffset > this.log.logEndOffset) {
      ctx.reply(envelope, { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, records: null } satisfies FetchReply);
      return;
    }
    if (fetchOffset >= this.highWatermark) {
      ctx.reply(envelope, { ...base, errorCode: ErrorCode.NONE, records: null } satisfies FetchReply);
      return;
    }
    const result = this.log.read(fetchOffset, maxBytes, this.highWatermark, minOneBatch);
    assert.equal(result.kind, 'ok', 'an offset between the log start and the HW is readable');
    ctx.reply(envelope, { ...base, errorCode: ErrorCode.NONE, records: result.kind === 'ok' ? result.records : null } satisfies FetchReply);
  }

  private watch(envelope: Envelope, ctx: ActorContext): void {
    const { fetchOffset, maxWaitMs } = envelope.body as { fetchOffset: number; maxWaitMs: number };
    if (this.highWatermark > fetchOffset || fetchOffset < this.log.logStartOffset) {
      ctx.reply(envelope, { ready: true });
      return;
    }
    const timer = ctx.timers.setTimeout(() => {
      const index = this.pendingWatches.findIndex((w) => w.envelope === envelope);
      if (index >= 0) this.pendingWatches.splice(index, 1);
      ctx.reply(envelope, { ready: false });
    }, Math.max(0, maxWaitMs));
    this.pendingWatches.push({ fetchOffset, envelope, timer });
  }

  private listOffsets(envelope: Envelope, ctx: ActorContext): void {
    const { timestamp } = envelope.body as { timestamp: number };
    const leaderEpoch = this.args.leaderEpoch;
    if (timestamp === -2) {
      ctx.reply(envelope, { errorCode: ErrorCode.NONE, offset: this.log.logStartOffset, timestamp: -1, leaderEpoch } satisfies ListOffsetReply);
    } else if (timestamp === -1) {
      ctx.reply(envelope, { errorCode: ErrorCode.NONE, offset: this.highWatermark, timestamp: -1, leaderEpoch } satisfies ListOffsetReply);
    } else if (timestamp >= 0) {
      // Batch granularity until the time index lands: the base offset of the first batch whose
      // maxTimestamp reaches the target; clients skip the earlier records of that batch themselves.
      const found = this.log.offsetForTimestamp(timestamp);
      ctx.reply(envelope, found === null || found >= this.highWatermark
        ? { errorCode: ErrorCode.NONE, offset: -1, timestamp: -1, leaderEpoch: -1 }
        : { errorCode: ErrorCode.NONE, offset: found, timestamp, leaderEpoch } satisfies ListOffsetReply);
    } else {
      ctx.reply(envelope, { errorCode: ErrorCode.INVALID_REQUEST, offset: -1, timestamp: -1, leaderEpoch: -1 } satisfies ListOffsetReply);
    }
  }

  private async delete(envelope: Envelope, ctx: ActorContext): Promise<void> {
    this.failPending(ctx, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    if (this.checkpointTimer) ctx.timers.clearTimeout(this.checkpointTimer);
    if (this.flushTimer) ctx.timers.clearTimeout(this.flushTimer);
    this.checkpointTimer = null;
    this.flushTimer = null;
    this.log.delete();
    this.log = undefined as unknown as Log;
    try {
      await ctx.request(this.args.logDirActor, 'forget', { topic: this.args.topic, partition: this.args.partition }, 5000);
    } catch (error) {
      ctx.log.warn({ error: String(error) }, 'log-dir actor did not confirm forgetting a deleted partition');
    }
    ctx.reply(envelope, {});
    ctx.exit();
  }

  /** Group commit: one fsync for every append handled before the timer fires. */
  private scheduleFlush(ctx: ActorContext): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    ctx.timers.setTimeout(() => {
      this.flushScheduled = false;
      if (!this.log) return;
      this.flush(ctx);
      this.updateHighWatermark(ctx);
    }, 0);
  }

  private scheduleTimedFlush(ctx: ActorContext): void {
    this.flushTimer = ctx.timers.setTimeout(() => {
      if (!this.log) return;
      if (this.log.hasUnflushed) {
        this.flush(ctx);
        this.updateHighWatermark(ctx);
      }
      this.scheduleTimedFlush(ctx);
    }, Math.max(1, this.args.config.flushMs ?? 1000));
  }

  private flush(_ctx: ActorContext): void {
    this.log.flush();
    this.unflushedMessages = 0;
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
    for (const pending of this.pendingProduces.splice(0)) {
      ctx.timers.clearTimeout(pending.timer);
      ctx.reply(pending.envelope, { ...pending.reply, errorCode, errorMessage: 'replica stopped before the high watermark covered the batch' });
    }
    for (const watch of this.pendingWatches.splice(0)) {
      ctx.timers.clearTimeout(watch.timer);
      ctx.reply(watch.envelope, { ready: true });
    }
  }

  private checkpointBody() {
    return {
      topic: this.args.topic, partition: this.args.partition,
      recoveryPoint: this.log.recoveryPoint, highWatermark: this.highWatermark, logStartOffset: this.log.logStartOffset,
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
