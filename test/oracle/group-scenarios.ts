/**
 * Consumer-group differential scenarios (issue 5): the classic protocol driven by raw requests,
 * the same on Kafka and Skiff: FindCoordinator, the two-step JoinGroup of KIP-394, SyncGroup with
 * leader-computed assignments, Heartbeat (REBALANCE_IN_PROGRESS when a member joins), a second
 * member's rebalance, OffsetCommit (and its generation / member checks), OffsetFetch,
 * DescribeGroups, ListGroups, LeaveGroup, an admin offset reset on the Empty group, OffsetDelete
 * and DeleteGroups.
 *
 * Member ids are random: results carry them as `member-1`, `member-2` (in order of first
 * appearance) plus whether each has Kafka's shape `<client id>-<uuid>`. Waiting is bounded and
 * reported as booleans, never as times or counts of tries.
 */
import {
  decodeConsumerAssignment,
  decodeConsumerSubscription,
  encodeConsumerAssignment,
  encodeConsumerSubscription,
} from '../../src/protocol/consumer-protocol';
import { ApiKey } from '../../src/protocol/api-keys';
import { ErrorCode } from '../../src/protocol/error-codes';
import { err, sleep, type Json, type ScenarioContext } from './context';
import type { Scenario } from './scenarios';

const UUID_SUFFIX = /-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Random member ids -> stable labels. */
class MemberIds {
  private readonly labels = new Map<string, string>();
  label(id: string): string {
    if (id === '') return '';
    let l = this.labels.get(id);
    if (l === undefined) {
      l = `member-${this.labels.size + 1}`;
      this.labels.set(id, l);
    }
    return l;
  }
  /** Whether `id` is `<prefix>-<uuid>`, Kafka's form (prefix: the group instance id, else the client id). */
  static kafkaShape(id: string, prefix: string): boolean {
    return id.startsWith(`${prefix}-`) && UUID_SUFFIX.test(id);
  }
}

/** FindCoordinator (group) until it answers NONE (Kafka creates __consumer_offsets first), bounded. */
async function findCoordinator(ctx: ScenarioContext, groupId: string): Promise<Json> {
  const v = ctx.v(ApiKey.FindCoordinator);
  let last: Record<string, unknown> = {};
  for (let i = 0; i < 100; i++) {
    const body = await ctx.request(
      ApiKey.FindCoordinator,
      v >= 4 ? { keyType: 0, coordinatorKeys: [groupId] } : { key: groupId, keyType: 0 },
    );
    last = v >= 4 ? (body.coordinators as Array<Record<string, unknown>>)[0]! : body;
    if ((last.errorCode as number) === ErrorCode.NONE) break;
    await sleep(100);
  }
  const md = await ctx.client.metadata([]);
  const broker = [...md.brokers.values()][0]!;
  return {
    error: err(last.errorCode as number),
    isTheBroker: last.nodeId === broker.nodeId && last.host === broker.host && last.port === broker.port,
    key: (last.key as string | undefined) ?? null,
  };
}

function subscription(topics: string[]): Buffer {
  return encodeConsumerSubscription(topics, Buffer.from('ud'));
}

function assignmentJson(bytes: Buffer | null): Json {
  if (bytes === null || bytes.length === 0) return null;
  const a = decodeConsumerAssignment(bytes);
  return {
    version: a.version,
    partitions: Object.fromEntries([...a.partitions].map(([t, ps]) => [t, ps])),
    userData: a.userData === null ? null : a.userData.toString('utf8'),
  };
}

function describedJson(body: Record<string, unknown>, ids: MemberIds): Json {
  const g = (body.groups as Array<Record<string, unknown>>)[0]!;
  return {
    error: err(g.errorCode as number),
    groupId: g.groupId as string,
    state: g.groupState as string,
    protocolType: g.protocolType as string,
    protocol: g.protocolData as string,
    members: (g.members as Array<Record<string, unknown>>)
      .map((m) => {
        const metadata = m.memberMetadata as Buffer;
        const sub = metadata.length > 0 ? decodeConsumerSubscription(metadata) : null;
        return {
          memberId: ids.label(m.memberId as string),
          groupInstanceId: (m.groupInstanceId as string | null | undefined) ?? null,
          clientId: m.clientId as string,
          clientHost: m.clientHost as string,
          subscription: sub === null ? null : { topics: sub.topics, userData: sub.userData?.toString('utf8') ?? null },
          assignment: assignmentJson(m.memberAssignment as Buffer),
        };
      })
      .sort((a, b) => a.memberId.localeCompare(b.memberId)),
  };
}

