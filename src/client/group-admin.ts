/**
 * Consumer-group administration on Skiff's client: the requests kafka-consumer-groups makes, for
 * `skiff group` and for tests. Nothing here joins a group (group-member.ts does).
 *
 * Every group request goes to the group's coordinator, found with FindCoordinator (key type 0,
 * group; CoordinatorKeys from v4, KIP-699). A coordinator that moved or is still loading its
 * partition of __consumer_offsets answers NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or
 * COORDINATOR_LOAD_IN_PROGRESS; those are retried (find again, bounded: {@link COORDINATOR_RETRIES}
 * tries {@link COORDINATOR_RETRY_BACKOFF_MS} apart), as Kafka's admin client does. Kafka answers
 * COORDINATOR_NOT_AVAILABLE while it creates __consumer_offsets at the first FindCoordinator.
 *
 * Versions: the highest both sides speak, except OffsetFetch and OffsetCommit, capped at v9: v10
 * names topics by topic id only (KIP-848 era) and this client names them.
 */
import { ApiKey } from '../protocol/api-keys';
import { ErrorCode } from '../protocol/error-codes';
import type { KafkaClient } from './client';
import { ConnectionError, KafkaError } from './errors';

/** FindCoordinator key type of a consumer group (FindCoordinatorRequest.json KeyType). */
export const COORDINATOR_KEY_TYPE_GROUP = 0;
/** Tries of a coordinator request before its retriable error is thrown. */
export const COORDINATOR_RETRIES = 40;
export const COORDINATOR_RETRY_BACKOFF_MS = 250;
/** Highest OffsetFetch / OffsetCommit version this client builds (v10 names topics by id). */
const MAX_OFFSETS_API_VERSION = 9;

const COORDINATOR_ERRORS = new Set<number>([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);

/** One group from ListGroups. `state` is '' from brokers older than ListGroups v4 (KIP-518). */
export interface ListedGroup {
  groupId: string;
  protocolType: string;
  state: string;
  /** ListGroups v5+ (`classic`, `consumer`, `share`, ...), else ''. */
  type: string;
  /** The broker that listed it (its coordinator). */
  coordinator: number;
}

/** One member from DescribeGroups; metadata and assignment are the protocol's opaque bytes. */
export interface DescribedMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  metadata: Buffer;
  assignment: Buffer;
}

/** One group from DescribeGroups. A group the coordinator does not know is state `Dead`. */
export interface DescribedGroup {
  groupId: string;
  errorCode: number;
  errorMessage: string | null;
  /** Empty, PreparingRebalance, CompletingRebalance, Stable or Dead. */
  state: string;
  protocolType: string;
  /** The chosen protocol (for consumers, the assignor: range, roundrobin, cooperative-sticky). */
  protocol: string;
  members: DescribedMember[];
  coordinator: number;
}

/** A committed offset from OffsetFetch (offset -1: none committed). */
export interface CommittedOffset {
  offset: number;
  leaderEpoch: number;
  metadata: string | null;
  errorCode: number;
}

/** topic -> partition -> committed offset. */
export type GroupOffsets = Map<string, Map<number, CommittedOffset>>;

/** An offset to commit. */
export interface OffsetToCommit {
  topic: string;
  partition: number;
  offset: number;
  leaderEpoch?: number;
  metadata?: string | null;
}

