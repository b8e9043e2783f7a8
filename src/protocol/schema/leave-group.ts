/**
 * LeaveGroup (API key 13), versions 0-5, flexible from 4. Written from Kafka's
 * LeaveGroupRequest.json and LeaveGroupResponse.json (4.1).
 * Classic consumer-group protocol. v0-2 one MemberId; v3 a batch of Members with
 * GroupInstanceId (KIP-345), answered per member; v4 flexible; v5 a Reason per member (KIP-800).
 * Served by src/network/handlers/leave-group.ts (group coordinator: src/group/).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** LeaveGroup request table (Kafka's LeaveGroupRequest.json). */
export const LeaveGroupRequest = {
  apiKey: 13,
  type: 'request',
  name: 'LeaveGroupRequest',
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    { name: 'GroupId', type: 'string', versions: '0+' },
    { name: 'MemberId', type: 'string', versions: '0-2' },
    {
      name: 'Members',
      type: '[]MemberIdentity',
      versions: '3+',
      fields: [
        { name: 'MemberId', type: 'string', versions: '3+' },
        { name: 'GroupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
        { name: 'Reason', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** LeaveGroup response table (Kafka's LeaveGroupResponse.json). */
export const LeaveGroupResponse = {
  apiKey: 13,
  type: 'response',
  name: 'LeaveGroupResponse',
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
    {
      name: 'Members',
      type: '[]MemberResponse',
      versions: '3+',
      fields: [
        { name: 'MemberId', type: 'string', versions: '3+' },
        { name: 'GroupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+' },
        { name: 'ErrorCode', type: 'int16', versions: '3+' },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded LeaveGroup request body. */
export type LeaveGroupRequestData = MessageValue<typeof LeaveGroupRequest>;
/** LeaveGroup response body. */
export type LeaveGroupResponseData = MessageValue<typeof LeaveGroupResponse>;
