/**
 * Property campaigns for the group coordinator under the deterministic simulation (fast-check
 * drives the workload and the faults; the seeded runtime replays any failure from its seed):
 *
 * - I16, committed offsets survive: random commits, offset deletions and crashes of the coordinator,
 *   its replica and log-dir actor with the disk losing unsynced bytes or tearing its last write; after
 *   every restart OffsetFetch returns exactly the last acknowledged offset and metadata per partition.
 * - I17, group assignment: members join, leave, go silent (expire after session.timeout.ms) and the
 *   coordinator crashes; after the live members converge (as clients do: rejoin on
 *   REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION, reset on UNKNOWN_MEMBER_ID), every live member is in
 *   the same generation, the assignments the leader handed out are disjoint and cover every
 *   partition, the group describes as Stable with exactly the live members, and a commit from the
 *   previous generation or from a removed member is refused.
 *
 * The short runs are in npm test; *.long.test.ts runs many more (npm run test:long).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import type { SimRuntime } from '../../../src/runtime/sim-runtime';
import type { Endpoint } from '../../../src/runtime/runtime';
import type { FetchOffsetsResult } from '../../../src/group/messages';
import {
  bootCoordinator,
  COORDINATOR_ACTORS,
  describeGroup,
  fetchOffsets,
  GROUP,
  Member,
  powerCycle,
  coordinatorRequest,
} from '../../helpers/sim-harness';

const PARTITIONS = 6;
const CRASH_KINDS = ['lose-unsynced', 'torn-last-write'] as const;

/** fast-check options: FC_SEED / FC_PATH replay a reported counterexample. */
export function fcOptions(numRuns: number): fc.Parameters<unknown> {
  return {
    numRuns,
    includeErrorInReport: true,
    ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH } : {}),
  };
}

async function crashAndRestart(
  sim: SimRuntime,
  fs: MemoryFileSystem,
  kind: (typeof CRASH_KINDS)[number],
): Promise<void> {
  await powerCycle(sim, fs, { kind }, COORDINATOR_ACTORS);
}

// ---- I16 ---------------------------------------------------------------------------------------

type OffsetCommand =
  | { kind: 'commit'; partition: number; offset: number; metadata: string }
  | { kind: 'delete'; partition: number }
  | { kind: 'crash'; crash: (typeof CRASH_KINDS)[number] };

const offsetCommand: fc.Arbitrary<OffsetCommand> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('commit' as const),
      partition: fc.integer({ min: 0, max: 3 }),
      offset: fc.integer({ min: 0, max: 1_000_000 }),
      metadata: fc.string({ maxLength: 12 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('delete' as const), partition: fc.integer({ min: 0, max: 3 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('crash' as const), crash: fc.constantFrom(...CRASH_KINDS) }) },
);

function offsetsOf(result: FetchOffsetsResult): Map<number, { offset: number; metadata: string | null }> {
  return new Map(
    result.topics.flatMap((t) =>
      t.partitions.map((p) => [p.partitionIndex, { offset: p.committedOffset, metadata: p.metadata }] as const),
    ),
  );
}