const LOADING = new Set<number>([
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NOT_COORDINATOR,
]);

/**
 * Sends a request again (bounded) while its answer says the coordinator is still loading: Kafka
 * loads its __consumer_offsets partition a moment after FindCoordinator first answers. Timing, so
 * the retries are not part of the result.
 */
async function whileLoading(
  send: () => Promise<Record<string, unknown>>,
  code: (body: Record<string, unknown>) => number,
): Promise<Record<string, unknown>> {
  let body = await send();
  for (let i = 0; i < 100 && LOADING.has(code(body)); i++) {
    await sleep(100);
    body = await send();
  }
  return body;
}

async function describe(ctx: ScenarioContext, groupId: string, ids: MemberIds): Promise<Json> {
  const body = await whileLoading(
    () => ctx.request(ApiKey.DescribeGroups, { groups: [groupId], includeAuthorizedOperations: false }),
    (b) => (b.groups as Array<{ errorCode: number }>)[0]!.errorCode,
  );
  return describedJson(body, ids);
}

async function listed(ctx: ScenarioContext, groupId: string): Promise<Json> {
  const body = await ctx.request(ApiKey.ListGroups, { statesFilter: [], typesFilter: [] });
  const g = (body.groups as Array<Record<string, unknown>>).find((x) => x.groupId === groupId);
  return {
    error: err(body.errorCode as number),
    group:
      g === undefined
        ? 'absent'
        : {
            protocolType: g.protocolType as string,
            state: (g.groupState as string | undefined) ?? null,
            type: (g.groupType as string | undefined) ?? null,
          },
  };
}

function joinJson(body: Record<string, unknown>, ids: MemberIds): Json {
  return {
    error: err(body.errorCode as number),
    generationId: body.generationId as number,
    protocolType: (body.protocolType as string | null | undefined) ?? null,
    protocolName: (body.protocolName as string | null) ?? null,
    leader: ids.label(body.leader as string),
    memberId: ids.label(body.memberId as string),
    skipAssignment: (body.skipAssignment as boolean | undefined) ?? null,
    members: (body.members as Array<Record<string, unknown>>)
      .map((m) => {
        const sub = decodeConsumerSubscription(m.metadata as Buffer);
        return {
          memberId: ids.label(m.memberId as string),
          groupInstanceId: (m.groupInstanceId as string | null | undefined) ?? null,
          topics: sub.topics,
          userData: sub.userData?.toString('utf8') ?? null,
        };
      })
      .sort((a, b) => a.memberId.localeCompare(b.memberId)),
  };
}

/** A LeaveGroup answer: the top-level error and (v3+) each member's. */
function leaveJson(body: Record<string, unknown>, ids: MemberIds): Json {
  return {
    error: err(body.errorCode as number),
    members: ((body.members as Array<Record<string, unknown>> | undefined) ?? [])
      .map((m) => ({ memberId: ids.label(m.memberId as string), error: err(m.errorCode as number) }))
      .sort((x, y) => x.memberId.localeCompare(y.memberId)),
  };
}

