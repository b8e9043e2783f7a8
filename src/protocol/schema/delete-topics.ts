/**
 * DeleteTopics (API key 20), versions 0-6, flexible from 4. Written from Kafka's
 * DeleteTopicsRequest.json and DeleteTopicsResponse.json. v0-5 name topics in `topicNames`;
 * v6 uses `topics` (name or topic ID).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** DeleteTopics request table (Kafka's DeleteTopicsRequest.json). */
export const DeleteTopicsRequest = {
  apiKey: 20,
  type: 'request',
  name: 'DeleteTopicsRequest',
  validVersions: '0-6',
  flexibleVersions: '4+',
  fields: [
    {
      name: 'Topics',
      type: '[]DeleteTopicState',
      versions: '6+',
      fields: [
        { name: 'Name', type: 'string', versions: '6+', nullableVersions: '6+', default: null },
        { name: 'TopicId', type: 'uuid', versions: '6+' },
      ],
    },
    { name: 'TopicNames', type: '[]string', versions: '0-5' },
    { name: 'TimeoutMs', type: 'int32', versions: '0+' },
  ],
} as const satisfies MessageSpec;

/** DeleteTopics response table (Kafka's DeleteTopicsResponse.json). */
export const DeleteTopicsResponse = {
  apiKey: 20,
  type: 'response',
  name: 'DeleteTopicsResponse',
  validVersions: '0-6',
  flexibleVersions: '4+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    {
      name: 'Responses',
      type: '[]DeletableTopicResult',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+', nullableVersions: '6+' },
        { name: 'TopicId', type: 'uuid', versions: '6+' },
        { name: 'ErrorCode', type: 'int16', versions: '0+' },
        { name: 'ErrorMessage', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded DeleteTopics request body. */
export type DeleteTopicsRequestData = MessageValue<typeof DeleteTopicsRequest>;
/** DeleteTopics response body. */
export type DeleteTopicsResponseData = MessageValue<typeof DeleteTopicsResponse>;
