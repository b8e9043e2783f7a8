import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { ActorUnavailableError, RequestTimeoutError } from '../../../src/runtime/actor';
import type { Envelope } from '../../../src/runtime/actor';
import { SIM_EPOCH_MS, SimRuntime } from '../../../src/runtime/sim-runtime';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { registerTestKinds } from './fixtures/register';
import { ref } from './fixtures/test-actors';

registerTestKinds();

const broker0 = { pool: 'broker', brokerId: 0 } as const;

/** Three producers race 6 items each into one sink, plus echo requests; returns trace and sink order. */
async function racyRun(seed: number): Promise<{ trace: string[]; seen: string[] }> {
  const sim = new SimRuntime({ seed, trace: true });
  await sim.spawn('sink', 'sink', null, broker0);
  for (const p of ['p1', 'p2', 'p3']) await sim.spawn(p, 'producer', null, broker0);
  await sim.spawn('echo', 'echo', {}, { pool: 'controller' });
  const driver = sim.endpoint('driver');
  for (const p of ['p1', 'p2', 'p3']) driver.send(ref(p), 'go', { to: 'sink', n: 6 });
  const echoes = [1, 2, 3].map((i) => driver.request(ref('echo'), 'echo', i, 1000));
  await sim.settle();
  assert.deepEqual(await Promise.all(echoes), [1, 2, 3]);
  const seen = await sim.runUntil(driver.request(ref('sink'), 'dump', null, 1000));
  await sim.shutdown();
  return { trace: sim.trace, seen };
}

test('same seed, same trace; another seed, another interleaving; pairs stay FIFO', async () => {
  const first = await racyRun(1);
  const again = await racyRun(1);
  assert.deepEqual(again.trace, first.trace);
  assert.deepEqual(again.seen, first.seen);
  assert.equal(first.seen.length, 18);
  const other = await racyRun(2);
  assert.notDeepEqual(other.seen, first.seen, 'a different seed interleaves the producers differently');
  for (const run of [first, other]) {
    for (const p of ['p1', 'p2', 'p3']) {
      const mine = run.seen.filter((s) => s.startsWith(`${p}:`));
      assert.deepEqual(
        mine,
        [0, 1, 2, 3, 4, 5].map((i) => `${p}:${i}`),
        'messages of one pair stay in order',
      );
    }
  }
});

test('virtual timers fire in order on virtual time only', async () => {
  const sim = new SimRuntime({ seed: 3 });
  await sim.spawn('ticker', 'ticker', { periodMs: 100 }, broker0);
  const driver = sim.endpoint('driver');
  const realStart = Date.now();
  await sim.advanceTime(350);
  assert.equal(sim.clock.nowMs(), SIM_EPOCH_MS + 350);
  assert.equal(sim.elapsedMs, 350);
  assert.deepEqual(await sim.runUntil(driver.request(ref('ticker'), 'ticks', null, 10)), [100, 200, 300]);
  await sim.advanceTime(10_000);
  assert.equal((await sim.runUntil(driver.request(ref('ticker'), 'ticks', null, 10))).length, 103);
  assert.ok(Date.now() - realStart < 2000, 'ten virtual seconds take no real time');

  await sim.spawn('e', 'echo', {}, broker0);
  const late = driver.request(ref('e'), 'later', { ms: 250 }, 1000);
  assert.deepEqual(await sim.runUntil(late), { at: 10_600 });
});

test('runUntil stops a livelock of asynchronous turns at its step limit', { timeout: 60_000 }, async () => {
  // Each turn sends only after two macrotask turns, so runUntil finds every step after its second
  // microtask flush: those steps count too (they did not, and such a run went on for ever).
  const sim = new SimRuntime({ seed: 9 });
  await sim.spawn('a', 'echo', {}, broker0);
  await sim.spawn('b', 'echo', {}, broker0);
  const driver = sim.endpoint('driver');
  driver.send(ref('a'), 'volley', { to: 'b' });
  await assert.rejects(sim.runUntil(new Promise(() => {}), 2_000), /still busy after 2000 steps/);
  await assert.rejects(sim.settle(2_000), /still busy after 2000 steps/);
  await sim.shutdown();
});

test('a zero-delay timer fires after the messages already queued for its actor', async () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const sim = new SimRuntime({ seed });
    await sim.spawn('t', 'ticker', { periodMs: 1_000_000 }, broker0);
    const driver = sim.endpoint('driver');
    driver.send(ref('t'), 'zero', null);
    for (let i = 0; i < 3; i++) driver.send(ref('t'), 'mark', { i });
    await sim.settle();
    const order = await sim.runUntil(driver.request(ref('t'), 'order', null, 10));
    assert.deepEqual(order, ['zero-set', 'mark-0', 'mark-1', 'mark-2', 'zero-fired']);
  }
});

