/**
 * Hostile and careless peers against a real Skiff process, over raw sockets (node:net), each
 * followed by a normal kcat produce + consume session on the same broker to show it still serves:
 * frames over socket.request.max.bytes, negative sizes, garbage (an HTTP request, random bytes
 * behind a plausible size, a known API with a garbage body), a truncated frame then close, an
 * unknown API key, a Produce whose batch CRC is corrupt (CORRUPT_MESSAGE, connection kept), and a
 * slow reader that sends hundreds of Fetch requests and never reads (the broker must not buffer
 * every response). Separate brokers check max.connections=5 (the 6th connection is closed; after
 * closing some, clients work again) and connections.max.idle.ms=1000 (an idle connection is
 * closed within a few seconds, a busy one is not).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ApiKey, encodeRequest } from '../../src/protocol';
import { buildRecordBatch } from '../../src/protocol/record-batch/builder';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { WireClient } from '../helpers/wire-client';
import { kcatConsume, kcatProduce, withBrokerLog } from './clients';
import { assertSameRecords, record } from './record-file';
import { fetchRequestBody } from '../helpers/fetch-request';

const TIMEOUT_MS = 60_000;
const REQUEST_MAX_BYTES = 1_048_576;
const CORRUPT_MESSAGE = 2;

let sessions = 0;
/** A normal kcat session: produce three records to a fresh (auto-created) topic and read them back. */
async function kcatSession(broker: BrokerProcess, what: string): Promise<void> {
  const bootstrap = `127.0.0.1:${broker.port}`;
  const topic = `session-${++sessions}`;
  try {
    await kcatProduce({
      bootstrap,
      topic,
      input: Buffer.from(`a:${what}\nb:two\nc:three\n`),
      keyDelimiter: ':',
      timeoutMs: 20_000,
    });
    const consumed = await kcatConsume({ bootstrap, topic, partition: 0, timeoutMs: 20_000 });
    assertSameRecords(
      consumed,
      [record('a', what), record('b', 'two'), record('c', 'three')],
      `kcat session after ${what}`,
    );
  } catch (e) {
    (e as Error).message = `after ${what}, a normal kcat session failed: ${(e as Error).message}`;
    throw e;
  }
  assert.equal(broker.proc.exitCode, null, `the broker exited after ${what}`);
}

/** Opens a raw socket, writes `bytes`, and resolves true if the broker closes it within `timeoutMs`. */
async function closedAfter(port: number, bytes: Buffer, timeoutMs = 5_000): Promise<boolean> {
  const client = await WireClient.connect(port);
  client.sendRaw(bytes);
  const closed = await client.waitClosed(timeoutMs);
  client.close();
  return closed;
}

function sizePrefix(size: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(size, 0);
  return b;
}

/** Resident set size of a process in bytes (Linux /proc). */
function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? 0 : Number(m[1]) * 1024;
}

function produceBody(topic: string, records: Buffer) {
  return {
    transactionalId: null,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  };
}

function fetchBody(topic: string, fetchOffset: number) {
  return fetchRequestBody({ topic, fetchOffset });
}

