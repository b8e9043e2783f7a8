/**
 * The consumer-group scenarios the group suites run with every client, and the checks that judge
 * them from the members' events (group-members.ts).
 *
 * Split and takeover (issue 5): two members of one group split a 6-partition topic; numbered
 * records are produced only once the split is stable; then one member leaves and the other takes
 * over its partitions from the committed offsets; more records follow; then a second group with
 * one member reads the topic from the start. The checks fail on:
 * - a split that is not 3 + 3 disjoint partitions;
 * - a partition read by both members while both were in the group;
 * - a lost record (an offset below the end that no member read) or a wrong value at an offset;
 * - a skipped record: a member's reads of a partition must be contiguous, and the taker's first
 *   offset on each partition it takes over must be exactly the leaver's last committed offset;
 * - a duplicate other than the leaver's uncommitted tail (at-least-once: offsets at or after its
 *   last commit of that partition, up to the last it read);
 * - a second group that does not read every record exactly once from offset 0.
 * While the split is stable, kafkajs's Admin (DescribeGroups, ListGroups) must see the group
 * Stable with protocol type "consumer", both members, and each member's assignment (opaque bytes
 * the leader sent in SyncGroup, decoded here) equal to what that member reports; once every
 * member has left, the group is Empty with no members.
 *
 * With `leave: 'crash'` the leaver is SIGKILLed instead (no LeaveGroup): the coordinator must
 * expire it after session.timeout.ms (10 s in the members) before the other member takes over.
 * A crash can land after a commit succeeded and before the member printed it, so the taker may
 * start anywhere from the leaver's last commit it printed to the offset after the last record it
 * read, never below (a committed record read again) or above (a skipped record).
 */
import * as assert from 'node:assert/strict';
import { AssignerProtocol, Kafka, logLevel, Partitioners } from 'kafkajs';
import { consumedBy, lastCommits, ownedPartitions, ProcessMember, waitUntil, type GroupMember } from './group-members';

/**
 * A group's committed offsets through kafkajs's Admin.fetchOffsets (OffsetFetch): partition ->
 * offset and metadata, partitions without a commit left out.
 */
export async function kafkajsFetchOffsets(
  bootstrap: string,
  group: string,
  topic: string,
): Promise<Map<number, { offset: number; metadata: string | null }>> {
  const admin = new Kafka({
    clientId: 'skiff-group-offsets',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5 },
  }).admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    return new Map(
      t!.partitions
        .filter((p) => Number(p.offset) >= 0)
        .map((p) => [p.partition, { offset: Number(p.offset), metadata: p.metadata ?? null }]),
    );
  } finally {
    await admin.disconnect();
  }
}

/** Partitions of the scenario topic. */
export const PARTITIONS = 6;

/** The records produced so far: value by "partition:offset", and the end offset of each partition. */
export class NumberedRecords {
  readonly values = new Map<string, string>();
  readonly endOffsets: number[] = new Array<number>(PARTITIONS).fill(0);
  private next = 0;

  get count(): number {
    return this.next;
  }

