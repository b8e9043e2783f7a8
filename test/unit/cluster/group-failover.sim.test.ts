/**
 * Group coordinators moving with their `__consumer_offsets` partition, with the real actors of a
 * three-broker cluster in the deterministic simulation (controller, replica managers, replicas,
 * coordinators): DESIGN.md invariant 7 (committed offsets survive coordinator moves) and issue 11
 * item 7. A member is driven as a client drives it: it finds the coordinator as FindCoordinator does
 * (the leader of the group's partition in the controller's image) and retries on the coordinator
 * errors a Kafka client retries on.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootCluster } from '../../helpers/cluster-harness';
import type { ClusterSim } from '../../helpers/cluster-harness';
import { coordinatorArgs, groupRequestBody } from '../../helpers/sim-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { OFFSETS_TOPIC, offsetsPartitionFor } from '../../../src/group/offsets-records';
import { groupCoordinatorActorId } from '../../../src/group/messages';
import type {
  CommitResult,
  FetchOffsetsResult,
  GroupClientKind,
  GroupClientMessages,
  GroupClientRequestOf,
  JoinResult,
  SyncResult,
} from '../../../src/group/messages';
import type { FetchReply } from '../../../src/replica/messages';

const GROUP = 'g';
const TOPIC = 't';
const OFFSETS_PARTITIONS = 3;
const SESSION_MS = 30_000;
const REBALANCE_MS = 30_000;

/** The errors on which a Kafka group client looks the coordinator up again or backs off and retries. */
const COORDINATOR_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);

/** A coordinator's reply: the result, or a bare `{ errorCode }` (routing, loading, NOT_COORDINATOR). */
type Reply<K extends GroupClientKind> = GroupClientMessages[K]['reply'];

/** Whether `reply` is a bare coordinator error (no result fields). */
function isBare(reply: object): boolean {
  return Object.keys(reply).every((k) => k === 'errorCode' || k === 'loading');
}

/** The error code of a bare reply. */
function bareError(reply: object): number {
  return (reply as { errorCode: number }).errorCode;
}

/** A consumer-group member against the simulated cluster (module comment). */
class ClusterMember {
  memberId = '';
  generationId = -1;
  /** Every coordinator error seen, in order (tests read which ones a move produced). */
  readonly coordinatorErrors: number[] = [];

  constructor(
    private readonly cluster: ClusterSim,
    readonly clientId: string,
  ) {}

