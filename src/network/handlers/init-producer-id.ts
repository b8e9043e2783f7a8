/**
 * InitProducerId (key 22): gives an idempotent producer (KIP-98; the Java producer's default)
 * a fresh producer id at epoch 0 from the controller, which records the allocation in its metadata
 * log so ids are never reused after a restart. Transactional ids need a transaction coordinator,
 * which Skiff does not have yet: they get TRANSACTIONAL_ID_AUTHORIZATION_FAILED, a fatal error the
 * producer reports at once rather than a retriable one it would loop on.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../../protocol/schema/init-producer-id';

export const initProducerIdHandler: ApiHandler<typeof InitProducerIdRequest, typeof InitProducerIdResponse> = {
  apiKey: ApiKey.InitProducerId,
  name: 'InitProducerId',
  minVersion: 0,
  maxVersion: 5,
  async handle({ body, broker }) {
    if (body.transactionalId !== null) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        producerId: -1,
        producerEpoch: -1,
      };
    }
    // KAFKA_STORAGE_ERROR (the controller's metadata log refused the allocation) is retriable.
    const { errorCode, producerId, producerEpoch } = await broker.initProducerId();
    return { throttleTimeMs: 0, errorCode, producerId, producerEpoch };
  },
};