const groupLifecycle: Scenario = {
  name: 'group-lifecycle',
  about:
    'classic group: FindCoordinator, two-step join (KIP-394), sync, heartbeat, a second member rebalances the group, commits with generation checks, fetch, describe, list, leave, admin reset while Empty, OffsetDelete, DeleteGroups',
  async run(ctx) {
    const topic = 'grp';
    const groupId = 'oracle-group';
    await ctx.createTopic(topic, 4);
    for (const p of [0, 1, 2, 3])
      await ctx.produce(
        topic,
        p,
        Array.from({ length: p + 2 }, (_, i) => ({ key: `k${i}`, value: `v${p}-${i}` })),
      );
    const ids = new MemberIds();
    const out: Record<string, Json> = {};
    out.findCoordinator = await findCoordinator(ctx, groupId);
    out.describeBefore = await describe(ctx, groupId, ids);

    const a = await ctx.member('oracle-a');
    const b = await ctx.member('oracle-b');
    const protocols: Array<[string, Buffer]> = [
      ['range', subscription([topic])],
      ['roundrobin', subscription([topic])],
    ];

    // Member A: the first JoinGroup with no member id is refused with one to use (KIP-394).
    const a0 = await whileLoading(
      () => a.join(groupId, '', protocols),
      (x) => x.errorCode as number,
    );
    const memberA = a0.memberId as string;
    out.joinA0 = {
      ...(joinJson(a0, ids) as Record<string, Json>),
      kafkaShapedMemberId: MemberIds.kafkaShape(memberA, 'oracle-a'),
    };
    const a1 = await a.join(groupId, memberA, protocols);
    out.joinA1 = joinJson(a1, ids);
    const gen1 = a1.generationId as number;
    const allFour = encodeConsumerAssignment(new Map([[topic, [0, 1, 2, 3]]]), Buffer.from('gen1'));
    const syncA1 = await a.sync(groupId, gen1, memberA, a1.protocolName as string, [[memberA, allFour]]);
    out.syncA1 = {
      error: err(syncA1.errorCode as number),
      protocolName: (syncA1.protocolName as string | null | undefined) ?? null,
      assignment: assignmentJson(syncA1.assignment as Buffer),
    };
    out.heartbeatA1 = err((await a.heartbeat(groupId, gen1, memberA)).errorCode as number);
    out.heartbeatWrongGeneration = err((await a.heartbeat(groupId, gen1 + 5, memberA)).errorCode as number);
    out.heartbeatUnknownMember = err((await a.heartbeat(groupId, gen1, 'oracle-a-not-a-member')).errorCode as number);
    out.commitGen1 = await a.commit(groupId, gen1, memberA, [
      [topic, 0, 1, 'gen1'],
      [topic, 3, 2, null],
    ]);
    out.describeStable1 = await describe(ctx, groupId, ids);

    // Member B joins: its JoinGroup waits for the rebalance; A learns of it from its heartbeat.
    const b0 = await b.join(groupId, '', protocols);
    const memberB = b0.memberId as string;
    out.joinB0 = {
      ...(joinJson(b0, ids) as Record<string, Json>),
      kafkaShapedMemberId: MemberIds.kafkaShape(memberB, 'oracle-b'),
    };
    const b1Pending = b.join(groupId, memberB, protocols);
    let sawRebalance = false;
    for (let i = 0; i < 100 && !sawRebalance; i++) {
      const hb = err((await a.heartbeat(groupId, gen1, memberA)).errorCode as number);
      if (hb === 'REBALANCE_IN_PROGRESS') sawRebalance = true;
      else if (hb !== 'NONE') throw new Error(`${ctx.target.name}: heartbeat during the rebalance answered ${hb}`);
      else await sleep(50);
    }
    out.heartbeatSawRebalance = sawRebalance;
    out.describeRebalancing = await describe(ctx, groupId, ids).then((d) => ({
      state: (d as { state: string }).state,
    }));
    out.commitDuringRebalance = await a.commit(groupId, gen1, memberA, [[topic, 0, 1, 'during']]);
    const a2 = await a.join(groupId, memberA, protocols);
    const b1 = await b1Pending;
    out.joinA2 = joinJson(a2, ids);
    out.joinB1 = joinJson(b1, ids);
    const gen2 = a2.generationId as number;
    const toA = encodeConsumerAssignment(new Map([[topic, [0, 1]]]), null);
    const toB = encodeConsumerAssignment(new Map([[topic, [2, 3]]]), null);
    const leaderIsA = (a2.leader as string) === memberA;
    const [syncA2, syncB2] = await Promise.all([
      a.sync(
        groupId,
        gen2,
        memberA,
        a2.protocolName as string,
        leaderIsA
          ? [
              [memberA, toA],
              [memberB, toB],
            ]
          : [],
      ),
      b.sync(
        groupId,
        gen2,
        memberB,
        b1.protocolName as string,
        leaderIsA
          ? []
          : [
              [memberA, toA],
              [memberB, toB],
            ],
      ),
    ]);
    out.syncA2 = { error: err(syncA2.errorCode as number), assignment: assignmentJson(syncA2.assignment as Buffer) };
    out.syncB2 = { error: err(syncB2.errorCode as number), assignment: assignmentJson(syncB2.assignment as Buffer) };
    out.heartbeatsGen2 = [
      err((await a.heartbeat(groupId, gen2, memberA)).errorCode as number),
      err((await b.heartbeat(groupId, gen2, memberB)).errorCode as number),
    ];

    // Commits: the current generation, a stale one, an unknown member; then fetch them back.
    out.commitGen2 = await a.commit(groupId, gen2, memberA, [
      [topic, 0, 2, 'a-gen2'],
      [topic, 1, 3, ''],
    ]);
    out.commitGen2B = await b.commit(groupId, gen2, memberB, [[topic, 2, 4, 'b-gen2']]);
    out.commitStaleGeneration = await a.commit(groupId, gen1, memberA, [[topic, 0, 9, 'stale']]);
    out.commitUnknownMember = await a.commit(groupId, gen2, 'oracle-a-not-a-member', [[topic, 0, 9, 'unknown']]);
    out.commitAdminWhileStable = await a.commit(groupId, -1, '', [[topic, 0, 9, 'admin']]);
    out.fetchSome = await a.fetchOffsets(groupId, [
      [topic, [0, 1, 2, 3]],
      ['grp-no-such-topic', [0]],
    ]);
    out.fetchAll = await a.fetchOffsets(groupId, null);
    out.fetchUnknownGroup = await a.fetchOffsets('oracle-group-never', [[topic, [0]]]);
    out.describeStable2 = await describe(ctx, groupId, ids);
    out.listStable = await listed(ctx, groupId);
    const deleteWhileStable = await ctx.request(ApiKey.DeleteGroups, { groupsNames: [groupId] });
    out.deleteWhileStable = (deleteWhileStable.results as Array<{ groupId: string; errorCode: number }>).map((r) => ({
      groupId: r.groupId,
      error: err(r.errorCode),
    }));

    // Both leave in one LeaveGroup (v3+ batches members): Empty, offsets kept.
    out.leave = leaveJson(await a.leave(groupId, [memberA, memberB]), ids);
    out.leaveAgain = leaveJson(await a.leave(groupId, [memberA]), ids);
    out.describeEmpty = await describe(ctx, groupId, ids);
    out.listEmpty = await listed(ctx, groupId);
    out.heartbeatAfterLeave = err((await a.heartbeat(groupId, gen2, memberA)).errorCode as number);

    // Reset while Empty: an admin commit (generation -1, no member), as kafka-consumer-groups does.
    out.resetCommit = await a.commit(groupId, -1, '', [
      [topic, 0, 0, null],
      [topic, 1, 0, null],
      [topic, 2, 0, null],
      [topic, 3, 5, null],
    ]);
    out.fetchAfterReset = await a.fetchOffsets(groupId, [[topic, [0, 1, 2, 3]]]);
    const offsetDelete = await ctx.request(ApiKey.OffsetDelete, {
      groupId,
      topics: [{ name: topic, partitions: [{ partitionIndex: 1 }, { partitionIndex: 3 }] }],
    });
    out.offsetDelete = {
      error: err(offsetDelete.errorCode as number),
      topics: (
        offsetDelete.topics as Array<{ name: string; partitions: Array<{ partitionIndex: number; errorCode: number }> }>
      ).map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => [p.partitionIndex, err(p.errorCode)] as Json),
      })),
    };
    out.fetchAfterOffsetDelete = await a.fetchOffsets(groupId, [[topic, [0, 1, 2, 3]]]);

    const deleted = await ctx.request(ApiKey.DeleteGroups, { groupsNames: [groupId, 'oracle-group-never'] });
    out.deleteGroups = (deleted.results as Array<{ groupId: string; errorCode: number }>)
      .map((r) => ({ groupId: r.groupId, error: err(r.errorCode) }))
      .sort((x, y) => (x.groupId as string).localeCompare(y.groupId as string));
    const again = await ctx.request(ApiKey.DeleteGroups, { groupsNames: [groupId] });
    out.deleteAgain = (again.results as Array<{ groupId: string; errorCode: number }>).map((r) => ({
      groupId: r.groupId,
      error: err(r.errorCode),
    }));
    out.describeDeleted = await describe(ctx, groupId, ids);
    out.listDeleted = await listed(ctx, groupId);
    out.fetchDeleted = await a.fetchOffsets(groupId, [[topic, [0, 3]]]);
    return out;
  },
};

