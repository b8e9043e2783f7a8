/**
 * Kafka wire primitives: a bounds-checked `Reader` over a Buffer and a growable `Writer`.
 *
 * Source: the protocol guide, "Protocol Primitive Types"; KIP-482 for the compact (flexible) forms
 * and tagged fields. All integers are big-endian; varints are little-endian base-128 groups.
 *
 * ```
 *  STRING            int16 N (-1 = null when nullable), N bytes UTF-8
 *  COMPACT_STRING    uvarint N+1 (0 = null when nullable), N bytes
 *  BYTES             int32 N (-1 = null when nullable), N bytes
 *  COMPACT_BYTES     uvarint N+1 (0 = null), N bytes
 *  ARRAY             int32 N (-1 = null), N elements
 *  COMPACT_ARRAY     uvarint N+1 (0 = null), N elements
 *  UUID              16 bytes; text form is base64url without padding (22 chars)
 *  TAGGED_FIELDS     uvarint count, then count × (uvarint tag, uvarint size, size bytes)
 * ```
 *
 * Every read either succeeds or throws `ProtocolError`: a short buffer, a negative or oversized
 * length, an overlong varint. A length is always checked against the bytes that remain before
 * anything is allocated, and every loop is bounded by the bytes that remain, so hostile input can
 * cost neither memory nor time.
 */

/**
 * Malformed or truncated client input. The network layer closes the connection on it (as Kafka
 * does); it never indicates a bug in Skiff.
 */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** 2^32, for splitting int64 values into two 32-bit halves. */
const TWO_POW_32 = 4294967296;
/** Largest high half of an int64 that stays within ±2^53 (Number.MAX_SAFE_INTEGER). */
const INT64_SAFE_HIGH_MAX = 0x1fffff;
const INT64_SAFE_HIGH_MIN = -0x200000;

/** The all-zero UUID in Kafka's string form (Uuid.ZERO_UUID.toString()). */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

/**
 * Cursor over `buf[offset, end)`. Methods advance `offset`. Views (`bytesView`, records) are
 * subarrays of `buf`: they share memory with the input and stay valid as long as it does.
 */
export class Reader {
  /** Current read position (absolute index into `buf`). */
  offset: number;

  /**
   * @param buf the input bytes
   * @param offset first readable index
   * @param end one past the last readable index (defaults to buf.length)
   */
  constructor(
    readonly buf: Buffer,
    offset = 0,
    readonly end = buf.length,
  ) {
    if (offset < 0 || end > buf.length || offset > end) {
      throw new ProtocolError(`bad reader bounds [${offset}, ${end}) over ${buf.length} bytes`);
    }
    this.offset = offset;
  }

  /** Bytes left to read. */
  remaining(): number {
    return this.end - this.offset;
  }

  /** Throws ProtocolError unless `n` more bytes are available. */
  need(n: number): void {
    if (n > this.end - this.offset) {
      throw new ProtocolError(`short input: need ${n} bytes at ${this.offset}, ${this.end - this.offset} left`);
    }
  }

  /** Advances past `n` bytes (bounds-checked). */
  skip(n: number): void {
    if (n < 0) throw new ProtocolError(`negative skip ${n}`);
    this.need(n);
    this.offset += n;
  }

  bool(): boolean {
    this.need(1);
    return this.buf[this.offset++] !== 0;
  }

  int8(): number {
    this.need(1);
    const v = this.buf.readInt8(this.offset);
    this.offset += 1;
    return v;
  }

  int16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  uint16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  int32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  uint32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  /**
   * int64 as a JS number. Skiff's int64 values (offsets, timestamps, producer ids, -1 sentinels)
   * stay within ±2^53; a value outside that range throws ProtocolError rather than losing bits.
   */
  int64(): number {
    this.need(8);
    const high = this.buf.readInt32BE(this.offset);
    const low = this.buf.readUInt32BE(this.offset + 4);
    if (high > INT64_SAFE_HIGH_MAX || high < INT64_SAFE_HIGH_MIN) {
      throw new ProtocolError(`int64 at ${this.offset} is beyond ±2^53`);
    }
    this.offset += 8;
    return high * TWO_POW_32 + low;
  }

