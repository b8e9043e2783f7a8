import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { ActorUnavailableError, RequestTimeoutError } from '../../../src/runtime/actor';
import type { Envelope } from '../../../src/runtime/actor';
import { createLogger, levelFromEnv } from '../../../src/runtime/logger';
import { ThreadRuntime } from '../../../src/runtime/thread-runtime';
import { registerTestKinds } from './fixtures/register';
import { ref } from './fixtures/test-actors';

registerTestKinds();

const logger = createLogger({ level: levelFromEnv('silent'), fd: 2 });
const runtimes: ThreadRuntime[] = [];

function makeRuntime(brokers: Array<{ brokerId: number; numIoThreads: number }>, maxRestarts?: number): ThreadRuntime {
  const runtime = new ThreadRuntime({
    brokers,
    logger,
    workerLogFd: 2,
    ...(maxRestarts === undefined ? {} : { maxRestarts }),
  });
  runtimes.push(runtime);
  return runtime;
}

after(async () => {
  await Promise.all(runtimes.map((r) => r.shutdown()));
});

type WhoAmI = { id: string; threadId: number; tag: string | null };

test('placement: own worker while the pool has one free, then least-loaded; controller apart', async () => {
  const runtime = makeRuntime([
    { brokerId: 0, numIoThreads: 2 },
    { brokerId: 1, numIoThreads: 4 },
  ]);
  const ids0 = ['r0-a', 'r0-b', 'r0-c', 'r0-d', 'r0-e'];
  const ids1 = ['r1-a', 'r1-b', 'r1-c'];
  await Promise.all([
    ...ids0.map((id) => runtime.spawn(id, 'echo', {}, { pool: 'broker', brokerId: 0 })),
    ...ids1.map((id) => runtime.spawn(id, 'echo', {}, { pool: 'broker', brokerId: 1 })),
    runtime.spawn('controller', 'echo', {}, { pool: 'controller' }),
  ]);
  const workers = runtime.workers();
  const pool0 = workers.filter((w) => w.pool === 'broker/0').map((w) => w.actorIds.length);
  const pool1 = workers.filter((w) => w.pool === 'broker/1').map((w) => w.actorIds.length);
  assert.deepEqual(pool0, [3, 2], '5 replicas on 2 threads: least-loaded spread');
  assert.deepEqual(pool1, [1, 1, 1], '3 replicas on a pool of 4: one thread each, the 4th never started');

  const probe = runtime.endpoint('probe');
  const who = async (id: string): Promise<WhoAmI> => probe.request(ref(id), 'whoami', null, 5000);
  const threads = new Map<string, number>();
  for (const id of [...ids0, ...ids1, 'controller']) threads.set(id, (await who(id)).threadId);
  const t = (id: string): number => threads.get(id) as number;
  assert.equal(new Set(ids1.map(t)).size, 3);
  assert.equal(new Set(ids0.map(t)).size, 2);
  assert.equal(runtime.workerOf('r0-a')?.threadId, t('r0-a'));
  const brokerThreads = new Set([...ids0, ...ids1].map(t));
  assert.ok(!brokerThreads.has(t('controller')), 'controller runs on a worker of its own');
  assert.ok(!brokerThreads.has(0), 'no actor on the main thread');
  probe.close();
});

