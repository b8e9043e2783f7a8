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
import type { LogLoadSummary, SegmentRange } from '../storage/log';

export type { SegmentRange } from '../storage/log';
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

/**
 * A partition's Fetch answer; `records` stop at the HW for a consumer and at the LEO for a follower
 * (null when there is nothing to read). `divergingEpoch` (KIP-320): set for a follower whose
 * `lastFetchedEpoch` ends before its fetch offset in the leader's epoch cache; it truncates to
 * `endOffset` (of the largest common epoch) and fetches again. Errors: OFFSET_OUT_OF_RANGE,
 * FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH (currentLeaderEpoch older / newer than the replica's),
 * NOT_LEADER_OR_FOLLOWER (this replica does not lead), KAFKA_STORAGE_ERROR.
 */
export interface FetchReply {
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  records: Buffer | null;
  /**
   * Instead of `records` (then null), for a consumer's fetch that asked for `segmentRanges`: where
   * the same batches are in the segment files, one range per segment in offset order. The asker
   * reads them itself; when it cannot (a segment deleted or swapped since), it asks again without
   * `segmentRanges`.
   */
  ranges?: SegmentRange[];
  divergingEpoch?: { epoch: number; endOffset: number };
}

/**
 * What a follower tells its leader in each fetch (Kafka's replica fetch fields: replica id and broker
 * epoch, KIP-903; lastFetchedEpoch, KIP-320), plus Skiff's `fsyncedOffset`: with write.caching=false
 * a follower counts toward the HW only with what it has fsynced (DESIGN.md "Durability contract").
 * The fetch offset is the follower's LEO.
 */
export interface FollowerFetchState {
  brokerId: number;
  brokerEpoch: number;
  /** The epoch of the last batch in the follower's log (-1 when empty). */
  lastFetchedEpoch: number;
  /** Every offset below this is fsynced on the follower. */
  fsyncedOffset: number;
}

/**
 * A replica's role in its partition, as the controller last published it (pushed by the replica
 * manager in `replica.update-role`, and answered to a restarted replica's `replica-manager.replica-state`).
 * The replica leads when `leader` is its own broker id, else follows `leader` (-1: none; it waits).
 */
export interface PartitionRole {
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  /** Assigned replicas (AR), node ids. */
  replicas: number[];
  isr: number[];
  /** The topic's effective config (topic overrides over broker defaults) as of this role. */
  config: ReplicaLogConfig;
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
  /**
   * The LEO right after this replica's own recovery when it opened its log at start (torn and
   * unsynced tails dropped, a storage failure's cut back to its durable point done), before any
   * truncation a leader ordered; -1 when unknown. The checker's hook for DESIGN.md invariant 6: it
   * is at least the end of every batch fsynced before the crash.
   */
  recoveredLogEndOffset: number;
}

/** An empty reply: the request was done. */
export type Done = Record<string, never>;

