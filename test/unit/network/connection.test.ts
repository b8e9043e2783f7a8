/**
 * Connection closing over a real loopback socket, with a frame handler the test controls: when a
 * bad request starts the close and an EARLIER request then fails too, the connection still ends
 * (it used to wait forever for the earlier request's slot); a response chunk leased from the
 * response buffer pool goes back to it once the socket has written it, with its bytes intact.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { describe, it } from 'node:test';
import { CloseConnection } from '../../../src/network/close-connection';
import { Connection, type ConnectionLimits, type FrameHandler } from '../../../src/network/connection';
import { RateLimitedWarning } from '../../../src/network/rate-limited-warning';
import { responseBuffers } from '../../../src/network/response-buffers';
import { createLogger } from '../../../src/runtime/logger';
import { systemClock } from '../../../src/runtime/system-time';

function frame(tag: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeInt32BE(4, 0);
  out.writeInt32BE(tag, 4);
  return out;
}

/** A server whose every connection is a Connection with `handler` and `limits`; resolves with its port. */
async function serve(
  handler: FrameHandler,
  limits: ConnectionLimits = { socketRequestMaxBytes: 1 << 20, maxInFlightRequests: 8, connectionsMaxIdleMs: -1 },
): Promise<{ port: number; server: net.Server }> {
  const log = createLogger({ level: 'silent' });
  const server = net.createServer((socket) => {
    new Connection(socket, handler, limits, log, () => undefined, new RateLimitedWarning(log, systemClock));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, server };
}

describe('Connection', () => {
  it('ends when a request before the bad one fails after the close began', async () => {
    const handler: FrameHandler = (f) => {
      const tag = f.readInt32BE(0);
      if (tag === 2) return Promise.reject(new CloseConnection('bad request'));
      // Request 1 fails later, with an internal error.
      return new Promise((_, reject) => setTimeout(() => reject(new Error('boom')), 50));
    };
    const { port, server } = await serve(handler);
    const client = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    client.on('data', (d: Buffer) => received.push(d));
    const closed = new Promise<boolean>((resolve) => {
      client.on('close', () => resolve(true));
      setTimeout(() => resolve(false), 3000).unref();
    });
    client.write(Buffer.concat([frame(1), frame(2)]));
    const didClose = await closed;
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    assert.equal(didClose, true, 'the connection ended');
    assert.equal(Buffer.concat(received).length, 0, 'neither request was answered');
  });

  it('is destroyed soon after its last answer even when the client keeps its side open', async () => {
    const handler: FrameHandler = (f) =>
      f.readInt32BE(0) === 2 ? Promise.reject(new CloseConnection('bad request')) : Promise.resolve([frame(7)]);
    const { port, server } = await serve(handler, {
      socketRequestMaxBytes: 1 << 20,
      maxInFlightRequests: 8,
      connectionsMaxIdleMs: -1,
      // A flush bound far beyond the wait below: only the linger after the last answer can end it.
      closeFlushMs: 600_000,
    });
    // allowHalfOpen: the client does not end its side when the server's FIN arrives (as a raw socket would not).
    const client = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    client.on('error', () => undefined);
    const received: Buffer[] = [];
    client.on('data', (d: Buffer) => received.push(d));
    const closed = new Promise<boolean>((resolve) => {
      client.on('close', () => resolve(true));
      // Below the 5 s flush bound connections have by default (a client that never reads its answers).
      setTimeout(() => resolve(false), 4_000).unref();
    });
    // Like a producer that reads nothing, the client keeps writing after the server's FIN: once the
    // server has destroyed its socket, a write is answered with a reset and the client's socket closes.
    let writes = 0;
    client.on('end', () => {
      const timer = setInterval(() => {
        if (client.destroyed || ++writes > 80) clearInterval(timer);
        else client.write(frame(3));
      }, 50);
      timer.unref();
    });
    client.write(Buffer.concat([frame(1), frame(2)]));
    const didClose = await closed;
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    assert.equal(didClose, true, 'the server destroyed the connection: a write after it was reset');
    assert.deepEqual(Buffer.concat(received), frame(7), 'after answering the request before the bad one');
  });

  it('gives a leased response chunk back to its pool once written, with the bytes the client reads', async () => {
    const leased = responseBuffers.lease(200_000);
    for (let i = 0; i < leased.length; i++) leased[i] = i % 251;
    const expected = Buffer.from(leased);
    const header = Buffer.alloc(4);
    header.writeInt32BE(leased.length, 0);
    let answered = (): void => undefined;
    const written = new Promise<void>((resolve) => (answered = resolve));
    const handler: FrameHandler = () => {
      answered();
      return Promise.resolve([header, leased]);
    };
    const { port, server } = await serve(handler);
    const client = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let total = 0;
    const all = new Promise<void>((resolve) =>
      client.on('data', (d: Buffer) => {
        received.push(d);
        total += d.length;
        if (total >= 4 + expected.length) resolve();
      }),
    );
    client.write(frame(1));
    await written;
    await all;
    // The write callback runs once libuv has handed the bytes to the kernel, before or soon after they arrive.
    for (let i = 0; i < 100 && responseBuffers.isLeased(leased); i++) await new Promise((r) => setTimeout(r, 10));
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    assert.equal(responseBuffers.isLeased(leased), false, 'released after the write');
    assert.deepEqual(Buffer.concat(received).subarray(4), expected);
  });
});
