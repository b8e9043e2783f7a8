/**
 * OffsetFetch (API key 9), versions 0-10, flexible from 6. Written from Kafka's
 * OffsetFetchRequest.json and OffsetFetchResponse.json (4.1; 3.9, the last line that defines
 * them, for the versions 4.0 removed).
 * v0 read offsets from ZooKeeper (Kafka 3.9's JSON; removed in 4.0); v2 null Topics means all
 * topics, and a top-level ErrorCode; v3 ThrottleTimeMs; v5 CommittedLeaderEpoch; v6 flexible;
 * v7 RequireStable; v8 batches several groups (GroupId/Topics move into Groups, the response's
 * into Groups too); v9 MemberId/MemberEpoch (KIP-848); v10 topics named by TopicId instead of
 * Name. v10 is unstable in Kafka 4.1 (latestVersionUnstable: not advertised by default).
 * Served by src/network/handlers/offset-fetch.ts (group coordinator: src/group/).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** OffsetFetch request table (Kafka's OffsetFetchRequest.json). */
export const OffsetFetchRequest = {
  apiKey: 9,
  type: 'request',
  name: 'OffsetFetchRequest',
  validVersions: '0-10',
  flexibleVersions: '6+',
  fields: [
    { name: 'GroupId', type: 'string', versions: '0-7' },
    {
      name: 'Topics',
      type: '[]OffsetFetchRequestTopic',
      versions: '0-7',
      nullableVersions: '2-7',
      fields: [
        { name: 'Name', type: 'string', versions: '0-7' },
        { name: 'PartitionIndexes', type: '[]int32', versions: '0-7' },
      ],
    },
    {
      name: 'Groups',
      type: '[]OffsetFetchRequestGroup',
      versions: '8+',
      fields: [
        { name: 'GroupId', type: 'string', versions: '8+' },
        { name: 'MemberId', type: 'string', versions: '9+', nullableVersions: '9+', default: null },
        { name: 'MemberEpoch', type: 'int32', versions: '9+', default: -1 },
        {
          name: 'Topics',
          type: '[]OffsetFetchRequestTopics',
          versions: '8+',
          nullableVersions: '8+',
          fields: [
            { name: 'Name', type: 'string', versions: '8-9' },
            { name: 'TopicId', type: 'uuid', versions: '10+' },
            { name: 'PartitionIndexes', type: '[]int32', versions: '8+' },
          ],
        },
      ],
    },
    { name: 'RequireStable', type: 'bool', versions: '7+', default: false },
  ],
} as const satisfies MessageSpec;

/** OffsetFetch response table (Kafka's OffsetFetchResponse.json). */
export const OffsetFetchResponse = {
  apiKey: 9,
  type: 'response',
  name: 'OffsetFetchResponse',
  validVersions: '0-10',
  flexibleVersions: '6+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '3+' },
    {
      name: 'Topics',
      type: '[]OffsetFetchResponseTopic',
      versions: '0-7',
      fields: [
        { name: 'Name', type: 'string', versions: '0-7' },
        {
          name: 'Partitions',
          type: '[]OffsetFetchResponsePartition',
          versions: '0-7',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0-7' },
            { name: 'CommittedOffset', type: 'int64', versions: '0-7' },
            { name: 'CommittedLeaderEpoch', type: 'int32', versions: '5-7', default: -1 },
            { name: 'Metadata', type: 'string', versions: '0-7', nullableVersions: '0-7' },
            { name: 'ErrorCode', type: 'int16', versions: '0-7' },
          ],
        },
      ],
    },
    { name: 'ErrorCode', type: 'int16', versions: '2-7', default: 0 },
    {
      name: 'Groups',
      type: '[]OffsetFetchResponseGroup',
      versions: '8+',
      fields: [
        { name: 'GroupId', type: 'string', versions: '8+' },
        {
          name: 'Topics',
          type: '[]OffsetFetchResponseTopics',
          versions: '8+',
          fields: [
            { name: 'Name', type: 'string', versions: '8-9' },
            { name: 'TopicId', type: 'uuid', versions: '10+' },
            {
              name: 'Partitions',
              type: '[]OffsetFetchResponsePartitions',
              versions: '8+',
              fields: [
                { name: 'PartitionIndex', type: 'int32', versions: '8+' },
                { name: 'CommittedOffset', type: 'int64', versions: '8+' },
                { name: 'CommittedLeaderEpoch', type: 'int32', versions: '8+', default: -1 },
                { name: 'Metadata', type: 'string', versions: '8+', nullableVersions: '8+' },
                { name: 'ErrorCode', type: 'int16', versions: '8+' },
              ],
            },
          ],
        },
        { name: 'ErrorCode', type: 'int16', versions: '8+', default: 0 },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded OffsetFetch request body. */
export type OffsetFetchRequestData = MessageValue<typeof OffsetFetchRequest>;
/** OffsetFetch response body. */
export type OffsetFetchResponseData = MessageValue<typeof OffsetFetchResponse>;
