/**
 * Review of the full-disk change (review-diskfull): cases the change's own tests do not cover. Each
 * test fails on main as of 4448ac9 and names the finding it demonstrates.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryFileSystem, type FsOperation } from '../../../src/io/memory-file-system';
import type { FileHandle, FileSystem } from '../../../src/io/file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { STORAGE_PROBE_INTERVAL_MS, type ProduceReply } from '../../../src/replica/replica-actor';
import { ask, batch, bootReplica, LOG_DIR, readAll, REPLICA, replicaArgs } from '../../helpers/sim-harness';
import type { SimRuntime } from '../../../src/runtime/sim-runtime';
import type { Endpoint } from '../../../src/runtime/runtime';

function idempotent(value: string, producerId: number, baseSequence: number): Buffer {
  return buildRecordBatch([{ key: null, value: Buffer.from(value), headers: [] }], {
    producerId,
    producerEpoch: 0,
    baseSequence,
  });
}

async function produce(sim: SimRuntime, net: Endpoint, records: Buffer, acks = -1): Promise<ProduceReply> {
  return ask(sim, net, REPLICA, 'replica.produce', { records, acks, timeoutMs: 30_000 });
}

/**
 * A FileSystem whose asynchronous fsyncs wait until the test settles them (`release(code)`: null
 * lets the real fsync run, an errno fails it), as a real fsync in libuv's pool that reports its
 * result later. Synchronous fsyncs go straight through.
 */
