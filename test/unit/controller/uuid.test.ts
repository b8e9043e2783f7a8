/**
 * Kafka-style UUIDs (src/controller/uuid.ts): 16 random bytes as 22 characters of base64url without
 * padding, as Kafka's Uuid.toString; like Uuid.randomUuid, ids starting with '-' and the reserved zero
 * and one ids are drawn again.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ONE_UUID, ZERO_UUID, randomUuid } from '../../../src/controller/uuid';
import { Xoshiro128 } from '../../../src/io/random';
import type { Random } from '../../../src/io/random';

/** A Random whose bytes16 hands out `draws` in order (next and int are unused by randomUuid). */
function scripted(draws: Buffer[]): Random & { drawn: number } {
  const random = {
    drawn: 0,
    next: () => assert.fail('next is not used'),
    int: () => assert.fail('int is not used'),
    bytes16: () => {
      const draw = draws[random.drawn++];
      assert.ok(draw !== undefined, 'no more scripted draws');
      return Buffer.from(draw);
    },
  };
  return random;
}

describe('uuid', () => {
  test('the reserved ids are the base64url of 0 and 1 (Kafka Uuid.ZERO_UUID, Uuid.ONE_UUID)', () => {
    assert.equal(ZERO_UUID, Buffer.alloc(16).toString('base64url'));
    const one = Buffer.alloc(16);
    one[15] = 1;
    assert.equal(ONE_UUID, one.toString('base64url'));
  });

  test('ids are 22 base64url characters that decode to 16 bytes, never starting with "-"', () => {
    const random = new Xoshiro128(42);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = randomUuid(random);
      assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      assert.equal(Buffer.from(id, 'base64url').length, 16);
      assert.equal(Buffer.from(id, 'base64url').toString('base64url'), id, 'canonical encoding');
      seen.add(id);
    }
    assert.equal(seen.size, 2000, 'no repeats');
  });

  test('the zero id, the one id and ids starting with "-" are drawn again', () => {
    const one = Buffer.alloc(16);
    one[15] = 1;
    const dash = Buffer.alloc(16, 0x11);
    dash[0] = 0xf8; // top six bits 111110 = 62, base64url '-'
    const good = Buffer.alloc(16, 0x22);
    const random = scripted([Buffer.alloc(16), one, dash, good]);
    assert.ok(dash.toString('base64url').startsWith('-'));
    assert.equal(randomUuid(random), good.toString('base64url'));
    assert.equal(random.drawn, 4);
  });

  test('the same seed gives the same ids', () => {
    const a = new Xoshiro128(7);
    const b = new Xoshiro128(7);
    for (let i = 0; i < 10; i++) assert.equal(randomUuid(a), randomUuid(b));
  });
});
