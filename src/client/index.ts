/**
 * Skiff's small Kafka client (see README.md in this folder): connection, client, producer,
 * consumer, partitioner and compressed batches.
 */
export { BrokerConnection } from './connection';
export type { ConnectionOptions, VersionRange } from './connection';
export { KafkaClient, parseBrokerAddress, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from './client';
export type {
  ClientOptions,
  ClusterMetadata,
  TopicMetadata,
  PartitionMetadata,
  BrokerMetadata,
  NewTopic,
  TopicResult,
  OffsetAndTimestamp,
} from './client';
export { Producer } from './producer';
export type { ProducerOptions, ProducerRecord, RecordMetadata, SendCallback, BatchReport } from './producer';
export { Consumer } from './consumer';
export type { ConsumerOptions, Assignment, ConsumedRecord, PartitionState } from './consumer';
export { Partitioner, murmur2, toPositive, partitionForKey } from './partitioner';
export type { NullKeyStrategy } from './partitioner';
export { buildBatch, compressBatch, decodeBatch, decodeBatches } from './batch';
export { KafkaError, ConnectionError, UnsupportedApiError } from './errors';
