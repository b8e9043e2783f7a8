/**
 * The log-dir actor: one per entry of log.dirs. It owns the directory-level files that many replicas
 * share, so each has a single writer (STYLE.md habit 5):
 * - `meta.properties` (checked on start: a log dir that belongs to another cluster or node is refused,
 *   as Kafka does; written when missing),
 * - `recovery-point-offset-checkpoint`, `replication-offset-checkpoint` (HW) and
 *   `log-start-offset-checkpoint`, rewritten atomically (temp + fsync + rename + fsync(dir)).
 *
 * Messages (messages.ts LogDirMessages): `log-dir.checkpoint` {topic, partition, recoveryPoint,
 * highWatermark, logStartOffset} (send or request; a request is answered after the files are written),
 * `log-dir.forget` {topic, partition} (request).
 *
 * Writes are coalesced: a message updates the table and arms a zero-delay timer, so every report that
 * reached the mailbox meanwhile goes into one write of the three files, and the requests among them are
 * answered after it. With N partitions reporting at once (each replica's periodic checkpoint, a
 * broker's shutdown) that is one write of N entries instead of N writes of N entries each (issue 13:
 * 1,000 replicas stopping made 3,000 fsynced rewrites and timed their final checkpoints out).
 *
 * A checkpoint the disk refuses (ENOSPC, EIO) is an operating error: the previous file stays (the
 * atomic replace removes its temp file), a warning is logged once per run of failures, and the write
 * is retried every CHECKPOINT_RETRY_MS until it succeeds (checkpoints are hints bounded by what the
 * logs hold, so a stale one costs only a longer recovery scan).
 */
import type { Actor, ActorContext, ActorRef, Envelope, EnvelopeOf } from '../runtime/actor';
import type { TimerHandle } from '../io/clock';
import { isIoError } from '../storage/storage-error';
import type { LogDirMessages } from './messages';
import {
  readMetaProperties,
  readOffsetCheckpoint,
  writeMetaProperties,
  writeOffsetCheckpoint,
} from '../storage/checkpoint';

export interface LogDirArgs {
  logDir: string;
  clusterId: string;
  nodeId: number;
  directoryId: string;
}

/**
 * Asks log-dir actor `actor` to drop `topic`-`partition`'s checkpoint entries (`log-dir.forget`);
 * resolves once it has rewritten its files, or after `timeoutMs`. A refusal or no answer is warned
 * about, never thrown: the caller's removal of the partition goes on.
 */
export async function forgetCheckpointEntries(
  ctx: ActorContext,
  actor: ActorRef<LogDirMessages>,
  topic: string,
  partition: number,
  timeoutMs: number,
): Promise<void> {
  try {
    await ctx.request(actor, 'log-dir.forget', { topic, partition }, timeoutMs);
  } catch (error) {
    ctx.log.warn({ topic, partition, error: String(error) }, 'log-dir actor did not confirm forgetting a partition');
  }
}

/** How long after a checkpoint write failed on the disk the log-dir actor tries again. */
export const CHECKPOINT_RETRY_MS = 1000;

interface PartitionCheckpoint {
  recoveryPoint: number;
  highWatermark: number;
  logStartOffset: number;
}

export class LogDirActor implements Actor<LogDirMessages> {
  private readonly partitions = new Map<string, PartitionCheckpoint>();
  /** The retry of a checkpoint write the disk refused, or null. */
  private retryTimer: TimerHandle | null = null;
  /** The last write failed (one warning per run of failures). */
  private failing = false;
  /** The coalescing write armed by the first message since the last write, or null. */
  private writeTimer: TimerHandle | null = null;
  /** Requests answered once the coalesced write has run. */
  private readonly waiting: EnvelopeOf<LogDirMessages>[] = [];

  constructor(private readonly args: LogDirArgs) {}

