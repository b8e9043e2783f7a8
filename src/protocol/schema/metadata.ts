/**
 * Metadata (API key 3), versions 0-13, flexible from 9. Written from Kafka's MetadataRequest.json
 * and MetadataResponse.json (4.x line). In v0 an empty `topics` array means "all topics"; from v1
 * that is a null array (an empty one means none). v13 (KIP-1102) changes no request field and
 * adds the response's top-level ErrorCode (e.g. REBOOTSTRAP_REQUIRED), after the topics.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** Metadata request table (Kafka's MetadataRequest.json). */
export const MetadataRequest = {
  apiKey: 3,
  type: 'request',
  name: 'MetadataRequest',
  validVersions: '0-13',
  flexibleVersions: '9+',
  fields: [
    {
      name: 'Topics',
      type: '[]MetadataRequestTopic',
      versions: '0+',
      nullableVersions: '1+',
      fields: [
        { name: 'TopicId', type: 'uuid', versions: '10+' },
        { name: 'Name', type: 'string', versions: '0+', nullableVersions: '10+' },
      ],
    },
    { name: 'AllowAutoTopicCreation', type: 'bool', versions: '4+', default: true },
    { name: 'IncludeClusterAuthorizedOperations', type: 'bool', versions: '8-10' },
    { name: 'IncludeTopicAuthorizedOperations', type: 'bool', versions: '8+' },
  ],
} as const satisfies MessageSpec;

/** Metadata response table (Kafka's MetadataResponse.json). */
export const MetadataResponse = {
  apiKey: 3,
  type: 'response',
  name: 'MetadataResponse',
  validVersions: '0-13',
  flexibleVersions: '9+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '3+' },
    {
      name: 'Brokers',
      type: '[]MetadataResponseBroker',
      versions: '0+',
      fields: [
        { name: 'NodeId', type: 'int32', versions: '0+' },
        { name: 'Host', type: 'string', versions: '0+' },
        { name: 'Port', type: 'int32', versions: '0+' },
        { name: 'Rack', type: 'string', versions: '1+', nullableVersions: '1+', default: null },
      ],
    },
    { name: 'ClusterId', type: 'string', versions: '2+', nullableVersions: '2+', default: null },
    { name: 'ControllerId', type: 'int32', versions: '1+', default: -1 },
    {
      name: 'Topics',
      type: '[]MetadataResponseTopic',
      versions: '0+',
      fields: [
        { name: 'ErrorCode', type: 'int16', versions: '0+' },
        { name: 'Name', type: 'string', versions: '0+', nullableVersions: '12+' },
        { name: 'TopicId', type: 'uuid', versions: '10+' },
        { name: 'IsInternal', type: 'bool', versions: '1+', default: false },
        {
          name: 'Partitions',
          type: '[]MetadataResponsePartition',
          versions: '0+',
          fields: [
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            { name: 'LeaderId', type: 'int32', versions: '0+' },
            { name: 'LeaderEpoch', type: 'int32', versions: '7+', default: -1 },
            { name: 'ReplicaNodes', type: '[]int32', versions: '0+' },
            { name: 'IsrNodes', type: '[]int32', versions: '0+' },
            { name: 'OfflineReplicas', type: '[]int32', versions: '5+' },
          ],
        },
        { name: 'TopicAuthorizedOperations', type: 'int32', versions: '8+', default: -2147483648 },
      ],
    },
    { name: 'ClusterAuthorizedOperations', type: 'int32', versions: '8-10', default: -2147483648 },
    { name: 'ErrorCode', type: 'int16', versions: '13+', ignorable: true, about: 'top-level error (v13, KIP-1102)' },
  ],
} as const satisfies MessageSpec;

/** Decoded Metadata request body. */
export type MetadataRequestData = MessageValue<typeof MetadataRequest>;
/** Metadata response body. */
export type MetadataResponseData = MessageValue<typeof MetadataResponse>;