const groupErrors: Scenario = {
  name: 'group-errors',
  about:
    'group request edge cases: empty group id, unknown protocol type mix, session timeout bounds, sync/heartbeat/commit for an unknown group, OffsetDelete of a group in use',
  async run(ctx) {
    const topic = 'grp-err';
    await ctx.createTopic(topic, 1);
    await findCoordinator(ctx, 'oracle-errors');
    const ids = new MemberIds();
    const m = await ctx.member('oracle-e');
    const protocols: Array<[string, Buffer]> = [['range', subscription([topic])]];
    const out: Record<string, Json> = {};
    await whileLoading(
      () => m.heartbeat('oracle-errors', 1, 'x'),
      (x) => x.errorCode as number,
    );
    out.joinEmptyGroupId = err(((await m.join('', '', protocols)) as Record<string, unknown>).errorCode as number);
    out.joinSessionTooSmall = err(
      ((await m.join('oracle-errors', '', protocols, { sessionTimeoutMs: 1 })) as Record<string, unknown>)
        .errorCode as number,
    );
    out.joinSessionTooLarge = err(
      (
        (await m.join('oracle-errors', '', protocols, { sessionTimeoutMs: 24 * 3600 * 1000 })) as Record<
          string,
          unknown
        >
      ).errorCode as number,
    );
    out.syncUnknownGroup = err(
      ((await m.sync('oracle-errors-unknown', 1, 'x', 'range', [])) as Record<string, unknown>).errorCode as number,
    );
    out.heartbeatUnknownGroup = err(
      ((await m.heartbeat('oracle-errors-unknown', 1, 'x')) as Record<string, unknown>).errorCode as number,
    );
    // A commit with a generation for a group that does not exist: GROUP_ID_NOT_FOUND from v9 on, ILLEGAL_GENERATION before.
    out.commitUnknownGroupWithMember = await m.commit('oracle-errors-unknown', 1, 'x', [[topic, 0, 1, null]]);
    out.commitUnknownGroupWithMemberV8 = await m.commit('oracle-errors-unknown', 1, 'x', [[topic, 0, 1, null]], 8);
    out.leaveUnknownGroup = leaveJson(await m.leave('oracle-errors-unknown', ['x']), ids);

    // A member in a group: another protocol type is refused; OffsetDelete of a subscribed topic too.
    const j0 = await m.join('oracle-errors', '', protocols);
    const memberId = j0.memberId as string;
    const j1 = await m.join('oracle-errors', memberId, protocols);
    out.join = joinJson(j1, ids);
    const gen = j1.generationId as number;
    const sync = await m.sync('oracle-errors', gen, memberId, 'range', [
      [memberId, encodeConsumerAssignment(new Map([[topic, [0]]]))],
    ]);
    out.sync = err(sync.errorCode as number);
    const other = await ctx.member('oracle-other');
    const otherJoin = await other.request(ApiKey.JoinGroup, {
      groupId: 'oracle-errors',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'connect',
      protocols: [{ name: 'default', metadata: Buffer.from('x') }],
      reason: null,
    });
    out.joinOtherProtocolType = err(otherJoin.errorCode as number);
    const noCommonProtocol = await other.request(ApiKey.JoinGroup, {
      groupId: 'oracle-errors',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'sticky-only', metadata: subscription([topic]) }],
      reason: null,
    });
    out.joinNoCommonProtocol = err(noCommonProtocol.errorCode as number);
    out.commit = await m.commit('oracle-errors', gen, memberId, [
      [topic, 0, 1, null],
      [topic, 5, 1, null],
    ]);
    const offsetDelete = await ctx.request(ApiKey.OffsetDelete, {
      groupId: 'oracle-errors',
      topics: [{ name: topic, partitions: [{ partitionIndex: 0 }] }],
    });
    out.offsetDeleteSubscribed = {
      error: err(offsetDelete.errorCode as number),
      partitions: (
        offsetDelete.topics as Array<{ partitions: Array<{ partitionIndex: number; errorCode: number }> }>
      ).flatMap((t) => t.partitions.map((p) => [p.partitionIndex, err(p.errorCode)] as Json)),
    };
    const offsetDeleteUnknown = await ctx.request(ApiKey.OffsetDelete, {
      groupId: 'oracle-errors-unknown',
      topics: [{ name: topic, partitions: [{ partitionIndex: 0 }] }],
    });
    out.offsetDeleteUnknownGroup = err(offsetDeleteUnknown.errorCode as number);
    out.leave = leaveJson(await m.leave('oracle-errors', [memberId]), ids);
    return out;
  },
};

