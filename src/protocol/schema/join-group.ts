/**
 * JoinGroup (API key 11), versions 0-9, flexible from 6. Written from Kafka's
 * JoinGroupRequest.json and JoinGroupResponse.json (4.1).
 * Classic consumer-group protocol. v1 RebalanceTimeoutMs; v4 a member without an id gets
 * MEMBER_ID_REQUIRED and rejoins with the id assigned; v5 GroupInstanceId (static membership,
 * KIP-345); v6 flexible; v7 response ProtocolType (KIP-559; ProtocolName nullable from v7);
 * v8 request Reason (KIP-800); v9 response SkipAssignment (KIP-814).
 * Served by src/network/handlers/join-group.ts (group coordinator: src/group/).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** JoinGroup request table (Kafka's JoinGroupRequest.json). */
export const JoinGroupRequest = {
  apiKey: 11,
  type: 'request',
  name: 'JoinGroupRequest',
  validVersions: '0-9',
  flexibleVersions: '6+',
  fields: [
    { name: 'GroupId', type: 'string', versions: '0+' },
    { name: 'SessionTimeoutMs', type: 'int32', versions: '0+' },
    { name: 'RebalanceTimeoutMs', type: 'int32', versions: '1+', default: -1 },
    { name: 'MemberId', type: 'string', versions: '0+' },
    { name: 'GroupInstanceId', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'ProtocolType', type: 'string', versions: '0+' },
    {
      name: 'Protocols',
      type: '[]JoinGroupRequestProtocol',
      versions: '0+',
      fields: [
        { name: 'Name', type: 'string', versions: '0+' },
        { name: 'Metadata', type: 'bytes', versions: '0+' },
      ],
    },
    { name: 'Reason', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
  ],
} as const satisfies MessageSpec;

/** JoinGroup response table (Kafka's JoinGroupResponse.json). */
export const JoinGroupResponse = {
  apiKey: 11,
  type: 'response',
  name: 'JoinGroupResponse',
  validVersions: '0-9',
  flexibleVersions: '6+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '2+' },
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
    { name: 'GenerationId', type: 'int32', versions: '0+', default: -1 },
    { name: 'ProtocolType', type: 'string', versions: '7+', nullableVersions: '7+', default: null },
    { name: 'ProtocolName', type: 'string', versions: '0+', nullableVersions: '7+' },
    { name: 'Leader', type: 'string', versions: '0+' },
    { name: 'SkipAssignment', type: 'bool', versions: '9+', default: false },
    { name: 'MemberId', type: 'string', versions: '0+' },
    {
      name: 'Members',
      type: '[]JoinGroupResponseMember',
      versions: '0+',
      fields: [
        { name: 'MemberId', type: 'string', versions: '0+' },
        { name: 'GroupInstanceId', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
        { name: 'Metadata', type: 'bytes', versions: '0+' },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded JoinGroup request body. */
export type JoinGroupRequestData = MessageValue<typeof JoinGroupRequest>;
/** JoinGroup response body. */
export type JoinGroupResponseData = MessageValue<typeof JoinGroupResponse>;