  /** int64 as a bigint (no range limit). */
  int64BigInt(): bigint {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  float64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.offset);
    this.offset += 8;
    return v;
  }

  /** Unsigned base-128 varint of at most 5 bytes (0 .. 2^32-1); Kafka's readUnsignedVarint. */
  unsignedVarint(): number {
    let value = 0;
    let multiplier = 1;
    for (let i = 0; i < 5; i++) {
      if (this.offset >= this.end) throw new ProtocolError(`short input: truncated varint at ${this.offset}`);
      const b = this.buf[this.offset++]!;
      value += (b & 0x7f) * multiplier;
      if ((b & 0x80) === 0) {
        if (value > 0xffffffff) throw new ProtocolError(`unsigned varint overflows 32 bits`);
        return value;
      }
      multiplier *= 128;
    }
    throw new ProtocolError(`varint longer than 5 bytes at ${this.offset}`);
  }

  /** Zig-zag signed varint (int32), as used inside records. */
  varint(): number {
    const n = this.unsignedVarint();
    return (n >>> 1) ^ -(n & 1);
  }

  /**
   * Zig-zag signed varlong (int64, at most 10 bytes) as a JS number; values beyond ±2^52 throw
   * ProtocolError (they cannot occur in deltas Skiff writes or accepts).
   */
  varlong(): number {
    let value = 0;
    let multiplier = 1;
    for (let i = 0; i < 10; i++) {
      if (this.offset >= this.end) throw new ProtocolError(`short input: truncated varlong at ${this.offset}`);
      const b = this.buf[this.offset++]!;
      value += (b & 0x7f) * multiplier;
      if ((b & 0x80) === 0) {
        if (value > Number.MAX_SAFE_INTEGER) throw new ProtocolError('varlong beyond ±2^52');
        return value % 2 === 0 ? value / 2 : -(value + 1) / 2;
      }
      multiplier *= 128;
    }
    throw new ProtocolError(`varlong longer than 10 bytes at ${this.offset}`);
  }

  /** Length of a non-negative run checked against the remaining bytes. */
  private checkedLength(n: number, what: string): number {
    if (n < 0) throw new ProtocolError(`negative ${what} length ${n} at ${this.offset}`);
    this.need(n);
    return n;
  }

  private utf8(n: number): string {
    const s = this.buf.toString('utf8', this.offset, this.offset + n);
    this.offset += n;
    return s;
  }

  /** STRING: int16 length; null (-1) is an error. */
  string(): string {
    const s = this.nullableString();
    if (s === null) throw new ProtocolError('null in a non-nullable string');
    return s;
  }

  /** NULLABLE_STRING: int16 length, -1 = null. */
  nullableString(): string | null {
    const n = this.int16();
    if (n === -1) return null;
    return this.utf8(this.checkedLength(n, 'string'));
  }

  /** COMPACT_STRING: uvarint N+1; null (0) is an error. */
  compactString(): string {
    const s = this.compactNullableString();
    if (s === null) throw new ProtocolError('null in a non-nullable compact string');
    return s;
  }

  /** COMPACT_NULLABLE_STRING: uvarint N+1, 0 = null. */
  compactNullableString(): string | null {
    const n = this.unsignedVarint();
    if (n === 0) return null;
    return this.utf8(this.checkedLength(n - 1, 'compact string'));
  }

  /** `n` bytes as a view (subarray, no copy). */
  bytesView(n: number): Buffer {
    this.checkedLength(n, 'bytes');
    const v = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }

  /** BYTES: int32 length, as a view; null (-1) is an error. */
  bytes(): Buffer {
    const b = this.nullableBytes();
    if (b === null) throw new ProtocolError('null in non-nullable bytes');
    return b;
  }

  /** NULLABLE_BYTES (and non-flexible RECORDS): int32 length, -1 = null; a view. */
  nullableBytes(): Buffer | null {
    const n = this.int32();
    if (n === -1) return null;
    return this.bytesView(n);
  }

  /** COMPACT_BYTES: uvarint N+1, as a view; null (0) is an error. */
  compactBytes(): Buffer {
    const b = this.compactNullableBytes();
    if (b === null) throw new ProtocolError('null in non-nullable compact bytes');
    return b;
  }

  /** COMPACT_NULLABLE_BYTES (and flexible COMPACT_RECORDS): uvarint N+1, 0 = null; a view. */
  compactNullableBytes(): Buffer | null {
    const n = this.unsignedVarint();
    if (n === 0) return null;
    return this.bytesView(n - 1);
  }

  /** UUID: 16 bytes, returned in Kafka's base64url text form (22 chars, no padding). */
  uuid(): string {
    this.need(16);
    const s = this.buf.toString('base64url', this.offset, this.offset + 16);
    this.offset += 16;
    return s;
  }

  /**
   * ARRAY length: int32, -1 = null. The count is checked against the remaining bytes (every
   * element takes at least one byte), so a hostile count cannot drive a huge allocation or loop.
   */
  arrayLength(): number {
    const n = this.int32();
    if (n === -1) return -1;
    if (n < 0) throw new ProtocolError(`negative array length ${n}`);
    if (n > this.end - this.offset)
      throw new ProtocolError(`array of ${n} elements exceeds the ${this.end - this.offset} bytes left`);
    return n;
  }

  /** COMPACT_ARRAY length: uvarint N+1, 0 = null (returned as -1); bounded like arrayLength. */
  compactArrayLength(): number {
    const n = this.unsignedVarint();
    if (n === 0) return -1;
    const count = n - 1;
    if (count > this.end - this.offset)
      throw new ProtocolError(`compact array of ${count} elements exceeds the ${this.end - this.offset} bytes left`);
    return count;
  }

  /** ARRAY of `readElement`; null (-1) is returned as null. */
  array<T>(readElement: (r: Reader) => T): T[] | null {
    const n = this.arrayLength();
    if (n < 0) return null;
    const out: T[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = readElement(this);
    return out;
  }

  /** COMPACT_ARRAY of `readElement`; null (0) is returned as null. */
  compactArray<T>(readElement: (r: Reader) => T): T[] | null {
    const n = this.compactArrayLength();
    if (n < 0) return null;
    const out: T[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = readElement(this);
    return out;
  }

  /**
   * TAGGED_FIELDS section (KIP-482). For each field, `onField(tag, r)` gets a Reader bounded to
   * that field's bytes; the main cursor moves past the field whatever the callback consumed.
   * Without a callback (or for tags it ignores) fields are skipped, which is what a reader must do
   * with unknown tags.
   */
  taggedFields(onField?: (tag: number, r: Reader) => void): void {
    const count = this.unsignedVarint();
    // Each field takes at least two bytes (tag, size).
    if (count > this.end - this.offset) throw new ProtocolError(`${count} tagged fields exceed the bytes left`);
    for (let i = 0; i < count; i++) {
      const tag = this.unsignedVarint();
      const size = this.unsignedVarint();
      this.need(size);
      const start = this.offset;
      if (onField !== undefined) onField(tag, new Reader(this.buf, start, start + size));
      this.offset = start + size;
    }
  }
}

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
