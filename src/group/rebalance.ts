/**
 * The rebalance protocol of classic groups: JoinGroup, SyncGroup, Heartbeat and LeaveGroup, the
 * join phase and its timers, member sessions, and the group metadata record written when a
 * generation is formed. `Rebalancer` owns the coordinator's groups (the map, membership, state and
 * generation of each), the JoinGroup / SyncGroup requests it holds, and every member and group
 * timer; offset-store.ts reads the groups, and creates and removes them through it.
 *
 * Rules follow Kafka's classic group coordinator: JoinGroup with KIP-394 member ids at v4+, static
 * membership (KIP-345, KIP-814 skipAssignment), the initial rebalance delay, session and rebalance
 * timeouts, removal of members that do not rejoin or sync.
 *
 * Kafka counterpart: the classic-group half of `GroupMetadataManager` (group-coordinator:
 * classicGroupJoin, classicGroupSync, classicGroupHeartbeat, classicGroupLeave, prepareRebalance,
 * completeClassicGroupJoin), with the timers Kafka keeps as DelayedJoin / InitialDelayedJoin,
 * DelayedHeartbeat and the pending-sync timeout.
 */
import assert from 'node:assert/strict';
import type { ActorContext, Envelope, ReplyOf } from '../runtime/actor';
import type { TimerHandle } from '../io/clock';
import { ErrorCode } from '../protocol/error-codes';
import { ClassicGroup, type GroupMember, type MemberProtocol } from './classic-group';
import { groupMetadataKey, groupMetadataValue } from './offsets-records';
import type { CoordinatorWriteError, OffsetsRecord, PartitionWriter } from './partition-writer';
import type {
  ClientRequest,
  GroupEnvelope,
  HeartbeatRequest,
  JoinRequest,
  JoinResult,
  LeaveRequest,
  LeaveResult,
  SyncRequest,
  SyncResult,
} from './messages';

/** A held JoinGroup / SyncGroup request. */
type JoinEnvelope = GroupEnvelope<'group.join'>;
type SyncEnvelope = GroupEnvelope<'group.sync'>;

/** Broker settings the rebalance protocol follows (Kafka's GroupCoordinatorConfig names, in ms). */
export interface RebalanceConfig {
  /** group.initial.rebalance.delay.ms */
  initialRebalanceDelayMs: number;
  /** group.min.session.timeout.ms / group.max.session.timeout.ms */
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  /** group.max.size */
  maxSize: number;
}

/** A member's settings from its JoinGroup. */
interface JoiningMember {
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: MemberProtocol[];
}

/** A JoinGroup being handled: the held request, its group and the joining member's settings. */
interface JoinAttempt {
  envelope: JoinEnvelope;
  group: ClassicGroup;
  /** JoinGroup version (v4+: KIP-394 member ids; v9+: skipAssignment, KIP-814). */
  version: number;
  groupInstanceId: string | null;
  joining: JoiningMember;
}

/** The ids of a static member that rejoined with a new member id (KIP-345). */
interface StaticRejoin {
  groupInstanceId: string;
  /** The id the group knows; it is fenced. */
  oldMemberId: string;
  /** The id just handed out; it takes the old one's place. */
  newMemberId: string;
}

/** A group's join-phase deadline (Kafka's DelayedJoin, or InitialDelayedJoin when `initial`). */
interface JoinTimer {
  handle: TimerHandle;
  initial: boolean;
  /** What the initial delay may still grow by (up to the rebalance timeout). */
  remainingMs: number;
  /** Whether a member joined since the timer was set (the initial delay then extends). */
  newMemberAdded: boolean;
}

/** The join-phase timer to set: its delay, and for the initial delay what it may still grow by. */
interface JoinTimerSchedule {
  initial: boolean;
  delayMs: number;
  remainingMs: number;
}

/** Runs the rebalance protocol for the groups of one coordinator (see the file header). */
export class Rebalancer {
  private readonly groupsById = new Map<string, ClassicGroup>();
  /** memberId -> its JoinGroup / SyncGroup request, held until the join phase / assignment completes. */
  private readonly joinWaiters = new Map<string, JoinEnvelope>();
  private readonly syncWaiters = new Map<string, SyncEnvelope>();
  /** memberId -> its session deadline (Kafka's DelayedHeartbeat). */
  private readonly sessionTimers = new Map<string, TimerHandle>();
  /** memberId -> the deadline of a KIP-394 pending member's rejoin. */
  private readonly pendingMemberTimers = new Map<string, TimerHandle>();
  /** groupId -> the join-phase timer (DelayedJoin / InitialDelayedJoin). */
  private readonly joinTimers = new Map<string, JoinTimer>();
  /** groupId -> the deadline for members' SyncGroup after a join phase. */
  private readonly syncTimers = new Map<string, TimerHandle>();

