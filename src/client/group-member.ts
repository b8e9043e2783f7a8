/**
 * A member of a classic consumer group (protocol type `consumer`), for `skiff consume --group` and
 * `skiff perf consume --group`: small, but the real protocol, so it shares a group with Kafka's
 * clients (Java, kafkajs, librdkafka) that offer the `range` assignor.
 *
 * The life of a member (Kafka's protocol guide, "The consumer group protocol"; ConsumerCoordinator):
 *
 *   FindCoordinator ─▶ JoinGroup ─▶ SyncGroup ─▶ Stable: Heartbeat every heartbeatIntervalMs
 *        ▲                ▲  │ MEMBER_ID_REQUIRED (KIP-394):          │ REBALANCE_IN_PROGRESS,
 *        │                │  └ join again with the id handed out     │ ILLEGAL_GENERATION,
 *        │                └────────────── rejoin ◀──────────────────┘ UNKNOWN_MEMBER_ID (id reset)
 *        └ NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE: find it again            LeaveGroup on close
 *
 * The leader (the member JoinGroup names) assigns with the range assignor (Kafka's
 * RangeAssignor: per topic, members sorted by id, each a consecutive run of partitions, the first
 * `partitions % members` one more) and sends every assignment in its SyncGroup. Subscription and
 * assignment bytes are ConsumerProtocolSubscription v0 and ConsumerProtocolAssignment v0
 * (src/protocol/consumer-protocol.ts).
 *
 * The heartbeat runs on its own timer and its own connection to the coordinator (a JoinGroup can
 * wait a whole rebalance timeout, and a Fetch on the data connection would delay a heartbeat
 * behind it: one connection answers in order). A heartbeat that reports a rebalance only sets
 * {@link GroupMember.needsRejoin}; the owner of the member calls {@link GroupMember.join} again
 * between polls, after committing what it has processed (as Kafka's consumer does in
 * onJoinPrepare). Offsets are committed with the member's generation and id (OffsetCommit) and
 * read with OffsetFetch to resume.
 */
import { ApiKey } from '../protocol/api-keys';
import {
  decodeConsumerAssignment,
  decodeConsumerSubscription,
  encodeConsumerAssignment,
  encodeConsumerSubscription,
} from '../protocol/consumer-protocol';
import { ErrorCode } from '../protocol/error-codes';
import { DEFAULT_API_TIMEOUT_MS, type KafkaClient } from './client';
import { BrokerConnection } from './connection';
import { KafkaError } from './errors';
import { Backoff, isRetriable, sleep } from './retry';
import { findGroupCoordinator, type GroupOffsets, fetchGroupOffsets, offsetCommitTopics } from './group-admin';

/** Settings of a member, with Kafka's consumer config names. */
export interface GroupMemberOptions {
  groupId: string;
  /** The topics to subscribe to. */
  topics: readonly string[];
  /** session.timeout.ms: the coordinator drops a member that has not heartbeated for this long (10 000). */
  sessionTimeoutMs?: number;
  /** max.poll.interval.ms as JoinGroup's rebalance timeout: how long a rebalance waits for members (30 000). */
  rebalanceTimeoutMs?: number;
  /** heartbeat.interval.ms (3 000). */
  heartbeatIntervalMs?: number;
  /** client.id in the coordinator connection's request headers. */
  clientId?: string;
  /** A line for stderr, once per coordinator outage (its broker crashed, it moved). */
  onWarning?: (line: string) => void;
}

/** What a join gave: the generation, whether this member led it, and its partitions per topic. */
export interface GroupGeneration {
  generationId: number;
  memberId: string;
  leader: boolean;
  /** topic -> partitions (ascending). */
  assignment: Map<string, number[]>;
}

/** An offset a member commits: the next offset to consume in `topic`/`partition`. */
export interface MemberOffset {
  topic: string;
  partition: number;
  offset: number;
}

