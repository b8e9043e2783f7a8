/**
 * The messages of the two actors in this folder, each in its own map: a replica actor
 * (replica-actor.ts, {@link ReplicaMessages}) and a log-dir actor (log-dir-actor.ts,
 * {@link LogDirMessages}), with the id helpers that type their ids (runtime/actor.ts ActorRef), so a
 * message of the wrong kind, body or reply, or to the wrong actor, does not compile.
 *
 * Senders: the network handlers (produce, fetch, list-offsets, delete-records,
 * offset-for-leader-epoch), the broker (`replica.describe`, `replica.update-config`,
 * `replica.delete`), the group coordinator's partition writer and loader (`replica.produce`,
 * `replica.fetch`), and the replica itself (`log-dir.*`).
 */
import { actorRef } from '../runtime/actor';
import type { ActorRef } from '../runtime/actor';
import type { ReplicaLogConfig } from '../config/topic-config';
import type { LogLoadSummary } from '../storage/log';
import type { CleanerStatus } from './cleaner-schedule';
import type { RecordError } from './produce-validation';

/**
 * A partition's Produce answer. `logStartOffset` is INVALID_OFFSET (-1) for the errors Kafka answers without log
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

/** A partition's Fetch answer; `records` stop at the HW (null when there is nothing to read). */
export interface FetchReply {
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  records: Buffer | null;
}

/** A partition's ListOffsets answer (offset and timestamp -1 when no record matches). */
export interface ListOffsetReply {
  errorCode: number;
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

/** What `replica.describe` answers: sizes, offsets and the cleaner's numbers (tests and the broker's log-dir sizes). */
export interface ReplicaDescription {
  sizeBytes: number;
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
  /** The recovery point: every offset below it is fsynced. */
  fsyncedOffset: number;
  firstDirtyOffset: number;
  cleaner: CleanerStatus;
  /** What opening the log found and did (the broker sums these into its start-up line). */
  recovery: LogLoadSummary;
}

/** An empty reply: the request was done. */
export type Done = Record<string, never>;

/** Replica actor message kind -> body and reply. */
export type ReplicaMessages = {
  /** `records` is one record batch (null is answered CORRUPT_MESSAGE); acks -1 waits for the HW up to `timeoutMs`. */
  'replica.produce': { body: { records: Buffer | null; acks: number; timeoutMs: number }; reply: ProduceReply };
  'replica.fetch': { body: { fetchOffset: number; maxBytes: number; minOneBatch: boolean }; reply: FetchReply };
  /** A fetch long poll: ready once the HW passes `fetchOffset` (or it fell below the log start), or at `maxWaitMs`. */
  'replica.watch': { body: { fetchOffset: number; maxWaitMs: number }; reply: { ready: boolean } };
  /**
   * EARLIEST_TIMESTAMP, LATEST_TIMESTAMP (= HW), MAX_TIMESTAMP, or >= 0 by time (protocol/sentinels.ts).
   * `toLogEnd`: bounded by the LEO instead of the HW (Kafka's answer, with no isolation level, to a
   * ListOffsets from a replica id other than the consumer's).
   */
  'replica.list-offsets': { body: { timestamp: number; toLogEnd?: boolean }; reply: ListOffsetReply };
  /** Closes and removes the partition directory; the actor then exits. */
  'replica.delete': { body: Record<string, never>; reply: Done };
  /** The topic's configs changed. */
  'replica.update-config': { body: { config: ReplicaLogConfig }; reply: Done };
  /** DeleteRecords (KIP-107); `offset` DELETE_RECORDS_HIGH_WATERMARK means the HW. */
  'replica.delete-records': { body: { offset: number }; reply: { errorCode: number; lowWatermark: number } };
  /** OffsetForLeaderEpoch (KIP-101). */
  'replica.offset-for-epoch': { body: { leaderEpoch: number }; reply: { leaderEpoch: number; endOffset: number } };
  'replica.describe': { body: Record<string, never>; reply: ReplicaDescription };
};

/** A partition's recovery point, HW and log start offset, as the log-dir actor checkpoints them. */
export interface PartitionCheckpointBody {
  topic: string;
  partition: number;
  recoveryPoint: number;
  highWatermark: number;
  logStartOffset: number;
}

/** Log-dir actor message kind -> body and reply. */
export type LogDirMessages = {
  /** Sent (periodically) or requested (the final one on stop: answered once the files are written). */
  'log-dir.checkpoint': { body: PartitionCheckpointBody; reply: Done };
  /** A partition was deleted: its entries leave the checkpoint files. */
  'log-dir.forget': { body: { topic: string; partition: number }; reply: Done };
};

/** The id of the replica of `topicId`'s partition `partition` on broker `brokerId`. */
export function replicaActorId(brokerId: number, topicId: string, partition: number): ActorRef<ReplicaMessages> {
  return actorRef<ReplicaMessages>(`replica/${brokerId}/${topicId}/${partition}`);
}

/** The id of the log-dir actor of entry `index` of broker `brokerId`'s log.dirs. */
export function logDirActorId(brokerId: number, index: number): ActorRef<LogDirMessages> {
  return actorRef<LogDirMessages>(`log-dir/${brokerId}/${index}`);
}
