import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { levenshteinDistance, nearestKey } from '../../../src/config/nearest-key';

describe('levenshteinDistance', () => {
  it('counts insertions, deletions and substitutions', () => {
    assert.equal(levenshteinDistance('', ''), 0);
    assert.equal(levenshteinDistance('abc', ''), 3);
    assert.equal(levenshteinDistance('', 'abc'), 3);
    assert.equal(levenshteinDistance('kitten', 'sitting'), 3);
    assert.equal(levenshteinDistance('num.partition', 'num.partitions'), 1);
    assert.equal(levenshteinDistance('flaw', 'lawn'), 2);
  });

  it('is symmetric', () => {
    assert.equal(levenshteinDistance('log.dirs', 'logdir'), levenshteinDistance('logdir', 'log.dirs'));
  });
});

describe('nearestKey', () => {
  it('picks the closest candidate, the earlier one on a tie', () => {
    assert.equal(nearestKey('log.dirz', ['log.dir', 'log.dirs']), 'log.dir');
    assert.equal(nearestKey('num.io.thread', ['num.network.threads', 'num.io.threads']), 'num.io.threads');
  });

  it('throws without candidates', () => {
    assert.throws(() => nearestKey('x', []));
  });
});