function gatedAsyncFsyncs(inner: MemoryFileSystem): {
  fs: FileSystem;
  pending: () => number;
  release: (code: string | null) => Promise<void>;
} {
  const gates: Array<(code: string | null) => void> = [];
  const wrapHandle = (handle: FileHandle): FileHandle =>
    new Proxy(handle, {
      get(target, prop) {
        if (prop === 'syncAsync')
          return () =>
            new Promise<void>((resolve, reject) => {
              gates.push((code) => {
                if (code === null) target.syncAsync!().then(resolve, reject);
                else reject(Object.assign(new Error(`${code}: fsync (gated)`), { code, syscall: 'fsync' }));
              });
            });
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  const fs = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'open') return (path: string, mode: 'r' | 'rw') => wrapHandle(target.open(path, mode));
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as unknown as FileSystem;
  return {
    fs,
    pending: () => gates.length,
    release: async (code) => {
      for (const gate of gates.splice(0)) gate(code);
      for (let i = 0; i < 10; i++) await Promise.resolve();
    },
  };
}

describe('full-disk review', () => {
  test('F1: the cut-back keeps idempotent dedup for batches it kept (a retried acknowledged batch is a duplicate, not a second copy)', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootReplica(21, fs);
    const x = await produce(sim, net, idempotent('x', 7, 0));
    assert.equal(x.errorCode, ErrorCode.NONE);
    assert.equal(x.baseOffset, 0);
    // The next batch's group-commit fsync fails: the partition refuses writes and probes.
    fs.fault = (op) => (op.syscall === 'fsync' ? 'EIO' : null);
    const y = await produce(sim, net, idempotent('y', 7, 1));
    assert.equal(y.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    fs.fault = null;
    await sim.advanceTime(2 * STORAGE_PROBE_INTERVAL_MS);
    await sim.settle();
    // x's answer was lost (a client request timeout on the slow disk): the producer retries x.
    const retry = await produce(sim, net, idempotent('x', 7, 0));
    assert.equal(retry.errorCode, ErrorCode.NONE);
    assert.equal(
      retry.baseOffset,
      0,
      'a retry of a kept batch is answered as a duplicate (Kafka rebuilds producer state on truncation)',
    );
    assert.deepEqual(await readAll(sim, net), ['x'], 'x is in the log once');
    await sim.shutdown();
  });

  test('F2: EIO on the directory fsync of a retention pass is an operating error, not an actor crash', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootReplica(22, fs, { segmentBytes: 200, retentionBytes: 300, deleteEnabled: true });
    for (let i = 0; i < 12; i++)
      assert.equal((await produce(sim, net, batch([`r${i}-${'x'.repeat(30)}`]))).errorCode, ErrorCode.NONE);
    fs.fault = (op) => (op.syscall === 'fsync' && op.path === `${LOG_DIR}/t-0` ? 'EIO' : null);
    await sim.advanceTime(replicaArgs().retentionCheckIntervalMs + 1);
    await sim.settle(); // throws the replica's uncaught error on main
    fs.fault = null;
    const reply = await produce(sim, net, batch(['after']));
    assert.equal(reply.errorCode, ErrorCode.NONE);
    await sim.shutdown();
  });

  test('F2b: EIO on the directory fsync of a DeleteRecords is an operating error, not an actor crash', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootReplica(23, fs, { segmentBytes: 200 });
    for (let i = 0; i < 8; i++)
      assert.equal((await produce(sim, net, batch([`r${i}-${'x'.repeat(30)}`]))).errorCode, ErrorCode.NONE);
    fs.fault = (op) => (op.syscall === 'fsync' && op.path === `${LOG_DIR}/t-0` ? 'EIO' : null);
    const reply = await ask(sim, net, REPLICA, 'replica.delete-records', { offset: 6 }); // throws on main
    assert.notEqual(reply.errorCode, ErrorCode.NONE, 'the deletion could not be made durable');
    fs.fault = null;
    await sim.shutdown();
  });

  test('F3a: flush.messages does not fsync beside an asynchronous fsync in flight; when that one fails, nothing it covered becomes visible', async () => {
    const inner = new MemoryFileSystem();
    const gated = gatedAsyncFsyncs(inner);
    // flush.messages=2 with write.caching=false: the second append reaches flush.messages while the
    // group commit's asynchronous fsync of the first is in flight.
    const { sim, net } = await bootReplica(24, gated.fs, { flushMessages: 2 });
    const a = net.request(REPLICA, 'replica.produce', { records: batch(['a']), acks: -1, timeoutMs: 30_000 }, 60_000);
    await sim.settle();
    assert.equal(gated.pending() > 0, true, 'the group commit fsync of a is in flight');
    inner.fault = (op) => (op.syscall === 'fsync' ? 'EIO' : null);
    const syncsBefore = inner.syncCount;
    const b = net.request(REPLICA, 'replica.produce', { records: batch(['b']), acks: -1, timeoutMs: 30_000 }, 60_000);
    await sim.settle();
    // Linux reports a writeback error to ONE fsync per descriptor: a second fsync racing the first
    // could consume the error for a's pages while the other reports success.
    assert.equal(inner.syncCount, syncsBefore, 'no synchronous fsync while the asynchronous one is in flight');
    await gated.release(null); // the in-flight fsync runs now and fails (EIO)
    await sim.settle();
    assert.equal((await a).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.equal((await b).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    inner.fault = null;
    assert.deepEqual(await readAll(sim, net), [], 'no byte covered by the failed fsync becomes visible');
    await sim.shutdown();
  });

  test('F3b: a synchronous fsync that succeeds while an asynchronous one is in flight does not acknowledge acks=all bytes the latter then fails on', async () => {
    const inner = new MemoryFileSystem();
    const gated = gatedAsyncFsyncs(inner);
    const { sim, net } = await bootReplica(25, gated.fs, { flushMessages: 2 });
    const a = net.request(REPLICA, 'replica.produce', { records: batch(['a']), acks: -1, timeoutMs: 30_000 }, 60_000);
    await sim.settle();
    assert.equal(gated.pending() > 0, true, 'the group commit fsync of a is in flight');
    const b = net.request(REPLICA, 'replica.produce', { records: batch(['b']), acks: -1, timeoutMs: 30_000 }, 60_000);
    await sim.settle(); // flush.messages: a synchronous fsync of a and b succeeds
    // The pool's fsync of a had hit the writeback error first (and consumed it), its callback comes now.
    await gated.release('EIO');
    await sim.settle();
    const [ra, rb] = [await a, await b];
    assert.notEqual(ra.errorCode, ErrorCode.NONE, 'a was covered by a failed fsync: never acknowledged');
    assert.notEqual(rb.errorCode, ErrorCode.NONE, 'b sits above a: never acknowledged');
    await sim.shutdown();
  });

  test('L3: an asynchronous flush failure reported after the probe healed the log aborts no fresh acks=all produce', async () => {
    const inner = new MemoryFileSystem();
    const gated = gatedAsyncFsyncs(inner);
    const { sim, net } = await bootReplica(26, gated.fs);
    const x = net.request(REPLICA, 'replica.produce', { records: batch(['x']), acks: -1, timeoutMs: 30_000 }, 60_000);
    await sim.settle();
    await gated.release(null);
    await sim.settle();
    assert.deepEqual([(await x).errorCode, (await x).baseOffset], [ErrorCode.NONE, 0]);
    // a's group-commit fsync is in flight (held by the gate).
    const a = net.request(REPLICA, 'replica.produce', { records: batch(['a']), acks: -1, timeoutMs: 30_000 }, 60_000);
    await sim.settle();
    assert.ok(gated.pending() > 0);
    // The log-dir actor's checkpoint at 5000 fails: its retry timer is due at 6000, ahead of the probe's.
    const isCheckpoint = (op: FsOperation) =>
      op.path === LOG_DIR || (/checkpoint/.test(op.path) && op.path.lastIndexOf('/') === LOG_DIR.length);
    const events: string[] = [];
    let released = false;
    let appendFails = true;
    let undoFails = true;
    let c: Promise<ProduceReply> | null = null;
    inner.fault = (op) => {
      if (isCheckpoint(op)) {
        if (sim.elapsedMs < 6000) return 'ENOSPC';
        if (!released) {
          // 6000: the retry runs first. A fresh acks=all produce arrives, then a's fsync fails.
          released = true;
          c = net.request(REPLICA, 'replica.produce', { records: batch(['c']), acks: -1, timeoutMs: 30_000 }, 60_000);
          void gated.release('EIO');
        }
        return null;
      }
      if (released && op.path.endsWith('.log') && (op.syscall === 'ftruncate' || op.syscall === 'write'))
        events.push(op.syscall);
      if (op.syscall === 'write' && op.path.endsWith('.log') && appendFails) {
        appendFails = false;
        return 'ENOSPC';
      }
      if (op.syscall === 'ftruncate' && undoFails) {
        undoFails = false;
        return 'EIO';
      }
      return null;
    };
    await sim.advanceTime(5000);
    assert.equal(sim.elapsedMs, 5000);
    // b's append fails and so does its undo: the log refuses writes and the probe is due at 6000.
    const b = await produce(sim, net, batch(['b']), 1);
    assert.equal(b.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.equal(undoFails, false, 'the undo of the partial append was refused');
    assert.equal((await a).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    await sim.advanceTime(1000);
    assert.ok(released && c !== null, 'the checkpoint retry ran at 6000');
    // The order this test is about: the probe cut back (ftruncate) before c was appended (write),
    // and the failure of a's fsync is reported (zero-delay timer) after both.
    assert.deepEqual(events.slice(0, 2), ['ftruncate', 'write'], 'the probe healed the log before c arrived');
    let answer: ProduceReply | null = null;
    void (c as Promise<ProduceReply>).then((r) => (answer = r));
    await sim.advanceTime(100);
    assert.ok(gated.pending() > 0, "c's group commit started (c is not left to time out)");
    await gated.release(null);
    await sim.settle();
    assert.ok(answer !== null, 'c is answered once its fsync completes');
    const rc: ProduceReply = answer;
    assert.equal(rc.errorCode, ErrorCode.NONE, 'c was appended to the healed log: the late report must not abort it');
    assert.equal(rc.baseOffset, 1);
    inner.fault = null;
    assert.deepEqual(await readAll(sim, net), ['x', 'c']);
    await sim.shutdown();
  });
});
