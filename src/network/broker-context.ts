/**
 * What handlers may use of their broker: configuration, identity, the metadata cache, and the
 * operations that go through the controller or a replica actor. Implemented by src/broker.ts.
 */
import type { BrokerConfig } from '../config/broker-config';
import type { Endpoint } from '../runtime/runtime';
import type { ActorRef } from '../runtime/actor';
import type { ReplicaMessages, SegmentRange } from '../replica/messages';
import type { GroupCoordinatorMessages } from '../group/messages';
import type { Clock, Timers } from '../io/clock';
import type { Logger } from '../io/logger';
import type {
  AlterConfigResult,
  AlterTopicConfigsCommand,
  CreatePartitionsCommand,
  CreatePartitionsResult,
  CreateTopicsCommand,
  CreateTopicResult,
  DeleteTopicResult,
} from '../controller/messages';
import type { TopicState } from '../controller/metadata-records';

/**
 * One API's advertised version range, as ApiVersions lists it. Every `ApiHandler` (api-handler.ts) is
 * one; declared here so that this file need not import the handler contract, which imports it.
 */
export interface ApiVersionRange {
  apiKey: number;
  minVersion: number;
  maxVersion: number;
}

export interface BrokerContext {
  readonly config: BrokerConfig;
  readonly nodeId: number;
  readonly clusterId: string;
  readonly controllerId: number;
  readonly log: Logger;
  /** This broker's mailbox for talking to actors. */
  readonly endpoint: Endpoint;
  /** The runtime's clock (virtual in the simulation): handlers keep deadlines with it, never `Date.now`. */
  readonly clock: Clock;
  /** Timers on the network thread, driven by `clock` (the Fetch long poll's max_wait_ms). */
  readonly timers: Timers;
  /**
   * The advertised listener of every live broker (the port is the bound one when configured as 0), and
   * its replicas the controller holds offline after a storage error (absent when none).
   */
  brokers(): {
    nodeId: number;
    host: string;
    port: number;
    offlineReplicas?: { topicId: string; partition: number }[];
  }[];
  /** Every handler's version range, for ApiVersions. */
  handlers(): ApiVersionRange[];
  /** A topic from the metadata cache. */
  topic(name: string): TopicState | undefined;
  topicById(topicId: string): TopicState | undefined;
  allTopics(): TopicState[];
  /** The actor id of this broker's leader replica of a partition, or null when this broker is not its leader. */
  leaderReplica(topic: string, partition: number): ActorRef<ReplicaMessages> | null;
  /**
   * The actor id of this broker's replica of a partition, leader or follower, when the metadata cache
   * lists this broker among its replicas and the replica is not offline; null otherwise. For the APIs
   * whose epoch and leadership checks the replica makes itself (leader-lookup.ts localReplicaFor).
   */
  localReplica(topic: string, partition: number): ActorRef<ReplicaMessages> | null;
  /**
   * Why this broker's replica of a partition it leads is offline (its start failed on the disk, e.g.
   * `ENOSPC: no space left on device, write`), or null when it is not. The broker retries the start
   * every few seconds; meanwhile requests for the partition answer KAFKA_STORAGE_ERROR.
   */
  offlineReason(topic: string, partition: number): string | null;
  /**
   * Reads the segment byte ranges a replica answered a consumer's fetch with (src/network/segment-reader.ts):
   * the bytes in one exact-size buffer, or null when a range is gone or changed (ask the replica for
   * bytes instead). Absent where the network node cannot read files (then never ask for ranges).
   */
  readSegmentRanges?(ranges: readonly SegmentRange[]): Promise<Buffer | null>;
  /** Creates topics through the controller and waits until their replicas serve (auto-create and CreateTopics). */
  createTopics(command: CreateTopicsCommand): Promise<CreateTopicResult[]>;
  deleteTopics(topics: { name: string | null; topicId: string | null }[]): Promise<DeleteTopicResult[]>;
  /** Changes topic config overrides through the controller; replicas apply them before this resolves. */
  alterTopicConfigs(command: AlterTopicConfigsCommand): Promise<AlterConfigResult[]>;
  /**
   * Runs leader elections in the controller (ElectLeaders, KIP-460): `electionType` 0 PREFERRED, 1
   * UNCLEAN; `partitions` null means every partition, and then only those whose election was needed
   * are answered. Results come in request order (repeats included), each with the controller's error
   * (NONE: elected; ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE,
   * UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST) and its message or null. Resolves once the new
   * leaders' replicas act in their roles; rejects when the controller does not answer in time.
   */
  electLeaders(
    electionType: number,
    partitions: { topic: string; partition: number }[] | null,
  ): Promise<{ topic: string; partition: number; errorCode: number; errorMessage: string | null }[]>;
  /** A new producer id (epoch 0) from the controller, or KAFKA_STORAGE_ERROR (its metadata log refused it). */
  initProducerId(): Promise<{ errorCode: number; producerId: number; producerEpoch: number }>;
  /** Adds partitions to topics through the controller; new replicas serve before this resolves. */
  createPartitions(command: CreatePartitionsCommand): Promise<CreatePartitionsResult[]>;
  /**
   * The group coordinator actor of `groupId` (the one beside the leader of its __consumer_offsets
   * partition), or the error a client gets: COORDINATOR_NOT_AVAILABLE (no offsets topic yet),
   * NOT_COORDINATOR (another broker leads the partition), COORDINATOR_LOAD_IN_PROGRESS (starting).
   */
  groupCoordinatorFor(groupId: string): { errorCode: number; actor: ActorRef<GroupCoordinatorMessages> | null };
  /** Every group coordinator actor on this broker (ListGroups asks them all). */
  groupCoordinators(): ActorRef<GroupCoordinatorMessages>[];
  /** Creates __consumer_offsets if missing (the first FindCoordinator for a group, as in Kafka). */
  ensureOffsetsTopic(): Promise<void>;
  /**
   * The log dirs and each local partition's size in bytes, LEO, high watermark and fsynced offset
   * (its recovery point), as its replica reports them (-1 each when it does not answer), for
   * DescribeLogDirs.
   */
  describeLogDirs(): Promise<
    {
      logDir: string;
      totalBytes: number;
      usableBytes: number;
      partitions: {
        topic: string;
        partition: number;
        sizeBytes: number;
        logEndOffset: number;
        highWatermark: number;
        fsyncedOffset: number;
      }[];
    }[]
  >;
}
