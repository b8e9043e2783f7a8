/**
 * ResponseBufferPool (src/network/response-buffers.ts): a lease is exactly the size asked; a released
 * buffer is lent again for the next lease of its size class and never while leased; releases of
 * foreign buffers and second releases change nothing; sizes outside the pooled range and releases
 * beyond the free-bytes cap are not kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_FREE_BYTES,
  MAX_POOLED_BYTES,
  MIN_POOLED_BYTES,
  ResponseBufferPool,
} from '../../../src/network/response-buffers';

describe('ResponseBufferPool', () => {
  it('leases exactly the size asked and lends a released buffer again for its size class', () => {
    const pool = new ResponseBufferPool();
    const a = pool.lease(100_000);
    assert.equal(a.length, 100_000);
    assert.equal(pool.isLeased(a), true);
    const b = pool.lease(100_000);
    assert.notEqual(b.buffer, a.buffer, 'a leased buffer is never lent twice');
    pool.release(a);
    assert.equal(pool.isLeased(a), false);
    assert.equal(pool.freeBytesHeld(), 131_072, 'rounded up to the power of two');
    const c = pool.lease(70_000); // same class: 2^17
    assert.equal(c.length, 70_000);
    assert.equal(c.buffer, a.buffer, 'the released memory is reused');
    assert.equal(pool.freeBytesHeld(), 0);
    const d = pool.lease(200_000); // another class: fresh memory
    assert.notEqual(d.buffer, a.buffer);
    assert.notEqual(d.buffer, b.buffer);
  });

  it('ignores buffers it did not lend and second releases', () => {
    const pool = new ResponseBufferPool();
    pool.release(Buffer.alloc(MIN_POOLED_BYTES));
    assert.equal(pool.freeBytesHeld(), 0);
    const a = pool.lease(MIN_POOLED_BYTES);
    pool.release(a);
    pool.release(a);
    assert.equal(pool.freeBytesHeld(), MIN_POOLED_BYTES, 'held once');
    const b = pool.lease(MIN_POOLED_BYTES);
    const c = pool.lease(MIN_POOLED_BYTES);
    assert.equal(b.buffer, a.buffer);
    assert.notEqual(c.buffer, a.buffer, 'a double release did not make two leases share memory');
  });

  it('does not pool sizes outside its range', () => {
    const pool = new ResponseBufferPool();
    for (const size of [0, 1, MIN_POOLED_BYTES - 1, MAX_POOLED_BYTES + 1]) {
      const buf = pool.lease(size);
      assert.equal(buf.length, size);
      assert.equal(pool.isLeased(buf), false, `${size} bytes: a plain allocation`);
      pool.release(buf);
      assert.equal(pool.freeBytesHeld(), 0);
    }
  });

  it('keeps at most MAX_FREE_BYTES of free buffers', () => {
    const pool = new ResponseBufferPool();
    const leases = Array.from({ length: MAX_FREE_BYTES / MAX_POOLED_BYTES + 2 }, () => pool.lease(MAX_POOLED_BYTES));
    for (const l of leases) pool.release(l);
    assert.equal(pool.freeBytesHeld(), MAX_FREE_BYTES);
    assert.equal(leases.filter((l) => pool.isLeased(l)).length, 0, 'every lease counts as released');
  });
});
