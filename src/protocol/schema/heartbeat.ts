/**
 * Heartbeat (API key 12), versions 0-4, flexible from 4. Written from Kafka's
 * HeartbeatRequest.json and HeartbeatResponse.json (4.1).
 * Classic consumer-group protocol. v3 GroupInstanceId (KIP-345); v4 flexible.
 * Served by src/network/handlers/heartbeat.ts (group coordinator: src/group/).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** Heartbeat request table (Kafka's HeartbeatRequest.json). */
export const HeartbeatRequest = {
  apiKey: 12,
  type: 'request',
  name: 'HeartbeatRequest',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    { name: 'GroupId', type: 'string', versions: '0+' },
    { name: 'GenerationId', type: 'int32', versions: '0+' },
    { name: 'MemberId', type: 'string', versions: '0+' },
    { name: 'GroupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
  ],
} as const satisfies MessageSpec;

/** Heartbeat response table (Kafka's HeartbeatResponse.json). */
export const HeartbeatResponse = {
  apiKey: 12,
  type: 'response',
  name: 'HeartbeatResponse',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
  ],
} as const satisfies MessageSpec;

/** Decoded Heartbeat request body. */
export type HeartbeatRequestData = MessageValue<typeof HeartbeatRequest>;
/** Heartbeat response body. */
export type HeartbeatResponseData = MessageValue<typeof HeartbeatResponse>;