  /**
   * Produces `n` more records with kafkajs (acks=-1, one send per 1,000): record i has value
   * `r<i>` (zero-padded) and goes to partition i % 6, so its offset follows from the order.
   */
  async produce(bootstrap: string, topic: string, n: number): Promise<void> {
    const kafka = new Kafka({
      clientId: 'skiff-group-producer',
      brokers: [bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 5 },
    });
    const producer = kafka.producer({
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    try {
      for (let sent = 0; sent < n; sent += 1000) {
        const messages = [];
        for (let k = 0; k < Math.min(1000, n - sent); k++) {
          const i = this.next++;
          const partition = i % PARTITIONS;
          const value = `r${String(i).padStart(7, '0')}`;
          this.values.set(`${partition}:${this.endOffsets[partition]!++}`, value);
          messages.push({ partition, key: null, value });
        }
        const acks = await producer.send({ topic, acks: -1, messages });
        for (const a of acks) assert.equal(a.errorCode, 0, `produce to ${topic}-${a.partition}`);
      }
    } finally {
      await producer.disconnect();
    }
  }

  /** True when `members` together have read every offset below each partition's end. */
  coveredBy(members: readonly GroupMember[]): boolean {
    const seen = new Set<string>();
    for (const m of members) for (const [p, o] of consumedBy(m)) seen.add(`${p}:${o}`);
    for (const key of this.values.keys()) if (!seen.has(key)) return false;
    return true;
  }
}

/** How a test makes a member of `group` named `name`. */
export type MemberFactory = (name: string, group: string) => Promise<GroupMember> | GroupMember;

/** Options of {@link runSplitAndTakeover}. */
export interface SplitOptions {
  bootstrap: string;
  topic: string;
  group: string;
  secondGroup: string;
  makeMember: MemberFactory;
  /** Records produced while both members hold 3 partitions, and after the takeover. */
  recordsPerPhase: number;
  /** Bound on each wait (ms). */
  waitMs: number;
  /** How member-1 goes: close the consumer (LeaveGroup; default) or SIGKILL (a {@link ProcessMember} only). */
  leave?: 'leave' | 'crash';
}

/** What {@link runSplitAndTakeover} observed, for {@link checkSplitAndTakeover}. */
export interface SplitRun {
  leaver: GroupMember;
  stayer: GroupMember;
  reader: GroupMember;
  split: { leaver: number[]; stayer: number[] };
  /** stayer.events.length when the leaver was asked to leave: events before it are "both in the group". */
  stayerEventsBeforeLeave: number;
  /** True when member-1 was SIGKILLed rather than closed. */
  leaverCrashed?: boolean;
  /** Wall-clock ms just before member-1 was told to leave (or SIGKILLed). */
  leftAt: number;
  records: NumberedRecords;
}

/** Runs the scenario (topic already created with {@link PARTITIONS} partitions); stops every member it started. */
export async function runSplitAndTakeover(o: SplitOptions): Promise<SplitRun> {
  const records = new NumberedRecords();
  const started: GroupMember[] = [];
  try {
    const leaver = await o.makeMember('member-1', o.group);
    started.push(leaver);
    await waitUntil('member-1 to get an assignment', o.waitMs, () => ownedPartitions(leaver).length > 0, [leaver]);
    const stayer = await o.makeMember('member-2', o.group);
    started.push(stayer);
    const members = [leaver, stayer];
    await waitUntil(
      'the two members to split the 6 partitions 3 + 3',
      o.waitMs,
      () => {
        const a = ownedPartitions(leaver);
        const b = ownedPartitions(stayer);
        return a.length === 3 && b.length === 3 && new Set([...a, ...b]).size === PARTITIONS;
      },
      members,
    );
    const split = { leaver: ownedPartitions(leaver), stayer: ownedPartitions(stayer) };
    await checkDescribedGroup(o.bootstrap, o.group, o.topic, [split.leaver, split.stayer]);

    await records.produce(o.bootstrap, o.topic, o.recordsPerPhase);
    await waitUntil(
      `the two members to read all ${records.count} records`,
      o.waitMs,
      () => records.coveredBy(members),
      members,
    );
    await waitUntil(
      'member-1 to commit what it read',
      o.waitMs,
      () => leaver.commitsOnClose === true || committedEverything(leaver),
      members,
    );

    const stayerEventsBeforeLeave = stayer.events.length;
    const leftAt = Date.now();
    if (o.leave === 'crash') {
      assert.ok(leaver instanceof ProcessMember, 'only a member in a child process can be SIGKILLed');
      await leaver.crash();
    } else {
      await leaver.stop();
    }
    await waitUntil(
      'member-2 to take over all 6 partitions',
      o.waitMs,
      () => ownedPartitions(stayer).length === PARTITIONS,
      members,
    );
    await records.produce(o.bootstrap, o.topic, o.recordsPerPhase);
    await waitUntil(
      `member-2 to read up to the end (${records.count} records in all)`,
      o.waitMs,
      () => readToEnd(stayer, records),
      members,
    );
    await stayer.stop();
    await checkDescribedGroup(o.bootstrap, o.group, o.topic, []);

    const reader = await o.makeMember('second-group', o.secondGroup);
    started.push(reader);
    await waitUntil(
      `the second group to read all ${records.count} records`,
      o.waitMs,
      () => records.coveredBy([reader]),
      [reader],
    );
    await reader.stop();
    return {
      leaver,
      stayer,
      reader,
      split,
      stayerEventsBeforeLeave,
      records,
      leaverCrashed: o.leave === 'crash',
      leftAt,
    };
  } catch (e) {
    for (const m of started) m.kill();
    throw e;
  }
}

/**
 * DescribeGroups and ListGroups through kafkajs's Admin: `group` is Stable with one member per
 * entry of `assignments` (each member's decoded assignment of `topic` is one of them, all used
 * once), or Empty with no members when `assignments` is empty.
 */
async function checkDescribedGroup(
  bootstrap: string,
  group: string,
  topic: string,
  assignments: number[][],
): Promise<void> {
  const admin = new Kafka({
    clientId: 'skiff-group-describe',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5 },
  }).admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([group]);
    assert.equal(groups.length, 1, `DescribeGroups ${group}`);
    const g = groups[0]!;
    assert.equal((g as unknown as { errorCode: number }).errorCode, 0, `DescribeGroups ${group}: error code`);
    assert.equal(g.groupId, group);
    const want = assignments.map((a) => JSON.stringify(a)).sort();
    if (assignments.length === 0) {
      assert.deepEqual(
        { state: g.state, members: g.members.length },
        { state: 'Empty', members: 0 },
        `DescribeGroups ${group} after every member left`,
      );
    } else {
      assert.equal(g.state, 'Stable', `DescribeGroups ${group}: state while both members hold their split`);
      assert.equal(g.protocolType, 'consumer', `DescribeGroups ${group}: protocol type`);
      assert.ok(g.protocol.length > 0, `DescribeGroups ${group}: the assignor chosen`);
      const described = g.members
        .map((m) => {
          const decoded = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
          return JSON.stringify([...(decoded?.assignment[topic] ?? [])].sort((a, b) => a - b));
        })
        .sort();
      assert.deepEqual(
        described,
        want,
        `DescribeGroups ${group}: each member's assignment (as SyncGroup gave it) vs what the members report`,
      );
      for (const m of g.members)
        assert.ok(m.memberId.length > 0 && m.clientId.length > 0, `DescribeGroups ${group}: member id and client id`);
    }
    const listed = (await admin.listGroups()).groups.find((x) => x.groupId === group);
    assert.deepEqual(listed, { groupId: group, protocolType: 'consumer' }, `ListGroups lists ${group}`);
  } finally {
    await admin.disconnect();
  }
}

