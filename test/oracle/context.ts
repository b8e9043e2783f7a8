/**
 * What a differential scenario runs with: a connected client of Skiff's own library
 * (src/client) whose API versions are clamped to the range BOTH brokers (Kafka and Skiff) and this
 * build's schema tables speak, so the same request bytes go to each broker; plus helpers that
 * send raw requests and turn answers into plain JSON (buffers as text or hex, errors by name).
 *
 * A scenario must be deterministic given its inputs: fixed topic names (each broker is fresh),
 * explicit partitions and timestamps (`ctx.baseTimestamp`), no wall-clock values in its result
 * unless compared through a window (see `withinWindow`).
 */
import { KafkaClient } from '../../src/client';
import { buildBatch } from '../../src/client/batch';
import { decodeBatches } from '../../src/client/batch';
import { ApiKey } from '../../src/protocol/api-keys';
import { ErrorCode, errorName } from '../../src/protocol/error-codes';
import type { RecordHeader } from '../../src/protocol/record-batch/builder';
import type { CompressionCodecId } from '../../src/protocol/record-batch/compression';
import * as L from '../../src/protocol/record-batch/layout';
import { apiSchemas } from '../../src/protocol/registry';

/** One broker under test. */
export interface Target {
  name: 'kafka' | 'skiff';
  bootstrap: string;
}

/** A version range per API key. */
export type VersionRanges = Map<number, { minVersion: number; maxVersion: number }>;

/** JSON-able value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A record to produce in a scenario. Timestamps are offsets from ctx.baseTimestamp. */
export interface ScenarioRecord {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Array<[string, Buffer | string | null]>;
  /** ms after ctx.baseTimestamp (default 0). */
  ts?: number;
}

/** Options of {@link ScenarioContext.produce}. */
export interface ProduceOptions {
  codec?: CompressionCodecId;
  acks?: -1 | 0 | 1;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
}

const MAX_WAIT_TOPIC_MS = 15_000;

/** Per-scenario handle on one broker. */
export class ScenarioContext {
  private readonly topicIds = new Map<string, string>();
  /** Extra connections opened by {@link member}, closed with this context. */
  private readonly members: KafkaClient[] = [];
  /** Wall-clock ms when this context opened (minus 1 s of slack). */
  private readonly openedAt = Date.now() - 1000;

  private constructor(
    readonly target: Target,
    readonly client: KafkaClient,
    /** The versions both brokers and our tables speak: what this context sends. */
    readonly versions: VersionRanges,
    /** A fixed timestamp (the same for both brokers), a little before the run started. */
    readonly baseTimestamp: number,
  ) {}

  /** Connects to `target` and clamps the negotiated versions to `common`. */
  static async open(target: Target, common: VersionRanges, baseTimestamp: number): Promise<ScenarioContext> {
    const client = await KafkaClient.connect({
      brokers: target.bootstrap,
      clientId: 'skiff-oracle',
      requestTimeoutMs: 30_000,
    });
    clampVersions(client, common);
    return new ScenarioContext(target, client, common, baseTimestamp);
  }

  /** Whether a broker-assigned time `ms` lies between this context's opening and now (1 s slack): timing as a boolean. */
  duringRun(ms: number): boolean {
    return ms >= this.openedAt && ms <= Date.now() + 1000;
  }

  close(): void {
    this.client.close();
    for (const m of this.members) m.close();
  }

  /**
   * A connection of its own with client id `clientId` (versions clamped like this context's), for
   * one consumer-group member: a JoinGroup can wait for a rebalance, and a broker answers one
   * connection's requests in order, so each member needs its own. Closed with this context.
   */
  async member(clientId: string): Promise<GroupMemberConnection> {
    const client = await KafkaClient.connect({ brokers: this.target.bootstrap, clientId, requestTimeoutMs: 30_000 });
    clampVersions(client, this.versions);
    this.members.push(client);
    return new GroupMemberConnection(client, this, clientId);
  }

  /** The version this context sends for `apiKey` (the top of the common range). */
  v(apiKey: ApiKey): number {
    const r = this.versions.get(apiKey);
    if (r === undefined) throw new Error(`${ApiKey[apiKey]} is not spoken by both brokers`);
    return r.maxVersion;
  }

  /** Sends `body` at the common version (or `version`) and returns the decoded response body. */
  request(apiKey: ApiKey, body: object, version?: number): Promise<Record<string, unknown>> {
    return this.client.request(apiKey, version ?? this.v(apiKey), body);
  }

