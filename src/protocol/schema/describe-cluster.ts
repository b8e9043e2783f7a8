/**
 * DescribeCluster (API key 60), versions 0-2, flexible in all versions. Written from Kafka's
 * DescribeClusterRequest.json and DescribeClusterResponse.json (KIP-700). v1 adds EndpointType
 * (KIP-919): 1 brokers, 2 controllers; a broker asked for controllers answers
 * MISMATCHED_ENDPOINT_TYPE. v2 adds IncludeFencedBrokers to the request and IsFenced to each
 * broker (KIP-1073).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** DescribeCluster request table (Kafka's DescribeClusterRequest.json). */
export const DescribeClusterRequest = {
  apiKey: 60,
  type: 'request',
  name: 'DescribeClusterRequest',
  validVersions: '0-2',
  flexibleVersions: '0+',
  fields: [
    { name: 'IncludeClusterAuthorizedOperations', type: 'bool', versions: '0+' },
    { name: 'EndpointType', type: 'int8', versions: '1+', default: 1, about: '1 brokers, 2 controllers' },
    { name: 'IncludeFencedBrokers', type: 'bool', versions: '2+' },
  ],
} as const satisfies MessageSpec;

/** DescribeCluster response table (Kafka's DescribeClusterResponse.json). */
export const DescribeClusterResponse = {
  apiKey: 60,
  type: 'response',
  name: 'DescribeClusterResponse',
  validVersions: '0-2',
  flexibleVersions: '0+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
    { name: 'ErrorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'EndpointType', type: 'int8', versions: '1+', default: 1 },
    { name: 'ClusterId', type: 'string', versions: '0+' },
    { name: 'ControllerId', type: 'int32', versions: '0+', default: -1 },
    {
      name: 'Brokers',
      type: '[]DescribeClusterBroker',
      versions: '0+',
      fields: [
        { name: 'BrokerId', type: 'int32', versions: '0+' },
        { name: 'Host', type: 'string', versions: '0+' },
        { name: 'Port', type: 'int32', versions: '0+' },
        { name: 'Rack', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
        { name: 'IsFenced', type: 'bool', versions: '2+' },
      ],
    },
    { name: 'ClusterAuthorizedOperations', type: 'int32', versions: '0+', default: -2147483648 },
  ],
} as const satisfies MessageSpec;

/** Decoded DescribeCluster request body. */
export type DescribeClusterRequestData = MessageValue<typeof DescribeClusterRequest>;
/** DescribeCluster response body. */
export type DescribeClusterResponseData = MessageValue<typeof DescribeClusterResponse>;
