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
 * pool (DESIGN.md measurements), and transferring the pool would detach msgpackr's own buffer. So a
 * small envelope is packed into the pool and copied out; one carrying at least
 * {@link DIRECT_PACK_MIN_BYTES} of binary (a fetch answer, a large produce batch) is packed straight
 * into a resizable ArrayBuffer of its own, shrunk to the packed length and transferred: no copy after
 * msgpack's own (docs/design-notes.md, data path).
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

/**
 * Binary bytes in an envelope body from which it is packed into a buffer of its own instead of the
 * pool (below it the copy out of the pool costs less than a buffer of its own: measured, design notes).
 */
export const DIRECT_PACK_MIN_BYTES = 64 * 1024;
/** Room beyond the binary bytes for everything else in a directly packed envelope. */
const DIRECT_PACK_SLACK_BYTES = 64 * 1024;
/** How deep {@link binaryBytes} looks into a body for binaries (replies nest partitions in arrays). */
const BINARY_SCAN_DEPTH = 5;

/** The bytes of the Uint8Arrays in `value`, looking `depth` levels into arrays and plain objects. */
function binaryBytes(value: unknown, depth: number): number {
  if (value instanceof Uint8Array) return value.byteLength;
  if (depth === 0 || value === null || typeof value !== 'object') return 0;
  let total = 0;
  if (Array.isArray(value)) {
    for (const item of value) total += binaryBytes(item, depth - 1);
  } else if (Object.getPrototypeOf(value) === Object.prototype) {
    for (const key in value) total += binaryBytes((value as Record<string, unknown>)[key], depth - 1);
  }
  return total;
}

/** ES2024's resizable ArrayBuffer (Node 20 has it; the ES2022 lib types do not). */
interface ResizableArrayBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}
const ResizableArrayBufferCtor = ArrayBuffer as unknown as new (
  byteLength: number,
  options: { maxByteLength: number },
) => ResizableArrayBuffer;

/**
 * Packs `envelope` into a resizable ArrayBuffer of its own, shrunk to the packed length (when msgpack
 * needed more room than reserved it moved to a buffer of its own, which is copied out). msgpackr's target buffer is module state, so it is handed a fresh pool afterwards: the
 * old one is about to be detached by the transfer, and earlier pool views must stay intact.
 */
function packDirect(envelope: Envelope, binary: number): ArrayBuffer {
  const reserved = binary + DIRECT_PACK_SLACK_BYTES;
  const own = new ResizableArrayBufferCtor(reserved, { maxByteLength: reserved });
  const target = Buffer.from(own, 0, reserved);
  packr.useBuffer(target);
  let packed: Buffer;
  try {
    packed = encodeEnvelope(envelope);
  } finally {
    packr.useBuffer(Buffer.allocUnsafeSlow(8192));
  }
  // Overflowed into a buffer msgpackr grew on its own (no longer its target): copy it out.
  if (packed.buffer !== own) return toExactArrayBuffer(packed);
  assert(packed.byteOffset === 0, 'a directly packed envelope starts its buffer');
  own.resize(packed.byteLength);
  return own;
}

/** Encodes an envelope into an exact-size ArrayBuffer that the caller transfers (postMessage). */
export function encodeEnvelopeForTransfer(envelope: Envelope): ArrayBuffer {
  const binary = binaryBytes(envelope.body, BINARY_SCAN_DEPTH);
  if (binary >= DIRECT_PACK_MIN_BYTES) return packDirect(envelope, binary);
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
