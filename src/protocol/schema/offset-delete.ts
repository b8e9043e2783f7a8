/**
 * OffsetDelete (API key 47), versions 0, never flexible. Written from Kafka's
 * OffsetDeleteRequest.json and OffsetDeleteResponse.json (4.1).
 * Deletes committed offsets of a group (KIP-496); one version, not flexible.
 * Served by src/network/handlers/offset-delete.ts (group coordinator: src/group/).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** OffsetDelete request table (Kafka's OffsetDeleteRequest.json). */
export const OffsetDeleteRequest = {
  apiKey: 47,
  type: 'request',
  name: 'OffsetDeleteRequest',
  validVersions: '0',
  flexibleVersions: 'none',
  fields: [
    { name: 'GroupId', type: 'string', versions: '0+' },
    {
      name: 'Topics',
      type: '[]OffsetDeleteRequestTopic',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        {
          name: 'Partitions',
          type: '[]OffsetDeleteRequestPartition',
          versions: '0+',
          fields: [{ name: 'PartitionIndex', type: 'int32', versions: '0+' }],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** OffsetDelete response table (Kafka's OffsetDeleteResponse.json). */
export const OffsetDeleteResponse = {
  apiKey: 47,
  type: 'response',
  name: 'OffsetDeleteResponse',
  validVersions: '0',
  flexibleVersions: 'none',
  fields: [
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'Topics',
      type: '[]OffsetDeleteResponseTopic',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        {
          name: 'Partitions',
          type: '[]OffsetDeleteResponsePartition',
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

/** Decoded OffsetDelete request body. */
export type OffsetDeleteRequestData = MessageValue<typeof OffsetDeleteRequest>;
/** OffsetDelete response body. */
export type OffsetDeleteResponseData = MessageValue<typeof OffsetDeleteResponse>;
