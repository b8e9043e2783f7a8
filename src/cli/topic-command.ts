/**
 * `skiff topic create|list|describe|delete|alter-config`: topic administration in rpk's spirit.
 *
 * - create: CreateTopics; `-p` partitions and `-r` replication factor (-1: the broker's defaults),
 *   `-c key=value` topic configs.
 * - list: Metadata for all topics: name, partitions, replicas.
 * - describe: Metadata, ListOffsets (earliest, latest, and latest without isolation: the log-end
 *   offset) per partition and, when the broker advertises it, DescribeConfigs (resource type 2, topic)
 *   and DescribeLogDirs v2+ of each leader (Skiff's tagged FsyncedOffset, absent from Kafka).
 * - delete: DeleteTopics.
 * - alter-config: IncrementalAlterConfigs v0/v1 (KIP-339): `--set k=v` is operation 0 SET,
 *   `--delete k` operation 1 DELETE (back to the default).
 *
 * Each prints what happened per topic and exits 1 when any topic failed.
 */
import type { KafkaClient } from '../client/client';
import { DEBUGGING_REPLICA_ID, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../client/client';
import { KafkaError, UnsupportedApiError } from '../client/errors';
import { ApiKey } from '../protocol/api-keys';
import { ErrorCode, errorName } from '../protocol/error-codes';
import type { DescribeLogDirsResponseData } from '../protocol/schema/describe-log-dirs';
import { EXIT_FAILURE, formatTable, type CliIo } from './client-io';

/** DescribeConfigs / IncrementalAlterConfigs resource type of a topic (ConfigResource.Type.TOPIC). */
const RESOURCE_TYPE_TOPIC = 2;
/** IncrementalAlterConfigs operations (AlterConfigOp.OpType). */
const CONFIG_OP_SET = 0;
const CONFIG_OP_DELETE = 1;

/** DescribeConfigs ConfigSource ids (DescribeConfigsResponse.json) and their Kafka names. */
const CONFIG_SOURCES: Record<number, string> = {
  0: 'UNKNOWN',
  1: 'DYNAMIC_TOPIC_CONFIG',
  2: 'DYNAMIC_BROKER_CONFIG',
  3: 'DYNAMIC_DEFAULT_BROKER_CONFIG',
  4: 'STATIC_BROKER_CONFIG',
  5: 'DEFAULT_CONFIG',
  6: 'DYNAMIC_BROKER_LOGGER_CONFIG',
  7: 'CLIENT_METRICS_CONFIG',
  8: 'GROUP_CONFIG',
};

/** Arguments of `skiff topic create`. */
export interface TopicCreateArgs {
  names: string[];
  partitions: number;
  replicationFactor: number;
  configs: Array<[string, string]>;
}

/** `skiff topic create`: one line per topic (`NAME OK` or the error); exit 1 if any failed. */
export async function topicCreate(client: KafkaClient, args: TopicCreateArgs, io: CliIo): Promise<number> {
  const configs = Object.fromEntries(args.configs);
  const results = await client.createTopics(
    args.names.map((name) => ({
      name,
      numPartitions: args.partitions,
      replicationFactor: args.replicationFactor,
      configs,
    })),
  );
  return printResults(io, results);
}

/** Kafka's internal topics, which kafka-topics refuses to delete (the broker itself would delete them). */
const INTERNAL_TOPICS: ReadonlySet<string> = new Set([
  '__consumer_offsets',
  '__transaction_state',
  '__share_group_state',
]);

/**
 * `skiff topic delete`: one line per topic; exit 1 if any failed. Internal topics are refused here,
 * as Kafka's TopicCommand does: deleting __consumer_offsets would drop every group's committed offsets.
 */
export async function topicDelete(client: KafkaClient, names: string[], io: CliIo): Promise<number> {
  const internal = names.filter((n) => INTERNAL_TOPICS.has(n));
  const refused = internal.map((name) => ({
    name,
    errorCode: ErrorCode.INVALID_REQUEST,
    errorMessage: `Topic ${name} is a kafka internal topic and is not allowed to be marked for deletion.`,
  }));
  const rest = names.filter((n) => !INTERNAL_TOPICS.has(n));
  return printResults(io, [...refused, ...(rest.length > 0 ? await client.deleteTopics(rest) : [])]);
}

async function printResults(
  io: CliIo,
  results: Array<{ name: string; errorCode: number; errorMessage: string | null }>,
): Promise<number> {
  const rows: string[][] = [['TOPIC', 'STATUS']];
  for (const r of results)
    rows.push([
      r.name,
      r.errorCode === ErrorCode.NONE ? 'OK' : `${errorName(r.errorCode)}${r.errorMessage ? `: ${r.errorMessage}` : ''}`,
    ]);
  await io.out(formatTable(rows).join('\n') + '\n');
  return results.every((r) => r.errorCode === ErrorCode.NONE) ? 0 : EXIT_FAILURE;
}

/** `skiff topic list`: NAME, PARTITIONS, REPLICAS for every topic, sorted by name. */
export async function topicList(client: KafkaClient, io: CliIo): Promise<number> {
  const md = await client.metadata(null);
  const rows: Array<Array<string | number>> = [['NAME', 'PARTITIONS', 'REPLICAS']];
  for (const t of [...md.topics].sort((a, b) => a.name.localeCompare(b.name))) {
    rows.push([t.name, t.partitions.length, t.partitions[0]?.replicas.length ?? 0]);
  }
  await io.out(formatTable(rows).join('\n') + '\n');
  return 0;
}

/**
 * `skiff topic describe`: a summary, the configs (when DescribeConfigs is available, otherwise a
 * line saying why not) and one row per partition: leader, leader epoch, replicas, ISR, log start
 * offset, high watermark and log-end offset. The LEO is ListOffsets latest from
 * DEBUGGING_REPLICA_ID (no isolation level: Kafka and Skiff answer the LEO); it is past the HW for
 * records appended but not yet committed (on Skiff with write.caching=false: not yet fsynced).
 * An FSYNCED-OFFSET column follows only when some partition's fsynced offset (Skiff's tagged field
 * in DescribeLogDirs, see {@link fsyncedOffsets}) differs from its LEO, filled for those partitions
 * and `-` for the rest; against Kafka, which never sends it, there is no such column. A partition
 * without a leader shows LEADER `none` and `-` for its offsets (kafka-topics' `Leader: none`).
 */
export async function topicDescribe(client: KafkaClient, name: string, io: CliIo): Promise<number> {
  const t = await client.topicMetadata(name);
  // A partition without a leader (its ISR is down) has no offsets to ask for: `none` and `-` below,
  // as kafka-topics shows `Leader: none`.
  const partitions = t.partitions
    .filter((p) => p.leader >= 0)
    .map((p) => ({ partition: p.partition, timestamp: EARLIEST_TIMESTAMP }));
  const noOffsets = new Map<number, { offset: number }>();
  const starts = partitions.length > 0 ? await client.listOffsets(name, partitions, t) : noOffsets;
  const latest = partitions.map((p) => ({ ...p, timestamp: LATEST_TIMESTAMP }));
  const ends = latest.length > 0 ? await client.listOffsets(name, latest, t) : noOffsets;
  const logEnds = latest.length > 0 ? await client.listOffsets(name, latest, t, DEBUGGING_REPLICA_ID) : noOffsets;
  const fsynced = await fsyncedOffsets(client, t);
  const logEnd = (partition: number): number | '-' => logEnds.get(partition)?.offset ?? '-';
  /** The fsynced offset where it differs from the LEO, else null (nothing to say). */
  const fsyncedBehind = (partition: number): number | null => {
    const f = fsynced.get(partition);
    return f !== undefined && f !== logEnd(partition) ? f : null;
  };
  const showFsynced = t.partitions.some((p) => fsyncedBehind(p.partition) !== null);
  const lines: string[] = [];
  lines.push(
    ...formatTable([
      ['NAME', t.name],
      ['TOPIC-ID', t.topicId],
      ['INTERNAL', String(t.isInternal)],
      ['PARTITIONS', t.partitions.length],
      ['REPLICAS', t.partitions[0]?.replicas.length ?? 0],
    ]),
  );
  lines.push('', 'CONFIGS');
  const configs = await describeTopicConfigs(client, name);
  if (typeof configs === 'string') {
    lines.push(`(not shown: ${configs})`);
  } else {
    lines.push(
      ...formatTable([['KEY', 'VALUE', 'SOURCE'], ...configs.map((c) => [c.name, c.value ?? '(null)', c.source])]),
    );
  }
  lines.push('', 'PARTITIONS');
  const rows: Array<Array<string | number>> = [
    [
      'PARTITION',
      'LEADER',
      'EPOCH',
      'REPLICAS',
      'ISR',
      'LOG-START-OFFSET',
      'HIGH-WATERMARK',
      'LOG-END-OFFSET',
      ...(showFsynced ? ['FSYNCED-OFFSET'] : []),
    ],
  ];
  for (const p of t.partitions) {
    rows.push([
      p.partition,
      p.leader >= 0 ? p.leader : 'none',
      p.leaderEpoch,
      `[${p.replicas.join(',')}]`,
      `[${p.isr.join(',')}]`,
      starts.get(p.partition)?.offset ?? '-',
      ends.get(p.partition)?.offset ?? '-',
      logEnd(p.partition),
      ...(showFsynced ? [fsyncedBehind(p.partition) ?? '-'] : []),
    ]);
  }
  lines.push(...formatTable(rows));
  await io.out(lines.join('\n') + '\n');
  return 0;
}

/**
 * Each partition's fsynced offset (its leader's recovery point: every offset below it is on disk),
 * from DescribeLogDirs v2+ (flexible: where Skiff's tagged FsyncedOffset, tag 10000, can be)
 * sent to each partition's leader for just this topic's partitions. A partition is missing from the
 * map when its leader does not send the tag (Kafka), speaks no DescribeLogDirs v2+, answers an
 * error, or the partition has no leader; then there is nothing to show, which is not an error.
 */
export async function fsyncedOffsets(
  client: KafkaClient,
  t: { name: string; partitions: ReadonlyArray<{ partition: number; leader: number }> },
): Promise<Map<number, number>> {
  const byLeader = new Map<number, number[]>();
  for (const p of t.partitions) {
    if (p.leader < 0) continue;
    byLeader.set(p.leader, [...(byLeader.get(p.leader) ?? []), p.partition]);
  }
  const out = new Map<number, number>();
  await Promise.all(
    [...byLeader].map(async ([leader, partitions]) => {
      let body: DescribeLogDirsResponseData;
      try {
        const version = (await client.connection(leader)).versionFor(ApiKey.DescribeLogDirs, 2);
        body = (await client.request(
          ApiKey.DescribeLogDirs,
          version,
          { topics: [{ topic: t.name, partitions }] },
          leader,
        )) as DescribeLogDirsResponseData;
      } catch (err) {
        if (err instanceof UnsupportedApiError) return;
        throw err;
      }
      if (body.errorCode !== ErrorCode.NONE) return;
      for (const dir of body.results) {
        if (dir.errorCode !== ErrorCode.NONE) continue;
        for (const topic of dir.topics) {
          if (topic.name !== t.name) continue;
          for (const p of topic.partitions) {
            // -1: the field's default, what a broker without the tag (Kafka) decodes as.
            if (!p.isFutureKey && p.fsyncedOffset >= 0 && partitions.includes(p.partitionIndex))
              out.set(p.partitionIndex, p.fsyncedOffset);
          }
        }
      }
    }),
  );
  return out;
}

/** One described config entry. */
export interface DescribedConfig {
  name: string;
  value: string | null;
  source: string;
  readOnly: boolean;
  isSensitive: boolean;
}

/**
 * DescribeConfigs for topic `name`, sorted by key; a string saying why not when this build or the
 * broker lacks DescribeConfigs. Throws KafkaError on an error for the resource.
 */
export async function describeTopicConfigs(client: KafkaClient, name: string): Promise<DescribedConfig[] | string> {
  let body: Record<string, unknown>;
  try {
    body = await client.request(ApiKey.DescribeConfigs, null, {
      resources: [{ resourceType: RESOURCE_TYPE_TOPIC, resourceName: name, configurationKeys: null }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
  } catch (err) {
    if (err instanceof UnsupportedApiError) return err.message;
    throw err;
  }
  const out: DescribedConfig[] = [];
  for (const r of body.results as Array<Record<string, unknown>>) {
    if ((r.errorCode as number) !== ErrorCode.NONE)
      throw new KafkaError(r.errorCode as number, `DescribeConfigs ${name}`, (r.errorMessage as string | null) ?? null);
    for (const c of r.configs as Array<Record<string, unknown>>) {
      const sourceId = (c.configSource as number | undefined) ?? ((c.isDefault as boolean | undefined) ? 5 : 1);
      out.push({
        name: c.name as string,
        value: (c.value as string | null) ?? null,
        source: CONFIG_SOURCES[sourceId] ?? String(sourceId),
        readOnly: Boolean(c.readOnly),
        isSensitive: Boolean(c.isSensitive),
      });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Arguments of `skiff topic alter-config`. */
export interface TopicAlterConfigArgs {
  name: string;
  set: Array<[string, string]>;
  delete: string[];
}

/**
 * `skiff topic alter-config`: one IncrementalAlterConfigs request with every `--set` (SET) and
 * `--delete` (DELETE) for the topic. Prints `NAME OK` or the error; exit 1 on failure, including
 * when this build has no IncrementalAlterConfigs schema yet or the broker does not advertise it.
 */
export async function topicAlterConfig(client: KafkaClient, args: TopicAlterConfigArgs, io: CliIo): Promise<number> {
  if (args.set.length === 0 && args.delete.length === 0)
    throw new RangeError('nothing to change: give --set key=value or --delete key');
  const body = await client.request(ApiKey.IncrementalAlterConfigs, null, {
    resources: [
      {
        resourceType: RESOURCE_TYPE_TOPIC,
        resourceName: args.name,
        configs: [
          ...args.set.map(([name, value]) => ({ name, configOperation: CONFIG_OP_SET, value })),
          ...args.delete.map((name) => ({ name, configOperation: CONFIG_OP_DELETE, value: null })),
        ],
      },
    ],
    validateOnly: false,
  });
  const results = (body.responses as Array<Record<string, unknown>>).map((r) => ({
    name: r.resourceName as string,
    errorCode: r.errorCode as number,
    errorMessage: (r.errorMessage as string | null) ?? null,
  }));
  return printResults(io, results);
}
