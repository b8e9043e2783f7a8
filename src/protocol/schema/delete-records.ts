/**
 * DeleteRecords (API key 21), versions 0-2, flexible from 2. Written from Kafka's
 * DeleteRecordsRequest.json and DeleteRecordsResponse.json. v1 is the same as v0. Offset -1 in
 * the request means the high watermark.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** DeleteRecords request table (Kafka's DeleteRecordsRequest.json). */
export const DeleteRecordsRequest = {
  apiKey: 21,
  type: 'request',
  name: 'DeleteRecordsRequest',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    {
      name: 'Topics',
      type: '[]DeleteRecordsTopic',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        {
          name: 'Partitions',
          type: '[]DeleteRecordsPartition',
          versions: '0+',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            {
              name: 'Offset',
              type: 'int64',
              versions: '0+',
              about: 'delete records before this offset; -1: the high watermark',
            },
          ],
        },
      ],
    },
    { name: 'TimeoutMs', type: 'int32', versions: '0+' },
  ],
} as const satisfies MessageSpec;

/** DeleteRecords response table (Kafka's DeleteRecordsResponse.json). */
export const DeleteRecordsResponse = {
  apiKey: 21,
  type: 'response',
  name: 'DeleteRecordsResponse',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'Topics',
      type: '[]DeleteRecordsTopicResult',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        {
          name: 'Partitions',
          type: '[]DeleteRecordsPartitionResult',
          versions: '0+',
          fields: [
            { name: 'PartitionIndex', type: 'int32', versions: '0+' },
            { name: 'LowWatermark', type: 'int64', versions: '0+' },
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded DeleteRecords request body. */
export type DeleteRecordsRequestData = MessageValue<typeof DeleteRecordsRequest>;
/** DeleteRecords response body. */
export type DeleteRecordsResponseData = MessageValue<typeof DeleteRecordsResponse>;
