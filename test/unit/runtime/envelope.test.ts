import { strict as assert } from 'node:assert';
import { MessageChannel } from 'node:worker_threads';
import { test } from 'node:test';
import { Packr, Unpackr } from 'msgpackr';
import type { Envelope } from '../../../src/runtime/actor';
import {
  allocateWithHeadroom,
  ATTACHMENT_MIN_BYTES,
  decodeEnvelope,
  decodeValue,
  encodeEnvelope,
  encodeEnvelopeForTransfer,
  encodeValue,
  whileLent,
  TRANSFER_HEADROOM,
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
  const small = Buffer.alloc(ATTACHMENT_MIN_BYTES - 1, 1);
  const encoded = encodeEnvelope({ to: 'a', from: 'b', type: 't', body: small });
  assert.ok(encoded.buffer.byteLength > encoded.byteLength, 'packr output is a pool view (the case we guard)');
  const bytes = encodeEnvelopeForTransfer({ to: 'a', from: 'b', type: 't', body: small });
  assert.equal(bytes.byteLength, encoded.byteLength);
  const { port1, port2 } = new MessageChannel();
  const received = new Promise<ArrayBuffer>((resolve) => port2.once('message', resolve));
  port1.postMessage(bytes, [bytes]);
  assert.equal(bytes.byteLength, 0, 'transferred, not cloned');
  const arrived = await received;
  assert.equal((decodeEnvelope(arrived).body as Buffer).buffer, arrived);
  assert.deepEqual(decodeEnvelope(arrived).body, small);
  port1.close();
});

test('large binaries travel as attachments: one exact-size buffer, views on decode, order and bytes kept', async () => {
  const first = Buffer.alloc(1 << 20, 1);
  const second = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i & 0xff));
  const view = Buffer.alloc(ATTACHMENT_MIN_BYTES + 10, 5).subarray(3, ATTACHMENT_MIN_BYTES + 3);
  const body = {
    topics: [{ partitions: [{ records: first }, { records: second, small: Buffer.from('k') }] }],
    view,
    typed: new Uint8Array(view),
    none: null,
  };
  const envelope: Envelope = { to: 'replica/0/t-0', from: 'net/0', type: 'produce', body, corr: 9 };
  const bytes = encodeEnvelopeForTransfer(envelope);
  const msgpackBytes = new DataView(bytes).getUint32(1);
  assert.equal(new Uint8Array(bytes)[0], 0xc1, 'framed');
  assert.equal(
    bytes.byteLength,
    9 + msgpackBytes + first.length + second.length + 2 * view.length,
    'each attachment once',
  );
  assert.ok(msgpackBytes < 200, `msgpack part holds no payload (${msgpackBytes} bytes)`);

  const { port1, port2 } = new MessageChannel();
  const received = new Promise<ArrayBuffer>((resolve) => port2.once('message', resolve));
  port1.postMessage(bytes, [bytes]);
  const arrived = await received;
  port1.close();
  const decoded = decodeEnvelope(arrived);
  assert.deepEqual(decoded, { ...envelope, body: { ...body, typed: Buffer.from(view) } });
  const [decodedFirst, decodedSecond] = (decoded.body as typeof body).topics[0]?.partitions ?? [];
  assert.equal(decodedFirst?.records.buffer, arrived, 'a view over the received buffer');
  assert.equal(decodedSecond?.records.buffer, arrived);
  assert.ok(Buffer.isBuffer((decoded.body as typeof body).typed));

  // The same framing where nothing is posted (the simulation, delivery on the same thread).
  assert.deepEqual(decodeEnvelope(encodeEnvelope(envelope)), decoded);
});

test('outside an envelope, binaries encode as msgpack bin (spawn arguments, other packers)', () => {
  const big = Buffer.alloc(100_000, 7);
  const bin32 = Buffer.from([0xc6, 0x00, 0x01, 0x86, 0xa0]); // bin 32 of 100,000 bytes
  const bytes = Buffer.from(encodeValue({ big }));
  assert.notEqual(bytes[0], 0xc1);
  assert.equal(bytes.indexOf(bin32), bytes.length - 100_005, 'the payload inline, as msgpack bin');
  assert.deepEqual(decodeValue(bytes), { big });
  const plain = new Packr({ useRecords: false }).pack({ big, small: Buffer.from([1, 2]) });
  assert.equal(plain.indexOf(bin32) + 100_005 + 6 + 4, plain.length, 'bin 32, then "small" and bin 8 of 2');
  assert.deepEqual(new Unpackr({ useRecords: false }).unpack(plain), { big, small: Buffer.from([1, 2]) });
});