/** I16: after any crash, every acknowledged commit (and deletion) reads back exactly. */
export function committedOffsetsSurviveCrashes(numRuns: number): Promise<void> {
  return fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.array(offsetCommand, { minLength: 1, maxLength: 20 }),
      async (seed, commands) => {
        const fs = new MemoryFileSystem();
        const { sim, net } = await bootCoordinator(seed, fs);
        const model = new Map<number, { offset: number; metadata: string }>();
        const check = async (when: string) => {
          const got = offsetsOf(await sim.runUntil(fetchOffsets(net)));
          assert.deepEqual([...got.entries()].sort(), [...model.entries()].sort(), `offsets ${when}`);
        };
        for (const [i, c] of commands.entries()) {
          if (c.kind === 'commit') {
            const reply = await sim.runUntil(
              coordinatorRequest(
                net,
                'group.commit',
                {
                  version: 8,
                  clientId: 'c',
                  clientHost: '/127.0.0.1',
                  request: {
                    groupId: GROUP,
                    generationId: -1,
                    memberId: '',
                    groupInstanceId: null,
                    topics: [
                      {
                        name: 't',
                        partitions: [
                          {
                            partitionIndex: c.partition,
                            committedOffset: c.offset,
                            committedLeaderEpoch: 1,
                            committedMetadata: c.metadata,
                          },
                        ],
                      },
                    ],
                  },
                },
                60_000,
              ),
            );
            assert.equal(reply.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
            model.set(c.partition, { offset: c.offset, metadata: c.metadata });
          } else if (c.kind === 'delete') {
            const reply = await sim.runUntil(
              coordinatorRequest(
                net,
                'group.offset-delete',
                {
                  version: 0,
                  clientId: 'c',
                  clientHost: '/127.0.0.1',
                  request: { groupId: GROUP, topics: [{ name: 't', partitions: [c.partition] }] },
                },
                60_000,
              ),
            );
            // A group with no offsets left may be gone (not reloaded after a crash): GROUP_ID_NOT_FOUND, as in Kafka.
            if (model.size > 0) assert.equal(reply.errorCode, ErrorCode.NONE);
            else
              assert.ok(
                reply.errorCode === ErrorCode.NONE || reply.errorCode === ErrorCode.GROUP_ID_NOT_FOUND,
                `offset-delete: ${reply.errorCode}`,
              );
            model.delete(c.partition);
          } else {
            await crashAndRestart(sim, fs, c.crash);
            await check(`after crash ${i} (${c.crash})`);
          }
        }
        await check('at the end');
        await sim.shutdown();
      },
    ),
    fcOptions(numRuns),
  );
}

// ---- I17 ---------------------------------------------------------------------------------------

type GroupEvent =
  | { kind: 'join' }
  | { kind: 'leave'; who: number }
  | { kind: 'silence'; who: number }
  | { kind: 'crash'; crash: (typeof CRASH_KINDS)[number] };

const groupEvent: fc.Arbitrary<GroupEvent> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'join' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('leave' as const), who: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('silence' as const), who: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), crash: fc.constantFrom(...CRASH_KINDS) }) },
);

/** A consumer as the test drives it: its member state plus the partitions its last SyncGroup gave it. */
class Consumer {
  member: Member;
  partitions: number[] = [];
  constructor(
    net: Endpoint,
    readonly name: string,
  ) {
    this.member = new Member(net, name);
  }
}

function encodeAssignment(partitions: number[]): Buffer {
  return Buffer.from(JSON.stringify(partitions));
}

/** What a client does until it holds an assignment of the current generation (bounded). */
async function joinAndSync(c: Consumer): Promise<void> {
  for (let attempt = 0; attempt < 12; attempt++) {
    const joined = await c.member.join();
    if (joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED) continue;
    if (joined.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) {
      c.member.memberId = '';
      continue;
    }
    assert.equal(joined.errorCode, ErrorCode.NONE, `${c.name} join`);
    const isLeader = joined.leader === c.member.memberId;
    const ids = joined.members.map((m) => m.memberId).sort();
    const assignments = isLeader
      ? ids.map((id, i) => ({
          memberId: id,
          assignment: encodeAssignment([...Array(PARTITIONS).keys()].filter((p) => p % ids.length === i)),
        }))
      : [];
    const synced = await c.member.sync(assignments);
    if (synced.errorCode === ErrorCode.REBALANCE_IN_PROGRESS || synced.errorCode === ErrorCode.ILLEGAL_GENERATION)
      continue;
    if (synced.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) {
      c.member.memberId = '';
      continue;
    }
    assert.equal(synced.errorCode, ErrorCode.NONE, `${c.name} sync`);
    c.partitions = synced.assignment.length === 0 ? [] : (JSON.parse(synced.assignment.toString()) as number[]);
    return;
  }
  assert.fail(`${c.name} did not get an assignment in 12 attempts`);
}

