/**
 * The group coordinator actor under the deterministic simulation runtime: a replica of
 * __consumer_offsets-0 on a MemoryFileSystem and its coordinator, driven with virtual time. Edge cases
 * of the classic protocol that real clients rarely show on demand: session expiry, stale generations,
 * KIP-394 member ids, the initial rebalance delay, static membership (KIP-345), and reloading groups
 * and offsets from the partition after a crash that loses unsynced bytes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import type { SimRuntime } from '../../../src/runtime/sim-runtime';
import type { Endpoint } from '../../../src/runtime/runtime';
import {
  bootCoordinator,
  COORDINATOR_ACTORS,
  describeGroup,
  fetchOffsets,
  GROUP,
  Member,
  powerCycle,
  SESSION_MS,
  coordinatorRequest,
} from '../../helpers/sim-harness';

/** Two dynamic members through the KIP-394 handshake into a Stable generation; returns [leader, follower]. */
async function stableGroupOfTwo(sim: SimRuntime, net: Endpoint): Promise<[Member, Member]> {
  const a = new Member(net, 'a');
  const b = new Member(net, 'b');
  assert.equal((await sim.runUntil(a.join())).errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.equal((await sim.runUntil(b.join())).errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.match(a.memberId, /^a-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  const [ja, jb] = await sim.runUntil(Promise.all([a.join(), b.join()]));
  assert.equal(ja.errorCode, ErrorCode.NONE);
  assert.equal(jb.errorCode, ErrorCode.NONE);
  assert.equal(ja.generationId, jb.generationId);
  const [leader, follower] = ja.leader === a.memberId ? [a, b] : [b, a];
  const leaderJoin = leader === a ? ja : jb;
  assert.deepEqual(
    leaderJoin.members.map((m) => m.memberId).sort(),
    [a.memberId, b.memberId].sort(),
    'the leader gets every member',
  );
  assert.equal((leader === a ? jb : ja).members.length, 0, 'followers get no member list');
  const [sl, sf] = await sim.runUntil(
    Promise.all([
      leader.sync([
        { memberId: leader.memberId, assignment: Buffer.from('p0') },
        { memberId: follower.memberId, assignment: Buffer.from('p1') },
      ]),
      follower.sync(),
    ]),
  );
  assert.equal(sl.errorCode, ErrorCode.NONE);
  assert.equal(sl.assignment.toString(), 'p0');
  assert.equal(sf.assignment.toString(), 'p1');
  return [leader, follower];
}

describe('group coordinator (simulated)', () => {
  test('a member that stops heartbeating is removed after session.timeout.ms and the group rebalances without it', async () => {
    const { sim, net } = await bootCoordinator(1, new MemoryFileSystem());
    const [leader, follower] = await stableGroupOfTwo(sim, net);
    const generation = leader.generationId;
    // The leader heartbeats every 3 s; the follower goes silent.
    let rebalanceSeen = false;
    for (let t = 0; t < SESSION_MS + 3000 && !rebalanceSeen; t += 3000) {
      await sim.advanceTime(3000);
      const hb = await sim.runUntil(leader.heartbeat());
      if (hb.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) rebalanceSeen = true;
      else assert.equal(hb.errorCode, ErrorCode.NONE);
    }
    assert.ok(rebalanceSeen, 'the leader is told to rejoin once the silent member expired');
    const rejoin = await sim.runUntil(leader.join());
    assert.equal(rejoin.errorCode, ErrorCode.NONE);
    assert.equal(rejoin.generationId, generation + 1);
    assert.deepEqual(
      rejoin.members.map((m) => m.memberId),
      [leader.memberId],
      'only the live member is left',
    );
    assert.equal((await sim.runUntil(follower.heartbeat())).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    await sim.shutdown();
  });

  test("a stale generation's commit gets ILLEGAL_GENERATION; the current one commits and reads back", async () => {
    const { sim, net } = await bootCoordinator(2, new MemoryFileSystem());
    const [leader, follower] = await stableGroupOfTwo(sim, net);
    const oldGeneration = leader.generationId;
    // The follower leaves: the leader rejoins into the next generation.
    const left = await sim.runUntil(
      coordinatorRequest(
        net,
        'group.leave',
        {
          version: 3,
          clientId: 'b',
          clientHost: '/127.0.0.1',
          request: { groupId: GROUP, members: [{ memberId: follower.memberId, groupInstanceId: null }] },
        },
        60_000,
      ),
    );
    assert.deepEqual(
      left.members.map((m) => m.errorCode),
      [ErrorCode.NONE],
    );
    assert.equal((await sim.runUntil(leader.join())).generationId, oldGeneration + 1);
    await sim.runUntil(leader.sync([{ memberId: leader.memberId, assignment: Buffer.from('all') }]));
    const stale = await sim.runUntil(leader.commit(10, oldGeneration));
    assert.equal(stale.topics[0]!.partitions[0]!.errorCode, ErrorCode.ILLEGAL_GENERATION);
    const gone = await sim.runUntil(follower.commit(11, oldGeneration));
    assert.equal(gone.topics[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    const fresh = await sim.runUntil(leader.commit(12));
    assert.equal(fresh.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    const offsets = await sim.runUntil(fetchOffsets(net));
    assert.deepEqual(offsets.topics, [
      {
        name: 't',
        partitions: [
          { partitionIndex: 0, committedOffset: 12, committedLeaderEpoch: 3, metadata: 'm', errorCode: ErrorCode.NONE },
        ],
      },
    ]);
    await sim.shutdown();
  });

  test('committed offsets and the stable generation survive a crash that loses unsynced bytes', async () => {
    const fs = new MemoryFileSystem();
    const { sim, net } = await bootCoordinator(3, fs);
    const [leader] = await stableGroupOfTwo(sim, net);
    assert.equal(
      (await sim.runUntil(leader.commit(41, leader.generationId, 'meta-41'))).topics[0]!.partitions[0]!.errorCode,
      ErrorCode.NONE,
    );
    const before = await sim.runUntil(describeGroup(net));
    await powerCycle(sim, fs, { kind: 'lose-unsynced' }, COORDINATOR_ACTORS);
    const offsets = await sim.runUntil(fetchOffsets(net));
    assert.deepEqual(
      offsets.topics,
      [
        {
          name: 't',
          partitions: [
            {
              partitionIndex: 0,
              committedOffset: 41,
              committedLeaderEpoch: 3,
              metadata: 'meta-41',
              errorCode: ErrorCode.NONE,
            },
          ],
        },
      ],
      'an acknowledged commit (acks=all, fsynced) is read back unchanged',
    );
    const after = await sim.runUntil(describeGroup(net));
    assert.deepEqual(after, before, 'the loaded group is the Stable generation with the same members and assignments');
    assert.equal(
      (await sim.runUntil(leader.heartbeat())).errorCode,
      ErrorCode.NONE,
      'members keep their generation across the coordinator restart',
    );
    await sim.shutdown();
  });

  test('the first rebalance of an empty group waits group.initial.rebalance.delay.ms for more members', async () => {
    const { sim, net } = await bootCoordinator(4, new MemoryFileSystem(), 3000);
    const a = new Member(net, 'a');
    const b = new Member(net, 'b');
    await sim.runUntil(a.join());
    await sim.runUntil(b.join());
    const ja = a.join();
    let answered = false;
    void ja.then(() => {
      answered = true;
    });
    await sim.advanceTime(1000);
    assert.equal(answered, false, 'held during the delay');
    const jb = b.join();
    await sim.advanceTime(2500);
    assert.equal(answered, false, 'a member joining during the delay extends it');
    await sim.advanceTime(1000);
    const [ra, rb] = await sim.runUntil(Promise.all([ja, jb]));
    assert.equal(ra.errorCode, ErrorCode.NONE);
    assert.equal(ra.generationId, 1);
    assert.equal(rb.generationId, 1, 'both members are in the first generation');
    await sim.shutdown();
  });

  test('a static member restarting with the same group.instance.id takes over without a rebalance and fences its old id', async () => {
    const { sim, net } = await bootCoordinator(5, new MemoryFileSystem());
    const leader = new Member(net, 'a', 'instance-a');
    const follower = new Member(net, 'b', 'instance-b');
    const [ja, jb] = await sim.runUntil(Promise.all([leader.join(), follower.join()]));
    assert.equal(ja.errorCode, ErrorCode.NONE, 'static members skip MEMBER_ID_REQUIRED');
    const [first, second] = ja.leader === leader.memberId ? [leader, follower] : [follower, leader];
    await sim.runUntil(
      Promise.all([
        first.sync([
          { memberId: first.memberId, assignment: Buffer.from('x') },
          { memberId: second.memberId, assignment: Buffer.from('y') },
        ]),
        second.sync(),
      ]),
    );
    const generation = second.generationId;
    const oldId = second.memberId;
    const restarted = new Member(net, second.clientId, second.groupInstanceId);
    const rejoin = await sim.runUntil(restarted.join());
    assert.equal(rejoin.errorCode, ErrorCode.NONE);
    assert.equal(rejoin.generationId, generation, 'no new generation');
    assert.notEqual(restarted.memberId, oldId);
    assert.equal(
      (await sim.runUntil(restarted.sync())).assignment.toString(),
      'y',
      'it keeps the assignment of its instance',
    );
    assert.equal((await sim.runUntil(second.heartbeat())).errorCode, ErrorCode.FENCED_INSTANCE_ID);
    assert.equal(
      (await sim.runUntil(first.heartbeat())).errorCode,
      ErrorCode.NONE,
      'the other member sees no rebalance',
    );
    void jb;
    await sim.shutdown();
  });

  test('JoinGroup with a session timeout outside group.min/max.session.timeout.ms gets INVALID_SESSION_TIMEOUT', async () => {
    const { sim, net } = await bootCoordinator(6, new MemoryFileSystem());
    const reply = await sim.runUntil(
      coordinatorRequest(
        net,
        'group.join',
        {
          version: 5,
          clientId: 'c',
          clientHost: '/127.0.0.1',
          request: {
            groupId: GROUP,
            sessionTimeoutMs: 1000,
            rebalanceTimeoutMs: 1000,
            memberId: '',
            groupInstanceId: null,
            protocolType: 'consumer',
            protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
            reason: null,
          },
        },
        60_000,
      ),
    );
    assert.equal(reply.errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
    await sim.shutdown();
  });

  test('offsets of a group that has been empty for offsets.retention.minutes expire, and the group with them', async () => {
    const { sim, net } = await bootCoordinator(7, new MemoryFileSystem());
    const member = new Member(net, 'a');
    await sim.runUntil(member.join());
    await sim.runUntil(member.join());
    await sim.runUntil(member.sync([{ memberId: member.memberId, assignment: Buffer.from('p') }]));
    assert.equal((await sim.runUntil(member.commit(5))).topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    await sim.runUntil(
      coordinatorRequest(
        net,
        'group.leave',
        {
          version: 3,
          clientId: 'a',
          clientHost: '/127.0.0.1',
          request: { groupId: GROUP, members: [{ memberId: member.memberId, groupInstanceId: null }] },
        },
        60_000,
      ),
    );
    assert.equal((await sim.runUntil(describeGroup(net)))[0]!.groupState, 'Empty');
    const retentionMs = 7 * 24 * 3_600_000;
    await sim.advanceTime(retentionMs - 3_600_000);
    assert.equal(
      (await sim.runUntil(fetchOffsets(net))).topics.length,
      1,
      'kept while the group has been empty for less than the retention',
    );
    await sim.advanceTime(2 * 3_600_000);
    assert.deepEqual((await sim.runUntil(fetchOffsets(net))).topics, [], 'expired');
    assert.equal(
      (await sim.runUntil(describeGroup(net)))[0]!.errorCode,
      ErrorCode.GROUP_ID_NOT_FOUND,
      'the empty group is gone too',
    );
    await sim.shutdown();
  });

  test('a static leader restarting gets skipAssignment at JoinGroup v9 (KIP-814), and below v9 the previous id as leader: no rebalance either way', async () => {
    const { sim, net } = await bootCoordinator(8, new MemoryFileSystem());
    const a = new Member(net, 'a', 'instance-a');
    const b = new Member(net, 'b', 'instance-b');
    const [ja] = await sim.runUntil(Promise.all([a.join(), b.join()]));
    const [leader, other] = ja.leader === a.memberId ? [a, b] : [b, a];
    await sim.runUntil(
      Promise.all([
        leader.sync([
          { memberId: leader.memberId, assignment: Buffer.from('L') },
          { memberId: other.memberId, assignment: Buffer.from('O') },
        ]),
        other.sync(),
      ]),
    );
    const generation = leader.generationId;
    const v9 = new Member(net, leader.clientId, leader.groupInstanceId);
    const rejoin = await sim.runUntil(v9.join('sub', 9));
    assert.deepEqual(
      [rejoin.errorCode, rejoin.generationId, rejoin.skipAssignment, rejoin.leader === v9.memberId],
      [ErrorCode.NONE, generation, true, true],
    );
    assert.equal(rejoin.members.length, 2, 'the leader still learns every member');
    assert.equal(
      (await sim.runUntil(v9.sync())).assignment.toString(),
      'L',
      'and keeps its assignment without sending one',
    );
    assert.equal((await sim.runUntil(other.heartbeat())).errorCode, ErrorCode.NONE, 'no rebalance');
    const v5 = new Member(net, leader.clientId, leader.groupInstanceId);
    const old = await sim.runUntil(v5.join('sub', 5));
    assert.deepEqual(
      [old.errorCode, old.generationId, old.skipAssignment, old.members.length],
      [ErrorCode.NONE, generation, false, 0],
    );
    assert.equal(
      old.leader,
      v9.memberId,
      'below v9 the answer names the previous member id as leader, so the client does not assign',
    );
    assert.notEqual(old.leader, v5.memberId);
    assert.equal((await sim.runUntil(v5.sync())).assignment.toString(), 'L');
    assert.equal((await sim.runUntil(other.heartbeat())).errorCode, ErrorCode.NONE, 'still no rebalance');
    await sim.shutdown();
  });

  test('OffsetCommit from a member of a group that does not exist: ILLEGAL_GENERATION before v9, GROUP_ID_NOT_FOUND from v9', async () => {
    const { sim, net } = await bootCoordinator(9, new MemoryFileSystem());
    const commit = (version: number) =>
      sim.runUntil(
        coordinatorRequest(
          net,
          'group.commit',
          {
            version,
            clientId: 'c',
            clientHost: '/127.0.0.1',
            request: {
              groupId: 'nobody',
              generationId: 1,
              memberId: 'm',
              groupInstanceId: null,
              topics: [
                {
                  name: 't',
                  partitions: [
                    { partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null },
                  ],
                },
              ],
            },
          },
          60_000,
        ),
      );
    assert.equal((await commit(8)).topics[0]!.partitions[0]!.errorCode, ErrorCode.ILLEGAL_GENERATION);
    assert.equal((await commit(9)).topics[0]!.partitions[0]!.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
    await sim.shutdown();
  });
});
