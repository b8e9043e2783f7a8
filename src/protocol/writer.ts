/**
 * The growable `Writer` of Kafka wire primitives (their layouts: primitives.ts). Write methods
 * mirror `Reader`'s. A value the wire cannot carry (an int64 beyond ±2^53, a string over 32767
 * bytes, a malformed UUID) throws RangeError: a bug in the caller, not bad input.
 */
import { TWO_POW_32 } from './primitives';

/** Bytes at or above which `Writer.rawRef` keeps a reference instead of copying. */
const ZERO_COPY_MIN_BYTES = 16 * 1024;

/**
 * Growable big-endian writer. Write methods mirror `Reader`. `finish()` returns the bytes as one
 * Buffer; `finishChunks()` returns them as a list for `socket.writev`, in which large buffers
 * written with `rawRef` (record sets) appear by reference, uncopied.
 *
 * A Writer is single-use: after finish/finishChunks it must not be written again.
 */
export class Writer {
  private buf: Buffer;
  private pos = 0;
  /** Start of the bytes in `buf` not yet sealed into `chunks`. */
  private chunkStart = 0;
  private chunks: Buffer[] | null = null;
  private sealedBytes = 0;
  /** Whether the first chunk is a caller's buffer (then patchInt32 must refuse). */
  private firstIsRef = false;

  /** @param initialCapacity bytes to allocate up front (grows by doubling) */
  constructor(initialCapacity = 256) {
    this.buf = Buffer.allocUnsafe(Math.max(16, initialCapacity));
  }

  /** Total bytes written so far. */
  get length(): number {
    return this.sealedBytes + (this.pos - this.chunkStart);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const live = this.pos - this.chunkStart;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, live + n + 64));
    this.buf.copy(next, 0, this.chunkStart, this.pos);
    this.buf = next;
    this.chunkStart = 0;
    this.pos = live;
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  int8(v: number): void {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
  }

  int16(v: number): void {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
  }

  uint16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  int32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
  }

  uint32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
  }

  /** int64 from a safe-integer JS number (throws RangeError otherwise: a caller bug). */
  int64(v: number): void {
    if (!Number.isSafeInteger(v)) throw new RangeError(`int64 value ${v} is not a safe integer`);
    const high = Math.floor(v / TWO_POW_32);
    const low = v - high * TWO_POW_32;
    this.ensure(8);
    this.buf.writeInt32BE(high, this.pos);
    this.buf.writeUInt32BE(low, this.pos + 4);
    this.pos += 8;
  }

  int64BigInt(v: bigint): void {
    this.ensure(8);
    this.buf.writeBigInt64BE(v, this.pos);
    this.pos += 8;
  }

  float64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  /** Unsigned varint, 0 .. 2^32-1. */
  unsignedVarint(v: number): void {
    if (!(v >= 0 && v <= 0xffffffff && Number.isInteger(v))) throw new RangeError(`unsigned varint ${v} out of range`);
    this.ensure(5);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  /** Zig-zag varint (int32). */
  varint(v: number): void {
    this.unsignedVarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** Zig-zag varlong (int64) from a JS number within ±2^52. */
  varlong(v: number): void {
    let n = v >= 0 ? v * 2 : -v * 2 - 1;
    if (!Number.isSafeInteger(n)) throw new RangeError(`varlong ${v} out of range`);
    this.ensure(10);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  /** Copies `b` into the output. */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /**
   * Appends `b` by reference when it is large (record sets on the fetch path), by copy otherwise.
   * The caller must not modify `b` until the output has been sent.
   */
  rawRef(b: Buffer): void {
    if (b.length < ZERO_COPY_MIN_BYTES) {
      this.raw(b);
      return;
    }
    if (this.chunks === null) {
      this.chunks = [];
      this.firstIsRef = this.pos === this.chunkStart;
    }
    if (this.pos > this.chunkStart) {
      this.chunks.push(this.buf.subarray(this.chunkStart, this.pos));
      this.sealedBytes += this.pos - this.chunkStart;
      this.chunkStart = this.pos;
    }
    this.chunks.push(b);
    this.sealedBytes += b.length;
  }

  private utf8(s: string): void {
    this.ensure(Buffer.byteLength(s, 'utf8'));
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** STRING (int16 length). */
  string(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    if (n > 0x7fff) throw new RangeError(`string of ${n} bytes exceeds int16`);
    this.int16(n);
    this.utf8(s);
  }

  /** NULLABLE_STRING (int16 length, -1 = null). */
  nullableString(s: string | null): void {
    if (s === null) this.int16(-1);
    else this.string(s);
  }

  /** COMPACT_STRING. */
  compactString(s: string): void {
    this.unsignedVarint(Buffer.byteLength(s, 'utf8') + 1);
    this.utf8(s);
  }

  /** COMPACT_NULLABLE_STRING (0 = null). */
  compactNullableString(s: string | null): void {
    if (s === null) this.unsignedVarint(0);
    else this.compactString(s);
  }

  /** BYTES (int32 length). */
  bytes(b: Buffer): void {
    this.int32(b.length);
    this.raw(b);
  }

  /** NULLABLE_BYTES (int32 length, -1 = null). */
  nullableBytes(b: Buffer | null): void {
    if (b === null) this.int32(-1);
    else this.bytes(b);
  }

  /** COMPACT_BYTES. */
  compactBytes(b: Buffer): void {
    this.unsignedVarint(b.length + 1);
    this.raw(b);
  }

  /** COMPACT_NULLABLE_BYTES (0 = null). */
  compactNullableBytes(b: Buffer | null): void {
    if (b === null) this.unsignedVarint(0);
    else this.compactBytes(b);
  }

  /** UUID from Kafka's base64url text form (throws RangeError on a malformed string). */
  uuid(s: string): void {
    const b = Buffer.from(s, 'base64url');
    if (b.length !== 16 || b.toString('base64url') !== s) throw new RangeError(`malformed uuid ${JSON.stringify(s)}`);
    this.raw(b);
  }

  /** ARRAY length (int32, -1 = null). */
  arrayLength(n: number | null): void {
    this.int32(n === null ? -1 : n);
  }

  /** COMPACT_ARRAY length (uvarint N+1, 0 = null). */
  compactArrayLength(n: number | null): void {
    this.unsignedVarint(n === null ? 0 : n + 1);
  }

  /** An empty TAGGED_FIELDS section. */
  emptyTaggedFields(): void {
    this.ensure(1);
    this.buf[this.pos++] = 0;
  }

  /** Overwrites an int32 at absolute output position `at` (must lie in the first chunk). */
  patchInt32(at: number, v: number): void {
    const first = this.chunks !== null ? this.chunks[0]! : this.buf.subarray(this.chunkStart, this.pos);
    if (this.firstIsRef || at < 0 || at + 4 > first.length)
      throw new RangeError(`patch at ${at} outside the first chunk`);
    first.writeInt32BE(v, at);
  }

  /** The output as one Buffer (a view of the internal buffer when nothing was written by reference). */
  finish(): Buffer {
    const tail = this.buf.subarray(this.chunkStart, this.pos);
    if (this.chunks === null) return tail;
    return Buffer.concat(tail.length > 0 ? [...this.chunks, tail] : this.chunks, this.length);
  }

  /** The output as a list of Buffers, large `rawRef` buffers included by reference. */
  finishChunks(): Buffer[] {
    const tail = this.buf.subarray(this.chunkStart, this.pos);
    if (this.chunks === null) return [tail];
    return tail.length > 0 ? [...this.chunks, tail] : this.chunks.slice();
  }
}
