/**
 * ListGroups (API key 16), versions 0-5, flexible from 3. Written from Kafka's
 * ListGroupsRequest.json and ListGroupsResponse.json (4.1).
 * v3 flexible; v4 StatesFilter / GroupState (KIP-518); v5 TypesFilter / GroupType (KIP-848).
 * Served by src/network/handlers/list-groups.ts (group coordinator: src/group/).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** ListGroups request table (Kafka's ListGroupsRequest.json). */
export const ListGroupsRequest = {
  apiKey: 16,
  type: 'request',
  name: 'ListGroupsRequest',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [
    { name: 'StatesFilter', type: '[]string', versions: '4+' },
    { name: 'TypesFilter', type: '[]string', versions: '5+' },
  ],
} as const satisfies MessageSpec;

/** ListGroups response table (Kafka's ListGroupsResponse.json). */
export const ListGroupsResponse = {
  apiKey: 16,
  type: 'response',
  name: 'ListGroupsResponse',
  validVersions: '0-5',
  flexibleVersions: '3+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
    {
      name: 'Groups',
      type: '[]ListedGroup',
      versions: '0+',
      fields: [
        { name: 'GroupId', type: 'string', versions: '0+' },
        { name: 'ProtocolType', type: 'string', versions: '0+' },
        { name: 'GroupState', type: 'string', versions: '4+' },
        { name: 'GroupType', type: 'string', versions: '5+' },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded ListGroups request body. */
export type ListGroupsRequestData = MessageValue<typeof ListGroupsRequest>;
/** ListGroups response body. */
export type ListGroupsResponseData = MessageValue<typeof ListGroupsResponse>;
