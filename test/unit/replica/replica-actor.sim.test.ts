/**
 * The replica actor under the deterministic simulation runtime (one thread, seeded scheduler, virtual
 * time, in-memory disk that can lose unsynced bytes or tear the last write): append, fetch, the
 * durability contract for acks=all with write.caching=false, and recovery after crashes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SimRuntime } from '../../../src/runtime/sim-runtime';
import { MemoryFileSystem } from '../../../src/storage/memory-file-system';
import { buildRecordBatch, decodeRecordBatches } from '../../../src/protocol/record-batch/builder';
import { ErrorCode } from '../../../src/protocol/error-codes';
import type { ReplicaArgs, ProduceReply, FetchReply, ListOffsetReply } from '../../../src/replica/replica-actor';
import type { LogDirArgs } from '../../../src/replica/log-dir-actor';
import type { Endpoint } from '../../../src/runtime/runtime';
import { effectiveLogConfig } from '../../../src/config/topic-config';
import { defaultBrokerConfig } from '../../../src/config/broker-config';
import type { Logger } from '../../../src/runtime/actor';
import { recordingLogger } from '../storage/helpers';
import type { FileHandle, FileSystem } from '../../../src/storage/file-system';
import { fsError } from '../../../src/storage/memory-file-system';
import { readOffsetCheckpoint } from '../../../src/storage/checkpoint';

/**
 * A disk whose armed `.log` fsyncs fail once asynchronously (EIO) while a later fsync of the same
 * file succeeds without the lost bytes being written again: Linux's writeback-error behaviour
 * (errors reach one fsync per descriptor), the reason a failed fsync must never be retried.
 */