  /** Creates topics (CreateTopics at the common version) and returns each outcome as JSON. */
  async createTopics(
    topics: Array<{ name: string; partitions?: number; replicationFactor?: number; configs?: Record<string, string> }>,
    validateOnly = false,
  ): Promise<Json> {
    const body = await this.request(ApiKey.CreateTopics, {
      topics: topics.map((t) => ({
        name: t.name,
        numPartitions: t.partitions ?? -1,
        replicationFactor: t.replicationFactor ?? -1,
        assignments: [],
        configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
      })),
      timeoutMs: 30_000,
      validateOnly,
    });
    return (body.topics as Array<Record<string, unknown>>).map((t) => ({
      name: t.name as string,
      error: err(t.errorCode as number),
      errorMessage: (t.errorMessage as string | null) ?? null,
      numPartitions: (t.numPartitions as number | undefined) ?? null,
      replicationFactor: (t.replicationFactor as number | undefined) ?? null,
    }));
  }

  /** Creates one topic and waits until every partition has a leader; throws if creation fails. */
  async createTopic(name: string, partitions = 1, configs: Record<string, string> = {}): Promise<void> {
    const [result] = (await this.createTopics([{ name, partitions, replicationFactor: 1, configs }])) as Array<{
      error: string;
      errorMessage: string | null;
    }>;
    if (result!.error !== 'NONE')
      throw new Error(`${this.target.name}: creating ${name} failed: ${result!.error} ${result!.errorMessage ?? ''}`);
    await this.waitForTopic(name, partitions);
  }

  /** Polls Metadata (bounded) until `topic` has `partitions` partitions, each with a leader. */
  async waitForTopic(topic: string, partitions: number): Promise<void> {
    const deadline = Date.now() + MAX_WAIT_TOPIC_MS;
    for (;;) {
      const md = await this.client.metadata([topic]);
      const t = md.topics.find((x) => x.name === topic);
      if (
        t !== undefined &&
        t.errorCode === 0 &&
        t.partitions.length === partitions &&
        t.partitions.every((p) => p.leader >= 0 && p.errorCode === 0)
      ) {
        this.topicIds.set(topic, t.topicId);
        // Kafka's Metadata can name a leader before that broker's replica manager hosts the
        // partition (Produce then gets NOT_LEADER_OR_FOLLOWER): wait until each answers ListOffsets.
        const answers = await Promise.all(t.partitions.map((p) => this.listOffset(topic, p.partition, -1)));
        if (answers.every((a) => (a as { error: string }).error === 'NONE')) return;
      }
      if (Date.now() > deadline)
        throw new Error(`${this.target.name}: ${topic} not ready after ${MAX_WAIT_TOPIC_MS} ms: ${JSON.stringify(t)}`);
      await sleep(100);
    }
  }

  /** Polls Metadata (bounded) until `topic` is gone; returns the last topic error seen. */
  async waitForTopicGone(topic: string): Promise<string> {
    const deadline = Date.now() + MAX_WAIT_TOPIC_MS;
    for (;;) {
      const md = await this.client.metadata([topic]);
      const t = md.topics.find((x) => x.name === topic);
      const e = t === undefined ? 'ABSENT' : err(t.errorCode);
      if (e !== 'NONE' && e !== 'LEADER_NOT_AVAILABLE') return e;
      if (Date.now() > deadline) return `STILL_PRESENT(${e})`;
      await sleep(100);
    }
  }

  /** The topic id from the last Metadata, for requests at versions that name topics by id. */
  async topicId(topic: string): Promise<string> {
    const known = this.topicIds.get(topic);
    if (known !== undefined) return known;
    const md = await this.client.metadata([topic]);
    const id = md.topics.find((x) => x.name === topic)?.topicId ?? '';
    this.topicIds.set(topic, id);
    return id;
  }

