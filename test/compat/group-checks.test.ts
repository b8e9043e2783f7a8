/**
 * The checks of group-scenarios.ts judged on made-up member events (no broker): a correct run
 * passes, and each fault the group suites must catch fails it with its own message: a lost record,
 * a taker that skips past or re-reads below the leaver's commit, a partition read by both members
 * while both were in the group, a gap inside one member's reads, a duplicate below a commit, a
 * second group that misses a record or starts past offset 0, a split that is not 3 + 3.
 */
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { GroupMember, MemberEvent } from './group-members';
import { checkSplitAndTakeover, NumberedRecords, PARTITIONS, type SplitRun } from './group-scenarios';

/** 10 records per partition: offsets 0..4 produced before the leave, 5..9 after. */
const PER_PARTITION = 10;

function fakeMember(name: string, events: MemberEvent[], commitsOnClose = false): GroupMember {
  return {
    name,
    events,
    commitsOnClose,
    stop: async () => undefined,
    kill: () => undefined,
    output: () => '',
    failure: () => null,
  };
}

function fakeRecords(): NumberedRecords {
  const r = new NumberedRecords();
  for (let p = 0; p < PARTITIONS; p++) {
    for (let o = 0; o < PER_PARTITION; o++) r.values.set(`${p}:${o}`, `v${p}-${o}`);
    r.endOffsets[p] = PER_PARTITION;
  }
  (r as unknown as { next: number }).next = PARTITIONS * PER_PARTITION;
  return r;
}

function reads(partition: number, from: number, to: number): Array<[number, number, string]> {
  const out: Array<[number, number, string]> = [];
  for (let o = from; o < to; o++) out.push([partition, o, `v${partition}-${o}`]);
  return out;
}

/**
 * A correct run: member-1 owns 0-2, reads 0..4 of each and commits 5 but read 5 of partition 0
 * past its commit (the uncommitted tail); member-2 owns 3-5, reads 0..4, then takes over and reads
 * 0-2 from 5 (partition 0 from 5 again: an allowed duplicate) and everything to 10.
 */
function goodRun(): {
  leaver: MemberEvent[];
  stayerBefore: MemberEvent[];
  stayerAfter: MemberEvent[];
  reader: MemberEvent[];
} {
  const t = 0;
  const leaver: MemberEvent[] = [
    { ev: 'assigned', partitions: [0, 1, 2], t },
    { ev: 'records', records: [...reads(0, 0, 5), ...reads(1, 0, 5), ...reads(2, 0, 5)], t },
    { ev: 'committed', offsets: { 0: 5, 1: 5, 2: 5 }, t },
    { ev: 'records', records: reads(0, 5, 6), t },
    { ev: 'closed', t },
  ];
  const stayerBefore: MemberEvent[] = [
    { ev: 'assigned', partitions: [3, 4, 5], t },
    { ev: 'records', records: [...reads(3, 0, 5), ...reads(4, 0, 5), ...reads(5, 0, 5)], t },
    { ev: 'committed', offsets: { 3: 5, 4: 5, 5: 5 }, t },
  ];
  const stayerAfter: MemberEvent[] = [
    { ev: 'assigned', partitions: [0, 1, 2, 3, 4, 5], t },
    { ev: 'records', records: [0, 1, 2, 3, 4, 5].flatMap((p) => reads(p, 5, 10)), t },
    { ev: 'closed', t },
  ];
  const reader: MemberEvent[] = [
    { ev: 'assigned', partitions: [0, 1, 2, 3, 4, 5], t },
    { ev: 'records', records: [0, 1, 2, 3, 4, 5].flatMap((p) => reads(p, 0, 10)), t },
    { ev: 'closed', t },
  ];
  return { leaver, stayerBefore, stayerAfter, reader };
}

function toRun(e: ReturnType<typeof goodRun>, split = { leaver: [0, 1, 2], stayer: [3, 4, 5] }): SplitRun {
  return {
    leaver: fakeMember('member-1', e.leaver),
    stayer: fakeMember('member-2', [...e.stayerBefore, ...e.stayerAfter]),
    reader: fakeMember('second-group', e.reader),
    split,
    stayerEventsBeforeLeave: e.stayerBefore.length,
    records: fakeRecords(),
    leftAt: 0,
  };
}

/** Replaces member-2's takeover reads of `partition` with offsets from..to. */
function takeoverReads(e: ReturnType<typeof goodRun>, partition: number, from: number, to: number): void {
  const ev = e.stayerAfter[1]!;
  assert.ok(ev.ev === 'records');
  ev.records = [...ev.records.filter(([p]) => p !== partition), ...reads(partition, from, to)];
}