  constructor(
    private readonly config: RebalanceConfig,
    private readonly writer: PartitionWriter,
  ) {}

  // ---- groups --------------------------------------------------------------------------------

  /** Every group of the coordinator, by id (read-only: groups change through this class). */
  get groups(): ReadonlyMap<string, ClassicGroup> {
    return this.groupsById;
  }

  /** Takes over the groups the loader rebuilt; members of Stable groups start their sessions. */
  adoptLoadedGroups(groups: ReadonlyMap<string, ClassicGroup>, ctx: ActorContext): void {
    assert.equal(this.groupsById.size, 0, 'groups were created before the load completed');
    for (const [groupId, group] of groups) {
      this.groupsById.set(groupId, group);
      if (group.is('Stable')) for (const member of group.members.values()) this.resetSession(group, member, ctx);
      group.assertInvariants();
    }
  }

  /** Creates an Empty group (a first JoinGroup, or a commit from outside any group). */
  createGroup(groupId: string, nowMs: number): ClassicGroup {
    assert.ok(!this.groupsById.has(groupId), `group ${groupId} exists already`);
    const group = new ClassicGroup(groupId, nowMs);
    this.groupsById.set(groupId, group);
    return group;
  }

  /** Removes a group (DeleteGroups, offset expiry): it becomes Dead and its join phase, if any, ends. */
  removeGroup(group: ClassicGroup, ctx: ActorContext): void {
    if (!group.is('Dead')) group.transitionTo('Dead', ctx.clock.nowMs());
    this.clearJoinTimer(group.groupId, ctx);
    if (this.groupsById.get(group.groupId) === group) this.groupsById.delete(group.groupId);
    ctx.log.info({ groupId: group.groupId }, 'group deleted');
  }

  /** The coordinator stops: held requests get NOT_COORDINATOR (clients find the new one); timers end. */
  stop(ctx: ActorContext): void {
    for (const waiter of [...this.joinWaiters.values(), ...this.syncWaiters.values()])
      ctx.reply(waiter, { errorCode: ErrorCode.NOT_COORDINATOR });
    for (const t of [...this.sessionTimers.values(), ...this.pendingMemberTimers.values(), ...this.syncTimers.values()])
      ctx.timers.clearTimeout(t);
    for (const t of this.joinTimers.values()) ctx.timers.clearTimeout(t.handle);
  }

  // ---- JoinGroup -----------------------------------------------------------------------------

  /** JoinGroup: answered at once on an error, otherwise held until the join phase completes. */
  join(envelope: JoinEnvelope, body: ClientRequest<JoinRequest>, ctx: ActorContext): void {
    this.handleJoin(envelope, body, ctx);
    this.groupsById.get(body.request.groupId)?.assertInvariants();
  }

