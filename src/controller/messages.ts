/**
 * The controller actor's messages (controller-actor.ts): the commands it takes, the results it
 * answers, and {@link ControllerMessages}, kind -> body and reply. Every change answers with the
 * metadata image after it, which the broker publishes. The broker is the only sender. Any change
 * may be answered KAFKA_STORAGE_ERROR: the metadata log refused it (a full disk), nothing changed,
 * and the same command may be sent again.
 */
import { actorRef } from '../runtime/actor';
import type { ActorRef } from '../runtime/actor';
import type { MetadataImage, PartitionState } from './metadata-records';

export interface CreateTopicsCommand {
  /**
   * `assignments`: explicit replica assignments, one list of broker ids per partition in partition
   * order (CreateTopics' `assignments`; numPartitions and replicationFactor are then -1), or absent
   * for the controller's rack-unaware assignment.
   */
  topics: {
    name: string;
    numPartitions: number;
    replicationFactor: number;
    configs: Record<string, string>;
    assignments?: number[][] | null;
  }[];
  validateOnly: boolean;
}

export interface CreateTopicResult {
  name: string;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
  numPartitions: number;
  replicationFactor: number;
}

/**
 * Config changes for topics. `incremental` (IncrementalAlterConfigs, KIP-339) applies `ops` to the
 * current overrides; otherwise (AlterConfigs) the `set` ops replace the whole override set.
 */
export interface AlterTopicConfigsCommand {
  resources: {
    topic: string;
    ops: { name: string; op: 'set' | 'delete' | 'append' | 'subtract'; value: string | null }[];
  }[];
  incremental: boolean;
  validateOnly: boolean;
}

/** CreatePartitions: raise each topic's partition count to `count` (assignments: one per new partition). */
export interface CreatePartitionsCommand {
  topics: { name: string; count: number; assignments: number[][] | null }[];
  validateOnly: boolean;
}

