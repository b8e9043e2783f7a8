import { strict as assert } from 'node:assert';
import { MessageChannel } from 'node:worker_threads';
import { test } from 'node:test';
import type { Envelope } from '../../../src/runtime/actor';
import {
  decodeEnvelope,
  decodeValue,
  encodeEnvelope,
  encodeEnvelopeForTransfer,
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
