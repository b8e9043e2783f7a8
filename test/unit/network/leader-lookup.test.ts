/**
 * How a failed request to a replica is answered and logged: a stopped replica (shutdown, deleted
 * topic, moved partition) is NOT_LEADER_OR_FOLLOWER at debug level, so a broker's clean stop with a
 * thousand parked fetches does not log a thousand warnings; a crash or a timeout still warns.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ActorUnavailableError } from '../../../src/runtime/actor';
import { replicaFailureCode, replicaFailureLevel } from '../../../src/network/handlers/leader-lookup';
import { ErrorCode } from '../../../src/protocol/error-codes';

describe('replica failures', () => {
  it('a stopped replica is NOT_LEADER_OR_FOLLOWER at debug; a crashed one warns; a timeout is REQUEST_TIMED_OUT and warns', () => {
    const stopped = new ActorUnavailableError('replica/t/0', 'replica.fetch', 'stopped');
    const crashed = new ActorUnavailableError('replica/t/0', 'replica.fetch', 'crashed');
    const timeout = new Error('request replica.fetch timed out');
    assert.deepEqual(
      [stopped, crashed, timeout].map((e) => [replicaFailureCode(e), replicaFailureLevel(e)]),
      [
        [ErrorCode.NOT_LEADER_OR_FOLLOWER, 'debug'],
        [ErrorCode.NOT_LEADER_OR_FOLLOWER, 'warn'],
        [ErrorCode.REQUEST_TIMED_OUT, 'warn'],
      ],
    );
  });
});
