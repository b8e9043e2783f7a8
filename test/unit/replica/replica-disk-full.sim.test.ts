/**
 * A full disk under the replica and log-dir actors, in the simulation (issue 10): ENOSPC at every
 * file-system call of a produce (its append, its segment roll, its group-commit fsync) and of a
 * checkpoint. Each case checks the produce's error code, that the log reads back dense and equal to
 * what was acknowledged, that acknowledged records stay readable, that no actor crashes (the
 * simulation fails the test on any uncaught error), and that once the disk takes writes again a new
 * produce succeeds at the next offset, without a restart.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryFileSystem, type FsOperation } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { readOffsetCheckpoint } from '../../../src/storage/checkpoint';
import { STORAGE_PROBE_INTERVAL_MS, type ProduceReply } from '../../../src/replica/replica-actor';
import { CHECKPOINT_RETRY_MS } from '../../../src/replica/log-dir-actor';
import type { SimRuntime } from '../../../src/runtime/sim-runtime';
import type { Endpoint } from '../../../src/runtime/runtime';
import {
  ask,
  batch,
  bootReplica,
  LOG_DIR,
  LOG_DIR_ACTOR,
  powerCycle,
  readAll,
  REPLICA,
  replicaArgs,
} from '../../helpers/sim-harness';

/** Fails the `n`-th (1-based) call matching `match` with `code`; counts the matching calls. */
function failNth(fs: MemoryFileSystem, n: number, code: string, match: (op: FsOperation) => boolean) {
  let seen = 0;
  let fired = false;
  fs.fault = (op) => {
    if (!match(op)) return null;
    seen++;
    if (seen !== n) return null;
    fired = true;
    return code;
  };
  return { fired: () => fired, calls: () => seen };
}

async function produce(sim: SimRuntime, net: Endpoint, values: string[], acks = -1): Promise<ProduceReply> {
  return ask(sim, net, REPLICA, 'replica.produce', { records: batch(values), acks, timeoutMs: 30_000 });
}

/** Produces `values` one batch each, asserting every one is acknowledged at the next offset. */
async function produceAcked(sim: SimRuntime, net: Endpoint, values: string[], acked: string[]): Promise<void> {
  for (const v of values) {
    const reply = await produce(sim, net, [v]);
    assert.equal(reply.errorCode, ErrorCode.NONE, `produce ${v}`);
    assert.equal(reply.baseOffset, acked.length);
    acked.push(v);
  }
}

/** The partition heals: after the probe interval a produce lands at the next offset and everything acknowledged reads back. */
async function assertHeals(sim: SimRuntime, net: Endpoint, acked: string[]): Promise<void> {
  await sim.advanceTime(2 * STORAGE_PROBE_INTERVAL_MS);
  await sim.settle();
  const reply = await produce(sim, net, ['after']);
  assert.equal(reply.errorCode, ErrorCode.NONE, 'a produce succeeds once the disk takes writes again');
  assert.equal(reply.baseOffset, acked.length, 'and lands at the next offset');
  acked.push('after');
  assert.deepEqual(await readAll(sim, net), acked);
}

/**
 * After healing: acknowledges two more acks=all records, sends an acks=1 one that may still be
 * unsynced, then the disk loses its unsynced bytes and both actors restart. Every acks=all record
 * acknowledged (`acked[i]` at offset i) must be there at its offset, and the log a dense prefix of
 * what was appended (readAll asserts density).
 */
async function assertSurvivesPowerLoss(
  sim: SimRuntime,
  net: Endpoint,
  fs: MemoryFileSystem,
  acked: string[],
  label: string,
) {
  await produceAcked(sim, net, ['post-heal-1', 'post-heal-2'], acked);
  const appended = [...acked, 'unsynced'];
  const tail = net.request(
    REPLICA,
    'replica.produce',
    { records: batch(['unsynced']), acks: 1, timeoutMs: 1000 },
    60_000,
  );
  tail.catch(() => undefined);
  sim.step();
  await powerCycle(sim, fs, { kind: 'lose-unsynced' }, [LOG_DIR_ACTOR, REPLICA]);
  const recovered = await readAll(sim, net);
  assert.ok(
    recovered.length >= acked.length,
    `${label}: ${recovered.length} records survive, ${acked.length} acknowledged`,
  );
  assert.deepEqual(
    recovered,
    appended.slice(0, recovered.length),
    `${label}: every acknowledged record at its offset, a dense prefix`,
  );
  const reply = await produce(sim, net, ['after-restart']);
  assert.equal(reply.errorCode, ErrorCode.NONE);
  assert.equal(reply.baseOffset, recovered.length, `${label}: the restarted log takes writes at its LEO`);
}

