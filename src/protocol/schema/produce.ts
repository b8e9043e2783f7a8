/**
 * Produce (API key 0), versions 0-13, flexible from 9. Written from Kafka's ProduceRequest.json and
 * ProduceResponse.json (4.1 for v3-13; 3.9, the last line that defines them, for v0-2). `records`
 * is a view into the request frame (the produce hot path never copies it). v0-2 carry message
 * sets v0/v1, v3+ record batches v2.
 *
 * Versions that change what a handler reads or writes:
 * - v10: response tagged `CurrentLeader` per partition and `NodeEndpoints` (KIP-951); v11 adds
 *   only the TRANSACTION_ABORTABLE error, v12 nothing on the wire (KIP-890).
 * - v13: topics are named by `TopicId` (uuid) instead of `Name`, in the request's TopicData and
 *   the response's Responses (`name` is '' from v13, `topicId` the zero UUID before it).
 *   Unknown IDs answer UNKNOWN_TOPIC_ID.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** Produce request table (Kafka's ProduceRequest.json). */
export const ProduceRequest = {
  apiKey: 0,
  type: 'request',
  name: 'ProduceRequest',
  validVersions: '0-13',
  flexibleVersions: '9+',
  fields: [
    { name: 'TransactionalId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
    { name: 'Acks', type: 'int16', versions: '0+', about: '0 none, 1 leader, -1 full ISR' },
    { name: 'TimeoutMs', type: 'int32', versions: '0+' },
    {
      name: 'TopicData',
      type: '[]TopicProduceData',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0-12' },
        { name: 'TopicId', type: 'uuid', versions: '13+' },
        {
          name: 'PartitionData',
          type: '[]PartitionProduceData',
          versions: '0+',
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
  validVersions: '0-13',
  flexibleVersions: '9+',
  fields: [
    {
      name: 'Responses',
      type: '[]TopicProduceResponse',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0-12' },
        { name: 'TopicId', type: 'uuid', versions: '13+' },
        {
          name: 'PartitionResponses',
          type: '[]PartitionProduceResponse',
          versions: '0+',
          fields: [
            { name: 'Index', type: 'int32', versions: '0+', about: 'partition index' },
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
            { name: 'BaseOffset', type: 'int64', versions: '0+' },
            { name: 'LogAppendTimeMs', type: 'int64', versions: '2+', default: -1 },
            { name: 'LogStartOffset', type: 'int64', versions: '5+', default: -1 },
            {
              name: 'RecordErrors',
              type: '[]BatchIndexAndErrorMessage',
              versions: '8+',
              fields: [
                { name: 'BatchIndex', type: 'int32', versions: '8+' },
                {
                  name: 'BatchIndexErrorMessage',
                  type: 'string',
                  versions: '8+',
                  nullableVersions: '8+',
                  default: null,
                },
              ],
            },
            { name: 'ErrorMessage', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
            {
              name: 'CurrentLeader',
              type: 'LeaderIdAndEpoch',
              versions: '10+',
              taggedVersions: '10+',
              tag: 0,
              about: 'the leader to produce to from now on (with NOT_LEADER_OR_FOLLOWER)',
              fields: [
                { name: 'LeaderId', type: 'int32', versions: '10+', default: -1 },
                { name: 'LeaderEpoch', type: 'int32', versions: '10+', default: -1 },
              ],
            },
          ],
        },
      ],
    },
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+', default: 0 },
    {
      name: 'NodeEndpoints',
      type: '[]NodeEndpoint',
      versions: '10+',
      taggedVersions: '10+',
      tag: 0,
      about: 'endpoints of the leaders named in CurrentLeader',
      fields: [
        { name: 'NodeId', type: 'int32', versions: '10+' },
        { name: 'Host', type: 'string', versions: '10+' },
        { name: 'Port', type: 'int32', versions: '10+' },
        { name: 'Rack', type: 'string', versions: '10+', nullableVersions: '10+', default: null },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded Produce request body. */
export type ProduceRequestData = MessageValue<typeof ProduceRequest>;
/** Produce response body. */
export type ProduceResponseData = MessageValue<typeof ProduceResponse>;
