/**
 * FindCoordinator (API key 10), versions 0-6, flexible from 3. Written from Kafka's
 * FindCoordinatorRequest.json and FindCoordinatorResponse.json: KeyType from v1 (0 group,
 * 1 transaction, KIP-98), batched CoordinatorKeys from v4 (KIP-699). v5 (TRANSACTION_ABORTABLE,
 * KIP-890) and v6 (KeyType 2 share groups, key "groupId:topicId:partition", KIP-932) add no fields.
 */
import type { MessageSpec, MessageValue } from './dsl';

/** FindCoordinator request table. */
export const FindCoordinatorRequest = {
  apiKey: 10,
  type: 'request',
  name: 'FindCoordinatorRequest',
  validVersions: '0-6',
  flexibleVersions: '3+',
  fields: [
    { name: 'Key', type: 'string', versions: '0-3' },
    { name: 'KeyType', type: 'int8', versions: '1+', default: 0 },
    { name: 'CoordinatorKeys', type: '[]string', versions: '4+' },
  ],
} as const satisfies MessageSpec;

/** FindCoordinator response table. */
export const FindCoordinatorResponse = {
  apiKey: 10,
  type: 'response',
  name: 'FindCoordinatorResponse',
  validVersions: '0-6',
  flexibleVersions: '3+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '1+' },
    { name: 'ErrorCode', type: 'int16', versions: '0-3' },
    { name: 'ErrorMessage', type: 'string', versions: '1-3', nullableVersions: '1-3' },
    { name: 'NodeId', type: 'int32', versions: '0-3' },
    { name: 'Host', type: 'string', versions: '0-3' },
    { name: 'Port', type: 'int32', versions: '0-3' },
    {
      name: 'Coordinators',
      type: '[]Coordinator',
      versions: '4+',
      fields: [
        { name: 'Key', type: 'string', versions: '4+' },
        { name: 'NodeId', type: 'int32', versions: '4+' },
        { name: 'Host', type: 'string', versions: '4+' },
        { name: 'Port', type: 'int32', versions: '4+' },
        { name: 'ErrorCode', type: 'int16', versions: '4+' },
        { name: 'ErrorMessage', type: 'string', versions: '4+', nullableVersions: '4+' },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** Decoded FindCoordinator request body. */
export type FindCoordinatorRequestData = MessageValue<typeof FindCoordinatorRequest>;
/** FindCoordinator response body. */
export type FindCoordinatorResponseData = MessageValue<typeof FindCoordinatorResponse>;