test('request timeouts run on virtual time; unknown targets fail at once', async () => {
  const sim = new SimRuntime({ seed: 9 });
  await sim.spawn('e', 'echo', {}, broker0);
  const driver = sim.endpoint('driver');
  await assert.rejects(sim.runUntil(driver.request(ref('e'), 'ignore', null, 1500)), RequestTimeoutError);
  assert.equal(sim.elapsedMs, 1500);
  await assert.rejects(sim.runUntil(driver.request(ref('ghost'), 'echo', null, 1500)), (error: unknown) => {
    return error instanceof ActorUnavailableError && error.reason === 'unknown-actor';
  });
  assert.equal(sim.elapsedMs, 1500);
});

test('spawn waits for an async start on virtual time; a failing start rejects and frees the id', async () => {
  const sim = new SimRuntime({ seed: 4 });
  await sim.spawn('slow', 'echo', { startDelayMs: 5000 }, broker0);
  assert.equal(sim.elapsedMs, 5000);
  await assert.rejects(sim.spawn('bad', 'echo', { failStart: 'no log dir' }, broker0), /no log dir/);
  assert.deepEqual(sim.actorIds(), ['slow']);
  await sim.spawn('bad', 'echo', {}, broker0);
});

test('crash drops state and queued messages without stop(); restart rebuilds from kind and args', async () => {
  const sim = new SimRuntime({ seed: 5, trace: true });
  const restarts: Array<{ actorIds: string[]; error: string }> = [];
  sim.onWorkerRestart((info) => restarts.push(info));
  const driver = sim.endpoint('driver');
  const stopped: string[] = [];
  driver.onMessage((envelope: Envelope) => stopped.push(envelope.type));
  await sim.spawn('c', 'echo', { reportTo: 'driver' }, broker0);
  for (let i = 0; i < 3; i++) driver.send(ref('c'), 'ignore', i);
  await sim.settle();
  assert.equal(await sim.runUntil(driver.request(ref('c'), 'count', null, 100)), 4);
  driver.send(ref('c'), 'ignore', 'queued, then lost');
  const pending = driver.request(ref('c'), 'ignore', null, 60_000);
  sim.crash('c');
  await assert.rejects(
    pending,
    (error: unknown) => error instanceof ActorUnavailableError && error.reason === 'crashed',
  );
  await assert.rejects(sim.runUntil(driver.request(ref('c'), 'echo', null, 100)), ActorUnavailableError);
  assert.equal(sim.queuedMessages, 0);
  await sim.restart('c');
  assert.deepEqual(restarts, [{ actorIds: ['c'], error: 'simulated crash' }]);
  assert.equal(await sim.runUntil(driver.request(ref('c'), 'count', null, 100)), 1, 'state rebuilt from scratch');
  assert.deepEqual(stopped, [], 'crash does not call stop');
  await sim.shutdown();
  assert.deepEqual(stopped, ['stopped'], 'shutdown calls stop');
  assert.ok(sim.trace.includes('0 crash c') && sim.trace.includes('0 restart c'));
});

test('actor errors surface from the driver; bodies that cannot be encoded throw at send', async () => {
  const sim = new SimRuntime({ seed: 6 });
  await sim.spawn('e', 'echo', {}, broker0);
  const driver = sim.endpoint('driver');
  assert.throws(() => driver.send(ref('e'), 'echo', { fn: () => 1 }), TypeError);
  driver.send(ref('e'), 'reject', null);
  await assert.rejects(sim.settle(), /boom from async receive/);
  const sync = new SimRuntime({ seed: 6 });
  await sync.spawn('p', 'producer', null, broker0);
  sync.endpoint('d').send(ref('p'), 'bad', null);
  assert.throws(() => sync.runUntilIdle(), /unexpected bad/);
});

test('fault hook drops and duplicates with its own seeded random', async () => {
  const sim = new SimRuntime({ seed: 8 });
  await sim.spawn('sink', 'sink', null, broker0);
  await sim.spawn('p', 'producer', null, broker0);
  sim.setFaults((envelope) => {
    if (envelope.type !== 'item') return 'deliver';
    const i = (envelope.body as { i: number }).i;
    if (i === 1) return 'drop';
    if (i === 2) return 'duplicate';
    if (i === 3) return { delayMs: 50 };
    return 'deliver';
  });
  const driver = sim.endpoint('driver');
  driver.send(ref('p'), 'go', { to: 'sink', n: 5 });
  await sim.advanceTime(100);
  const seen = await sim.runUntil(driver.request(ref('sink'), 'dump', null, 10));
  assert.deepEqual(seen, ['p:0', 'p:2', 'p:2', 'p:4', 'p:3']);
});

