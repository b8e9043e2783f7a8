/** Reader/Writer: round trips at the boundaries, and hostile input that must throw ProtocolError. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError, ZERO_UUID } from '../../../src/protocol/primitives';
import { Reader } from '../../../src/protocol/reader';
import { Writer } from '../../../src/protocol/writer';

function reader(bytes: number[]): Reader {
  return new Reader(Buffer.from(bytes));
}

function throwsProtocol(fn: () => unknown, what: string): void {
  assert.throws(fn, (e: unknown) => e instanceof ProtocolError, what);
}

describe('Writer -> Reader round trips', () => {
  it('fixed-width integers, bool, float64', () => {
    const w = new Writer(16);
    w.bool(true);
    w.bool(false);
    w.int8(-128);
    w.int8(127);
    w.int16(-32768);
    w.uint16(65535);
    w.int32(-2147483648);
    w.uint32(4294967295);
    w.int64(-1);
    w.int64(Number.MAX_SAFE_INTEGER);
    w.int64(Number.MIN_SAFE_INTEGER);
    w.int64(2 ** 32);
    w.int64BigInt(-(2n ** 63n));
    w.float64(-0.5);
    const r = new Reader(w.finish());
    assert.equal(r.bool(), true);
    assert.equal(r.bool(), false);
    assert.equal(r.int8(), -128);
    assert.equal(r.int8(), 127);
    assert.equal(r.int16(), -32768);
    assert.equal(r.uint16(), 65535);
    assert.equal(r.int32(), -2147483648);
    assert.equal(r.uint32(), 4294967295);
    assert.equal(r.int64(), -1);
    assert.equal(r.int64(), Number.MAX_SAFE_INTEGER);
    assert.equal(r.int64(), Number.MIN_SAFE_INTEGER);
    assert.equal(r.int64(), 2 ** 32);
    assert.equal(r.int64BigInt(), -(2n ** 63n));
    assert.equal(r.float64(), -0.5);
    assert.equal(r.remaining(), 0);
  });

  it('varints: unsigned, zig-zag int32 and int64, with known encodings', () => {
    const cases: [number, number[]][] = [
      [0, [0x00]],
      [-1, [0x01]],
      [1, [0x02]],
      [-64, [0x7f]],
      [64, [0x80, 0x01]],
      [2147483647, [0xfe, 0xff, 0xff, 0xff, 0x0f]],
      [-2147483648, [0xff, 0xff, 0xff, 0xff, 0x0f]],
    ];
    for (const [v, bytes] of cases) {
      const w = new Writer();
      w.varint(v);
      assert.deepStrictEqual([...w.finish()], bytes, `varint ${v}`);
      assert.equal(reader(bytes).varint(), v);
    }
    for (const v of [0, 127, 128, 16383, 16384, 2 ** 31, 2 ** 32 - 1]) {
      const w = new Writer();
      w.unsignedVarint(v);
      assert.equal(new Reader(w.finish()).unsignedVarint(), v);
    }
    for (const v of [0, -1, 1, 300, -300, 1_700_000_000_000, -(2 ** 52), 2 ** 52 - 1]) {
      const w = new Writer();
      w.varlong(v);
      assert.equal(new Reader(w.finish()).varlong(), v, `varlong ${v}`);
    }
  });

  it('strings, bytes and their compact and nullable forms', () => {
    const w = new Writer(8);
    w.string('héllo');
    w.nullableString(null);
    w.compactString('');
    w.compactNullableString(null);
    w.compactString('✓');
    w.bytes(Buffer.from([1, 2]));
    w.nullableBytes(null);
    w.compactBytes(Buffer.alloc(0));
    w.compactNullableBytes(null);
    const buf = w.finish();
    const r = new Reader(buf);
    assert.equal(r.string(), 'héllo');
    assert.equal(r.nullableString(), null);
    assert.equal(r.compactString(), '');
    assert.equal(r.compactNullableString(), null);
    assert.equal(r.compactString(), '✓');
    const b = r.bytes();
    assert.deepStrictEqual([...b], [1, 2]);
    assert.equal(b.buffer, buf.buffer, 'bytes are a view, not a copy');
    assert.equal(r.nullableBytes(), null);
    assert.equal(r.compactBytes().length, 0);
    assert.equal(r.compactNullableBytes(), null);
    assert.equal(r.remaining(), 0);
  });

  it('uuid in Kafka base64url form; the zero UUID', () => {
    const w = new Writer();
    w.uuid(ZERO_UUID);
    w.uuid('AQIDBAUGBwgJCgsMDQ4PEA');
    const r = new Reader(w.finish());
    assert.equal(r.uuid(), ZERO_UUID);
    assert.equal(r.uuid(), 'AQIDBAUGBwgJCgsMDQ4PEA');
    assert.equal(new Reader(Buffer.alloc(16)).uuid(), 'AAAAAAAAAAAAAAAAAAAAAA');
    assert.throws(() => new Writer().uuid('not-a-uuid'), RangeError);
  });

  it('arrays and compact arrays, null included', () => {
    const w = new Writer();
    w.arrayLength(2);
    w.int32(7);
    w.int32(8);
    w.arrayLength(null);
    w.compactArrayLength(1);
    w.int16(9);
    w.compactArrayLength(null);
    const r = new Reader(w.finish());
    assert.deepStrictEqual(
      r.array((x) => x.int32()),
      [7, 8],
    );
    assert.equal(
      r.array((x) => x.int32()),
      null,
    );
    assert.deepStrictEqual(
      r.compactArray((x) => x.int16()),
      [9],
    );
    assert.equal(
      r.compactArray((x) => x.int16()),
      null,
    );
  });

  it('tagged fields: each field gets a bounded reader; unknown ones are skipped', () => {
    const w = new Writer();
    w.unsignedVarint(3);
    w.unsignedVarint(0);
    w.unsignedVarint(4);
    w.int32(42);
    w.unsignedVarint(9);
    w.unsignedVarint(2);
    w.int16(-1);
    w.unsignedVarint(100000);
    w.unsignedVarint(0);
    w.int8(5); // after the section
    const r = new Reader(w.finish());
    const seen: [number, number][] = [];
    r.taggedFields((tag, fr) => {
      if (tag === 0) seen.push([tag, fr.int32()]);
      else seen.push([tag, fr.remaining()]);
    });
    assert.deepStrictEqual(seen, [
      [0, 42],
      [9, 2],
      [100000, 0],
    ]);
    assert.equal(r.int8(), 5);
  });

  it('Writer grows, keeps large buffers by reference, and patches the size', () => {
    const big = Buffer.alloc(20000, 7);
    const w = new Writer(16);
    w.int32(0);
    for (let i = 0; i < 100; i++) w.int32(i);
    w.rawRef(big);
    w.int16(-2);
    w.rawRef(Buffer.from([1, 2, 3])); // small: copied
    w.patchInt32(0, w.length - 4);
    const chunks = w.finishChunks();
    assert.ok(chunks.includes(big), 'large buffer included by reference');
    const whole = Buffer.concat(chunks);
    assert.deepStrictEqual(w.finish(), whole);
    assert.equal(whole.readInt32BE(0), whole.length - 4);
    assert.equal(whole.length, 4 + 400 + 20000 + 2 + 3);
    assert.equal(whole.readInt32BE(4 + 99 * 4), 99);
  });
});

describe('hostile and truncated input throws ProtocolError', () => {
  it('short fixed-width reads', () => {
    throwsProtocol(() => reader([]).int8(), 'int8');
    throwsProtocol(() => reader([0]).int16(), 'int16');
    throwsProtocol(() => reader([0, 0, 0]).int32(), 'int32');
    throwsProtocol(() => reader([0, 0, 0, 0, 0, 0, 0]).int64(), 'int64');
    throwsProtocol(() => reader(new Array(15).fill(0)).uuid(), 'uuid');
    throwsProtocol(() => reader([]).bool(), 'bool');
  });

  it('int64 beyond 2^53', () => {
    throwsProtocol(() => reader([0x00, 0x20, 0, 0, 0, 0, 0, 0]).int64(), '2^53');
    throwsProtocol(() => reader([0x80, 0, 0, 0, 0, 0, 0, 0]).int64(), '-2^63');
    assert.equal(reader([0xff, 0xe0, 0, 0, 0, 0, 0, 0]).int64(), -(2 ** 53));
  });

  it('int64Saturating reads values beyond ±(2^53 - 1) as the safe bound and others exactly', () => {
    const max = [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    assert.equal(reader([0x00, 0x20, 0, 0, 0, 0, 0, 0]).int64Saturating(), Number.MAX_SAFE_INTEGER); // 2^53
    assert.equal(reader(max).int64Saturating(), Number.MAX_SAFE_INTEGER); // 2^63 - 1
    assert.equal(reader([0x80, 0, 0, 0, 0, 0, 0, 0]).int64Saturating(), Number.MIN_SAFE_INTEGER); // -2^63
    assert.equal(reader([0x00, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).int64Saturating(), 2 ** 53 - 1);
    assert.equal(reader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).int64Saturating(), -1);
    const r = reader([...max, 0, 0, 0, 7]);
    r.int64Saturating();
    assert.equal(r.int32(), 7, 'all eight bytes consumed');
    throwsProtocol(() => reader([0, 0, 0, 0, 0, 0, 0]).int64Saturating(), 'int64');
  });

  it('string lengths: too long, negative, null where not allowed', () => {
    throwsProtocol(() => reader([0x7f, 0xff, 0x61, 0x62]).string(), 'int16 length past the end');
    throwsProtocol(() => reader([0xff, 0xfe]).nullableString(), 'length -2');
    throwsProtocol(() => reader([0xff, 0xff]).string(), 'null string');
    throwsProtocol(() => reader([0x00]).compactString(), 'null compact string');
    throwsProtocol(() => reader([0xff, 0xff, 0xff, 0xff, 0x0f]).compactNullableString(), 'compact length 2^32-2');
  });

  it('bytes and arrays with huge lengths allocate nothing and throw', () => {
    throwsProtocol(() => reader([0x7f, 0xff, 0xff, 0xff, 1]).bytes(), 'bytes 2^31-1');
    throwsProtocol(() => reader([0xff, 0xff, 0xff, 0xfe]).nullableBytes(), 'bytes -2');
    throwsProtocol(() => reader([0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]).array((r) => r.int8()), 'array 2^31-1');
    throwsProtocol(() => reader([0x80, 0, 0, 0]).arrayLength(), 'array -2^31');
    throwsProtocol(() => reader([0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2]).compactArrayLength(), 'compact array 2^32-2');
    throwsProtocol(() => reader([0xff, 0xff, 0xff, 0xff, 0x0f]).compactBytes(), 'compact bytes 2^32-2');
  });

  it('overlong and truncated varints', () => {
    throwsProtocol(() => reader([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).unsignedVarint(), '6-byte varint');
    throwsProtocol(() => reader([0xff, 0xff, 0xff, 0xff, 0x7f]).unsignedVarint(), 'varint over 32 bits');
    throwsProtocol(() => reader([0x80, 0x80]).varint(), 'truncated varint');
    throwsProtocol(() => reader(new Array(11).fill(0xff)).varlong(), '11-byte varlong');
    throwsProtocol(
      () => reader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).varlong(),
      'varlong beyond 2^52',
    );
  });

  it('tagged fields: too many, or a size past the end', () => {
    throwsProtocol(() => reader([0x7f]).taggedFields(), 'count past the end');
    throwsProtocol(() => reader([0x01, 0x00, 0x09, 0x00]).taggedFields(), 'size past the end');
    throwsProtocol(() => reader([0x01, 0x00]).taggedFields(), 'missing size');
  });

  it('reader bounds', () => {
    throwsProtocol(() => new Reader(Buffer.alloc(2), 3), 'offset past end');
    const r = new Reader(Buffer.from([1, 2, 3, 4]), 0, 2);
    throwsProtocol(() => r.int32(), 'end limits reads');
    throwsProtocol(() => r.skip(3), 'skip past end');
  });
});