/** Replica actor message kind -> body and reply. */
export type ReplicaMessages = {
  /** `records` is one record batch (null is answered CORRUPT_MESSAGE); acks -1 waits for the HW up to `timeoutMs`. */
  'replica.produce': { body: { records: Buffer | null; acks: number; timeoutMs: number }; reply: ProduceReply };
  /**
   * A read. From a consumer (no `follower`): bytes below the HW. From a follower replica: bytes up to
   * the LEO, and the leader records the follower's LEO (= fetchOffset) and fsynced offset, which may
   * move the HW and the ISR; the reply comes at once when there are bytes (or an error), else when
   * bytes arrive, the HW moves, or `maxWaitMs` passes (a follower's long poll; consumers use
   * `replica.watch`). `currentLeaderEpoch` -1 skips the epoch check (KIP-320). `segmentRanges`: a
   * consumer's read may be answered with `ranges` instead of bytes (the network thread's Fetch, which
   * reads segment files itself); the replica does so when its files are real files.
   */
  'replica.fetch': {
    body: {
      fetchOffset: number;
      maxBytes: number;
      minOneBatch: boolean;
      currentLeaderEpoch?: number;
      follower?: FollowerFetchState;
      maxWaitMs?: number;
      segmentRanges?: boolean;
    };
    reply: FetchReply;
  };
  /**
   * A follower's fsync completed while its fetch is parked at the leader: how far it is flushed, so
   * acks=all does not wait a long-poll round (sent, never answered).
   */
  'replica.follower-flushed': { body: { brokerId: number; brokerEpoch: number; fsyncedOffset: number }; reply: void };
  /**
   * The controller published a new role for this partition (leader, epochs, ISR, AR, config); the
   * replica ignores one whose (leaderEpoch, partitionEpoch) is not newer than what it holds, except
   * that the config always applies. Become-leader / become-follower, Kafka's Partition.makeLeader /
   * makeFollower. Answered once the replica acts in the role (a follower's truncation may come later).
   */
  'replica.update-role': { body: PartitionRole; reply: Done };
  /** A fetch long poll: ready once the HW passes `fetchOffset` (or it fell below the log start), or at `maxWaitMs`. */
  'replica.watch': { body: { fetchOffset: number; maxWaitMs: number }; reply: { ready: boolean } };
  /**
   * EARLIEST_TIMESTAMP, LATEST_TIMESTAMP (= HW), MAX_TIMESTAMP, or >= 0 by time (protocol/sentinels.ts).
   * `toLogEnd`: bounded by the LEO instead of the HW (Kafka's answer, with no isolation level, to a
   * ListOffsets from a replica id other than the consumer's).
   */
  'replica.list-offsets': {
    body: { timestamp: number; toLogEnd?: boolean; currentLeaderEpoch?: number };
    reply: ListOffsetReply;
  };
  /** Closes and removes the partition directory; the actor then exits. */
  'replica.delete': { body: Record<string, never>; reply: Done };
  /** The topic's configs changed. */
  'replica.update-config': { body: { config: ReplicaLogConfig }; reply: Done };
  /** DeleteRecords (KIP-107); `offset` DELETE_RECORDS_HIGH_WATERMARK means the HW. */
  'replica.delete-records': { body: { offset: number }; reply: { errorCode: number; lowWatermark: number } };
  /** OffsetForLeaderEpoch (KIP-101). */
  'replica.offset-for-epoch': {
    body: { leaderEpoch: number; currentLeaderEpoch?: number };
    reply: { errorCode?: number; leaderEpoch: number; endOffset: number };
  };
  'replica.describe': { body: Record<string, never>; reply: ReplicaDescription };
  /**
   * Answered once this replica leads and its HW has reached the start offset of its leader epoch
   * (its LEO when it became leader), so that everything a previous leader may have acknowledged is
   * below the HW; or at `maxWaitMs` (REQUEST_TIMED_OUT). NOT_LEADER_OR_FOLLOWER when it does not lead,
   * or stops leading while the request waits. A group coordinator waits on it before it loads its
   * partition (a fresh leader's HW can lag its LEO: loading to the HW then would miss acknowledged
   * commits).
   */
  'replica.await-leader-hw': { body: { maxWaitMs: number }; reply: LeaderHighWatermarkReply };
};

/** What `replica.await-leader-hw` answers; offsets are -1 with an error other than REQUEST_TIMED_OUT. */
export interface LeaderHighWatermarkReply {
  errorCode: number;
  leaderEpoch: number;
  /** The first offset of the leader epoch: the leader's LEO when it became leader. */
  leaderEpochStartOffset: number;
  highWatermark: number;
}

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

/**
 * What a replica asks of its broker's replica manager (replica-manager/, which implements these), declared
 * here because the replica may not import that higher layer (as group/ declares what it takes of the replica).
 */
export type ReplicaHostMessages = {
  /**
   * A replica (re)started by the supervisor asks for its partition's current role and config instead
   * of trusting its spawn arguments. `role` null: the partition is no longer assigned to this broker.
   */
  'replica-manager.replica-state': {
    body: { topicId: string; partition: number };
    reply: { role: PartitionRole | null };
  };
  /**
   * A replica of a partition with more than one assigned replica failed on its disk (a failed fsync,
   * or an append it could not undo) and is offline until the broker restarts (KIP-112's offline log
   * dir): the manager lists it offline (`net.local-state`, so the network answers
   * KAFKA_STORAGE_ERROR) and reports it to the controller (`controller.replica-offline`), which takes
   * it out of the ISR and elects another leader if it led. `reason`: the errno and message. Sent,
   * never answered.
   */
  'replica-manager.replica-offline': { body: { topicId: string; partition: number; reason: string }; reply: void };
  /**
   * A leader asks to shrink or expand its ISR; the manager forwards it to the controller as an
   * AlterPartition with its broker epoch, and answers the controller's result (errorCode; the
   * partition's role after it, or null if the partition is gone).
   */
  'replica-manager.alter-partition': {
    body: { topicId: string; partition: number; leaderEpoch: number; partitionEpoch: number; newIsr: number[] };
    reply: { errorCode: number; role: PartitionRole | null };
  };
};

/** The id of broker `brokerId`'s replica manager actor. */
export function replicaManagerActorId(brokerId: number): ActorRef<ReplicaHostMessages> {
  return actorRef<ReplicaHostMessages>(`replica-manager/${brokerId}`);
}

/** The id of the replica of `topicId`'s partition `partition` on broker `brokerId`. */
export function replicaActorId(brokerId: number, topicId: string, partition: number): ActorRef<ReplicaMessages> {
  return actorRef<ReplicaMessages>(`replica/${brokerId}/${topicId}/${partition}`);
}

/** The id of the log-dir actor of entry `index` of broker `brokerId`'s log.dirs. */
export function logDirActorId(brokerId: number, index: number): ActorRef<LogDirMessages> {
  return actorRef<LogDirMessages>(`log-dir/${brokerId}/${index}`);
}
