/**
 * Envelope bytes: the one encoding every message between actors uses, on worker threads and in the
 * simulation alike (so the simulation catches bodies that cannot be encoded).
 *
 * Wire shape: a msgpack array `[to, from, type, body, corr | nil, isReply]`. Buffers (and any
 * Uint8Array) inside `body` shorter than {@link ATTACHMENT_MIN_BYTES} travel as msgpack `bin`; longer
 * ones (record batches) travel as attachments after the msgpack bytes, each named in the msgpack by a
 * fixext 8 of type {@link ATTACHMENT_EXT_TYPE} holding its offset within the attachments and its length
 * (two big-endian uint32). An envelope with attachments is framed as `0xc1` (a byte msgpack never
 * uses, so it cannot begin a plain envelope), the msgpack length and the attachments' start (uint32 BE
 * each), the msgpack bytes, then (at that start) the attachments back to back. Either way, decoding
 * returns binary as Buffer views over the received bytes (no copy), so a record batch is copied once
 * into the envelope and never after: packing a large binary into msgpackr's pool and then copying the
 * pool's bytes into a transferable buffer copied it twice.
 *
 * No copy at all: a request frame the network thread assembled from several socket reads lies in a
 * buffer of its own with {@link TRANSFER_HEADROOM} spare bytes in front ({@link allocateWithHeadroom}).
 * When the produce handler hands such a frame's only record batch on ({@link whileLent}), the
 * envelope carrying it is written into the bytes in front of the batch (the headroom and the frame's
 * already-decoded header) and that whole buffer is transferred, the batch in place as the envelope's
 * one attachment; the frame is unusable on the sending thread afterwards (detached).
 *
 * `null` and an empty Buffer stay distinct (nil vs bin 0). Maps decode as plain objects, Dates as
 * Dates, bigints (64-bit) as bigints; class identity does not survive; functions throw.
 *
 * Posting: {@link encodeEnvelopeForTransfer} returns an exact-size ArrayBuffer to put in postMessage's
 * transfer list. msgpackr packs into a shared pool buffer; posting a view of it would clone the whole
 * pool (DESIGN.md measurements), and transferring the pool would detach msgpackr's own buffer.
 *
 * The attachment writer is a msgpackr extension for Uint8Array, and msgpackr's extensions are
 * process-wide: outside an envelope encode (spawn arguments, the metadata log's own Packr) it writes
 * the bytes msgpackr writes without it (`bin`, or with `moreTypes` a plain Uint8Array's typed-array
 * extension), so nothing else's encoding changes.
 */
import { strict as assert } from 'node:assert';
import { addExtension, Packr } from 'msgpackr';
import type { Envelope } from './actor';

/** Binary values of at least this many bytes inside an envelope travel as attachments, not `bin`. */
export const ATTACHMENT_MIN_BYTES = 512;

/** The msgpack extension type that names an attachment (unused by msgpackr's own extensions). */
export const ATTACHMENT_EXT_TYPE = 0x41;

/** The first byte of an envelope framed with attachments (0xc1 is "never used" in msgpack). */
const FRAMED_MARKER = 0xc1;
const FRAME_HEADER_BYTES = 9;

/** Spare bytes in front of a buffer from {@link allocateWithHeadroom}: room for an envelope's msgpack. */
export const TRANSFER_HEADROOM = 512;

/** ArrayBuffers allocated with headroom (by the network thread, for request frames). */
const withHeadroom = new WeakSet<ArrayBuffer>();
/** ArrayBuffers lent by {@link whileLent}: the next envelope attaching bytes of one takes it whole. */
const lent = new WeakSet<ArrayBuffer>();

/**
 * A Buffer of `size` bytes (contents unset) at offset {@link TRANSFER_HEADROOM} of an ArrayBuffer of
 * its own, so that {@link whileLent} can later hand bytes of it to another thread without a copy.
 */
export function allocateWithHeadroom(size: number): Buffer {
  const whole = Buffer.allocUnsafeSlow(TRANSFER_HEADROOM + size);
  withHeadroom.add(whole.buffer);
  return whole.subarray(TRANSFER_HEADROOM);
}

/**
 * Runs `send` (which posts envelopes synchronously) with `bytes` lent: the first envelope `send`
 * encodes for transfer with `bytes` as its only attachment takes the whole ArrayBuffer `bytes` lies in
 * (from {@link allocateWithHeadroom}) instead of copying `bytes`; any other encode copies, and the
 * lending ends when `send` returns or throws. The caller gives that whole buffer up: once the envelope
 * is posted, every view of it on this thread is empty. Bytes not from allocateWithHeadroom are copied
 * as usual. Returns what `send` returns.
 */
