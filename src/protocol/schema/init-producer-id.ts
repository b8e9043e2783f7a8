/**
 * InitProducerId (API key 22), versions 0-6, flexible from 2. Written from Kafka's
 * InitProducerIdRequest.json and InitProducerIdResponse.json (KIP-98; v3 adds the producer id and
 * epoch for KIP-360 epoch bumps; v4 allows PRODUCER_FENCED; v5 TRANSACTION_ABORTABLE (KIP-890),
 * no new fields; v6 two-phase commit (KIP-939): Enable2Pc and KeepPreparedTxn in the request,
 * the ongoing transaction's producer id and epoch in the response). v6 is unstable in Kafka 4.1
 * (latestVersionUnstable: not advertised by default).
 */
import type { MessageSpec, MessageValue } from './dsl';

/** InitProducerId request table (Kafka's InitProducerIdRequest.json). */
export const InitProducerIdRequest = {
  apiKey: 22,
  type: 'request',
  name: 'InitProducerIdRequest',
  validVersions: '0-6',
  flexibleVersions: '2+',
  fields: [
    { name: 'TransactionalId', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'TransactionTimeoutMs', type: 'int32', versions: '0+' },
    { name: 'ProducerId', type: 'int64', versions: '3+', default: -1 },
    { name: 'ProducerEpoch', type: 'int16', versions: '3+', default: -1 },
    { name: 'Enable2Pc', type: 'bool', versions: '6+', default: false },
    { name: 'KeepPreparedTxn', type: 'bool', versions: '6+', default: false },
  ],
} as const satisfies MessageSpec;

/** InitProducerId response table (Kafka's InitProducerIdResponse.json). */
export const InitProducerIdResponse = {
  apiKey: 22,
  type: 'response',
  name: 'InitProducerIdResponse',
  validVersions: '0-6',
  flexibleVersions: '2+',
  fields: [
    { name: 'ThrottleTimeMs', type: 'int32', versions: '0+' },
    { name: 'ErrorCode', type: 'int16', versions: '0+' },
    { name: 'ProducerId', type: 'int64', versions: '0+', default: -1 },
    { name: 'ProducerEpoch', type: 'int16', versions: '0+' },
    {
      name: 'OngoingTxnProducerId',
      type: 'int64',
      versions: '6+',
      about: "with KeepPreparedTxn: the prepared transaction's producer id",
    },
    { name: 'OngoingTxnProducerEpoch', type: 'int16', versions: '6+', default: -1 },
  ],
} as const satisfies MessageSpec;

/** Decoded InitProducerId request body. */
export type InitProducerIdRequestData = MessageValue<typeof InitProducerIdRequest>;
/** InitProducerId response body. */
export type InitProducerIdResponseData = MessageValue<typeof InitProducerIdResponse>;
