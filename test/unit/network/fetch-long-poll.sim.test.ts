/**
 * The Fetch long poll (min_bytes, max_wait_ms) under the deterministic simulation: the handler keeps
 * its deadline with the broker's injected clock and timers, so virtual time alone decides when an
 * empty fetch returns, and a produce into the watched partition wakes it before the deadline.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fetchHandler } from '../../../src/network/handlers/fetch';
import type { BrokerContext } from '../../../src/network/broker-context';
import type { FetchRequestData } from '../../../src/protocol/schema/fetch';
import type { TopicState } from '../../../src/controller/metadata-records';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { ApiKey } from '../../../src/protocol/api-keys';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import type { Endpoint } from '../../../src/runtime/runtime';
import { createLogger } from '../../../src/runtime/logger';
import { batch, bootReplica, REPLICA } from '../../helpers/sim-harness';
import { fetchRequestBody } from '../../helpers/fetch-request';

const TOPIC: TopicState = {
  name: 't',
  topicId: 'AAAAAAAAAAAAAAAAAAAAAg',
  configs: {},
  partitions: [{ partition: 0, replicas: [0], isr: [0], leader: 0, leaderEpoch: 0, partitionEpoch: 0 }],
};

/** The part of a broker the Fetch handler uses, over the simulation's endpoint, clock and timers. */
function simBroker(net: Endpoint): BrokerContext {
  const broker: Partial<BrokerContext> = {
    nodeId: 0,
    endpoint: net,
    clock: net.clock,
    timers: net.timers,
    log: createLogger({ level: 'silent' }),
    topic: (name) => (name === TOPIC.name ? TOPIC : undefined),
    topicById: (id) => (id === TOPIC.topicId ? TOPIC : undefined),
    leaderReplica: (name, partition) => (name === TOPIC.name && partition === 0 ? REPLICA : null),
    localReplica: (name, partition) => (name === TOPIC.name && partition === 0 ? REPLICA : null),
    offlineReason: () => null,
  };
  return broker as BrokerContext;
}

function fetchBody(maxWaitMs: number, fetchOffset: number): FetchRequestData {
  const body = fetchRequestBody({ topic: TOPIC.name, topicId: TOPIC.topicId, fetchOffset, maxWaitMs });
  return body as unknown as FetchRequestData;
}

/** Starts a Fetch v12 through the handler; `done` flips when its response is ready. */
function startFetch(broker: BrokerContext, maxWaitMs: number, fetchOffset: number) {
  const state = { done: false };
  const response = Promise.resolve(
    fetchHandler.handle({
      apiKey: ApiKey.Fetch,
      apiVersion: 12,
      correlationId: 1,
      clientId: 'sim',
      body: fetchBody(maxWaitMs, fetchOffset),
      broker,
      remote: 'sim',
    }),
  ).then((r) => {
    state.done = true;
    return r;
  });
  return { state, response };
}

function partitionOf(response: unknown) {
  const r = response as { responses: { partitions: { errorCode: number; records: Buffer | null }[] }[] };
  const p = r.responses[0]?.partitions[0];
  assert.ok(p, 'one partition in the response');
  return p;
}

describe('Fetch long poll in virtual time', () => {
  it('an empty fetch with max_wait_ms=500 returns when virtual time reaches 500 ms, not before', async () => {
    const { sim, net } = await bootReplica(1, new MemoryFileSystem());
    const broker = simBroker(net);
    const startMs = net.clock.monotonicMs();
    const { state, response } = startFetch(broker, 500, 0);
    await sim.advanceTime(499);
    assert.equal(state.done, false, 'still waiting 1 ms before max_wait_ms');
    await sim.advanceTime(1);
    await sim.settle();
    assert.equal(state.done, true, 'answered at max_wait_ms');
    const p = partitionOf(await response);
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.equal(p.records?.length, 0, 'no records: the partition is empty');
    assert.equal(net.clock.monotonicMs() - startMs, 500);
  });

  it('a produce into the watched partition wakes the long poll before its deadline', async () => {
    const { sim, net } = await bootReplica(2, new MemoryFileSystem());
    const broker = simBroker(net);
    const { state, response } = startFetch(broker, 10_000, 0);
    await sim.advanceTime(100);
    assert.equal(state.done, false);
    const produced = net.request(
      REPLICA,
      'replica.produce',
      { records: batch(['a', 'b']), acks: 1, timeoutMs: 1000 },
      60_000,
    );
    const reply = await sim.runUntil(produced);
    assert.equal(reply.errorCode, ErrorCode.NONE);
    await sim.runUntil(response);
    const p = partitionOf(await response);
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.ok((p.records?.length ?? 0) > 0, 'the fetch carries the produced batch');
    assert.ok(net.clock.monotonicMs() < 10_000, 'woken well before max_wait_ms');
  });
});
