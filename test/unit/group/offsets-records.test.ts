/**
 * __consumer_offsets records: group placement matches Kafka's (values computed with Java 17's
 * String.hashCode and Kafka's Utils.abs), and keys/values round-trip in Kafka's layout (checked
 * byte for byte for the version prefix and a hand-built key).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeGroupMetadataValue,
  decodeOffsetCommitValue,
  decodeOffsetsKey,
  groupMetadataKey,
  groupMetadataValue,
  javaStringHashCode,
  offsetCommitKey,
  offsetCommitValue,
  offsetsPartitionFor,
} from '../../../src/group/offsets-records';
import { Writer } from '../../../src/protocol/writer';

describe('__consumer_offsets placement', () => {
  // group, Java hashCode, abs(hash) % 50 — printed by a Java 17 program (see the commit message).
  const JAVA: [string, number, number][] = [
    ['test-group', 627841412, 12],
    ['grpA', 3181564, 14],
    ['polygenelubricants', -2147483648, 0],
    ['console-consumer-12345', 158455506, 6],
    ['ünïcødé-grøup', 1068704242, 42],
    ['x', 120, 20],
    ['negative-hash-group-0001', -1441396970, 20],
    ['consumer-group-with-a-long-name', -1157546098, 48],
  ];
  for (const [group, hash, partition] of JAVA) {
    test(`${group} -> partition ${partition}`, () => {
      assert.equal(javaStringHashCode(group), hash);
      assert.equal(offsetsPartitionFor(group, 50), partition);
    });
  }
});

describe('__consumer_offsets key/value layout', () => {
  test('an offset commit key is int16 version 1, then group, topic, partition as classic strings', () => {
    const key = offsetCommitKey('g', 'topic', 7);
    const w = new Writer();
    w.int16(1);
    w.string('g');
    w.string('topic');
    w.int32(7);
    assert.deepEqual(key, w.finish());
    assert.deepEqual(decodeOffsetsKey(key), { kind: 'offset', group: 'g', topic: 'topic', partition: 7 });
  });

  test('a version 0 offset key (older Kafka) decodes too; a group key is version 2; KIP-848 keys are skipped', () => {
    const w = new Writer();
    w.int16(0);
    w.string('old');
    w.string('t');
    w.int32(0);
    assert.deepEqual(decodeOffsetsKey(w.finish()), { kind: 'offset', group: 'old', topic: 't', partition: 0 });
    assert.equal(groupMetadataKey('g').readInt16BE(0), 2);
    assert.deepEqual(decodeOffsetsKey(groupMetadataKey('grp')), { kind: 'group', group: 'grp' });
    const newer = new Writer();
    newer.int16(3);
    newer.string('g');
    assert.equal(decodeOffsetsKey(newer.finish()), null);
  });

  test('offset commit values round-trip at version 3 with leader epoch and metadata', () => {
    const value = offsetCommitValue({
      offset: 123456789012,
      leaderEpoch: 5,
      metadata: 'meta',
      commitTimestamp: 1_700_000_000_123,
    });
    assert.equal(value.readInt16BE(0), 3);
    const decoded = decodeOffsetCommitValue(value);
    assert.equal(decoded.offset, 123456789012);
    assert.equal(decoded.leaderEpoch, 5);
    assert.equal(decoded.metadata, 'meta');
    assert.equal(decoded.commitTimestamp, 1_700_000_000_123);
  });

  test('group metadata values round-trip with static members, subscription and assignment bytes', () => {
    const value = groupMetadataValue({
      protocolType: 'consumer',
      generation: 4,
      protocol: 'range',
      leader: 'm1',
      currentStateTimestamp: 99,
      members: [
        {
          memberId: 'm1',
          groupInstanceId: 'i1',
          clientId: 'c',
          clientHost: '/127.0.0.1',
          rebalanceTimeout: 300000,
          sessionTimeout: 45000,
          subscription: Buffer.from([1, 2]),
          assignment: Buffer.from([3]),
        },
      ],
    });
    assert.equal(value.readInt16BE(0), 3);
    const decoded = decodeGroupMetadataValue(value);
    assert.equal(decoded.generation, 4);
    assert.equal(decoded.leader, 'm1');
    assert.equal(decoded.members[0]!.groupInstanceId, 'i1');
    assert.deepEqual([...decoded.members[0]!.subscription], [1, 2]);
    assert.deepEqual([...decoded.members[0]!.assignment], [3]);
  });
});
