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
  ClusterRecord | TopicRecord | TopicConfigRecord | PartitionRecord | RemoveTopicRecord | ProducerIdsRecord;

/** A partition as published to brokers and the network layer's metadata cache. */
export interface PartitionState {
  partition: number;
  replicas: number[];
  isr: number[];
  leader: number;
  leaderEpoch: number;
}

/** A topic as published to brokers. */
export interface TopicState {
  name: string;
  topicId: string;
  configs: Record<string, string>;
  partitions: PartitionState[];
}

/** The whole published metadata image. */
export interface MetadataImage {
  clusterId: string;
  controllerId: number;
  brokers: { nodeId: number; host: string; port: number }[];
  topics: TopicState[];
}
