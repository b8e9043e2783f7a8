/**
 * Fetch (API key 1), versions 0-12, flexible from 12. Written from Kafka's FetchRequest.json and
 * FetchResponse.json (3.x line, where 0-12 are valid; v13+ replace topic names by topic IDs).
 * `records` is a view into the request/response bytes, never copied.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** Fetch request table (Kafka's FetchRequest.json). */
export const FetchRequest = {
  apiKey: 1,
  type: 'request',
  name: 'FetchRequest',
  validVersions: '0-12',
  flexibleVersions: '12+',
  fields: [
    { name: 'ClusterId', type: 'string', versions: '12+', nullableVersions: '12+', default: null, taggedVersions: '12+', tag: 0 },
    { name: 'ReplicaId', type: 'int32', versions: '0+', default: -1, about: 'follower broker id, -1 for a consumer' },
    { name: 'MaxWaitMs', type: 'int32', versions: '0+' },
    { name: 'MinBytes', type: 'int32', versions: '0+' },
    { name: 'MaxBytes', type: 'int32', versions: '3+', default: 0x7fffffff },
    { name: 'IsolationLevel', type: 'int8', versions: '4+', default: 0, about: '0 READ_UNCOMMITTED, 1 READ_COMMITTED' },
    { name: 'SessionId', type: 'int32', versions: '7+', default: 0 },
    { name: 'SessionEpoch', type: 'int32', versions: '7+', default: -1 },
    {
      name: 'Topics', type: '[]FetchTopic', versions: '0+',
      fields: [
        { name: 'Topic', type: 'string', versions: '0+' },
        {
          name: 'Partitions', type: '[]FetchPartition', versions: '0+',
          fields: [
            { name: 'Partition', type: 'int32', versions: '0+' },
            { name: 'CurrentLeaderEpoch', type: 'int32', versions: '9+', default: -1 },
            { name: 'FetchOffset', type: 'int64', versions: '0+' },
            { name: 'LastFetchedEpoch', type: 'int32', versions: '12+', default: -1 },
            { name: 'LogStartOffset', type: 'int64', versions: '5+', default: -1 },
            { name: 'PartitionMaxBytes', type: 'int32', versions: '0+' },
          ],
        },
      ],
    },
    {
      name: 'ForgottenTopicsData', type: '[]ForgottenTopic', versions: '7+',
      fields: [
        { name: 'Topic', type: 'string', versions: '7+' },
        { name: 'Partitions', type: '[]int32', versions: '7+' },
      ],
    },
    { name: 'RackId', type: 'string', versions: '11+', default: '' },
  ],
} as const satisfies MessageSpec;

/** Fetch response table (Kafka's FetchResponse.json). */
export const FetchResponse = {
  apiKey: 1,
  type: 'response',
  name: 'FetchResponse',
  validVersions: '0-12',
  flexibleVersions: '12+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    { name: 'ErrorCode', type: 'int16', versions: '7+' },
    { name: 'SessionId', type: 'int32', versions: '7+', default: 0 },
    {
      name: 'Responses', type: '[]FetchableTopicResponse', versions: '0+',
      fields: [
        { name: 'Topic', type: 'string', versions: '0+' },
        {
          name: 'Partitions', type: '[]PartitionData', versions: '0+',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
            { name: 'HighWatermark', type: 'int64', versions: '0+' },
            { name: 'LastStableOffset', type: 'int64', versions: '4+', default: -1 },
            { name: 'LogStartOffset', type: 'int64', versions: '5+', default: -1 },
            {
              name: 'DivergingEpoch', type: 'EpochEndOffset', versions: '12+', taggedVersions: '12+', tag: 0,
              fields: [
                { name: 'Epoch', type: 'int32', versions: '12+', default: -1 },
                { name: 'EndOffset', type: 'int64', versions: '12+', default: -1 },
              ],
            },
            {
              name: 'CurrentLeader', type: 'LeaderIdAndEpoch', versions: '12+', taggedVersions: '12+', tag: 1,
              fields: [
                { name: 'LeaderId', type: 'int32', versions: '12+', default: -1 },
                { name: 'LeaderEpoch', type: 'int32', versions: '12+', default: -1 },
              ],
            },
            {
              name: 'SnapshotId', type: 'SnapshotId', versions: '12+', taggedVersions: '12+', tag: 2,
              fields: [
                { name: 'EndOffset', type: 'int64', versions: '0+', default: -1 },
                { name: 'Epoch', type: 'int32', versions: '0+', default: -1 },
              ],
            },
            {
              name: 'AbortedTransactions', type: '[]AbortedTransaction', versions: '4+', nullableVersions: '4+',
              fields: [
                { name: 'ProducerId', type: 'int64', versions: '4+' },
                { name: 'FirstOffset', type: 'int64', versions: '4+' },
              ],
            },
            { name: 'PreferredReadReplica', type: 'int32', versions: '11+', default: -1 },
            { name: 'Records', type: 'records', versions: '0+', nullableVersions: '0+' },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded Fetch request body (all versions; absent fields hold their defaults). */
export type FetchRequestData = MessageValue<typeof FetchRequest>;
/** Fetch response body. */
export type FetchResponseData = MessageValue<typeof FetchResponse>;
