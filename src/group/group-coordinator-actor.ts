/**
 * The group coordinator actor for one partition of `__consumer_offsets` (DESIGN.md "Group
 * coordinator"): it owns every classic consumer group whose id hashes to that partition
 * (offsets-records.ts offsetsPartitionFor), runs their state machines (classic-group.ts), and keeps
 * their metadata and committed offsets as records in the partition, written through the partition's
 * leader replica with acks=all. It runs only beside the leader replica: when this broker becomes the
 * partition's leader the broker spawns it, and it rebuilds its groups by reading the partition from
 * the log start to the high watermark (until then every request gets COORDINATOR_LOAD_IN_PROGRESS).
 * Because the data lives in an ordinary partition, replication needs no change here.
 *
 * Rules follow Kafka's classic GroupCoordinator (JoinGroup with KIP-394 member ids at v4+, static
 * membership KIP-345, the initial rebalance delay, session and rebalance timeouts, offset expiry of
 * KIP-211). Requests arrive from the network handlers as `{version, clientId, clientHost, request}`
 * (the decoded request body) and are answered with version-independent results that the handler
 * shapes per version:
 * - `join` -> JoinResult (held until the join phase completes)     - `sync` -> SyncResult (held until the leader's assignment is stored)
 * - `heartbeat` -> {errorCode}                                     - `leave` -> LeaveResult
 * - `commit` {groupId, generationId, memberId, groupInstanceId, topics} -> {errors per partition}
 * - `fetch-offsets` {groupId, topics|null} -> FetchOffsetsResult    - `list` {statesFilter, typesFilter} -> {errorCode, groups}
 * - `describe` {groupIds} -> DescribedGroup[]                       - `delete-groups` {groupIds} -> {groupId, errorCode}[]
 * - `offset-delete` {groupId, topics} -> {errorCode, topics}
 * - `topics-deleted` {topics} -> {} (the broker deleted them: their offsets are tombstoned, also when
 *   the message arrives while loading)
 */
import assert from 'node:assert/strict';
import type { Actor, ActorContext, ActorId, Envelope, TimerHandle } from '../runtime/actor';
import { ErrorCode } from '../protocol/error-codes';
import { buildRecordBatch } from '../protocol/record-batch/builder';
import { decodeBatch } from '../protocol/record-batch/decode';
import { batchSizeAt } from '../protocol/record-batch/view';
import * as L from '../protocol/record-batch/layout';
import {
  ClassicGroup,
  type CommittedOffset,
  type GroupMember,
  type GroupState,
  type MemberProtocol,
} from './classic-group';
import { decodeConsumerSubscription } from '../protocol/consumer-protocol';
import {
  decodeGroupMetadataValue,
  decodeOffsetCommitValue,
  decodeOffsetsKey,
  groupMetadataKey,
  groupMetadataValue,
  offsetCommitKey,
  offsetCommitValue,
  OFFSETS_TOPIC,
} from './offsets-records';

/** Broker settings a coordinator follows (Kafka's GroupCoordinatorConfig names, in ms). */
export interface GroupCoordinatorConfig {
  /** group.initial.rebalance.delay.ms */
  initialRebalanceDelayMs: number;
  /** group.min.session.timeout.ms / group.max.session.timeout.ms */
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  /** group.max.size */
  maxSize: number;
  /** offset.metadata.max.bytes */
  offsetMetadataMaxBytes: number;
  /** offsets.retention.minutes, in ms */
  offsetsRetentionMs: number;
  /** offsets.retention.check.interval.ms */
  offsetsRetentionCheckIntervalMs: number;
}

/** Spawn arguments. */
export interface GroupCoordinatorArgs {
  /** The __consumer_offsets partition this coordinator owns. */
  partition: number;
  /** Actor id of the partition's leader replica (where records are written and read). */
  replicaActor: ActorId;
  config: GroupCoordinatorConfig;
}

/** What every client request carries besides its body. */
interface ClientRequest<T> {
  version: number;
  clientId: string;
  clientHost: string;
  request: T;
}

interface JoinRequest {
  groupId: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string;
  protocols: { name: string; metadata: Buffer }[];
  reason: string | null;
}

/** The JoinGroup outcome; `members` is filled for the leader only. */
export interface JoinResult {
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  memberId: string;
  skipAssignment: boolean;
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

interface SyncRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  assignments: { memberId: string; assignment: Buffer }[];
}

/** The SyncGroup outcome. */
export interface SyncResult {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

interface HeartbeatRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

interface LeaveRequest {
  groupId: string;
  members: { memberId: string; groupInstanceId: string | null }[];
}
/** The LeaveGroup outcome: a top-level error and one per leaving member. */
export interface LeaveResult {
  errorCode: number;
  members: { memberId: string; groupInstanceId: string | null; errorCode: number }[];
}

/** An OffsetCommit, with topics already checked against the metadata by the handler. */
export interface CommitRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  topics: {
    name: string;
    partitions: {
      partitionIndex: number;
      committedOffset: number;
      committedLeaderEpoch: number;
      committedMetadata: string | null;
    }[];
  }[];
}
/** Per-partition commit errors. */
export interface CommitResult {
  topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];
}

/** OffsetFetch for one group; `topics` null = every committed offset of the group. */
export interface FetchOffsetsRequest {
  groupId: string;
  topics: { name: string; partitionIndexes: number[] }[] | null;
}
export interface FetchOffsetsResult {
  errorCode: number;
  topics: {
    name: string;
    partitions: {
      partitionIndex: number;
      committedOffset: number;
      committedLeaderEpoch: number;
      metadata: string | null;
      errorCode: number;
    }[];
  }[];
}

/** A group as ListGroups shows it. */
export interface ListedGroup {
  groupId: string;
  protocolType: string;
  groupState: GroupState;
  groupType: string;
}

/** A group as DescribeGroups shows it (Kafka's ClassicGroup.describe: metadata only when Stable). */
export interface DescribedGroup {
  errorCode: number;
  groupId: string;
  groupState: GroupState | 'Dead';
  protocolType: string;
  protocolData: string;
  members: {
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    memberMetadata: Buffer;
    memberAssignment: Buffer;
  }[];
}

