/**
 * InitProducerId (API key 22), versions 0-4, flexible from 2. Written from Kafka's
 * InitProducerIdRequest.json and InitProducerIdResponse.json (KIP-98; v3 adds the producer id and
 * epoch for KIP-360 epoch bumps; v4 allows PRODUCER_FENCED).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** InitProducerId request table (Kafka's InitProducerIdRequest.json). */
export const InitProducerIdRequest = {
  apiKey: 22,
  type: 'request',
  name: 'InitProducerIdRequest',
  validVersions: '0-4',
  flexibleVersions: '2+',
  fields: [
    { name: 'TransactionalId', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'TransactionTimeoutMs', type: 'int32', versions: '0+' },
    { name: 'ProducerId', type: 'int64', versions: '3+', default: -1 },
    { name: 'ProducerEpoch', type: 'int16', versions: '3+', default: -1 },
  ],
} as const satisfies MessageSpec;

/** InitProducerId response table (Kafka's InitProducerIdResponse.json). */
export const InitProducerIdResponse = {
  apiKey: 22,
  type: 'response',
  name: 'InitProducerIdResponse',
  validVersions: '0-4',
  flexibleVersions: '2+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
    { name: 'ProducerId', type: 'int64', versions: '0+', default: -1 },
    { name: 'ProducerEpoch', type: 'int16', versions: '0+' },
  ],
} as const satisfies MessageSpec;

/** Decoded InitProducerId request body. */
export type InitProducerIdRequestData = MessageValue<typeof InitProducerIdRequest>;
/** InitProducerId response body. */
export type InitProducerIdResponseData = MessageValue<typeof InitProducerIdResponse>;
