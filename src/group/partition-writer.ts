/**
 * The group coordinator's writes to its partition of `__consumer_offsets`: a record batch appended
 * through the partition's leader replica with acks=all, so group metadata and committed offsets are
 * as durable (and as replicated) as any acks=all record. Stateless; rebalance.ts and offset-store.ts
 * share one.
 *
 * Kafka counterpart: the coordinator runtime's `CoordinatorPartitionWriter` (coordinator-common),
 * with `GroupMetadataManager`'s mapping of append errors to the errors group clients understand.
 */
import type { ActorContext, ActorRef } from '../runtime/actor';
import type { PartitionLeaderMessages } from './messages';
import { ErrorCode } from '../protocol/error-codes';
import { buildRecordBatch } from '../protocol/record-batch/builder';
import { OFFSETS_TOPIC } from './offsets-records';

/** One record to append to the partition: a null value is a tombstone. */
export interface OffsetsRecord {
  key: Buffer;
  value: Buffer | null;
}

/** How long a write to the offsets partition may wait for the HW (offsets.commit.timeout.ms default). */
const OFFSETS_COMMIT_TIMEOUT_MS = 5000;

/** A failed append, carrying the error code the client gets. */
export class CoordinatorWriteError extends Error {
  constructor(readonly errorCode: number) {
    super(`writing to ${OFFSETS_TOPIC} failed with error ${errorCode}`);
  }
}

/** Appends records to the coordinator's partition through its leader replica. */
export class PartitionWriter {
  /** `replicaActor`: the partition's leader replica. */
  constructor(private readonly replicaActor: ActorRef<PartitionLeaderMessages>) {}

  /**
   * Appends `records` as one batch with acks=all; resolves with the first record's offset, or
   * rejects with a CoordinatorWriteError carrying the coordinator error a client should see.
   */
  async append(records: OffsetsRecord[], ctx: ActorContext): Promise<number> {
    const nowMs = ctx.clock.nowMs();
    const batch = buildRecordBatch(
      records.map((r) => ({ key: r.key, value: r.value, timestamp: nowMs })),
      { baseTimestamp: nowMs },
    );
    let reply: PartitionLeaderMessages['replica.produce']['reply'];
    try {
      reply = await ctx.request(
        this.replicaActor,
        'replica.produce',
        { records: batch, acks: -1, timeoutMs: OFFSETS_COMMIT_TIMEOUT_MS },
        OFFSETS_COMMIT_TIMEOUT_MS * 2,
      );
    } catch {
      throw new CoordinatorWriteError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
    if (reply.errorCode !== ErrorCode.NONE) throw new CoordinatorWriteError(mapAppendError(reply.errorCode));
    return reply.baseOffset;
  }
}

/** Kafka's mapping of append errors to what group clients understand (GroupMetadataManager). */
function mapAppendError(errorCode: number): number {
  switch (errorCode) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
    default:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
  }
}
