/**
 * A small Kafka client on Skiff's protocol codec: enough for the `skiff` CLI tools and tests, not
 * a general-purpose client (one classic group member, group-member.ts; no transactions, SASL or TLS).
 *
 * It bootstraps from one `host:port`, learns the brokers from Metadata and keeps one
 * {@link BrokerConnection} per broker (node id), opened on first use. Each request uses the highest
 * version both this build's schema table and that broker support. Metadata never auto-creates
 * topics unless asked.
 */
import { ApiKey } from '../protocol/api-keys';
import { ErrorCode } from '../protocol/error-codes';
import { CONSUMER_REPLICA_ID, NO_PARTITION_LEADER_EPOCH } from '../protocol/sentinels';
import { BrokerConnection, type ConnectionOptions } from './connection';
import { ConnectionError, KafkaError, throwIfError } from './errors';
import { Backoff, isRetriable, sleep } from './retry';

/** default.api.timeout.ms: how long a lookup (ListOffsets) retries retriable errors (Kafka's default). */
export const DEFAULT_API_TIMEOUT_MS = 60_000;

/** Options of {@link KafkaClient.connect}. */
export interface ClientOptions extends ConnectionOptions {
  /** Bootstrap broker(s) as `host:port`, comma-separated or a list. */
  brokers: string | readonly string[];
}