export function whileLent<T>(bytes: Uint8Array, send: () => T): T {
  const buffer = bytes.buffer as ArrayBuffer;
  if (!withHeadroom.has(buffer)) return send();
  lent.add(buffer);
  try {
    return send();
  } finally {
    lent.delete(buffer);
  }
}

/** The attachments of the envelope being encoded (null outside an envelope encode), in order. */
let collecting: Uint8Array[] | null = null;
let collectedBytes = 0;
/** While an envelope is decoded: the bytes its attachments lie in, from their first byte. */
let decodingAttachments: Buffer | null = null;

type AllocateForWrite = (size: number) => { target: Uint8Array; targetView: DataView; position: number };

/** msgpackr's typed-array type names, in the order its 0x74 extension numbers them (unpack.js). */
const TYPED_ARRAY_NAMES = [
  'Int8',
  'Uint8',
  'Uint8Clamped',
  'Int16',
  'Uint16',
  'Int32',
  'Uint32',
  'Float32',
  'Float64',
  'BigInt64',
  'BigUint64',
].map((type) => `${type}Array`);

/**
 * A non-Buffer Uint8Array as msgpackr writes it for a Packr with `moreTypes` (or `structuredClone`):
 * its 0x74 ("t") extension with the array's type, byte for byte, so such a Packr still decodes it as a
 * Uint8Array.
 */
function writeTypedArrayExtension(value: Uint8Array, allocateForWrite: AllocateForWrite): void {
  const length = value.byteLength;
  const header = length + 1 < 0x100 ? 2 : length + 1 < 0x10000 ? 3 : 5;
  const { target, targetView, position } = allocateForWrite(header + 2 + length);
  if (header === 2) {
    target[position] = 0xc7;
    target[position + 1] = length + 1;
  } else if (header === 3) {
    target[position] = 0xc8;
    targetView.setUint16(position + 1, length + 1);
  } else {
    target[position] = 0xc9;
    targetView.setUint32(position + 1, length + 1);
  }
  target[position + header] = 0x74;
  target[position + header + 1] = TYPED_ARRAY_NAMES.indexOf(value.constructor.name) & 0xff;
  target.set(value, position + header + 2);
}

addExtension({
  Class: Uint8Array,
  type: ATTACHMENT_EXT_TYPE,
  pack(this: { moreTypes?: boolean }, value: Uint8Array, allocateForWrite: AllocateForWrite): undefined {
    const length = value.byteLength;
    if (collecting !== null && length >= ATTACHMENT_MIN_BYTES) {
      const { target, targetView, position } = allocateForWrite(10);
      target[position] = 0xd7; // fixext 8
      target[position + 1] = ATTACHMENT_EXT_TYPE;
      targetView.setUint32(position + 2, collectedBytes);
      targetView.setUint32(position + 6, length);
      collecting.push(value);
      collectedBytes += length;
      return undefined;
    }
    if (this.moreTypes === true && value.constructor !== Buffer) {
      writeTypedArrayExtension(value, allocateForWrite);
      return undefined;
    }
    // msgpackr's own bin encoding, byte for byte (bin 8, bin 16 or bin 32 by length).
    const header = length < 0x100 ? 2 : length < 0x10000 ? 3 : 5;
    const { target, targetView, position } = allocateForWrite(header + length);
    if (header === 2) {
      target[position] = 0xc4;
      target[position + 1] = length;
    } else if (header === 3) {
      target[position] = 0xc5;
      targetView.setUint16(position + 1, length);
    } else {
      target[position] = 0xc6;
      targetView.setUint32(position + 1, length);
    }
    target.set(value, position + header);
    return undefined;
  },
  unpack(data: Uint8Array): Buffer {
    const attachments = decodingAttachments;
    assert(attachments !== null && data.byteLength === 8, 'an attachment outside a framed envelope');
    const view = new DataView(data.buffer, data.byteOffset, 8);
    const offset = view.getUint32(0);
    const length = view.getUint32(4);
    assert(offset + length <= attachments.byteLength, 'an attachment past the end of its envelope');
    return attachments.subarray(offset, offset + length);
  },
} as unknown as Parameters<typeof addExtension>[0]);

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

/**
 * Packs an envelope's msgpack part, collecting its attachments. `packed` may be a view into packr's
 * pool buffer; the attachments are the caller's own Uint8Arrays (not copied).
 */