/** Options of {@link runStaticRejoin}. */
export interface StaticRejoinOptions {
  bootstrap: string;
  topic: string;
  group: string;
  /** A member with group.instance.id `instanceId`. */
  makeMember: (name: string, instanceId: string) => Promise<GroupMember> | GroupMember;
  /** Which member restarts: the group's leader (the first to join) or the other. */
  restart: 'leader' | 'follower';
  waitMs: number;
}

/**
 * Static membership (KIP-345): static members a (joins first: the leader) and b split the topic
 * 3 + 3 and read and commit numbered records; then one of them closes (a static member sends no
 * LeaveGroup) and a new consumer with the same group.instance.id joins within session.timeout.ms.
 * As in Kafka (the group stays Stable when the selected protocol does not change, leader or not),
 * it gets the same partitions back and resumes at the commits, and the other member sees no
 * rebalance (no revoked or assigned event).
 */
export async function runStaticRejoin(o: StaticRejoinOptions): Promise<void> {
  const started: GroupMember[] = [];
  try {
    const a = await o.makeMember('static a', 'static-a');
    started.push(a);
    await waitUntil('static member a to get an assignment', o.waitMs, () => ownedPartitions(a).length > 0, [a]);
    const b = await o.makeMember('static b', 'static-b');
    started.push(b);
    await waitUntil(
      'the static members to split 3 + 3',
      o.waitMs,
      () => ownedPartitions(a).length === 3 && ownedPartitions(b).length === 3,
      [a, b],
    );
    const [leaving, staying] = o.restart === 'leader' ? [a, b] : [b, a];
    const instanceId = o.restart === 'leader' ? 'static-a' : 'static-b';
    const split = ownedPartitions(leaving);
    const records = new NumberedRecords();
    await records.produce(o.bootstrap, o.topic, 600);
    await waitUntil(
      'a and b to read and commit the records',
      o.waitMs,
      () => records.coveredBy([a, b]) && committedEverything(leaving),
      [a, b],
    );
    const stayingEventsBefore = staying.events.length;
    const commits = lastCommits(leaving);
    await leaving.stop(); // a static member's close sends no LeaveGroup: it stays in the group until session.timeout.ms
    const again = await o.makeMember(`${leaving.name} again`, instanceId);
    started.push(again);
    await waitUntil(
      'the returning static member to get an assignment',
      o.waitMs,
      () => ownedPartitions(again).length > 0,
      [again, staying],
    );
    assert.deepEqual(ownedPartitions(again), split, 'the returning static member gets its old partitions');
    await records.produce(o.bootstrap, o.topic, 600);
    await waitUntil('both to read up to the end', o.waitMs, () => records.coveredBy([a, b, again]), [again, staying]);
    const changes = staying.events.slice(stayingEventsBefore).filter((e) => e.ev === 'assigned' || e.ev === 'revoked');
    assert.deepEqual(changes, [], `${staying.name} saw a rebalance while the static ${o.restart} was away and back`);
    for (const p of split)
      assert.equal(
        consumedBy(again).find(([q]) => q === p)?.[1],
        commits.get(p),
        `the returning member's first offset on partition ${p}`,
      );
    await again.stop();
    await staying.stop();
  } catch (e) {
    for (const m of started) m.kill();
    throw e;
  }
}

