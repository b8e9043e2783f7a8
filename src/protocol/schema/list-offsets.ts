/**
 * ListOffsets (API key 2), versions 0-11, flexible from 6. Written from Kafka's
 * ListOffsetsRequest.json and ListOffsetsResponse.json (4.x line; Kafka 4.0 dropped v0, the
 * table keeps it). Timestamp -1 = latest, -2 = earliest, -3 = max timestamp (v7, KIP-734),
 * -4 = earliest local (v8, KIP-405), -5 = latest tiered (v9, KIP-1005): v8 and v9 add no field,
 * only those timestamp values. v10 adds the request's TimeoutMs (KIP-1075, remote lookups). v11
 * adds no field either: it allows timestamp -6, the earliest offset still pending upload to remote
 * storage (KIP-1023).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** ListOffsets request table (Kafka's ListOffsetsRequest.json). */
export const ListOffsetsRequest = {
  apiKey: 2,
  type: 'request',
  name: 'ListOffsetsRequest',
  validVersions: '0-11',
  flexibleVersions: '6+',
  fields: [
    { name: 'ReplicaId', type: 'int32', versions: '0+' },
    { name: 'IsolationLevel', type: 'int8', versions: '2+' },
    {
      name: 'Topics',
      type: '[]ListOffsetsTopic',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        {
          name: 'Partitions',
          type: '[]ListOffsetsPartition',
          versions: '0+',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            { name: 'CurrentLeaderEpoch', type: 'int32', versions: '4+', default: -1 },
            { name: 'Timestamp', type: 'int64', versions: '0+' },
            { name: 'MaxNumOffsets', type: 'int32', versions: '0', default: 1 },
          ],
        },
      ],
    },
    {
      name: 'TimeoutMs',
      type: 'int32',
      versions: '10+',
      ignorable: true,
      about: 'wait for remote-storage lookups (tiered topics)',
    },
  ],
} as const satisfies MessageSpec;

/** ListOffsets response table (Kafka's ListOffsetsResponse.json). */
export const ListOffsetsResponse = {
  apiKey: 2,
  type: 'response',
  name: 'ListOffsetsResponse',
  validVersions: '0-11',
  flexibleVersions: '6+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '2+' },
    {
      name: 'Topics',
      type: '[]ListOffsetsTopicResponse',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        {
          name: 'Partitions',
          type: '[]ListOffsetsPartitionResponse',
          versions: '0+',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
            { name: 'OldStyleOffsets', type: '[]int64', versions: '0' },
            { name: 'Timestamp', type: 'int64', versions: '1+', default: -1 },
            { name: 'Offset', type: 'int64', versions: '1+', default: -1 },
            { name: 'LeaderEpoch', type: 'int32', versions: '4+', default: -1 },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded ListOffsets request body. */
export type ListOffsetsRequestData = MessageValue<typeof ListOffsetsRequest>;
/** ListOffsets response body. */
export type ListOffsetsResponseData = MessageValue<typeof ListOffsetsResponse>;
