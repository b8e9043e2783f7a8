/**
 * OffsetForLeaderEpoch (API key 23), versions 0-4, flexible from 4. Written from Kafka's
 * OffsetForLeaderEpochRequest.json and OffsetForLeaderEpochResponse.json (Kafka 4.0 dropped
 * v0-1; the tables keep them). v2 adds CurrentLeaderEpoch (request) and ThrottleTimeMs
 * (response); v3 adds ReplicaId (default -2, the "debug" consumer; -1 a consumer). The response
 * LeaderEpoch exists from v1. An unknown epoch answers leaderEpoch -1, endOffset -1.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** OffsetForLeaderEpoch request table (Kafka's OffsetForLeaderEpochRequest.json). */
export const OffsetForLeaderEpochRequest = {
  apiKey: 23,
  type: 'request',
  name: 'OffsetForLeaderEpochRequest',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    { name: 'ReplicaId', type: 'int32', versions: '3+', default: -2, ignorable: true },
    {
      name: 'Topics',
      type: '[]OffsetForLeaderTopic',
      versions: '0+',
      fields: [
        { name: 'Topic', type: 'string', versions: '0+' },
        {
          name: 'Partitions',
          type: '[]OffsetForLeaderPartition',
          versions: '0+',
          fields: [
            { name: 'Partition', type: 'int32', versions: '0+' },
            { name: 'CurrentLeaderEpoch', type: 'int32', versions: '2+', default: -1, ignorable: true },
            { name: 'LeaderEpoch', type: 'int32', versions: '0+' },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** OffsetForLeaderEpoch response table (Kafka's OffsetForLeaderEpochResponse.json). */
export const OffsetForLeaderEpochResponse = {
  apiKey: 23,
  type: 'response',
  name: 'OffsetForLeaderEpochResponse',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '2+', ignorable: true },
    {
      name: 'Topics',
      type: '[]OffsetForLeaderTopicResult',
      versions: '0+',
      fields: [
        { name: 'Topic', type: 'string', versions: '0+' },
        {
          name: 'Partitions',
          type: '[]EpochEndOffset',
          versions: '0+',
          fields: [
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
            { name: 'Partition', type: 'int32', versions: '0+' },
            { name: 'LeaderEpoch', type: 'int32', versions: '1+', default: -1, ignorable: true },
            { name: 'EndOffset', type: 'int64', versions: '0+', default: -1 },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded OffsetForLeaderEpoch request body. */
export type OffsetForLeaderEpochRequestData = MessageValue<typeof OffsetForLeaderEpochRequest>;
/** OffsetForLeaderEpoch response body. */
export type OffsetForLeaderEpochResponseData = MessageValue<typeof OffsetForLeaderEpochResponse>;
