/**
 * `skiff group list|describe|reset-offsets|delete`: consumer-group administration, after
 * kafka-consumer-groups (org.apache.kafka.tools.consumer.group.ConsumerGroupCommand), on the group
 * requests of src/client/group-admin.ts (each routed to the group's coordinator via
 * FindCoordinator).
 *
 * - list: ListGroups on every broker: GROUP, PROTOCOL-TYPE, STATE.
 * - describe: DescribeGroups (state, protocol, members with client id, host and their decoded
 *   ConsumerProtocolAssignment), OffsetFetch (committed offsets) and ListOffsets latest (log-end
 *   offsets): one row per partition the group has committed or is assigned, with LAG =
 *   LOG-END-OFFSET - CURRENT-OFFSET (negative when a commit is past the log end, as Kafka shows it)
 *   and the owning member, as `kafka-consumer-groups --describe`.
 * - reset-offsets: the new offset per partition (--to-earliest, --to-latest, --to-offset N clamped
 *   into [log start, log end] as Kafka does, --to-datetime: the first offset at or after the time,
 *   the log end when none), printed as GROUP TOPIC PARTITION NEW-OFFSET; committed (OffsetCommit
 *   as an admin: generation -1, no member) only with --execute. Refused unless the group is Empty
 *   or Dead (unknown), with kafka-consumer-groups' message.
 * - delete: DeleteGroups: GROUP STATUS per group (NON_EMPTY_GROUP while it has members).
 *
 * Exit codes as the other client commands: 1 when the operation failed, 2 for usage errors.
 */
import type { KafkaClient, TopicMetadata } from '../client/client';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../client/client';
import { decodeConsumerAssignment, formatAssignment } from '../protocol/consumer-protocol';
import { KafkaError } from '../client/errors';
import {
  commitGroupOffsets,
  deleteGroups,
  describeGroup,
  fetchGroupOffsets,
  listGroups,
  type DescribedGroup,
} from '../client/group-admin';
import { ErrorCode, errorName } from '../protocol/error-codes';
import { EXIT_FAILURE, formatTable, type CliIo } from './client-io';

/** Group states in which offsets may be reset (ConsumerGroupCommand: an inactive group). */
const RESETTABLE_STATES = new Set(['Empty', 'Dead']);

/** `skiff group list`: GROUP, PROTOCOL-TYPE, STATE for every group, sorted by id. */
export async function groupList(client: KafkaClient, io: CliIo): Promise<number> {
  const groups = await listGroups(client);
  const rows: string[][] = [['GROUP', 'PROTOCOL-TYPE', 'STATE']];
  for (const g of groups)
    rows.push([g.groupId, g.protocolType === '' ? '-' : g.protocolType, g.state === '' ? '-' : g.state]);
  await io.out(formatTable(rows).join('\n') + '\n');
  return 0;
}

/** Whether DescribeGroups says the coordinator does not know `g`. */
function isUnknown(g: DescribedGroup): boolean {
  return g.errorCode === ErrorCode.GROUP_ID_NOT_FOUND || (g.errorCode === ErrorCode.NONE && g.state === 'Dead');
}

/** DescribeGroups, throwing KafkaError for errors other than "unknown group". */
async function describeOrThrow(client: KafkaClient, groupId: string): Promise<DescribedGroup> {
  const g = await describeGroup(client, groupId);
  if (g.errorCode !== ErrorCode.NONE && g.errorCode !== ErrorCode.GROUP_ID_NOT_FOUND)
    throw new KafkaError(g.errorCode, `DescribeGroups ${groupId}`, g.errorMessage);
  return g;
}

/** Metadata of each topic, or null for one that does not exist (any topic error). */
async function topicsMetadata(
  client: KafkaClient,
  topics: readonly string[],
): Promise<Map<string, TopicMetadata | null>> {
  const out = new Map<string, TopicMetadata | null>();
  if (topics.length === 0) return out;
  const md = await client.metadata(topics);
  for (const name of topics) {
    const t = md.topics.find((x) => x.name === name);
    out.set(name, t !== undefined && t.errorCode === ErrorCode.NONE ? t : null);
  }
  return out;
}

/** ListOffsets at `timestamp` for each partition of `topic` (one request per leader). */
async function offsetsAt(
  client: KafkaClient,
  t: TopicMetadata,
  partitions: readonly number[],
  timestamp: number,
): Promise<Map<number, number>> {
  const r = await client.listOffsets(
    t.name,
    partitions.map((partition) => ({ partition, timestamp })),
    t,
  );
  return new Map([...r].map(([p, o]) => [p, o.offset]));
}

/**
 * `skiff group describe GROUP`: a summary (state, protocol type, protocol, coordinator), the
 * members with their assignments, and per partition CURRENT-OFFSET, LOG-END-OFFSET, LAG and the
 * owning member (`-` where there is none). Exit 1 when the group does not exist.
 */