  /**
   * One request to the group's coordinator as FindCoordinator names it: the leader of the group's
   * __consumer_offsets partition. A coordinator that is not there (crashed broker, not spawned yet)
   * is COORDINATOR_NOT_AVAILABLE, as the network layer answers.
   */
  async sendOnce<K extends GroupClientKind>(type: K, request: GroupClientRequestOf<K>, version: number) {
    const p = await this.cluster.partition(OFFSETS_TOPIC, offsetsPartitionFor(GROUP, OFFSETS_PARTITIONS));
    if (p.leader < 0 || !this.cluster.up.has(p.leader))
      return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE } as Reply<K>;
    const body = groupRequestBody(this.clientId, version, request);
    return this.cluster
      .ask<GroupClientMessages, K>(groupCoordinatorActorId(p.leader, p.partition), type, body, 120_000)
      .catch(() => ({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }) as Reply<K>);
  }

  /** {@link sendOnce}, retried 250 ms apart (up to 240 times: a minute of virtual time) on coordinator errors. */
  async send<K extends GroupClientKind>(type: K, request: GroupClientRequestOf<K>, version: number) {
    for (let attempt = 0; attempt < 240; attempt++) {
      const reply = await this.sendOnce(type, request, version);
      const code = isBare(reply) ? bareError(reply) : firstPartitionError(reply);
      if (!COORDINATOR_ERRORS.has(code)) return reply;
      this.coordinatorErrors.push(code);
      await this.cluster.advance(250);
    }
    assert.fail(`${type}: the coordinator of ${GROUP} did not answer within a minute`);
  }

  /** JoinGroup v5, through the KIP-394 member id round when the member has none. */
  async join(): Promise<JoinResult> {
    for (let round = 0; round < 2; round++) {
      const reply = await this.send(
        'group.join',
        {
          groupId: GROUP,
          sessionTimeoutMs: SESSION_MS,
          rebalanceTimeoutMs: REBALANCE_MS,
          memberId: this.memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: Buffer.from('sub') }],
          reason: null,
        },
        5,
      );
      assert.ok(!isBare(reply), `join: error ${JSON.stringify(reply)}`);
      const joined = reply as JoinResult;
      this.memberId = joined.memberId;
      if (joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED) continue;
      assert.equal(joined.errorCode, ErrorCode.NONE, 'joined');
      this.generationId = joined.generationId;
      return joined;
    }
    assert.fail('join: still MEMBER_ID_REQUIRED after the member id round');
  }

  /** SyncGroup v3; as the only member it is the leader and assigns itself `assignment`. */
  async sync(assignment: string): Promise<SyncResult> {
    const reply = await this.send(
      'group.sync',
      {
        groupId: GROUP,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: null,
        protocolType: null,
        protocolName: null,
        assignments: [{ memberId: this.memberId, assignment: Buffer.from(assignment) }],
      },
      3,
    );
    assert.ok(!isBare(reply), `sync: error ${JSON.stringify(reply)}`);
    return reply as SyncResult;
  }

  async heartbeat(): Promise<number> {
    const reply = await this.send(
      'group.heartbeat',
      { groupId: GROUP, generationId: this.generationId, memberId: this.memberId, groupInstanceId: null },
      3,
    );
    return reply.errorCode;
  }

  /** OffsetCommit v7 of `offset` for partitions 0 and 1 of {@link TOPIC}; resolves with the per-partition errors. */
  async commit(offset: number): Promise<number[]> {
    const reply = await this.send(
      'group.commit',
      {
        groupId: GROUP,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: null,
        topics: [
          {
            name: TOPIC,
            partitions: [0, 1].map((partitionIndex) => ({
              partitionIndex,
              committedOffset: offset + partitionIndex * 1000,
              committedLeaderEpoch: 0,
              committedMetadata: `m${offset}`,
            })),
          },
        ],
      },
      7,
    );
    assert.ok(!isBare(reply), `commit: error ${JSON.stringify(reply)}`);
    return (reply as CommitResult).topics.flatMap((t) => t.partitions.map((p) => p.errorCode));
  }

  /** OffsetFetch v8 of every committed offset of the group: `partition -> offset`. */
  async committed(): Promise<Map<number, number>> {
    const reply = await this.send('group.fetch-offsets', { groupId: GROUP, topics: null }, 8);
    assert.ok(!isBare(reply), `fetch-offsets: error ${JSON.stringify(reply)}`);
    const result = reply as FetchOffsetsResult;
    assert.equal(result.errorCode, ErrorCode.NONE);
    return new Map(
      result.topics
        .filter((t) => t.name === TOPIC)
        .flatMap((t) => t.partitions.map((p) => [p.partitionIndex, p.committedOffset])),
    );
  }
}

/** The first partition error of a commit or offset-fetch result (NONE for other results). */
function firstPartitionError(reply: object): number {
  const topics = (reply as { topics?: { partitions?: { errorCode?: number }[] }[] }).topics;
  const code = topics?.[0]?.partitions?.[0]?.errorCode;
  return typeof code === 'number' ? code : ErrorCode.NONE;
}

/** Boots three brokers and creates __consumer_offsets as ensureOffsetsTopic does (3 partitions here, RF 3). */
async function bootWithOffsetsTopic(seed: number): Promise<ClusterSim> {
  const cluster = await bootCluster(seed, {
    properties: {
      'offsets.topic.num.partitions': String(OFFSETS_PARTITIONS),
      'group.initial.rebalance.delay.ms': '0',
    },
  });
  await cluster.createTopic(OFFSETS_TOPIC, OFFSETS_PARTITIONS, 3, {
    'cleanup.policy': 'compact',
    'compression.type': 'producer',
  });
  return cluster;
}

