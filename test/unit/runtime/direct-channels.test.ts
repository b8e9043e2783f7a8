/**
 * Direct MessageChannels between workers (thread-runtime.ts, module comment): envelopes between actors
 * of two workers stop passing through the main thread once the hub has handed out the route, without
 * reordering one pair's envelopes across the switch, and without losing track of actors that stop,
 * restart or die with their broker.
 */
import { strict as assert } from 'node:assert';
import { after, test } from 'node:test';
import { ActorUnavailableError } from '../../../src/runtime/actor';
import type { Endpoint } from '../../../src/runtime/runtime';
import { createLogger, levelFromEnv } from '../../../src/runtime/logger';
import { ThreadRuntime } from '../../../src/runtime/thread-runtime';
import { registerTestKinds } from './fixtures/register';
import { ref } from './fixtures/test-actors';

registerTestKinds();

const logger = createLogger({ level: levelFromEnv('silent'), fd: 2 });
const runtimes: ThreadRuntime[] = [];

function makeRuntime(
  brokers: Array<{ brokerId: number; numIoThreads: number }>,
  directChannels?: boolean,
): ThreadRuntime {
  const runtime = new ThreadRuntime({
    brokers,
    logger,
    workerLogFd: 2,
    ...(directChannels === undefined ? {} : { directChannels }),
  });
  runtimes.push(runtime);
  return runtime;
}

after(async () => {
  await Promise.all(runtimes.map((r) => r.shutdown()));
});

const broker0 = { pool: 'broker', brokerId: 0 } as const;
const broker1 = { pool: 'broker', brokerId: 1 } as const;

/** Polls `sink` until it has recorded `size` items (or fails after 20 s). */
async function waitForSize(net: Endpoint, sink: string, size: number): Promise<void> {
  for (let tries = 0; tries < 2000; tries++) {
    if ((await net.request(ref(sink), 'size', null, 5000)) >= size) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`${sink} never reached ${size} items`);
}

/** The items of `producer` among `seen`, as numbers. */
function itemsOf(seen: string[], producer: string): number[] {
  return seen.filter((s) => s.startsWith(`${producer}:`)).map((s) => Number(s.slice(producer.length + 1)));
}

/**
 * Polls echo actor `id` until it has received `others` messages besides these polls (each `count`
 * counts itself), so a request sent to it is known to have arrived.
 */