const staticMembers: Scenario = {
  name: 'group-static-members',
  about:
    'static membership (KIP-345): a member with group.instance.id joins without the member-id round trip, a restart with the same instance id replaces it (old id fenced), describe shows the instance id, LeaveGroup by instance id',
  async run(ctx) {
    const topic = 'grp-static';
    const groupId = 'oracle-static';
    await ctx.createTopic(topic, 2);
    await findCoordinator(ctx, groupId);
    const ids = new MemberIds();
    const first = await ctx.member('oracle-s');
    const protocols: Array<[string, Buffer]> = [['range', subscription([topic])]];
    const out: Record<string, Json> = {};
    const j1 = await whileLoading(
      () => first.join(groupId, '', protocols, { groupInstanceId: 'instance-1' }),
      (x) => x.errorCode as number,
    );
    const member1 = j1.memberId as string;
    // A static member's id is `<group.instance.id>-<uuid>` in Kafka (a dynamic one's `<client id>-<uuid>`).
    out.join = {
      ...(joinJson(j1, ids) as Record<string, Json>),
      kafkaShapedMemberId: MemberIds.kafkaShape(member1, 'instance-1'),
    };
    const gen = j1.generationId as number;
    const sync = await first.request(ApiKey.SyncGroup, {
      groupId,
      generationId: gen,
      memberId: member1,
      groupInstanceId: 'instance-1',
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [{ memberId: member1, assignment: encodeConsumerAssignment(new Map([[topic, [0, 1]]])) }],
    });
    out.sync = { error: err(sync.errorCode as number), assignment: assignmentJson(sync.assignment as Buffer) };
    out.describeStable = await describe(ctx, groupId, ids);

    // The same instance restarts (a new connection, no member id): it takes over the membership.
    const restarted = await ctx.member('oracle-s');
    const j2 = await restarted.join(groupId, '', protocols, { groupInstanceId: 'instance-1' });
    const member2 = j2.memberId as string;
    out.rejoin = {
      ...(joinJson(j2, ids) as Record<string, Json>),
      newMemberId: member2 !== member1,
      sameGeneration: (j2.generationId as number) === gen,
    };
    const hbOld = await first.request(ApiKey.Heartbeat, {
      groupId,
      generationId: gen,
      memberId: member1,
      groupInstanceId: 'instance-1',
    });
    out.heartbeatOldMember = err(hbOld.errorCode as number);
    const sync2 = await restarted.request(ApiKey.SyncGroup, {
      groupId,
      generationId: j2.generationId as number,
      memberId: member2,
      groupInstanceId: 'instance-1',
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [],
    });
    out.syncRestarted = {
      error: err(sync2.errorCode as number),
      assignment: assignmentJson(sync2.assignment as Buffer),
    };
    out.heartbeatNewMember = err(
      (
        await restarted.request(ApiKey.Heartbeat, {
          groupId,
          generationId: j2.generationId as number,
          memberId: member2,
          groupInstanceId: 'instance-1',
        })
      ).errorCode as number,
    );
    out.describeAfterRestart = await describe(ctx, groupId, ids);

    // LeaveGroup v3+ by instance id alone (member id unknown to the caller).
    const left = await restarted.request(ApiKey.LeaveGroup, {
      groupId,
      members: [{ memberId: '', groupInstanceId: 'instance-1', reason: null }],
    });
    out.leave = {
      error: err(left.errorCode as number),
      members: ((left.members as Array<Record<string, unknown>> | undefined) ?? []).map((m) => ({
        memberId: ids.label(m.memberId as string),
        groupInstanceId: (m.groupInstanceId as string | null) ?? null,
        error: err(m.errorCode as number),
      })),
    };
    out.describeAfterLeave = await describe(ctx, groupId, ids);
    return out;
  },
};

/** The group scenarios, appended to SCENARIOS. */
export const GROUP_SCENARIOS: readonly Scenario[] = [groupLifecycle, groupErrors, staticMembers];