  private handleJoin(envelope: JoinEnvelope, body: ClientRequest<JoinRequest>, ctx: ActorContext): void {
    const { version, clientId, clientHost, request: r } = body;
    const fail = (errorCode: number, memberId = r.memberId) => ctx.reply(envelope, joinError(errorCode, memberId));
    if (!r.groupId) return fail(ErrorCode.INVALID_GROUP_ID);
    if (r.sessionTimeoutMs < this.config.minSessionTimeoutMs || r.sessionTimeoutMs > this.config.maxSessionTimeoutMs)
      return fail(ErrorCode.INVALID_SESSION_TIMEOUT);
    let group = this.groupsById.get(r.groupId);
    if (!group) {
      if (r.memberId !== '') return fail(ErrorCode.UNKNOWN_MEMBER_ID);
      group = this.createGroup(r.groupId, ctx.clock.nowMs());
    }
    if (group.is('Dead')) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    const protocols: MemberProtocol[] = r.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) }));
    if (!group.supportsProtocols(r.protocolType, protocols)) return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    const rebalanceTimeoutMs = version === 0 || r.rebalanceTimeoutMs < 0 ? r.sessionTimeoutMs : r.rebalanceTimeoutMs;
    const joining = {
      clientId,
      clientHost,
      rebalanceTimeoutMs,
      sessionTimeoutMs: r.sessionTimeoutMs,
      protocolType: r.protocolType,
      protocols,
    };
    const attempt: JoinAttempt = { envelope, group, version, groupInstanceId: r.groupInstanceId, joining };
    if (r.memberId === '') this.joinUnknownMember(attempt, ctx);
    else this.joinKnownMember(attempt, r.memberId, ctx);
  }

  private joinUnknownMember(attempt: JoinAttempt, ctx: ActorContext): void {
    const { envelope, group, version, groupInstanceId, joining } = attempt;
    const memberId = `${groupInstanceId ?? joining.clientId}-${formatUuid(ctx.random.bytes16())}`;
    if (groupInstanceId !== null) {
      const existing = group.staticMembers.get(groupInstanceId);
      if (existing !== undefined)
        return this.rejoinStaticMember(attempt, { groupInstanceId, oldMemberId: existing, newMemberId: memberId }, ctx);
    }
    if (group.members.size + group.pendingMembers.size >= this.config.maxSize) {
      ctx.reply(envelope, joinError(ErrorCode.GROUP_MAX_SIZE_REACHED, ''));
      return;
    }
    if (groupInstanceId === null && version >= 4) {
      // KIP-394: hand out the member id and let the client rejoin with it, so a client that never
      // comes back leaves no member behind (it expires after its session timeout).
      group.pendingMembers.add(memberId);
      this.pendingMemberTimers.set(
        memberId,
        ctx.timers.setTimeout(() => this.expirePendingMember(group.groupId, memberId, ctx), joining.sessionTimeoutMs),
      );
      ctx.reply(envelope, joinError(ErrorCode.MEMBER_ID_REQUIRED, memberId));
      return;
    }
    this.addMemberAndRebalance(attempt, memberId, ctx);
  }

  private joinKnownMember(attempt: JoinAttempt, memberId: string, ctx: ActorContext): void {
    const { envelope, group, groupInstanceId, joining } = attempt;
    if (group.pendingMembers.delete(memberId)) {
      clearTimer(this.pendingMemberTimers, memberId, ctx);
      this.addMemberAndRebalance(attempt, memberId, ctx);
      return;
    }
    const error = memberError(group, memberId, groupInstanceId);
    if (error !== ErrorCode.NONE) {
      ctx.reply(envelope, joinError(error, memberId));
      return;
    }
    const member = group.members.get(memberId);
    assert.ok(member, `group ${group.groupId}: member ${memberId} passed the member check but is not in the group`);
    switch (group.state) {
      case 'PreparingRebalance':
        this.updateMemberAndAwaitJoin(attempt, member, ctx);
        this.maybeCompleteJoin(group, ctx);
        return;
      case 'CompletingRebalance':
        if (sameProtocols(member.protocols, joining.protocols)) {
          // The member lost its JoinGroup response: answer with the current generation again.
          ctx.reply(envelope, joinResult(group, member));
          return;
        }
        this.updateMemberAndAwaitJoin(attempt, member, ctx);
        this.prepareRebalance(group, `member ${memberId} changed its protocols`, ctx);
        return;
      case 'Stable':
        if (memberId === group.leaderId || !sameProtocols(member.protocols, joining.protocols)) {
          this.updateMemberAndAwaitJoin(attempt, member, ctx);
          this.prepareRebalance(
            group,
            memberId === group.leaderId ? `leader ${memberId} rejoined` : `member ${memberId} changed its protocols`,
            ctx,
          );
          return;
        }
        this.resetSession(group, member, ctx);
        ctx.reply(envelope, joinResult(group, member));
        return;
      default:
        ctx.reply(envelope, joinError(ErrorCode.UNKNOWN_MEMBER_ID, memberId));
    }
  }

  /**
   * KIP-345: a static member restarted (new member id): the old id is fenced, the new one takes over.
   * In a Stable group whose selected protocol the new subscription keeps, there is no rebalance: the
   * member gets the current generation and keeps its assignment (a leader, from JoinGroup v9, with
   * every member and skipAssignment = true, KIP-814). In any other state the group rebalances.
   */
  private rejoinStaticMember(attempt: JoinAttempt, ids: StaticRejoin, ctx: ActorContext): void {
    const { envelope, group, version, joining } = attempt;
    const { groupInstanceId, oldMemberId, newMemberId } = ids;
    answerWaiter(this.joinWaiters, oldMemberId, joinError(ErrorCode.FENCED_INSTANCE_ID, oldMemberId), ctx);
    answerWaiter(this.syncWaiters, oldMemberId, syncError(ErrorCode.FENCED_INSTANCE_ID), ctx);
    clearTimer(this.sessionTimers, oldMemberId, ctx);
    const member = group.replaceStaticMember(groupInstanceId, oldMemberId, newMemberId);
    const previousProtocols = member.protocols;
    Object.assign(member, {
      clientId: joining.clientId,
      clientHost: joining.clientHost,
      rebalanceTimeoutMs: joining.rebalanceTimeoutMs,
      sessionTimeoutMs: joining.sessionTimeoutMs,
      protocols: joining.protocols,
    });
    if (group.is('PreparingRebalance')) {
      this.updateMemberAndAwaitJoin(attempt, member, ctx);
      this.maybeCompleteJoin(group, ctx);
      return;
    }
    const isLeader = group.leaderId === newMemberId;
    const protocolKept =
      group.protocolName !== null &&
      group.candidateProtocols().has(group.protocolName) &&
      group.selectProtocol() === group.protocolName;
    if (group.is('Stable') && protocolKept) {
      this.resetSession(group, member, ctx);
      ctx.log.info(
        { groupId: group.groupId, groupInstanceId, oldMemberId, newMemberId },
        'static member rejoined without a rebalance',
      );
      // Kafka's updateStaticMemberAndRebalance: a Stable group would not hand out a new assignment,
      // so a returning leader must not compute one. From JoinGroup v9 it is told so (skipAssignment,
      // KIP-814) and gets the members; before v9 the answer names the old member id as leader, so the
      // client does not think it leads.
      const skipAssignment = isLeader && version >= 9;
      this.writer.append([groupRecord(group, null)], ctx).then(
        () => {
          const current = joinResult(group, member);
          ctx.reply(envelope, {
            ...current,
            leader: isLeader && !skipAssignment ? oldMemberId : current.leader,
            members: skipAssignment ? current.members : [],
            skipAssignment,
          });
        },
        (error: CoordinatorWriteError) => {
          // The new id could not be stored: undo the swap so the old member stays valid (Kafka's revert).
          group.replaceStaticMember(groupInstanceId, newMemberId, oldMemberId).protocols = previousProtocols;
          ctx.reply(envelope, joinError(error.errorCode, ''));
        },
      );
      return;
    }
    this.updateMemberAndAwaitJoin(attempt, member, ctx);
    this.prepareRebalance(group, `static member ${groupInstanceId} rejoined`, ctx);
  }

  private addMemberAndRebalance(attempt: JoinAttempt, memberId: string, ctx: ActorContext): void {
    const { envelope, group, groupInstanceId, joining } = attempt;
    const member: GroupMember = {
      memberId,
      groupInstanceId,
      ...joining,
      assignment: Buffer.alloc(0),
      awaitingJoin: false,
      awaitingSync: false,
    };
    group.addMember(member);
    const timer = this.joinTimers.get(group.groupId);
    if (timer?.initial) timer.newMemberAdded = true;
    this.awaitJoin(envelope, member);
    if (group.is('PreparingRebalance')) this.maybeCompleteJoin(group, ctx);
    else this.prepareRebalance(group, `member ${memberId} joined`, ctx);
  }

  /** Takes the member's new settings and holds its JoinGroup (a held earlier one is told to rejoin). */
  private updateMemberAndAwaitJoin(attempt: JoinAttempt, member: GroupMember, ctx: ActorContext): void {
    const { envelope, joining } = attempt;
    Object.assign(member, {
      clientId: joining.clientId,
      clientHost: joining.clientHost,
      rebalanceTimeoutMs: joining.rebalanceTimeoutMs,
      sessionTimeoutMs: joining.sessionTimeoutMs,
      protocols: joining.protocols,
    });
    const previous = this.joinWaiters.get(member.memberId);
    if (previous && previous !== envelope)
      ctx.reply(previous, joinError(ErrorCode.REBALANCE_IN_PROGRESS, member.memberId));
    this.awaitJoin(envelope, member);
  }

  private awaitJoin(envelope: JoinEnvelope, member: GroupMember): void {
    member.awaitingJoin = true;
    this.joinWaiters.set(member.memberId, envelope);
  }

  // ---- the join phase ------------------------------------------------------------------------

  /** Starts a join phase (Kafka's prepareRebalance): pending syncs are told to rejoin. */
  private prepareRebalance(group: ClassicGroup, reason: string, ctx: ActorContext): void {
    if (group.is('CompletingRebalance')) this.failPendingSyncs(group, ErrorCode.REBALANCE_IN_PROGRESS, ctx);
    clearTimer(this.syncTimers, group.groupId, ctx);
    const initial = group.is('Empty');
    const { initialRebalanceDelayMs } = this.config;
    const delayMs = initial ? initialRebalanceDelayMs : group.rebalanceTimeoutMs();
    const remainingMs = initial ? Math.max(group.rebalanceTimeoutMs() - initialRebalanceDelayMs, 0) : 0;
    group.transitionTo('PreparingRebalance', ctx.clock.nowMs());
    this.scheduleJoinTimer(group, { initial, delayMs, remainingMs }, ctx);
    ctx.log.info({ groupId: group.groupId, generationId: group.generationId, reason }, 'preparing to rebalance group');
    if (!initial) this.maybeCompleteJoin(group, ctx);
  }

  private scheduleJoinTimer(group: ClassicGroup, schedule: JoinTimerSchedule, ctx: ActorContext): void {
    const existing = this.joinTimers.get(group.groupId);
    if (existing) ctx.timers.clearTimeout(existing.handle);
    const handle = ctx.timers.setTimeout(() => this.onJoinTimer(group.groupId, ctx), schedule.delayMs);
    this.joinTimers.set(group.groupId, {
      handle,
      initial: schedule.initial,
      remainingMs: schedule.remainingMs,
      newMemberAdded: false,
    });
  }

  /** The join phase's deadline: Kafka's InitialDelayedJoin extends while members keep arriving. */
  private onJoinTimer(groupId: string, ctx: ActorContext): void {
    const entry = this.joinTimers.get(groupId);
    const group = this.groupsById.get(groupId);
    if (!entry || !group || !group.is('PreparingRebalance')) return;
    if (entry.initial && entry.newMemberAdded && entry.remainingMs > 0) {
      const delayMs = Math.min(this.config.initialRebalanceDelayMs, entry.remainingMs);
      this.scheduleJoinTimer(
        group,
        { initial: true, delayMs, remainingMs: Math.max(entry.remainingMs - delayMs, 0) },
        ctx,
      );
      return;
    }
    this.completeJoin(group, ctx);
    group.assertInvariants();
  }

  /** Completes the join phase early once everyone rejoined (never during the initial delay). */
  private maybeCompleteJoin(group: ClassicGroup, ctx: ActorContext): void {
    if (!group.is('PreparingRebalance')) return;
    if (this.joinTimers.get(group.groupId)?.initial) return;
    if (group.hasAllMembersJoined()) this.completeJoin(group, ctx);
  }

  /**
   * Ends the join phase (Kafka's completeClassicGroupJoin): members that did not rejoin are removed,
   * the next generation starts, and every held JoinGroup is answered (the leader's with the members).
   */
  private completeJoin(group: ClassicGroup, ctx: ActorContext): void {
    this.clearJoinTimer(group.groupId, ctx);
    for (const member of [...group.members.values()]) {
      if (member.awaitingJoin) continue;
      ctx.log.info(
        { groupId: group.groupId, memberId: member.memberId },
        'removing member that did not rejoin within the rebalance timeout',
      );
      clearTimer(this.sessionTimers, member.memberId, ctx);
      group.removeMember(member.memberId);
    }
    const previousGenerationId = group.generationId;
    group.initNextGeneration(ctx.clock.nowMs());
    assert.equal(group.generationId, previousGenerationId + 1, `group ${group.groupId}: generation did not advance`);
    ctx.log.info(
      {
        groupId: group.groupId,
        generationId: group.generationId,
        protocol: group.protocolName,
        members: group.members.size,
        state: group.state,
      },
      'join phase complete',
    );
    if (group.is('Empty')) {
      this.storeGroup(group, ctx);
      return;
    }
    for (const member of group.members.values()) {
      member.awaitingJoin = false;
      answerWaiter(this.joinWaiters, member.memberId, joinResult(group, member), ctx);
      this.resetSession(group, member, ctx);
    }
    // Members that never send SyncGroup are removed after the rebalance timeout (Kafka's pending sync).
    const generationId = group.generationId;
    this.syncTimers.set(
      group.groupId,
      ctx.timers.setTimeout(() => this.expirePendingSync(group.groupId, generationId, ctx), group.rebalanceTimeoutMs()),
    );
  }

  private clearJoinTimer(groupId: string, ctx: ActorContext): void {
    const entry = this.joinTimers.get(groupId);
    if (entry) ctx.timers.clearTimeout(entry.handle);
    this.joinTimers.delete(groupId);
  }

  /** Stores a group's metadata; failures are logged (the group goes on in memory, as Kafka's does). */
  private storeGroup(group: ClassicGroup, ctx: ActorContext): void {
    this.writer.append([groupRecord(group, null)], ctx).catch((error) => {
      ctx.log.warn({ groupId: group.groupId, error: String(error) }, 'storing group metadata failed');
    });
  }

  // ---- SyncGroup -----------------------------------------------------------------------------

  /**
   * SyncGroup: in a Stable group the member gets its assignment at once; while the group completes a
   * rebalance the request is held until the leader's assignment is stored, then every member gets its own.
   */
  sync(envelope: SyncEnvelope, body: ClientRequest<SyncRequest>, ctx: ActorContext): void {
    this.handleSync(envelope, body.request, ctx);
    this.groupsById.get(body.request.groupId)?.assertInvariants();
  }

  private handleSync(envelope: SyncEnvelope, r: SyncRequest, ctx: ActorContext): void {
    const group = this.groupsById.get(r.groupId);
    const fail = (errorCode: number) => ctx.reply(envelope, syncError(errorCode));
    if (!r.groupId) return fail(ErrorCode.INVALID_GROUP_ID);
    if (!group) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    if (group.is('Dead')) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    const error = memberError(group, r.memberId, r.groupInstanceId);
    if (error !== ErrorCode.NONE) return fail(error);
    if (r.generationId !== group.generationId) return fail(ErrorCode.ILLEGAL_GENERATION);
    if (
      (r.protocolType !== null && r.protocolType !== group.protocolType) ||
      (r.protocolName !== null && r.protocolName !== group.protocolName)
    ) {
      return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    }
    const member = group.members.get(r.memberId);
    assert.ok(member, `group ${group.groupId}: member ${r.memberId} passed the member check but is not in the group`);
    switch (group.state) {
      case 'PreparingRebalance':
        return fail(ErrorCode.REBALANCE_IN_PROGRESS);
      case 'Stable':
        this.resetSession(group, member, ctx);
        ctx.reply(envelope, syncResult(group, member.assignment));
        return;
      case 'CompletingRebalance': {
        member.awaitingSync = true;
        this.syncWaiters.set(member.memberId, envelope);
        this.resetSession(group, member, ctx);
        if (member.memberId !== group.leaderId) return;
        const assignments = new Map<string, Buffer>();
        for (const a of r.assignments)
          if (group.members.has(a.memberId)) assignments.set(a.memberId, Buffer.from(a.assignment));
        for (const m of group.members.values())
          if (!assignments.has(m.memberId)) assignments.set(m.memberId, Buffer.alloc(0));
        const generationId = group.generationId;
        this.writer.append([groupRecord(group, assignments)], ctx).then(
          () => {
            if (!group.is('CompletingRebalance') || group.generationId !== generationId) return;
            // Within one generation the members of a CompletingRebalance group do not change (any
            // join, leave or expiry starts a new join phase), so the assignment covers them all.
            assert.equal(assignments.size, group.members.size, `group ${group.groupId}: members changed while syncing`);
            for (const [memberId, assignment] of assignments) {
              const m = group.members.get(memberId);
              assert.ok(m, `group ${group.groupId}: assigned member ${memberId} left while syncing`);
              m.assignment = assignment;
            }
            group.transitionTo('Stable', ctx.clock.nowMs());
            clearTimer(this.syncTimers, group.groupId, ctx);
            for (const m of group.members.values()) {
              m.awaitingSync = false;
              answerWaiter(this.syncWaiters, m.memberId, syncResult(group, m.assignment), ctx);
            }
            ctx.log.info({ groupId: group.groupId, generationId, members: group.members.size }, 'group is stable');
            group.assertInvariants();
          },
          (writeError: CoordinatorWriteError) => {
            if (!group.is('CompletingRebalance') || group.generationId !== generationId) return;
            this.failPendingSyncs(group, writeError.errorCode, ctx);
            this.prepareRebalance(group, 'storing the assignment failed', ctx);
            group.assertInvariants();
          },
        );
        return;
      }
      default:
        return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    }
  }

  private failPendingSyncs(group: ClassicGroup, errorCode: number, ctx: ActorContext): void {
    for (const m of group.members.values()) {
      m.awaitingSync = false;
      answerWaiter(this.syncWaiters, m.memberId, syncError(errorCode), ctx);
    }
  }

  /** Rebalance timeout after a join phase: members that never synced are removed and the group rebalances. */
  private expirePendingSync(groupId: string, generationId: number, ctx: ActorContext): void {
    this.syncTimers.delete(groupId);
    const group = this.groupsById.get(groupId);
    if (!group || !group.is('CompletingRebalance') || group.generationId !== generationId) return;
    const laggards = [...group.members.values()].filter((m) => !m.awaitingSync);
    if (laggards.length === 0) return;
    for (const m of laggards) {
      clearTimer(this.sessionTimers, m.memberId, ctx);
      group.removeMember(m.memberId);
    }
    ctx.log.info(
      { groupId, generationId, removed: laggards.map((m) => m.memberId) },
      'members did not send SyncGroup within the rebalance timeout',
    );
    this.prepareRebalance(group, 'members did not sync', ctx);
    group.assertInvariants();
  }

  // ---- Heartbeat and sessions ----------------------------------------------------------------

  /** Heartbeat: restarts the member's session; answers with the error code (REBALANCE_IN_PROGRESS: rejoin). */
  heartbeat(r: HeartbeatRequest, ctx: ActorContext): number {
    const errorCode = this.handleHeartbeat(r, ctx);
    this.groupsById.get(r.groupId)?.assertInvariants();
    return errorCode;
  }

  private handleHeartbeat(r: HeartbeatRequest, ctx: ActorContext): number {
    const group = this.groupsById.get(r.groupId);
    if (!r.groupId) return ErrorCode.INVALID_GROUP_ID;
    if (!group) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const error = memberError(group, r.memberId, r.groupInstanceId);
    if (error !== ErrorCode.NONE) return error;
    if (r.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    const member = group.members.get(r.memberId);
    assert.ok(member, `group ${group.groupId}: member ${r.memberId} passed the member check but is not in the group`);
    switch (group.state) {
      case 'Empty':
        return ErrorCode.UNKNOWN_MEMBER_ID;
      case 'PreparingRebalance':
        this.resetSession(group, member, ctx);
        return ErrorCode.REBALANCE_IN_PROGRESS;
      default:
        this.resetSession(group, member, ctx);
        return ErrorCode.NONE;
    }
  }

  /** (Re)starts a member's session: it is removed unless it heartbeats within session.timeout.ms. */
  private resetSession(group: ClassicGroup, member: GroupMember, ctx: ActorContext): void {
    const memberId = member.memberId;
    assert.equal(group.members.get(memberId), member, `group ${group.groupId}: session of a non-member ${memberId}`);
    clearTimer(this.sessionTimers, memberId, ctx);
    this.sessionTimers.set(
      memberId,
      ctx.timers.setTimeout(() => this.expireSession(group.groupId, memberId, ctx), member.sessionTimeoutMs),
    );
  }

  private expireSession(groupId: string, memberId: string, ctx: ActorContext): void {
    this.sessionTimers.delete(memberId);
    const group = this.groupsById.get(groupId);
    const member = group?.members.get(memberId);
    if (!group || !member) return;
    if (member.awaitingJoin || member.awaitingSync) {
      // A member whose JoinGroup/SyncGroup waits on the coordinator is alive by definition.
      this.resetSession(group, member, ctx);
      return;
    }
    ctx.log.info({ groupId, memberId, sessionTimeoutMs: member.sessionTimeoutMs }, 'member session expired');
    this.removeMemberAndUpdateGroup(group, memberId, ctx);
    group.assertInvariants();
  }

  private expirePendingMember(groupId: string, memberId: string, ctx: ActorContext): void {
    this.pendingMemberTimers.delete(memberId);
    const group = this.groupsById.get(groupId);
    if (!group || !group.pendingMembers.delete(memberId)) return;
    this.maybeCompleteJoin(group, ctx);
    // A group that only ever had this pending member was never stored: it goes without a tombstone.
    if (group.is('Empty') && group.members.size === 0 && group.offsets.size === 0 && group.generationId === 0)
      this.groupsById.delete(groupId);
    else group.assertInvariants();
  }

  private removeMemberAndUpdateGroup(group: ClassicGroup, memberId: string, ctx: ActorContext): void {
    answerWaiter(this.joinWaiters, memberId, joinError(ErrorCode.UNKNOWN_MEMBER_ID, memberId), ctx);
    answerWaiter(this.syncWaiters, memberId, syncError(ErrorCode.UNKNOWN_MEMBER_ID), ctx);
    clearTimer(this.sessionTimers, memberId, ctx);
    group.removeMember(memberId);
    switch (group.state) {
      case 'Stable':
      case 'CompletingRebalance':
        this.prepareRebalance(group, `member ${memberId} left`, ctx);
        return;
      case 'PreparingRebalance':
        this.maybeCompleteJoin(group, ctx);
        return;
      default:
    }
  }

  // ---- LeaveGroup ----------------------------------------------------------------------------

  /** LeaveGroup: each member (or KIP-345 instance id) leaves; its held requests get UNKNOWN_MEMBER_ID. */
  leave(r: LeaveRequest, ctx: ActorContext): LeaveResult {
    const result = this.handleLeave(r, ctx);
    this.groupsById.get(r.groupId)?.assertInvariants();
    return result;
  }

  private handleLeave(r: LeaveRequest, ctx: ActorContext): LeaveResult {
    const group = this.groupsById.get(r.groupId);
    if (!r.groupId) return { errorCode: ErrorCode.INVALID_GROUP_ID, members: [] };
    if (!group)
      return {
        errorCode: ErrorCode.NONE,
        members: r.members.map((m) => ({ ...m, errorCode: ErrorCode.UNKNOWN_MEMBER_ID })),
      };
    if (group.is('Dead')) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] };
    const members = r.members.map((leaving) => {
      let memberId = leaving.memberId;
      if (leaving.groupInstanceId !== null) {
        const current = group.staticMembers.get(leaving.groupInstanceId);
        if (current === undefined) return { ...leaving, errorCode: ErrorCode.UNKNOWN_MEMBER_ID };
        if (memberId !== '' && memberId !== current) return { ...leaving, errorCode: ErrorCode.FENCED_INSTANCE_ID };
        memberId = current;
      }
      if (group.pendingMembers.delete(memberId)) {
        clearTimer(this.pendingMemberTimers, memberId, ctx);
        this.maybeCompleteJoin(group, ctx);
        return { ...leaving, errorCode: ErrorCode.NONE };
      }
      if (!group.members.has(memberId)) return { ...leaving, errorCode: ErrorCode.UNKNOWN_MEMBER_ID };
      ctx.log.info({ groupId: group.groupId, memberId }, 'member left the group');
      this.removeMemberAndUpdateGroup(group, memberId, ctx);
      return { ...leaving, errorCode: ErrorCode.NONE };
    });
    return { errorCode: ErrorCode.NONE, members };
  }
}

