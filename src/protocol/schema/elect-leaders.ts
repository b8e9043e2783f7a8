/**
 * ElectLeaders (API key 43), versions 0-2, flexible from 2. Written from Kafka's
 * ElectLeadersRequest.json and ElectLeadersResponse.json (4.1).
 * Admin API (KIP-183, KIP-460): elect preferred (ElectionType 0) or unclean (1) leaders for the
 * listed partitions, or for all partitions when TopicPartitions is null. v1 adds ElectionType
 * and a top-level ErrorCode; v2 is the first flexible version. Served by
 * network/handlers/elect-leaders.ts.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** ElectLeaders request table (Kafka's ElectLeadersRequest.json). */
export const ElectLeadersRequest = {
  apiKey: 43,
  type: 'request',
  name: 'ElectLeadersRequest',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    { name: 'ElectionType', type: 'int8', versions: '1+' },
    {
      name: 'TopicPartitions',
      type: '[]TopicPartitions',
      versions: '0+',
      nullableVersions: '0+',
      fields: [
        { name: 'Topic', type: 'string', versions: '0+' },
        { name: 'Partitions', type: '[]int32', versions: '0+' },
      ],
    },
    { name: 'TimeoutMs', type: 'int32', versions: '0+', default: 60000 },
  ],
} as const satisfies MessageSpec;

/** ElectLeaders response table (Kafka's ElectLeadersResponse.json). */
export const ElectLeadersResponse = {
  apiKey: 43,
  type: 'response',
  name: 'ElectLeadersResponse',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    { name: 'ErrorCode', type: 'int16', versions: '1+' },
    {
      name: 'ReplicaElectionResults',
      type: '[]ReplicaElectionResult',
      versions: '0+',
      fields: [
        { name: 'Topic', type: 'string', versions: '0+' },
        {
          name: 'PartitionResult',
          type: '[]PartitionResult',
          versions: '0+',
          fields: [
            { name: 'PartitionId', type: 'int32', versions: '0+' },
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
            { name: 'ErrorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded ElectLeaders request body. */
export type ElectLeadersRequestData = MessageValue<typeof ElectLeadersRequest>;
/** ElectLeaders response body. */
export type ElectLeadersResponseData = MessageValue<typeof ElectLeadersResponse>;
