/**
 * DescribeGroups (API key 15), versions 0-6, flexible from 5. Written from Kafka's
 * DescribeGroupsRequest.json and DescribeGroupsResponse.json (4.1).
 * v3 IncludeAuthorizedOperations / AuthorizedOperations; v4 members' GroupInstanceId; v5
 * flexible; v6 a per-group ErrorMessage, and GROUP_ID_NOT_FOUND for an unknown group (KIP-1043).
 * Served by src/network/handlers/describe-groups.ts (group coordinator: src/group/).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** DescribeGroups request table (Kafka's DescribeGroupsRequest.json). */
export const DescribeGroupsRequest = {
  apiKey: 15,
  type: 'request',
  name: 'DescribeGroupsRequest',
  validVersions: '0-6',
  flexibleVersions: '5+',
  fields: [
    { name: 'Groups', type: '[]string', versions: '0+' },
    { name: 'IncludeAuthorizedOperations', type: 'bool', versions: '3+' },
  ],
} as const satisfies MessageSpec;

/** DescribeGroups response table (Kafka's DescribeGroupsResponse.json). */
export const DescribeGroupsResponse = {
  apiKey: 15,
  type: 'response',
  name: 'DescribeGroupsResponse',
  validVersions: '0-6',
  flexibleVersions: '5+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    {
      name: 'Groups',
      type: '[]DescribedGroup',
      versions: '0+',
      fields: [
        { name: 'ErrorCode', type: 'int16', versions: '0+' },
        { name: 'ErrorMessage', type: 'string', versions: '6+', nullableVersions: '6+', default: null },
        { name: 'GroupId', type: 'string', versions: '0+' },
        { name: 'GroupState', type: 'string', versions: '0+' },
        { name: 'ProtocolType', type: 'string', versions: '0+' },
        { name: 'ProtocolData', type: 'string', versions: '0+' },
        {
          name: 'Members',
          type: '[]DescribedGroupMember',
          versions: '0+',
          fields: [
            { name: 'MemberId', type: 'string', versions: '0+' },
            { name: 'GroupInstanceId', type: 'string', versions: '4+', nullableVersions: '4+', default: null },
            { name: 'ClientId', type: 'string', versions: '0+' },
            { name: 'ClientHost', type: 'string', versions: '0+' },
            { name: 'MemberMetadata', type: 'bytes', versions: '0+' },
            { name: 'MemberAssignment', type: 'bytes', versions: '0+' },
          ],
        },
        { name: 'AuthorizedOperations', type: 'int32', versions: '3+', default: -2147483648 },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded DescribeGroups request body. */
export type DescribeGroupsRequestData = MessageValue<typeof DescribeGroupsRequest>;
/** DescribeGroups response body. */
export type DescribeGroupsResponseData = MessageValue<typeof DescribeGroupsResponse>;
