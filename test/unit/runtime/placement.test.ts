import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { chooseWorker } from '../../../src/runtime/placement';

test('a worker of its own while the pool has one free, then the least-loaded', () => {
  assert.equal(chooseWorker([], 4), 0);
  assert.equal(chooseWorker([1], 4), 1);
  assert.equal(chooseWorker([1, 1, 1], 4), 3);
  assert.equal(chooseWorker([1, 0, 1], 4), 1, 'an idle existing worker first');
  assert.equal(chooseWorker([2, 1, 1, 1], 4), 1);
  assert.equal(chooseWorker([2, 2, 1, 2], 4), 2);
  assert.equal(chooseWorker([3], 1), 0);
  assert.throws(() => chooseWorker([], 0));
});

test('N actors on M < N workers spread evenly', () => {
  const loads: number[] = [];
  for (let i = 0; i < 11; i++) {
    const index = chooseWorker(loads, 4);
    loads[index] = (loads[index] ?? 0) + 1;
  }
  assert.deepEqual(loads, [3, 3, 3, 2]);
});