/** Per-partition outcome of OffsetCommit / per-group outcome of DeleteGroups. */
export interface PartitionResult {
  topic: string;
  partition: number;
  errorCode: number;
}
export interface GroupResult {
  groupId: string;
  errorCode: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The node id of `groupId`'s coordinator (FindCoordinator key type 0), retrying while the broker
 * answers a coordinator error. Rejects with KafkaError for any other error, or when retries run out.
 */
export async function findGroupCoordinator(client: KafkaClient, groupId: string): Promise<number> {
  let lastCode: number = ErrorCode.COORDINATOR_NOT_AVAILABLE;
  let lastMessage: string | null = null;
  for (let attempt = 0; attempt < COORDINATOR_RETRIES; attempt++) {
    if (attempt > 0) await sleep(COORDINATOR_RETRY_BACKOFF_MS);
    // Any broker answers FindCoordinator; the bootstrap broker's versions stand for the cluster's.
    const version = client.bootstrapConnection.versionFor(ApiKey.FindCoordinator);
    let body: Record<string, unknown>;
    try {
      body = await client.request(
        ApiKey.FindCoordinator,
        version,
        version >= 4
          ? { keyType: COORDINATOR_KEY_TYPE_GROUP, coordinatorKeys: [groupId] }
          : { key: groupId, keyType: COORDINATOR_KEY_TYPE_GROUP },
      );
    } catch (error) {
      // The broker asked crashed while answering: the next try goes to another one.
      if (!(error instanceof ConnectionError)) throw error;
      lastMessage = error.message;
      continue;
    }
    const c =
      version >= 4
        ? ((body.coordinators as Array<Record<string, unknown>>)[0] ?? {
            errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE,
          })
        : body;
    lastCode = c.errorCode as number;
    lastMessage = (c.errorMessage as string | null | undefined) ?? null;
    if (lastCode === ErrorCode.NONE) {
      const nodeId = c.nodeId as number;
      if (!client.knownBrokers.has(nodeId)) await client.metadata([]);
      return nodeId;
    }
    if (!COORDINATOR_ERRORS.has(lastCode)) break;
  }
  throw new KafkaError(lastCode, `FindCoordinator ${groupId}`, lastMessage);
}

/**
 * Runs `attempt` against `groupId`'s coordinator; when it reports a coordinator error (its
 * `errorCode`), finds the coordinator again and retries (bounded). Resolves with the value of the
 * first attempt without one; rejects with KafkaError when retries run out.
 */
async function withCoordinator<T>(
  client: KafkaClient,
  groupId: string,
  context: string,
  attempt: (nodeId: number) => Promise<{ errorCode: number; value: T }>,
): Promise<T> {
  let lastCode: number = ErrorCode.COORDINATOR_NOT_AVAILABLE;
  for (let i = 0; i < COORDINATOR_RETRIES; i++) {
    if (i > 0) await sleep(COORDINATOR_RETRY_BACKOFF_MS);
    const nodeId = await findGroupCoordinator(client, groupId);
    let r: { errorCode: number; value: T };
    try {
      r = await attempt(nodeId);
    } catch (error) {
      // The coordinator's broker crashed: another broker becomes the coordinator (FindCoordinator again).
      if (!(error instanceof ConnectionError)) throw error;
      lastCode = ErrorCode.COORDINATOR_NOT_AVAILABLE;
      continue;
    }
    if (!COORDINATOR_ERRORS.has(r.errorCode)) return r.value;
    lastCode = r.errorCode;
  }
  throw new KafkaError(lastCode, context);
}

/**
 * ListGroups on every known broker (each lists the groups it coordinates), merged and sorted by
 * group id. Rejects with KafkaError when a broker answers with an error.
 */
export async function listGroups(client: KafkaClient): Promise<ListedGroup[]> {
  if (client.knownBrokers.size === 0) await client.metadata([]);
  const out: ListedGroup[] = [];
  for (const nodeId of client.knownBrokers.keys()) {
    const conn = await client.connection(nodeId);
    const version = conn.versionFor(ApiKey.ListGroups);
    const body = (await conn.send(ApiKey.ListGroups, version, { statesFilter: [], typesFilter: [] }))!;
    const code = body.errorCode as number;
    if (code !== ErrorCode.NONE) throw new KafkaError(code, `ListGroups on broker ${nodeId}`);
    for (const g of body.groups as Array<Record<string, unknown>>) {
      out.push({
        groupId: g.groupId as string,
        protocolType: g.protocolType as string,
        state: (g.groupState as string | undefined) ?? '',
        type: (g.groupType as string | undefined) ?? '',
        coordinator: nodeId,
      });
    }
  }
  return out.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
}

/**
 * DescribeGroups of one group at its coordinator. A group the coordinator does not know comes
 * back with state `Dead` and errorCode NONE (v0-5) or GROUP_ID_NOT_FOUND (v6+, KIP-1043): both
 * are returned as they are, not thrown. Rejects with KafkaError when retries of coordinator errors
 * run out.
 */
export async function describeGroup(client: KafkaClient, groupId: string): Promise<DescribedGroup> {
  return withCoordinator(client, groupId, `DescribeGroups ${groupId}`, async (nodeId) => {
    const body = await client.request(
      ApiKey.DescribeGroups,
      null,
      { groups: [groupId], includeAuthorizedOperations: false },
      nodeId,
    );
    const g = (body.groups as Array<Record<string, unknown>>)[0]!;
    const group: DescribedGroup = {
      groupId: g.groupId as string,
      errorCode: g.errorCode as number,
      errorMessage: (g.errorMessage as string | null | undefined) ?? null,
      state: g.groupState as string,
      protocolType: g.protocolType as string,
      protocol: g.protocolData as string,
      members: (g.members as Array<Record<string, unknown>>).map((m) => ({
        memberId: m.memberId as string,
        groupInstanceId: (m.groupInstanceId as string | null | undefined) ?? null,
        clientId: m.clientId as string,
        clientHost: m.clientHost as string,
        metadata: (m.memberMetadata as Buffer | null) ?? Buffer.alloc(0),
        assignment: (m.memberAssignment as Buffer | null) ?? Buffer.alloc(0),
      })),
      coordinator: nodeId,
    };
    return { errorCode: group.errorCode, value: group };
  });
}

/**
 * OffsetFetch of `groupId`'s committed offsets: for `topics` (topic -> partitions), or every
 * partition the group has committed when null. Partitions without a commit come back with offset
 * -1. Rejects with KafkaError on a group-level error (e.g. GROUP_AUTHORIZATION_FAILED) other than
 * the retried coordinator errors; partition errors stay in each entry.
 */
export async function fetchGroupOffsets(
  client: KafkaClient,
  groupId: string,
  topics: ReadonlyMap<string, readonly number[]> | null = null,
): Promise<GroupOffsets> {
  return withCoordinator(client, groupId, `OffsetFetch ${groupId}`, async (nodeId) => {
    const conn = await client.connection(nodeId);
    const version = Math.min(conn.versionFor(ApiKey.OffsetFetch, topics === null ? 2 : 0), MAX_OFFSETS_API_VERSION);
    const requestTopics =
      topics === null
        ? null
        : [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes: [...partitionIndexes] }));
    const body = (await conn.send(
      ApiKey.OffsetFetch,
      version,
      version >= 8
        ? { groups: [{ groupId, memberId: null, memberEpoch: -1, topics: requestTopics }], requireStable: false }
        : { groupId, topics: requestTopics, requireStable: false },
    ))!;
    const group = version >= 8 ? (body.groups as Array<Record<string, unknown>>)[0]! : body;
    const errorCode = (group.errorCode as number | undefined) ?? ErrorCode.NONE;
    const out: GroupOffsets = new Map();
    for (const t of (group.topics as Array<{ name: string; partitions: Array<Record<string, unknown>> }>) ?? []) {
      const partitions = out.get(t.name) ?? new Map<number, CommittedOffset>();
      for (const p of t.partitions) {
        partitions.set(p.partitionIndex as number, {
          offset: p.committedOffset as number,
          leaderEpoch: (p.committedLeaderEpoch as number | undefined) ?? -1,
          metadata: (p.metadata as string | null) ?? null,
          errorCode: p.errorCode as number,
        });
      }
      out.set(t.name, partitions);
    }
    if (errorCode !== ErrorCode.NONE && !COORDINATOR_ERRORS.has(errorCode))
      throw new KafkaError(errorCode, `OffsetFetch ${groupId}`);
    return { errorCode, value: out };
  });
}