/** A broker from Metadata. */
export interface BrokerMetadata {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

/** One partition from Metadata. */
export interface PartitionMetadata {
  errorCode: number;
  partition: number;
  /** Leader's node id, -1 when there is none. */
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
}

/** One topic from Metadata; partitions sorted by index. */
export interface TopicMetadata {
  errorCode: number;
  name: string;
  topicId: string;
  isInternal: boolean;
  partitions: PartitionMetadata[];
}

/** A Metadata response, reshaped. */
export interface ClusterMetadata {
  clusterId: string | null;
  controllerId: number;
  brokers: Map<number, BrokerMetadata>;
  topics: TopicMetadata[];
}

/** A topic to create. -1 partitions / replication factor: the broker's defaults. */
export interface NewTopic {
  name: string;
  numPartitions?: number;
  replicationFactor?: number;
  /** Topic configs (`cleanup.policy`, `retention.ms`, ...). */
  configs?: Record<string, string>;
}

/** Per-topic outcome of CreateTopics / DeleteTopics: errorCode 0 on success. */
export interface TopicResult {
  name: string;
  errorCode: number;
  errorMessage: string | null;
}

/** Special ListOffsets timestamps (protocol/sentinels.ts), re-exported for the client's users. */
export { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../protocol/sentinels';

/**
 * ListOffsetsRequest.DEBUGGING_REPLICA_ID: a replica id for tools; Kafka answers it without an
 * isolation level (latest = the log-end offset) and from a follower too.
 */
export const DEBUGGING_REPLICA_ID = -2;

/** One partition's ListOffsets answer: offset -1 when no record has a timestamp >= the one asked. */
export interface OffsetAndTimestamp {
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

/** Parses `host:port` (IPv6 as `[::1]:9092`); throws RangeError on a malformed address. */
export function parseBrokerAddress(address: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address.trim()) ?? /^([^:]+):(\d+)$/.exec(address.trim());
  const port = m ? Number(m[2]) : NaN;
  if (m === null || !(port > 0 && port <= 65535))
    throw new RangeError(`bad broker address ${JSON.stringify(address)} (expected host:port)`);
  return { host: m[1]!, port };
}

/** A client connected to a cluster (for Skiff: one broker). Close it when done. */
export class KafkaClient {
  private readonly connections = new Map<number, Promise<BrokerConnection>>();
  private brokers = new Map<number, BrokerMetadata>();
  private controllerId = -1;

  private constructor(
    private bootstrap: BrokerConnection,
    private readonly options: ClientOptions,
  ) {}

  /**
   * Connects to the first reachable bootstrap broker, negotiates API versions and loads the broker
   * list. Rejects with ConnectionError when no bootstrap broker answers.
   */
  static async connect(options: ClientOptions): Promise<KafkaClient> {
    const list = typeof options.brokers === 'string' ? options.brokers.split(',') : [...options.brokers];
    let lastError: unknown = new RangeError('no bootstrap broker given');
    for (const address of list.filter((a) => a.trim() !== '')) {
      const { host, port } = parseBrokerAddress(address);
      try {
        const connection = await BrokerConnection.connect(host, port, options);
        const client = new KafkaClient(connection, options);
        await client.metadata([]);
        return client;
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  }

  /** Brokers from the last Metadata. */
  get knownBrokers(): ReadonlyMap<number, BrokerMetadata> {
    return this.brokers;
  }

  /** The bootstrap connection (its ApiVersions say what the cluster supports). */
  get bootstrapConnection(): BrokerConnection {
    return this.bootstrap;
  }

  /** Whether the bootstrap broker advertises `apiKey` and this build has its schema table. */
  supports(apiKey: number): boolean {
    return this.bootstrap.supports(apiKey);
  }

  /**
   * The connection to broker `nodeId` (opened and negotiated on first use). Node ids come from
   * Metadata; an unknown one rejects with KafkaError(BROKER_NOT_AVAILABLE).
   */
  connection(nodeId: number): Promise<BrokerConnection> {
    const existing = this.connections.get(nodeId);
    if (existing !== undefined) {
      return existing.then((c) => (c.closed ? this.reconnect(nodeId) : c));
    }
    return this.reconnect(nodeId);
  }

  private reconnect(nodeId: number): Promise<BrokerConnection> {
    if (nodeId < 0)
      return Promise.reject(new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, 'the partition has no leader (-1)'));
    const broker = this.brokers.get(nodeId);
    if (broker === undefined)
      return Promise.reject(new KafkaError(ErrorCode.BROKER_NOT_AVAILABLE, `broker ${nodeId} is not in the metadata`));
    const promise = BrokerConnection.connect(broker.host, broker.port, this.options);
    this.connections.set(nodeId, promise);
    promise.catch(() => this.connections.delete(nodeId));
    return promise;
  }

  /**
   * The bootstrap connection while it is open, else the first known broker that accepts a
   * connection, trying each in turn (a crashed broker of a cluster must not stall metadata
   * requests). Rejects with the last broker's connection error when none answers.
   */
  private async anyConnection(): Promise<BrokerConnection> {
    if (!this.bootstrap.closed) return this.bootstrap;
    const known = [...this.brokers.keys()];
    if (known.length === 0) return this.bootstrap; // fails with its close reason
    let lastError: unknown;
    for (const nodeId of known) {
      try {
        return await this.connection(nodeId);
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }

  /** The controller's connection (admin requests), or any broker's when it is unknown. */
  private async controllerConnection(): Promise<BrokerConnection> {
    if (this.controllerId >= 0 && this.brokers.has(this.controllerId)) {
      try {
        return await this.connection(this.controllerId);
      } catch (error) {
        // Its broker crashed: any broker forwards admin requests (and the next Metadata names the new one).
        if (!(error instanceof ConnectionError)) throw error;
      }
    }
    return this.anyConnection();
  }

  /**
   * Sends a request for any API with a schema table (e.g. DescribeConfigs, IncrementalAlterConfigs)
   * and resolves with the decoded response body. `version` null picks min(ours, the broker's)
   * highest version; `nodeId` picks the broker (default: the controller, else any). Kafka errors
   * inside the body are left to the caller. Rejects with UnsupportedApiError when the API has no
   * table here or the broker does not advertise it.
   */
  async request(
    apiKey: number,
    version: number | null,
    body: object,
    nodeId?: number,
  ): Promise<Record<string, unknown>> {
    const connection = nodeId === undefined ? await this.controllerConnection() : await this.connection(nodeId);
    const v = version ?? connection.versionFor(apiKey);
    return (await connection.send(apiKey, v, body))!;
  }

  /**
   * Metadata for `topics` (null: all topics; []: none, brokers only). Updates the broker list.
   * Topic-level errors are kept in each topic's errorCode (UNKNOWN_TOPIC_OR_PARTITION for a topic
   * that does not exist, unless `allowAutoTopicCreation` makes the broker create it).
   */
  async metadata(
    topics: readonly string[] | null,
    options: { allowAutoTopicCreation?: boolean } = {},
  ): Promise<ClusterMetadata> {
    let body: Record<string, unknown> | undefined;
    // A broker that crashes while it answers: ask the next one (each known broker at most once more).
    for (let tries = 0; body === undefined; tries++) {
      const connection = await this.anyConnection();
      const version = connection.versionFor(ApiKey.Metadata);
      if (topics === null && version === 0) throw new RangeError('Metadata v0 cannot ask for all topics');
      try {
        body = (await connection.send(ApiKey.Metadata, version, {
          topics: topics === null ? null : topics.map((name) => ({ name })),
          allowAutoTopicCreation: options.allowAutoTopicCreation ?? false,
        }))!;
      } catch (error) {
        if (!(error instanceof ConnectionError) || tries >= this.brokers.size) throw error;
      }
    }
    const brokers = new Map<number, BrokerMetadata>();
    for (const b of body.brokers as Array<{ nodeId: number; host: string; port: number; rack: string | null }>) {
      brokers.set(b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack });
    }
    this.brokers = brokers;
    for (const b of brokers.values()) {
      // Reuse the bootstrap connection for the broker it reached.
      if (`${b.host}:${b.port}` === this.bootstrap.address && !this.connections.has(b.nodeId))
        this.connections.set(b.nodeId, Promise.resolve(this.bootstrap));
    }
    this.controllerId = body.controllerId as number;
    const resultTopics = (body.topics as Array<Record<string, unknown>>).map((t): TopicMetadata => ({
      errorCode: t.errorCode as number,
      name: t.name as string,
      topicId: t.topicId as string,
      isInternal: t.isInternal as boolean,
      partitions: (t.partitions as Array<Record<string, unknown>>)
        .map((p) => ({
          errorCode: p.errorCode as number,
          partition: p.partitionIndex as number,
          leader: p.leaderId as number,
          leaderEpoch: p.leaderEpoch as number,
          replicas: p.replicaNodes as number[],
          isr: p.isrNodes as number[],
          offlineReplicas: p.offlineReplicas as number[],
        }))
        .sort((a, b) => a.partition - b.partition),
    }));
    return {
      clusterId: body.clusterId as string | null,
      controllerId: this.controllerId,
      brokers,
      topics: resultTopics,
    };
  }

  /**
   * Metadata of one existing topic; rejects with KafkaError (e.g. UNKNOWN_TOPIC_OR_PARTITION) when
   * the broker reports an error for it.
   */
  async topicMetadata(topic: string): Promise<TopicMetadata> {
    const md = await this.metadata([topic]);
    const t = md.topics.find((x) => x.name === topic);
    if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${topic}`);
    throwIfError(t.errorCode, `topic ${topic}`);
    return t;
  }

  /**
   * Creates topics (CreateTopics on the controller) and resolves with each topic's outcome; it does
   * not throw for per-topic errors such as TOPIC_ALREADY_EXISTS.
   */
  async createTopics(
    topics: readonly NewTopic[],
    options: { timeoutMs?: number; validateOnly?: boolean } = {},
  ): Promise<TopicResult[]> {
    const connection = await this.controllerConnection();
    const version = connection.versionFor(ApiKey.CreateTopics);
    const body = (await connection.send(ApiKey.CreateTopics, version, {
      topics: topics.map((t) => ({
        name: t.name,
        numPartitions: t.numPartitions ?? -1,
        replicationFactor: t.replicationFactor ?? -1,
        assignments: [],
        configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
      })),
      timeoutMs: options.timeoutMs ?? 30_000,
      validateOnly: options.validateOnly ?? false,
    }))!;
    return (body.topics as Array<Record<string, unknown>>).map((t) => ({
      name: t.name as string,
      errorCode: t.errorCode as number,
      errorMessage: (t.errorMessage as string | null) ?? null,
    }));
  }

  /** Deletes topics by name and resolves with each topic's outcome (no throw for per-topic errors). */
  async deleteTopics(names: readonly string[], options: { timeoutMs?: number } = {}): Promise<TopicResult[]> {
    const connection = await this.controllerConnection();
    const version = connection.versionFor(ApiKey.DeleteTopics);
    const body = (await connection.send(ApiKey.DeleteTopics, version, {
      ...(version >= 6 ? { topics: names.map((name) => ({ name })) } : { topicNames: [...names] }),
      timeoutMs: options.timeoutMs ?? 30_000,
    }))!;
    return (body.responses as Array<Record<string, unknown>>).map((t) => ({
      name: t.name as string,
      errorCode: t.errorCode as number,
      errorMessage: (t.errorMessage as string | null) ?? null,
    }));
  }

  /**
   * ListOffsets for partitions of `topic`, each with a timestamp ({@link EARLIEST_TIMESTAMP},
   * {@link LATEST_TIMESTAMP} or ms since the epoch: the first offset whose timestamp is at least
   * it). Requests go to each partition's leader. Rejects with KafkaError on a partition error.
   * `replicaId` other than CONSUMER_REPLICA_ID (e.g. {@link DEBUGGING_REPLICA_ID}) asks without an
   * isolation level: latest is then the log-end offset, not the high watermark (Kafka's
   * Partition.fetchOffsetForTimestamp). Retriable errors (a crashed or moved leader, a lost
   * connection) are retried after a metadata refresh and a backoff for up to `timeoutMs`.
   */
  async listOffsets(
    topic: string,
    partitions: ReadonlyArray<{ partition: number; timestamp: number }>,
    metadata?: TopicMetadata,
    replicaId: number = CONSUMER_REPLICA_ID,
    timeoutMs: number = DEFAULT_API_TIMEOUT_MS,
  ): Promise<Map<number, OffsetAndTimestamp>> {
    const deadlineMs = Date.now() + timeoutMs;
    const backoff = new Backoff();
    let md = metadata;
    for (;;) {
      try {
        md ??= await this.topicMetadata(topic);
        return await this.listOffsetsOnce(topic, partitions, md, replicaId);
      } catch (error) {
        // A leader that crashed or moved: find the new one, as Kafka's ListOffsets handler retries.
        const waitMs = backoff.next();
        if (!isRetriable(error) || Date.now() + waitMs > deadlineMs) throw error;
        await sleep(waitMs);
        md = undefined;
      }
    }
  }

  private async listOffsetsOnce(
    topic: string,
    partitions: ReadonlyArray<{ partition: number; timestamp: number }>,
    md: TopicMetadata,
    replicaId: number,
  ): Promise<Map<number, OffsetAndTimestamp>> {
    const byLeader = new Map<number, Array<{ partition: number; timestamp: number; leaderEpoch: number }>>();
    for (const p of partitions) {
      const pm = md.partitions.find((x) => x.partition === p.partition);
      if (pm === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${topic}/${p.partition}`);
      if (pm.leader < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `${topic}/${p.partition}`);
      const list = byLeader.get(pm.leader) ?? [];
      list.push({ ...p, leaderEpoch: pm.leaderEpoch });
      byLeader.set(pm.leader, list);
    }
    const out = new Map<number, OffsetAndTimestamp>();
    await Promise.all(
      [...byLeader].map(async ([leader, list]) => {
        const connection = await this.connection(leader);
        const version = connection.versionFor(ApiKey.ListOffsets, 1);
        const body = (await connection.send(ApiKey.ListOffsets, version, {
          replicaId,
          isolationLevel: 0,
          topics: [
            {
              name: topic,
              partitions: list.map((p) => ({
                partitionIndex: p.partition,
                currentLeaderEpoch: NO_PARTITION_LEADER_EPOCH,
                timestamp: p.timestamp,
              })),
            },
          ],
        }))!;
        for (const t of body.topics as Array<{ partitions: Array<Record<string, number>> }>) {
          for (const p of t.partitions) {
            throwIfError(p.errorCode!, `ListOffsets ${topic}/${p.partitionIndex}`);
            out.set(p.partitionIndex!, { offset: p.offset!, timestamp: p.timestamp!, leaderEpoch: p.leaderEpoch! });
          }
        }
      }),
    );
    return out;
  }

  /** Closes every connection; in-flight requests fail with ConnectionError. */
  close(): void {
    this.bootstrap.close();
    for (const promise of this.connections.values())
      promise.then(
        (c) => c.close(),
        () => undefined,
      );
    this.connections.clear();
  }
}
