/**
 * The bounds-checked `Reader` of Kafka wire primitives (their layouts: primitives.ts).
 *
 * Every read either succeeds or throws `ProtocolError`: a short buffer, a negative or oversized
 * length, an overlong varint. A length is always checked against the bytes that remain before
 * anything is allocated, and every loop is bounded by the bytes that remain, so hostile input can
 * cost neither memory nor time.
 */
import { ProtocolError, TWO_POW_32 } from './primitives';

/** Largest high half of an int64 that stays within ±2^53 (Number.MAX_SAFE_INTEGER). */
const INT64_SAFE_HIGH_MAX = 0x1fffff;
const INT64_SAFE_HIGH_MIN = -0x200000;

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

  /**
   * int64 as a JS number, a value beyond ±(2^53 - 1) read as ±Number.MAX_SAFE_INTEGER (the
   * FieldSpec `saturating` fields: compared only with offsets and timestamps, which no log reaches
   * that far, so the answer is the same as for the exact value).
   */
  int64Saturating(): number {
    this.need(8);
    const high = this.buf.readInt32BE(this.offset);
    const low = this.buf.readUInt32BE(this.offset + 4);
    this.offset += 8;
    if (high > INT64_SAFE_HIGH_MAX) return Number.MAX_SAFE_INTEGER;
    if (high < INT64_SAFE_HIGH_MIN) return Number.MIN_SAFE_INTEGER;
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
