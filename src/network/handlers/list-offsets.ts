/**
 * ListOffsets (key 2). Timestamp -2 is the log start offset (earliest), -1 the high watermark
 * (latest; with no transactions the LSO equals it), -3 the record with the largest timestamp
 * (KIP-734), a timestamp >= 0 the first record at or after it (KIP-79). v0 answers in
 * `oldStyleOffsets`. Without tiered storage, -4 (earliest local, KIP-405) is the log start offset
 * and -5 (latest tiered, KIP-1005) and -6 (earliest pending upload, KIP-1023) have no offset: NONE
 * with offset -1. A special timestamp below the version that introduced it, or any other negative
 * timestamp, is UNSUPPORTED_VERSION for that partition (what Kafka 4.4 answers).
 * A request from a replica id other than CONSUMER_REPLICA_ID (a follower, or -2, Kafka's
 * DEBUGGING_REPLICA_ID) has no isolation level: latest is the log-end offset, as in Kafka's
 * Partition.fetchOffsetForTimestamp (`isolationLevel None => localLog.logEndOffset`).
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import {
  CONSUMER_REPLICA_ID,
  EARLIEST_LOCAL_TIMESTAMP,
  EARLIEST_PENDING_UPLOAD_TIMESTAMP,
  EARLIEST_TIMESTAMP,
  LATEST_TIERED_TIMESTAMP,
  LATEST_TIMESTAMP,
  MAX_TIMESTAMP,
  NO_PARTITION_LEADER_EPOCH,
  UNKNOWN_OFFSET,
  UNKNOWN_TIMESTAMP,
} from '../../protocol/sentinels';
import type { ApiHandler } from '../api-handler';
import type { ListOffsetsRequest, ListOffsetsResponse } from '../../protocol/schema/list-offsets';
import { localReplicaFor, replicaFailureCode } from './leader-lookup';

/** The first ListOffsets version that accepts each special (negative) timestamp. */
const SPECIAL_TIMESTAMP_MIN_VERSION = new Map<number, number>([
  [LATEST_TIMESTAMP, 0],
  [EARLIEST_TIMESTAMP, 0],
  [MAX_TIMESTAMP, 7],
  [EARLIEST_LOCAL_TIMESTAMP, 8],
  [LATEST_TIERED_TIMESTAMP, 9],
  [EARLIEST_PENDING_UPLOAD_TIMESTAMP, 11],
]);

/**
 * How long a partition's answer may take. The replica answers in its turn, or after at most two
 * fsyncs when appends are still being flushed (a deferred read); past 10 s it is stuck or crashed, and
 * the partition gets REQUEST_TIMED_OUT well before the client's request.timeout.ms (30 s by default)
 * gives up on the whole request.
 */
const REPLICA_REQUEST_TIMEOUT_MS = 10_000;

export const listOffsetsHandler: ApiHandler<typeof ListOffsetsRequest, typeof ListOffsetsResponse> = {
  apiKey: ApiKey.ListOffsets,
  name: 'ListOffsets',
  minVersion: 0,
  maxVersion: 11,
  async handle({ apiVersion, body, broker }) {
    const topics = await Promise.all(
      body.topics.map(async (t) => ({
        name: t.name,
        partitions: await Promise.all(
          t.partitions.map(async (p) => {
            const answer = (
              errorCode: number,
              offset = UNKNOWN_OFFSET,
              timestamp = UNKNOWN_TIMESTAMP,
              leaderEpoch = NO_PARTITION_LEADER_EPOCH,
            ) => ({
              partitionIndex: p.partitionIndex,
              errorCode,
              oldStyleOffsets: apiVersion === 0 && offset >= 0 ? [offset] : [],
              timestamp,
              offset,
              leaderEpoch,
            });
            if (p.timestamp < 0 && !(apiVersion >= (SPECIAL_TIMESTAMP_MIN_VERSION.get(p.timestamp) ?? Infinity)))
              return answer(ErrorCode.UNSUPPORTED_VERSION);
            const local = localReplicaFor(broker, t.name, p.partitionIndex);
            if ('errorCode' in local) return answer(local.errorCode);
            // Earliest local is the log start offset without tiered storage; latest tiered and
            // earliest pending upload have no answer without it.
            if (p.timestamp === LATEST_TIERED_TIMESTAMP || p.timestamp === EARLIEST_PENDING_UPLOAD_TIMESTAMP)
              return answer(ErrorCode.NONE);
            const timestamp = p.timestamp === EARLIEST_LOCAL_TIMESTAMP ? EARLIEST_TIMESTAMP : p.timestamp;
            try {
              const reply = await broker.endpoint.request(
                local.replica,
                'replica.list-offsets',
                {
                  timestamp,
                  toLogEnd: body.replicaId !== CONSUMER_REPLICA_ID,
                  // The replica checks it against its own role (KIP-320): -1 (absent before v4) skips it.
                  currentLeaderEpoch: p.currentLeaderEpoch,
                },
                REPLICA_REQUEST_TIMEOUT_MS,
              );
              return answer(reply.errorCode, reply.offset, reply.timestamp, reply.leaderEpoch);
            } catch (error) {
              broker.log.warn(
                { topic: t.name, partition: p.partitionIndex, error: String(error) },
                'list-offsets to replica failed',
              );
              return answer(replicaFailureCode(error));
            }
          }),
        ),
      })),
    );
    return { throttleTimeMs: 0, topics };
  },
};
