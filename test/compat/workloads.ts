/**
 * The record sets the compat suites send, and the checks that compare what came back.
 */
import * as assert from 'node:assert/strict';
import { loadTextFixtureLines } from '../helpers/text-fixture';
import { assertDenseOffsets, assertSameRecords, record, recordDifference, type TestRecord } from './record-file';

/** Every line of the text fixture as a record value, in order; keys from `keyOf` (or null). */
export function fixtureRecords(keyOf: ((index: number, line: string) => string) | null = null): TestRecord[] {
  return loadTextFixtureLines().map((line, i) => record(keyOf === null ? null : keyOf(i, line), line));
}

/** Every byte value 0..255 (including NUL and newline), repeated `times`. */
function allBytes(times: number): Buffer {
  const b = Buffer.alloc(256 * times);
  for (let i = 0; i < b.length; i++) b[i] = i % 256;
  return b;
}

/**
 * Records that tell null from empty and keep bytes exact: null and empty keys and values in every
 * combination (both null only if `nullKeyAndValue`: kafka-python refuses that), binary and
 * multi-byte UTF-8 payloads, a 100 KiB value, and (when `headers`) headers with empty values,
 * null values if `nullHeaderValues`, and a repeated key if `repeatedHeaderKeys`.
 */
export function edgeCaseRecords(opts: {
  nullKeyAndValue: boolean;
  headers: boolean;
  nullHeaderValues: boolean;
  repeatedHeaderKeys: boolean;
}): TestRecord[] {
  const records = [
    record(null, ''),
    record('', null),
    record('', ''),
    record('key', ''),
    record('', 'value'),
    record(allBytes(1), allBytes(2)),
    record('ключ 🔑', 'значение ✓ \u0000 \n end'),
    record('big', allBytes(400)),
  ];
  if (opts.nullKeyAndValue) records.unshift(record(null, null));
  if (opts.headers) {
    records.push(
      record('h1', 'one header', [['trace-id', Buffer.from('abc-123')]]),
      record('h2', 'empty header value', [['empty', Buffer.alloc(0)]]),
      record('h3', 'binary header value', [
        ['bin', allBytes(1)],
        ['utf8 ключ', Buffer.from('✓')],
      ]),
      record('', null, [['tombstone-with-header', Buffer.from('x')]]),
    );
    if (opts.nullHeaderValues)
      records.push(
        record('h4', 'null header value', [
          ['null', null],
          ['after-null', Buffer.from('y')],
        ]),
      );
    if (opts.repeatedHeaderKeys)
      records.push(
        record('h5', 'repeated header key', [
          ['dup', Buffer.from('1')],
          ['other', Buffer.from('2')],
          ['dup', Buffer.from('3')],
        ]),
      );
  }
  return records;
}

/** `count` records from the fixture's lines with keys `key-<i % keyCount>` (for multi-partition runs). */
export function keyedFixtureRecords(count: number, keyCount: number): TestRecord[] {
  const lines = loadTextFixtureLines();
  assert.ok(count <= lines.length);
  return lines.slice(0, count).map((line, i) => record(`key-${i % keyCount}`, line));
}

/** Groups consumed records by partition (each group in consumption order). */
export function byPartition(records: readonly TestRecord[]): Map<number, TestRecord[]> {
  const groups = new Map<number, TestRecord[]>();
  for (const r of records) {
    const g = groups.get(r.partition);
    if (g === undefined) groups.set(r.partition, [r]);
    else g.push(r);
  }
  return groups;
}

/**
 * Checks a keyed multi-partition run: every key landed in exactly one partition, each partition
 * holds exactly the input records of its keys in input order (byte-equal, dense offsets from 0),
 * nothing is lost or duplicated, and more than one partition was used.
 */
export function assertPartitionedOrder(
  input: readonly TestRecord[],
  consumed: readonly TestRecord[],
  partitionCount: number,
  what: string,
): void {
  const groups = byPartition(consumed);
  const partitionOfKey = new Map<string, number>();
  for (const [partition, records] of groups) {
    assert.ok(
      partition >= 0 && partition < partitionCount,
      `${what}: record in partition ${partition} of ${partitionCount}`,
    );
    for (const r of records) {
      assert.ok(r.key !== null, `${what}: null key at partition ${partition} offset ${r.offset}`);
      const key = r.key.toString('hex');
      const seen = partitionOfKey.get(key);
      if (seen !== undefined && seen !== partition)
        assert.fail(`${what}: key ${r.key.toString()} in partitions ${seen} and ${partition}`);
      partitionOfKey.set(key, partition);
    }
  }
  let total = 0;
  for (const [partition, records] of groups) {
    const expected = input.filter((r) => r.key !== null && partitionOfKey.get(r.key.toString('hex')) === partition);
    assertDenseOffsets(records, `${what}, partition ${partition}`);
    assertSameRecords(records, expected, `${what}, partition ${partition}`);
    total += records.length;
  }
  assert.equal(total, input.length, `${what}: consumed ${total} records in all, produced ${input.length}`);
  assert.ok(groups.size > 1, `${what}: every record landed in one partition (${[...groups.keys()].join(',')})`);
}

/**
 * Checks the (partition, offset) a producer reported for each input record against what the
 * consumer got there: the ack points at the record that was produced.
 */
export function assertAcksMatch(
  input: readonly TestRecord[],
  acked: ReadonlyArray<readonly [number, number]>,
  consumed: readonly TestRecord[],
  what: string,
): void {
  assert.equal(acked.length, input.length, `${what}: ${acked.length} acks for ${input.length} records`);
  const at = new Map<string, TestRecord>();
  for (const r of consumed) at.set(`${r.partition}:${r.offset}`, r);
  for (let i = 0; i < input.length; i++) {
    const [partition, offset] = acked[i]!;
    const got = at.get(`${partition}:${offset}`);
    if (got === undefined) assert.fail(`${what}: record ${i} acked at ${partition}:${offset}, which no consumer saw`);
    const diff = recordDifference(got, input[i]!);
    if (diff !== null)
      assert.fail(`${what}: record ${i} acked at ${partition}:${offset}, which holds another record: ${diff}`);
  }
}