/** Live consumers rejoin until all heartbeat NONE in one generation, as clients do (bounded rounds). */
async function converge(sim: SimRuntime, live: Consumer[], needJoin: Set<Consumer>): Promise<void> {
  for (let round = 0; round < 8; round++) {
    if (needJoin.size > 0) await sim.runUntil(Promise.all([...needJoin].map((c) => joinAndSync(c))));
    needJoin.clear();
    const beats = await sim.runUntil(Promise.all(live.map((c) => c.member.heartbeat())));
    beats.forEach((b, i) => {
      if (b.errorCode === ErrorCode.NONE) return;
      if (b.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) live[i]!.member.memberId = '';
      needJoin.add(live[i]!);
    });
    if (needJoin.size === 0) return;
  }
  assert.fail('the live members did not converge on one generation in 8 rounds');
}

/** I17: after every membership change and crash, one generation, disjoint and complete assignment. */
export function assignmentsStayDisjoint(numRuns: number): Promise<void> {
  return fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 2 ** 30 }),
      fc.array(groupEvent, { minLength: 1, maxLength: 10 }),
      async (seed, events) => {
        const fs = new MemoryFileSystem();
        const { sim, net } = await bootCoordinator(seed, fs);
        let live: Consumer[] = [];
        const gone: Member[] = [];
        let created = 0;
        let lastGeneration = 0;
        for (const e of events) {
          const needJoin = new Set<Consumer>();
          if (e.kind === 'join') {
            const c = new Consumer(net, `c${created++}`);
            live.push(c);
            needJoin.add(c);
            for (const other of live) needJoin.add(other);
          } else if (e.kind === 'leave' || e.kind === 'silence') {
            if (live.length === 0) continue;
            const c = live[e.who % live.length]!;
            live = live.filter((x) => x !== c);
            gone.push(c.member);
            if (e.kind === 'leave') {
              await sim.runUntil(
                coordinatorRequest(
                  net,
                  'group.leave',
                  {
                    version: 3,
                    clientId: c.name,
                    clientHost: '/127.0.0.1',
                    request: { groupId: GROUP, members: [{ memberId: c.member.memberId, groupInstanceId: null }] },
                  },
                  60_000,
                ),
              );
            } else {
              // The silent member stops; the others heartbeat every 3 s until its session expires.
              for (let t = 0; t < 20_000; t += 3000) {
                await sim.advanceTime(3000);
                const beats = await sim.runUntil(Promise.all(live.map((x) => x.member.heartbeat())));
                if (beats.some((b) => b.errorCode !== ErrorCode.NONE)) break;
              }
            }
            for (const other of live) needJoin.add(other);
          } else {
            await crashAndRestart(sim, fs, e.crash);
          }
          if (live.length === 0) continue;
          await converge(sim, live, needJoin);
          const generation = live[0]!.member.generationId;
          assert.ok(
            live.every((c) => c.member.generationId === generation),
            'one generation',
          );
          assert.ok(generation >= lastGeneration, 'generations never go back, across crashes too');
          const owned = live.flatMap((c) => c.partitions);
          assert.equal(new Set(owned).size, owned.length, `disjoint: ${JSON.stringify(live.map((c) => c.partitions))}`);
          assert.deepEqual(
            [...owned].sort((a, b) => a - b),
            [...Array(PARTITIONS).keys()],
            'every partition has an owner',
          );
          const [described] = await sim.runUntil(describeGroup(net));
          assert.equal(described!.groupState, 'Stable');
          assert.deepEqual(
            described!.members.map((m) => m.memberId).sort(),
            live.map((c) => c.member.memberId).sort(),
            'exactly the live members',
          );
          if (generation > lastGeneration && lastGeneration > 0) {
            const stale = await sim.runUntil(live[0]!.member.commit(1, lastGeneration));
            assert.equal(
              stale.topics[0]!.partitions[0]!.errorCode,
              ErrorCode.ILLEGAL_GENERATION,
              'a commit of the previous generation',
            );
          }
          for (const m of gone) {
            if (live.some((c) => c.member.memberId === m.memberId)) continue;
            const refused = await sim.runUntil(m.commit(1, generation));
            assert.equal(
              refused.topics[0]!.partitions[0]!.errorCode,
              ErrorCode.UNKNOWN_MEMBER_ID,
              'a removed member cannot commit',
            );
          }
          lastGeneration = generation;
        }
        await sim.shutdown();
      },
    ),
    fcOptions(numRuns),
  );
}
