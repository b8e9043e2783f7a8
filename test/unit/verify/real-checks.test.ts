/**
 * The checks of a real run (src/verify/real/checks.ts, log-matching.ts) have teeth: fed client
 * observations with a lost acks=all record, a duplicated idempotent record, a read offset going back,
 * a gap in the final read, a commit the coordinator forgot, or diverging replica logs, each reports
 * the violation naming partition, offset and value; fed clean observations, none.
 */
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import {
  checkDenseRead,
  checkGroup,
  checkMemberOrder,
  checkProducer,
  newTally,
  type GroupObservation,
  type ProducerObservation,
  type TopicRead,
} from '../../../src/verify/real/checks';
import { checkLogMatching, prefixBelow } from '../../../src/verify/real/log-matching';

/** A final read of one partition (0) holding `values` at offsets 0.. */
function readOf(topic: string, values: string[]): TopicRead {
  return {
    topic,
    partitions: new Map([[0, values.map((value, offset) => ({ offset, value }))]]),
    endOffsets: new Map([[0, values.length]]),
    logStartOffsets: new Map([[0, 0]]),
  };
}

const acked = (values: string[]): ProducerObservation['acked'] =>
  values.map((value, offset) => ({ value, partition: 0, offset }));

describe('real-run checks', () => {
  test('clean observations: checks counted, no violation, nothing lost', () => {
    const tally = newTally();
    const obs: ProducerObservation = {
      strategy: 'acks=all idempotent',
      topic: 't',
      acked: acked(['a', 'b', 'c']),
      failed: 1,
    };
    const counts = checkProducer(obs, readOf('t', ['a', 'b', 'c']), tally);
    checkDenseRead(readOf('t', ['a', 'b', 'c']), tally);
    assert.deepEqual(counts, { strategy: 'acks=all idempotent', records: 3, lost: 0, duplicated: 0 });
    assert.deepEqual(tally.checks, { 'acks-all-durable': 3, 'idempotent-no-duplicate': 3, 'dense-offsets': 1 });
    assert.deepEqual(tally.violations, []);
  });

  test('a lost acks=all record is a violation naming partition, offset and value', () => {
    const tally = newTally();
    const obs: ProducerObservation = { strategy: 'acks=all', topic: 't', acked: acked(['a', 'b', 'c']), failed: 0 };
    const counts = checkProducer(obs, readOf('t', ['a', 'c']), tally);
    assert.deepEqual(counts, { strategy: 'acks=all', records: 3, lost: 2, duplicated: 0 });
    // b is gone; c moved from offset 2 to 1: both are no longer at their acknowledged offsets.
    assert.deepEqual(
      tally.violations.map((v) => [v.invariant, v.message]),
      [
        ['acks-all-durable', 'acks=all record acknowledged at t-0 offset 1 value b is lost (found at nowhere)'],
        ['acks-all-durable', 'acks=all record acknowledged at t-0 offset 2 value c is lost (found at 0@1)'],
      ],
    );
  });

  test('an acks=1 loss is counted, not a violation', () => {
    const tally = newTally();
    const obs: ProducerObservation = { strategy: 'acks=1', topic: 't', acked: acked(['a', 'b']), failed: 0 };
    assert.deepEqual(checkProducer(obs, readOf('t', ['a']), tally), {
      strategy: 'acks=1',
      records: 2,
      lost: 1,
      duplicated: 0,
    });
    assert.deepEqual(tally.violations, []);
    assert.deepEqual(tally.checks, {});
  });

  test('a duplicated idempotent record is a violation', () => {
    const tally = newTally();
    const obs: ProducerObservation = {
      strategy: 'acks=all idempotent',
      topic: 't',
      acked: acked(['a', 'b']),
      failed: 0,
    };
    const counts = checkProducer(obs, readOf('t', ['a', 'b', 'b']), tally);
    assert.deepEqual(counts, { strategy: 'acks=all idempotent', records: 2, lost: 0, duplicated: 1 });
    assert.equal(tally.violations.length, 1);
    assert.equal(tally.violations[0]?.invariant, 'idempotent-no-duplicate');
    assert.equal(tally.violations[0]?.message, 'idempotent record t-0 offset 1 value b is stored 2 times (0@1, 0@2)');
  });

  test('a read offset going back within one assignment is a violation; a new assignment may start lower', () => {
    const tally = newTally();
    const rec = (offset: number) => ({ kind: 'record' as const, partition: 0, offset, value: `v${offset}` });
    const obs: GroupObservation = {
      strategy: 'commit-after-processing',
      group: 'g',
      topic: 't',
      members: [
        [
          { kind: 'assigned', partitions: [0] },
          rec(0),
          rec(1),
          rec(2),
          { kind: 'assigned', partitions: [0] },
          rec(1),
          rec(0),
        ],
      ],
      acknowledgedCommits: new Map(),
    };
    checkMemberOrder(obs, tally);
    assert.equal(tally.checks['dense-offsets'], 3); // 0→1, 1→2, then 1→0 after the new assignment
    assert.deepEqual(
      tally.violations.map((v) => v.message),
      ['group g member process 0 read t-0 offset 0 (value v0) after offset 1'],
    );
  });

  test('a gap or a short end in the final read is a violation', () => {
    const tally = newTally();
    const read = readOf('t', ['a', 'b']);
    read.partitions.set(0, [
      { offset: 0, value: 'a' },
      { offset: 2, value: 'c' },
    ]);
    read.endOffsets.set(0, 3);
    checkDenseRead(read, tally);
    const short = readOf('u', ['a']);
    short.endOffsets.set(0, 2);
    checkDenseRead(short, tally);
    assert.deepEqual(
      tally.violations.map((v) => v.message),
      [
        't-0: the final read has offset 2 (value c) where 1 was next',
        'u-0: the final read ends at offset 1, the end offset is 2',
      ],
    );
  });

  test('group counts: lost when no member processed a record, duplicated when processed twice; a forgotten commit is a violation', () => {
    const tally = newTally();
    const rec = (offset: number) => ({ kind: 'record' as const, partition: 0, offset, value: `v${offset}` });
    const obs: GroupObservation = {
      strategy: 'commit-before-processing',
      group: 'g',
      topic: 't',
      members: [
        [rec(0), rec(1)],
        [rec(1), rec(3)],
      ],
      acknowledgedCommits: new Map([[0, 4]]),
    };
    const counts = checkGroup(obs, readOf('t', ['v0', 'v1', 'v2', 'v3']), new Map([[0, 2]]), tally);
    assert.deepEqual(counts, { strategy: 'commit-before-processing', records: 4, lost: 1, duplicated: 1 });
    assert.deepEqual(
      tally.violations.map((v) => [v.invariant, v.message]),
      [
        [
          'committed-offsets-durable',
          'group g t-0: a commit of offset 4 was acknowledged, the coordinator serves 2 after the run',
        ],
      ],
    );
    const fine = newTally();
    checkGroup(obs, readOf('t', ['v0', 'v1', 'v2', 'v3']), new Map([[0, 5]]), fine);
    assert.deepEqual(fine.violations, []);
    assert.equal(fine.checks['committed-offsets-durable'], 1);
  });

  test('log matching: identical prefixes below the HW pass; a diverging replica is a violation', () => {
    const batch = (base: number, value: string): Buffer =>
      buildRecordBatch([{ key: null, value: Buffer.from(value) }], { baseOffset: base });
    const log = Buffer.concat([batch(0, 'a'), batch(1, 'b')]);
    const other = Buffer.concat([batch(0, 'a'), batch(1, 'X')]);
    assert.equal((prefixBelow(log, 1) as Buffer).length, batch(0, 'a').length);
    const same = newTally();
    checkLogMatching(
      't',
      0,
      new Map([
        [0, log],
        [1, Buffer.concat([log, batch(2, 'c')])],
      ]),
      2,
      same,
    );
    assert.deepEqual(same.violations, []);
    assert.equal(same.checks['log-matching'], 1);
    const diff = newTally();
    checkLogMatching(
      't',
      0,
      new Map([
        [0, log],
        [1, other],
      ]),
      2,
      diff,
    );
    assert.equal(diff.violations.length, 1);
    assert.match(diff.violations[0]?.message ?? '', /^t-0 HW 2: brokers 0 and 1 differ below the HW from byte \d+/);
    const below = newTally();
    checkLogMatching(
      't',
      0,
      new Map([
        [0, log],
        [1, other],
      ]),
      1,
      below,
    );
    assert.deepEqual(below.violations, [], 'the replicas agree below HW 1');
  });
});
