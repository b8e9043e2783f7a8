/**
 * SyncGroup (API key 14), versions 0-5, flexible from 4. Written from Kafka's
 * SyncGroupRequest.json and SyncGroupResponse.json (4.1).
 * Classic consumer-group protocol: the leader sends the assignments, every member gets its own.
 * v3 GroupInstanceId (KIP-345); v4 flexible; v5 ProtocolType and ProtocolName in request and
 * response (KIP-559; the broker rejects ones inconsistent with the group's).
 * Served by src/network/handlers/sync-group.ts (group coordinator: src/group/).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** SyncGroup request table (Kafka's SyncGroupRequest.json). */
export const SyncGroupRequest = {
  apiKey: 14,
  type: 'request',
  name: 'SyncGroupRequest',
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    { name: 'GroupId', type: 'string', versions: '0+' },
    { name: 'GenerationId', type: 'int32', versions: '0+' },
    { name: 'MemberId', type: 'string', versions: '0+' },
    { name: 'GroupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
    { name: 'ProtocolType', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'ProtocolName', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    {
      name: 'Assignments',
      type: '[]SyncGroupRequestAssignment',
      versions: '0+',
      fields: [
        { name: 'MemberId', type: 'string', versions: '0+' },
        { name: 'Assignment', type: 'bytes', versions: '0+' },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** SyncGroup response table (Kafka's SyncGroupResponse.json). */
export const SyncGroupResponse = {
  apiKey: 14,
  type: 'response',
  name: 'SyncGroupResponse',
  validVersions: '0-5',
  flexibleVersions: '4+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
    { name: 'ProtocolType', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'ProtocolName', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'Assignment', type: 'bytes', versions: '0+' },
  ],
} as const satisfies MessageSpec;

/** Decoded SyncGroup request body. */
export type SyncGroupRequestData = MessageValue<typeof SyncGroupRequest>;
/** SyncGroup response body. */
export type SyncGroupResponseData = MessageValue<typeof SyncGroupResponse>;
