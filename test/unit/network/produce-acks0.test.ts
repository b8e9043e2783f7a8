/**
 * Produce with acks=0 that fails closes the connection and hands the metrics the error codes of the
 * answer the client does not get (Kafka's RequestChannel.closeConnection counts them in ErrorsPerSec).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { produceHandler } from '../../../src/network/handlers/produce';
import { CloseConnection } from '../../../src/network/close-connection';
import type { BrokerContext } from '../../../src/network/broker-context';
import type { RequestContext } from '../../../src/network/api-handler';
import { ErrorCode } from '../../../src/protocol/error-codes';

test('a failed acks=0 produce closes the connection with the error counts of its partitions', async () => {
  const broker = { topic: () => undefined } as unknown as BrokerContext;
  const body = {
    transactionalId: null,
    acks: 0,
    timeoutMs: 1000,
    topicData: [
      {
        name: 'missing',
        topicId: '',
        partitionData: [
          { index: 0, records: null },
          { index: 1, records: null },
        ],
      },
    ],
  };
  const request = { apiVersion: 7, body, broker, clientId: 't', remote: 'r' } as unknown as RequestContext<never>;
  await assert.rejects(
    Promise.resolve().then(() => produceHandler.handle(request as never)),
    (error: unknown) =>
      error instanceof CloseConnection &&
      error.errorCounts?.get(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) === 2 &&
      error.errorCounts.size === 1,
  );
});
