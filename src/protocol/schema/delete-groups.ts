/**
 * DeleteGroups (API key 42), versions 0-3, flexible from 2. Written from Kafka's
 * DeleteGroupsRequest.json and DeleteGroupsResponse.json (4.4).
 * v2 flexible; v3 adds a per-group ErrorMessage to the response.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** DeleteGroups request table (Kafka's DeleteGroupsRequest.json). */
export const DeleteGroupsRequest = {
  apiKey: 42,
  type: 'request',
  name: 'DeleteGroupsRequest',
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [{ name: 'GroupsNames', type: '[]string', versions: '0+' }],
} as const satisfies MessageSpec;

/** DeleteGroups response table (Kafka's DeleteGroupsResponse.json). */
export const DeleteGroupsResponse = {
  apiKey: 42,
  type: 'response',
  name: 'DeleteGroupsResponse',
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'Results',
      type: '[]DeletableGroupResult',
      versions: '0+',
      fields: [
        { name: 'GroupId', type: 'string', versions: '0+' },
        { name: 'ErrorCode', type: 'int16', versions: '0+' },
        { name: 'ErrorMessage', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded DeleteGroups request body. */
export type DeleteGroupsRequestData = MessageValue<typeof DeleteGroupsRequest>;
/** DeleteGroups response body. */
export type DeleteGroupsResponseData = MessageValue<typeof DeleteGroupsResponse>;
