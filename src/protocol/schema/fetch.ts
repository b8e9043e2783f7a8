/**
 * Fetch (API key 1), versions 0-18, flexible from 12. Written from Kafka's FetchRequest.json and
 * FetchResponse.json (4.1 for v4-18; 3.9, the last line that defines them, for v0-3).
 * `records` is a view into the request/response bytes, never copied.
 *
 * Versions that change what a handler reads or writes:
 * - v13: topics are named by `TopicId` (uuid) instead of `Topic` (name), in the request's Topics
 *   and ForgottenTopicsData and in the response's Responses (`topic` is '' from v13, `topicId`
 *   the zero UUID before it). Unknown IDs answer UNKNOWN_TOPIC_ID.
 * - v15: `ReplicaId` leaves the body (-1 from v15); a follower sends the tagged `ReplicaState`
 *   {ReplicaId, ReplicaEpoch} instead (KIP-903).
 * - v16: response tagged `NodeEndpoints` (leaders named in CurrentLeader, KIP-951).
 * - v17: partition tagged `ReplicaDirectoryId` (KIP-853). v18: partition tagged `HighWatermark`
 *   (KIP-1166; default Long.MAX_VALUE, "not supported").
 */
import type { MessageSpec, MessageValue } from './dsl';

/** Fetch request table (Kafka's FetchRequest.json). */
export const FetchRequest = {
  apiKey: 1,
  type: 'request',
  name: 'FetchRequest',
  validVersions: '0-18',
  flexibleVersions: '12+',
  fields: [
    {
      name: 'ClusterId',
      type: 'string',
      versions: '12+',
      nullableVersions: '12+',
      default: null,
      taggedVersions: '12+',
      tag: 0,
    },
    {
      name: 'ReplicaId',
      type: 'int32',
      versions: '0-14',
      default: -1,
      about: 'follower broker id, -1 for a consumer (v15+: ReplicaState)',
    },
    {
      name: 'ReplicaState',
      type: 'ReplicaState',
      versions: '15+',
      taggedVersions: '15+',
      tag: 1,
      fields: [
        {
          name: 'ReplicaId',
          type: 'int32',
          versions: '15+',
          default: -1,
          about: 'follower broker id, -1 for a consumer',
        },
        {
          name: 'ReplicaEpoch',
          type: 'int64',
          versions: '15+',
          default: -1,
          about: "the follower's broker epoch, -1 if unknown",
        },
      ],
    },
    { name: 'MaxWaitMs', type: 'int32', versions: '0+' },
    { name: 'MinBytes', type: 'int32', versions: '0+' },
    { name: 'MaxBytes', type: 'int32', versions: '3+', default: 0x7fffffff },
    { name: 'IsolationLevel', type: 'int8', versions: '4+', default: 0, about: '0 READ_UNCOMMITTED, 1 READ_COMMITTED' },
    { name: 'SessionId', type: 'int32', versions: '7+', default: 0 },
    { name: 'SessionEpoch', type: 'int32', versions: '7+', default: -1 },
    {
      name: 'Topics',
      type: '[]FetchTopic',
      versions: '0+',
      fields: [
        { name: 'Topic', type: 'string', versions: '0-12' },
        { name: 'TopicId', type: 'uuid', versions: '13+' },
        {
          name: 'Partitions',
          type: '[]FetchPartition',
          versions: '0+',
          fields: [
            { name: 'Partition', type: 'int32', versions: '0+' },
            { name: 'CurrentLeaderEpoch', type: 'int32', versions: '9+', default: -1 },
            // Any offset past 2^53 is past the log end: OFFSET_OUT_OF_RANGE, as Kafka answers it.
            { name: 'FetchOffset', type: 'int64', versions: '0+', saturating: true },
            { name: 'LastFetchedEpoch', type: 'int32', versions: '12+', default: -1 },
            { name: 'LogStartOffset', type: 'int64', versions: '5+', default: -1 },
            { name: 'PartitionMaxBytes', type: 'int32', versions: '0+' },
            {
              name: 'ReplicaDirectoryId',
              type: 'uuid',
              versions: '17+',
              taggedVersions: '17+',
              tag: 0,
              about: "the follower's log directory",
            },
            {
              name: 'HighWatermark',
              type: 'int64',
              versions: '18+',
              default: 2 ** 63, // Long.MAX_VALUE as a double (the literal 9223372036854775807 rounds to this)
              taggedVersions: '18+',
              tag: 1,
              about:
                "the follower's high watermark, -1 unknown; the default Long.MAX_VALUE (2^63 as a JS number, only ever compared) means not supported",
            },
          ],
        },
      ],
    },
    {
      name: 'ForgottenTopicsData',
      type: '[]ForgottenTopic',
      versions: '7+',
      fields: [
        { name: 'Topic', type: 'string', versions: '7-12' },
        { name: 'TopicId', type: 'uuid', versions: '13+' },
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
  validVersions: '0-18',
  flexibleVersions: '12+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    { name: 'ErrorCode', type: 'int16', versions: '7+' },
    { name: 'SessionId', type: 'int32', versions: '7+', default: 0 },
    {
      name: 'Responses',
      type: '[]FetchableTopicResponse',
      versions: '0+',
      fields: [
        { name: 'Topic', type: 'string', versions: '0-12' },
        { name: 'TopicId', type: 'uuid', versions: '13+' },
        {
          name: 'Partitions',
          type: '[]PartitionData',
          versions: '0+',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
            { name: 'HighWatermark', type: 'int64', versions: '0+' },
            { name: 'LastStableOffset', type: 'int64', versions: '4+', default: -1 },
            { name: 'LogStartOffset', type: 'int64', versions: '5+', default: -1 },
            {
              name: 'DivergingEpoch',
              type: 'EpochEndOffset',
              versions: '12+',
              taggedVersions: '12+',
              tag: 0,
              fields: [
                { name: 'Epoch', type: 'int32', versions: '12+', default: -1 },
                { name: 'EndOffset', type: 'int64', versions: '12+', default: -1 },
              ],
            },
            {
              name: 'CurrentLeader',
              type: 'LeaderIdAndEpoch',
              versions: '12+',
              taggedVersions: '12+',
              tag: 1,
              fields: [
                { name: 'LeaderId', type: 'int32', versions: '12+', default: -1 },
                { name: 'LeaderEpoch', type: 'int32', versions: '12+', default: -1 },
              ],
            },
            {
              name: 'SnapshotId',
              type: 'SnapshotId',
              versions: '12+',
              taggedVersions: '12+',
              tag: 2,
              fields: [
                { name: 'EndOffset', type: 'int64', versions: '0+', default: -1 },
                { name: 'Epoch', type: 'int32', versions: '0+', default: -1 },
              ],
            },
            {
              name: 'AbortedTransactions',
              type: '[]AbortedTransaction',
              versions: '4+',
              nullableVersions: '4+',
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
    {
      name: 'NodeEndpoints',
      type: '[]NodeEndpoint',
      versions: '16+',
      taggedVersions: '16+',
      tag: 0,
      about: 'endpoints of the leaders named in CurrentLeader (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH)',
      fields: [
        { name: 'NodeId', type: 'int32', versions: '16+' },
        { name: 'Host', type: 'string', versions: '16+' },
        { name: 'Port', type: 'int32', versions: '16+' },
        { name: 'Rack', type: 'string', versions: '16+', nullableVersions: '16+', default: null },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded Fetch request body (all versions; absent fields hold their defaults). */
export type FetchRequestData = MessageValue<typeof FetchRequest>;
/** Fetch response body. */
export type FetchResponseData = MessageValue<typeof FetchResponse>;
