/**
 * A consumer's Fetch long poll on a replicated partition whose high watermark lags its log end
 * (issue 11 item 4): in a three-broker simulated cluster, the followers' fetches are cut off, so
 * acks=1 records sit on the leader between the HW and the LEO. A consumer Fetch at the HW must
 * come back empty at its max_wait_ms (the read the replica defers waits only for the leader's own
 * fsync, never for the followers), not with REQUEST_TIMED_OUT after the handler's 5 s grace; and
 * when the followers catch up within max_wait_ms, the HW moving over the records wakes the poll
 * early with them (followers slowed by 1.5 s each way here). Virtual time makes both exact.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BrokerNode } from '../../../src/broker-node';
import type { AnyApiHandler } from '../../../src/network/api-handler';
import { fetchHandler } from '../../../src/network/handlers/fetch';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { createLogger } from '../../../src/runtime/logger';
import { bootCluster } from '../../helpers/cluster-harness';
import { batch } from '../../helpers/sim-harness';
import { fetchRequestBody } from '../../helpers/fetch-request';

const TOPIC = 'lagging';

/**
 * A cluster with `TOPIC` (RF=3) holding 2 replicated records, then 3 acks=1 records its followers do
 * not have yet: their traffic with the leader is dropped (`cut`) or delayed by 1.5 s each way (`slow`).
 */
async function laggingCluster(seed: number, followers: 'cut' | 'slow') {
  const cluster = await bootCluster(seed);
  await cluster.createTopic(TOPIC, 1, 3, { 'min.insync.replicas': '2' });
  const p = await cluster.partition(TOPIC);
  const leader = cluster.replica(p.leader, p.topicId);
  const replicated = await cluster.ask(leader, 'replica.produce', {
    records: batch(['r0', 'r1']),
    acks: -1,
    timeoutMs: 10_000,
  });
  assert.equal(replicated.errorCode, ErrorCode.NONE);
  // The followers' fetches (and the replies) are dropped, or delayed.
  cluster.sim.setFaults((envelope) =>
    (envelope.to === leader && envelope.from.startsWith('replica/')) ||
    (envelope.from === leader && envelope.to.startsWith('replica/'))
      ? followers === 'cut'
        ? 'drop'
        : { delayMs: 1500 }
      : 'deliver',
  );
  const unreplicated = await cluster.ask(leader, 'replica.produce', {
    records: batch(['u2', 'u3', 'u4']),
    acks: 1,
    timeoutMs: 10_000,
  });
  assert.equal(unreplicated.errorCode, ErrorCode.NONE);
  await cluster.sim.settle(); // the leader's own fsync of the acks=1 batch
  const described = await cluster.ask(leader, 'replica.describe', {});
  assert.deepEqual([described.highWatermark, described.logEndOffset], [2, 5], 'the HW lags the LEO');
  const endpoint = cluster.sim.endpoint(`poll-net/${p.leader}`);
  const node = new BrokerNode(cluster.configs[p.leader]!, createLogger({ level: 'silent' }), endpoint, {
    awaitApplied: () => Promise.resolve(),
  });
  node.applyImage(await cluster.image());
  return { cluster, node, topicId: p.topicId };
}

/** Starts a consumer Fetch v12 of partition 0 at `fetchOffset`; `state.done` flips when it is answered. */
function startFetch(node: BrokerNode, topicId: string, fetchOffset: number, maxWaitMs: number) {
  const state = { done: false, atMs: -1 };
  const handler = fetchHandler as unknown as AnyApiHandler;
  const response = Promise.resolve(
    handler.handle({
      apiKey: handler.apiKey,
      apiVersion: 12,
      correlationId: 1,
      clientId: 'sim',
      broker: node,
      remote: 'sim',
      body: fetchRequestBody({ topic: TOPIC, topicId, fetchOffset, maxWaitMs }),
    }),
  ).then((r: any) => {
    state.done = true;
    state.atMs = node.clock.monotonicMs();
    return r.responses[0].partitions[0] as { errorCode: number; highWatermark: number; records: Buffer };
  });
  return { state, response };
}

describe('Fetch long poll on a partition whose HW lags (simulation, RF=3)', () => {
  test('a consumer fetch at the HW returns empty at max_wait_ms while the followers are cut off', async () => {
    const { cluster, node, topicId } = await laggingCluster(31, 'cut');
    const startMs = node.clock.monotonicMs();
    const { state, response } = startFetch(node, topicId, 2, 800);
    await cluster.advance(799);
    assert.equal(state.done, false, 'still parked 1 ms before max_wait_ms');
    await cluster.advance(1);
    await cluster.sim.settle();
    assert.equal(state.done, true, 'answered at max_wait_ms');
    const p = await response;
    assert.equal(p.errorCode, ErrorCode.NONE, 'no REQUEST_TIMED_OUT');
    assert.equal(p.records.length, 0, 'nothing below the HW past offset 2');
    assert.equal(p.highWatermark, 2);
    assert.equal(state.atMs - startMs, 800);
    await cluster.sim.shutdown();
  });

  test('slow followers that catch up within max_wait_ms move the HW, which wakes the poll with the records', async () => {
    const { cluster, node, topicId } = await laggingCluster(32, 'slow');
    const startMs = node.clock.monotonicMs();
    const { state, response } = startFetch(node, topicId, 2, 20_000);
    await cluster.advance(1000);
    assert.equal(state.done, false, 'parked while the followers lag');
    for (let i = 0; i < 190 && !state.done; i++) await cluster.advance(100);
    assert.equal(state.done, true, 'woken before max_wait_ms');
    const p = await response;
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.ok(p.records.length > 0, 'the records the HW now covers');
    assert.equal(p.highWatermark, 5);
    assert.ok(state.atMs - startMs < 10_000, `answered after ${state.atMs - startMs} ms, with the HW`);
    await cluster.sim.shutdown();
  });
});
