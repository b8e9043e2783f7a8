/**
 * Envelope bytes: the one encoding every message between actors uses, on worker threads and in the
 * simulation alike (so the simulation catches bodies that cannot be encoded).
 *
 * Wire shape: a msgpack array `[to, from, type, body, corr | nil, isReply]`. Buffers (and any
 * Uint8Array) inside `body` travel as msgpack `bin`; decoding returns them as Buffer views over the
 * received bytes (msgpackr's default, no copy), so a record batch is copied once into the envelope and
 * never after. `null` and an empty Buffer stay distinct (nil vs bin 0). Maps decode as plain objects,
 * Dates as Dates, bigints (64-bit) as bigints; class identity does not survive; functions throw.
 *
 * Posting: {@link encodeEnvelopeForTransfer} returns an exact-size ArrayBuffer to put in postMessage's
 * transfer list. msgpackr packs into a shared pool buffer; posting a view of it would clone the whole
 * pool (DESIGN.md measurements), and transferring the pool would detach msgpackr's own buffer.
 */
import { strict as assert } from 'node:assert';
import { Packr } from 'msgpackr';
import type { Envelope } from './actor';

/**
 * The shared msgpackr instance. `useRecords: false` keeps the encoding plain msgpack (no record
 * extension), so any msgpack decoder (and any worker's Packr) reads it without shared structures.
 * A function inside a value throws (msgpackr would silently send `undefined`), and so does a symbol.
 */
export const packr = new Packr({
  useRecords: false,
  writeFunction: () => {
    throw new TypeError('a function cannot be sent in an envelope');
  },
});

/** Encodes an envelope. The result may be a view into packr's pool buffer: fine to decode, not to post. */
export function encodeEnvelope(envelope: Envelope): Buffer {
  assert(typeof envelope.to === 'string', 'envelope.to must be a string');
  assert(typeof envelope.from === 'string', 'envelope.from must be a string');
  assert(typeof envelope.type === 'string', 'envelope.type must be a string');
  return packr.pack([
    envelope.to,
    envelope.from,
    envelope.type,
    envelope.body,
    envelope.corr ?? null,
    envelope.isReply === true,
  ]);
}

/** Copies `bytes` into a fresh ArrayBuffer of exactly `bytes.byteLength` bytes (safe to transfer). */
export function toExactArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(out).set(bytes);
  return out;
}

/** Encodes an envelope into an exact-size ArrayBuffer that the caller transfers (postMessage). */
export function encodeEnvelopeForTransfer(envelope: Envelope): ArrayBuffer {
  return toExactArrayBuffer(encodeEnvelope(envelope));
}

/** Wraps bytes as a Buffer without copying (so msgpackr's bin values decode as Buffer views). */
function asBuffer(bytes: ArrayBuffer | Uint8Array): Buffer {
  if (Buffer.isBuffer(bytes)) return bytes;
  if (bytes instanceof ArrayBuffer) return Buffer.from(bytes);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Decodes envelope bytes. Binary fields in the body are views over `bytes` (keep `bytes` alive and
 * unmodified while they are in use). Throws on bytes that are not an envelope (a programmer error:
 * only the runtime produces envelope bytes).
 */
export function decodeEnvelope(bytes: ArrayBuffer | Uint8Array): Envelope {
  const decoded: unknown = packr.unpack(asBuffer(bytes));
  assert(Array.isArray(decoded) && decoded.length === 6, 'envelope must be a 6-element array');
  const [to, from, type, body, corr, isReply] = decoded as unknown[];
  assert(typeof to === 'string' && typeof from === 'string' && typeof type === 'string', 'bad envelope header');
  const envelope: Envelope = { to, from, type, body };
  if (corr !== null) {
    assert(typeof corr === 'number', 'envelope corr must be a number');
    envelope.corr = corr;
  }
  if (isReply === true) envelope.isReply = true;
  return envelope;
}

/** Encodes any msgpack value (spawn arguments) into bytes the caller owns (never a pool view). */
export function encodeValue(value: unknown): Uint8Array {
  return new Uint8Array(toExactArrayBuffer(packr.pack(value)));
}

/** Decodes {@link encodeValue} bytes; Buffers come back as views over `bytes`. */
export function decodeValue(bytes: ArrayBuffer | Uint8Array): unknown {
  return packr.unpack(asBuffer(bytes));
}
