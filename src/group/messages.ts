/**
 * The messages a group coordinator actor (group-coordinator-actor.ts) takes and answers, gathered
 * in one place: the bodies the network handlers (src/network/handlers/{join-group,sync-group,...}.ts)
 * and the broker send, and the version-independent results the coordinator replies with (a handler
 * shapes them per version). `GroupCoordinatorMessages` maps each message kind (`group.join`, ...)
 * to its body and reply; `groupCoordinatorActorId` types a coordinator's id with it.
 *
 * Client requests arrive wrapped in `ClientRequest` (the decoded request body plus the request
 * header's version, client id and host); `group.list` and `group.topics-deleted` arrive bare. Besides
 * its result, every client request may be answered with a `CoordinatorErrorReply`: while the
 * coordinator reads its partition (COORDINATOR_LOAD_IN_PROGRESS), when it stops with requests held
 * (NOT_COORDINATOR), or for an unknown kind.
 *
 * The request types list only the fields the coordinator reads; the handlers pass the table-derived
 * `*RequestData`, which has them.
 */
import { actorRef } from '../runtime/actor';
import type { ActorRef, EnvelopeOf } from '../runtime/actor';
import type { ReplicaMessages } from '../replica/messages';

/**
 * Kafka's classic group states, with their DescribeGroups/ListGroups names. The state machine over them
 * is classic-group.ts's; the type lives here, with the results that carry it, so that this file imports
 * nothing of the coordinator's (no file cycle).
 */
export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

/** What every client request carries besides its body. */
export interface ClientRequest<T> {
  /** The request's API version (JoinGroup v4+: KIP-394; v9+: skipAssignment; OffsetCommit v9+: KIP-848 errors). */
  version: number;
  clientId: string;
  /** Kafka's form: the peer address with a leading slash (`/127.0.0.1`). */
  clientHost: string;
  request: T;
}

/** A bare error answer: routing, loading (`loading: true`), stopping, or an unknown message kind. */
export interface CoordinatorErrorReply {
  errorCode: number;
  loading?: true;
}

