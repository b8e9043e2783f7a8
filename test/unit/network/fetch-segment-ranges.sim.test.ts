/**
 * The Fetch handler with segment ranges, in the simulation: when the replica's files can be read by
 * another thread it answers a consumer's fetch with ranges, and the handler serves the bytes its
 * BrokerContext reads from them; when that read fails (a segment deleted or swapped meanwhile) the
 * handler asks the replica again for the bytes themselves, so the client gets the same records
 * either way. The disk here is the simulation's, given file identities so that the replica answers
 * ranges; the broker's reader is a fake over that disk. Real files: segment-reader.test.ts.
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
import type { FileHandle } from '../../../src/io/file-system';
import type { Endpoint } from '../../../src/runtime/runtime';
import type { SegmentRange } from '../../../src/replica/messages';
import { createLogger } from '../../../src/runtime/logger';
import { decodeRecordBatches } from '../../../src/protocol/record-batch/decode';
import { batch, bootReplica, REPLICA } from '../../helpers/sim-harness';
import { fetchRequestBody } from '../../helpers/fetch-request';

const TOPIC: TopicState = {
  name: 't',
  topicId: 'AAAAAAAAAAAAAAAAAAAAAg',
  configs: {},
  partitions: [{ partition: 0, replicas: [0], isr: [0], leader: 0, leaderEpoch: 0, partitionEpoch: 0 }],
};

/** The simulation's disk, whose handles name an identity: its replicas answer fetches with ranges. */
class IdentifiedMemoryFileSystem extends MemoryFileSystem {
  override open(path: string, mode: 'r' | 'rw'): FileHandle {
    const handle = super.open(path, mode);
    return Object.assign(handle, { identity: () => `mem:${path}` });
  }
}

/** A broker whose segment reader reads `fs` (or fails, with `failReads`), recording what it was asked. */
function simBroker(net: Endpoint, fs: MemoryFileSystem, failReads: number) {
  const asked: SegmentRange[][] = [];
  let failures = failReads;
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
    readSegmentRanges: (ranges) => {
      asked.push([...ranges]);
      if (failures > 0) {
        failures--;
        return Promise.resolve(null);
      }
      const parts = ranges.map((r) => {
        const handle = fs.open(r.path, 'r');
        const out = Buffer.alloc(r.sizeBytes);
        handle.read(out, 0, r.sizeBytes, r.position);
        handle.close();
        return out;
      });
      return Promise.resolve(Buffer.concat(parts));
    },
  };
  return { broker: broker as BrokerContext, asked };
}

async function fetchValues(sim: Awaited<ReturnType<typeof bootReplica>>['sim'], broker: BrokerContext) {
  const body = fetchRequestBody({ topic: TOPIC.name, topicId: TOPIC.topicId, fetchOffset: 0, maxWaitMs: 0 });
  const response = Promise.resolve(
    fetchHandler.handle({
      apiKey: ApiKey.Fetch,
      apiVersion: 12,
      correlationId: 1,
      clientId: 'sim',
      body: body as unknown as FetchRequestData,
      broker,
      remote: 'sim',
    }),
  );
  await sim.runUntil(response);
  const r = (await response) as { responses: { partitions: { errorCode: number; records: Buffer | null }[] }[] };
  const p = r.responses[0]?.partitions[0];
  assert.ok(p);
  assert.equal(p.errorCode, ErrorCode.NONE);
  return decodeRecordBatches(Buffer.from(p.records ?? Buffer.alloc(0))).flatMap((b) =>
    b.records.map((rec) => rec.value?.toString()),
  );
}

async function produced(failReads: number) {
  const fs = new IdentifiedMemoryFileSystem();
  const { sim, net } = await bootReplica(3, fs);
  for (const values of [['a', 'b'], ['c']]) {
    const reply = await sim.runUntil(
      net.request(REPLICA, 'replica.produce', { records: batch(values), acks: 1, timeoutMs: 1000 }, 60_000),
    );
    assert.equal(reply.errorCode, ErrorCode.NONE);
  }
  await sim.advanceTime(100); // the group commit's fsync moves the HW past both batches
  return { sim, ...simBroker(net, fs, failReads) };
}

describe('Fetch with segment ranges', () => {
  it('serves the bytes read from the ranges the replica answered', async () => {
    const { sim, broker, asked } = await produced(0);
    assert.deepEqual(await fetchValues(sim, broker), ['a', 'b', 'c']);
    assert.equal(asked.length, 1);
    const [range] = asked[0]!;
    assert.ok(range !== undefined && asked[0]!.length === 1, 'one segment, one range');
    assert.match(range.path, /00000000000000000000\.log$/);
    assert.equal(range.fileIdentity, `mem:${range.path}`);
    assert.deepEqual([range.position, range.baseOffset, range.lastOffset], [0, 0, 2]);
  });

  it('asks the replica for the bytes when the ranges cannot be read, and serves the same records', async () => {
    const { sim, broker, asked } = await produced(1);
    assert.deepEqual(await fetchValues(sim, broker), ['a', 'b', 'c']);
    assert.equal(asked.length, 1, 'the second ask is for bytes, not ranges');
  });
});
