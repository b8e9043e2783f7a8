/**
 * The commit modes of `skiff consume --group` (src/cli/group-session.ts), against a fake group
 * member and fetcher: after the same polls, what each mode has committed, and when.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConsumedRecord } from '../../../src/client/consumer';
import { KafkaError } from '../../../src/client/errors';
import type { GroupOffsets } from '../../../src/client/group-admin';
import type { GroupGeneration, MemberOffset } from '../../../src/client/group-member';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { GroupSession, type CommitMode, type SessionPorts } from '../../../src/cli/group-session';

const rec = (partition: number, offset: number): ConsumedRecord => ({
  topic: 't',
  partition,
  offset,
  timestamp: 0,
  timestampType: 'CreateTime',
  key: null,
  value: Buffer.from(`${partition}:${offset}`),
  headers: [],
});

/** Two polls: p0 0-2 and p1 0-1, then p0 3 and p1 2-4. */
const POLLS: ConsumedRecord[][] = [
  [rec(0, 0), rec(0, 1), rec(0, 2), rec(1, 0), rec(1, 1)],
  [rec(0, 3), rec(1, 2), rec(1, 3), rec(1, 4)],
];

interface Harness {
  session: GroupSession;
  commits: MemberOffset[][];
  /** Commit calls seen when each record was processed / each poll ended. */
  marks: string[];
  setNow(ms: number): void;
  member: { needsRejoin: boolean; joins: number; closed: boolean; failNextCommit: number | null };
  fetcherStarts: Array<Array<{ partition: number; offset: number }>>;
}

function harness(
  mode: CommitMode,
  opts: { committed?: Record<number, number>; autoCommitIntervalMs?: number } = {},
): Harness {
  const commits: MemberOffset[][] = [];
  let now = 0;
  const polls = [...POLLS];
  const committedStore = new Map<number, number>(Object.entries(opts.committed ?? {}).map(([p, o]) => [Number(p), o]));
  const fetcherStarts: Harness['fetcherStarts'] = [];
  const member = {
    needsRejoin: false,
    joins: 0,
    closed: false,
    failNextCommit: null as number | null,
    async join(): Promise<GroupGeneration> {
      this.joins++;
      this.needsRejoin = false;
      return { generationId: this.joins, memberId: 'm', leader: true, assignment: new Map([['t', [0, 1]]]) };
    },
    async committed(partitions: ReadonlyMap<string, readonly number[]>): Promise<GroupOffsets> {
      const inner = new Map(
        (partitions.get('t') ?? []).map((p) => [
          p,
          { offset: committedStore.get(p) ?? -1, leaderEpoch: -1, metadata: null, errorCode: 0 },
        ]),
      );
      return new Map([['t', inner]]);
    },
    async commit(offsets: readonly MemberOffset[]): Promise<void> {
      if (this.failNextCommit !== null) {
        const code = this.failNextCommit;
        this.failNextCommit = null;
        this.needsRejoin = true;
        throw new KafkaError(code, 'OffsetCommit');
      }
      commits.push(offsets.map((o) => ({ ...o })));
      for (const o of offsets) committedStore.set(o.partition, o.offset);
    },
    async close(): Promise<void> {
      this.closed = true;
    },
  };
  const ports: SessionPorts = {
    member,
    newFetcher: (assignments) => {
      fetcherStarts.push(assignments.map((a) => ({ partition: a.partition, offset: a.offset })));
      return {
        poll: async () => polls.shift() ?? [],
        allAtEnd: () => polls.length === 0,
        refreshEndOffsets: async () => undefined,
      };
    },
    resetOffsets: async (_topic, partitions) => new Map(partitions.map((p) => [p, 100 + p])),
    nowMs: () => now,
    warn: () => undefined,
  };
  const session = new GroupSession(ports, {
    mode,
    autoCommitIntervalMs: opts.autoCommitIntervalMs ?? 5000,
    reset: 'earliest',
  });
  const h: Harness = {
    session,
    commits,
    marks: [],
    setNow: (ms) => (now = ms),
    member,
    fetcherStarts,
  };
  return h;
}

/** Runs both polls, processing every record (or the first `limit`), noting the commit count after each step. */
async function drive(h: Harness, limit = Infinity, stepMs = 0): Promise<void> {
  await h.session.start();
  let n = 0;
  for (let i = 0; i < POLLS.length && n < limit; i++) {
    const records = await h.session.poll();
    for (const r of records) {
      if (n >= limit) break;
      n++;
      await h.session.processed(r);
      h.marks.push(`r${r.partition}:${r.offset}=${h.commits.length}`);
    }
    h.setNow((i + 1) * stepMs);
    await h.session.endOfPoll();
    h.marks.push(`poll${i}=${h.commits.length}`);
  }
  await h.session.close();
}

