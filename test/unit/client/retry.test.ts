/** retry.ts: which errors are retried, and the backoff's growth from retry.backoff.ms to retry.backoff.max.ms. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectionError, KafkaError } from '../../../src/client/errors';
import { Backoff, isRetriable } from '../../../src/client/retry';
import { ErrorCode } from '../../../src/protocol/error-codes';

test('a lost connection and leadership or coordinator moves are retriable; a bad request is not', () => {
  assert.equal(isRetriable(new ConnectionError('connection to 127.0.0.1:1 closed')), true);
  for (const code of [
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.FENCED_LEADER_EPOCH,
    ErrorCode.UNKNOWN_LEADER_EPOCH,
    ErrorCode.NOT_COORDINATOR,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.REQUEST_TIMED_OUT,
    ErrorCode.BROKER_NOT_AVAILABLE,
  ])
    assert.equal(isRetriable(new KafkaError(code, 'x')), true, String(code));
  assert.equal(isRetriable(new KafkaError(ErrorCode.MESSAGE_TOO_LARGE, 'x')), false);
  assert.equal(isRetriable(new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, 'x')), false);
  assert.equal(isRetriable(new RangeError('bad')), false);
});

test('the backoff doubles from 100 ms to a 1 s cap, with ±20 % jitter, and starts over after reset', () => {
  const noJitter = new Backoff(100, 1000, () => 0.5);
  assert.deepEqual(
    Array.from({ length: 7 }, () => noJitter.next()),
    [100, 200, 400, 800, 1000, 1000, 1000],
  );
  assert.equal(noJitter.failures, 7);
  noJitter.reset();
  assert.equal(noJitter.next(), 100);
  assert.equal(new Backoff(100, 1000, () => 0).next(), 80);
  assert.equal(new Backoff(100, 1000, () => 1).next(), 120);
});
