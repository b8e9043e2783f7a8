/**
 * CreateTopics (API key 19), versions 0-7, flexible from 5. Written from Kafka's
 * CreateTopicsRequest.json and CreateTopicsResponse.json. The request's last two fields are
 * spelled `timeoutMs` and `validateOnly` in Kafka's JSON too.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** CreateTopics request table (Kafka's CreateTopicsRequest.json). */
export const CreateTopicsRequest = {
  apiKey: 19,
  type: 'request',
  name: 'CreateTopicsRequest',
  validVersions: '0-7',
  flexibleVersions: '5+',
  fields: [
    {
      name: 'Topics',
      type: '[]CreatableTopic',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        { name: 'NumPartitions', type: 'int32', versions: '0+', about: '-1: broker default or manual assignment' },
        { name: 'ReplicationFactor', type: 'int16', versions: '0+', about: '-1: broker default or manual assignment' },
        {
          name: 'Assignments',
          type: '[]CreatableReplicaAssignment',
          versions: '0+',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            { name: 'BrokerIds', type: '[]int32', versions: '0+' },
          ],
        },
        {
          name: 'Configs',
          type: '[]CreateableTopicConfig',
          versions: '0+',
          fields: [
            { name: 'Name', type: 'string', versions: '0+' },
            { name: 'Value', type: 'string', versions: '0+', nullableVersions: '0+' },
          ],
        },
      ],
    },
    { name: 'timeoutMs', type: 'int32', versions: '0+', default: 60000 },
    { name: 'validateOnly', type: 'bool', versions: '1+', default: false },
  ],
} as const satisfies MessageSpec;

/** CreateTopics response table (Kafka's CreateTopicsResponse.json). */
export const CreateTopicsResponse = {
  apiKey: 19,
  type: 'response',
  name: 'CreateTopicsResponse',
  validVersions: '0-7',
  flexibleVersions: '5+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '2+' },
    {
      name: 'Topics',
      type: '[]CreatableTopicResult',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        { name: 'TopicId', type: 'uuid', versions: '7+' },
        { name: 'ErrorCode', type: 'int16', versions: '0+' },
        { name: 'ErrorMessage', type: 'string', versions: '1+', nullableVersions: '0+' },
        { name: 'TopicConfigErrorCode', type: 'int16', versions: '5+', taggedVersions: '5+', tag: 0 },
        { name: 'NumPartitions', type: 'int32', versions: '5+', default: -1 },
        { name: 'ReplicationFactor', type: 'int16', versions: '5+', default: -1 },
        {
          name: 'Configs',
          type: '[]CreatableTopicConfigs',
          versions: '5+',
          nullableVersions: '5+',
          fields: [
            { name: 'Name', type: 'string', versions: '5+' },
            { name: 'Value', type: 'string', versions: '5+', nullableVersions: '5+' },
            { name: 'ReadOnly', type: 'bool', versions: '5+' },
            { name: 'ConfigSource', type: 'int8', versions: '5+', default: -1 },
            { name: 'IsSensitive', type: 'bool', versions: '5+' },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded CreateTopics request body. */
export type CreateTopicsRequestData = MessageValue<typeof CreateTopicsRequest>;
/** CreateTopics response body. */
export type CreateTopicsResponseData = MessageValue<typeof CreateTopicsResponse>;
