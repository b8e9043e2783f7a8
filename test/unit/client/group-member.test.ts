import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rangeAssign } from '../../../src/client/group-member';

const plain = (m: Map<string, Map<string, number[]>>) =>
  Object.fromEntries([...m].map(([id, a]) => [id, Object.fromEntries(a)]));

describe('rangeAssign (Kafka RangeAssignor)', () => {
  it('gives each member a consecutive run, the first partitions % members one more, members by id', () => {
    // RangeAssignor's javadoc example: t0 and t1 with 3 partitions each, members C0 and C1.
    const subs = new Map([
      ['C1', ['t0', 't1']],
      ['C0', ['t0', 't1']],
    ]);
    const counts = new Map([
      ['t0', 3],
      ['t1', 3],
    ]);
    assert.deepEqual(plain(rangeAssign(subs, counts)), {
      C0: { t0: [0, 1], t1: [0, 1] },
      C1: { t0: [2], t1: [2] },
    });
  });

  it('leaves members beyond the partition count empty, and splits per topic among its subscribers only', () => {
    const subs = new Map([
      ['a', ['x']],
      ['b', ['x', 'y']],
      ['c', ['x']],
    ]);
    const counts = new Map([
      ['x', 2],
      ['y', 4],
    ]);
    assert.deepEqual(plain(rangeAssign(subs, counts)), {
      a: { x: [0] },
      b: { x: [1], y: [0, 1, 2, 3] },
      c: {},
    });
  });

  it('assigns every partition exactly once', () => {
    for (let members = 1; members <= 7; members++) {
      for (let partitions = 0; partitions <= 10; partitions++) {
        const subs = new Map(Array.from({ length: members }, (_, i) => [`m${i}`, ['t']] as [string, string[]]));
        const got = [...rangeAssign(subs, new Map([['t', partitions]])).values()].flatMap((a) => a.get('t') ?? []);
        assert.deepEqual(
          got.sort((x, y) => x - y),
          Array.from({ length: partitions }, (_, i) => i),
        );
      }
    }
  });
});
