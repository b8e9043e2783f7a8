/**
 * The worker side of direct channels, driven by hand: a WorkerHost on this thread, a MessageChannel
 * playing the hub, another playing the peer worker, so the order in which the two arrive is the
 * test's to choose (on real threads Node happens to take the hub's port first).
 */
import { strict as assert } from 'node:assert';
import { MessageChannel } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { afterEach, test } from 'node:test';
import type { Envelope } from '../../../src/runtime/actor';
import { decodeEnvelope, encodeEnvelopeForTransfer, encodeValue } from '../../../src/runtime/envelope';
import { resolveActorKind } from '../../../src/runtime/registry';
import { WorkerHost } from '../../../src/runtime/worker-host';
import type { DirectMessage, FromWorker, ToWorker } from '../../../src/runtime/worker-protocol';
import { registerTestKinds } from './fixtures/register';

registerTestKinds();

/** Ports the tests opened, closed after each test even when it fails (an open port keeps the process alive). */
const openPorts: MessagePort[] = [];
afterEach(() => {
  for (const port of openPorts.splice(0)) port.close();
});

/** A WorkerHost with the test holding the hub's end of its port and collecting what it posts. */
function hostWithHub(): { hub: MessagePort; fromHost: FromWorker[]; next(k: FromWorker['k']): Promise<FromWorker> } {
  const { port1: hub, port2: hostPort } = new MessageChannel();
  openPorts.push(hub, hostPort);
  new WorkerHost(hostPort, { name: 'test#0', corrBase: 1 << 20, logLevel: 'silent', logFd: 2 }).listen();
  const fromHost: FromWorker[] = [];
  const waiters: Array<{ k: FromWorker['k']; resolve(m: FromWorker): void }> = [];
  // A batch (post-batcher.ts) is taken as its messages one by one, as the hub does.
  const take = (message: FromWorker): void => {
    if (message.k === 'batch') {
      for (const inner of message.messages) take(inner);
      return;
    }
    fromHost.push(message);
    const i = waiters.findIndex((w) => w.k === message.k);
    if (i >= 0) waiters.splice(i, 1)[0]?.resolve(message);
  };
  hub.on('message', take);
  return {
    hub,
    fromHost,
    next: (k) => new Promise((resolve) => waiters.push({ k, resolve })),
  };
}

function envelopeBytes(envelope: Envelope): ArrayBuffer {
  return encodeEnvelopeForTransfer(envelope);
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test('a direct envelope waits until the host has taken as many hub messages as its barrier', async () => {
  const { hub, next } = hostWithHub();
  const { port1: peer, port2: hostEnd } = new MessageChannel();
  openPorts.push(peer);
  const post = (message: ToWorker, transfer: Array<ArrayBuffer | MessagePort> = []): void =>
    hub.postMessage(message, transfer);
  post({ k: 'link', peer: 7, port: hostEnd }, [hostEnd]); // hub message 1

  // The peer was handed the route to `sink` when the hub had posted 3 messages here: the link, the
  // spawn of sink, and p's first item. Its envelope arrives before the last two.
  const direct: DirectMessage = { b: 3, buf: envelopeBytes({ to: 'sink', from: 'p', type: 'item', body: { i: 1 } }) };
  peer.postMessage(direct, [direct.buf]);
  await pause(50);
  const spawned = next('spawned');
  post({ k: 'spawn', reqId: 1, id: 'sink', kind: 'sink', ref: resolveActorKind('sink'), args: encodeValue(null) });
  await spawned;
  const first = envelopeBytes({ to: 'sink', from: 'p', type: 'item', body: { i: 0 } });
  post({ k: 'env', to: 'sink', buf: first }, [first]); // hub message 3: now the direct one goes
  // The two ports are not ordered with each other: on a loaded machine the direct envelope may reach
  // the host after the next hub message, so the sink is asked (bounded) until it holds both items.
  let items: unknown = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    const dump = envelopeBytes({ to: 'sink', from: 'net', type: 'dump', body: null, corr: attempt + 1 });
    const reply = next('env');
    post({ k: 'env', to: 'sink', buf: dump }, [dump]);
    items = decodeEnvelope(((await reply) as Extract<FromWorker, { k: 'env' }>).buf).body;
    if ((items as unknown[]).length >= 2) break;
    await pause(20);
  }
  assert.deepEqual(items, ['p:0', 'p:1'], 'the hub’s item first, then the channel’s');
});

