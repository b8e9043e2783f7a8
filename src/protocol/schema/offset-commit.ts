/**
 * OffsetCommit (API key 8), versions 0-10, flexible from 8. Written from Kafka's
 * OffsetCommitRequest.json and OffsetCommitResponse.json (4.1; 3.9, the last line that defines
 * them, for the versions 4.0 removed).
 * v1 GenerationIdOrMemberEpoch, MemberId and a per-partition CommitTimestamp (v1 only);
 * v2-4 RetentionTimeMs; v6 CommittedLeaderEpoch; v7 GroupInstanceId; v8 flexible; v9 usable with
 * the KIP-848 consumer protocol (STALE_MEMBER_EPOCH, GROUP_ID_NOT_FOUND); v10 topics named by
 * TopicId instead of Name (request and response). v0-1 come from Kafka 3.9 (removed in 4.0);
 * v10 is unstable in Kafka 4.1 (latestVersionUnstable: not advertised by default).
 * Served by src/network/handlers/offset-commit.ts (group coordinator: src/group/).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** OffsetCommit request table (Kafka's OffsetCommitRequest.json). */
export const OffsetCommitRequest = {
  apiKey: 8,
  type: 'request',
  name: 'OffsetCommitRequest',
  validVersions: '0-10',
  flexibleVersions: '8+',
  fields: [
    { name: 'GroupId', type: 'string', versions: '0+' },
    { name: 'GenerationIdOrMemberEpoch', type: 'int32', versions: '1+', default: -1 },
    { name: 'MemberId', type: 'string', versions: '1+' },
    { name: 'GroupInstanceId', type: 'string', versions: '7+', nullableVersions: '7+', default: null },
    { name: 'RetentionTimeMs', type: 'int64', versions: '2-4', default: -1 },
    {
      name: 'Topics',
      type: '[]OffsetCommitRequestTopic',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0-9' },
        { name: 'TopicId', type: 'uuid', versions: '10+' },
        {
          name: 'Partitions',
          type: '[]OffsetCommitRequestPartition',
          versions: '0+',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            { name: 'CommittedOffset', type: 'int64', versions: '0+' },
            { name: 'CommittedLeaderEpoch', type: 'int32', versions: '6+', default: -1 },
            { name: 'CommitTimestamp', type: 'int64', versions: '1', default: -1, about: "v1 only (Kafka 3.9's JSON)" },
            { name: 'CommittedMetadata', type: 'string', versions: '0+', nullableVersions: '0+' },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** OffsetCommit response table (Kafka's OffsetCommitResponse.json). */
export const OffsetCommitResponse = {
  apiKey: 8,
  type: 'response',
  name: 'OffsetCommitResponse',
  validVersions: '0-10',
  flexibleVersions: '8+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '3+' },
    {
      name: 'Topics',
      type: '[]OffsetCommitResponseTopic',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0-9' },
        { name: 'TopicId', type: 'uuid', versions: '10+' },
        {
          name: 'Partitions',
          type: '[]OffsetCommitResponsePartition',
          versions: '0+',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded OffsetCommit request body. */
export type OffsetCommitRequestData = MessageValue<typeof OffsetCommitRequest>;
/** OffsetCommit response body. */
export type OffsetCommitResponseData = MessageValue<typeof OffsetCommitResponse>;
