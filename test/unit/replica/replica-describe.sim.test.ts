/**
 * The replica's `describe` (DescribeLogDirs, tools) and `list-offsets` with `toLogEnd` (ListOffsets
 * from a non-consumer replica id): the LEO, HW and fsynced offset while an fsync is in flight and
 * after it, with write.caching=false (the HW waits for the fsync). Kafka's offsetLag of a current
 * log follows from the same numbers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { offsetLag } from '../../../src/network/handlers/describe-log-dirs';
import { batch, bootReplica, REPLICA } from '../../helpers/sim-harness';

describe('replica describe: LEO, high watermark and fsynced offset', () => {
  test('an append not yet fsynced is past the HW and the fsynced offset; after the fsync all three agree', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    const { sim, net } = await bootReplica(21, fs);
    const produced = net.request(
      REPLICA,
      'replica.produce',
      { records: batch(['a', 'b', 'c']), acks: 1, timeoutMs: 1000 },
      60_000,
    );
    await sim.settle();
    assert.equal((await produced).errorCode, ErrorCode.NONE);
    const during = net.request(REPLICA, 'replica.describe', {}, 60_000);
    await sim.settle();
    const d = await during;
    assert.deepEqual(
      { leo: d.logEndOffset, hw: d.highWatermark, fsynced: d.fsyncedOffset },
      { leo: 3, hw: 0, fsynced: 0 },
    );
    assert.equal(offsetLag(d.highWatermark, d.logEndOffset), 0, "Kafka's offsetLag: the LEO ahead of the HW is no lag");
    const toLogEnd = net.request(REPLICA, 'replica.list-offsets', { timestamp: -1, toLogEnd: true }, 60_000);
    fs.completeSyncs();
    await sim.settle();
    assert.equal((await toLogEnd).offset, 3);
    const after = net.request(REPLICA, 'replica.describe', {}, 60_000);
    await sim.settle();
    const a = await after;
    assert.deepEqual(
      { leo: a.logEndOffset, hw: a.highWatermark, fsynced: a.fsyncedOffset },
      { leo: 3, hw: 3, fsynced: 3 },
    );
    await sim.shutdown();
  });

  test("offsetLag is Kafka's max(HW - LEO, 0)", () => {
    assert.equal(offsetLag(10, 10), 0);
    assert.equal(offsetLag(10, 7), 3, 'a log end behind the HW (a lagging replica)');
    assert.equal(offsetLag(7, 10), 0);
  });
});