const ANY: (op: FsOperation) => boolean = () => true;

/** What the log-dir actor's three checkpoint files hold for t-0 (undefined: no entry). */
interface Checkpoints {
  recoveryPoint: number | undefined;
  highWatermark: number | undefined;
  logStartOffset: number | undefined;
}

function checkpoints(fs: MemoryFileSystem): Checkpoints {
  const read = (file: string) =>
    readOffsetCheckpoint(fs, `${LOG_DIR}/${file}`).find((c) => c.topic === 't' && c.partition === 0)?.offset;
  return {
    recoveryPoint: read('recovery-point-offset-checkpoint'),
    highWatermark: read('replication-offset-checkpoint'),
    logStartOffset: read('log-start-offset-checkpoint'),
  };
}

describe('replica on a full disk (simulation)', () => {
  for (const [name, config, expectRoll] of [
    ['an append', {}, false],
    ['an append that rolls a segment', { segmentBytes: 100 }, true],
  ] as const) {
    test(`ENOSPC at every file-system call of ${name} and its group commit: KAFKA_STORAGE_ERROR, nothing partial, heals by itself`, async () => {
      let steps = 0;
      const codes = new Set<number>();
      for (let n = 1; n < 40; n++) {
        const fs = new MemoryFileSystem();
        const { sim, net } = await bootReplica(n, fs, config);
        const acked: string[] = [];
        await produceAcked(sim, net, ['a', 'b', 'c'], acked);
        const fault = failNth(fs, n, 'ENOSPC', ANY);
        const reply = await produce(sim, net, ['refused?']);
        await sim.settle();
        fs.fault = null;
        if (!fault.fired()) {
          assert.equal(reply.errorCode, ErrorCode.NONE);
          acked.push('refused?');
          assert.deepEqual(await readAll(sim, net), acked);
          await sim.shutdown();
          break;
        }
        steps++;
        codes.add(reply.errorCode);
        assert.equal(reply.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `call ${n}: the produce is refused`);
        // Acknowledged records stay readable while the partition refuses writes.
        assert.deepEqual(await readAll(sim, net), acked, `call ${n}: the log holds exactly what was acknowledged`);
        await assertHeals(sim, net, acked);
        await sim.shutdown();
      }
      // A plain append: the .log write and its fsync (its indexes got no entry, so no fsync of theirs).
      assert.ok(steps >= (expectRoll ? 6 : 2), `the produce made ${steps} file-system calls that could fail`);
      assert.deepEqual([...codes], [ErrorCode.KAFKA_STORAGE_ERROR]);
    });
  }

  test('EIO on the group-commit fsync: produces waiting for the HW get KAFKA_STORAGE_ERROR, the partition probes and takes writes again', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootReplica(5, fs);
    const acked: string[] = [];
    await produceAcked(sim, net, ['a', 'b'], acked);
    fs.fault = (op) => (op.syscall === 'fsync' ? 'EIO' : null);
    const waiting = await produce(sim, net, ['never-durable']);
    assert.equal(waiting.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    const refused = await produce(sim, net, ['refused'], 1);
    assert.equal(refused.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'the partition refuses writes meanwhile');
    assert.deepEqual(await readAll(sim, net), acked, 'readers keep being served');
    await sim.advanceTime(5 * STORAGE_PROBE_INTERVAL_MS); // the disk still fails: the probe keeps failing
    assert.equal((await produce(sim, net, ['still refused'], 1)).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    fs.fault = null;
    // The bytes the failed fsync covered are never counted: the log was cut back to 'a', 'b'.
    await assertHeals(sim, net, acked);
    await sim.shutdown();
  });

  test('EIO on a flush.messages=1 fsync: that produce is answered KAFKA_STORAGE_ERROR at once (never acknowledged later), the partition heals', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootReplica(6, fs, { flushMessages: 1 });
    const acked: string[] = [];
    await produceAcked(sim, net, ['a', 'b'], acked);
    fs.fault = (op) => (op.syscall === 'fsync' ? 'EIO' : null);
    for (const acks of [-1, 1]) {
      const reply = await produce(sim, net, ['lost'], acks);
      assert.equal(reply.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `acks=${acks}`);
    }
    fs.fault = null;
    await assertHeals(sim, net, acked);
    await produceAcked(sim, net, ['c', 'd'], acked);
    assert.deepEqual(await readAll(sim, net), acked);
    await sim.shutdown();
  });

  test('a disk that fills up: every acknowledged record reads back, the full disk answers KAFKA_STORAGE_ERROR, freeing space heals it', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootReplica(9, fs, { segmentBytes: 600 });
    await sim.settle();
    fs.capacityBytes = fs.usedBytes() + 3000;
    const acked: string[] = [];
    let refused = 0;
    for (let i = 0; i < 60 && refused < 5; i++) {
      const value = `record-${i}-${'x'.repeat(40)}`;
      const reply = await produce(sim, net, [value]);
      if (reply.errorCode === ErrorCode.NONE) {
        assert.equal(reply.baseOffset, acked.length);
        acked.push(value);
      } else {
        assert.equal(reply.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
        refused++;
      }
    }
    assert.ok(acked.length > 5 && refused === 5, `${acked.length} acknowledged, ${refused} refused`);
    assert.deepEqual(await readAll(sim, net), acked);
    fs.capacityBytes = null;
    await assertHeals(sim, net, acked);
    await sim.shutdown();
  });

  test('ENOSPC from every file-system call of a checkpoint on: no actor crashes, no temp file is left, the previous files stay, the retry writes the newest values to all three files', async () => {
    let steps = 0;
    // The log-dir actor's three files and its directory (not a partition's leader-epoch-checkpoint).
    const isCheckpoint = (op: FsOperation) =>
      op.path === LOG_DIR || (/checkpoint/.test(op.path) && op.path.lastIndexOf('/') === LOG_DIR.length);
    for (let n = 1; n < 40; n++) {
      const fs = new MemoryFileSystem();
      const { sim, net } = await bootReplica(n, fs);
      const acked: string[] = [];
      await produceAcked(sim, net, ['a', 'b', 'c'], acked);
      await sim.advanceTime(replicaArgs().checkpointIntervalMs + 1);
      await sim.settle();
      const old: Checkpoints = { recoveryPoint: 3, highWatermark: 3, logStartOffset: 0 };
      assert.deepEqual(checkpoints(fs), old, 'the first checkpoint is written');
      // The next checkpoint (DeleteRecords sends it at once) fails from its n-th call on.
      await produceAcked(sim, net, ['d', 'e'], acked);
      let seen = 0;
      fs.fault = (op) => (isCheckpoint(op) && ++seen >= n ? 'ENOSPC' : null);
      assert.equal((await ask(sim, net, REPLICA, 'replica.delete-records', { offset: 1 })).errorCode, ErrorCode.NONE);
      await sim.settle();
      const second: Checkpoints = { recoveryPoint: 5, highWatermark: 5, logStartOffset: 1 };
      if (seen < n) {
        fs.fault = null;
        assert.deepEqual(checkpoints(fs), second);
        await sim.shutdown();
        break;
      }
      steps++;
      const noTempFile = () =>
        assert.deepEqual(
          fs.readdir(LOG_DIR).filter((f) => f.endsWith('.tmp')),
          [],
          `call ${n}: no temp file left`,
        );
      noTempFile();
      // Each file is either the previous one or the new one (atomic rename), never torn or missing.
      const eachOf = (c: Checkpoints, label: string) => {
        for (const key of Object.keys(c) as Array<keyof Checkpoints>)
          assert.ok(c[key] === old[key] || c[key] === second[key], `call ${n} ${label}: ${key} ${c[key]}`);
      };
      eachOf(checkpoints(fs), 'after the failure');
      // The disk stays full: fresh data, a fresh DeleteRecords and a fresh periodic checkpoint, all refused
      // (as are the retries meanwhile).
      await produceAcked(sim, net, ['f'], acked);
      assert.equal((await ask(sim, net, REPLICA, 'replica.delete-records', { offset: 2 })).errorCode, ErrorCode.NONE);
      await produceAcked(sim, net, ['g'], acked);
      await sim.advanceTime(replicaArgs().checkpointIntervalMs + 1);
      await sim.settle();
      eachOf(checkpoints(fs), 'while the disk is full');
      noTempFile();
      // Space freed: only the retry can write now (the periodic checkpoint has nothing new to send).
      fs.fault = null;
      await sim.advanceTime(CHECKPOINT_RETRY_MS + 1);
      await sim.settle();
      assert.deepEqual(
        checkpoints(fs),
        { recoveryPoint: 7, highWatermark: 7, logStartOffset: 2 },
        `call ${n}: the retry writes the newest values to all three files`,
      );
      noTempFile();
      await produceAcked(sim, net, ['h'], acked);
      await sim.shutdown();
    }
    assert.ok(steps >= 15, `a checkpoint write made ${steps} file-system calls that could fail`);
  });

  test('healed from a failed group-commit fsync, then a power loss: every acks=all record survives at its offset', async () => {
    for (const [label, config] of [
      ['one segment', {}],
      ['the failed batch rolled a segment', { segmentBytes: 100 }],
    ] as const) {
      const fs = new MemoryFileSystem();
      const { sim, net } = await bootReplica(31, fs, config);
      const acked: string[] = [];
      await produceAcked(sim, net, ['a', 'b', 'c'], acked);
      // Only the segments' fsync fails: a segment rolled for the failed batch is durably in the
      // directory, so the cut-back's unlink must be made durable too.
      fs.fault = (op) => (op.syscall === 'fsync' && op.path.endsWith('.log') ? 'EIO' : null);
      assert.equal((await produce(sim, net, ['never-durable'])).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
      fs.fault = null;
      await sim.advanceTime(2 * STORAGE_PROBE_INTERVAL_MS);
      await sim.settle();
      await assertSurvivesPowerLoss(sim, net, fs, acked, label);
      await sim.shutdown();
    }
  });

  test('healed from ENOSPC at each file-system call of an append, then a power loss: every acks=all record survives at its offset', async () => {
    let steps = 0;
    for (let n = 1; n < 40; n++) {
      const fs = new MemoryFileSystem();
      const { sim, net } = await bootReplica(n, fs, { segmentBytes: 100 });
      const acked: string[] = [];
      await produceAcked(sim, net, ['a', 'b', 'c'], acked);
      const fault = failNth(fs, n, 'ENOSPC', ANY);
      const reply = await produce(sim, net, ['refused?']);
      await sim.settle();
      fs.fault = null;
      if (!fault.fired()) {
        assert.equal(reply.errorCode, ErrorCode.NONE);
        await sim.shutdown();
        break;
      }
      steps++;
      assert.equal(reply.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `call ${n}`);
      await sim.advanceTime(2 * STORAGE_PROBE_INTERVAL_MS);
      await sim.settle();
      await assertSurvivesPowerLoss(sim, net, fs, acked, `call ${n}`);
      await sim.shutdown();
    }
    assert.ok(steps >= 6, `the produce made ${steps} file-system calls that could fail`);
  });

  test('a fault in the storage probe itself (each call of its cut-back and re-fsync): writes stay refused, reads go on up to the HW, a later probe heals', async () => {
    for (const [label, config] of [
      ['one segment', {}],
      ['the failed batch rolled a segment', { segmentBytes: 100 }],
    ] as const) {
      let steps = 0;
      for (let n = 1; n < 40; n++) {
        const fs = new MemoryFileSystem();
        const { sim, net } = await bootReplica(40 + n, fs, config);
        const acked: string[] = [];
        await produceAcked(sim, net, ['a', 'b', 'c'], acked);
        fs.fault = (op) => (op.syscall === 'fsync' ? 'EIO' : null);
        assert.equal((await produce(sim, net, ['never-durable'])).errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
        // The disk now fails the probe's n-th call once.
        const fault = failNth(fs, n, 'EIO', ANY);
        await sim.advanceTime(STORAGE_PROBE_INTERVAL_MS + 1);
        await sim.settle();
        fs.fault = null;
        if (!fault.fired()) {
          await assertHeals(sim, net, acked);
          await sim.shutdown();
          break;
        }
        steps++;
        const refused = await produce(sim, net, ['refused'], 1);
        assert.equal(refused.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `${label}, call ${n}: writes stay refused`);
        assert.deepEqual(await readAll(sim, net), acked, `${label}, call ${n}: reads go on up to the HW`);
        await assertHeals(sim, net, acked);
        await assertSurvivesPowerLoss(sim, net, fs, acked, `${label}, call ${n}`);
        await sim.shutdown();
      }
      assert.ok(steps >= 2, `${label}: the probe made ${steps} file-system calls that could fail`);
    }
  });
});
