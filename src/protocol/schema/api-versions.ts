/**
 * ApiVersions (API key 18), versions 0-5, flexible from 3. Written from Kafka's
 * ApiVersionsRequest.json and ApiVersionsResponse.json. Note (from the JSON): the ApiVersions
 * response header stays v0 even at v3+ (see header.ts), and a v0 body answers an unsupported
 * request version with UNSUPPORTED_VERSION (KIP-511). v4 has v3's fields; it only lets
 * SupportedFeatures carry a MinVersion of 0 (KAFKA-17011: at v3 Kafka leaves such features out).
 * v5 (KIP-1242, Kafka 4.4) adds the request's ClusterId and NodeId: the cluster and node the client
 * means to reach (null / -1 when unknown); a broker that is not that node answers
 * REBOOTSTRAP_REQUIRED. The response is unchanged.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** ApiVersions request table (Kafka's ApiVersionsRequest.json). */
export const ApiVersionsRequest = {
  apiKey: 18,
  type: 'request',
  name: 'ApiVersionsRequest',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [
    { name: 'ClientSoftwareName', type: 'string', versions: '3+' },
    { name: 'ClientSoftwareVersion', type: 'string', versions: '3+' },
    { name: 'ClusterId', type: 'string', versions: '5+', nullableVersions: '5+', default: null, ignorable: true },
    { name: 'NodeId', type: 'int32', versions: '5+', default: -1, ignorable: true },
  ],
} as const satisfies MessageSpec;

/** ApiVersions response table (Kafka's ApiVersionsResponse.json). */
export const ApiVersionsResponse = {
  apiKey: 18,
  type: 'response',
  name: 'ApiVersionsResponse',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
    {
      name: 'ApiKeys',
      type: '[]ApiVersion',
      versions: '0+',
      fields: [
        { name: 'ApiKey', type: 'int16', versions: '0+' },
        { name: 'MinVersion', type: 'int16', versions: '0+' },
        { name: 'MaxVersion', type: 'int16', versions: '0+' },
      ],
    },
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    {
      name: 'SupportedFeatures',
      type: '[]SupportedFeatureKey',
      versions: '3+',
      taggedVersions: '3+',
      tag: 0,
      fields: [
        { name: 'Name', type: 'string', versions: '3+' },
        { name: 'MinVersion', type: 'int16', versions: '3+' },
        { name: 'MaxVersion', type: 'int16', versions: '3+' },
      ],
    },
    { name: 'FinalizedFeaturesEpoch', type: 'int64', versions: '3+', taggedVersions: '3+', tag: 1, default: -1 },
    {
      name: 'FinalizedFeatures',
      type: '[]FinalizedFeatureKey',
      versions: '3+',
      taggedVersions: '3+',
      tag: 2,
      fields: [
        { name: 'Name', type: 'string', versions: '3+' },
        { name: 'MaxVersionLevel', type: 'int16', versions: '3+' },
        { name: 'MinVersionLevel', type: 'int16', versions: '3+' },
      ],
    },
    { name: 'ZkMigrationReady', type: 'bool', versions: '3+', taggedVersions: '3+', tag: 3, default: false },
  ],
} as const satisfies MessageSpec;

/** Decoded ApiVersions request body. */
export type ApiVersionsRequestData = MessageValue<typeof ApiVersionsRequest>;
/** ApiVersions response body. */
export type ApiVersionsResponseData = MessageValue<typeof ApiVersionsResponse>;
