/**
 * CreatePartitions (API key 37), versions 0-3, flexible from 2. Written from Kafka's
 * CreatePartitionsRequest.json and CreatePartitionsResponse.json. v1 is the same as v0; v3 is
 * the same as v2 but may answer THROTTLING_QUOTA_EXCEEDED (KIP-599). `Count` is the new total
 * partition count; `Assignments` (null: broker's choice) has one entry per NEW partition.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** CreatePartitions request table (Kafka's CreatePartitionsRequest.json). */
export const CreatePartitionsRequest = {
  apiKey: 37,
  type: 'request',
  name: 'CreatePartitionsRequest',
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    {
      name: 'Topics',
      type: '[]CreatePartitionsTopic',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        { name: 'Count', type: 'int32', versions: '0+', about: 'the new partition count' },
        {
          name: 'Assignments',
          type: '[]CreatePartitionsAssignment',
          versions: '0+',
          nullableVersions: '0+',
          fields: [{ name: 'BrokerIds', type: '[]int32', versions: '0+' }],
        },
      ],
    },
    { name: 'TimeoutMs', type: 'int32', versions: '0+' },
    { name: 'ValidateOnly', type: 'bool', versions: '0+' },
  ],
} as const satisfies MessageSpec;

/** CreatePartitions response table (Kafka's CreatePartitionsResponse.json). */
export const CreatePartitionsResponse = {
  apiKey: 37,
  type: 'response',
  name: 'CreatePartitionsResponse',
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'Results',
      type: '[]CreatePartitionsTopicResult',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        { name: 'ErrorCode', type: 'int16', versions: '0+' },
        { name: 'ErrorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded CreatePartitions request body. */
export type CreatePartitionsRequestData = MessageValue<typeof CreatePartitionsRequest>;
/** CreatePartitions response body. */
export type CreatePartitionsResponseData = MessageValue<typeof CreatePartitionsResponse>;
