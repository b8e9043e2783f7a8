/**
 * The per-partition routing every data API starts with: this broker's leader replica actor of a
 * partition, or the Kafka error the client should get instead (UNKNOWN_TOPIC_OR_PARTITION for a
 * topic or partition that does not exist, NOT_LEADER_OR_FOLLOWER for one led elsewhere, so the
 * client refreshes its metadata, KAFKA_STORAGE_ERROR for one led here whose replica could not start
 * on the disk: Kafka's answer for a partition on an offline log dir, retriable for clients).
 */
import type { TopicState } from '../../controller/metadata-records';
import { ErrorCode } from '../../protocol/error-codes';
import { ActorUnavailableError } from '../../runtime/actor';
import type { ActorRef } from '../../runtime/actor';
import type { ReplicaMessages } from '../../replica/messages';
import type { BrokerContext } from '../broker-context';

export type LeaderLookup = { replica: ActorRef<ReplicaMessages>; topic: TopicState } | { errorCode: number };

/** `topic` may be given already resolved (e.g. from a topic ID); `unknownTopicCode` defaults to UNKNOWN_TOPIC_OR_PARTITION. */
export function leaderFor(
  broker: BrokerContext,
  topic: TopicState | string | undefined,
  partition: number,
  unknownTopicCode: number = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
): LeaderLookup {
  const state = typeof topic === 'string' ? broker.topic(topic) : topic;
  if (!state) return { errorCode: unknownTopicCode };
  const replica = broker.leaderReplica(state.name, partition);
  if (replica !== null) return { replica, topic: state };
  if (broker.offlineReason(state.name, partition) !== null) return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR };
  const exists = partition >= 0 && partition < state.partitions.length;
  return { errorCode: exists ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
}

/**
 * The routing of the APIs that carry a client's `currentLeaderEpoch` (Fetch, ListOffsets,
 * OffsetForLeaderEpoch): this broker's replica of the partition whenever the metadata cache lists
 * this broker among its replicas, leader or not. The replica alone knows its role and epoch, so it
 * answers FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH (KIP-320, Kafka's
 * Partition.checkCurrentLeaderEpoch) and NOT_LEADER_OR_FOLLOWER itself: a cache that lags the
 * controller (a leadership that moved here or away a moment ago) cannot give a wrong answer. The
 * errors are {@link leaderFor}'s for a partition this broker holds no replica of.
 */
export function localReplicaFor(
  broker: BrokerContext,
  topic: TopicState | string | undefined,
  partition: number,
  unknownTopicCode: number = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
): LeaderLookup {
  const state = typeof topic === 'string' ? broker.topic(topic) : topic;
  const replica = state ? broker.localReplica(state.name, partition) : null;
  return state && replica !== null ? { replica, topic: state } : leaderFor(broker, state, partition, unknownTopicCode);
}

/**
 * The partition error for a request its replica could not answer: NOT_LEADER_OR_FOLLOWER when the
 * replica is not there (stopped, demoted and gone, its broker crashed, or not yet started), so the
 * client refreshes its metadata and retries on the new leader; REQUEST_TIMED_OUT when it did not
 * answer in time (stuck or overloaded).
 */
/**
 * The level to log a failed request to a replica at: `debug` when the replica had stopped (a broker
 * shutting down, a topic deleted, a partition moved: the client gets NOT_LEADER_OR_FOLLOWER and
 * refreshes its metadata, as from Kafka), `warn` otherwise (a crash, a timeout).
 */
export function replicaFailureLevel(error: unknown): 'debug' | 'warn' {
  return error instanceof ActorUnavailableError && error.reason === 'stopped' ? 'debug' : 'warn';
}

export function replicaFailureCode(error: unknown): number {
  return error instanceof ActorUnavailableError ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.REQUEST_TIMED_OUT;
}