/**
 * The UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID check shared by JoinGroup, SyncGroup, Heartbeat and
 * OffsetCommit (KIP-345): ErrorCode.NONE when `memberId` is a member (and holds `groupInstanceId`).
 */
export function memberError(group: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
  if (groupInstanceId !== null) {
    const current = group.staticMembers.get(groupInstanceId);
    if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (current !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
  }
  return group.members.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
}

/** The group's metadata record (GroupMetadataValue); `assignments` overrides the members' current ones. */
function groupRecord(group: ClassicGroup, assignments: Map<string, Buffer> | null): OffsetsRecord {
  assert.ok(group.generationId >= 0, `group ${group.groupId}: storing generation ${group.generationId}`);
  return {
    key: groupMetadataKey(group.groupId),
    value: groupMetadataValue({
      protocolType: group.protocolType ?? '',
      generation: group.generationId,
      protocol: group.protocolName,
      leader: group.members.size > 0 ? group.leaderId : null,
      currentStateTimestamp: group.currentStateTimestampMs,
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeout: m.rebalanceTimeoutMs,
        sessionTimeout: m.sessionTimeoutMs,
        subscription: group.metadataOf(m),
        assignment: assignments?.get(m.memberId) ?? m.assignment,
      })),
    }),
  };
}

function joinResult(group: ClassicGroup, member: GroupMember): JoinResult {
  const isLeader = member.memberId === group.leaderId;
  return {
    errorCode: ErrorCode.NONE,
    generationId: group.generationId,
    protocolType: group.protocolType,
    protocolName: group.protocolName,
    leader: group.leaderId ?? '',
    memberId: member.memberId,
    skipAssignment: false,
    members: isLeader
      ? [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          metadata: group.metadataOf(m),
        }))
      : [],
  };
}

