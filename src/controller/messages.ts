/**
 * The controller actor's messages (controller-actor.ts): the commands it takes, the results it
 * answers, and {@link ControllerMessages}, kind -> body and reply. Every change answers with the
 * metadata image after it, which the broker publishes. The broker is the only sender.
 */
import { actorRef } from '../runtime/actor';
import type { ActorRef } from '../runtime/actor';
import type { MetadataImage } from './metadata-records';

export interface CreateTopicsCommand {
  topics: { name: string; numPartitions: number; replicationFactor: number; configs: Record<string, string> }[];
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
  /** A new producer id (epoch 0) for InitProducerId; the counter is in the metadata log. */
  'controller.init-producer-id': { body: Record<string, never>; reply: { producerId: number; producerEpoch: number } };
};

/** The controller's id (one per cluster). */
export const CONTROLLER_ACTOR_ID: ActorRef<ControllerMessages> = actorRef<ControllerMessages>('controller');
