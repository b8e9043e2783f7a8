import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeSourceOffset, encodeSourceOffset, MirrorOffsetMap } from '../../../src/cli/mirror-offset-map';

describe('MirrorOffsetMap', () => {
  it('keeps an uncompacted copy as one run and translates offset for offset', () => {
    const map = new MirrorOffsetMap();
    for (let i = 0; i < 10; i++) map.record(100 + i, i);
    assert.equal(map.runCount, 1);
    assert.equal(map.lastSourceOffset, 109);
    assert.equal(map.lastTargetOffset, 9);
    assert.equal(map.translate(0, 10), 0, 'before the copied range (log start moved): the first copied record');
    assert.equal(map.translate(104, 10), 4);
    assert.equal(map.translate(109, 10), 9);
    assert.equal(map.translate(110, 10), 10, 'past every copied record: the target log-end offset');
  });

  it('maps a committed offset inside a compaction gap to the next copied record', () => {
    const map = new MirrorOffsetMap();
    [3, 4, 9, 15, 16, 17, 30].forEach((source, target) => map.record(source, target));
    assert.equal(map.runCount, 4);
    assert.equal(map.translate(5, 7), 2, 'gap 5-8: source 9 at target 2');
    assert.equal(map.translate(9, 7), 2);
    assert.equal(map.translate(10, 7), 3);
    assert.equal(map.translate(17, 7), 5);
    assert.equal(map.translate(18, 7), 6);
    assert.equal(map.translate(31, 7), 7);
  });

  it('an empty map translates everything to the target end', () => {
    const map = new MirrorOffsetMap();
    assert.equal(map.lastSourceOffset, -1);
    assert.equal(map.translate(0, 0), 0);
    assert.equal(map.translate(42, 5), 5);
  });

  it('refuses offsets out of order', () => {
    const map = new MirrorOffsetMap();
    map.record(5, 0);
    assert.throws(() => map.record(5, 1), /source offset 5 after 5/);
    assert.throws(() => map.record(6, 0), /target offset 0 after 0/);
  });

  it('agrees with a linear search over any increasing mapping (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 3 })), { maxLength: 60 }),
        fc.integer({ min: 0, max: 400 }),
        (steps, committed) => {
          const map = new MirrorOffsetMap();
          const pairs: Array<[number, number]> = [];
          let source = -1;
          let target = -1;
          for (const [ds, dt] of steps) {
            source += ds;
            target += dt;
            map.record(source, target);
            pairs.push([source, target]);
          }
          const end = target + 1;
          const expected = pairs.find(([s]) => s >= committed)?.[1] ?? end;
          assert.equal(map.translate(committed, end), expected);
        },
      ),
    );
  });
});

describe('source offset header value', () => {
  it('round-trips and rejects what is not a decimal offset', () => {
    assert.equal(decodeSourceOffset(encodeSourceOffset(0)), 0);
    assert.equal(decodeSourceOffset(encodeSourceOffset(123456789012)), 123456789012);
    assert.equal(decodeSourceOffset(null), null);
    assert.equal(decodeSourceOffset(Buffer.from('-1')), null);
    assert.equal(decodeSourceOffset(Buffer.from('12a')), null);
    assert.equal(decodeSourceOffset(Buffer.from('')), null);
  });
});