test('a burst for a routed target waits behind what went through the hub, then goes over the channel', async () => {
  const { hub, fromHost, next } = hostWithHub();
  const { port1: peer, port2: hostEnd } = new MessageChannel();
  openPorts.push(peer);
  const overChannel: string[] = [];
  peer.on('message', (m: DirectMessage) => {
    const envelope = decodeEnvelope(m.buf);
    overChannel.push(`${envelope.type}:${(envelope.body as { i?: number } | null)?.i ?? '-'}`);
  });
  hub.postMessage({ k: 'link', peer: 9, port: hostEnd } satisfies ToWorker, [hostEnd]);
  const spawned = next('spawned');
  hub.postMessage({
    k: 'spawn',
    reqId: 1,
    id: 'p',
    kind: 'producer',
    ref: resolveActorKind('producer'),
    args: encodeValue(null),
  } satisfies ToWorker);
  await spawned;
  // p sends 3 items to `remote` (not on this worker): all to the hub, which has not routed them yet.
  const go = envelopeBytes({ to: 'p', from: 'net', type: 'go', body: { to: 'remote', n: 3 } });
  hub.postMessage({ k: 'env', to: 'p', buf: go } satisfies ToWorker, [go]);
  await pause(50);
  const toHub = fromHost.filter((m): m is Extract<FromWorker, { k: 'env' }> => m.k === 'env' && m.to === 'remote');
  assert.equal(toHub.length, 3);
  // The hub hands the first back with the route; the other two are still "in the hub".
  const [m0, m1, m2] = toHub as [
    Extract<FromWorker, { k: 'env' }>,
    Extract<FromWorker, { k: 'env' }>,
    Extract<FromWorker, { k: 'env' }>,
  ];
  const upToFirst = fromHost.indexOf(m0) + 1;
  hub.postMessage(
    { k: 'reroute', to: 'remote', buf: m0.buf, peer: 9, barrier: 1, upTo: upToFirst } satisfies ToWorker,
    [m0.buf],
  );
  // p sends 3 more: they must not go over the channel ahead of items 1 and 2, nor to the hub.
  const again = envelopeBytes({ to: 'p', from: 'net', type: 'go', body: { to: 'remote', n: 3 } });
  hub.postMessage({ k: 'env', to: 'p', buf: again } satisfies ToWorker, [again]);
  await pause(50);
  assert.deepEqual(overChannel, ['item:0']);
  assert.equal(fromHost.filter((m) => m.k === 'env' && m.to === 'remote').length, 3, 'none more to the hub');
  hub.postMessage(
    { k: 'reroute', to: 'remote', buf: m1.buf, peer: 9, barrier: 1, upTo: upToFirst + 1 } satisfies ToWorker,
    [m1.buf],
  );
  hub.postMessage(
    { k: 'reroute', to: 'remote', buf: m2.buf, peer: 9, barrier: 1, upTo: upToFirst + 2 } satisfies ToWorker,
    [m2.buf],
  );
  await pause(50);
  assert.deepEqual(overChannel, ['item:0', 'item:1', 'item:2', 'item:0', 'item:1', 'item:2']);

  // The target goes away: the route is dropped and later envelopes go to the hub again.
  hub.postMessage({ k: 'unroute', ids: ['remote'] } satisfies ToWorker);
  const later = envelopeBytes({ to: 'p', from: 'net', type: 'go', body: { to: 'remote', n: 1 } });
  hub.postMessage({ k: 'env', to: 'p', buf: later } satisfies ToWorker, [later]);
  await pause(50);
  assert.equal(overChannel.length, 6);
  assert.equal(fromHost.filter((m) => m.k === 'env' && m.to === 'remote').length, 4);
});