/**
 * The `topics` of an OffsetCommit request (v2+ fields) for `offsets`, grouped by topic in first-seen
 * order: no leader epoch (-1) and empty metadata unless given, commit timestamp -1 (the broker's time).
 * Shared by the admin commit below and a group member's commit (group-member.ts).
 */
export function offsetCommitTopics(offsets: readonly OffsetToCommit[]) {
  const byTopic = new Map<string, OffsetToCommit[]>();
  for (const o of offsets) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o]);
  return [...byTopic].map(([name, list]) => ({
    name,
    partitions: list.map((o) => ({
      partitionIndex: o.partition,
      committedOffset: o.offset,
      committedLeaderEpoch: o.leaderEpoch ?? -1,
      commitTimestamp: -1,
      committedMetadata: o.metadata ?? '',
    })),
  }));
}

/**
 * OffsetCommit of `offsets` for `groupId` as an admin (generation -1, empty member id: the way
 * kafka-consumer-groups commits for an inactive group). Kafka refuses it with UNKNOWN_MEMBER_ID
 * while the group has members. Resolves with each partition's outcome (not thrown).
 */
export async function commitGroupOffsets(
  client: KafkaClient,
  groupId: string,
  offsets: readonly OffsetToCommit[],
): Promise<PartitionResult[]> {
  const topics = offsetCommitTopics(offsets);
  return withCoordinator(client, groupId, `OffsetCommit ${groupId}`, async (nodeId) => {
    const conn = await client.connection(nodeId);
    const version = Math.min(conn.versionFor(ApiKey.OffsetCommit), MAX_OFFSETS_API_VERSION);
    const body = (await conn.send(ApiKey.OffsetCommit, version, {
      groupId,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1,
      topics,
    }))!;
    const results: PartitionResult[] = [];
    for (const t of body.topics as Array<{
      name: string;
      partitions: Array<{ partitionIndex: number; errorCode: number }>;
    }>) {
      for (const p of t.partitions)
        results.push({ topic: t.name, partition: p.partitionIndex, errorCode: p.errorCode });
    }
    const coordinatorError = results.find((r) => COORDINATOR_ERRORS.has(r.errorCode))?.errorCode ?? ErrorCode.NONE;
    return { errorCode: coordinatorError, value: results };
  });
}

/**
 * DeleteGroups, each group at its coordinator. Resolves with each group's outcome (NON_EMPTY_GROUP
 * for a group with members, GROUP_ID_NOT_FOUND for an unknown one), in the order given.
 */
export async function deleteGroups(client: KafkaClient, groupIds: readonly string[]): Promise<GroupResult[]> {
  const out: GroupResult[] = [];
  for (const groupId of groupIds) {
    out.push(
      await withCoordinator(client, groupId, `DeleteGroups ${groupId}`, async (nodeId) => {
        const body = await client.request(ApiKey.DeleteGroups, null, { groupsNames: [groupId] }, nodeId);
        const r = (body.results as Array<{ groupId: string; errorCode: number }>).find(
          (x) => x.groupId === groupId,
        ) ?? { groupId, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
        return { errorCode: r.errorCode, value: { groupId, errorCode: r.errorCode } };
      }),
    );
  }
  return out;
}