describe('group scenario checks (made-up events, no broker)', () => {
  test("a correct run passes, including a duplicate in the leaver's uncommitted tail", () => {
    checkSplitAndTakeover(toRun(goodRun()), 'good run');
  });

  test('a lost record fails', () => {
    const e = goodRun();
    takeoverReads(e, 4, 5, 9); // offset 9 of partition 4 never read
    assert.throws(() => checkSplitAndTakeover(toRun(e), 'lost'), /1 records read by no member/);
  });

  test('a taker that starts past the committed offset (a skipped record) fails', () => {
    const e = goodRun();
    takeoverReads(e, 1, 6, 10);
    assert.throws(
      () => checkSplitAndTakeover(toRun(e), 'skip'),
      /first offset on partition 1 vs member-1's committed offset/,
    );
  });

  test('a taker that starts below the committed offset (re-reading committed records) fails', () => {
    const e = goodRun();
    takeoverReads(e, 2, 3, 10);
    assert.throws(() => checkSplitAndTakeover(toRun(e), 're-read'), /first offset on partition 2/);
  });

  test('a partition read by both members while both were in the group fails', () => {
    const e = goodRun();
    e.stayerBefore.push({ ev: 'records', records: reads(1, 0, 1), t: 0 });
    assert.throws(() => checkSplitAndTakeover(toRun(e), 'both'), /partition 1 was read by both members/);
  });

  test("a gap inside one member's reads fails", () => {
    const e = goodRun();
    const ev = e.stayerBefore[1]!;
    assert.ok(ev.ev === 'records');
    ev.records = ev.records.filter(([p, o]) => !(p === 3 && o === 2));
    assert.throws(() => checkSplitAndTakeover(toRun(e), 'gap'), /read partition 3 offset 3 after offset 1/);
  });

  test('a wrong value at an offset fails', () => {
    const e = goodRun();
    const ev = e.stayerAfter[1]!;
    assert.ok(ev.ev === 'records');
    ev.records[0] = [ev.records[0]![0], ev.records[0]![1], 'something else'];
    assert.throws(() => checkSplitAndTakeover(toRun(e), 'value'), /wrong value/);
  });

  test('a second group that misses a record or does not start at offset 0 fails', () => {
    const e = goodRun();
    const ev = e.reader[1]!;
    assert.ok(ev.ev === 'records');
    ev.records = ev.records.filter(([p, o]) => !(p === 5 && o === 0));
    assert.throws(
      () => checkSplitAndTakeover(toRun(e), 'second group'),
      /the second group read 59 records, want exactly 60/,
    );
  });

  test('a split that is not 3 + 3 fails', () => {
    assert.throws(
      () => checkSplitAndTakeover(toRun(goodRun(), { leaver: [0, 1, 2, 3], stayer: [4, 5] }), 'split'),
      /member-1's share of the split/,
    );
  });

  test('after a crash the taker may start anywhere from the printed commit to after the last record read, not past it', () => {
    const e = goodRun();
    // member-1 read partition 0 up to offset 5 and printed commit 5: 5 or 6 are fine, 7 skips offset 6.
    checkSplitAndTakeover({ ...toRun(e), leaverCrashed: true }, 'crash at 5');
    takeoverReads(e, 0, 6, 10);
    checkSplitAndTakeover({ ...toRun(e), leaverCrashed: true }, 'crash at 6');
    takeoverReads(e, 0, 7, 10);
    assert.throws(
      () => checkSplitAndTakeover({ ...toRun(e), leaverCrashed: true }, 'crash skip'),
      /first offset on partition 0 is 7/,
    );
    takeoverReads(e, 0, 4, 10);
    assert.throws(
      () => checkSplitAndTakeover({ ...toRun(e), leaverCrashed: true }, 'crash re-read'),
      /first offset on partition 0 is 4/,
    );
  });

  test('kcat-style members (commit on close) are judged by what the leaver read', () => {
    const e = goodRun();
    const run = toRun(e);
    // With commit-on-close, member-1 committed 6 on partition 0 (it read 5): the taker must start at 6.
    const leaver = fakeMember(
      'member-1',
      e.leaver.filter((x) => x.ev !== 'committed'),
      true,
    );
    assert.throws(() => checkSplitAndTakeover({ ...run, leaver }, 'kcat'), /first offset on partition 0/);
    takeoverReads(e, 0, 6, 10);
    checkSplitAndTakeover({ ...toRun(e), leaver }, 'kcat');
  });
});