/** JoinGroup. An empty `memberId` is a member joining for the first time. */
export interface JoinRequest {
  groupId: string;
  sessionTimeoutMs: number;
  /** Ignored at v0 (the session timeout serves); negative = the session timeout. */
  rebalanceTimeoutMs: number;
  memberId: string;
  /** KIP-345 static membership, or null for a dynamic member. */
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
  /** KIP-814: the leader must not compute an assignment (a static leader rejoined a Stable group). */
  skipAssignment: boolean;
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

/** SyncGroup; only the leader's request carries `assignments`. */
export interface SyncRequest {
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

/** Heartbeat. */
export interface HeartbeatRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

/** The Heartbeat outcome. */
export interface HeartbeatResult {
  errorCode: number;
}

/** LeaveGroup (v3+ batches members; the handler turns v0-2's single member into one). */
export interface LeaveRequest {
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
  /** -1 with an empty member id: a commit from outside the group (admin tools, manual assignment). */
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

/** The OffsetFetch outcome; a partition without a committed offset has offset -1. */
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

/** ListGroups filters (v4 states, KIP-518; v5 types, KIP-848), compared case-insensitively; empty = all. */
export interface ListRequest {
  statesFilter: string[];
  typesFilter: string[];
}

/** A group as ListGroups shows it. */
export interface ListedGroup {
  groupId: string;
  protocolType: string;
  groupState: GroupState;
  groupType: string;
}

/** The ListGroups outcome of one coordinator. */
export interface ListResult {
  errorCode: number;
  groups: ListedGroup[];
}

/** DescribeGroups (the handler sends one group per request). */
export interface DescribeRequest {
  groupIds: string[];
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

/** DeleteGroups (the handler sends one group per request). */
export interface DeleteGroupsRequest {
  groupIds: string[];
}

/** The DeleteGroups outcome of one group. */
export interface DeletedGroup {
  groupId: string;
  errorCode: number;
}

/** OffsetDelete, with topics already checked against the metadata by the handler. */
export interface OffsetDeleteRequest {
  groupId: string;
  topics: { name: string; partitions: number[] }[];
}

/** The OffsetDelete outcome: a group-level error and one per partition. */
export interface OffsetDeleteResult {
  errorCode: number;
  topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];
}

/** The broker deleted these topics: their committed offsets are tombstoned (Kafka's onPartitionsDeleted). */
export interface TopicsDeletedRequest {
  topics: string[];
}

/** The client requests a coordinator takes: kind -> the request inside `ClientRequest` and its result. */
type GroupClientCalls = {
  /** Held until the join phase completes. */
  'group.join': { request: JoinRequest; result: JoinResult };
  /** Held until the leader's assignment is stored. */
  'group.sync': { request: SyncRequest; result: SyncResult };
  'group.heartbeat': { request: HeartbeatRequest; result: HeartbeatResult };
  'group.leave': { request: LeaveRequest; result: LeaveResult };
  'group.commit': { request: CommitRequest; result: CommitResult };
  'group.fetch-offsets': { request: FetchOffsetsRequest; result: FetchOffsetsResult };
  'group.describe': { request: DescribeRequest; result: DescribedGroup[] };
  'group.delete-groups': { request: DeleteGroupsRequest; result: DeletedGroup[] };
  'group.offset-delete': { request: OffsetDeleteRequest; result: OffsetDeleteResult };
};

/** A client request's kind. */
export type GroupClientKind = keyof GroupClientCalls;

/** The result a client request of kind `K` gets when it is not answered with a bare error. */
export type GroupClientResultOf<K extends GroupClientKind> = GroupClientCalls[K]['result'];

/** The decoded request a client request of kind `K` wraps. */
export type GroupClientRequestOf<K extends GroupClientKind> = GroupClientCalls[K]['request'];

/**
 * The client requests as messages: each body is a `ClientRequest`, each reply the result or a
 * `CoordinatorErrorReply`. A mapped type (not a literal), so `GroupClientMessages[K]['body']` stays
 * `ClientRequest<...>` for a generic `K` (network/handlers/group-routing.ts builds it).
 */
export type GroupClientMessages = {
  [K in GroupClientKind]: {
    body: ClientRequest<GroupClientCalls[K]['request']>;
    reply: GroupClientCalls[K]['result'] | CoordinatorErrorReply;
  };
};

/** Group coordinator message kind -> the body it carries and the reply it gets. */
export type GroupCoordinatorMessages = GroupClientMessages & {
  /** Answered with an empty list (COORDINATOR_LOAD_IN_PROGRESS) while loading. */
  'group.list': { body: ListRequest; reply: ListResult };
  /** Answered at once, also while loading; the tombstones are written in the background. */
  'group.topics-deleted': { body: TopicsDeletedRequest; reply: Record<string, never> };
};

/** A message kind the group coordinator takes. */
export type GroupCoordinatorMessageKind = keyof GroupCoordinatorMessages;

/** An envelope of kind `K` as the coordinator receives it (its reply is checked by `ctx.reply`). */
export type GroupEnvelope<K extends GroupCoordinatorMessageKind> = EnvelopeOf<GroupCoordinatorMessages, K>;

/** The id of the coordinator of `__consumer_offsets` partition `partition` on broker `brokerId`. */
export function groupCoordinatorActorId(brokerId: number, partition: number): ActorRef<GroupCoordinatorMessages> {
  return actorRef<GroupCoordinatorMessages>(`group-coordinator/${brokerId}/${partition}`);
}

/**
 * What the coordinator asks of its partition's leader replica (partition-writer.ts, group-loader.ts):
 * the kinds of the replica's own declaration (replica/messages.ts) it uses: appends with acks=all,
 * reads of the partition, and the wait for a new leader's HW to reach the start of its epoch before
 * loading.
 */
export type PartitionLeaderMessages = Pick<
  ReplicaMessages,
  'replica.produce' | 'replica.fetch' | 'replica.await-leader-hw'
>;