test('request/reply: endpoint to actor, across workers, on one worker; Buffers arrive intact', async () => {
  const runtime = makeRuntime([
    { brokerId: 0, numIoThreads: 2 },
    { brokerId: 1, numIoThreads: 1 },
  ]);
  await runtime.spawn('a', 'echo', {}, { pool: 'broker', brokerId: 0 });
  await runtime.spawn('b', 'echo', {}, { pool: 'broker', brokerId: 0 });
  await runtime.spawn('c', 'echo', {}, { pool: 'broker', brokerId: 1 });
  await runtime.spawn('d', 'echo', {}, { pool: 'broker', brokerId: 1 });
  assert.notEqual(runtime.workerOf('a')?.threadId, runtime.workerOf('b')?.threadId);
  assert.equal(runtime.workerOf('c')?.threadId, runtime.workerOf('d')?.threadId);

  const net = runtime.endpoint('net/0');
  const batch = Buffer.alloc(100_000, 5);
  assert.deepEqual(await net.request(ref('a'), 'echo', { batch, none: null, empty: Buffer.alloc(0) }, 5000), {
    batch,
    none: null,
    empty: Buffer.alloc(0),
  });
  const info = await net.request(ref('a'), 'binary-info', { data: batch }, 5000);
  assert.equal(info.isBuffer, true);
  assert.equal(info.length, batch.length);

  // ctx.fs is a NodeFileSystem on the worker.
  const dir = mkdtempSync(path.join(tmpdir(), 'skiff-runtime-'));
  try {
    assert.equal(
      await net.request(ref('a'), 'fs-write', { path: path.join(dir, 'x.checkpoint'), text: '0\n' }, 5000),
      '0\n',
    );
    assert.equal(readFileSync(path.join(dir, 'x.checkpoint'), 'utf8'), '0\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // a (broker 0, worker 0) -> b (broker 0, worker 1): through the hub.
  assert.deepEqual(
    await net.request(ref('a'), 'forward', { to: 'b', type: 'echo', body: 'x', timeoutMs: 5000 }, 5000),
    {
      ok: 'x',
    },
  );
  // c -> d on the same worker: delivered locally.
  assert.deepEqual(
    await net.request(ref('c'), 'forward', { to: 'd', type: 'echo', body: [1, 2], timeoutMs: 5000 }, 5000),
    {
      ok: [1, 2],
    },
  );
  // actor -> endpoint request, answered by the endpoint.
  net.onMessage((envelope: Envelope) => net.reply(envelope, { pong: envelope.body }));
  assert.deepEqual(
    await net.request(ref('b'), 'forward', { to: 'net/0', type: 'ping', body: 3, timeoutMs: 5000 }, 5000),
    {
      ok: { pong: 3 },
    },
  );
  // endpoint -> endpoint.
  const other = runtime.endpoint('net/1');
  other.onMessage((envelope: Envelope) => other.reply(envelope, 'hi'));
  assert.equal(await net.request(ref('net/1'), 'hello', null, 1000), 'hi');
  // Message order between one pair is kept.
  for (let i = 0; i < 50; i++) net.send(ref('a'), 'ignore', i);
  assert.equal(await net.request(ref('a'), 'count', null, 5000), 55);
  net.close();
  other.close();
});

test('request timeout and unknown target fail, never hang', async () => {
  const runtime = makeRuntime([{ brokerId: 0, numIoThreads: 2 }]);
  await runtime.spawn('a', 'echo', {}, { pool: 'broker', brokerId: 0 });
  await runtime.spawn('b', 'echo', {}, { pool: 'broker', brokerId: 0 });
  const net = runtime.endpoint('net');
  const started = Date.now();
  await assert.rejects(net.request(ref('a'), 'ignore', null, 100), RequestTimeoutError);
  assert.ok(Date.now() - started >= 95);
  await assert.rejects(net.request(ref('nobody'), 'echo', null, 5000), (error: unknown) => {
    assert.ok(error instanceof ActorUnavailableError);
    assert.equal(error.reason, 'unknown-actor');
    return true;
  });
  assert.deepEqual(
    await net.request(ref('a'), 'forward', { to: 'b', type: 'ignore', body: null, timeoutMs: 100 }, 5000),
    {
      error: 'RequestTimeoutError',
      message: 'request ignore to b timed out after 100 ms',
    },
  );
  const unknown = await net.request(
    ref('a'),
    'forward',
    { to: 'ghost', type: 'echo', body: null, timeoutMs: 5000 },
    5000,
  );
  assert.equal(unknown.error, 'ActorUnavailableError');
  net.close();
});

test('spawn rejects with the start error and frees the id; duplicate ids are refused', async () => {
  const runtime = makeRuntime([{ brokerId: 0, numIoThreads: 1 }]);
  await assert.rejects(
    runtime.spawn('x', 'echo', { failStart: 'disk says no' }, { pool: 'broker', brokerId: 0 }),
    /disk says no/,
  );
  await assert.rejects(runtime.spawn('x', 'nope', {}, { pool: 'broker', brokerId: 0 }), /unknown actor kind nope/);
  await assert.rejects(runtime.spawn('x', 'echo', {}, { pool: 'broker', brokerId: 9 }), /no worker pool for broker\/9/);
  await runtime.spawn('x', 'echo', { startDelayMs: 20 }, { pool: 'broker', brokerId: 0 });
  await assert.rejects(runtime.spawn('x', 'echo', {}, { pool: 'broker', brokerId: 0 }), /already exists/);
  const net = runtime.endpoint('net');
  assert.equal(await net.request(ref('x'), 'echo', 1, 5000), 1);
  net.close();
});

test('worker crash: pending requests fail, actors restart with the same ids, handlers run', async () => {
  const runtime = makeRuntime([{ brokerId: 0, numIoThreads: 1 }]);
  await runtime.spawn('p', 'echo', { tag: 'p-args' }, { pool: 'broker', brokerId: 0 });
  await runtime.spawn('q', 'echo', {}, { pool: 'broker', brokerId: 0 });
  const restarts: Array<{ actorIds: string[]; error: string }> = [];
  const restarted = new Promise<void>((resolve) =>
    runtime.onWorkerRestart((info) => {
      restarts.push(info);
      resolve();
    }),
  );
  const net = runtime.endpoint('net');
  const before = await net.request(ref('p'), 'whoami', null, 5000);
  const pending = net.request(ref('p'), 'ignore', null, 30_000);
  await net.request(ref('q'), 'echo', null, 5000);
  runtime.crashWorkerOf('p', 'injected by test');
  await assert.rejects(
    pending,
    (error: unknown) => error instanceof ActorUnavailableError && error.reason === 'crashed',
  );
  await restarted;
  assert.deepEqual(restarts[0]?.actorIds.sort(), ['p', 'q']);
  assert.match(restarts[0]?.error ?? '', /injected by test/);
  const afterRestart = await net.request(ref('p'), 'whoami', null, 5000);
  assert.notEqual(afterRestart.threadId, before.threadId, 'a new worker');
  assert.equal(afterRestart.tag, 'p-args', 'same args');

  // An actor that throws in receive crashes its worker too (programmer error) and is restarted.
  const second = new Promise<{ actorIds: string[]; error: string }>((resolve) => runtime.onWorkerRestart(resolve));
  net.send(ref('q'), 'throw', null);
  const info = await second;
  assert.match(info.error, /boom from receive/);
  assert.equal(await net.request(ref('q'), 'count', null, 5000), 1, 'fresh state after restart');
  const third = new Promise<{ actorIds: string[]; error: string }>((resolve) => runtime.onWorkerRestart(resolve));
  net.send(ref('q'), 'reject', null);
  assert.match((await third).error, /boom from async receive/);
  net.close();
});

test('stopActor, exit() and shutdown run stop()', async () => {
  const runtime = makeRuntime([{ brokerId: 0, numIoThreads: 2 }]);
  const net = runtime.endpoint('net');
  const stopped: string[] = [];
  net.onMessage((envelope: Envelope) => {
    if (envelope.type === 'stopped') stopped.push((envelope.body as { id: string }).id);
  });
  for (const id of ['s1', 's2', 's3'])
    await runtime.spawn(id, 'echo', { reportTo: 'net' }, { pool: 'broker', brokerId: 0 });
  await runtime.spawn('ctl', 'echo', { reportTo: 'net' }, { pool: 'controller' });
  await runtime.stopActor('s1');
  assert.deepEqual(stopped, ['s1']);
  await runtime.stopActor('s1');
  await assert.rejects(net.request(ref('s1'), 'echo', null, 5000), ActorUnavailableError);

  assert.equal(await net.request(ref('s2'), 'exit', null, 5000), 'bye');
  await assert.rejects(net.request(ref('s2'), 'echo', null, 5000), ActorUnavailableError);
  assert.deepEqual(stopped, ['s1', 's2']);

  await runtime.shutdown();
  assert.deepEqual(stopped, ['s1', 's2', 's3', 'ctl'], 'broker actors stop before the controller');
  assert.deepEqual(
    runtime.workers().map((w) => w.threadId),
    [null, null, null],
  );
  await assert.rejects(runtime.spawn('late', 'echo', {}, { pool: 'controller' }), /shut down/);
});

test('a worker that keeps crashing is given up after maxRestarts', async () => {
  const runtime = makeRuntime([{ brokerId: 0, numIoThreads: 1 }], 1);
  await runtime.spawn('flaky', 'echo', {}, { pool: 'broker', brokerId: 0 });
  const net = runtime.endpoint('net');
  const restarted = new Promise<void>((resolve) => runtime.onWorkerRestart(() => resolve()));
  runtime.crashWorkerOf('flaky');
  await restarted;
  assert.equal(await net.request(ref('flaky'), 'echo', 1, 5000), 1);
  const pending = net.request(ref('flaky'), 'ignore', null, 30_000);
  runtime.crashWorkerOf('flaky');
  await assert.rejects(pending, ActorUnavailableError);
  assert.equal(runtime.workerOf('flaky'), undefined, 'given up: no longer placed');
  await assert.rejects(net.request(ref('flaky'), 'echo', 1, 5000), (error: unknown) => {
    return error instanceof ActorUnavailableError && error.reason === 'unknown-actor';
  });
  net.close();
});

test('an actor spawns and stops actors on its broker pool (ctx.spawn, ctx.stopActor)', async () => {
  const runtime = makeRuntime([
    { brokerId: 0, numIoThreads: 2 },
    { brokerId: 1, numIoThreads: 1 },
  ]);
  const broker0 = { pool: 'broker', brokerId: 0 } as const;
  await runtime.spawn('manager/0', 'echo', {}, broker0);
  const net = runtime.endpoint('net');
  const stopped: string[] = [];
  net.onMessage((envelope: Envelope) => {
    if (envelope.type === 'stopped') stopped.push((envelope.body as { id: string }).id);
  });
  const spawnVia = (body: unknown): Promise<{ ok?: true; error?: string; message?: string; code?: string | null }> =>
    net.request(ref('manager/0'), 'spawn', body, 5000);

  // The child's start finished before the parent hears back: it answers at once, on the broker's pool.
  assert.deepEqual(
    await spawnVia({
      id: 'child',
      kind: 'echo',
      args: { tag: 'c', reportTo: 'net', startDelayMs: 20 },
      placement: broker0,
    }),
    { ok: true },
  );
  assert.equal(runtime.workerOf('child')?.pool, 'broker/0');
  assert.equal((await net.request(ref('child'), 'whoami', null, 5000)).tag, 'c');
  assert.deepEqual(
    await net.request(ref('manager/0'), 'forward', { to: 'child', type: 'echo', body: 7, timeoutMs: 5000 }, 5000),
    { ok: 7 },
  );

  // A failing start rejects in the parent with the child's message and errno; the id is free again.
  assert.deepEqual(
    await spawnVia({
      id: 'bad',
      kind: 'echo',
      args: { failStart: 'no space left on log dir', failStartCode: 'ENOSPC' },
      placement: broker0,
    }),
    { error: 'Error', message: 'no space left on log dir', code: 'ENOSPC' },
  );
  assert.equal(runtime.workerOf('bad'), undefined);
  // An id in use, an unknown kind, an unknown pool: rejected, nothing is spawned.
  const taken = await spawnVia({ id: 'child', kind: 'echo', args: {}, placement: broker0 });
  assert.match(taken.message ?? '', /actor child already exists/);
  assert.equal(taken.code, 'EEXIST', 'an id in use is told apart from a failed start');
  assert.match(
    (await spawnVia({ id: 'manager/0', kind: 'echo', args: {}, placement: broker0 })).message ?? '',
    /already exists/,
  );
  assert.match(
    (await spawnVia({ id: 'x', kind: 'nope', args: {}, placement: broker0 })).message ?? '',
    /unknown actor kind/,
  );
  assert.match(
    (await spawnVia({ id: 'x', kind: 'echo', args: {}, placement: { pool: 'broker', brokerId: 7 } })).message ?? '',
    /no worker pool for broker\/7/,
  );
  assert.equal((await net.request(ref('child'), 'whoami', null, 5000)).tag, 'c', 'the first child is untouched');

  // stopActor runs the child's stop before the parent hears back; an unknown id resolves at once.
  assert.equal(await net.request(ref('manager/0'), 'stop-actor', { id: 'child' }, 5000), 'stopped');
  assert.deepEqual(stopped, ['child']);
  assert.equal(runtime.workerOf('child'), undefined);
  await assert.rejects(net.request(ref('child'), 'echo', null, 5000), ActorUnavailableError);
  assert.equal(await net.request(ref('manager/0'), 'stop-actor', { id: 'child' }, 5000), 'stopped');
  // The id can be spawned again, by the actor, on another pool.
  assert.deepEqual(
    await spawnVia({ id: 'child', kind: 'echo', args: { tag: 'again' }, placement: { pool: 'broker', brokerId: 1 } }),
    { ok: true },
  );
  assert.equal(runtime.workerOf('child')?.pool, 'broker/1');
  assert.equal((await net.request(ref('child'), 'whoami', null, 5000)).tag, 'again');
  net.close();
});

test('crashBroker terminates exactly that broker: no stop, no restart, pending requests fail, handlers run', async () => {
  const runtime = makeRuntime(
    [
      { brokerId: 0, numIoThreads: 2 },
      { brokerId: 1, numIoThreads: 1 },
    ],
    5,
  );
  const broker0 = { pool: 'broker', brokerId: 0 } as const;
  const net = runtime.endpoint('net');
  const stopped: string[] = [];
  net.onMessage((envelope: Envelope) => {
    if (envelope.type === 'stopped') stopped.push((envelope.body as { id: string }).id);
  });
  for (const id of ['a', 'b']) await runtime.spawn(id, 'echo', { reportTo: 'net' }, broker0);
  await runtime.spawn('c', 'echo', { reportTo: 'net' }, { pool: 'broker', brokerId: 1 });
  await runtime.spawn('ctl', 'echo', { reportTo: 'net' }, { pool: 'controller' });
  const threadsBefore = new Set(
    runtime
      .workers()
      .filter((w) => w.pool === 'broker/0')
      .map((w) => w.threadId),
  );
  assert.equal(threadsBefore.size, 2);
  const restarts: unknown[] = [];
  runtime.onWorkerRestart((info) => restarts.push(info));
  const downs: Array<{ brokerId: number; actorIds: string[]; reason: string }> = [];
  runtime.onBrokerDown((info) => downs.push(info));

  const fromEndpoint = assert.rejects(net.request(ref('a'), 'ignore', null, 60_000), (e: unknown) => {
    return e instanceof ActorUnavailableError && e.reason === 'crashed';
  });
  const fromActor = net.request(
    ref('c'),
    'forward',
    { to: 'b', type: 'ignore', body: null, timeoutMs: 60_000 },
    60_000,
  );
  await net.request(ref('c'), 'echo', null, 5000); // c has sent its request to b
  const started = performance.now();
  assert.deepEqual(await runtime.crashBroker(0, 'power cut'), ['a', 'b']);
  await fromEndpoint;
  assert.deepEqual(await fromActor, { error: 'ActorUnavailableError', message: 'request ignore to b failed: crashed' });
  assert.ok(performance.now() - started < 5000, 'at once, not at the timeout');
  assert.deepEqual(downs, [{ brokerId: 0, actorIds: ['a', 'b'], reason: 'power cut' }]);
  assert.deepEqual(stopped, [], 'no stop ran');
  assert.deepEqual(
    runtime.workers().filter((w) => w.pool === 'broker/0'),
    [],
  );
  await assert.rejects(net.request(ref('a'), 'echo', null, 5000), (e: unknown) => {
    return e instanceof ActorUnavailableError && e.reason === 'unknown-actor';
  });
  // The rest of the cluster is untouched.
  assert.equal(await net.request(ref('c'), 'echo', 1, 5000), 1);
  assert.equal(await net.request(ref('ctl'), 'echo', 2, 5000), 2);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(restarts, [], 'the supervisor does not restart a crashed broker');

  // Restarting the broker is spawning again: fresh workers, fresh state.
  await runtime.spawn('a', 'echo', { tag: 'again' }, broker0);
  const again = await net.request(ref('a'), 'whoami', null, 5000);
  assert.equal(again.tag, 'again');
  assert.equal(again.received, 1);
  assert.ok(!threadsBefore.has(again.threadId), 'a new thread');
  assert.equal(
    await net.request(ref('c'), 'forward', { to: 'a', type: 'echo', body: 3, timeoutMs: 5000 }, 5000).then((r) => r.ok),
    3,
  );
  // A worker of the new pool that dies on its own is still supervised.
  const restarted = new Promise<{ actorIds: string[] }>((resolve) => runtime.onWorkerRestart(resolve));
  runtime.crashWorkerOf('a');
  assert.deepEqual((await restarted).actorIds, ['a']);
  assert.equal(await net.request(ref('a'), 'echo', 4, 5000), 4);
  await assert.rejects(runtime.crashBroker(9), /no worker pool for broker\/9/);
  net.close();
});

test('prestartWorkers: every broker worker starts at once, idle, resolving once each has loaded its modules; spawns then fill them one actor each', async () => {
  const runtime = makeRuntime([
    { brokerId: 0, numIoThreads: 3 },
    { brokerId: 1, numIoThreads: 2 },
  ]);
  await runtime.spawn('r0-first', 'echo', {}, { pool: 'broker', brokerId: 0 });
  const loaded = runtime.prestartWorkers();
  // Idempotent: the pools are full, so it starts nothing and has nothing to wait for.
  await runtime.prestartWorkers();
  // Resolves once each worker it started answered a ping, which it handles only after its preload.
  await loaded;
  const before = runtime.workers();
  assert.deepEqual(
    before.map((w) => `${w.pool}#${w.index}:${w.actorIds.length}`),
    ['broker/0#0:1', 'broker/0#1:0', 'broker/0#2:0', 'broker/1#0:0', 'broker/1#1:0'],
  );
  assert.ok(
    before.every((w) => w.threadId !== null),
    'prestarted workers are running',
  );
  assert.equal(before.filter((w) => w.pool === 'controller').length, 0, 'the controller pool is left to placement');
  const ids = ['r0-a', 'r0-b', 'r1-a', 'r1-b'];
  await Promise.all(
    ids.map((id) => runtime.spawn(id, 'echo', {}, { pool: 'broker', brokerId: id.startsWith('r0') ? 0 : 1 })),
  );
  assert.deepEqual(
    runtime.workers().map((w) => w.actorIds),
    [['r0-first'], ['r0-a'], ['r0-b'], ['r1-a'], ['r1-b']],
  );
  // The preloading entry runs a full worker host: its actors answer requests.
  const probe = runtime.endpoint('prestart-probe');
  const threads = new Set<number>();
  for (const id of ids) threads.add(((await probe.request(ref(id), 'whoami', null, 5000)) as WhoAmI).threadId);
  assert.equal(threads.size, 4);
});