describe('hostile input on raw sockets: the broker closes the offender and keeps serving', () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await startBrokerProcess({ overrides: { 'socket.request.max.bytes': String(REQUEST_MAX_BYTES) } });
  });
  after(async () => {
    await broker?.stop();
  });

  test('a frame over socket.request.max.bytes is closed before its body arrives', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      for (const size of [REQUEST_MAX_BYTES + 1, 2 * REQUEST_MAX_BYTES, 0x7fffffff]) {
        assert.equal(
          await closedAfter(broker.port, Buffer.concat([sizePrefix(size), Buffer.alloc(64, 0x11)])),
          true,
          `size ${size} closes the connection`,
        );
      }
      await kcatSession(broker, 'oversized frames');
    }),
  );

  test('a negative frame size closes the connection', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      for (const size of [-1, -5, -0x80000000]) {
        assert.equal(await closedAfter(broker.port, sizePrefix(size)), true, `size ${size} closes the connection`);
      }
      await kcatSession(broker, 'negative sizes');
    }),
  );

  test(
    'garbage bytes close the connection: an HTTP request, random bytes behind a plausible size, a Metadata header with a garbage body',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        // "GET " as a size is 1.2 GB: over the limit.
        assert.equal(
          await closedAfter(broker.port, Buffer.from('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')),
          true,
          'an HTTP request',
        );
        // A deterministic pseudo-random body behind a size that fits.
        const noise = Buffer.alloc(1000);
        let x = 0x2545f491;
        for (let i = 0; i < noise.length; i++) {
          x ^= x << 13;
          x ^= x >>> 17;
          x ^= x << 5;
          noise[i] = x & 0xff;
        }
        noise.writeInt16BE(0x7abc, 0); // API key 31420: no such API
        assert.equal(
          await closedAfter(broker.port, Buffer.concat([sizePrefix(noise.length), noise])),
          true,
          'random bytes',
        );
        // Metadata v9 header (flexible), then a body that claims a huge compact array.
        const header = Buffer.alloc(10);
        header.writeInt16BE(ApiKey.Metadata, 0);
        header.writeInt16BE(9, 2);
        header.writeInt32BE(77, 4);
        header.writeInt16BE(-1, 8); // null client id
        const body = Buffer.from([0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xde, 0xad, 0xbe, 0xef]);
        assert.equal(
          await closedAfter(broker.port, Buffer.concat([sizePrefix(header.length + body.length), header, body])),
          true,
          'a garbage Metadata body',
        );
        await kcatSession(broker, 'garbage bytes');
      }),
  );

  test('a truncated frame followed by a close leaves the broker serving', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      for (const cut of [2, 4, 20]) {
        const frame = encodeRequest(ApiKey.Metadata, 4, 1, 'truncated', {
          topics: null,
          allowAutoTopicCreation: false,
        });
        await new Promise<void>((resolve, reject) => {
          const socket = net.connect({ host: '127.0.0.1', port: broker.port }, () =>
            socket.end(frame.subarray(0, Math.min(cut, frame.length - 1))),
          );
          socket.on('error', reject);
          socket.on('close', () => resolve());
          socket.resume();
        });
      }
      await kcatSession(broker, 'truncated frames');
    }),
  );

  test('an unknown API key closes only that connection', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      const bystander = await WireClient.connect(broker.port);
      try {
        const frame = Buffer.alloc(14);
        frame.writeInt32BE(10, 0);
        frame.writeInt16BE(1234, 4); // API key 1234
        frame.writeInt16BE(0, 6);
        frame.writeInt32BE(5, 8);
        frame.writeInt16BE(-1, 12);
        assert.equal(await closedAfter(broker.port, frame), true, 'API key 1234 closes the connection');
        const res = await bystander.request(ApiKey.ApiVersions, 2, {});
        assert.equal(res.body.errorCode, 0, 'another connection still gets answers');
      } finally {
        bystander.close();
      }
      await kcatSession(broker, 'an unknown API key');
    }),
  );

  test(
    'a Produce with a corrupt batch CRC gets CORRUPT_MESSAGE, stores nothing, and the connection stays usable',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'hostile-crc';
        const client = await WireClient.connect(broker.port);
        try {
          const created = await client.request(ApiKey.CreateTopics, 4, {
            topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
            timeoutMs: 5000,
            validateOnly: false,
          });
          assert.equal(created.body.topics[0].errorCode, 0);
          const batch = buildRecordBatch([
            { key: Buffer.from('k'), value: Buffer.from('corrupted value'), headers: [], timestamp: Date.now() },
          ]);
          for (const at of [batch.length - 3, 21, 40]) {
            // a value byte, the attributes, a header field under the CRC
            const corrupt = Buffer.from(batch);
            corrupt[at]! ^= 0x40;
            const res = await client.request(ApiKey.Produce, 7, produceBody(topic, corrupt));
            assert.equal(
              res.body.responses[0].partitionResponses[0].errorCode,
              CORRUPT_MESSAGE,
              `byte ${at} flipped: error code`,
            );
          }
          const ok = await client.request(ApiKey.Produce, 7, produceBody(topic, batch));
          assert.equal(
            ok.body.responses[0].partitionResponses[0].errorCode,
            0,
            'the intact batch on the same connection',
          );
          assert.equal(
            ok.body.responses[0].partitionResponses[0].baseOffset,
            0,
            'nothing was stored for the corrupt batches',
          );
        } finally {
          client.close();
        }
        const consumed = await kcatConsume({
          bootstrap: `127.0.0.1:${broker.port}`,
          topic,
          partition: 0,
          timeoutMs: 20_000,
        });
        assertSameRecords(consumed, [record('k', 'corrupted value')], 'kcat reads only the intact batch');
        await kcatSession(broker, 'corrupt CRCs');
      }),
  );

  test(
    'a slow reader sending 400 Fetch requests (1 MB each) without reading does not make the broker buffer them all',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'hostile-slow-reader';
        const bootstrap = `127.0.0.1:${broker.port}`;
        // ~1 MB of data, so every Fetch answer is ~1 MB.
        const line = 'x'.repeat(1000);
        await kcatProduce({
          bootstrap,
          topic,
          input: Buffer.from(Array.from({ length: 1100 }, (_, i) => `${i}:${line}\n`).join('')),
          keyDelimiter: ':',
          timeoutMs: 30_000,
        });
        const pid = broker.proc.pid!;
        const rssBefore = rssBytes(pid);

        const slow = net.connect({ host: '127.0.0.1', port: broker.port });
        slow.on('error', () => undefined);
        await new Promise<void>((resolve) => slow.once('connect', () => resolve()));
        slow.pause(); // never read
        const requests = Buffer.concat(
          Array.from({ length: 400 }, (_, i) =>
            encodeRequest(ApiKey.Fetch, 11, i + 1, 'slow-reader', fetchBody(topic, 0)),
          ),
        );
        slow.write(requests);
        let peak = rssBefore;
        for (let i = 0; i < 12; i++) {
          await new Promise((r) => setTimeout(r, 250));
          peak = Math.max(peak, rssBytes(pid));
        }
        // While the slow reader sits there, other clients are served.
        await kcatSession(broker, 'a slow reader (still connected)');
        peak = Math.max(peak, rssBytes(pid));
        slow.destroy();
        const growthMb = Math.round((peak - rssBefore) / (1 << 20));
        assert.ok(
          growthMb < 200,
          `broker RSS grew by ${growthMb} MB (from ${Math.round(rssBefore / (1 << 20))} MB) while a client left 400 × 1 MB Fetch responses unread`,
        );
        await kcatSession(broker, 'a slow reader (gone)');
      }),
  );
});

