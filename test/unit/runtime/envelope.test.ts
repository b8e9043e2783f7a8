import { strict as assert } from 'node:assert';
import { MessageChannel } from 'node:worker_threads';
import { test } from 'node:test';
import type { Envelope } from '../../../src/runtime/actor';
import {
  decodeEnvelope,
  decodeValue,
  encodeEnvelope,
  encodeEnvelopeForTransfer,
  DIRECT_PACK_MIN_BYTES,
  encodeValue,
} from '../../../src/runtime/envelope';

test('envelope round trip keeps Buffers, null vs empty, and optional fields', () => {
  const envelope: Envelope = {
    to: 'replica/0/orders-3',
    from: 'net/0',
    type: 'produce',
    body: {
      batch: Buffer.from([1, 2, 3]),
      empty: Buffer.alloc(0),
      missing: null,
      nested: [{ key: Buffer.from('k') }],
      n: 2 ** 40,
    },
    corr: 7,
  };
  const decoded = decodeEnvelope(encodeEnvelopeForTransfer(envelope));
  assert.deepEqual(decoded, envelope);
  const body = decoded.body as { empty: Buffer; missing: null; batch: Buffer };
  assert.ok(Buffer.isBuffer(body.empty) && body.empty.length === 0);
  assert.equal(body.missing, null);
  assert.ok(Buffer.isBuffer(body.batch));

  const plain = decodeEnvelope(encodeEnvelope({ to: 'a', from: 'b', type: 't', body: undefined }));
  assert.deepEqual(plain, { to: 'a', from: 'b', type: 't', body: undefined });
  assert.ok(!('corr' in plain) && !('isReply' in plain));
  const reply = decodeEnvelope(encodeEnvelope({ to: 'a', from: 'b', type: 'reply', body: 1, corr: 3, isReply: true }));
  assert.equal(reply.isReply, true);
  assert.equal(reply.corr, 3);
});

test('binary decodes as a view over the received bytes, not a copy', () => {
  const bytes = encodeEnvelopeForTransfer({ to: 'a', from: 'b', type: 't', body: { batch: Buffer.alloc(4096, 7) } });
  const decoded = decodeEnvelope(bytes);
  const batch = (decoded.body as { batch: Buffer }).batch;
  assert.equal(batch.buffer, bytes, 'batch shares the envelope ArrayBuffer');
  assert.equal(batch.length, 4096);
  new Uint8Array(bytes)[batch.byteOffset] = 9;
  assert.equal(batch[0], 9);
});

test('transfer buffer is exact-size and detaches when posted', async () => {
  const big = Buffer.alloc(1 << 20, 1);
  const encoded = encodeEnvelope({ to: 'a', from: 'b', type: 't', body: big });
  assert.ok(encoded.buffer.byteLength > encoded.byteLength, 'packr output is a pool view (the case we guard)');
  const bytes = encodeEnvelopeForTransfer({ to: 'a', from: 'b', type: 't', body: big });
  assert.equal(bytes.byteLength, encoded.byteLength);
  const { port1, port2 } = new MessageChannel();
  const received = new Promise<ArrayBuffer>((resolve) => port2.once('message', resolve));
  port1.postMessage(bytes, [bytes]);
  assert.equal(bytes.byteLength, 0, 'transferred, not cloned');
  const arrived = await received;
  assert.equal((decodeEnvelope(arrived).body as Buffer).buffer, arrived);
  port1.close();
});

test('values that cannot cross a worker boundary throw at encode time', () => {
  assert.throws(() => encodeEnvelope({ to: 'a', from: 'b', type: 't', body: { f: () => 1 } }), TypeError);
  assert.throws(() => encodeEnvelope({ to: 'a', from: 'b', type: 't', body: Symbol('s') }));
  assert.throws(() => decodeEnvelope(encodeValue({ not: 'an envelope' })));
});

test('spawn args encode to owned bytes', () => {
  const bytes = encodeValue({ dir: '/tmp/x', id: Buffer.from([1]) });
  assert.equal(bytes.byteOffset, 0);
  assert.equal(bytes.buffer.byteLength, bytes.byteLength);
  assert.deepEqual(decodeValue(bytes), { dir: '/tmp/x', id: Buffer.from([1]) });
});

test('an envelope with a large binary is packed into a buffer of its own, exact size, and earlier pool views stay intact', async () => {
  // A small envelope decoded from the pool first: its Buffer is a view over msgpackr's pool.
  const small = decodeEnvelope(encodeEnvelope({ to: 'a', from: 'b', type: 't', body: { k: Buffer.from('keep me') } }));
  const records = Buffer.alloc(DIRECT_PACK_MIN_BYTES * 3, 7);
  records.write('first', 0);
  const envelope: Envelope = {
    to: 'net/0',
    from: 'replica/0/t-0',
    type: 'reply',
    body: { partitions: [{ index: 0, records, highWatermark: 12 }] },
    corr: 3,
    isReply: true,
  };
  const buf = encodeEnvelopeForTransfer(envelope);
  const exact = encodeEnvelope(envelope);
  assert.equal(buf.byteLength, exact.byteLength, 'shrunk to the packed length');
  assert.ok(Buffer.from(buf).equals(exact), 'the same bytes as a pool encoding');
  // Transfer it across a port, as the runtime does, and decode on the other side.
  const { port1, port2 } = new MessageChannel();
  const received = new Promise<ArrayBuffer>((resolve) =>
    port2.once('message', (m: { buf: ArrayBuffer }) => resolve(m.buf)),
  );
  port1.postMessage({ buf }, [buf]);
  const got = decodeEnvelope(await received);
  port1.close();
  assert.deepEqual(got, envelope);
  assert.equal(buf.byteLength, 0, 'transferred, not cloned');
  // Later pool encodings did not overwrite the earlier view.
  for (let i = 0; i < 100; i++)
    encodeEnvelopeForTransfer({ to: 'x', from: 'y', type: 'z', body: { i, b: Buffer.alloc(100, i) } });
  assert.equal((small.body as { k: Buffer }).k.toString(), 'keep me');
});

test('a large-binary envelope whose other fields overflow the reserved room is still encoded whole', () => {
  const envelope: Envelope = {
    to: 'net/0',
    from: 'r',
    type: 'reply',
    body: {
      records: Buffer.alloc(DIRECT_PACK_MIN_BYTES, 1),
      names: Array.from({ length: 20_000 }, (_, i) => `name-${i}`),
    },
  };
  const buf = encodeEnvelopeForTransfer(envelope);
  assert.deepEqual(decodeEnvelope(buf), envelope);
  assert.ok(Buffer.from(buf).equals(encodeEnvelope(envelope)));
  // The pool still works after msgpackr grew a buffer of its own.
  const next: Envelope = { to: 'a', from: 'b', type: 'c', body: { v: Buffer.from([1, 2]) } };
  assert.deepEqual(decodeEnvelope(encodeEnvelopeForTransfer(next)), next);
});