test('actors share the simulated disk', async () => {
  const disk = new MemoryFileSystem();
  disk.mkdirp('/data/orders-0');
  const sim = new SimRuntime({ seed: 10, fs: disk });
  await sim.spawn('e', 'echo', {}, broker0);
  const driver = sim.endpoint('driver');
  const text = await sim.runUntil(driver.request(ref('e'), 'fs-write', { path: '/data/orders-0/hw', text: '42' }, 10));
  assert.equal(text, '42');
  assert.equal(disk.readFile('/data/orders-0/hw').toString(), '42');
  assert.equal(new SimRuntime({ seed: 1 }).fs.exists('/data'), false, 'default: a fresh MemoryFileSystem');
});

test('an actor spawns and stops actors (ctx.spawn, ctx.stopActor) on virtual time', async () => {
  const sim = new SimRuntime({ seed: 11 });
  await sim.spawn('manager/0', 'echo', {}, broker0);
  const driver = sim.endpoint('driver');
  const stopped: string[] = [];
  driver.onMessage((envelope: Envelope) => {
    if (envelope.type === 'stopped') stopped.push((envelope.body as { id: string }).id);
  });
  const spawnVia = (body: unknown): Promise<{ ok?: true; error?: string; message?: string; code?: string | null }> =>
    sim.runUntil(driver.request(ref('manager/0'), 'spawn', body, 60_000));

  const startedAtMs = sim.elapsedMs;
  assert.deepEqual(
    await spawnVia({
      id: 'child',
      kind: 'echo',
      args: { tag: 'c', reportTo: 'driver', startDelayMs: 3000 },
      placement: broker0,
    }),
    { ok: true },
  );
  assert.equal(sim.elapsedMs - startedAtMs, 3000, 'the parent heard back once the child had started');
  assert.deepEqual(sim.actorIds(), ['child', 'manager/0']);
  assert.equal((await sim.runUntil(driver.request(ref('child'), 'whoami', null, 100))).tag, 'c');

  assert.deepEqual(
    await spawnVia({
      id: 'bad',
      kind: 'echo',
      args: { failStart: 'no space left on log dir', failStartCode: 'ENOSPC' },
      placement: broker0,
    }),
    { error: 'Error', message: 'no space left on log dir', code: 'ENOSPC' },
  );
  assert.deepEqual(sim.actorIds(), ['child', 'manager/0'], 'a failed start leaves nothing behind');
  assert.match(
    (await spawnVia({ id: 'child', kind: 'echo', args: {}, placement: broker0 })).message ?? '',
    /already exists/,
  );
  assert.match(
    (await spawnVia({ id: 'driver', kind: 'echo', args: {}, placement: broker0 })).message ?? '',
    /already exists/,
  );
  assert.match(
    (await spawnVia({ id: 'y', kind: 'nope', args: {}, placement: broker0 })).message ?? '',
    /unknown actor kind/,
  );

  assert.equal(await sim.runUntil(driver.request(ref('manager/0'), 'stop-actor', { id: 'child' }, 100)), 'stopped');
  await sim.settle();
  assert.deepEqual(stopped, ['child']);
  assert.deepEqual(sim.actorIds(), ['manager/0']);
  await assert.rejects(sim.runUntil(driver.request(ref('child'), 'echo', null, 100)), ActorUnavailableError);
  assert.equal(await sim.runUntil(driver.request(ref('manager/0'), 'stop-actor', { id: 'ghost' }, 100)), 'stopped');
  await sim.shutdown();
});