export interface CreatePartitionsResult {
  name: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface AlterConfigResult {
  topic: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface DeleteTopicResult {
  name: string | null;
  topicId: string;
  errorCode: number;
  errorMessage: string | null;
}

/** A topic to delete, by name or by id (DeleteTopics v6+ may name either). */
export interface DeleteTopicsCommand {
  topics: { name: string | null; topicId: string | null }[];
}

/** Controller message kind -> body and reply. */
export type ControllerMessages = {
  'controller.get-metadata': { body: Record<string, never>; reply: MetadataImage };
  'controller.create-topics': {
    body: CreateTopicsCommand;
    reply: { results: CreateTopicResult[]; image: MetadataImage };
  };
  'controller.delete-topics': {
    body: DeleteTopicsCommand;
    reply: { results: DeleteTopicResult[]; image: MetadataImage };
  };
  'controller.alter-topic-configs': {
    body: AlterTopicConfigsCommand;
    reply: { results: AlterConfigResult[]; image: MetadataImage };
  };
  'controller.create-partitions': {
    body: CreatePartitionsCommand;
    reply: { results: CreatePartitionsResult[]; image: MetadataImage };
  };
  /**
   * A new producer id (epoch 0) for InitProducerId; the counter is in the metadata log. KAFKA_STORAGE_ERROR
   * (id and epoch -1) when the metadata log refused the allocation.
   */
  'controller.init-producer-id': {
    body: Record<string, never>;
    reply: { errorCode: number; producerId: number; producerEpoch: number };
  };
  /**
   * A broker's replica manager registers at its start (and after every crash): it gets a broker epoch
   * larger than any before and is unfenced. A `brokerId` outside the cluster's node ids gets
   * INVALID_REQUEST (the cluster's size is fixed when its data dir is made). KRaft's BrokerRegistration.
   */
  'controller.register-broker': {
    body: { brokerId: number; host: string; port: number };
    reply: { errorCode: number; brokerEpoch: number };
  };
  /**
   * Every broker.heartbeat.interval.ms from each replica manager. STALE_BROKER_EPOCH for an epoch that
   * is not the broker's current one (it re-registers). A broker silent for broker.session.timeout.ms is
   * fenced. `controllerEpoch` in the reply lets a broker notice a restarted controller, which has
   * forgotten its subscribers, and subscribe again. `wantShutDown` asks for a controlled shutdown: leadership moves off the broker and it
   * leaves every ISR; `shutdownReady` in the reply says that is done (KIP-631's BrokerHeartbeat). The
   * broker is then fenced. A fenced broker's heartbeats answer `fenced: true` and do not unfence it:
   * it registers again to come back.
   */
  'controller.broker-heartbeat': {
    body: { brokerId: number; brokerEpoch: number; wantShutDown?: boolean };
    reply: { errorCode: number; fenced: boolean; shutdownReady: boolean; controllerEpoch: number };
  };
  /**
   * The cluster supervisor saw every worker of broker `brokerId` die (a crash, or fault injection):
   * it is fenced at once, leaves every ISR, and its led partitions get new leaders. Idempotent.
   */
  'controller.broker-down': { body: { brokerId: number; reason: string }; reply: Record<string, never> };
  /**
   * A broker's replica failed on its disk (a failed fsync): it leaves the ISR and, if it led, another
   * ISR member leads (replication-control.ts replicaOffline); it stays out until the broker registers
   * again. Sent by the replica manager, retried until answered NONE. KIP-112's offline log dir.
   */
  'controller.replica-offline': { body: ReplicaOfflineCommand; reply: { errorCode: number } };
  /** A leader asks to change its partition's ISR (KIP-497 AlterPartition), forwarded by its replica manager. */
  'controller.alter-partition': { body: AlterPartitionCommand; reply: AlterPartitionResult };
  /** ElectLeaders (KIP-460): electionType 0 PREFERRED, 1 UNCLEAN; `partitions` null means all. */
  'controller.elect-leaders': {
    body: { electionType: number; partitions: { topic: string; partition: number }[] | null };
    reply: { results: { topic: string; partition: number; errorCode: number; errorMessage: string | null }[] };
  };
  /**
   * Subscribes `listener` to metadata pushes: the reply is the current image, and every later
   * committed change is pushed to it as `metadata.update` (the whole image, with its offset). Replica
   * managers and each broker's network endpoint subscribe. Subscriptions are not in the metadata log:
   * after a controller restart (a larger controllerEpoch) listeners subscribe again.
   */
  'controller.subscribe': { body: { listener: ActorRef<MetadataListenerMessages> }; reply: MetadataImage };
};

/** Broker `brokerId` (registration `brokerEpoch`) reports its replica of `topicId`-`partition` offline. */
export interface ReplicaOfflineCommand {
  brokerId: number;
  brokerEpoch: number;
  topicId: string;
  partition: number;
}

/** AlterPartition of one partition (KIP-497): `newIsr` replaces the ISR if `partitionEpoch` is current. */
export interface AlterPartitionCommand {
  brokerId: number;
  brokerEpoch: number;
  topicId: string;
  partition: number;
  leaderEpoch: number;
  partitionEpoch: number;
  newIsr: number[];
}

/**
 * The answer to an AlterPartition: NONE with the partition's new state; FENCED_LEADER_EPOCH (the
 * leader epoch moved on), INVALID_UPDATE_VERSION (stale partition epoch), INVALID_REQUEST (the sender
 * does not lead, as KRaft answers; or an ISR with a duplicate, an unassigned member or without the
 * leader), NOT_CONTROLLER (epochs newer than the controller's), STALE_BROKER_EPOCH, INELIGIBLE_REPLICA
 * (an ISR member is fenced or unregistered), UNKNOWN_TOPIC_OR_PARTITION, each with the current state
 * when the partition exists (null for STALE_BROKER_EPOCH); KAFKA_STORAGE_ERROR with no state when the
 * metadata log refused the change (nothing changed: the leader tries again at its next ISR check).
 */
export interface AlterPartitionResult {
  errorCode: number;
  state: PartitionState | null;
}

/** What the controller pushes to its subscribers (replica managers, network endpoints). */
export type MetadataListenerMessages = {
  /** A new image; a listener holding one with a larger or equal `offset` ignores it. */
  'metadata.update': { body: MetadataImage; reply: void };
};

/** The controller's id (one per cluster). */
export const CONTROLLER_ACTOR_ID: ActorRef<ControllerMessages> = actorRef<ControllerMessages>('controller');
