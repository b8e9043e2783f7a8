/**
 * Idempotent producers across a replica restart (simulation): producer state comes back from the
 * `<offset>.snapshot` files plus a replay of the log tail, so a retried batch written before a
 * power cycle or a clean restart is answered as a duplicate with its original offset (Kafka's
 * DUPLICATE_SEQUENCE handling: NONE and the original base offset), and nothing is appended twice.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import type { SimRuntime } from '../../../src/runtime/sim-runtime';
import type { Endpoint } from '../../../src/runtime/runtime';
import {
  ask,
  bootReplica,
  LOG_DIR,
  LOG_DIR_ACTOR,
  powerCycle,
  readAll,
  REPLICA,
  replicaArgs,
} from '../../helpers/sim-harness';

const PRODUCER_ID = 4242;

/** The batch an idempotent producer sends for `values` from sequence `baseSequence` (a retry sends the same bytes). */
function idempotentBatch(values: string[], baseSequence: number, producerEpoch = 0): Buffer {
  return buildRecordBatch(
    values.map((v) => ({ key: Buffer.from(v), value: Buffer.from(v), headers: [] })),
    { producerId: PRODUCER_ID, producerEpoch, baseSequence },
  );
}

async function produce(sim: SimRuntime, net: Endpoint, records: Buffer) {
  return ask(sim, net, REPLICA, 'replica.produce', { records: Buffer.from(records), acks: -1, timeoutMs: 30_000 });
}

/** Sends `batches` (acks=all), asserting each lands at the next offset; returns their base offsets. */
async function produceAll(sim: SimRuntime, net: Endpoint, batches: Buffer[]): Promise<number[]> {
  const offsets: number[] = [];
  let next = 0;
  for (const b of batches) {
    const reply = await produce(sim, net, b);
    assert.equal(reply.errorCode, ErrorCode.NONE);
    assert.equal(reply.baseOffset, next);
    offsets.push(reply.baseOffset);
    next += b.readInt32BE(57); // recordsCount
  }
  return offsets;
}

describe('idempotent producer across a replica restart (simulation)', () => {
  for (const [label, segmentBytes] of [
    ['one segment: no roll snapshot, the whole log replayed', 1 << 20],
    ['small segments: the newest roll snapshot plus the tail', 300],
  ] as const) {
    test(`power loss, ${label}: a retried batch is a duplicate at its original offset`, async () => {
      const fs = new MemoryFileSystem();
      const { sim, net } = await bootReplica(7, fs, { segmentBytes });
      const batches = Array.from({ length: 12 }, (_, i) => idempotentBatch([`v${2 * i}`, `v${2 * i + 1}`], 2 * i));
      const offsets = await produceAll(sim, net, batches);
      const before = await readAll(sim, net);
      await powerCycle(sim, fs, { kind: 'lose-unsynced' }, [LOG_DIR_ACTOR, REPLICA]);
      if (segmentBytes < 1000)
        assert.ok(
          fs.readdir(`${LOG_DIR}/t-0`).some((n) => n.endsWith('.snapshot')),
          'rolls wrote producer-state snapshots',
        );
      // Kafka keeps the last five batches per producer: each of them is recognised after the restart.
      for (let i = batches.length - 5; i < batches.length; i++) {
        const retry = await produce(sim, net, batches[i]!);
        assert.equal(retry.errorCode, ErrorCode.NONE, `retry of batch ${i}`);
        assert.equal(retry.baseOffset, offsets[i], `retry of batch ${i} answers its original offset`);
      }
      assert.deepEqual(await readAll(sim, net), before, 'nothing appended twice');
      const gap = await produce(sim, net, idempotentBatch(['gap'], 2 * batches.length + 1));
      assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, 'the sequence is known: a gap is refused');
      const next = await produce(sim, net, idempotentBatch(['next'], 2 * batches.length));
      assert.equal(next.errorCode, ErrorCode.NONE);
      assert.equal(next.baseOffset, before.length, 'the next sequence appends at the LEO');
      await sim.shutdown();
    });
  }

  test('a clean restart writes <LEO>.snapshot on stop and recognises the retry from it alone', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootReplica(8, fs);
    const batches = [idempotentBatch(['a'], 0), idempotentBatch(['b', 'c'], 1)];
    const offsets = await produceAll(sim, net, batches);
    const stopped = sim.stopActor(REPLICA);
    await sim.settle();
    await stopped;
    assert.ok(fs.exists(`${LOG_DIR}/t-0/${'3'.padStart(20, '0')}.snapshot`), 'the stop wrote 00..03.snapshot');
    // Only the clean-shutdown snapshot is left to rebuild from: the segment replay would find nothing after it.
    await sim.spawn(REPLICA, 'replica', replicaArgs(), { pool: 'broker', brokerId: 0 });
    await sim.settle();
    const retry = await produce(sim, net, batches[1]!);
    assert.equal(retry.errorCode, ErrorCode.NONE);
    assert.equal(retry.baseOffset, offsets[1]);
    assert.deepEqual(await readAll(sim, net), ['a', 'b', 'c']);
    await sim.shutdown();
  });
});