test('crashBroker kills that broker’s actors without stop and forgets them; handlers run', async () => {
  const sim = new SimRuntime({ seed: 12, trace: true });
  const driver = sim.endpoint('driver');
  const stopped: string[] = [];
  driver.onMessage((envelope: Envelope) => stopped.push((envelope.body as { id: string }).id));
  for (const id of ['a', 'b']) await sim.spawn(id, 'echo', { reportTo: 'driver' }, broker0);
  await sim.spawn('c', 'echo', { reportTo: 'driver' }, { pool: 'broker', brokerId: 1 });
  await sim.spawn('ctl', 'echo', { reportTo: 'driver' }, { pool: 'controller' });
  sim.crash('b', 'crashed first');
  const downs: unknown[] = [];
  sim.onBrokerDown((info) => downs.push(info));
  const restarts: unknown[] = [];
  sim.onWorkerRestart((info) => restarts.push(info));

  driver.send(ref('a'), 'ignore', 'queued, then lost');
  const fromEndpoint = driver.request(ref('a'), 'ignore', null, 60_000);
  const fromActor = driver.request(
    ref('c'),
    'forward',
    { to: 'a', type: 'ignore', body: null, timeoutMs: 60_000 },
    60_000,
  );
  await sim.settle();
  assert.deepEqual(await sim.crashBroker(0, 'power cut'), ['a']);
  await assert.rejects(fromEndpoint, (e: unknown) => e instanceof ActorUnavailableError && e.reason === 'crashed');
  assert.deepEqual(await sim.runUntil(fromActor), {
    error: 'ActorUnavailableError',
    message: 'request ignore to a failed: crashed',
  });
  assert.equal(sim.elapsedMs, 0, 'at once');
  assert.deepEqual(downs, [{ brokerId: 0, actorIds: ['a'], reason: 'power cut' }]);
  assert.deepEqual(sim.actorIds(), ['c', 'ctl']);
  await assert.rejects(sim.restart('b'), /has not crashed/, 'forgotten, not kept for restart');
  await assert.rejects(sim.runUntil(driver.request(ref('a'), 'echo', null, 100)), (e: unknown) => {
    return e instanceof ActorUnavailableError && e.reason === 'unknown-actor';
  });
  assert.ok(sim.trace.includes('0 crash broker 0'));

  // A spawn whose broker crashes while the actor starts fails (here an actor's, which nothing drives).
  const starting = driver.request(
    ref('ctl'),
    'spawn',
    { id: 'slow', kind: 'echo', args: { startDelayMs: 1000 }, placement: broker0 },
    60_000,
  );
  await sim.settle();
  assert.deepEqual(sim.actorIds(), ['c', 'ctl', 'slow']);
  await sim.crashBroker(0);
  assert.deepEqual(await sim.runUntil(starting), {
    error: 'Error',
    message: 'actor slow crashed while starting',
    code: null,
  });
  assert.equal(sim.elapsedMs, 0);

  await sim.spawn('a', 'echo', {}, broker0);
  assert.equal(await sim.runUntil(driver.request(ref('a'), 'count', null, 100)), 1, 'fresh state');
  await sim.shutdown();
  assert.deepEqual(stopped.sort(), ['c', 'ctl'], 'only live actors stop at shutdown: not a, b or slow');
  assert.deepEqual(restarts, []);
});

test('a crashed actor’s late continuation cannot touch the disk its restarted successor owns', async () => {
  // Found by `skiff verify --seed 20261202`: a follower crashed while awaiting its log's fsync; the fsync
  // completed after its broker restarted and the dead incarnation truncated the segment file the new
  // one had just recovered (its Fetch then hit "short read at position 0"). A terminated worker runs
  // nothing: in the simulation a dead actor's disk refuses, and its pending fsync never settles.
  const disk = new MemoryFileSystem({ asyncSyncs: 'manual' });
  const sim = new SimRuntime({ seed: 13, fs: disk });
  const driver = sim.endpoint('driver');
  disk.mkdirp('/data/t-0');
  disk.writeFileAtomic('/data/t-0/00000000000000000000.log', Buffer.from('batch'));
  await sim.spawn('r', 'echo', {}, broker0);
  const truncated = driver.request(
    ref('r'),
    'fsync-then-truncate',
    { path: '/data/t-0/00000000000000000000.log' },
    1000,
  );
  await sim.settle();
  assert.equal(disk.pendingSyncs, 1, 'the fsync is in flight');
  await sim.crashBroker(0);
  await assert.rejects(truncated, (e: unknown) => e instanceof ActorUnavailableError && e.reason === 'crashed');
  await sim.spawn('r', 'echo', {}, broker0);
  disk.completeSyncs();
  await sim.settle();
  assert.equal(
    disk.readFile('/data/t-0/00000000000000000000.log').toString(),
    'batch',
    'the dead one truncated nothing',
  );
  assert.equal(await sim.runUntil(driver.request(ref('r'), 'count', null, 100)), 1, 'the successor runs on');
  // A live actor's fsync still settles and its truncation goes through.
  const live = driver.request(ref('r'), 'fsync-then-truncate', { path: '/data/t-0/00000000000000000000.log' }, 1000);
  await sim.settle();
  disk.completeSyncs();
  assert.equal(await sim.runUntil(live), 'truncated');
  assert.equal(disk.readFile('/data/t-0/00000000000000000000.log').length, 0);
  await sim.shutdown();
});