const flat = (commits: MemberOffset[][]) => commits.map((c) => c.map((o) => `${o.partition}@${o.offset}`).join(','));

describe('GroupSession commit modes', () => {
  it('record: one commit after each record, of the offset after it', async () => {
    const h = harness('record');
    await drive(h);
    assert.deepEqual(flat(h.commits), ['0@1', '0@2', '0@3', '1@1', '1@2', '0@4', '1@3', '1@4', '1@5']);
    assert.ok(
      h.marks.filter((m) => m.startsWith('r')).every((m, i) => m.endsWith(`=${i + 1}`)),
      h.marks.join(' '),
    );
    assert.equal(h.session.summary('g'), 'group g: committed t/0=4 t/1=5 (--commit record, 9 commits)');
  });

  it('partition: after each poll, one commit per partition of its records', async () => {
    const h = harness('partition');
    await drive(h);
    assert.deepEqual(flat(h.commits), ['0@3', '1@2', '0@4', '1@5']);
    assert.deepEqual(
      h.marks.filter((m) => m.startsWith('poll')),
      ['poll0=2', 'poll1=4'],
    );
    assert.ok(h.marks.includes('r1:1=0'), 'nothing is committed while a poll is processed');
  });

  it('batch: one commit of every partition after each poll', async () => {
    const h = harness('batch');
    await drive(h);
    assert.deepEqual(flat(h.commits), ['0@3,1@2', '0@4,1@5']);
    assert.equal(h.session.summary('g'), 'group g: committed t/0=4 t/1=5 (--commit batch, 2 commits)');
  });

  it('auto: a commit once the interval has passed after a poll, and one on close', async () => {
    const h = harness('auto', { autoCommitIntervalMs: 1000 });
    await drive(h, Infinity, 600); // poll0 ends at 600 ms (too soon), poll1 at 1200 ms
    assert.deepEqual(flat(h.commits), ['0@4,1@5']);
    assert.deepEqual(
      h.marks.filter((m) => m.startsWith('poll')),
      ['poll0=0', 'poll1=1'],
    );
    const quiet = harness('auto', { autoCommitIntervalMs: 60_000 });
    await drive(quiet, 6);
    assert.deepEqual(flat(quiet.commits), ['0@4,1@2'], 'only the close commits, the 6 records processed');
  });

  it('none: never commits; every mode commits only what was processed', async () => {
    const h = harness('none');
    await drive(h);
    assert.deepEqual(h.commits, []);
    assert.equal(
      h.session.summary('g'),
      'group g: this run committed nothing; the group has no committed offsets for these partitions (--commit none, 0 commits)',
    );
    for (const mode of ['record', 'partition', 'batch', 'auto'] as const) {
      const limited = harness(mode);
      await drive(limited, 4); // p0 0-2 and p1 0
      const last = new Map<number, number>();
      for (const c of limited.commits) for (const o of c) last.set(o.partition, o.offset);
      assert.deepEqual(Object.fromEntries(last), { 0: 3, 1: 1 }, mode);
    }
  });

  it('none with offsets the group committed before: the summary names them as unchanged', async () => {
    const h = harness('none', { committed: { 0: 10, 1: 4 } });
    await drive(h);
    assert.deepEqual(h.commits, []);
    assert.equal(
      h.session.summary('TWO'),
      "group TWO: this run committed nothing; the group's committed offsets are unchanged: t/0=10 t/1=4 (--commit none, 0 commits)",
    );
  });

  it('starts at the committed offsets, else the reset policy, and rejoins after a lost commit', async () => {
    const h = harness('batch', { committed: { 1: 7 } });
    await h.session.start();
    assert.deepEqual(h.fetcherStarts[0], [
      { partition: 0, offset: 100 }, // no commit: reset (earliest, from the fake ListOffsets)
      { partition: 1, offset: 7 },
    ]);
    h.member.failNextCommit = ErrorCode.ILLEGAL_GENERATION;
    for (const r of await h.session.poll()) await h.session.processed(r);
    await h.session.endOfPoll(); // lost: warned, not thrown
    assert.equal(h.commits.length, 0);
    assert.equal(h.member.needsRejoin, true);
    await h.session.poll();
    assert.equal(h.member.joins, 2);
    assert.equal(h.session.rebalances, 1);
    assert.deepEqual(h.fetcherStarts[1], [
      { partition: 0, offset: 100 },
      { partition: 1, offset: 7 },
    ]);
    await h.session.close();
    assert.equal(h.member.closed, true);
  });
});