/** The error codes after which a member must join again (its generation is over). */
export const REJOIN_ERRORS: ReadonlySet<number> = new Set<number>([
  ErrorCode.REBALANCE_IN_PROGRESS,
  ErrorCode.ILLEGAL_GENERATION,
  ErrorCode.UNKNOWN_MEMBER_ID,
  ErrorCode.FENCED_INSTANCE_ID,
]);

const COORDINATOR_ERRORS: ReadonlySet<number> = new Set<number>([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);

/** The protocol name of the range assignor, as Kafka's RangeAssignor and other clients call it. */
export const RANGE_ASSIGNOR = 'range';
/**
 * Join attempts that end in a rejoin error before {@link GroupMember.join} gives up. A coordinator
 * that cannot be reached or moved does not count: the member looks for it again until it is back.
 */
const MAX_JOIN_ATTEMPTS = 20;
const RETRY_BACKOFF_MS = 250;

/**
 * Kafka's RangeAssignor: for each topic, the members subscribed to it sorted by member id; with P
 * partitions and M members, member i gets P/M consecutive partitions, the first P%M members one
 * more. `subscriptions`: member id -> topics; `partitionCounts`: topic -> partitions. Returns
 * member id -> topic -> partitions (every member present, maybe with nothing).
 */
export function rangeAssign(
  subscriptions: ReadonlyMap<string, readonly string[]>,
  partitionCounts: ReadonlyMap<string, number>,
): Map<string, Map<string, number[]>> {
  const out = new Map<string, Map<string, number[]>>();
  for (const memberId of subscriptions.keys()) out.set(memberId, new Map());
  const topics = [...new Set([...subscriptions.values()].flat())].sort();
  for (const topic of topics) {
    const count = partitionCounts.get(topic) ?? 0;
    const members = [...subscriptions]
      .filter(([, ts]) => ts.includes(topic))
      .map(([id]) => id)
      .sort();
    if (members.length === 0 || count === 0) continue;
    const per = Math.floor(count / members.length);
    const extra = count % members.length;
    let next = 0;
    members.forEach((memberId, i) => {
      const n = per + (i < extra ? 1 : 0);
      if (n === 0) return;
      out.get(memberId)?.set(
        topic,
        Array.from({ length: n }, (_, k) => next + k),
      );
      next += n;
    });
  }
  return out;
}

/** One member of a consumer group on a {@link KafkaClient}. Call {@link join}, and {@link close} when done. */
export class GroupMember {
  private readonly groupId: string;
  private readonly topics: readonly string[];
  private readonly sessionTimeoutMs: number;
  private readonly rebalanceTimeoutMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly clientId: string;
  private coordinator: { nodeId: number; connection: BrokerConnection } | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private heartbeatInFlight = false;
  private rejoinNeeded = true;
  private closed = false;
  private readonly onWarning: (line: string) => void;
  /** Whether the current coordinator outage was reported already. */
  private inOutage = false;
  /** The member id (empty before the first join, and after UNKNOWN_MEMBER_ID). */
  memberId = '';
  /** The generation of the last completed join, -1 before. */
  generationId = -1;
  /** The partitions of the last completed join. */
  assignment = new Map<string, number[]>();
  /** How many times this member completed a join (1 after the first). */
  joins = 0;
  /** The last heartbeat or commit error that ended the generation, for messages. */
  lastRejoinReason: string | null = null;

  constructor(
    private readonly client: KafkaClient,
    options: GroupMemberOptions,
  ) {
    this.groupId = options.groupId;
    this.topics = [...options.topics];
    this.sessionTimeoutMs = options.sessionTimeoutMs ?? 10_000;
    this.rebalanceTimeoutMs = options.rebalanceTimeoutMs ?? 30_000;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 3_000;
    this.clientId = options.clientId ?? 'skiff-cli';
    this.onWarning = options.onWarning ?? (() => undefined);
    if (this.topics.length === 0) throw new RangeError('a group member needs at least one topic');
  }

  /** Whether the generation is over (a heartbeat or commit said so): join again before the next poll. */
  get needsRejoin(): boolean {
    return this.rejoinNeeded;
  }

  /**
   * Joins (or rejoins) the group: JoinGroup until it succeeds (KIP-394's MEMBER_ID_REQUIRED, the
   * rejoin errors and coordinator moves retried, bounded), SyncGroup (as leader with the range
   * assignment), then heartbeats. Resolves with the new generation; rejects with KafkaError on any
   * other error (e.g. INCONSISTENT_GROUP_PROTOCOL when the group's members offer no `range`).
   */
  async join(): Promise<GroupGeneration> {
    this.stopHeartbeat();
    let lastError: KafkaError | null = null;
    const backoff = new Backoff();
    for (let attempt = 0; attempt < MAX_JOIN_ATTEMPTS; attempt++) {
      if (attempt > 0) await sleep(RETRY_BACKOFF_MS);
      let conn: BrokerConnection;
      let joined: Awaited<ReturnType<GroupMember['joinGroup']>>;
      try {
        conn = await this.coordinatorConnection();
        joined = await this.joinGroup(conn);
      } catch (error) {
        // The coordinator's broker crashed (or FindCoordinator could not be answered): find it again.
        if (!isRetriable(error) || this.closed) throw error;
        this.coordinatorLost(error);
        attempt--;
        await backoff.wait();
        continue;
      }
      backoff.reset();
      if (joined.errorCode !== ErrorCode.NONE) {
        lastError = new KafkaError(joined.errorCode, `JoinGroup ${this.groupId}`);
        if (joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED) {
          this.memberId = joined.memberId;
          attempt--; // not a failure: the second JoinGroup is the protocol (KIP-394)
          continue;
        }
        if (this.retryAfter(joined.errorCode)) continue;
        throw lastError;
      }
      this.memberId = joined.memberId;
      const leader = joined.leader === joined.memberId;
      let synced: { errorCode: number; assignment: Buffer };
      try {
        const assignments = leader ? await this.assign(joined.members) : [];
        synced = await this.syncGroup(conn, joined.generationId, joined.protocolName, assignments);
      } catch (error) {
        if (!isRetriable(error) || this.closed) throw error;
        this.coordinatorLost(error);
        attempt--;
        await backoff.wait();
        continue;
      }
      if (synced.errorCode !== ErrorCode.NONE) {
        lastError = new KafkaError(synced.errorCode, `SyncGroup ${this.groupId}`);
        if (this.retryAfter(synced.errorCode)) continue;
        throw lastError;
      }
      this.generationId = joined.generationId;
      this.assignment = decodeConsumerAssignment(synced.assignment).partitions;
      this.rejoinNeeded = false;
      this.lastRejoinReason = null;
      this.inOutage = false;
      this.joins++;
      this.startHeartbeat();
      return { generationId: this.generationId, memberId: this.memberId, leader, assignment: this.assignment };
    }
    throw lastError ?? new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `JoinGroup ${this.groupId}`);
  }

  /**
   * The group's committed offsets of `partitions` (topic -> partitions), OffsetFetch at the
   * coordinator; -1 where none is committed.
   */
  async committed(partitions: ReadonlyMap<string, readonly number[]>): Promise<GroupOffsets> {
    return fetchGroupOffsets(this.client, this.groupId, partitions);
  }

  /**
   * Commits `offsets` with this member's generation (OffsetCommit, synchronous: resolves once the
   * coordinator has written them). A rejoin error (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION,
   * UNKNOWN_MEMBER_ID) marks the member for rejoining and rejects with KafkaError: the commit is
   * lost, as Kafka's CommitFailedException; any other partition error rejects too.
   */
  async commit(offsets: readonly MemberOffset[]): Promise<void> {
    if (offsets.length === 0) return;
    const topics = offsetCommitTopics(offsets);
    const deadlineMs = Date.now() + DEFAULT_API_TIMEOUT_MS;
    const backoff = new Backoff();
    for (;;) {
      let errorCode: number = ErrorCode.NONE;
      try {
        const conn = await this.coordinatorConnection();
        const version = Math.min(conn.versionFor(ApiKey.OffsetCommit, 2), 9);
        const body = (await conn.send(ApiKey.OffsetCommit, version, {
          groupId: this.groupId,
          generationIdOrMemberEpoch: this.generationId,
          memberId: this.memberId,
          groupInstanceId: null,
          retentionTimeMs: -1,
          topics,
        }))!;
        for (const t of body.topics as Array<{ partitions: Array<{ errorCode: number }> }>)
          for (const p of t.partitions) if (p.errorCode !== ErrorCode.NONE) errorCode = p.errorCode;
      } catch (error) {
        // A lost coordinator connection: the commit may or may not have been written; committing the
        // same offsets again is harmless (commitSync retries until default.api.timeout.ms).
        if (!isRetriable(error) || Date.now() > deadlineMs) throw error;
        this.coordinatorLost(error);
        await backoff.wait();
        continue;
      }
      if (errorCode === ErrorCode.NONE) return;
      if (COORDINATOR_ERRORS.has(errorCode) && Date.now() <= deadlineMs) {
        this.dropCoordinator();
        await backoff.wait();
        continue;
      }
      if (REJOIN_ERRORS.has(errorCode)) this.markRejoin(errorCode, 'OffsetCommit');
      throw new KafkaError(errorCode, `OffsetCommit ${this.groupId} (generation ${this.generationId})`);
    }
  }

  /** Stops heartbeating and leaves the group (LeaveGroup), so the others rebalance at once. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopHeartbeat();
    const coordinator = this.coordinator;
    if (coordinator !== null && this.memberId !== '') {
      try {
        const version = coordinator.connection.versionFor(ApiKey.LeaveGroup);
        await coordinator.connection.send(
          ApiKey.LeaveGroup,
          version,
          version >= 3
            ? {
                groupId: this.groupId,
                members: [{ memberId: this.memberId, groupInstanceId: null, reason: 'the consumer is closing' }],
              }
            : { groupId: this.groupId, memberId: this.memberId },
        );
      } catch {
        // Leaving is a courtesy: the session timeout removes the member anyway.
      }
    }
    this.dropCoordinator();
  }

  private retryAfter(errorCode: number): boolean {
    if (COORDINATOR_ERRORS.has(errorCode)) {
      this.dropCoordinator();
      return true;
    }
    if (errorCode === ErrorCode.UNKNOWN_MEMBER_ID) {
      this.memberId = ''; // the coordinator forgot us: join as a new member
      return true;
    }
    return errorCode === ErrorCode.REBALANCE_IN_PROGRESS || errorCode === ErrorCode.ILLEGAL_GENERATION;
  }

  /** The coordinator cannot be reached: forget it (the next request finds it again), warn once per outage. */
  private coordinatorLost(error: unknown): void {
    this.dropCoordinator();
    if (!this.inOutage) {
      this.inOutage = true;
      this.onWarning(`skiff: group ${this.groupId}: coordinator lost (${(error as Error).message}); finding it again`);
    }
  }

  private markRejoin(errorCode: number, what: string): void {
    this.rejoinNeeded = true;
    this.lastRejoinReason = `${what}: ${new KafkaError(errorCode, this.groupId).errorName}`;
    if (errorCode === ErrorCode.UNKNOWN_MEMBER_ID) this.memberId = '';
    this.stopHeartbeat();
  }

  private async coordinatorConnection(): Promise<BrokerConnection> {
    if (this.coordinator !== null && !this.coordinator.connection.closed) return this.coordinator.connection;
    this.dropCoordinator();
    const nodeId = await findGroupCoordinator(this.client, this.groupId);
    const broker = this.client.knownBrokers.get(nodeId);
    if (broker === undefined)
      throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `coordinator ${nodeId} of ${this.groupId}`);
    const connection = await BrokerConnection.connect(broker.host, broker.port, {
      clientId: this.clientId,
      // A JoinGroup waits up to the rebalance timeout for the other members.
      requestTimeoutMs: this.rebalanceTimeoutMs + 10_000,
    });
    this.coordinator = { nodeId, connection };
    return connection;
  }

  private dropCoordinator(): void {
    this.coordinator?.connection.close();
    this.coordinator = null;
  }

  private async joinGroup(conn: BrokerConnection): Promise<{
    errorCode: number;
    generationId: number;
    protocolName: string | null;
    leader: string;
    memberId: string;
    members: Array<{ memberId: string; metadata: Buffer }>;
  }> {
    const version = conn.versionFor(ApiKey.JoinGroup, 1);
    const body = (await conn.send(ApiKey.JoinGroup, version, {
      groupId: this.groupId,
      sessionTimeoutMs: this.sessionTimeoutMs,
      rebalanceTimeoutMs: this.rebalanceTimeoutMs,
      memberId: this.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: RANGE_ASSIGNOR, metadata: encodeConsumerSubscription(this.topics) }],
      reason: this.lastRejoinReason,
    }))!;
    return {
      errorCode: body.errorCode as number,
      generationId: body.generationId as number,
      protocolName: (body.protocolName as string | null) ?? null,
      leader: body.leader as string,
      memberId: body.memberId as string,
      members: (body.members as Array<{ memberId: string; metadata: Buffer }>) ?? [],
    };
  }

  /** The leader's range assignment of every member's subscription, as SyncGroup assignments. */
  private async assign(
    members: ReadonlyArray<{ memberId: string; metadata: Buffer }>,
  ): Promise<Array<{ memberId: string; assignment: Buffer }>> {
    const subscriptions = new Map<string, string[]>();
    for (const m of members) subscriptions.set(m.memberId, decodeConsumerSubscription(m.metadata).topics);
    const topics = [...new Set([...subscriptions.values()].flat())];
    const md = await this.client.metadata(topics);
    const counts = new Map<string, number>();
    for (const t of md.topics) if (t.errorCode === ErrorCode.NONE) counts.set(t.name, t.partitions.length);
    return [...rangeAssign(subscriptions, counts)].map(([memberId, assignment]) => ({
      memberId,
      assignment: encodeConsumerAssignment(assignment),
    }));
  }

  private async syncGroup(
    conn: BrokerConnection,
    generationId: number,
    protocolName: string | null,
    assignments: Array<{ memberId: string; assignment: Buffer }>,
  ): Promise<{ errorCode: number; assignment: Buffer }> {
    const version = conn.versionFor(ApiKey.SyncGroup);
    const body = (await conn.send(ApiKey.SyncGroup, version, {
      groupId: this.groupId,
      generationId,
      memberId: this.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: protocolName ?? RANGE_ASSIGNOR,
      assignments,
    }))!;
    return { errorCode: body.errorCode as number, assignment: (body.assignment as Buffer | null) ?? Buffer.alloc(0) };
  }

  private startHeartbeat(): void {
    this.stopHeartbeat();
    const timer = setInterval(() => void this.heartbeat(), this.heartbeatIntervalMs);
    timer.unref();
    this.heartbeatTimer = timer;
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer !== null) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private async heartbeat(): Promise<void> {
    if (this.heartbeatInFlight || this.rejoinNeeded || this.closed) return;
    this.heartbeatInFlight = true;
    const generationId = this.generationId;
    try {
      const conn = await this.coordinatorConnection();
      const body = (await conn.send(ApiKey.Heartbeat, conn.versionFor(ApiKey.Heartbeat), {
        groupId: this.groupId,
        generationId,
        memberId: this.memberId,
        groupInstanceId: null,
      }))!;
      const errorCode = body.errorCode as number;
      if (generationId !== this.generationId) return; // a join completed meanwhile
      if (REJOIN_ERRORS.has(errorCode)) this.markRejoin(errorCode, 'Heartbeat');
      else if (COORDINATOR_ERRORS.has(errorCode)) this.dropCoordinator();
    } catch {
      // A lost connection: the next heartbeat finds the coordinator again.
      this.dropCoordinator();
    } finally {
      this.heartbeatInFlight = false;
    }
  }
}