/** One record to append to the partition: a null value is a tombstone. */
interface OffsetsRecord {
  key: Buffer;
  value: Buffer | null;
}

/** How long a write to the offsets partition may wait for the HW (offsets.commit.timeout.ms default). */
const OFFSETS_COMMIT_TIMEOUT_MS = 5000;
/** Bytes asked for per fetch while loading. */
const LOAD_FETCH_MAX_BYTES = 4 * 1024 * 1024;
const OFFSET_KEY = (topic: string, partition: number) => `${topic}\0${partition}`;

export class GroupCoordinatorActor implements Actor {
  private readonly groups = new Map<string, ClassicGroup>();
  private loaded = false;
  private stopped = false;
  /** memberId -> its JoinGroup / SyncGroup request, held until the join phase / assignment completes. */
  private readonly joinWaiters = new Map<string, Envelope>();
  private readonly syncWaiters = new Map<string, Envelope>();
  private readonly sessionTimers = new Map<string, TimerHandle>();
  private readonly pendingMemberTimers = new Map<string, TimerHandle>();
  /** groupId -> the join-phase timer (DelayedJoin / InitialDelayedJoin). */
  private readonly joinTimers = new Map<
    string,
    { handle: TimerHandle; initial: boolean; remainingMs: number; newMemberAdded: boolean }
  >();
  private readonly syncTimers = new Map<string, TimerHandle>();
  private expiryTimer: TimerHandle | null = null;
  /** Topics deleted from the cluster whose committed offsets still have to be tombstoned. */
  private readonly deletedTopics = new Set<string>();

  constructor(private readonly args: GroupCoordinatorArgs) {}

  start(ctx: ActorContext): void {
    void this.load(ctx).catch((error) => {
      // The partition could not be read: crash, so the supervisor restarts and loading is retried.
      ctx.log.error({ partition: this.args.partition, error: String(error) }, 'loading groups failed');
      throw error;
    });
  }

  stop(ctx: ActorContext): void {
    this.stopped = true;
    for (const waiter of [...this.joinWaiters.values(), ...this.syncWaiters.values()])
      ctx.reply(waiter, { errorCode: ErrorCode.NOT_COORDINATOR });
    for (const t of [...this.sessionTimers.values(), ...this.pendingMemberTimers.values(), ...this.syncTimers.values()])
      ctx.timers.clearTimeout(t);
    for (const t of this.joinTimers.values()) ctx.timers.clearTimeout(t.handle);
    if (this.expiryTimer) ctx.timers.clearTimeout(this.expiryTimer);
  }

