/**
 * The messages a group coordinator actor (group-coordinator-actor.ts) takes and answers, gathered
 * in one place: the bodies the network handlers (src/network/handlers/{join-group,sync-group,...}.ts)
 * and the broker send, and the version-independent results the coordinator replies with (a handler
 * shapes them per version). `GroupCoordinatorMessages` maps each message kind to its body and reply.
 *
 * Client requests arrive wrapped in `ClientRequest` (the decoded request body plus the request
 * header's version, client id and host); `list` and `topics-deleted` arrive bare. Besides its
 * result, every request may be answered with a `CoordinatorErrorReply`: while the coordinator reads
 * its partition (COORDINATOR_LOAD_IN_PROGRESS), when it stops with requests held (NOT_COORDINATOR),
 * or for an unknown kind.
 *
 * The request types list only the fields the coordinator reads; the handlers pass the table-derived
 * `*RequestData`, which has them.
 */

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

/** Message kind -> the body it carries and the reply it gets (besides a `CoordinatorErrorReply`). */
export interface GroupCoordinatorMessages {
  /** Held until the join phase completes. */
  join: { body: ClientRequest<JoinRequest>; reply: JoinResult };
  /** Held until the leader's assignment is stored. */
  sync: { body: ClientRequest<SyncRequest>; reply: SyncResult };
  heartbeat: { body: ClientRequest<HeartbeatRequest>; reply: HeartbeatResult };
  leave: { body: ClientRequest<LeaveRequest>; reply: LeaveResult };
  commit: { body: ClientRequest<CommitRequest>; reply: CommitResult };
  'fetch-offsets': { body: ClientRequest<FetchOffsetsRequest>; reply: FetchOffsetsResult };
  list: { body: ListRequest; reply: ListResult };
  describe: { body: ClientRequest<DescribeRequest>; reply: DescribedGroup[] };
  'delete-groups': { body: ClientRequest<DeleteGroupsRequest>; reply: DeletedGroup[] };
  'offset-delete': { body: ClientRequest<OffsetDeleteRequest>; reply: OffsetDeleteResult };
  /** Answered at once, also while loading; the tombstones are written in the background. */
  'topics-deleted': { body: TopicsDeletedRequest; reply: Record<string, never> };
}

/** A message kind the group coordinator takes. */
export type GroupCoordinatorMessageKind = keyof GroupCoordinatorMessages;

/** The body of a message of kind `K`. */
export type GroupCoordinatorBody<K extends GroupCoordinatorMessageKind> = GroupCoordinatorMessages[K]['body'];