function committedEverything(m: GroupMember): boolean {
  const read = new Map<number, number>();
  for (const [p, o] of consumedBy(m)) read.set(p, Math.max(read.get(p) ?? 0, o + 1));
  const commits = lastCommits(m);
  return [...read].every(([p, next]) => commits.get(p) === next);
}

function readToEnd(m: GroupMember, records: NumberedRecords): boolean {
  const next = new Array<number>(PARTITIONS).fill(0);
  for (const [p, o] of consumedBy(m)) next[p] = Math.max(next[p]!, o + 1);
  return next.every((n, p) => n >= records.endOffsets[p]!);
}

/** The offset the leaver had committed for `partition` when it left (0 when it never committed one). */
function committedAtLeave(leaver: GroupMember, partition: number): number {
  if (leaver.commitsOnClose === true) {
    const read = consumedBy(leaver).filter(([p]) => p === partition);
    return read.length === 0 ? 0 : Math.max(...read.map(([, o]) => o)) + 1;
  }
  return lastCommits(leaver).get(partition) ?? 0;
}

/** Asserts everything the file header lists about a {@link SplitRun}; `what` names the client. */
export function checkSplitAndTakeover(run: SplitRun, what: string): void {
  const { leaver, stayer, reader, split, records } = run;
  assert.equal(split.leaver.length, 3, `${what}: member-1's share of the split`);
  assert.equal(split.stayer.length, 3, `${what}: member-2's share of the split`);
  assert.deepEqual(
    [...new Set([...split.leaver, ...split.stayer])].sort(),
    [0, 1, 2, 3, 4, 5],
    `${what}: split covers every partition once`,
  );

  // While both were members, each partition was read by one of them only: the one it was assigned to.
  const before = stayer.events.slice(0, run.stayerEventsBeforeLeave);
  const phase1 = new Map<number, Set<string>>();
  const note = (name: string, p: number): void => {
    if (!phase1.has(p)) phase1.set(p, new Set());
    phase1.get(p)!.add(name);
  };
  for (const [p] of consumedBy(leaver)) note('member-1', p);
  for (const e of before) if (e.ev === 'records') for (const [p] of e.records) note('member-2', p);
  for (const [p, names] of [...phase1].sort((a, b) => a[0] - b[0])) {
    assert.equal(names.size, 1, `${what}: partition ${p} was read by both members while both were in the group`);
    const owner = split.leaver.includes(p) ? 'member-1' : 'member-2';
    assert.deepEqual([...names], [owner], `${what}: partition ${p} was read by a member it was not assigned to`);
  }
  assert.ok(consumedBy(leaver).length > 0, `${what}: member-1 read nothing while it held 3 partitions`);

  // Each member reads a partition contiguously (a gap is a skipped record) with the produced values.
  for (const m of [leaver, stayer, reader]) {
    const last = new Map<number, number>();
    for (const [p, o, value] of consumedBy(m)) {
      assert.equal(
        value,
        records.values.get(`${p}:${o}`),
        `${what}: ${m.name} read partition ${p} offset ${o}: wrong value`,
      );
      const prev = last.get(p);
      if (prev !== undefined)
        assert.equal(o, prev + 1, `${what}: ${m.name} read partition ${p} offset ${o} after offset ${prev}`);
      last.set(p, o);
    }
  }

  // The taker resumes each taken-over partition exactly at the leaver's committed offset.
  for (const p of split.leaver) {
    const first = consumedBy(stayer).find(([q]) => q === p);
    assert.ok(first !== undefined, `${what}: member-2 never read partition ${p} after member-1 left`);
    if (run.leaverCrashed === true) {
      const read = consumedBy(leaver)
        .filter(([q]) => q === p)
        .map(([, o]) => o + 1);
      const lastRead = read.length === 0 ? 0 : Math.max(...read);
      const committed = committedAtLeave(leaver, p);
      assert.ok(
        first[1] >= committed && first[1] <= lastRead,
        `${what}: member-2's first offset on partition ${p} is ${first[1]}: ` +
          `member-1 crashed with offset ${committed} committed (as printed) and had read up to offset ${lastRead - 1}`,
      );
    } else {
      assert.equal(
        first[1],
        committedAtLeave(leaver, p),
        `${what}: member-2's first offset on partition ${p} vs member-1's committed offset`,
      );
    }
  }

  // Nothing lost; duplicates only in the leaver's uncommitted tail.
  const counts = new Map<string, number>();
  for (const m of [leaver, stayer])
    for (const [p, o] of consumedBy(m)) counts.set(`${p}:${o}`, (counts.get(`${p}:${o}`) ?? 0) + 1);
  const lost = [...records.values.keys()].filter((k) => !counts.has(k));
  assert.deepEqual(lost.slice(0, 20), [], `${what}: ${lost.length} records read by no member of the group`);
  for (const [k, n] of counts) {
    const [p, o] = k.split(':').map(Number) as [number, number];
    assert.ok(records.values.has(k), `${what}: read partition ${p} offset ${o}, which was never produced`);
    if (n > 1) {
      const allowed = split.leaver.includes(p) && o >= committedAtLeave(leaver, p);
      assert.ok(allowed, `${what}: partition ${p} offset ${o} read ${n} times though member-1 had committed past it`);
    }
  }

  // The second group: every record once, from offset 0 of every partition (the first group's commits are not its own).
  const second = consumedBy(reader);
  assert.equal(
    second.length,
    records.count,
    `${what}: the second group read ${second.length} records, want exactly ${records.count}`,
  );
  assert.equal(
    new Set(second.map(([p, o]) => `${p}:${o}`)).size,
    records.count,
    `${what}: the second group read some record twice`,
  );
  for (let p = 0; p < PARTITIONS; p++) {
    const first = second.find(([q]) => q === p);
    assert.equal(first?.[1], 0, `${what}: the second group's first offset on partition ${p}`);
  }
}