  /**
   * Produces `records` as ONE batch to `topic`/`partition` (a raw Produce at the common version) and
   * returns the partition's answer as JSON: error, baseOffset, logStartOffset, logAppendTime (see
   * {@link logAppendTimeJson}), record errors (batch index, message with its numbers as N: they hold broker times).
   */
  async produce(
    topic: string,
    partition: number,
    records: readonly ScenarioRecord[],
    opts: ProduceOptions = {},
  ): Promise<Json> {
    const batch = buildBatch(
      records.map((r) => ({
        key: toBuf(r.key ?? null),
        value: toBuf(r.value),
        headers: (r.headers ?? []).map(([key, value]): RecordHeader => ({ key, value: toBuf(value) })),
        timestamp: this.baseTimestamp + (r.ts ?? 0),
      })),
      {
        baseTimestamp: this.baseTimestamp + (records[0]?.ts ?? 0),
        compression: opts.codec ?? 0,
        producerId: opts.producerId ?? -1,
        producerEpoch: opts.producerEpoch ?? -1,
        baseSequence: opts.baseSequence ?? -1,
      },
    );
    return this.produceRaw(topic, partition, batch, opts.acks ?? -1);
  }

  /** Sends prebuilt batch bytes to one partition; see {@link produce}. */
  async produceRaw(topic: string, partition: number, records: Buffer, acks: -1 | 0 | 1 = -1): Promise<Json> {
    const version = this.v(ApiKey.Produce);
    const topicId = version >= 13 ? await this.topicId(topic) : undefined;
    const body = await this.request(ApiKey.Produce, {
      transactionalId: null,
      acks,
      timeoutMs: 30_000,
      topicData: [
        { name: topic, ...(topicId !== undefined ? { topicId } : {}), partitionData: [{ index: partition, records }] },
      ],
    });
    const responses = body.responses as Array<{ partitionResponses: Array<Record<string, unknown>> }>;
    const p = responses[0]?.partitionResponses[0];
    if (p === undefined) return { error: 'NO_PARTITION_IN_RESPONSE' };
    return {
      error: err(p.errorCode as number),
      baseOffset: p.baseOffset as number,
      logStartOffset: (p.logStartOffset as number | undefined) ?? null,
      logAppendTime: logAppendTimeJson(this, (p.logAppendTimeMs as number | undefined) ?? -1),
      recordErrors: ((p.recordErrors as Array<Record<string, unknown>> | undefined) ?? []).map((e) => ({
        batchIndex: e.batchIndex as number,
        message: messageShape((e.batchIndexErrorMessage as string | null | undefined) ?? null),
      })),
      errorMessage: (p.errorMessage as string | null | undefined) ?? null,
    };
  }

