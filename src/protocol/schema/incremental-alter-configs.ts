/**
 * IncrementalAlterConfigs (API key 44), versions 0-1, flexible from 1. Written from Kafka's
 * IncrementalAlterConfigsRequest.json and IncrementalAlterConfigsResponse.json (KIP-339).
 * ConfigOperation: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT (the last two for list-valued configs).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** IncrementalAlterConfigs request table (Kafka's IncrementalAlterConfigsRequest.json). */
export const IncrementalAlterConfigsRequest = {
  apiKey: 44,
  type: 'request',
  name: 'IncrementalAlterConfigsRequest',
  validVersions: '0-1',
  flexibleVersions: '1+',
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
            { name: 'ConfigOperation', type: 'int8', versions: '0+', about: '0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT' },
            { name: 'Value', type: 'string', versions: '0+', nullableVersions: '0+' },
          ],
        },
      ],
    },
    { name: 'ValidateOnly', type: 'bool', versions: '0+' },
  ],
} as const satisfies MessageSpec;

/** IncrementalAlterConfigs response table (Kafka's IncrementalAlterConfigsResponse.json). */
export const IncrementalAlterConfigsResponse = {
  apiKey: 44,
  type: 'response',
  name: 'IncrementalAlterConfigsResponse',
  validVersions: '0-1',
  flexibleVersions: '1+',
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

/** Decoded IncrementalAlterConfigs request body. */
export type IncrementalAlterConfigsRequestData = MessageValue<typeof IncrementalAlterConfigsRequest>;
/** IncrementalAlterConfigs response body. */
export type IncrementalAlterConfigsResponseData = MessageValue<typeof IncrementalAlterConfigsResponse>;
