/**
 * What a three-node differential scenario (cluster-scenarios.ts) runs with: one of the two clusters
 * (a three-node KRaft Kafka, test/helpers/kafka-cluster.ts, or `skiff start --nodes 3`,
 * test/helpers/cluster-process.ts) behind the same interface, and a Skiff `src/client`
 * connection bootstrapped from broker 0, which scenarios never stop (on Kafka it holds the
 * controller quorum). Requests go to the broker a scenario names (usually the partition's leader)
 * at fixed versions both brokers speak, so the same bytes reach each cluster.
 */
import { KafkaClient, type PartitionMetadata } from '../../src/client';
import { buildBatch, decodeBatches } from '../../src/client/batch';
import { ApiKey } from '../../src/protocol/api-keys';
import { err, sleep, type Json } from './context';
import { fetchRequestBody } from '../helpers/fetch-request';

/**
 * One cluster under test. `shutDown` is a clean shutdown of one broker: Kafka's SIGTERM, Skiff's POST
 * /v1/brokers/{id}/stop, each a controlled shutdown (leaderships move to other ISR members, then the
 * broker is fenced and its listener closes), so both end with the broker out of every ISR and its
 * partitions led elsewhere.
 */
export interface ClusterTarget {
  name: 'kafka' | 'skiff';
  /** `127.0.0.1:<port>` of broker `nodeId`. */
  address(nodeId: number): string;
  shutDown(nodeId: number): Promise<void>;
  /** Starts a stopped broker again on its data; resolves once it serves. */
  start(nodeId: number): Promise<void>;
}

/** Fixed request versions, within what Kafka 4.4, Skiff and this build's tables all speak (names topics, not ids). */
const PRODUCE_VERSION = 9;
const FETCH_VERSION = 12;
const CREATE_TOPICS_VERSION = 7;
/** How long a scenario waits for the cluster to show a state (ms). */
export const CLUSTER_WAIT_MS = 45_000;

/** A topic to create: a partition count and RF, or explicit assignments (partition i gets assignments[i]). */
export interface NewClusterTopic {
  name: string;
  partitions?: number;
  replicationFactor?: number;
  assignments?: number[][];
  configs?: Record<string, string>;
}

/** Per-scenario handle on one cluster. */
export class ClusterContext {
  private constructor(
    readonly target: ClusterTarget,
    readonly client: KafkaClient,
    /** A fixed timestamp for produced records (the same on both clusters). */
    readonly baseTimestamp: number,
  ) {}

  static async open(target: ClusterTarget, baseTimestamp: number): Promise<ClusterContext> {
    const client = await KafkaClient.connect({
      brokers: target.address(0),
      clientId: 'skiff-oracle-cluster',
      requestTimeoutMs: 30_000,
    });
    return new ClusterContext(target, client, baseTimestamp);
  }

  close(): void {
    this.client.close();
  }

