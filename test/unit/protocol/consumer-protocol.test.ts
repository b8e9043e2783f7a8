/**
 * The consumer protocol's opaque bytes (ConsumerProtocolAssignment / ConsumerProtocolSubscription):
 * hand-laid bytes in Kafka's layout decode to the right values, encodings round-trip, and truncated
 * bytes are refused.
 */
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProtocolError } from '../../../src/protocol/primitives';
import {
  decodeConsumerAssignment,
  decodeConsumerSubscription,
  encodeConsumerAssignment,
  encodeConsumerSubscription,
  formatAssignment,
} from '../../../src/protocol/consumer-protocol';

const i16 = (v: number): number[] => [(v >> 8) & 0xff, v & 0xff];
const i32 = (v: number): number[] => [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
const str = (s: string): number[] => [...i16(Buffer.byteLength(s)), ...Buffer.from(s)];

describe('consumer protocol bytes', () => {
  test('an assignment laid out as ConsumerProtocolAssignment v1 decodes topics, partitions (sorted) and user data', () => {
    const bytes = Buffer.from([
      ...i16(1),
      ...i32(2),
      ...str('orders'),
      ...i32(3),
      ...i32(5),
      ...i32(0),
      ...i32(2),
      ...str('audit'),
      ...i32(1),
      ...i32(7),
      ...i32(2),
      0x68,
      0x69,
    ]);
    const a = decodeConsumerAssignment(bytes);
    assert.equal(a.version, 1);
    assert.deepEqual(
      [...a.partitions],
      [
        ['audit', [7]],
        ['orders', [0, 2, 5]],
      ],
    );
    assert.deepEqual(a.userData, Buffer.from('hi'));
    assert.equal(formatAssignment(a.partitions), 'audit:7 orders:0,2,5');
  });

  test('an empty assignment (a member not yet synced) and a null user data', () => {
    assert.deepEqual(decodeConsumerAssignment(Buffer.alloc(0)).partitions.size, 0);
    const a = decodeConsumerAssignment(Buffer.from([...i16(0), ...i32(0), ...i32(-1)]));
    assert.equal(a.partitions.size, 0);
    assert.equal(a.userData, null);
    assert.equal(formatAssignment(a.partitions), '-');
  });

  test('a v3 subscription decodes topics, user data, owned partitions, generation and rack', () => {
    const bytes = Buffer.from([
      ...i16(3),
      ...i32(2),
      ...str('a'),
      ...str('b'),
      ...i32(-1),
      ...i32(1),
      ...str('a'),
      ...i32(1),
      ...i32(4),
      ...i32(12),
      ...str('rack-1'),
    ]);
    const s = decodeConsumerSubscription(bytes);
    assert.deepEqual(s, {
      version: 3,
      topics: ['a', 'b'],
      userData: null,
      ownedPartitions: new Map([['a', [4]]]),
      generationId: 12,
      rackId: 'rack-1',
    });
  });

  test('encodings round-trip', () => {
    const partitions = new Map([
      ['t', [0, 1, 3]],
      ['u', [2]],
    ]);
    const a = decodeConsumerAssignment(encodeConsumerAssignment(partitions, Buffer.from('x')));
    assert.deepEqual([a.version, [...a.partitions], a.userData], [0, [...partitions], Buffer.from('x')]);
    const s = decodeConsumerSubscription(encodeConsumerSubscription(['t', 'u'], null));
    assert.deepEqual(
      [s.version, s.topics, s.userData, s.ownedPartitions.size, s.generationId, s.rackId],
      [0, ['t', 'u'], null, 0, -1, null],
    );
  });

  test('truncated bytes are refused with ProtocolError', () => {
    const full = encodeConsumerAssignment(new Map([['topic', [1, 2]]]));
    for (const cut of [1, 5, 9, full.length - 6])
      assert.throws(() => decodeConsumerAssignment(full.subarray(0, cut)), ProtocolError, `cut at ${cut}`);
    assert.throws(() => decodeConsumerSubscription(Buffer.from([...i16(0), ...i32(3), ...str('a')])), ProtocolError);
  });
});