function failingAsyncSyncs(inner: MemoryFileSystem): FileSystem & { armed: boolean } {
  const disk = {
    armed: false,
    open(path: string, mode: 'r' | 'rw'): FileHandle {
      const handle = inner.open(path, mode);
      return new Proxy(handle, {
        get(target, prop) {
          if (prop === 'syncAsync' && path.endsWith('.log')) {
            return () => {
              const synced = target.syncAsync!();
              if (!disk.armed) return synced;
              disk.armed = false;
              return synced.then(() => {
                throw fsError('EIO', 'fsync', path, 'injected writeback error');
              });
            };
          }
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
  };
  return new Proxy(disk, {
    get(target, prop) {
      if (prop in target) return Reflect.get(target, prop) as unknown;
      const value = Reflect.get(inner, prop) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(inner) : value;
    },
    set(target, prop, value) {
      return Reflect.set(target, prop, value);
    },
  }) as unknown as FileSystem & { armed: boolean };
}

const LOG_DIR = '/data';
const REPLICA = 'replica/0/t/0';
const LOG_DIR_ACTOR = 'log-dir/0/0';

function replicaArgs(overrides: Partial<ReplicaArgs['config']> = {}): ReplicaArgs {
  return {
    topic: 't',
    topicId: 'AAAAAAAAAAAAAAAAAAAAAg',
    partition: 0,
    logDir: LOG_DIR,
    brokerId: 0,
    leaderEpoch: 0,
    config: {
      ...effectiveLogConfig({}, defaultBrokerConfig()),
      segmentBytes: 4096,
      indexIntervalBytes: 256,
      ...overrides,
    },
    logDirActor: LOG_DIR_ACTOR,
    checkpointIntervalMs: 5000,
    retentionCheckIntervalMs: 300_000,
    isr: [0],
  };
}

async function boot(seed: number, fs: FileSystem, config: Partial<ReplicaArgs['config']> = {}, logger?: Logger) {
  const sim = new SimRuntime({ seed, fs, trace: true, ...(logger ? { logger } : {}) });
  const logDirArgs: LogDirArgs = {
    logDir: LOG_DIR,
    clusterId: 'AAAAAAAAAAAAAAAAAAAAAw',
    nodeId: 0,
    directoryId: 'AAAAAAAAAAAAAAAAAAAABA',
  };
  await sim.spawn(LOG_DIR_ACTOR, 'log-dir', logDirArgs, { pool: 'broker', brokerId: 0 });
  await sim.spawn(REPLICA, 'replica', replicaArgs(config), { pool: 'broker', brokerId: 0 });
  const net = sim.endpoint('net/0');
  return { sim, net };
}

/** Sends a request and drives the simulation until it is answered. */
async function ask<T>(sim: SimRuntime, net: Endpoint, type: string, body: unknown): Promise<T> {
  const reply = net.request<T>(REPLICA, type, body, 60_000);
  await sim.settle();
  return reply;
}

function batch(values: string[]): Buffer {
  return buildRecordBatch(values.map((v) => ({ key: null, value: Buffer.from(v), headers: [] })));
}

async function readAll(sim: SimRuntime, net: Endpoint): Promise<string[]> {
  const fetched = await ask<FetchReply>(sim, net, 'fetch', { fetchOffset: 0, maxBytes: 1 << 20, minOneBatch: true });
  assert.equal(fetched.errorCode, ErrorCode.NONE);
  const batches = decodeRecordBatches(Buffer.from(fetched.records ?? Buffer.alloc(0)));
  let expected = 0;
  for (const b of batches) {
    assert.equal(b.baseOffset, expected, 'offsets are dense');
    expected += b.records.length;
  }
  return batches.flatMap((b) => b.records.map((r) => r.value!.toString()));
}

describe('replica actor in the simulation runtime', () => {
  test('append assigns dense offsets and fetch serves batches up to the HW', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await boot(1, fs, { segmentBytes: 512 });
    const offsets: number[] = [];
    for (let i = 0; i < 20; i++) {
      const reply = await ask<ProduceReply>(sim, net, 'produce', {
        records: batch([`a${i}`, `b${i}`]),
        acks: -1,
        timeoutMs: 1000,
      });
      assert.equal(reply.errorCode, ErrorCode.NONE);
      offsets.push(reply.baseOffset);
    }
    assert.deepEqual(
      offsets,
      Array.from({ length: 20 }, (_, i) => 2 * i),
    );
    const values = await readAll(sim, net);
    assert.equal(values.length, 40);
    assert.equal(values[39], 'b19');
    assert.ok(fs.readdir(`${LOG_DIR}/t-0`).filter((f) => f.endsWith('.log')).length > 1, 'small segments rolled');
    await sim.shutdown();
  });

  test('acks=all with write.caching=false answers only once the batch is fsynced', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await boot(2, fs);
    const reply = await ask<ProduceReply>(sim, net, 'produce', {
      records: batch(['durable']),
      acks: -1,
      timeoutMs: 1000,
    });
    assert.equal(reply.errorCode, ErrorCode.NONE);
    assert.equal(fs.unsyncedBytes(`${LOG_DIR}/t-0/00000000000000000000.log`), 0, 'no unsynced bytes once acknowledged');
    fs.crash({ kind: 'lose-unsynced' });
    sim.crash(REPLICA);
    await sim.restart(REPLICA);
    await sim.settle();
    assert.deepEqual(await readAll(sim, net), ['durable']);
    await sim.shutdown();
  });

  test('power loss keeps every acks=all batch and leaves a prefix of the rest', async () => {
    for (const seed of [3, 4, 5, 6]) {
      const fs = new MemoryFileSystem();
      const { sim, net } = await boot(seed, fs);
      const acked: string[] = [];
      const sent: string[] = [];
      for (let i = 0; i < 30; i++) {
        const value = `r${i}`;
        sent.push(value);
        const acks = i % 3 === 0 ? -1 : 1;
        const pending = net.request<ProduceReply>(
          REPLICA,
          'produce',
          { records: batch([value]), acks, timeoutMs: 1000 },
          60_000,
        );
        // Deliver a few steps only, so some acks=1 batches are still unsynced at the crash.
        for (let s = 0; s < 1 + (i % 4); s++) sim.step();
        if (acks === -1) {
          await sim.settle();
          assert.equal((await pending).errorCode, ErrorCode.NONE);
          acked.push(value);
        } else pending.catch(() => undefined);
      }
      fs.crash({ kind: i32(seed) % 2 === 0 ? 'lose-unsynced' : 'torn-last-write' });
      sim.crash([REPLICA, LOG_DIR_ACTOR]);
      await sim.restart([LOG_DIR_ACTOR, REPLICA]);
      await sim.settle();
      const recovered = await readAll(sim, net);
      assert.deepEqual(recovered, sent.slice(0, recovered.length), `seed ${seed}: a prefix of what was appended`);
      for (const value of acked) assert.ok(recovered.includes(value), `seed ${seed}: acknowledged ${value} survives`);
      await sim.shutdown();
    }
  });

  test('a flipped byte in the last batch is truncated on restart and the rest is served', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await boot(7, fs, { segmentBytes: 1 << 20 });
    for (const v of ['one', 'two', 'three'])
      await ask<ProduceReply>(sim, net, 'produce', { records: batch([v]), acks: -1, timeoutMs: 1000 });
    const segment = `${LOG_DIR}/t-0/00000000000000000000.log`;
    const size = fs.readFile(segment).length;
    sim.crash(REPLICA);
    fs.flipByte(segment, size - 2);
    await sim.restart(REPLICA);
    await sim.settle();
    assert.deepEqual(await readAll(sim, net), ['one', 'two']);
    const next = await ask<ProduceReply>(sim, net, 'produce', { records: batch(['four']), acks: -1, timeoutMs: 1000 });
    assert.equal(next.baseOffset, 2, 'the truncated offset is reused');
    await sim.shutdown();
  });

  test('pipelined group commit: appends go on while an fsync is in flight; acks=all waits for the fsync covering it', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    const { sim, net } = await boot(8, fs);
    const answered = new Set<string>();
    const send = (value: string, acks: number) => {
      const reply = net.request<ProduceReply>(
        REPLICA,
        'produce',
        { records: batch([value]), acks, timeoutMs: 60_000 },
        60_000,
      );
      reply.then(
        (r) => {
          assert.equal(r.errorCode, ErrorCode.NONE);
          answered.add(value);
        },
        () => undefined,
      );
      return reply;
    };
    send('a', -1);
    await sim.settle();
    assert.ok(fs.pendingSyncs > 0, 'a flush is in flight');
    assert.ok(!answered.has('a'), 'acks=all is not answered before its fsync completes');
    const syncsInFlight = fs.pendingSyncs;
    const syncsStarted = fs.syncCount;
    for (let i = 0; i < 5; i++) send(`b${i}`, 1);
    send('c', -1);
    await sim.settle();
    for (let i = 0; i < 5; i++) assert.ok(answered.has(`b${i}`), 'acks=1 is answered while the fsync runs');
    assert.ok(!answered.has('c'));
    assert.equal(fs.syncCount, syncsStarted, 'no second flush while one is in flight');
    assert.equal(fs.pendingSyncs, syncsInFlight);

    fs.completeSyncs();
    await sim.settle();
    assert.ok(answered.has('a'), 'answered once the fsync covering it completed');
    assert.ok(!answered.has('c'), 'c was appended during that fsync: the next one covers it');
    assert.equal(
      fs.syncCount - syncsStarted,
      3,
      'one flush (.log, .index, .timeindex) for all six appends made meanwhile',
    );
    assert.ok(fs.pendingSyncs > 0);

    // Power loss while that second fsync is in flight: the acknowledged batch survives, c may not.
    fs.crash({ kind: 'lose-unsynced' });
    sim.crash([REPLICA, LOG_DIR_ACTOR]);
    await sim.restart([LOG_DIR_ACTOR, REPLICA]);
    await sim.settle();
    const recovered = await readAll(sim, net);
    assert.deepEqual(
      recovered,
      ['a', 'b0', 'b1', 'b2', 'b3', 'b4', 'c'].slice(0, recovered.length),
      'a prefix of what was appended',
    );
    assert.ok(recovered.includes('a'));

    send('d', -1);
    await sim.settle();
    assert.ok(!answered.has('d'));
    while (fs.pendingSyncs > 0) {
      fs.completeSyncs();
      await sim.settle();
    }
    assert.ok(answered.has('d'));
    assert.deepEqual((await readAll(sim, net)).slice(-1), ['d']);
    await sim.shutdown();
  });

  test('reads that arrive while appends are being fsynced wait for them (read-your-writes)', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    const { sim, net } = await boot(10, fs);
    const produced = net.request<ProduceReply>(
      REPLICA,
      'produce',
      { records: batch(['p', 'q']), acks: 1, timeoutMs: 1000 },
      60_000,
    );
    await sim.settle();
    assert.equal((await produced).errorCode, ErrorCode.NONE);
    const answers: string[] = [];
    const fetched = net.request<FetchReply>(
      REPLICA,
      'fetch',
      { fetchOffset: 0, maxBytes: 1 << 20, minOneBatch: true },
      60_000,
    );
    const latest = net.request<ListOffsetReply>(REPLICA, 'list-offsets', { timestamp: -1 }, 60_000);
    const earliest = net.request<ListOffsetReply>(REPLICA, 'list-offsets', { timestamp: -2 }, 60_000);
    fetched.then(() => answers.push('fetch'));
    latest.then(() => answers.push('latest'));
    earliest.then(() => answers.push('earliest'));
    await sim.settle();
    assert.deepEqual(answers, ['earliest'], 'only the read that needs no HW is answered during the fsync');
    fs.completeSyncs();
    await sim.settle();
    assert.equal((await latest).offset, 2);
    assert.deepEqual(
      decodeRecordBatches(Buffer.from((await fetched).records!)).flatMap((b) =>
        b.records.map((r) => r.value!.toString()),
      ),
      ['p', 'q'],
    );
    const empty = await ask<FetchReply>(sim, net, 'fetch', { fetchOffset: 2, maxBytes: 1 << 20, minOneBatch: true });
    assert.equal(empty.records, null, 'at the LEO: answered at once, empty');
    await sim.shutdown();
  });

  test('stop waits for the fsync in flight, then flushes the rest', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    const logger = recordingLogger();
    const { sim, net } = await boot(9, fs, {}, logger);
    net.request(REPLICA, 'produce', { records: batch(['x']), acks: 1, timeoutMs: 1000 }, 60_000).catch(() => undefined);
    await sim.settle();
    net.request(REPLICA, 'produce', { records: batch(['y']), acks: 1, timeoutMs: 1000 }, 60_000).catch(() => undefined);
    await sim.settle();
    assert.ok(fs.pendingSyncs > 0);
    const stopped = sim.stopActor(REPLICA);
    await sim.settle();
    fs.completeSyncs();
    await stopped;
    assert.equal(
      fs.unsyncedBytes(`${LOG_DIR}/t-0/00000000000000000000.log`),
      0,
      'everything fsynced by the clean stop',
    );
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'error'),
      [],
      'stop closed the log only after the flush in flight',
    );
    await sim.shutdown();
  });

  test('delete while an fsync is in flight: answered once it completes, directory removed, no error', async () => {
    const fs = new MemoryFileSystem({ asyncSyncs: 'manual' });
    const logger = recordingLogger();
    const { sim, net } = await boot(11, fs, {}, logger);
    const acked = net.request<ProduceReply>(
      REPLICA,
      'produce',
      { records: batch(['x']), acks: -1, timeoutMs: 60_000 },
      60_000,
    );
    await sim.settle();
    assert.ok(fs.pendingSyncs > 0, 'a flush is in flight');
    let deleted = false;
    const deletion = net.request(REPLICA, 'delete', {}, 60_000).then(() => {
      deleted = true;
    });
    await sim.settle();
    assert.equal(
      (await acked).errorCode,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      'the acks=all produce is failed by the delete, never acknowledged',
    );
    assert.equal(deleted, false, 'delete waits for the fsync in flight');
    assert.ok(fs.exists(`${LOG_DIR}/t-0`));
    fs.completeSyncs();
    await sim.settle();
    await deletion;
    assert.equal(fs.exists(`${LOG_DIR}/t-0`), false);
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'error'),
      [],
    );
    await sim.shutdown();
  });

  test('an fsync that fails while stop waits for it is never retried into a clean checkpoint', async () => {
    const memory = new MemoryFileSystem({ asyncSyncs: 'manual' });
    const fs = failingAsyncSyncs(memory);
    const logger = recordingLogger();
    const { sim, net } = await boot(12, fs, {}, logger);
    await sim.settle();
    fs.armed = true;
    const produced = net.request<ProduceReply>(
      REPLICA,
      'produce',
      { records: batch(['x']), acks: 1, timeoutMs: 1000 },
      60_000,
    );
    await sim.settle();
    assert.equal((await produced).errorCode, ErrorCode.NONE);
    assert.ok(memory.pendingSyncs > 0, 'the failing flush is in flight');
    const stopped = sim.stopActor(REPLICA);
    await sim.settle();
    memory.completeSyncs();
    await stopped;
    const checkpoint = readOffsetCheckpoint(memory, `${LOG_DIR}/recovery-point-offset-checkpoint`).find(
      (c) => c.topic === 't' && c.partition === 0,
    );
    assert.ok(
      checkpoint === undefined || checkpoint.offset === 0,
      `recovery point ${JSON.stringify(checkpoint)} must not cover the batch whose fsync failed`,
    );
    assert.ok(
      logger.lines.some((l) => l.level === 'error' && /stop failed/.test(l.msg ?? '')),
      'the stop fails with the fsync error',
    );
    await sim.shutdown().catch(() => undefined);
  });

  test('the same seed gives the same delivery trace', async () => {
    async function run(seed: number): Promise<string[]> {
      const { sim, net } = await boot(seed, new MemoryFileSystem());
      const replies = [];
      for (let i = 0; i < 10; i++)
        replies.push(
          net.request(REPLICA, 'produce', { records: batch([`v${i}`]), acks: i % 2 ? 1 : -1, timeoutMs: 1000 }, 60_000),
        );
      replies.push(net.request(REPLICA, 'watch', { fetchOffset: 100, maxWaitMs: 50 }, 60_000));
      await sim.settle();
      await sim.advanceTime(100);
      await Promise.all(replies);
      const trace = [...sim.trace];
      await sim.shutdown();
      return trace;
    }
    assert.deepEqual(await run(11), await run(11));
  });
});

function i32(n: number): number {
  return n | 0;
}