  receive(envelope: Envelope, ctx: ActorContext): void | Promise<void> {
    if (envelope.type === 'topics-deleted') {
      // Kept across loading: offsets of a deleted topic must not come back with the groups.
      for (const topic of (envelope.body as { topics: string[] }).topics) this.deletedTopics.add(topic);
      ctx.reply(envelope, {});
      if (this.loaded) this.dropDeletedTopicOffsets(ctx);
      return;
    }
    if (!this.loaded) {
      ctx.reply(envelope, this.loadingReply(envelope.type));
      return;
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- envelope.type selects the body's shape; each case hands it to the method that types it
    const body = envelope.body as any;
    switch (envelope.type) {
      case 'join':
        return this.join(envelope, body, ctx);
      case 'sync':
        return this.sync(envelope, body, ctx);
      case 'heartbeat':
        return ctx.reply(envelope, { errorCode: this.heartbeat(body.request, ctx) });
      case 'leave':
        return ctx.reply(envelope, this.leave(body.request, ctx));
      case 'commit':
        return this.commit(envelope, body.request, body.version, ctx);
      case 'fetch-offsets':
        return ctx.reply(envelope, this.fetchOffsets(body.request));
      case 'list':
        return ctx.reply(envelope, { errorCode: ErrorCode.NONE, groups: this.list(body) });
      case 'describe':
        return ctx.reply(
          envelope,
          (body.request.groupIds as string[]).map((id) => this.describe(id)),
        );
      case 'delete-groups':
        return this.deleteGroups(envelope, body.request.groupIds, ctx);
      case 'offset-delete':
        return this.offsetDelete(envelope, body.request, ctx);
      default:
        ctx.log.warn({ type: envelope.type }, 'group coordinator: unknown message');
        ctx.reply(envelope, { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR });
    }
  }

  /** The answer to any request while the partition is being read. */
  private loadingReply(type: string): unknown {
    const errorCode = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    return type === 'list' ? { errorCode, groups: [] } : { errorCode, loading: true };
  }

  // ---- loading -------------------------------------------------------------------------------

  /** Reads the partition from its log start to the HW and rebuilds every group (Kafka's loadGroupsAndOffsets). */
  private async load(ctx: ActorContext): Promise<void> {
    const startedMs = ctx.clock.monotonicMs();
    let fetchOffset = 0;
    let records = 0;
    for (;;) {
      const reply = await ctx.request<{
        errorCode: number;
        highWatermark: number;
        logStartOffset: number;
        records: Buffer | null;
      }>(this.args.replicaActor, 'fetch', { fetchOffset, maxBytes: LOAD_FETCH_MAX_BYTES, minOneBatch: true }, 60_000);
      if (reply.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE && fetchOffset < reply.logStartOffset) {
        fetchOffset = reply.logStartOffset;
        continue;
      }
      assert.equal(
        reply.errorCode,
        ErrorCode.NONE,
        `loading ${OFFSETS_TOPIC}-${this.args.partition}: fetch error ${reply.errorCode}`,
      );
      const bytes = reply.records;
      if (!bytes || bytes.length === 0 || fetchOffset >= reply.highWatermark) break;
      let position = 0;
      while (position + L.RECORD_BATCH_OVERHEAD <= bytes.length) {
        const size = batchSizeAt(bytes, position);
        if (position + size > bytes.length) break;
        const batch = decodeBatch(bytes, position);
        position += size;
        fetchOffset = batch.baseOffset + batch.lastOffsetDelta + 1;
        if ((batch.attributes & L.CONTROL_FLAG_MASK) !== 0) continue;
        for (const record of batch.records) {
          if (record.offset >= reply.highWatermark) break;
          if (record.key) this.replay(record.key, record.value, record.offset, ctx);
          records += 1;
        }
      }
      if (fetchOffset >= reply.highWatermark) break;
    }
    if (this.stopped) return;
    const nowMs = ctx.clock.nowMs();
    for (const group of this.groups.values()) {
      if (group.members.size > 0) {
        // A loaded generation is Stable; its members must heartbeat within their session timeouts.
        group.state = 'Stable';
        for (const member of group.members.values()) this.resetSession(group, member, ctx);
      } else {
        group.state = 'Empty';
      }
      if (group.currentStateTimestampMs < 0) group.currentStateTimestampMs = nowMs;
    }
    this.loaded = true;
    if (this.deletedTopics.size > 0) this.dropDeletedTopicOffsets(ctx);
    this.expiryTimer = ctx.timers.setTimeout(
      () => this.expireOffsets(ctx),
      this.args.config.offsetsRetentionCheckIntervalMs,
    );
    ctx.log.info(
      {
        partition: this.args.partition,
        groups: this.groups.size,
        records,
        loadMs: ctx.clock.monotonicMs() - startedMs,
      },
      'group coordinator loaded',
    );
  }

  /** Applies one record of the partition, in log order: the latest record per key wins; null deletes. */
  private replay(key: Buffer, value: Buffer | null, recordOffset: number, ctx: ActorContext): void {
    let decoded;
    try {
      decoded = decodeOffsetsKey(key);
    } catch (error) {
      ctx.log.warn(
        { partition: this.args.partition, recordOffset, error: String(error) },
        'skipping an undecodable __consumer_offsets key',
      );
      return;
    }
    if (decoded === null) return;
    if (decoded.kind === 'offset') {
      const group = this.groups.get(decoded.group);
      if (value === null) {
        group?.offsets.delete(OFFSET_KEY(decoded.topic, decoded.partition));
        return;
      }
      const v = decodeOffsetCommitValue(value);
      const target = group ?? this.createGroup(decoded.group, -1);
      target.offsets.set(OFFSET_KEY(decoded.topic, decoded.partition), {
        offset: v.offset,
        leaderEpoch: v.leaderEpoch,
        metadata: v.metadata,
        commitTimestampMs: v.commitTimestamp,
        recordOffset,
      });
      return;
    }
    if (value === null) {
      // Group tombstone: the group is gone; Kafka writes tombstones for its offsets first.
      this.groups.delete(decoded.group);
      return;
    }
    const v = decodeGroupMetadataValue(value);
    const group = this.groups.get(decoded.group) ?? this.createGroup(decoded.group, v.currentStateTimestamp);
    group.members.clear();
    group.staticMembers.clear();
    group.generationId = v.generation;
    group.protocolType = v.protocolType.length > 0 ? v.protocolType : null;
    group.protocolName = v.protocol;
    group.leaderId = v.leader;
    group.currentStateTimestampMs = v.currentStateTimestamp;
    for (const m of v.members) {
      group.members.set(m.memberId, {
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeout < 0 ? m.sessionTimeout : m.rebalanceTimeout,
        sessionTimeoutMs: m.sessionTimeout,
        protocolType: v.protocolType,
        protocols: [{ name: v.protocol ?? '', metadata: Buffer.from(m.subscription) }],
        assignment: Buffer.from(m.assignment),
        awaitingJoin: false,
        awaitingSync: false,
      });
      if (m.groupInstanceId !== null) group.staticMembers.set(m.groupInstanceId, m.memberId);
    }
  }

  private createGroup(groupId: string, nowMs: number): ClassicGroup {
    const group = new ClassicGroup(groupId, nowMs);
    this.groups.set(groupId, group);
    return group;
  }

  // ---- persistence ---------------------------------------------------------------------------

  /**
   * Appends records to the partition with acks=all; resolves with the first record's offset, or
   * rejects with the coordinator error a client should see (Kafka's mapping of append errors).
   */
  private async append(records: OffsetsRecord[], ctx: ActorContext): Promise<number> {
    const nowMs = ctx.clock.nowMs();
    const batch = buildRecordBatch(
      records.map((r) => ({ key: r.key, value: r.value, timestamp: nowMs })),
      { baseTimestamp: nowMs },
    );
    let reply: { errorCode: number; baseOffset: number };
    try {
      reply = await ctx.request(
        this.args.replicaActor,
        'produce',
        { records: batch, acks: -1, timeoutMs: OFFSETS_COMMIT_TIMEOUT_MS },
        OFFSETS_COMMIT_TIMEOUT_MS * 2,
      );
    } catch {
      throw new CoordinatorWriteError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
    if (reply.errorCode !== ErrorCode.NONE) throw new CoordinatorWriteError(mapAppendError(reply.errorCode));
    return reply.baseOffset;
  }

  private groupRecord(group: ClassicGroup, assignments: Map<string, Buffer> | null): OffsetsRecord {
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

  /** Stores a group's metadata; failures are logged (the group goes on in memory, as Kafka's does). */
  private storeGroup(group: ClassicGroup, ctx: ActorContext): void {
    this.append([this.groupRecord(group, null)], ctx).catch((error) => {
      ctx.log.warn({ groupId: group.groupId, error: String(error) }, 'storing group metadata failed');
    });
  }

  // ---- JoinGroup -----------------------------------------------------------------------------

  private join(envelope: Envelope, body: ClientRequest<JoinRequest>, ctx: ActorContext): void {
    const { version, clientId, clientHost, request: r } = body;
    const fail = (errorCode: number, memberId = r.memberId) => ctx.reply(envelope, joinError(errorCode, memberId));
    const { config } = this.args;
    if (!r.groupId) return fail(ErrorCode.INVALID_GROUP_ID);
    if (r.sessionTimeoutMs < config.minSessionTimeoutMs || r.sessionTimeoutMs > config.maxSessionTimeoutMs)
      return fail(ErrorCode.INVALID_SESSION_TIMEOUT);
    let group = this.groups.get(r.groupId);
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
    if (r.memberId === '') this.joinUnknownMember(envelope, group, version, r.groupInstanceId, joining, ctx);
    else this.joinKnownMember(envelope, group, r.memberId, r.groupInstanceId, joining, ctx);
  }

  private joinUnknownMember(
    envelope: Envelope,
    group: ClassicGroup,
    version: number,
    groupInstanceId: string | null,
    joining: JoiningMember,
    ctx: ActorContext,
  ): void {
    const memberId = `${groupInstanceId ?? joining.clientId}-${formatUuid(ctx.random.bytes16())}`;
    if (groupInstanceId !== null) {
      const existing = group.staticMembers.get(groupInstanceId);
      if (existing !== undefined)
        return this.rejoinStaticMember(envelope, group, version, groupInstanceId, existing, memberId, joining, ctx);
    }
    if (group.members.size + group.pendingMembers.size >= this.args.config.maxSize) {
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
    this.addMemberAndRebalance(envelope, group, memberId, groupInstanceId, joining, ctx);
  }

  private joinKnownMember(
    envelope: Envelope,
    group: ClassicGroup,
    memberId: string,
    groupInstanceId: string | null,
    joining: JoiningMember,
    ctx: ActorContext,
  ): void {
    if (group.pendingMembers.delete(memberId)) {
      this.clearTimer(this.pendingMemberTimers, memberId, ctx);
      this.addMemberAndRebalance(envelope, group, memberId, groupInstanceId, joining, ctx);
      return;
    }
    const error = this.memberError(group, memberId, groupInstanceId);
    if (error !== ErrorCode.NONE) {
      ctx.reply(envelope, joinError(error, memberId));
      return;
    }
    const member = group.members.get(memberId)!;
    switch (group.state) {
      case 'PreparingRebalance':
        this.updateMemberAndAwaitJoin(envelope, member, joining, ctx);
        this.maybeCompleteJoin(group, ctx);
        return;
      case 'CompletingRebalance':
        if (sameProtocols(member.protocols, joining.protocols)) {
          // The member lost its JoinGroup response: answer with the current generation again.
          ctx.reply(envelope, this.joinResult(group, member));
          return;
        }
        this.updateMemberAndAwaitJoin(envelope, member, joining, ctx);
        this.prepareRebalance(group, `member ${memberId} changed its protocols`, ctx);
        return;
      case 'Stable':
        if (memberId === group.leaderId || !sameProtocols(member.protocols, joining.protocols)) {
          this.updateMemberAndAwaitJoin(envelope, member, joining, ctx);
          this.prepareRebalance(
            group,
            memberId === group.leaderId ? `leader ${memberId} rejoined` : `member ${memberId} changed its protocols`,
            ctx,
          );
          return;
        }
        this.resetSession(group, member, ctx);
        ctx.reply(envelope, this.joinResult(group, member));
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
  private rejoinStaticMember(
    envelope: Envelope,
    group: ClassicGroup,
    version: number,
    groupInstanceId: string,
    oldMemberId: string,
    newMemberId: string,
    joining: JoiningMember,
    ctx: ActorContext,
  ): void {
    answerWaiter(this.joinWaiters, oldMemberId, joinError(ErrorCode.FENCED_INSTANCE_ID, oldMemberId), ctx);
    answerWaiter(this.syncWaiters, oldMemberId, syncError(ErrorCode.FENCED_INSTANCE_ID), ctx);
    this.clearTimer(this.sessionTimers, oldMemberId, ctx);
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
      this.updateMemberAndAwaitJoin(envelope, member, joining, ctx);
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
      this.append([this.groupRecord(group, null)], ctx).then(
        () => {
          const current = this.joinResult(group, member);
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
    this.updateMemberAndAwaitJoin(envelope, member, joining, ctx);
    this.prepareRebalance(group, `static member ${groupInstanceId} rejoined`, ctx);
  }

  private addMemberAndRebalance(
    envelope: Envelope,
    group: ClassicGroup,
    memberId: string,
    groupInstanceId: string | null,
    joining: JoiningMember,
    ctx: ActorContext,
  ): void {
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

  private updateMemberAndAwaitJoin(
    envelope: Envelope,
    member: GroupMember,
    joining: JoiningMember,
    ctx: ActorContext,
  ): void {
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

  private awaitJoin(envelope: Envelope, member: GroupMember): void {
    member.awaitingJoin = true;
    this.joinWaiters.set(member.memberId, envelope);
  }

  /** Starts a join phase (Kafka's prepareRebalance): pending syncs are told to rejoin. */
  private prepareRebalance(group: ClassicGroup, reason: string, ctx: ActorContext): void {
    if (group.is('CompletingRebalance')) this.failPendingSyncs(group, ErrorCode.REBALANCE_IN_PROGRESS, ctx);
    this.clearTimer(this.syncTimers, group.groupId, ctx);
    const initial = group.is('Empty');
    const { initialRebalanceDelayMs } = this.args.config;
    const delayMs = initial ? initialRebalanceDelayMs : group.rebalanceTimeoutMs();
    const remainingMs = initial ? Math.max(group.rebalanceTimeoutMs() - initialRebalanceDelayMs, 0) : 0;
    group.transitionTo('PreparingRebalance', ctx.clock.nowMs());
    this.scheduleJoinTimer(group, initial, delayMs, remainingMs, ctx);
    ctx.log.info({ groupId: group.groupId, generationId: group.generationId, reason }, 'preparing to rebalance group');
    if (!initial) this.maybeCompleteJoin(group, ctx);
  }

  private scheduleJoinTimer(
    group: ClassicGroup,
    initial: boolean,
    delayMs: number,
    remainingMs: number,
    ctx: ActorContext,
  ): void {
    const existing = this.joinTimers.get(group.groupId);
    if (existing) ctx.timers.clearTimeout(existing.handle);
    const entry = { handle: null as unknown as TimerHandle, initial, remainingMs, newMemberAdded: false };
    entry.handle = ctx.timers.setTimeout(() => this.onJoinTimer(group.groupId, ctx), delayMs);
    this.joinTimers.set(group.groupId, entry);
  }

  /** The join phase's deadline: Kafka's InitialDelayedJoin extends while members keep arriving. */
  private onJoinTimer(groupId: string, ctx: ActorContext): void {
    const entry = this.joinTimers.get(groupId);
    const group = this.groups.get(groupId);
    if (!entry || !group || !group.is('PreparingRebalance')) return;
    if (entry.initial && entry.newMemberAdded && entry.remainingMs > 0) {
      const delayMs = Math.min(this.args.config.initialRebalanceDelayMs, entry.remainingMs);
      this.scheduleJoinTimer(group, true, delayMs, Math.max(entry.remainingMs - delayMs, 0), ctx);
      return;
    }
    this.completeJoin(group, ctx);
  }

  /** Completes the join phase early once everyone rejoined (never during the initial delay). */
  private maybeCompleteJoin(group: ClassicGroup, ctx: ActorContext): void {
    if (!group.is('PreparingRebalance')) return;
    if (this.joinTimers.get(group.groupId)?.initial) return;
    if (group.hasAllMembersJoined()) this.completeJoin(group, ctx);
  }

  private completeJoin(group: ClassicGroup, ctx: ActorContext): void {
    this.clearJoinTimer(group.groupId, ctx);
    for (const member of [...group.members.values()]) {
      if (member.awaitingJoin) continue;
      ctx.log.info(
        { groupId: group.groupId, memberId: member.memberId },
        'removing member that did not rejoin within the rebalance timeout',
      );
      this.clearTimer(this.sessionTimers, member.memberId, ctx);
      group.removeMember(member.memberId);
    }
    group.initNextGeneration(ctx.clock.nowMs());
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
      answerWaiter(this.joinWaiters, member.memberId, this.joinResult(group, member), ctx);
      this.resetSession(group, member, ctx);
    }
    // Members that never send SyncGroup are removed after the rebalance timeout (Kafka's pending sync).
    const generationId = group.generationId;
    this.syncTimers.set(
      group.groupId,
      ctx.timers.setTimeout(() => this.expirePendingSync(group.groupId, generationId, ctx), group.rebalanceTimeoutMs()),
    );
  }

  private joinResult(group: ClassicGroup, member: GroupMember): JoinResult {
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

  // ---- SyncGroup -----------------------------------------------------------------------------

  private sync(envelope: Envelope, body: ClientRequest<SyncRequest>, ctx: ActorContext): void {
    const r = body.request;
    const group = this.groups.get(r.groupId);
    const fail = (errorCode: number) => ctx.reply(envelope, syncError(errorCode));
    if (!r.groupId) return fail(ErrorCode.INVALID_GROUP_ID);
    if (!group) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    if (group.is('Dead')) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    const error = this.memberError(group, r.memberId, r.groupInstanceId);
    if (error !== ErrorCode.NONE) return fail(error);
    if (r.generationId !== group.generationId) return fail(ErrorCode.ILLEGAL_GENERATION);
    if (
      (r.protocolType !== null && r.protocolType !== group.protocolType) ||
      (r.protocolName !== null && r.protocolName !== group.protocolName)
    ) {
      return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    }
    const member = group.members.get(r.memberId)!;
    switch (group.state) {
      case 'PreparingRebalance':
        return fail(ErrorCode.REBALANCE_IN_PROGRESS);
      case 'Stable':
        this.resetSession(group, member, ctx);
        ctx.reply(envelope, this.syncResult(group, member.assignment));
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
        this.append([this.groupRecord(group, assignments)], ctx).then(
          () => {
            if (!group.is('CompletingRebalance') || group.generationId !== generationId) return;
            for (const [memberId, assignment] of assignments) {
              const m = group.members.get(memberId);
              if (m) m.assignment = assignment;
            }
            group.transitionTo('Stable', ctx.clock.nowMs());
            this.clearTimer(this.syncTimers, group.groupId, ctx);
            for (const m of group.members.values()) {
              m.awaitingSync = false;
              answerWaiter(this.syncWaiters, m.memberId, this.syncResult(group, m.assignment), ctx);
            }
            ctx.log.info({ groupId: group.groupId, generationId, members: group.members.size }, 'group is stable');
          },
          (writeError: CoordinatorWriteError) => {
            if (!group.is('CompletingRebalance') || group.generationId !== generationId) return;
            this.failPendingSyncs(group, writeError.errorCode, ctx);
            this.prepareRebalance(group, 'storing the assignment failed', ctx);
          },
        );
        return;
      }
      default:
        return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    }
  }

  private syncResult(group: ClassicGroup, assignment: Buffer): SyncResult {
    return {
      errorCode: ErrorCode.NONE,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      assignment,
    };
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
    const group = this.groups.get(groupId);
    if (!group || !group.is('CompletingRebalance') || group.generationId !== generationId) return;
    const laggards = [...group.members.values()].filter((m) => !m.awaitingSync);
    if (laggards.length === 0) return;
    for (const m of laggards) {
      this.clearTimer(this.sessionTimers, m.memberId, ctx);
      group.removeMember(m.memberId);
    }
    ctx.log.info(
      { groupId, generationId, removed: laggards.map((m) => m.memberId) },
      'members did not send SyncGroup within the rebalance timeout',
    );
    this.prepareRebalance(group, 'members did not sync', ctx);
  }

  // ---- Heartbeat and sessions ----------------------------------------------------------------

  private heartbeat(r: HeartbeatRequest, ctx: ActorContext): number {
    const group = this.groups.get(r.groupId);
    if (!r.groupId) return ErrorCode.INVALID_GROUP_ID;
    if (!group) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const error = this.memberError(group, r.memberId, r.groupInstanceId);
    if (error !== ErrorCode.NONE) return error;
    if (r.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    const member = group.members.get(r.memberId)!;
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
    this.clearTimer(this.sessionTimers, member.memberId, ctx);
    const memberId = member.memberId;
    this.sessionTimers.set(
      memberId,
      ctx.timers.setTimeout(() => this.expireSession(group.groupId, memberId, ctx), member.sessionTimeoutMs),
    );
  }

  private expireSession(groupId: string, memberId: string, ctx: ActorContext): void {
    this.sessionTimers.delete(memberId);
    const group = this.groups.get(groupId);
    const member = group?.members.get(memberId);
    if (!group || !member) return;
    if (member.awaitingJoin || member.awaitingSync) {
      // A member whose JoinGroup/SyncGroup waits on the coordinator is alive by definition.
      this.resetSession(group, member, ctx);
      return;
    }
    ctx.log.info({ groupId, memberId, sessionTimeoutMs: member.sessionTimeoutMs }, 'member session expired');
    this.removeMemberAndUpdateGroup(group, memberId, ctx);
  }

  private expirePendingMember(groupId: string, memberId: string, ctx: ActorContext): void {
    this.pendingMemberTimers.delete(memberId);
    const group = this.groups.get(groupId);
    if (!group || !group.pendingMembers.delete(memberId)) return;
    this.maybeCompleteJoin(group, ctx);
    if (group.is('Empty') && group.members.size === 0 && group.offsets.size === 0 && group.generationId === 0)
      this.groups.delete(groupId);
  }

  private removeMemberAndUpdateGroup(group: ClassicGroup, memberId: string, ctx: ActorContext): void {
    answerWaiter(this.joinWaiters, memberId, joinError(ErrorCode.UNKNOWN_MEMBER_ID, memberId), ctx);
    answerWaiter(this.syncWaiters, memberId, syncError(ErrorCode.UNKNOWN_MEMBER_ID), ctx);
    this.clearTimer(this.sessionTimers, memberId, ctx);
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

  /** UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID checks shared by join, sync, heartbeat and commit (KIP-345). */
  private memberError(group: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const current = group.staticMembers.get(groupInstanceId);
      if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (current !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    return group.members.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  // ---- LeaveGroup ----------------------------------------------------------------------------

  private leave(r: LeaveRequest, ctx: ActorContext): LeaveResult {
    const group = this.groups.get(r.groupId);
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
        this.clearTimer(this.pendingMemberTimers, memberId, ctx);
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

  // ---- offsets -------------------------------------------------------------------------------

  private commit(envelope: Envelope, r: CommitRequest, version: number, ctx: ActorContext): void {
    const everyPartition = (errorCode: number): CommitResult => ({
      topics: r.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
      })),
    });
    if (!r.groupId) return ctx.reply(envelope, everyPartition(ErrorCode.INVALID_GROUP_ID));
    let group = this.groups.get(r.groupId);
    // A commit naming a member or generation of a group that does not exist: Kafka's coordinator answers
    // ILLEGAL_GENERATION before OffsetCommit v9 and GROUP_ID_NOT_FOUND from v9 (KIP-848's versions).
    const asMember = r.generationId >= 0 || r.memberId !== '' || r.groupInstanceId !== null;
    const missingGroupError = !asMember
      ? ErrorCode.NONE
      : version >= 9
        ? ErrorCode.GROUP_ID_NOT_FOUND
        : ErrorCode.ILLEGAL_GENERATION;
    const error = group ? this.commitError(group, r) : missingGroupError;
    if (error !== ErrorCode.NONE) return ctx.reply(envelope, everyPartition(error));
    group ??= this.createGroup(r.groupId, ctx.clock.nowMs());
    const nowMs = ctx.clock.nowMs();
    const records: OffsetsRecord[] = [];
    const pending: { key: string; value: CommittedOffset }[] = [];
    const result: CommitResult = {
      topics: r.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const metadata = p.committedMetadata ?? '';
          if (Buffer.byteLength(metadata, 'utf8') > this.args.config.offsetMetadataMaxBytes)
            return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE };
          const value = {
            offset: p.committedOffset,
            leaderEpoch: p.committedLeaderEpoch,
            metadata,
            commitTimestamp: nowMs,
          };
          records.push({ key: offsetCommitKey(r.groupId, t.name, p.partitionIndex), value: offsetCommitValue(value) });
          pending.push({
            key: OFFSET_KEY(t.name, p.partitionIndex),
            value: {
              offset: value.offset,
              leaderEpoch: value.leaderEpoch,
              metadata,
              commitTimestampMs: nowMs,
              recordOffset: -1,
            },
          });
          return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE };
        }),
      })),
    };
    if (records.length === 0) return ctx.reply(envelope, result);
    const target = group;
    this.append(records, ctx).then(
      (baseOffset) => {
        pending.forEach((p, i) => target.offsets.set(p.key, { ...p.value, recordOffset: baseOffset + i }));
        ctx.reply(envelope, result);
      },
      (writeError: CoordinatorWriteError) => {
        for (const t of result.topics)
          for (const p of t.partitions) if (p.errorCode === ErrorCode.NONE) p.errorCode = writeError.errorCode;
        ctx.reply(envelope, result);
      },
    );
  }

  /**
   * Kafka's ClassicGroup.validateOffsetCommit: a commit without member and generation (admin tools,
   * consumers that assign partitions themselves) needs an Empty group; a member's commit needs its
   * current generation, and is asked to wait (REBALANCE_IN_PROGRESS) until the group's assignment is out.
   */
  private commitError(group: ClassicGroup, r: CommitRequest): number {
    if (group.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (r.generationId < 0 && group.is('Empty')) return ErrorCode.NONE;
    if (r.generationId >= 0 || r.memberId !== '' || r.groupInstanceId !== null) {
      const error = this.memberError(group, r.memberId, r.groupInstanceId);
      if (error !== ErrorCode.NONE) return error;
      if (r.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    } else if (!group.is('Empty')) {
      return ErrorCode.UNKNOWN_MEMBER_ID;
    }
    if (group.is('CompletingRebalance')) return ErrorCode.REBALANCE_IN_PROGRESS;
    return ErrorCode.NONE;
  }

  private fetchOffsets(r: FetchOffsetsRequest): FetchOffsetsResult {
    const group = this.groups.get(r.groupId);
    if (r.topics === null) {
      const byTopic = new Map<string, FetchOffsetsResult['topics'][number]>();
      for (const [key, committed] of group?.offsets ?? []) {
        const [topic, partition] = key.split('\0') as [string, string];
        let entry = byTopic.get(topic);
        if (!entry) byTopic.set(topic, (entry = { name: topic, partitions: [] }));
        entry.partitions.push({
          partitionIndex: Number(partition),
          committedOffset: committed.offset,
          committedLeaderEpoch: committed.leaderEpoch,
          metadata: committed.metadata,
          errorCode: ErrorCode.NONE,
        });
      }
      for (const entry of byTopic.values()) entry.partitions.sort((a, b) => a.partitionIndex - b.partitionIndex);
      return { errorCode: ErrorCode.NONE, topics: [...byTopic.values()] };
    }
    return {
      errorCode: ErrorCode.NONE,
      topics: r.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => {
          const committed = group?.offsets.get(OFFSET_KEY(t.name, partitionIndex));
          return committed
            ? {
                partitionIndex,
                committedOffset: committed.offset,
                committedLeaderEpoch: committed.leaderEpoch,
                metadata: committed.metadata,
                errorCode: ErrorCode.NONE,
              }
            : {
                partitionIndex,
                committedOffset: -1,
                committedLeaderEpoch: -1,
                metadata: '',
                errorCode: ErrorCode.NONE,
              };
        }),
      })),
    };
  }

  // ---- admin ---------------------------------------------------------------------------------

  private list(body: { statesFilter: string[]; typesFilter: string[] }): ListedGroup[] {
    const states = new Set(body.statesFilter.map((s) => s.toLowerCase()));
    const types = new Set(body.typesFilter.map((s) => s.toLowerCase()));
    if (types.size > 0 && !types.has('classic')) return [];
    return [...this.groups.values()]
      .filter((g) => !g.is('Dead') && (states.size === 0 || states.has(g.state.toLowerCase())))
      .map((g) => ({
        groupId: g.groupId,
        protocolType: g.protocolType ?? '',
        groupState: g.state,
        groupType: 'classic',
      }));
  }

  private describe(groupId: string): DescribedGroup {
    const group = this.groups.get(groupId);
    if (!group || group.is('Dead')) {
      return {
        errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
        groupId,
        groupState: 'Dead',
        protocolType: '',
        protocolData: '',
        members: [],
      };
    }
    const stable = group.is('Stable');
    return {
      errorCode: ErrorCode.NONE,
      groupId,
      groupState: group.state,
      protocolType: group.protocolType ?? '',
      protocolData: stable ? (group.protocolName ?? '') : '',
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: stable ? group.metadataOf(m) : Buffer.alloc(0),
        memberAssignment: stable ? m.assignment : Buffer.alloc(0),
      })),
    };
  }

  private deleteGroups(envelope: Envelope, groupIds: string[], ctx: ActorContext): void {
    const records: OffsetsRecord[] = [];
    const deleted: ClassicGroup[] = [];
    const results = groupIds.map((groupId) => {
      if (!groupId) return { groupId, errorCode: ErrorCode.INVALID_GROUP_ID };
      const group = this.groups.get(groupId);
      if (!group || group.is('Dead')) return { groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND };
      if (!group.is('Empty')) return { groupId, errorCode: ErrorCode.NON_EMPTY_GROUP };
      records.push(...this.tombstones(group, [...group.offsets.keys()]), {
        key: groupMetadataKey(groupId),
        value: null,
      });
      deleted.push(group);
      return { groupId, errorCode: ErrorCode.NONE };
    });
    if (records.length === 0) return ctx.reply(envelope, results);
    this.append(records, ctx).then(
      () => {
        for (const group of deleted) this.removeGroup(group, ctx);
        ctx.reply(envelope, results);
      },
      (writeError: CoordinatorWriteError) => {
        ctx.reply(
          envelope,
          results.map((r) => (r.errorCode === ErrorCode.NONE ? { ...r, errorCode: writeError.errorCode } : r)),
        );
      },
    );
  }

  private removeGroup(group: ClassicGroup, ctx: ActorContext): void {
    if (!group.is('Dead')) group.transitionTo('Dead', ctx.clock.nowMs());
    this.clearJoinTimer(group.groupId, ctx);
    if (this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
    ctx.log.info({ groupId: group.groupId }, 'group deleted');
  }

  private offsetDelete(
    envelope: Envelope,
    body: { groupId: string; topics: { name: string; partitions: number[] }[] },
    ctx: ActorContext,
  ): void {
    const group = this.groups.get(body.groupId);
    const none = {
      errorCode: ErrorCode.NONE,
      topics: [] as { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[],
    };
    if (!body.groupId) return ctx.reply(envelope, { ...none, errorCode: ErrorCode.INVALID_GROUP_ID });
    if (!group || group.is('Dead')) return ctx.reply(envelope, { ...none, errorCode: ErrorCode.GROUP_ID_NOT_FOUND });
    if (!group.is('Empty') && group.protocolType !== 'consumer')
      return ctx.reply(envelope, { ...none, errorCode: ErrorCode.NON_EMPTY_GROUP });
    const keys: string[] = [];
    const topics = body.topics.map((t) => {
      const subscribed = !group.is('Empty') && group.isSubscribedTo(t.name, subscribedTopics);
      return {
        name: t.name,
        partitions: t.partitions.map((partitionIndex) => {
          if (subscribed) return { partitionIndex, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
          if (group.offsets.has(OFFSET_KEY(t.name, partitionIndex))) keys.push(OFFSET_KEY(t.name, partitionIndex));
          return { partitionIndex, errorCode: ErrorCode.NONE };
        }),
      };
    });
    if (keys.length === 0) return ctx.reply(envelope, { errorCode: ErrorCode.NONE, topics });
    this.append(this.tombstones(group, keys), ctx).then(
      () => {
        for (const key of keys) group.offsets.delete(key);
        ctx.reply(envelope, { errorCode: ErrorCode.NONE, topics });
      },
      (writeError: CoordinatorWriteError) => ctx.reply(envelope, { errorCode: writeError.errorCode, topics: [] }),
    );
  }

  /**
   * Kafka's onPartitionsDeleted: the committed offsets of deleted topics are tombstoned, so a topic
   * created again under the same name starts from the consumers' reset policy, not a stale offset.
   */
  private dropDeletedTopicOffsets(ctx: ActorContext): void {
    const topics = new Set(this.deletedTopics);
    this.deletedTopics.clear();
    const doomed: { group: ClassicGroup; keys: string[] }[] = [];
    for (const group of this.groups.values()) {
      const keys = [...group.offsets.keys()].filter((key) => topics.has(key.slice(0, key.indexOf('\0'))));
      if (keys.length > 0) doomed.push({ group, keys });
    }
    if (doomed.length === 0) return;
    this.append(
      doomed.flatMap(({ group, keys }) => this.tombstones(group, keys)),
      ctx,
    ).then(
      () => {
        for (const { group, keys } of doomed) for (const key of keys) group.offsets.delete(key);
        ctx.log.info(
          { partition: this.args.partition, topics: [...topics], groups: doomed.length },
          'removed the committed offsets of deleted topics',
        );
      },
      (error) => {
        ctx.log.warn(
          { topics: [...topics], error: String(error) },
          'removing offsets of deleted topics failed; retrying at the next expiry check',
        );
        for (const topic of topics) this.deletedTopics.add(topic);
      },
    );
  }

  private tombstones(group: ClassicGroup, offsetKeys: string[]): OffsetsRecord[] {
    return offsetKeys.map((key) => {
      const [topic, partition] = key.split('\0') as [string, string];
      return { key: offsetCommitKey(group.groupId, topic, Number(partition)), value: null };
    });
  }

  /**
   * offsets.retention.minutes (KIP-211): offsets of a group that has been Empty that long are
   * deleted; a simple (member-less, protocol-less) group's offsets expire one by one from their
   * commit time. A group left with neither members nor offsets is removed with a tombstone.
   */
  private expireOffsets(ctx: ActorContext): void {
    this.expiryTimer = ctx.timers.setTimeout(
      () => this.expireOffsets(ctx),
      this.args.config.offsetsRetentionCheckIntervalMs,
    );
    if (this.deletedTopics.size > 0) this.dropDeletedTopicOffsets(ctx);
    const nowMs = ctx.clock.nowMs();
    const retentionMs = this.args.config.offsetsRetentionMs;
    const records: OffsetsRecord[] = [];
    const expired: { group: ClassicGroup; keys: string[]; removeGroup: boolean }[] = [];
    for (const group of this.groups.values()) {
      if (!group.is('Empty')) continue;
      const keys =
        group.protocolType === null
          ? [...group.offsets.entries()].filter(([, o]) => o.commitTimestampMs + retentionMs <= nowMs).map(([k]) => k)
          : group.currentStateTimestampMs + retentionMs <= nowMs
            ? [...group.offsets.keys()]
            : [];
      const removeGroup = keys.length === group.offsets.size && group.pendingMembers.size === 0;
      if (
        keys.length === 0 &&
        !(removeGroup && group.generationId > 0 && group.currentStateTimestampMs + retentionMs <= nowMs)
      )
        continue;
      records.push(...this.tombstones(group, keys));
      if (removeGroup) records.push({ key: groupMetadataKey(group.groupId), value: null });
      expired.push({ group, keys, removeGroup });
    }
    if (records.length === 0) return;
    this.append(records, ctx).then(
      () => {
        for (const { group, keys, removeGroup } of expired) {
          for (const key of keys) group.offsets.delete(key);
          if (removeGroup && group.is('Empty') && group.offsets.size === 0) this.removeGroup(group, ctx);
        }
        ctx.log.info(
          {
            partition: this.args.partition,
            groups: expired.length,
            offsets: expired.reduce((n, e) => n + e.keys.length, 0),
          },
          'expired committed offsets',
        );
      },
      (error) => ctx.log.warn({ error: String(error) }, 'expiring offsets failed'),
    );
  }

  // ---- timers --------------------------------------------------------------------------------

  private clearTimer(timers: Map<string, TimerHandle>, key: string, ctx: ActorContext): void {
    const handle = timers.get(key);
    if (handle) ctx.timers.clearTimeout(handle);
    timers.delete(key);
  }

  private clearJoinTimer(groupId: string, ctx: ActorContext): void {
    const entry = this.joinTimers.get(groupId);
    if (entry) ctx.timers.clearTimeout(entry.handle);
    this.joinTimers.delete(groupId);
  }
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

/** A failed append, carrying the error code the client gets. */
class CoordinatorWriteError extends Error {
  constructor(readonly errorCode: number) {
    super(`writing to ${OFFSETS_TOPIC} failed with error ${errorCode}`);
  }
}

/** Kafka's mapping of append errors to what group clients understand (GroupMetadataManager). */
function mapAppendError(errorCode: number): number {
  switch (errorCode) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
    default:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
  }
}

/** Answers and forgets the held request of `memberId` in `waiters`, if there is one. */
function answerWaiter(waiters: Map<string, Envelope>, memberId: string, body: unknown, ctx: ActorContext): void {
  const waiter = waiters.get(memberId);
  if (waiter === undefined) return;
  waiters.delete(memberId);
  ctx.reply(waiter, body);
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

function sameProtocols(a: readonly MemberProtocol[], b: readonly MemberProtocol[]): boolean {
  return a.length === b.length && a.every((p, i) => p.name === b[i]!.name && p.metadata.equals(b[i]!.metadata));
}

/** Topics of a member's ConsumerProtocolSubscription, or null when its bytes do not parse. */
function subscribedTopics(metadata: Buffer): string[] | null {
  try {
    return decodeConsumerSubscription(metadata).topics;
  } catch {
    return null;
  }
}

/** A UUID in Java's UUID.toString form (Kafka's member ids: `${clientId}-${uuid}`). */
function formatUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Actor factory registered as kind `group-coordinator` (src/runtime/registry.ts). */
export function createGroupCoordinatorActor(args: GroupCoordinatorArgs): Actor {
  return new GroupCoordinatorActor(args);
}