/** A member that joined, synced and committed `commits` offsets (1..commits), each acknowledged. */
async function memberWithCommits(cluster: ClusterSim, commits: number): Promise<ClusterMember> {
  const member = new ClusterMember(cluster, 'c1');
  await member.join();
  assert.equal((await member.sync('p0,p1')).assignment.toString(), 'p0,p1');
  for (let offset = 1; offset <= commits; offset++)
    assert.deepEqual(await member.commit(offset), [ErrorCode.NONE, ErrorCode.NONE], `commit ${offset} acknowledged`);
  return member;
}

describe('group coordinators move with their __consumer_offsets partition (simulation)', () => {
  test('leader crash of the coordinator partition: the new leader loads every acknowledged commit; the member rejoins and resumes from them', async () => {
    const cluster = await bootWithOffsetsTopic(11);
    const partition = offsetsPartitionFor(GROUP, OFFSETS_PARTITIONS);
    const before = await cluster.partition(OFFSETS_TOPIC, partition);
    assert.equal(before.replicas.length, 3, '__consumer_offsets has RF 3');
    const member = await memberWithCommits(cluster, 20);
    assert.deepEqual(
      [...(await member.committed())],
      [
        [0, 20],
        [1, 1020],
      ],
    );

    await cluster.crashBroker(before.leader);
    const after = await cluster.partition(OFFSETS_TOPIC, partition);
    assert.notEqual(after.leader, before.leader, 'the partition has a new leader');
    assert.ok(after.leader >= 0 && before.isr.includes(after.leader), 'elected from the ISR');
    assert.ok(after.leaderEpoch > before.leaderEpoch);

    // The old coordinator died with its broker; the member's session goes on at the new one, where
    // the loaded group is Stable with it.
    await assert.rejects(
      cluster.ask(groupCoordinatorActorId(before.leader, partition), 'group.fetch-offsets', {
        version: 8,
        clientId: 'admin',
        clientHost: '/127.0.0.1',
        request: { groupId: GROUP, topics: null },
      }),
      'no coordinator on the crashed broker',
    );
    assert.equal(await member.heartbeat(), ErrorCode.NONE, 'the new coordinator knows the member');
    assert.deepEqual(
      [...(await member.committed())],
      [
        [0, 20],
        [1, 1020],
      ],
      'every acknowledged commit is served by the new coordinator',
    );

    // The member rejoins (a new generation) and resumes from its commits.
    const generation = member.generationId;
    const rejoin = await member.join();
    assert.ok(rejoin.generationId > generation, 'a new generation');
    assert.equal((await member.sync('p0,p1')).errorCode, ErrorCode.NONE);
    const resumeAt = await member.committed();
    assert.equal(resumeAt.get(0), 20);
    for (let offset = resumeAt.get(0)! + 1; offset <= 25; offset++)
      assert.deepEqual(await member.commit(offset), [ErrorCode.NONE, ErrorCode.NONE]);

    // The old leader comes back as a follower and holds every commit; a second move keeps them all.
    await cluster.startBroker(before.leader);
    for (let i = 0; i < 120 && !(await cluster.partition(OFFSETS_TOPIC, partition)).isr.includes(before.leader); i++)
      await cluster.advance(500);
    assert.ok((await cluster.partition(OFFSETS_TOPIC, partition)).isr.includes(before.leader), 'back in the ISR');
    await cluster.crashBroker(after.leader);
    const third = await cluster.partition(OFFSETS_TOPIC, partition);
    assert.notEqual(third.leader, after.leader);
    assert.deepEqual(
      [...(await member.committed())],
      [
        [0, 25],
        [1, 1025],
      ],
      'after a second move too',
    );
    await cluster.sim.shutdown();
  });

  test('a fresh leader whose HW lags its LEO does not load until the HW reaches the start of its epoch: no acknowledged commit is missed', async () => {
    const cluster = await bootWithOffsetsTopic(12);
    const partition = offsetsPartitionFor(GROUP, OFFSETS_PARTITIONS);
    const before = await cluster.partition(OFFSETS_TOPIC, partition);
    const member = await memberWithCommits(cluster, 5);
    const oldLeaderReplica = cluster.replica(before.leader, before.topicId, partition);
    const followers = before.replicas.filter((b) => b !== before.leader);
    const followerReplicas = new Set(followers.map((b) => cluster.replica(b, before.topicId, partition)));
    const highWatermarkBefore = (await cluster.ask(oldLeaderReplica, 'replica.describe', {})).highWatermark;

    // From now on the followers never learn a higher HW from the old leader (its fetch answers that
    // carry one are lost), and no follower fetch reaches a new leader: the new leader's HW stays
    // below its LEO until the faults go.
    let cutOffNewLeader = true;
    cluster.sim.setFaults((envelope) => {
      if (
        envelope.isReply === true &&
        envelope.from === oldLeaderReplica &&
        followerReplicas.has(envelope.to as never) &&
        ((envelope.body as FetchReply | null)?.highWatermark ?? -1) > highWatermarkBefore
      )
        return 'drop';
      if (
        cutOffNewLeader &&
        envelope.type === 'replica.fetch' &&
        followerReplicas.has(envelope.to as never) &&
        followerReplicas.has(envelope.from as never)
      )
        return 'drop';
      return 'deliver';
    });
    assert.deepEqual(await member.commit(6), [ErrorCode.NONE, ErrorCode.NONE], 'commit 6 acknowledged (acks=all)');

    await cluster.crashBroker(before.leader);
    const after = await cluster.partition(OFFSETS_TOPIC, partition);
    assert.ok(followers.includes(after.leader));
    const newLeader = await cluster.ask(
      cluster.replica(after.leader, after.topicId, partition),
      'replica.describe',
      {},
    );
    assert.ok(
      newLeader.highWatermark < newLeader.logEndOffset,
      `the new leader's HW ${newLeader.highWatermark} lags its LEO ${newLeader.logEndOffset}`,
    );

    // While the HW lags, the coordinator answers COORDINATOR_LOAD_IN_PROGRESS, never the stale offset 5.
    await cluster.advance(3000);
    for (let i = 0; i < 5; i++) {
      const reply = await member.sendOnce('group.fetch-offsets', { groupId: GROUP, topics: null }, 8);
      assert.ok(isBare(reply), `no offsets served while loading: ${JSON.stringify(reply)}`);
      assert.equal(bareError(reply), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
      await cluster.advance(500);
    }

    cutOffNewLeader = false;
    assert.deepEqual(
      [...(await member.committed())],
      [
        [0, 6],
        [1, 1006],
      ],
      'the acknowledged commit 6 is there once the coordinator loaded',
    );
    assert.ok(member.coordinatorErrors.includes(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS));
    cluster.sim.setFaults(null);
    await cluster.sim.shutdown();
  });
});

describe('a group coordinator whose replica does not lead (simulation)', () => {
  test('answers NOT_COORDINATOR, so clients look the coordinator up again, and never loads', async () => {
    const cluster = await bootWithOffsetsTopic(13);
    const partition = offsetsPartitionFor(GROUP, OFFSETS_PARTITIONS);
    const p = await cluster.partition(OFFSETS_TOPIC, partition);
    const follower = p.replicas.find((b) => b !== p.leader)!;
    // A coordinator beside a follower replica, as a stale one would be between two images.
    const id = groupCoordinatorActorId(follower, partition);
    await cluster.sim.runUntil(
      cluster.sim.spawn(
        id,
        'group-coordinator',
        coordinatorArgs(0, partition, cluster.replica(follower, p.topicId, partition)),
        { pool: 'broker', brokerId: follower },
      ),
    );
    for (let i = 0; i < 3; i++) {
      await cluster.advance(1000);
      const reply = await cluster.ask(id, 'group.fetch-offsets', {
        version: 8,
        clientId: 'admin',
        clientHost: '/127.0.0.1',
        request: { groupId: GROUP, topics: null },
      });
      assert.deepEqual(reply, { errorCode: ErrorCode.NOT_COORDINATOR, loading: true });
    }
    await cluster.sim.shutdown();
  });
});