  start(ctx: ActorContext): void {
    const { fs } = ctx;
    const { logDir, clusterId, nodeId } = this.args;
    fs.mkdirp(logDir);
    const meta = readMetaProperties(fs, `${logDir}/meta.properties`, ctx.log);
    if (meta) {
      if (meta.clusterId !== undefined && meta.clusterId !== clusterId) {
        throw new Error(
          `log dir ${logDir} belongs to cluster ${meta.clusterId}, not ${clusterId}: refusing it (meta.properties)`,
        );
      }
      if (meta.nodeId !== undefined && meta.nodeId !== nodeId) {
        throw new Error(
          `log dir ${logDir} belongs to node ${meta.nodeId}, not ${nodeId}: refusing it (meta.properties)`,
        );
      }
    } else {
      writeMetaProperties(fs, `${logDir}/meta.properties`, {
        version: 1,
        clusterId,
        nodeId,
        directoryId: this.args.directoryId,
      });
    }
    // Start from what the files say so partitions that do not report again keep their entries.
    const read = (file: string) =>
      new Map(
        readOffsetCheckpoint(fs, `${logDir}/${file}`, ctx.log).map((e) => [`${e.topic} ${e.partition}`, e.offset]),
      );
    const hw = read('replication-offset-checkpoint');
    const start = read('log-start-offset-checkpoint');
    for (const [key, recoveryPoint] of read('recovery-point-offset-checkpoint')) {
      this.partitions.set(key, { recoveryPoint, highWatermark: hw.get(key) ?? 0, logStartOffset: start.get(key) ?? 0 });
    }
  }

  receive(envelope: EnvelopeOf<LogDirMessages>, ctx: ActorContext): void {
    // The runtime delivers any kind sent to this id: `unknown` keeps a handle for the default branch.
    const unknown: Envelope = envelope;
    switch (envelope.type) {
      case 'log-dir.checkpoint': {
        const { topic, partition, recoveryPoint, highWatermark, logStartOffset } = envelope.body;
        this.partitions.set(`${topic} ${partition}`, { recoveryPoint, highWatermark, logStartOffset });
        break;
      }
      case 'log-dir.forget':
        this.partitions.delete(`${envelope.body.topic} ${envelope.body.partition}`);
        break;
      default:
        ctx.log.warn({ type: unknown.type }, 'log-dir actor ignores unknown message type');
        return;
    }
    if (envelope.corr !== undefined) this.waiting.push(envelope);
    this.writeTimer ??= ctx.timers.setTimeout(() => {
      this.writeTimer = null;
      this.writeCheckpoints(ctx);
      for (const waiter of this.waiting.splice(0)) ctx.reply(waiter, {});
    }, 0);
  }

  stop(ctx: ActorContext): void {
    if (this.retryTimer !== null) ctx.timers.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.writeTimer !== null) ctx.timers.clearTimeout(this.writeTimer);
    this.writeTimer = null;
    try {
      this.writeCheckpointFiles(ctx);
    } catch (error) {
      if (!isIoError(error)) throw error;
      ctx.log.warn({ logDir: this.args.logDir, error: error.message }, 'final checkpoint not written (disk error)');
    }
    for (const waiter of this.waiting.splice(0)) ctx.reply(waiter, {});
  }

  /** Writes the three checkpoint files; a disk error is logged and retried later (module doc). */
  private writeCheckpoints(ctx: ActorContext): void {
    try {
      this.writeCheckpointFiles(ctx);
    } catch (error) {
      if (!isIoError(error)) throw error;
      if (!this.failing)
        ctx.log.warn(
          { logDir: this.args.logDir, errno: error.code, error: error.message },
          'checkpoint write failed on the disk; keeping the previous files and retrying',
        );
      this.failing = true;
      this.retryTimer ??= ctx.timers.setTimeout(() => {
        this.retryTimer = null;
        this.writeCheckpoints(ctx);
      }, CHECKPOINT_RETRY_MS);
      return;
    }
    if (this.failing) ctx.log.info({ logDir: this.args.logDir }, 'checkpoint written again');
    this.failing = false;
  }

  private writeCheckpointFiles(ctx: ActorContext): void {
    const pick = (field: keyof PartitionCheckpoint) =>
      [...this.partitions].map(([key, value]) => {
        const split = key.lastIndexOf(' ');
        return { topic: key.slice(0, split), partition: Number(key.slice(split + 1)), offset: value[field] };
      });
    const { logDir } = this.args;
    writeOffsetCheckpoint(ctx.fs, `${logDir}/recovery-point-offset-checkpoint`, pick('recoveryPoint'));
    writeOffsetCheckpoint(ctx.fs, `${logDir}/replication-offset-checkpoint`, pick('highWatermark'));
    writeOffsetCheckpoint(ctx.fs, `${logDir}/log-start-offset-checkpoint`, pick('logStartOffset'));
  }
}

/** Actor factory registered as kind `log-dir`. */
export function createLogDirActor(args: LogDirArgs): Actor<LogDirMessages> {
  return new LogDirActor(args);
}