test('an attachment reference outside a framed envelope, or past its end, is refused', () => {
  const bytes = Buffer.from(encodeEnvelopeForTransfer({ to: 'a', from: 'b', type: 't', body: Buffer.alloc(4096) }));
  const packedEnd = 9 + bytes.readUInt32BE(1);
  assert.equal(bytes.readUInt32BE(5), packedEnd, 'the attachments follow the msgpack');
  assert.throws(() => decodeEnvelope(bytes.subarray(9, packedEnd)), /attachment outside a framed envelope/);
  assert.throws(() => decodeEnvelope(bytes.subarray(0, bytes.length - 1)), /past the end/);
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

test('a lent frame is transferred whole, its batch in place, the envelope written in front of it', async () => {
  const frame = allocateWithHeadroom(100 + 70_000);
  frame.fill(0xee);
  const records = frame.subarray(100);
  records.fill(3);
  records[0] = 1;
  records[records.length - 1] = 2;
  const expected = Buffer.from(records);
  const envelope: Envelope = { to: 'replica/0/t-0', from: 'net/0', type: 'produce', body: { records, acks: 1 } };
  const bytes = whileLent(records, () => encodeEnvelopeForTransfer(envelope));
  assert.equal(bytes, frame.buffer, 'the frame buffer itself, not a copy');
  assert.equal(bytes.byteLength, TRANSFER_HEADROOM + 100 + 70_000);

  const { port1, port2 } = new MessageChannel();
  const received = new Promise<ArrayBuffer>((resolve) => port2.once('message', resolve));
  port1.postMessage(bytes, [bytes]);
  assert.equal(frame.length, 0, 'the frame is detached on the sending side');
  const arrived = await received;
  port1.close();
  const decoded = decodeEnvelope(arrived);
  const body = decoded.body as { records: Buffer; acks: number };
  assert.deepEqual(body, { records: expected, acks: 1 });
  assert.equal(body.records.buffer, arrived);
  assert.equal(body.records.byteOffset, TRANSFER_HEADROOM + 100, 'the batch where it lay in the frame');
});

test('lending holds for the first envelope inside whileLent only; the frame stays usable otherwise', () => {
  const frame = allocateWithHeadroom(20_000);
  frame.fill(4);
  const envelope = (records: Buffer): Envelope => ({ to: 'a', from: 'b', type: 't', body: { records } });
  const [taken, again] = whileLent(frame, () => [
    encodeEnvelopeForTransfer(envelope(frame)),
    encodeEnvelopeForTransfer(envelope(frame.subarray(0, 10_000))),
  ]);
  assert.equal(taken, frame.buffer, 'the first envelope takes the buffer');
  assert.notEqual(again, frame.buffer, 'the second copies');
  assert.equal(again!.byteLength < 11_000, true);

  const other = allocateWithHeadroom(5_000);
  other.fill(5);
  whileLent(other, () => encodeEnvelope(envelope(other))); // not for transfer: nothing taken
  const after = encodeEnvelopeForTransfer(envelope(other));
  assert.notEqual(after, other.buffer, 'lending ended with whileLent');
  assert.equal(other.length, 5_000, 'still usable');
  assert.deepEqual((decodeEnvelope(after).body as { records: Buffer }).records, other);
  assert.throws(() =>
    whileLent(other, () => {
      throw new Error('send failed');
    }),
  );
  assert.notEqual(encodeEnvelopeForTransfer(envelope(other)), other.buffer, 'a throwing send ends it too');
});

test('lending falls back to a copy: a buffer without headroom, two attachments, no room in front', () => {
  const plain = Buffer.alloc(10_000, 6);
  const fromPlain = whileLent(plain, () => encodeEnvelopeForTransfer({ to: 'a', from: 'b', type: 't', body: plain }));
  assert.notEqual(fromPlain, plain.buffer);
  assert.deepEqual(decodeEnvelope(fromPlain).body, plain);

  const frame = allocateWithHeadroom(20_000);
  frame.fill(7);
  const first = frame.subarray(0, 10_000);
  const second = frame.subarray(10_000);
  const both = whileLent(first, () =>
    encodeEnvelopeForTransfer({ to: 'a', from: 'b', type: 't', body: [first, second] }),
  );
  assert.notEqual(both, frame.buffer, 'two attachments: copied');
  assert.deepEqual(decodeEnvelope(both).body, [first, second]);

  // The bytes in front of the batch cannot hold this envelope's msgpack (a long actor id).
  const tight = allocateWithHeadroom(10_000);
  tight.fill(8);
  const whole = Buffer.from(tight.buffer, 0, tight.buffer.byteLength);
  const longId = 'replica/0/' + 'x'.repeat(TRANSFER_HEADROOM);
  const copied = whileLent(whole, () => encodeEnvelopeForTransfer({ to: longId, from: 'b', type: 't', body: whole }));
  assert.notEqual(copied, tight.buffer);
  assert.deepEqual(decodeEnvelope(copied), { to: longId, from: 'b', type: 't', body: whole });
});

test('a Packr with structuredClone still gets a plain Uint8Array back as a Uint8Array (msgpackr typed-array extension)', () => {
  const packr = new Packr({ structuredClone: true });
  const bytes = packr.pack(new Uint8Array([1, 2, 3]));
  assert.deepEqual([...bytes], [0xc7, 0x04, 0x74, 0x01, 1, 2, 3]);
  const back = packr.unpack(bytes) as Uint8Array;
  assert.equal(back.constructor, Uint8Array);
  assert.deepEqual([...back], [1, 2, 3]);
  assert.ok(Buffer.isBuffer(packr.unpack(packr.pack(Buffer.from([4])))), 'a Buffer stays bin');
});