function packEnvelope(envelope: Envelope): { packed: Buffer; attachments: Uint8Array[]; attachedBytes: number } {
  assert(typeof envelope.to === 'string', 'envelope.to must be a string');
  assert(typeof envelope.from === 'string', 'envelope.from must be a string');
  assert(typeof envelope.type === 'string', 'envelope.type must be a string');
  const attachments: Uint8Array[] = [];
  collecting = attachments;
  collectedBytes = 0;
  try {
    const packed = packr.pack([
      envelope.to,
      envelope.from,
      envelope.type,
      envelope.body,
      envelope.corr ?? null,
      envelope.isReply === true,
    ]);
    return { packed, attachments, attachedBytes: collectedBytes };
  } finally {
    collecting = null;
    collectedBytes = 0;
  }
}

/**
 * Writes the framed form (marker, msgpack length, msgpack, attachments) into a fresh exact-size
 * ArrayBuffer: the one copy of each attachment.
 */
function frame(packed: Uint8Array, attachments: Uint8Array[], attachedBytes: number): ArrayBuffer {
  const out = Buffer.allocUnsafeSlow(FRAME_HEADER_BYTES + packed.byteLength + attachedBytes);
  out[0] = FRAMED_MARKER;
  out.writeUInt32BE(packed.byteLength, 1);
  out.writeUInt32BE(FRAME_HEADER_BYTES + packed.byteLength, 5);
  out.set(packed, FRAME_HEADER_BYTES);
  let position = FRAME_HEADER_BYTES + packed.byteLength;
  for (const attachment of attachments) {
    out.set(attachment, position);
    position += attachment.byteLength;
  }
  return out.buffer;
}

/**
 * Encodes an envelope. Without attachments the result may be a view into packr's pool buffer: fine to
 * decode or keep, not to post (use {@link encodeEnvelopeForTransfer}).
 */
export function encodeEnvelope(envelope: Envelope): Buffer {
  const { packed, attachments, attachedBytes } = packEnvelope(envelope);
  if (attachments.length === 0) return packed;
  return Buffer.from(frame(packed, attachments, attachedBytes));
}

/**
 * Copies `bytes` into a fresh ArrayBuffer of exactly `bytes.byteLength` bytes (safe to transfer; not
 * zero-filled first, since every byte is written).
 */
export function toExactArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  const out = Buffer.allocUnsafeSlow(bytes.byteLength);
  out.set(bytes);
  return out.buffer;
}

/**
 * Writes the framed form in front of the envelope's one attachment, inside the lent buffer that holds
 * it, and returns that buffer; null when the bytes in front of the attachment cannot hold it.
 */
function frameInPlace(packed: Uint8Array, attachment: Uint8Array): ArrayBuffer | null {
  if (FRAME_HEADER_BYTES + packed.byteLength > attachment.byteOffset) return null;
  const whole = Buffer.from(attachment.buffer, 0, attachment.byteOffset);
  whole[0] = FRAMED_MARKER;
  whole.writeUInt32BE(packed.byteLength, 1);
  whole.writeUInt32BE(attachment.byteOffset, 5);
  whole.set(packed, FRAME_HEADER_BYTES);
  return attachment.buffer as ArrayBuffer;
}

/**
 * Encodes an envelope into an ArrayBuffer that the caller transfers (postMessage): exact-size, or the
 * lent buffer its one attachment lies in ({@link whileLent}), which then holds other bytes too.
 */
export function encodeEnvelopeForTransfer(envelope: Envelope): ArrayBuffer {
  const { packed, attachments, attachedBytes } = packEnvelope(envelope);
  if (attachments.length === 0) return toExactArrayBuffer(packed);
  const only = attachments.length === 1 ? attachments[0]! : null;
  if (only !== null && lent.has(only.buffer as ArrayBuffer)) {
    lent.delete(only.buffer as ArrayBuffer);
    const inPlace = frameInPlace(packed, only);
    if (inPlace !== null) return inPlace;
  }
  return frame(packed, attachments, attachedBytes);
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
  let source = asBuffer(bytes);
  let decoded: unknown;
  if (source.length > 0 && source[0] === FRAMED_MARKER) {
    assert(source.length >= FRAME_HEADER_BYTES, 'a framed envelope shorter than its header');
    const packedEnd = FRAME_HEADER_BYTES + source.readUInt32BE(1);
    const attachmentsStart = source.readUInt32BE(5);
    assert(
      packedEnd <= attachmentsStart && attachmentsStart <= source.length,
      'a framed envelope shorter than its msgpack',
    );
    decodingAttachments = source.subarray(attachmentsStart);
    source = source.subarray(FRAME_HEADER_BYTES, packedEnd);
    try {
      decoded = packr.unpack(source);
    } finally {
      decodingAttachments = null;
    }
  } else {
    decoded = packr.unpack(source);
  }
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
