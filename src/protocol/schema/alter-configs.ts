/**
 * AlterConfigs (API key 33), versions 0-2, flexible from 2. Written from Kafka's
 * AlterConfigsRequest.json and AlterConfigsResponse.json. v1 is the same as v0. Replaces the
 * whole set of dynamic configs of each resource (IncrementalAlterConfigs edits them).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** AlterConfigs request table (Kafka's AlterConfigsRequest.json). */
export const AlterConfigsRequest = {
  apiKey: 33,
  type: 'request',
  name: 'AlterConfigsRequest',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    {
      name: 'Resources',
      type: '[]AlterConfigsResource',
      versions: '0+',
      fields: [
        { name: 'ResourceType', type: 'int8', versions: '0+' },
        { name: 'ResourceName', type: 'string', versions: '0+' },
        {
          name: 'Configs',
          type: '[]AlterableConfig',
          versions: '0+',
          fields: [
            { name: 'Name', type: 'string', versions: '0+' },
            { name: 'Value', type: 'string', versions: '0+', nullableVersions: '0+' },
          ],
        },
      ],
    },
    { name: 'ValidateOnly', type: 'bool', versions: '0+' },
  ],
} as const satisfies MessageSpec;

/** AlterConfigs response table (Kafka's AlterConfigsResponse.json). */
export const AlterConfigsResponse = {
  apiKey: 33,
  type: 'response',
  name: 'AlterConfigsResponse',
  validVersions: '0-2',
  flexibleVersions: '2+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'Responses',
      type: '[]AlterConfigsResourceResponse',
      versions: '0+',
      fields: [
        { name: 'ErrorCode', type: 'int16', versions: '0+' },
        { name: 'ErrorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
        { name: 'ResourceType', type: 'int8', versions: '0+' },
        { name: 'ResourceName', type: 'string', versions: '0+' },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded AlterConfigs request body. */
export type AlterConfigsRequestData = MessageValue<typeof AlterConfigsRequest>;
/** AlterConfigs response body. */
export type AlterConfigsResponseData = MessageValue<typeof AlterConfigsResponse>;
