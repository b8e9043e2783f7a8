import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ProtocolError } from '../../../src/protocol/primitives';
import {
  codecFromName,
  codecName,
  compress,
  COMPRESSION_NAMES,
  decompress,
  isXerialFramed,
  XERIAL_MAGIC,
} from '../../../src/protocol/record-batch/compression';

const SAMPLE = Buffer.from(
  'the quick brown fox jumps over the lazy dog; the quick brown fox jumps over the lazy dog again\n',
);

/** Compressed SAMPLE, made by the reference command-line tools (lz4 1.9.4, zstd 1.5.4, GNU gzip). */
const REFERENCE: Array<[codec: string, how: string, base64: string]> = [
  [
    'lz4',
    'lz4 -c (content checksum)',
    'BCJNGGRApzsAAADwEHRoZSBxdWljayBicm93biBmb3gganVtcHMgb3ZlciAfAJFsYXp5IGRvZzsOAA8tABRwIGFnYWluCgAAAAAzo1tH',
  ],
  [
    'lz4',
    'lz4 -c -BX -B4 --content-size (block checksums, content size)',
    'BCJNGHxAXwAAAAAAAAB4OwAAAPAQdGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIB8AkWxhenkgZG9nOw4ADy0AFHAgYWdhaW4KahCfVwAAAAAzo1tH',
  ],
  [
    'zstd',
    'zstd -c FILE (content size in the header)',
    'KLUv/SRf7QEANAN0aGUgcXVpY2sgYnJvd24gZm94IGp1bXBzIG92ZXIgdGhlIGxhenkgZG9nOyBhZ2FpbgoCAKAqgCHMMtLf7wY=',
  ],
  [
    'zstd',
    'zstd -c < FILE (streamed: no content size, as zstd-jni writes)',
    'KLUv/QRY7QEANAN0aGUgcXVpY2sgYnJvd24gZm94IGp1bXBzIG92ZXIgdGhlIGxhenkgZG9nOyBhZ2FpbgoCAKAqgCHMMtLf7wY=',
  ],
  [
    'gzip',
    'gzip -c -n',
    'H4sIAAAAAAAAAyvJSFUoLM1MzlZIKsovz1NIy69QyCrNLShWyC9LLVIoAUrnJFZVKqTkp1uDeUQqVkhMT8zM4wIA3dTc2l8AAAA=',
  ],
];

describe('compression codecs', () => {
  const inputs: Array<[string, Buffer]> = [
    ['empty', Buffer.alloc(0)],
    ['one byte', Buffer.from('x')],
    ['text', SAMPLE],
    ['200 KiB of random bytes', randomBytes(200 * 1024)],
    ['1 MiB of repetitive records', Buffer.from('key-1:value-1;'.repeat(75_000))],
  ];
  for (const name of COMPRESSION_NAMES) {
    for (const [label, data] of inputs) {
      it(`${name} round-trips ${label}`, () => {
        const compressed = compress(name, data);
        assert.ok(decompress(name, compressed).equals(data));
        assert.ok(decompress(codecFromName(name), compress(codecFromName(name), data)).equals(data));
      });
    }
  }

  it('compresses repetitive data', () => {
    const data = Buffer.from('key-1:value-1;'.repeat(10_000));
    for (const name of ['gzip', 'snappy', 'lz4', 'zstd'] as const)
      assert.ok(compress(name, data).length < data.length / 5, name);
  });

  for (const [codec, how, base64] of REFERENCE) {
    it(`decompresses ${codec} from ${how}`, () => {
      assert.equal(decompress(codec as 'lz4', Buffer.from(base64, 'base64')).toString(), SAMPLE.toString());
    });
  }

  it('decompresses concatenated zstd frames', () => {
    const frame = Buffer.from(REFERENCE[3]![2], 'base64');
    assert.equal(decompress('zstd', Buffer.concat([frame, frame])).toString(), SAMPLE.toString() + SAMPLE.toString());
  });

  it('writes an LZ4 frame Kafka Java reads: independent blocks, no checksums, 64 KiB-4 MiB block size', () => {
    const frame = compress('lz4', SAMPLE);
    assert.equal(frame.readUInt32LE(0), 0x184d2204); // LZ4 frame magic
    const flg = frame[4]!;
    assert.equal(flg >> 6, 1); // version 01
    assert.equal((flg >> 5) & 1, 1); // block independence
    const bd = (frame[5]! >> 4) & 7;
    assert.ok(bd >= 4 && bd <= 7);
  });

  describe('snappy', () => {
    it('writes xerial framing: magic, version 1, compatible version 1, then sized blocks of at most 32 KiB', () => {
      const data = randomBytes(100 * 1024);
      const framed = compress('snappy', data);
      assert.ok(isXerialFramed(framed));
      assert.ok(framed.subarray(0, 8).equals(XERIAL_MAGIC));
      assert.equal(framed.readInt32BE(8), 1);
      assert.equal(framed.readInt32BE(12), 1);
      let position = 16;
      let blocks = 0;
      while (position < framed.length) {
        position += 4 + framed.readInt32BE(position);
        blocks++;
      }
      assert.equal(position, framed.length);
      assert.equal(blocks, 4); // 100 KiB in 32 KiB blocks
    });

    it('reads raw (unframed) snappy, as librdkafka writes it', () => {
      // A kcat -z snappy batch's records section: 3 records k1..k3 -> kcat-snappy-1..3.
      const raw = Buffer.from(
        'QnAqAAAABGsxGmtjYXQtc25hcHB5LTEAKgAAAgRrMjIWAAAyARZIBARrMxprY2F0LXNuYXBweS0zAA==',
        'base64',
      );
      assert.equal(isXerialFramed(raw), false);
      const records = decompress('snappy', raw);
      assert.equal(records.length, 66);
      assert.ok(records.includes(Buffer.from('kcat-snappy-2')));
    });

    it('reads an empty xerial stream and rejects a truncated one', () => {
      const header = compress('snappy', Buffer.alloc(0));
      assert.equal(header.length, 16);
      assert.equal(decompress('snappy', header).length, 0);
      const framed = compress('snappy', SAMPLE);
      assert.throws(() => decompress('snappy', framed.subarray(0, framed.length - 3)), ProtocolError);
      assert.throws(() => decompress('snappy', framed.subarray(0, 18)), ProtocolError);
    });
  });

  it('reports corrupt input as ProtocolError', () => {
    for (const name of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
      assert.throws(() => decompress(name, Buffer.from('definitely not compressed data')), ProtocolError, name);
    }
  });

  it('maps names and ids like Kafka', () => {
    assert.deepEqual(COMPRESSION_NAMES.map(codecFromName), [0, 1, 2, 3, 4]);
    assert.equal(codecName(3), 'lz4');
    assert.throws(() => codecFromName('brotli'), RangeError);
    assert.throws(() => codecName(5), RangeError);
    assert.throws(() => compress(7, SAMPLE), RangeError);
  });
});
