import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { murmur2, partitionForKey, Partitioner, toPositive } from '../../../src/client/partitioner';

describe('murmur2', () => {
  // Kafka's UtilsTest.testMurmur2 vectors (clients/src/test/java/org/apache/kafka/common/utils).
  const kafkaVectors: Array<[Buffer, number]> = [
    [Buffer.from('21'), -973932308],
    [Buffer.from('foobar'), -790332482],
    [Buffer.from('a-little-bit-long-string'), -985981536],
    [Buffer.from('a-little-bit-longer-string'), -1486304829],
    [Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8'), -58897971],
    [Buffer.from([0x61, 0x62, 0x63]), 479470107],
  ];
  for (const [data, expected] of kafkaVectors) {
    it(`matches Kafka for ${JSON.stringify(data.toString())}`, () => assert.equal(murmur2(data), expected));
  }

  it('covers every tail length (0-3 bytes past a word) with values from Java', () => {
    // Kafka's Utils.murmur2 values as recorded in Akka's Murmur2Spec (Kafka-compatible sharding).
    assert.equal(murmur2(Buffer.from('1')), -1993445489);
    assert.equal(murmur2(Buffer.from('12')), 126087238);
    assert.equal(murmur2(Buffer.from('123')), -267702483);
    assert.equal(murmur2(Buffer.from('1234')), -1614185708);
    assert.equal(murmur2(Buffer.from('12345')), -1188365604);
  });

  it('hashes the empty key', () => {
    assert.equal(typeof murmur2(Buffer.alloc(0)), 'number');
    assert.equal(murmur2(Buffer.alloc(0)), murmur2(new Uint8Array(0)));
  });
});

describe('partitionForKey', () => {
  it('is toPositive(murmur2(key)) % numPartitions', () => {
    for (const key of ['21', 'foobar', 'abc', 'k1', 'k2', 'k3']) {
      for (const n of [1, 2, 3, 7, 100])
        assert.equal(partitionForKey(Buffer.from(key), n), toPositive(murmur2(Buffer.from(key))) % n);
    }
    // 'foobar' hashes negative: toPositive clears the sign bit, it does not negate.
    assert.equal(toPositive(-790332482), -790332482 & 0x7fffffff);
    assert.equal(toPositive(-2147483648), 0);
  });

  it('rejects a partition count below 1', () => {
    assert.throws(() => partitionForKey(Buffer.from('a'), 0), RangeError);
  });
});

describe('Partitioner', () => {
  it('keeps keyless records on one partition until its batch closes, then moves to another', () => {
    const randoms = [0.5, 0.0, 0.99];
    const p = new Partitioner('sticky', () => randoms.shift() ?? 0);
    const first = p.partition(null, 4);
    assert.equal(first, 2);
    assert.equal(p.partition(null, 4), 2);
    p.onBatchClosed(1, 4); // another partition's batch: no move
    assert.equal(p.partition(null, 4), 2);
    p.onBatchClosed(2, 4);
    const second = p.partition(null, 4);
    assert.notEqual(second, 2);
    p.onBatchClosed(second, 4);
    assert.notEqual(p.partition(null, 4), second);
  });

  it('round-robins keyless records and hashes keyed ones', () => {
    const p = new Partitioner('round-robin');
    assert.deepEqual(
      [0, 1, 2, 3].map(() => p.partition(null, 3)),
      [0, 1, 2, 0],
    );
    assert.equal(p.partition(Buffer.from('foobar'), 3), partitionForKey(Buffer.from('foobar'), 3));
  });
});
