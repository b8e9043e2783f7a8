/**
 * Metadata records: the controller appends one of these to its metadata log before applying it, so a
 * restart replays them into the same state (DESIGN.md "Controller actor"; KRaft's TopicRecord and
 * PartitionRecord are the model, with our own msgpack shapes).
 */

/** The cluster's id (22-char base64url UUID, as Kafka's `cluster.id`), written once on first start. */
export interface ClusterRecord {
  type: 'cluster';
  clusterId: string;
}

/** A topic exists, with its random topic ID and its topic-level config overrides. */
export interface TopicRecord {
  type: 'topic';
  name: string;
  topicId: string;
  configs: Record<string, string>;
}

/** A partition's assignment and leadership. Replaces the previous record for the same partition. */
export interface PartitionRecord {
  type: 'partition';
  topicId: string;
  partition: number;
  /** Assigned replicas (AR), node ids in preference order. */
  replicas: number[];
  /** In-sync replicas. */
  isr: number[];
  /** Leader node id, -1 when there is none. */
  leader: number;
  /** Bumped on every leader change (KIP-101); strictly increasing per partition. */
  leaderEpoch: number;
  /**
   * Bumped on every change of this partition (leader or ISR), KRaft's partitionEpoch (KIP-497): an
   * AlterPartition carrying an older one is refused with INVALID_UPDATE_VERSION. Absent in logs written
   * before replication: read as 0.
   */
  partitionEpoch?: number;
}

/**
 * A broker registered (at its start, and again after a crash): it gets a new broker epoch, larger than
 * any before, and is unfenced (it may lead and be in ISRs). KRaft's RegisterBrokerRecord.
 */
export interface RegisterBrokerRecord {
  type: 'register-broker';
  brokerId: number;
  brokerEpoch: number;
  host: string;
  port: number;
}

/**
 * A broker is fenced (crashed, missed heartbeats for broker.session.timeout.ms, or shut down): it leads
 * nothing and is in no ISR. The partition records that move its leaderships come in the same frame.
 * KRaft's FenceBrokerRecord.
 */
export interface FenceBrokerRecord {
  type: 'fence-broker';
  brokerId: number;
  brokerEpoch: number;
}

/**
 * A replica of broker `brokerId` (registration `brokerEpoch`) failed on its disk (a failed fsync, or
 * an append it could not undo) and is offline until that broker registers again (a restart): it may
 * neither lead nor be in the ISR. The partition record that takes it out of the ISR (and elects
 * another leader if it led) comes in the same frame. Kafka's equivalent is the offline log dir of
 * KIP-112 (the broker heartbeat's offline dirs in KRaft), which takes its replicas out of every ISR.
 */
export interface ReplicaOfflineRecord {
  type: 'replica-offline';
  brokerId: number;
  brokerEpoch: number;
  topicId: string;
  partition: number;
}

/** The controller (re)started: its epoch, one above the previous one (brokers ignore a smaller one). */
export interface ControllerEpochRecord {
  type: 'controller-epoch';
  controllerEpoch: number;
}

/** A topic's config overrides are replaced by `configs` (IncrementalAlterConfigs / AlterConfigs). */
export interface TopicConfigRecord {
  type: 'topic-configs';
  topicId: string;
  configs: Record<string, string>;
}

/** A topic and all its partitions are gone. */
export interface RemoveTopicRecord {
  type: 'remove-topic';
  topicId: string;
}

/** Producer ids below `nextProducerId` have been handed out (InitProducerId). */
export interface ProducerIdsRecord {
  type: 'producer-ids';
  nextProducerId: number;
}

export type MetadataRecord =
  | ClusterRecord
  | TopicRecord
  | TopicConfigRecord
  | PartitionRecord
  | RemoveTopicRecord
  | ProducerIdsRecord
  | RegisterBrokerRecord
  | FenceBrokerRecord
  | ReplicaOfflineRecord
  | ControllerEpochRecord;

/** A partition as published to brokers and the network layer's metadata cache. */
export interface PartitionState {
  partition: number;
  /** Assigned replicas (AR) in preference order: the first is the preferred leader. */
  replicas: number[];
  /** In-sync replicas (node ids); the leader is always one of them. */
  isr: number[];
  /** Leader node id, -1 when there is none (every ISR member is down: LEADER_NOT_AVAILABLE). */
  leader: number;
  leaderEpoch: number;
  /** KIP-497's partition epoch: bumped on every leader or ISR change. */
  partitionEpoch: number;
}

/** A registered broker as published: its advertised listener, broker epoch, and whether it is fenced (down). */
export interface BrokerState {
  nodeId: number;
  host: string;
  /** The port it really listens on (never 0). */
  port: number;
  brokerEpoch: number;
  /** True while it is down (crashed, timed out, shut down): it leads nothing and is in no ISR. */
  fenced: boolean;
  /**
   * Its replicas that failed on the disk during this registration (`replica-offline` records): they
   * lead nothing and are in no ISR until the broker registers again. Absent when there are none.
   */
  offlineReplicas?: { topicId: string; partition: number }[];
}

/** A topic as published to brokers. */
export interface TopicState {
  name: string;
  topicId: string;
  configs: Record<string, string>;
  partitions: PartitionState[];
}

/**
 * The whole published metadata image. The controller pushes a new one after every committed change;
 * `offset` is the number of metadata log frames it reflects (KRaft's image offset), so a cache that
 * holds a newer image never applies an older one that arrives late. Always whole, never a delta.
 */
export interface MetadataImage {
  clusterId: string;
  controllerId: number;
  /** The metadata log offset this image reflects (frames applied); grows with every change. */
  offset: number;
  /** The controller's epoch (one more at every controller start). */
  controllerEpoch: number;
  /** Every registered broker, fenced ones included, by node id. */
  brokers: BrokerState[];
  topics: TopicState[];
}