  /** CreateTopics (v7, sent to broker 0): each topic's error by name, in request order. */
  async createTopics(topics: readonly NewClusterTopic[]): Promise<Array<{ name: string; error: string }>> {
    const body = await this.client.request(
      ApiKey.CreateTopics,
      CREATE_TOPICS_VERSION,
      {
        topics: topics.map((t) => ({
          name: t.name,
          numPartitions: t.assignments !== undefined ? -1 : (t.partitions ?? 1),
          replicationFactor: t.assignments !== undefined ? -1 : (t.replicationFactor ?? 3),
          assignments: (t.assignments ?? []).map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })),
          configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
        })),
        timeoutMs: 30_000,
        validateOnly: false,
      },
      0,
    );
    return (body.topics as Array<Record<string, unknown>>).map((t) => ({
      name: t.name as string,
      error: err(t.errorCode as number),
    }));
  }

  /** Creates topics and throws unless every one succeeded. */
  async createTopicsOrThrow(topics: readonly NewClusterTopic[]): Promise<void> {
    const results = await this.createTopics(topics);
    const failed = results.filter((r) => r.error !== 'NONE');
    if (failed.length > 0) throw new Error(`${this.target.name}: creating topics failed: ${JSON.stringify(failed)}`);
  }

  /** The partitions of `topic` from broker 0's Metadata (empty when the topic is unknown). */
  async partitions(topic: string): Promise<PartitionMetadata[]> {
    const md = await this.client.metadata([topic]);
    const t = md.topics.find((x) => x.name === topic);
    return t === undefined || t.errorCode !== 0 ? [] : t.partitions;
  }

  /** The live broker ids broker 0's Metadata lists, ascending. */
  async brokerIds(): Promise<number[]> {
    const md = await this.client.metadata([]);
    return [...md.brokers.keys()].sort((a, b) => a - b);
  }

  /**
   * Polls Metadata (every 100 ms, at most {@link CLUSTER_WAIT_MS}) until `ready` holds for the
   * topic's partitions; throws with the last partitions seen when it never does.
   */
  async waitFor(
    topic: string,
    what: string,
    ready: (partitions: PartitionMetadata[]) => boolean,
  ): Promise<PartitionMetadata[]> {
    const deadline = Date.now() + CLUSTER_WAIT_MS;
    let last: PartitionMetadata[];
    for (;;) {
      last = await this.partitions(topic);
      if (last.length > 0 && ready(last)) return last;
      if (Date.now() > deadline)
        throw new Error(
          `${this.target.name}: ${topic}: ${what} not seen within ${CLUSTER_WAIT_MS} ms: ${JSON.stringify(last)}`,
        );
      await sleep(100);
    }
  }

  /** Waits until every partition of `topic` has a leader and its ISR holds all its replicas. */
  waitFullyReplicated(topic: string): Promise<PartitionMetadata[]> {
    return this.waitFor(topic, 'every partition led and fully in sync', (ps) =>
      ps.every((p) => p.leader >= 0 && p.errorCode === 0 && p.isr.length === p.replicas.length),
    );
  }

  /**
   * Produces `values` as one batch to `topic`/`partition` on broker `nodeId` (default: the leader
   * Metadata names now) with `acks`; returns the partition's error and base offset.
   */
  async produce(
    topic: string,
    partition: number,
    values: readonly string[],
    acks: -1 | 1,
    nodeId?: number,
  ): Promise<{ error: string; baseOffset: number }> {
    const broker = nodeId ?? (await this.leaderOf(topic, partition));
    const batch = buildBatch(
      values.map((v) => ({ key: null, value: Buffer.from(v), headers: [], timestamp: this.baseTimestamp })),
      { baseTimestamp: this.baseTimestamp, compression: 0, producerId: -1, producerEpoch: -1, baseSequence: -1 },
    );
    const body = await this.client.request(
      ApiKey.Produce,
      PRODUCE_VERSION,
      {
        transactionalId: null,
        acks,
        timeoutMs: 10_000,
        topicData: [{ name: topic, partitionData: [{ index: partition, records: batch }] }],
      },
      broker,
    );
    const p = (body.responses as Array<{ partitionResponses: Array<Record<string, unknown>> }>)[0]
      ?.partitionResponses[0];
    if (p === undefined) return { error: 'NO_PARTITION_IN_RESPONSE', baseOffset: -1 };
    return { error: err(p.errorCode as number), baseOffset: p.baseOffset as number };
  }

  /**
   * Reads `topic`/`partition` from offset 0 up to the high watermark on broker `nodeId` (default:
   * the leader), at most 20 fetches; returns the error of the last one, the HW and every record's
   * offset and value.
   */
  async readAll(
    topic: string,
    partition: number,
    nodeId?: number,
  ): Promise<{ error: string; highWatermark: number; records: Array<[number, string]> }> {
    const broker = nodeId ?? (await this.leaderOf(topic, partition));
    const records: Array<[number, string]> = [];
    let position = 0;
    for (let i = 0; i < 20; i++) {
      const body = await this.client.request(
        ApiKey.Fetch,
        FETCH_VERSION,
        {
          clusterId: null,
          replicaState: { replicaId: -1, replicaEpoch: -1 },
          ...fetchRequestBody({ topic, partition, fetchOffset: position, lastFetchedEpoch: -1 }),
        },
        broker,
      );
      const p = (body.responses as Array<{ partitions: Array<Record<string, unknown>> }>)[0]?.partitions[0];
      if (p === undefined) return { error: 'NO_PARTITION_IN_RESPONSE', highWatermark: -1, records };
      const error = err(p.errorCode as number);
      const highWatermark = p.highWatermark as number;
      if (error !== 'NONE') return { error, highWatermark, records };
      for (const b of decodeBatches((p.records as Buffer | null) ?? Buffer.alloc(0)))
        for (const r of b.records) {
          const offset = b.baseOffset + r.offsetDelta;
          if (offset >= position && offset < highWatermark) records.push([offset, r.value?.toString('utf8') ?? '']);
        }
      const next = records.length > 0 ? records[records.length - 1]![0] + 1 : position;
      if (next >= highWatermark) return { error, highWatermark, records };
      position = next;
    }
    return { error: 'HIGH_WATERMARK_NOT_REACHED', highWatermark: -1, records };
  }

  private async leaderOf(topic: string, partition: number): Promise<number> {
    const p = (await this.partitions(topic)).find((x) => x.partition === partition);
    if (p === undefined || p.leader < 0) throw new Error(`${this.target.name}: ${topic}/${partition} has no leader`);
    return p.leader;
  }
}

/**
 * One partition's Metadata as JSON: leader, leader epoch, replicas in assignment order, the ISR and
 * offline replicas sorted (Kafka keeps the ISR in the order its partition records wrote it, Skiff
 * in assignment order: the set is the semantics), error by name.
 */
export function partitionJson(p: PartitionMetadata): Json {
  return {
    partition: p.partition,
    error: err(p.errorCode),
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    replicas: p.replicas,
    isr: [...p.isr].sort((a, b) => a - b),
    offlineReplicas: [...p.offlineReplicas].sort((a, b) => a - b),
  };
}
