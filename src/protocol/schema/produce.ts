/**
 * Produce (API key 0), versions 0-9, flexible from 9. Written from Kafka's ProduceRequest.json and
 * ProduceResponse.json (3.x line). `records` is a view into the request frame (the produce hot
 * path never copies it). v0-2 carry message sets v0/v1, v3+ record batches v2.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** Produce request table (Kafka's ProduceRequest.json). */
export const ProduceRequest = {
  apiKey: 0,
  type: 'request',
  name: 'ProduceRequest',
  validVersions: '0-9',
  flexibleVersions: '9+',
  fields: [
    { name: 'TransactionalId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
    { name: 'Acks', type: 'int16', versions: '0+', about: '0 none, 1 leader, -1 full ISR' },
    { name: 'TimeoutMs', type: 'int32', versions: '0+' },
    {
      name: 'TopicData', type: '[]TopicProduceData', versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        {
          name: 'PartitionData', type: '[]PartitionProduceData', versions: '0+',
          fields: [
            { name: 'Index', type: 'int32', versions: '0+', about: 'partition index' },
            { name: 'Records', type: 'records', versions: '0+', nullableVersions: '0+' },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Produce response table (Kafka's ProduceResponse.json). */
export const ProduceResponse = {
  apiKey: 0,
  type: 'response',
  name: 'ProduceResponse',
  validVersions: '0-9',
  flexibleVersions: '9+',
  fields: [
    {
      name: 'Responses', type: '[]TopicProduceResponse', versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        {
          name: 'PartitionResponses', type: '[]PartitionProduceResponse', versions: '0+',
          fields: [
            { name: 'Index', type: 'int32', versions: '0+', about: 'partition index' },
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
            { name: 'BaseOffset', type: 'int64', versions: '0+' },
            { name: 'LogAppendTimeMs', type: 'int64', versions: '2+', default: -1 },
            { name: 'LogStartOffset', type: 'int64', versions: '5+', default: -1 },
            {
              name: 'RecordErrors', type: '[]BatchIndexAndErrorMessage', versions: '8+',
              fields: [
                { name: 'BatchIndex', type: 'int32', versions: '8+' },
                { name: 'BatchIndexErrorMessage', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
              ],
            },
            { name: 'ErrorMessage', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
          ],
        },
      ],
    },
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+', default: 0 },
  ],
} as const satisfies MessageSpec;

/** Decoded Produce request body. */
export type ProduceRequestData = MessageValue<typeof ProduceRequest>;
/** Produce response body. */
export type ProduceResponseData = MessageValue<typeof ProduceResponse>;