async function waitForReceived(net: Endpoint, id: string, others: number): Promise<void> {
  for (let polls = 1; polls < 2000; polls++) {
    if ((await net.request(ref(id), 'count', null, 5000)) - polls >= others) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.fail(`${id} never received ${others} messages`);
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

test('a burst across the switch from hub to direct channel keeps every pair in order', async () => {
  const runtime = makeRuntime([
    { brokerId: 0, numIoThreads: 3 },
    { brokerId: 1, numIoThreads: 1 },
  ]);
  for (const p of ['p1', 'p2', 'p3']) await runtime.spawn(p, 'producer', null, broker0);
  await runtime.spawn('sink', 'sink', null, broker1);
  assert.equal(new Set(['p1', 'p2', 'p3'].map((p) => runtime.workerOf(p)?.threadId)).size, 3);
  const net = runtime.endpoint('net');

  // Chunks with a timer between them: the first items go through the hub, the rest over the channel.
  const n = 2000;
  const done = ['p1', 'p2', 'p3'].map((p) =>
    net.request(ref(p), 'go', { to: 'sink', n, chunk: 250, pauseMs: 0 }, 60_000),
  );
  for (let i = 0; i < 300; i++) net.send(ref('sink'), 'item', { i });
  assert.deepEqual(await Promise.all(done), ['done', 'done', 'done']);
  await waitForSize(net, 'sink', 3 * n + 300);
  const seen: string[] = await net.request(ref('sink'), 'dump', null, 5000);
  for (const p of ['p1', 'p2', 'p3']) assert.deepEqual(itemsOf(seen, p), range(n), `${p}'s items in order`);
  assert.deepEqual(itemsOf(seen, 'net'), range(300), 'the endpoint’s items in order');
  const first = runtime.hubStats();
  assert.equal(first.forwarded, 0, 'nothing between two workers is forwarded by the hub');
  assert.equal(first.channels, 3, 'one channel per producer worker and the sink’s');
  assert.ok(first.rerouted >= 3 && first.rerouted < 3 * n, `rerouted ${first.rerouted}: the switch came mid-burst`);

  // Once switched, a burst in one turn goes over the channel only.
  await net.request(ref('p1'), 'go', { to: 'sink', n: 1000 }, 60_000);
  await waitForSize(net, 'sink', 3 * n + 300 + 1000);
  const all: string[] = await net.request(ref('sink'), 'dump', null, 5000);
  assert.deepEqual(itemsOf(all, 'p1'), [...range(n), ...range(1000)]);
  assert.deepEqual(runtime.hubStats(), first, 'the hub saw none of them');
  net.close();
});

test('with directChannels off the hub forwards every envelope, in order', async () => {
  const runtime = makeRuntime(
    [
      { brokerId: 0, numIoThreads: 1 },
      { brokerId: 1, numIoThreads: 1 },
    ],
    false,
  );
  await runtime.spawn('p', 'producer', null, broker0);
  await runtime.spawn('sink', 'sink', null, broker1);
  const net = runtime.endpoint('net');
  await net.request(ref('p'), 'go', { to: 'sink', n: 500, chunk: 50 }, 60_000);
  await waitForSize(net, 'sink', 500);
  assert.deepEqual(itemsOf(await net.request(ref('sink'), 'dump', null, 5000), 'p'), range(500));
  assert.deepEqual(runtime.hubStats(), { forwarded: 500, rerouted: 0, channels: 0 });
  net.close();
});

test('the target’s worker restarts mid-stream: pending requests fail, the stream resumes in order on a new channel', async () => {
  const runtime = makeRuntime([
    { brokerId: 0, numIoThreads: 1 },
    { brokerId: 1, numIoThreads: 1 },
  ]);
  await runtime.spawn('p', 'producer', null, broker0);
  await runtime.spawn('fw', 'echo', {}, broker0);
  await runtime.spawn('sink', 'sink', null, broker1);
  await runtime.spawn('e1', 'echo', {}, broker1);
  const net = runtime.endpoint('net');
  const forward = (
    to: string,
    type: string,
    timeoutMs = 5000,
  ): Promise<{ ok?: unknown; error?: string; message?: string }> =>
    net.request(ref('fw'), 'forward', { to, type, body: 1, timeoutMs }, 60_000);
  assert.deepEqual(await forward('e1', 'echo'), { ok: 1 });
  const pending = forward('e1', 'ignore', 60_000);
  await waitForReceived(net, 'e1', 2); // the echo and the ignore: the request has reached e1

  const n = 3000;
  const restarted = new Promise<{ actorIds: string[] }>((resolve) => runtime.onWorkerRestart(resolve));
  const streamed = net.request(ref('p'), 'go', { to: 'sink', n, chunk: 10, pauseMs: 1 }, 60_000);
  await waitForSize(net, 'sink', 100);
  const channelsBefore = runtime.hubStats().channels;
  runtime.crashWorkerOf('sink', 'injected mid-stream');
  assert.deepEqual(await pending, { error: 'ActorUnavailableError', message: 'request ignore to e1 failed: crashed' });
  assert.deepEqual((await restarted).actorIds.sort(), ['e1', 'sink']);
  assert.equal(await streamed, 'done');

  // The new sink saw a gap-free tail of the stream, in order, up to the last item.
  let items: number[] = [];
  for (let tries = 0; tries < 2000 && items[items.length - 1] !== n - 1; tries++) {
    items = itemsOf(await net.request(ref('sink'), 'dump', null, 5000), 'p');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(items.length > 0 && items.length < n, `${items.length} items after the restart`);
  assert.deepEqual(
    items,
    range(items.length).map((i) => i + (n - items.length)),
    'in order, no gap, no duplicate',
  );
  assert.deepEqual(await forward('e1', 'echo'), { ok: 1 }, 'requests reach the restarted worker');
  assert.equal(runtime.hubStats().channels, channelsBefore + 1, 'over a new channel');
  assert.equal(runtime.hubStats().forwarded, 0);
  net.close();
});

test('crashBroker of the peer: requests over the channel fail with crashed, then unknown-actor; a respawn gets a new channel', async () => {
  const runtime = makeRuntime([
    { brokerId: 0, numIoThreads: 1 },
    { brokerId: 1, numIoThreads: 1 },
  ]);
  await runtime.spawn('a', 'echo', {}, broker0);
  await runtime.spawn('x', 'echo', {}, broker1);
  const net = runtime.endpoint('net');
  const forward = (from: string, to: string, type: string, timeoutMs = 5000): Promise<unknown> =>
    net.request(ref(from), 'forward', { to, type, body: 2, timeoutMs }, 60_000);
  assert.deepEqual(await forward('a', 'x', 'echo'), { ok: 2 });
  assert.deepEqual(await forward('x', 'a', 'echo'), { ok: 2 });
  assert.deepEqual(await forward('a', 'x', 'echo'), { ok: 2 });
  const stats = runtime.hubStats();
  assert.equal(stats.channels, 1);
  assert.deepEqual(await forward('a', 'x', 'echo'), { ok: 2 });
  assert.deepEqual(runtime.hubStats(), stats, 'warm: both directions go over the channel');

  const pending = forward('a', 'x', 'ignore', 60_000);
  // x has had 3 echoes from a, net's forward, and now the ignore: the request has reached it.
  await waitForReceived(net, 'x', 5);
  assert.deepEqual(await runtime.crashBroker(1), ['x']);
  assert.deepEqual(await pending, { error: 'ActorUnavailableError', message: 'request ignore to x failed: crashed' });
  assert.deepEqual(await forward('a', 'x', 'echo'), {
    error: 'ActorUnavailableError',
    message: 'request echo to x failed: unknown-actor',
  });
  await assert.rejects(net.request(ref('x'), 'echo', null, 5000), ActorUnavailableError);

  await runtime.spawn('x', 'echo', { tag: 'again' }, broker1);
  assert.deepEqual(await forward('a', 'x', 'whoami'), {
    ok: { id: 'x', threadId: runtime.workerOf('x')?.threadId, tag: 'again', received: 1 },
  });
  assert.equal(runtime.hubStats().channels, 2, 'a new channel to the new worker');
  net.close();
});

test('an actor that stops and is spawned again on another worker is reached there, not at its old route', async () => {
  const runtime = makeRuntime([{ brokerId: 0, numIoThreads: 3 }]);
  await runtime.spawn('a', 'echo', {}, broker0);
  await runtime.spawn('b', 'echo', { tag: 'first' }, broker0);
  const net = runtime.endpoint('net');
  const whoamiVia = async (): Promise<{ tag: string; threadId: number }> =>
    (
      (await net.request(ref('a'), 'forward', { to: 'b', type: 'whoami', body: null, timeoutMs: 5000 }, 10_000)) as {
        ok: { tag: string; threadId: number };
      }
    ).ok;
  assert.equal((await whoamiVia()).tag, 'first');
  assert.equal((await whoamiVia()).tag, 'first');
  const oldThread = runtime.workerOf('b')?.threadId;
  await runtime.spawn('filler', 'echo', {}, broker0); // the third worker
  await runtime.stopActor('b');
  await runtime.stopActor('filler');
  await runtime.spawn('c', 'echo', {}, broker0); // b's old worker, the first idle one
  await runtime.spawn('b', 'echo', { tag: 'second' }, broker0); // the third worker
  assert.equal(runtime.workerOf('c')?.threadId, oldThread);
  assert.notEqual(runtime.workerOf('b')?.threadId, oldThread, 'b moved to another worker');
  assert.notEqual(runtime.workerOf('b')?.threadId, runtime.workerOf('a')?.threadId);
  const moved = await whoamiVia();
  assert.equal(moved.tag, 'second');
  assert.equal(moved.threadId, runtime.workerOf('b')?.threadId);
  net.close();
});

test('an envelope over a channel waits for the hub’s earlier messages: a fresh actor is there when it arrives', async () => {
  const runtime = makeRuntime([
    { brokerId: 0, numIoThreads: 1 },
    { brokerId: 1, numIoThreads: 1 },
  ]);
  await runtime.spawn('a', 'echo', {}, broker0);
  await runtime.spawn('busy', 'echo', {}, broker1);
  const net = runtime.endpoint('net');
  const forward = (to: string): Promise<unknown> =>
    net.request(ref('a'), 'forward', { to, type: 'echo', body: to, timeoutMs: 5000 }, 10_000);
  assert.deepEqual(await forward('busy'), { ok: 'busy' }); // a has a channel to busy's worker
  for (let round = 0; round < 5; round++) {
    // busy's worker takes nothing while it spins; meanwhile the hub posts it a spawn, and a is handed
    // the route to the new actor and sends over the channel. Both wait in that worker's queues.
    const spun = net.request(ref('busy'), 'spin', { ms: 100 }, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const id = `fresh-${round}`;
    const spawned = runtime.spawn(id, 'echo', {}, broker1);
    assert.deepEqual(await forward(id), { ok: id });
    await spawned;
    assert.equal(await spun, 'spun');
  }
  net.close();
});
