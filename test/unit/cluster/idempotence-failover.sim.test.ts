/**
 * Idempotent producers across a leader change in the whole simulated cluster (controller, replica
 * managers, replicas): followers build producer state from the batches they append, so after the
 * leader's broker crashes the new leader answers a retried batch as a duplicate with its original
 * offset, and the old leader, restarted, rebuilds the same state from its snapshots and log.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootCluster } from '../../helpers/cluster-harness';
import type { ClusterSim } from '../../helpers/cluster-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';

const TOPIC = 't';
const PRODUCER_ID = 77;
const RETRIABLE: ReadonlySet<number> = new Set([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE]);

function idempotentBatch(value: string, baseSequence: number): Buffer {
  return buildRecordBatch([{ key: Buffer.from(value), value: Buffer.from(value), headers: [] }], {
    producerId: PRODUCER_ID,
    producerEpoch: 0,
    baseSequence,
  });
}

/** Sends `records` (acks=all) to the current leader, retrying while the leader moves (as a client does). */
async function produce(cluster: ClusterSim, records: Buffer): Promise<{ errorCode: number; baseOffset: number }> {
  let last = { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR as number, baseOffset: -1 };
  for (let attempt = 0; attempt < 30; attempt++) {
    const p = await cluster.partition(TOPIC);
    if (p.leader >= 0) {
      last = await cluster
        .ask(cluster.replica(p.leader, p.topicId), 'replica.produce', {
          records: Buffer.from(records),
          acks: -1,
          timeoutMs: 10_000,
        })
        .then(
          (r) => ({ errorCode: r.errorCode, baseOffset: r.baseOffset }),
          () => ({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1 }),
        );
      if (!RETRIABLE.has(last.errorCode)) return last;
    }
    await cluster.advance(100);
  }
  return last;
}

describe('idempotent producer across a leader change (simulation, RF=3)', () => {
  test('leader broker crash: the new leader answers retried batches as duplicates with their original offsets', async () => {
    const cluster = await bootCluster(3, { properties: { 'log.segment.bytes': '400' } });
    await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2', 'segment.bytes': '400' });
    const batches = Array.from({ length: 20 }, (_, i) => idempotentBatch(`v${i}`, i));
    const offsets: number[] = [];
    for (const b of batches) {
      const reply = await produce(cluster, b);
      assert.equal(reply.errorCode, ErrorCode.NONE);
      offsets.push(reply.baseOffset);
    }
    assert.deepEqual(offsets, [...offsets.keys()]);
    const before = await cluster.partition(TOPIC);
    await cluster.crashBroker(before.leader);
    const after = await cluster.partition(TOPIC);
    assert.notEqual(after.leader, before.leader, 'a new leader');
    // The producer never heard back for its last five batches: it retries them on the new leader.
    for (let i = batches.length - 5; i < batches.length; i++) {
      const retry = await produce(cluster, batches[i]!);
      assert.equal(retry.errorCode, ErrorCode.NONE, `retry of batch ${i}`);
      assert.equal(retry.baseOffset, offsets[i], `retry of batch ${i} answers its original offset`);
    }
    const values = batches.map((_, i) => `v${i}`);
    assert.deepEqual(
      cluster.logValues(after.leader, TOPIC).map((r) => r.value),
      values,
      'the new leader appended no duplicate',
    );
    const next = await produce(cluster, idempotentBatch('v20', 20));
    assert.equal(next.errorCode, ErrorCode.NONE);
    assert.equal(next.baseOffset, 20);

    // The old leader comes back, rebuilds its state from snapshots and log, and could lead again.
    await cluster.startBroker(before.leader);
    for (let i = 0; i < 60 && !(await cluster.partition(TOPIC)).isr.includes(before.leader); i++)
      await cluster.advance(500);
    assert.ok((await cluster.partition(TOPIC)).isr.includes(before.leader), 'the old leader is back in the ISR');
    await cluster.crashBroker(after.leader);
    const third = await cluster.partition(TOPIC);
    assert.ok(third.leader >= 0 && third.leader !== after.leader);
    const retry = await produce(cluster, idempotentBatch('v20', 20));
    assert.equal(retry.errorCode, ErrorCode.NONE);
    assert.equal(retry.baseOffset, 20, 'a third leader still knows the last batch');
    assert.deepEqual(
      cluster.logValues(third.leader, TOPIC).map((r) => r.value),
      [...values, 'v20'],
    );
  });
});
