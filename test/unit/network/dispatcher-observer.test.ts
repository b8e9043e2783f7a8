/**
 * The dispatcher's optional request observer (`DispatcherOptions.onRequestDone`, which feeds the admin
 * API's request metrics): one call per request a handler served, timed on the broker's monotonic clock,
 * also when the handler throws; responses are the same with and without it.
 */
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Clock } from '../../../src/io/clock';
import type { AnyApiHandler } from '../../../src/network/api-handler';
import type { BrokerContext } from '../../../src/network/broker-context';
import type { Connection } from '../../../src/network/connection';
import { Dispatcher, type RequestDoneInfo } from '../../../src/network/dispatcher';
import { CloseConnection } from '../../../src/network/close-connection';
import { responseErrorCounts } from '../../../src/network/error-counts';
import { ApiKey, encodeRequest } from '../../../src/protocol';

/** A monotonic clock that moves only when a handler says so. */
function fakeClock(): Clock & { advance(ms: number): void } {
  let ms = 1000;
  return { nowMs: () => ms, monotonicMs: () => ms, advance: (by) => (ms += by) };
}

function setup(makeHandle: (clock: { advance(ms: number): void }) => AnyApiHandler['handle'], observe: boolean) {
  const clock = fakeClock();
  const handle = makeHandle(clock);
  const done: RequestDoneInfo[] = [];
  const handler: AnyApiHandler = {
    apiKey: ApiKey.ApiVersions,
    name: 'ApiVersions',
    minVersion: 0,
    maxVersion: 3,
    handle,
  };
  const broker = { nodeId: 4, clock } as unknown as BrokerContext;
  const dispatcher = new Dispatcher([handler], () => broker, observe ? { onRequestDone: (i) => done.push(i) } : {});
  return { clock, done, dispatcher };
}

const connection = { remote: '127.0.0.1:5555' } as unknown as Connection;
const apiVersionsV3 = encodeRequest(ApiKey.ApiVersions, 3, 42, 'test', {}).subarray(4);

describe('dispatcher request observer', () => {
  test('reports API, version, broker and the time the handler took on the broker clock', async () => {
    const { done, dispatcher } = setup(
      (clock) => async () => {
        clock.advance(7);
        return { errorCode: 0, apiKeys: [] };
      },
      true,
    );
    const response = await dispatcher.handle(apiVersionsV3, connection);
    assert.ok(response !== null);
    assert.deepEqual(done, [
      {
        apiKey: ApiKey.ApiVersions,
        apiName: 'ApiVersions',
        apiVersion: 3,
        durationMs: 7,
        brokerId: 4,
        errorCounts: new Map(),
      },
    ]);

    const plain = setup(() => async () => ({ errorCode: 0, apiKeys: [] }), false);
    const same = await plain.dispatcher.handle(apiVersionsV3, connection);
    assert.deepEqual(Buffer.concat(same!), Buffer.concat(response), 'the observer does not change the response');
  });

  test('a handler that throws is reported and its error propagates unchanged', async () => {
    const { done, dispatcher } = setup(
      () => async () => {
        throw new Error('handler broke');
      },
      true,
    );
    await assert.rejects(dispatcher.handle(apiVersionsV3, connection), /handler broke/);
    assert.equal(done.length, 1);
    assert.equal(done[0]!.durationMs, 0);
  });

  test('a request that closes the connection before a handler runs is not reported', async () => {
    const { done, dispatcher } = setup(() => async () => ({ errorCode: 0, apiKeys: [] }), true);
    const unknownKey = Buffer.from(apiVersionsV3);
    unknownKey.writeInt16BE(9999, 0);
    await assert.rejects(dispatcher.handle(unknownKey, connection), /unknown or unsupported API key/);
    assert.deepEqual(done, []);
  });

  test("the response's non-zero error codes are counted, at any depth, record bytes not walked", async () => {
    const { done, dispatcher } = setup(() => async () => ({ errorCode: 35, apiKeys: [] }), true);
    await dispatcher.handle(apiVersionsV3, connection);
    assert.deepEqual(done[0]!.errorCounts, new Map([[35, 1]]));
    const produceLike = {
      responses: [
        {
          name: 't',
          partitionResponses: [
            { index: 0, errorCode: 2, recordErrors: [] },
            { index: 1, errorCode: 0 },
            { index: 2, errorCode: 2 },
            { index: 3, errorCode: 87, records: Buffer.from([0, 0]) },
          ],
        },
      ],
      throttleTimeMs: 0,
    };
    assert.deepEqual(
      responseErrorCounts(produceLike),
      new Map([
        [2, 2],
        [87, 1],
      ]),
    );
  });

  test('a request closed for its errors (a failed acks=0 produce) reports them', async () => {
    const { done, dispatcher } = setup(
      () => async () => {
        throw new CloseConnection('acks=0 failed', new Map([[2, 1]]));
      },
      true,
    );
    await assert.rejects(dispatcher.handle(apiVersionsV3, connection), /acks=0 failed/);
    assert.deepEqual(done[0]!.errorCounts, new Map([[2, 1]]));
  });
});
