import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { createSeededRandom, createSystemRandom } from '../../../src/io/random';

test('seeded random replays and seeds differ', () => {
  const a = createSeededRandom(42);
  const b = createSeededRandom(42);
  const c = createSeededRandom(43);
  const seqA = Array.from({ length: 20 }, () => a.nextUint32());
  assert.deepEqual(
    seqA,
    Array.from({ length: 20 }, () => b.nextUint32()),
  );
  assert.notDeepEqual(
    seqA,
    Array.from({ length: 20 }, () => c.nextUint32()),
  );
  assert.notDeepEqual(createSeededRandom(0).bytes16(), Buffer.alloc(16));
  assert.notDeepEqual(createSeededRandom(2 ** 40).bytes16(), createSeededRandom(0).bytes16());
});

test('next, int and bytes16 stay in range', () => {
  const random = createSeededRandom(7);
  const counts = new Array<number>(5).fill(0);
  for (let i = 0; i < 5000; i++) {
    const x = random.next();
    assert.ok(x >= 0 && x < 1);
    const k = random.int(5);
    assert.ok(Number.isInteger(k) && k >= 0 && k < 5);
    counts[k] = (counts[k] as number) + 1;
  }
  for (const count of counts) assert.ok(count > 800 && count < 1200, `roughly uniform: ${counts.join(',')}`);
  assert.equal(random.int(1), 0);
  assert.throws(() => random.int(0));
  assert.throws(() => random.int(1.5));
  assert.equal(random.bytes16().length, 16);
  assert.notDeepEqual(createSystemRandom().bytes16(), createSystemRandom().bytes16());
});
