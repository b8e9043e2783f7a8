/**
 * loadGroups against a replica that answers the load's fetch with an error: NOT_LEADER_OR_FOLLOWER
 * (leadership moved after the wait for its HW) rejects with LeadershipMovedError, which the
 * coordinator waits out; any other error rejects with a plain Error (the coordinator crashes).
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { LeadershipMovedError, loadGroups } from '../../../src/group/group-loader';
import type { ActorContext, ActorRef } from '../../../src/runtime/actor';
import type { PartitionLeaderMessages } from '../../../src/group/messages';

function contextAnswering(errorCode: number): ActorContext {
  const ctx = {
    clock: { monotonicMs: () => 0, nowMs: () => 0 },
    log: { debug() {}, info() {}, warn() {}, error() {} },
    request: () =>
      Promise.resolve({ errorCode, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, records: null }),
  };
  return ctx as unknown as ActorContext;
}

const source = { partition: 7, replicaActor: 'replica/0/offsets-7' as ActorRef<PartitionLeaderMessages> };

test('a load whose fetch finds the replica no longer leading rejects with LeadershipMovedError', async () => {
  await assert.rejects(loadGroups(source, contextAnswering(ErrorCode.NOT_LEADER_OR_FOLLOWER)), (error: unknown) => {
    assert.ok(error instanceof LeadershipMovedError);
    assert.equal(error.partition, 7);
    assert.equal(error.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    return true;
  });
});

test('any other fetch error rejects with a plain Error', async () => {
  await assert.rejects(loadGroups(source, contextAnswering(ErrorCode.KAFKA_STORAGE_ERROR)), (error: unknown) => {
    assert.ok(error instanceof Error && !(error instanceof LeadershipMovedError));
    assert.match(error.message, /failed with error 56/);
    return true;
  });
});