describe('max.connections=5: the 6th simultaneous connection is closed; after closing some, clients work again', () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await startBrokerProcess({ overrides: { 'max.connections': '5' } });
  });
  after(async () => {
    await broker?.stop();
  });

  test(
    'five connections are served, the sixth is closed, and kcat works once two are closed',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const held: WireClient[] = [];
        try {
          for (let i = 0; i < 5; i++) {
            const c = await WireClient.connect(broker.port);
            held.push(c);
            const res = await c.request(ApiKey.ApiVersions, 2, {});
            assert.equal(res.body.errorCode, 0, `connection ${i + 1} is served`);
          }
          const sixth = await WireClient.connect(broker.port);
          sixth.send(ApiKey.ApiVersions, 2, {});
          const answered = await sixth.readFrame(5_000).catch(() => 'timeout' as const);
          assert.equal(answered, null, 'the 6th connection is closed without an answer');
          sixth.close();
          for (const [i, c] of held.entries()) {
            const res = await c.request(ApiKey.ApiVersions, 2, {});
            assert.equal(res.body.errorCode, 0, `connection ${i + 1} is still served`);
          }
          held.pop()!.close();
          held.pop()!.close();
          await new Promise((r) => setTimeout(r, 200)); // let the broker see the closes
          await kcatSession(broker, 'max.connections (3 of 5 held)');
        } finally {
          for (const c of held) c.close();
        }
      }),
  );
});

describe('connections.max.idle.ms=1000: idle connections are closed, busy ones are not', () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await startBrokerProcess({ overrides: { 'connections.max.idle.ms': '1000' } });
  });
  after(async () => {
    await broker?.stop();
  });

  test(
    'an idle connection is closed within a few seconds; one sending a request every 300 ms stays open',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const idle = await WireClient.connect(broker.port);
        const busy = await WireClient.connect(broker.port);
        try {
          const started = Date.now();
          assert.equal((await idle.request(ApiKey.ApiVersions, 2, {})).body.errorCode, 0);
          const idleSince = Date.now();
          let closedAt = 0;
          while (Date.now() - started < 4_000) {
            assert.equal(
              (await busy.request(ApiKey.ApiVersions, 2, {})).body.errorCode,
              0,
              `busy connection answered at +${Date.now() - started} ms`,
            );
            if (closedAt === 0 && idle.closed) closedAt = Date.now();
            await new Promise((r) => setTimeout(r, 300));
          }
          if (closedAt === 0 && (await idle.waitClosed(2_000))) closedAt = Date.now();
          assert.ok(closedAt > 0, 'the idle connection was not closed within 6 s of connections.max.idle.ms=1000');
          const idleMs = closedAt - idleSince;
          assert.ok(idleMs >= 900, `the idle connection was closed after only ${idleMs} ms`);
          assert.equal(busy.closed, false, 'the busy connection was closed');
        } finally {
          idle.close();
          busy.close();
        }
        await kcatSession(broker, 'idle connections');
      }),
  );
});