export async function groupDescribe(client: KafkaClient, groupId: string, io: CliIo): Promise<number> {
  const group = await describeOrThrow(client, groupId);
  const committed = await fetchGroupOffsets(client, groupId, null);
  const hasOffsets = [...committed.values()].some((ps) => [...ps.values()].some((o) => o.offset >= 0));
  if (isUnknown(group) && !hasOffsets) {
    io.err(`Error: Consumer group '${groupId}' does not exist.`);
    return EXIT_FAILURE;
  }
  const owner = new Map<string, { memberId: string; clientHost: string; clientId: string }>();
  const memberRows: string[][] = [['MEMBER-ID', 'GROUP-INSTANCE-ID', 'CLIENT-ID', 'HOST', 'ASSIGNMENT']];
  for (const m of [...group.members].sort((a, b) => (a.clientId + a.memberId < b.clientId + b.memberId ? -1 : 1))) {
    let assignment = '-';
    if (group.protocolType === 'consumer' && m.assignment.length > 0) {
      try {
        const decoded = decodeConsumerAssignment(m.assignment);
        assignment = formatAssignment(decoded.partitions);
        for (const [topic, partitions] of decoded.partitions)
          for (const p of partitions) owner.set(`${topic}\u0000${p}`, m);
      } catch (err) {
        assignment = `(undecodable: ${(err as Error).message})`;
      }
    } else if (m.assignment.length > 0) {
      assignment = `(${m.assignment.length} bytes of ${group.protocolType || 'unknown'} protocol data)`;
    }
    memberRows.push([m.memberId, m.groupInstanceId ?? '-', m.clientId, m.clientHost, assignment]);
  }

  // Partitions: every committed one and every assigned one.
  const partitionsByTopic = new Map<string, Set<number>>();
  const add = (topic: string, p: number): void => {
    partitionsByTopic.set(topic, (partitionsByTopic.get(topic) ?? new Set()).add(p));
  };
  for (const [topic, ps] of committed) for (const [p, o] of ps) if (o.offset >= 0) add(topic, p);
  for (const key of owner.keys()) {
    const [topic, p] = key.split('\u0000');
    add(topic!, Number(p));
  }
  const topics = [...partitionsByTopic.keys()].sort();
  const metadata = await topicsMetadata(client, topics);
  const offsetRows: Array<Array<string | number>> = [
    ['TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'CONSUMER-ID', 'HOST', 'CLIENT-ID'],
  ];
  for (const topic of topics) {
    const partitions = [...partitionsByTopic.get(topic)!].sort((a, b) => a - b);
    const t = metadata.get(topic) ?? null;
    const known = t === null ? [] : partitions.filter((p) => t.partitions.some((x) => x.partition === p));
    const ends = t === null ? new Map<number, number>() : await offsetsAt(client, t, known, LATEST_TIMESTAMP);
    for (const p of partitions) {
      const current = committed.get(topic)?.get(p)?.offset ?? -1;
      const end = ends.get(p);
      const m = owner.get(`${topic}\u0000${p}`);
      offsetRows.push([
        topic,
        p,
        current >= 0 ? current : '-',
        end ?? '-',
        current >= 0 && end !== undefined ? end - current : '-',
        m?.memberId ?? '-',
        m?.clientHost ?? '-',
        m?.clientId ?? '-',
      ]);
    }
  }

  const lines = [
    ...formatTable([
      ['GROUP', groupId],
      ['COORDINATOR', group.coordinator],
      ['STATE', group.state],
      ['PROTOCOL-TYPE', group.protocolType === '' ? '-' : group.protocolType],
      ['PROTOCOL', group.protocol === '' ? '-' : group.protocol],
      ['MEMBERS', group.members.length],
    ]),
    '',
    'MEMBERS',
    ...(group.members.length === 0 ? [`(consumer group '${groupId}' has no active members)`] : formatTable(memberRows)),
    '',
    'OFFSETS',
    ...(offsetRows.length === 1 ? ['(no committed offsets and no assigned partitions)'] : formatTable(offsetRows)),
  ];
  await io.out(lines.join('\n') + '\n');
  return 0;
}

/** Where `skiff group reset-offsets` moves the offsets. */
export type ResetSpec =
  | { kind: 'earliest' }
  | { kind: 'latest' }
  | { kind: 'offset'; offset: number }
  | { kind: 'datetime'; timestampMs: number };

/** A `--topic T` or `--topic T:0,2` scope: partitions null = every partition of the topic. */
export interface TopicScope {
  topic: string;
  partitions: number[] | null;
}

/** Arguments of `skiff group reset-offsets`. */
export interface GroupResetArgs {
  group: string;
  /** `--topic` scopes; empty with allTopics: every topic the group has committed offsets for. */
  topics: TopicScope[];
  allTopics: boolean;
  spec: ResetSpec;
  execute: boolean;
}

/**
 * Parses a `--topic` value: `T` or `T:P[,P...]` (topic names cannot contain ':'). Throws
 * RangeError on an empty topic or a bad partition list.
 */
export function parseTopicScope(text: string): TopicScope {
  const colon = text.indexOf(':');
  const topic = colon < 0 ? text : text.slice(0, colon);
  if (topic === '') throw new RangeError(`Invalid topic arg '${text}', expected topic name and partitions`);
  if (colon < 0) return { topic, partitions: null };
  const parts = text.slice(colon + 1).split(',');
  if (parts.some((p) => !/^\d+$/.test(p.trim())))
    throw new RangeError(`Invalid topic arg '${text}', expected topic name and partitions`);
  return { topic, partitions: [...new Set(parts.map((p) => Number(p.trim())))].sort((a, b) => a - b) };
}

/**
 * `skiff group reset-offsets`: prints the plan (GROUP TOPIC PARTITION NEW-OFFSET); with --execute
 * commits it and exits 1 if any partition's commit failed. Refuses (exit 1) a group that is not
 * Empty or Dead, and an unknown topic or partition.
 */
export async function groupResetOffsets(client: KafkaClient, args: GroupResetArgs, io: CliIo): Promise<number> {
  const group = await describeOrThrow(client, args.group);
  const state = isUnknown(group) ? 'Dead' : group.state;
  if (!RESETTABLE_STATES.has(state)) {
    io.err(
      `Error: Assignments can only be reset if the group '${args.group}' is inactive, but the current state is ${state}.`,
    );
    return EXIT_FAILURE;
  }
  let scopes = args.topics;
  if (args.allTopics) {
    const committed = await fetchGroupOffsets(client, args.group, null);
    scopes = [...committed]
      .filter(([, ps]) => [...ps.values()].some((o) => o.offset >= 0))
      .map(([topic, ps]) => ({ topic, partitions: [...ps.keys()].sort((a, b) => a - b) }));
  }
  if (scopes.length === 0)
    throw new RangeError(
      args.allTopics
        ? `group ${args.group} has no committed offsets`
        : 'One of the reset scopes should be defined: --all-topics, --topic.',
    );
  const metadata = await topicsMetadata(client, [...new Set(scopes.map((s) => s.topic))]);
  const plan: Array<{ topic: string; partition: number; offset: number }> = [];
  for (const scope of scopes) {
    const t = metadata.get(scope.topic) ?? null;
    if (t === null) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${scope.topic}`);
    const partitions = scope.partitions ?? t.partitions.map((p) => p.partition);
    const missing = partitions.filter((p) => !t.partitions.some((x) => x.partition === p));
    if (missing.length > 0)
      throw new KafkaError(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        `partitions ${missing.map((p) => `${scope.topic}-${p}`).join(', ')} do not exist`,
      );
    const earliest = await offsetsAt(client, t, partitions, EARLIEST_TIMESTAMP);
    const latest = await offsetsAt(client, t, partitions, LATEST_TIMESTAMP);
    const byTime = args.spec.kind === 'datetime' ? await offsetsAt(client, t, partitions, args.spec.timestampMs) : null;
    for (const p of partitions) {
      const start = earliest.get(p)!;
      const end = latest.get(p)!;
      let offset: number;
      switch (args.spec.kind) {
        case 'earliest':
          offset = start;
          break;
        case 'latest':
          offset = end;
          break;
        case 'datetime': {
          const found = byTime!.get(p) ?? -1;
          offset = found >= 0 ? found : end;
          break;
        }
        case 'offset':
          offset = args.spec.offset;
          if (offset > end) {
            io.err(
              `New offset (${offset}) is higher than latest offset for topic partition ${scope.topic}-${p}. Value will be set to ${end}`,
            );
            offset = end;
          } else if (offset < start) {
            io.err(
              `New offset (${offset}) is lower than earliest offset for topic partition ${scope.topic}-${p}. Value will be set to ${start}`,
            );
            offset = start;
          }
          break;
      }
      plan.push({ topic: scope.topic, partition: p, offset });
    }
  }
  plan.sort((a, b) => (a.topic !== b.topic ? (a.topic < b.topic ? -1 : 1) : a.partition - b.partition));
  const rows: Array<Array<string | number>> = [['GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET']];
  for (const p of plan) rows.push([args.group, p.topic, p.partition, p.offset]);
  await io.out(formatTable(rows).join('\n') + '\n');
  if (!args.execute) {
    io.err('dry run: nothing committed (add --execute to commit these offsets)');
    return 0;
  }
  const results = await commitGroupOffsets(client, args.group, plan);
  const failed = results.filter((r) => r.errorCode !== ErrorCode.NONE);
  for (const f of failed) io.err(`Error: committing ${f.topic}-${f.partition} failed: ${errorName(f.errorCode)}`);
  return failed.length === 0 ? 0 : EXIT_FAILURE;
}

/** `skiff group delete GROUP...`: GROUP STATUS per group; exit 1 if any failed. */
export async function groupDelete(client: KafkaClient, groupIds: readonly string[], io: CliIo): Promise<number> {
  const results = await deleteGroups(client, groupIds);
  const rows: string[][] = [['GROUP', 'STATUS']];
  for (const r of results) rows.push([r.groupId, r.errorCode === ErrorCode.NONE ? 'OK' : errorName(r.errorCode)]);
  await io.out(formatTable(rows).join('\n') + '\n');
  return results.every((r) => r.errorCode === ErrorCode.NONE) ? 0 : EXIT_FAILURE;
}
