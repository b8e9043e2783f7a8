/**
 * DescribeConfigs (API key 32), versions 0-4, flexible from 4. Written from Kafka's
 * DescribeConfigsRequest.json and DescribeConfigsResponse.json. v1 adds IncludeSynonyms and, in
 * the response, ConfigSource and Synonyms (IsDefault is v0 only); v3 adds IncludeDocumentation
 * and, in the response, ConfigType and Documentation. Kafka's older JSON spells the request flag
 * `IncludeSynoyms`; the wire is the same.
 *
 * ResourceType: 2 topic, 4 broker, 8 broker logger (ConfigResource.Type).
 * ConfigSource: 1 dynamic topic, 2 dynamic broker, 3 dynamic default broker, 4 static broker,
 * 5 default, 6 dynamic broker logger; -1 unknown (the v0 placeholder).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** DescribeConfigs request table (Kafka's DescribeConfigsRequest.json). */
export const DescribeConfigsRequest = {
  apiKey: 32,
  type: 'request',
  name: 'DescribeConfigsRequest',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    {
      name: 'Resources',
      type: '[]DescribeConfigsResource',
      versions: '0+',
      fields: [
        { name: 'ResourceType', type: 'int8', versions: '0+' },
        { name: 'ResourceName', type: 'string', versions: '0+' },
        {
          name: 'ConfigurationKeys',
          type: '[]string',
          versions: '0+',
          nullableVersions: '0+',
          about: 'null: all keys',
        },
      ],
    },
    { name: 'IncludeSynonyms', type: 'bool', versions: '1+', default: false },
    { name: 'IncludeDocumentation', type: 'bool', versions: '3+', default: false },
  ],
} as const satisfies MessageSpec;

/** DescribeConfigs response table (Kafka's DescribeConfigsResponse.json). */
export const DescribeConfigsResponse = {
  apiKey: 32,
  type: 'response',
  name: 'DescribeConfigsResponse',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'Results',
      type: '[]DescribeConfigsResult',
      versions: '0+',
      fields: [
        { name: 'ErrorCode', type: 'int16', versions: '0+' },
        { name: 'ErrorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
        { name: 'ResourceType', type: 'int8', versions: '0+' },
        { name: 'ResourceName', type: 'string', versions: '0+' },
        {
          name: 'Configs',
          type: '[]DescribeConfigsResourceResult',
          versions: '0+',
          fields: [
            { name: 'Name', type: 'string', versions: '0+' },
            { name: 'Value', type: 'string', versions: '0+', nullableVersions: '0+' },
            { name: 'ReadOnly', type: 'bool', versions: '0+' },
            { name: 'IsDefault', type: 'bool', versions: '0' },
            { name: 'ConfigSource', type: 'int8', versions: '1+', default: -1, ignorable: true },
            { name: 'IsSensitive', type: 'bool', versions: '0+' },
            {
              name: 'Synonyms',
              type: '[]DescribeConfigsSynonym',
              versions: '1+',
              ignorable: true,
              fields: [
                { name: 'Name', type: 'string', versions: '1+' },
                { name: 'Value', type: 'string', versions: '1+', nullableVersions: '0+' },
                { name: 'Source', type: 'int8', versions: '1+' },
              ],
            },
            { name: 'ConfigType', type: 'int8', versions: '3+', default: 0, ignorable: true },
            { name: 'Documentation', type: 'string', versions: '3+', nullableVersions: '0+', ignorable: true },
          ],
        },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded DescribeConfigs request body. */
export type DescribeConfigsRequestData = MessageValue<typeof DescribeConfigsRequest>;
/** DescribeConfigs response body. */
export type DescribeConfigsResponseData = MessageValue<typeof DescribeConfigsResponse>;