  /**
   * One raw Fetch of one partition (maxWait 0 unless given) at the common version. Returns the
   * partition's error, high watermark, log start offset and the fetched batches and records.
   */
  async fetch(
    topic: string,
    partition: number,
    fetchOffset: number,
    opts: { partitionMaxBytes?: number; maxBytes?: number; maxWaitMs?: number } = {},
  ): Promise<FetchResult> {
    const version = this.v(ApiKey.Fetch);
    const topicId = version >= 13 ? await this.topicId(topic) : undefined;
    const body = await this.request(ApiKey.Fetch, {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1 },
      maxWaitMs: opts.maxWaitMs ?? 0,
      minBytes: 1,
      maxBytes: opts.maxBytes ?? 50 * 1024 * 1024,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic,
          ...(topicId !== undefined ? { topicId } : {}),
          partitions: [
            {
              partition,
              currentLeaderEpoch: -1,
              fetchOffset,
              lastFetchedEpoch: -1,
              logStartOffset: -1,
              partitionMaxBytes: opts.partitionMaxBytes ?? 1024 * 1024,
            },
          ],
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    });
    const topLevel = (body.errorCode as number | undefined) ?? 0;
    const p = (body.responses as Array<{ partitions: Array<Record<string, unknown>> }>)[0]?.partitions[0];
    if (topLevel !== 0 || p === undefined)
      return {
        error: err(topLevel !== 0 ? topLevel : ErrorCode.UNKNOWN_SERVER_ERROR),
        highWatermark: -1,
        logStartOffset: -1,
        batches: [],
        records: [],
      };
    const raw = (p.records as Buffer | null) ?? Buffer.alloc(0);
    const batches = decodeBatches(raw);
    return {
      error: err(p.errorCode as number),
      highWatermark: p.highWatermark as number,
      logStartOffset: (p.logStartOffset as number | undefined) ?? -1,
      batches: batches.map((b) => ({
        baseOffset: b.baseOffset,
        lastOffsetDelta: b.lastOffsetDelta,
        codec: b.attributes & L.COMPRESSION_CODEC_MASK,
        timestampType: (b.attributes & L.TIMESTAMP_TYPE_MASK) !== 0 ? 'LogAppendTime' : 'CreateTime',
        producerId: b.producerId,
        baseSequence: b.baseSequence,
        recordCount: b.records.length,
      })),
      records: batches.flatMap((b) =>
        b.records.map((r) => ({
          offset: b.baseOffset + r.offsetDelta,
          // CreateTime as an offset from baseTimestamp; LogAppendTime as whether it falls in this context's lifetime.
          ts:
            (b.attributes & L.TIMESTAMP_TYPE_MASK) !== 0
              ? { logAppendTimeDuringRun: this.duringRun(b.maxTimestamp) }
              : b.baseTimestamp + r.timestampDelta - this.baseTimestamp,
          key: bufJson(r.key),
          value: bufJson(r.value),
          headers: r.headers.map((h) => [h.key, bufJson(h.value)] as Json),
        })),
      ),
    };
  }

  /** Fetches from `offset` until the high watermark (bounded), concatenating records. */
  async readAll(topic: string, partition: number, offset = 0): Promise<FetchResult['records']> {
    const out: FetchResult['records'] = [];
    let position = offset;
    for (let i = 0; i < 1000; i++) {
      const f = await this.fetch(topic, partition, position);
      if (f.error !== 'NONE')
        throw new Error(`${this.target.name}: fetch ${topic}/${partition}@${position}: ${f.error}`);
      const fresh = f.records.filter((r) => r.offset >= position);
      out.push(...fresh);
      if (fresh.length > 0) position = fresh[fresh.length - 1]!.offset + 1;
      if (position >= f.highWatermark) return out;
      if (f.records.length === 0) await sleep(50);
    }
    throw new Error(`${this.target.name}: readAll ${topic}/${partition} did not reach the high watermark`);
  }

  /** ListOffsets of one partition at `timestamp` (raw, common version): error, offset, timestamp (relative when >= 0). */
  async listOffset(topic: string, partition: number, timestamp: number): Promise<Json> {
    const body = await this.request(ApiKey.ListOffsets, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: topic,
          partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 }],
        },
      ],
      timeoutMs: 30_000,
    });
    const p = (body.topics as Array<{ partitions: Array<Record<string, unknown>> }>)[0]?.partitions[0];
    if (p === undefined) return { error: 'NO_PARTITION_IN_RESPONSE' };
    const ts = p.timestamp as number;
    return {
      error: err(p.errorCode as number),
      offset: p.offset as number,
      ts: ts >= 0 ? ts - this.baseTimestamp : ts,
      leaderEpoch: (p.leaderEpoch as number | undefined) ?? null,
    };
  }

  /**
   * InitProducerId for an idempotent producer (no transactional id), retrying (bounded) while the
   * broker answers that its producer-id machinery is still loading, as real clients do.
   */
  async initProducerId(): Promise<Record<string, unknown>> {
    const deadline = Date.now() + MAX_WAIT_TOPIC_MS;
    for (;;) {
      const body = await this.request(ApiKey.InitProducerId, {
        transactionalId: null,
        transactionTimeoutMs: 60_000,
        producerId: -1,
        producerEpoch: -1,
      });
      const code = body.errorCode as number;
      const retriable =
        code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ||
        code === ErrorCode.COORDINATOR_NOT_AVAILABLE ||
        code === ErrorCode.NOT_COORDINATOR ||
        code === ErrorCode.CONCURRENT_TRANSACTIONS;
      if (!retriable || Date.now() > deadline) return body;
      await sleep(100);
    }
  }

  /** DescribeConfigs of one topic: every entry as {value, source, readOnly, sensitive}, keyed by name. */
  async describeTopicConfigs(
    topic: string,
    keys: string[] | null = null,
  ): Promise<{
    error: string;
    configs: Record<string, { value: string | null; source: number; readOnly: boolean; sensitive: boolean }>;
  }> {
    const body = await this.request(ApiKey.DescribeConfigs, {
      resources: [{ resourceType: 2, resourceName: topic, configurationKeys: keys }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    const r = (body.results as Array<Record<string, unknown>>)[0]!;
    const configs: Record<string, { value: string | null; source: number; readOnly: boolean; sensitive: boolean }> = {};
    for (const c of r.configs as Array<Record<string, unknown>>) {
      configs[c.name as string] = {
        value: c.value as string | null,
        source: c.configSource as number,
        readOnly: c.readOnly as boolean,
        sensitive: c.isSensitive as boolean,
      };
    }
    return { error: err(r.errorCode as number), configs };
  }
}

/**
 * A Produce answer's logAppendTimeMs as JSON: null for -1 (CreateTime), 'during run' for a broker
 * time (LogAppendTime topics), else ms after ctx.baseTimestamp (a duplicate idempotent batch is
 * answered with the original batch's max timestamp).
 */
function logAppendTimeJson(ctx: ScenarioContext, ms: number): Json {
  if (ms === -1) return null;
  return ctx.duringRun(ms) ? 'during run' : ms - ctx.baseTimestamp;
}

/** A message with every number replaced by N (record-error messages carry broker times), null kept. */
function messageShape(message: string | null): string | null {
  return message === null ? null : message.replace(/-?\d+/g, 'N');
}

/**
 * One group member's connection: raw group requests at the common versions (OffsetCommit and
 * OffsetFetch capped at v9, which name topics; v10 names them by topic id), bodies returned as
 * decoded. The caller interprets errors.
 */
export class GroupMemberConnection {
  constructor(
    readonly client: KafkaClient,
    private readonly ctx: ScenarioContext,
    readonly clientId: string,
  ) {}

  request(apiKey: ApiKey, body: object, version?: number): Promise<Record<string, unknown>> {
    return this.client.request(apiKey, version ?? this.ctx.v(apiKey), body);
  }

  /** JoinGroup (protocol type `consumer`) with one protocol per [name, metadata]. */
  join(
    groupId: string,
    memberId: string,
    protocols: Array<[string, Buffer]>,
    opts: { sessionTimeoutMs?: number; rebalanceTimeoutMs?: number; groupInstanceId?: string | null } = {},
  ): Promise<Record<string, unknown>> {
    return this.request(ApiKey.JoinGroup, {
      groupId,
      sessionTimeoutMs: opts.sessionTimeoutMs ?? 10_000,
      rebalanceTimeoutMs: opts.rebalanceTimeoutMs ?? 10_000,
      memberId,
      groupInstanceId: opts.groupInstanceId ?? null,
      protocolType: 'consumer',
      protocols: protocols.map(([name, metadata]) => ({ name, metadata })),
      reason: null,
    });
  }

  sync(
    groupId: string,
    generationId: number,
    memberId: string,
    protocolName: string,
    assignments: Array<[string, Buffer]>,
  ): Promise<Record<string, unknown>> {
    return this.request(ApiKey.SyncGroup, {
      groupId,
      generationId,
      memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName,
      assignments: assignments.map(([id, assignment]) => ({ memberId: id, assignment })),
    });
  }

  heartbeat(groupId: string, generationId: number, memberId: string): Promise<Record<string, unknown>> {
    return this.request(ApiKey.Heartbeat, { groupId, generationId, memberId, groupInstanceId: null });
  }

  leave(groupId: string, memberIds: string[]): Promise<Record<string, unknown>> {
    const v = this.ctx.v(ApiKey.LeaveGroup);
    return this.request(
      ApiKey.LeaveGroup,
      v >= 3
        ? { groupId, members: memberIds.map((memberId) => ({ memberId, groupInstanceId: null, reason: null })) }
        : { groupId, memberId: memberIds[0] },
    );
  }

  /**
   * OffsetCommit (the common version capped at v9, or `version`): per partition [topic, partition,
   * offset, metadata]. Returns {topic: {partition: error}}.
   */
  async commit(
    groupId: string,
    generationId: number,
    memberId: string,
    offsets: Array<[string, number, number, string | null]>,
    version?: number,
  ): Promise<Json> {
    const byTopic = new Map<string, Array<[number, number, string | null]>>();
    for (const [t, p, o, m] of offsets) byTopic.set(t, [...(byTopic.get(t) ?? []), [p, o, m]]);
    const body = await this.request(
      ApiKey.OffsetCommit,
      {
        groupId,
        generationIdOrMemberEpoch: generationId,
        memberId,
        groupInstanceId: null,
        retentionTimeMs: -1,
        topics: [...byTopic].map(([name, ps]) => ({
          name,
          partitions: ps.map(([partitionIndex, committedOffset, committedMetadata]) => ({
            partitionIndex,
            committedOffset,
            committedLeaderEpoch: -1,
            commitTimestamp: -1,
            committedMetadata,
          })),
        })),
      },
      version ?? Math.min(this.ctx.v(ApiKey.OffsetCommit), 9),
    );
    const out: Record<string, Json> = {};
    for (const t of body.topics as Array<{
      name: string;
      partitions: Array<{ partitionIndex: number; errorCode: number }>;
    }>) {
      out[t.name] = Object.fromEntries(t.partitions.map((p) => [String(p.partitionIndex), err(p.errorCode)]));
    }
    return out;
  }

  /** OffsetFetch (v <= 9) of `topics` (null: all): {error, topics: {topic: {partition: {offset, metadata, error}}}}, sorted. */
  async fetchOffsets(groupId: string, topics: Array<[string, number[]]> | null): Promise<Json> {
    const v = Math.min(this.ctx.v(ApiKey.OffsetFetch), 9);
    const requestTopics =
      topics === null ? null : topics.map(([name, partitionIndexes]) => ({ name, partitionIndexes }));
    const body = await this.request(
      ApiKey.OffsetFetch,
      v >= 8
        ? { groups: [{ groupId, memberId: null, memberEpoch: -1, topics: requestTopics }], requireStable: false }
        : { groupId, topics: requestTopics, requireStable: false },
      v,
    );
    const group = v >= 8 ? (body.groups as Array<Record<string, unknown>>)[0]! : body;
    const out: Record<string, Json> = {};
    for (const t of [...(group.topics as Array<{ name: string; partitions: Array<Record<string, unknown>> }>)].sort(
      (a, b) => a.name.localeCompare(b.name),
    )) {
      out[t.name] = Object.fromEntries(
        [...t.partitions]
          .sort((a, b) => (a.partitionIndex as number) - (b.partitionIndex as number))
          .map((p) => [
            String(p.partitionIndex),
            {
              offset: p.committedOffset as number,
              metadata: (p.metadata as string | null) ?? null,
              error: err(p.errorCode as number),
            },
          ]),
      );
    }
    return { error: err((group.errorCode as number | undefined) ?? 0), topics: out };
  }
}

/** One raw Fetch, as JSON. */
export interface FetchResult {
  error: string;
  highWatermark: number;
  logStartOffset: number;
  batches: Array<{
    baseOffset: number;
    lastOffsetDelta: number;
    codec: number;
    timestampType: string;
    producerId: number;
    baseSequence: number;
    recordCount: number;
  }>;
  records: Array<{ offset: number; ts: Json; key: Json; value: Json; headers: Json[] }>;
}

/** Kafka's name of an error code (`NONE` for 0). */
export function err(code: number): string {
  return errorName(code);
}

/** A Buffer as JSON: printable UTF-8 as `{utf8}`, anything else as `{hex}`; null stays null. */
export function bufJson(b: Buffer | null): Json {
  if (b === null) return null;
  const s = b.toString('utf8');
  // eslint-disable-next-line no-control-regex
  if (Buffer.from(s, 'utf8').equals(b) && !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(s)) return { utf8: s };
  return { hex: b.toString('hex') };
}

export function toBuf(v: Buffer | string | null): Buffer | null {
  return v === null ? null : typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Version ranges a connected client's bootstrap broker advertises. */
export function advertised(client: KafkaClient): VersionRanges {
  return new Map([...client.bootstrapConnection.apiVersions].map(([k, r]) => [k, { ...r }]));
}

/**
 * The ranges both brokers advertise and our schema tables can encode: per API, the intersection
 * (APIs missing on either side, or with an empty intersection, are left out).
 */
export function commonVersions(a: VersionRanges, b: VersionRanges): VersionRanges {
  const out: VersionRanges = new Map();
  for (const [key, ra] of a) {
    const rb = b.get(key);
    const table = apiSchemas.get(key);
    if (rb === undefined || table === undefined) continue;
    const minVersion = Math.max(ra.minVersion, rb.minVersion, table.minVersion);
    const maxVersion = Math.min(ra.maxVersion, rb.maxVersion, table.maxVersion);
    if (minVersion <= maxVersion) out.set(key, { minVersion, maxVersion });
  }
  return out;
}

/**
 * Narrows the client's negotiated ranges (its bootstrap connection's view of the broker) to
 * `common`, so the client's own request paths (Metadata, ...) pick the same version on both
 * brokers. A single-broker cluster reuses the bootstrap connection for its only node.
 */
function clampVersions(client: KafkaClient, common: VersionRanges): void {
  const map = client.bootstrapConnection.apiVersions;
  for (const key of [...map.keys()]) {
    const c = common.get(key);
    if (c === undefined) map.delete(key);
    else map.set(key, { ...c });
  }
}