function syncResult(group: ClassicGroup, assignment: Buffer): SyncResult {
  return {
    errorCode: ErrorCode.NONE,
    protocolType: group.protocolType,
    protocolName: group.protocolName,
    assignment,
  };
}

function joinError(errorCode: number, memberId: string): JoinResult {
  return {
    errorCode,
    generationId: -1,
    protocolType: null,
    protocolName: null,
    leader: '',
    memberId,
    skipAssignment: false,
    members: [],
  };
}

function syncError(errorCode: number): SyncResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
}

/** Answers and forgets the held request of `memberId` in `waiters`, if there is one. */
function answerWaiter<E extends Envelope>(
  waiters: Map<string, E>,
  memberId: string,
  body: ReplyOf<E>,
  ctx: ActorContext,
): void {
  const waiter = waiters.get(memberId);
  if (waiter === undefined) return;
  waiters.delete(memberId);
  ctx.reply(waiter, body);
}

function clearTimer(timers: Map<string, TimerHandle>, key: string, ctx: ActorContext): void {
  const handle = timers.get(key);
  if (handle) ctx.timers.clearTimeout(handle);
  timers.delete(key);
}

function sameProtocols(a: readonly MemberProtocol[], b: readonly MemberProtocol[]): boolean {
  return (
    a.length === b.length &&
    a.every((p, i) => {
      const q = b[i];
      return q !== undefined && p.name === q.name && p.metadata.equals(q.metadata);
    })
  );
}

/** A UUID in Java's UUID.toString form (Kafka's member ids: `${clientId}-${uuid}`). */
function formatUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
