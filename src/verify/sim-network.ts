/**
 * A Kafka client's view of the simulated cluster: each request goes through the real API handler of
 * one broker's `BrokerNode` (its metadata cache fed by the controller's pushes, as in production), so
 * the campaign exercises the network layer's routing, error mapping and leader-epoch checks, not only
 * the actors behind it. No sockets and no frame codec: the handler gets the decoded body a client's
 * request would decode to, and its response object comes back as is.
 *
 * Every call drives the simulation (virtual time included) until the handler answers, bounded by the
 * simulation's step limit; a handler that throws (an actor unavailable, a timeout) rejects the call.
 */
import type { AnyApiHandler } from '../network/api-handler';
import { fetchHandler } from '../network/handlers/fetch';
import { produceHandler } from '../network/handlers/produce';
import { initProducerIdHandler } from '../network/handlers/init-producer-id';
import { offsetCommitHandler } from '../network/handlers/offset-commit';
import { offsetFetchHandler } from '../network/handlers/offset-fetch';
import { findCoordinatorHandler } from '../network/handlers/find-coordinator';
import { createTopicsHandler } from '../network/handlers/create-topics';
import { createPartitionsHandler } from '../network/handlers/create-partitions';
import { incrementalAlterConfigsHandler } from '../network/handlers/incremental-alter-configs';
import { metadataHandler } from '../network/handlers/metadata';
import { listOffsetsHandler } from '../network/handlers/list-offsets';
import type { ClusterSim } from './cluster-sim';

/** One partition's answer to a Produce (ProduceResponse v9 fields). */
export interface SimProduceResult {
  errorCode: number;
  baseOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
}

/** One partition's answer to a consumer Fetch: its error, HW, and the record batches' bytes (null: none). */
export interface SimFetchResult {
  errorCode: number;
  highWatermark: number;
  logStartOffset: number;
  records: Buffer | null;
}

/** The handler versions the simulated client speaks: those of a current Java client (Kafka 4.x). */
const VERSIONS = {
  produce: 9,
  fetch: 12,
  initProducerId: 4,
  offsetCommit: 8,
  offsetFetch: 8,
  findCoordinator: 4,
  createTopics: 7,
  createPartitions: 3,
  incrementalAlterConfigs: 1,
  metadata: 12,
  listOffsets: 7,
} as const;

/** KIP-320's "no leader-epoch check" value of currentLeaderEpoch. */
const NO_EPOCH = -1;

/** A client of the simulated cluster that sends each request to a broker of its choice (module comment). */
export class SimClient {
  private correlationId = 0;

  constructor(
    readonly cluster: ClusterSim,
    readonly clientId = 'skiff-verify',
  ) {}

  /** Runs `handler` at `apiVersion` on broker `brokerId`'s node with `body`, driving the simulation until it answers. */
  async call(
    brokerId: number,
    handler: AnyApiHandler,
    apiVersion: number,
    body: Record<string, unknown>,
    /** false: only start the request; the caller drives the simulation (a request in flight beside others). */
    drive = true,
    // The handler's schema-typed response; each method below reads the fields of its own API.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ): Promise<any> {
    const node = this.cluster.node(brokerId);
    const response = Promise.resolve().then(() =>
      handler.handle({
        apiKey: handler.apiKey,
        apiVersion,
        correlationId: ++this.correlationId,
        clientId: this.clientId,
        body,
        broker: node,
        remote: 'sim',
      }),
    );
    return drive ? this.cluster.sim.runUntil(response) : response;
  }

  /**
   * Produce of `records` (one record batch's bytes) to `topic`-`partition` through broker `brokerId`.
   * acks 0 has no response in Kafka: the result is then `{ errorCode: 0, baseOffset: -1 }` once the
   * handler has handed the batch on.
   */
  async produce(
    brokerId: number,
    topic: string,
    partition: number,
    records: Buffer,
    acks: -1 | 0 | 1,
    timeoutMs = 10_000,
    drive = true,
  ): Promise<SimProduceResult> {
    const response = await this.call(
      brokerId,
      produceHandler as unknown as AnyApiHandler,
      VERSIONS.produce,
      {
        transactionalId: null,
        acks,
        timeoutMs,
        topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
      },
      drive,
    );
    if (response === null) return { errorCode: 0, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1 };
    const p = response.responses[0].partitionResponses[0];
    return {
      errorCode: p.errorCode,
      baseOffset: Number(p.baseOffset),
      logAppendTimeMs: Number(p.logAppendTimeMs),
      logStartOffset: Number(p.logStartOffset),
    };
  }

  /** A consumer's Fetch (v12, read uncommitted, no long poll) of `topic`-`partition` from `fetchOffset`. */
  async fetch(
    brokerId: number,
    topic: string,
    partition: number,
    fetchOffset: number,
    options: { currentLeaderEpoch?: number; maxBytes?: number } = {},
  ): Promise<SimFetchResult> {
    const response = await this.call(brokerId, fetchHandler as unknown as AnyApiHandler, VERSIONS.fetch, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: options.maxBytes ?? 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic,
          partitions: [
            {
              partition,
              currentLeaderEpoch: options.currentLeaderEpoch ?? NO_EPOCH,
              fetchOffset,
              logStartOffset: -1,
              partitionMaxBytes: options.maxBytes ?? 1 << 20,
            },
          ],
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    });
    if (response.errorCode !== undefined && response.errorCode !== 0)
      return { errorCode: response.errorCode, highWatermark: -1, logStartOffset: -1, records: null };
    const p = response.responses[0].partitions[0];
    const records = p.records === null || p.records === undefined ? null : Buffer.from(p.records);
    return {
      errorCode: p.errorCode,
      highWatermark: Number(p.highWatermark),
      logStartOffset: Number(p.logStartOffset),
      records: records !== null && records.length > 0 ? records : null,
    };
  }

  /**
   * ListOffsets (v7) of `topic`-`partition` at `timestamp` (-2 earliest, -1 latest), as a consumer's
   * auto.offset.reset asks it: the offset, or -1 with the error.
   */
  async listOffset(
    brokerId: number,
    topic: string,
    partition: number,
    timestamp: -1 | -2,
  ): Promise<{ errorCode: number; offset: number }> {
    const r = await this.call(brokerId, listOffsetsHandler as unknown as AnyApiHandler, VERSIONS.listOffsets, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: topic,
          partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 }],
        },
      ],
    });
    const p = r.topics[0].partitions[0];
    return { errorCode: p.errorCode, offset: p.errorCode === 0 ? Number(p.offset) : -1 };
  }

  /** InitProducerId without a transactional id (an idempotent producer): its producer id and epoch. */
  async initProducerId(brokerId: number): Promise<{ errorCode: number; producerId: number; producerEpoch: number }> {
    const r = await this.call(brokerId, initProducerIdHandler as unknown as AnyApiHandler, VERSIONS.initProducerId, {
      transactionalId: null,
      transactionTimeoutMs: 60_000,
      producerId: -1,
      producerEpoch: -1,
    });
    return { errorCode: r.errorCode, producerId: Number(r.producerId), producerEpoch: r.producerEpoch };
  }

  /** FindCoordinator of `group` (v4, one key): the coordinator's node id, or -1 with the error. */
  async findCoordinator(brokerId: number, group: string): Promise<{ errorCode: number; nodeId: number }> {
    const r = await this.call(brokerId, findCoordinatorHandler as unknown as AnyApiHandler, VERSIONS.findCoordinator, {
      keyType: 0,
      coordinatorKeys: [group],
    });
    const c = r.coordinators[0];
    return { errorCode: c.errorCode, nodeId: c.nodeId };
  }

  /**
   * OffsetCommit of `offset` for `topic`-`partition` by `group`, as a consumer with manual assignment
   * commits (generation -1, no member id): the partition's error code.
   */
  async offsetCommit(
    brokerId: number,
    group: string,
    topic: string,
    partition: number,
    offset: number,
  ): Promise<number> {
    const r = await this.call(brokerId, offsetCommitHandler as unknown as AnyApiHandler, VERSIONS.offsetCommit, {
      groupId: group,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: topic,
          partitions: [
            { partitionIndex: partition, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null },
          ],
        },
      ],
    });
    return r.topics[0].partitions[0].errorCode;
  }

  /** OffsetFetch (v8) of `group`'s committed offset of `topic`-`partition`: -1 when none. */
  async offsetFetch(
    brokerId: number,
    group: string,
    topic: string,
    partition: number,
  ): Promise<{ errorCode: number; offset: number }> {
    const r = await this.call(brokerId, offsetFetchHandler as unknown as AnyApiHandler, VERSIONS.offsetFetch, {
      groups: [{ groupId: group, topics: [{ name: topic, partitionIndexes: [partition] }] }],
      requireStable: false,
    });
    const g = r.groups[0];
    if (g.errorCode !== 0) return { errorCode: g.errorCode, offset: -1 };
    const p = g.topics[0].partitions[0];
    return { errorCode: p.errorCode, offset: Number(p.committedOffset) };
  }

  /** CreateTopics of one topic: its error code. */
  async createTopic(
    brokerId: number,
    name: string,
    numPartitions: number,
    replicationFactor: number,
    configs: Record<string, string> = {},
  ): Promise<number> {
    const r = await this.call(brokerId, createTopicsHandler as unknown as AnyApiHandler, VERSIONS.createTopics, {
      topics: [
        {
          name,
          numPartitions,
          replicationFactor,
          assignments: [],
          configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
        },
      ],
      timeoutMs: 30_000,
      validateOnly: false,
    });
    return r.topics[0].errorCode;
  }

  /** CreatePartitions growing `topic` to `count` partitions: its error code. */
  async createPartitions(brokerId: number, topic: string, count: number): Promise<number> {
    const r = await this.call(
      brokerId,
      createPartitionsHandler as unknown as AnyApiHandler,
      VERSIONS.createPartitions,
      {
        topics: [{ name: topic, count, assignments: null }],
        timeoutMs: 30_000,
        validateOnly: false,
      },
    );
    return r.results[0].errorCode;
  }

  /** IncrementalAlterConfigs SET of topic configs (e.g. min.insync.replicas, write.caching): the error code. */
  async alterTopicConfigs(brokerId: number, topic: string, configs: Record<string, string>): Promise<number> {
    const r = await this.call(
      brokerId,
      incrementalAlterConfigsHandler as unknown as AnyApiHandler,
      VERSIONS.incrementalAlterConfigs,
      {
        resources: [
          {
            resourceType: 2,
            resourceName: topic,
            configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value })),
          },
        ],
        validateOnly: false,
      },
    );
    return r.responses[0].errorCode;
  }

  /**
   * Metadata of `topic` as broker `brokerId`'s cache holds it: per partition its leader and leader
   * epoch (-1 when the topic is unknown there).
   */
  async metadata(
    brokerId: number,
    topic: string,
  ): Promise<{ errorCode: number; partitions: { partition: number; leader: number; leaderEpoch: number }[] }> {
    const r = await this.call(brokerId, metadataHandler as unknown as AnyApiHandler, VERSIONS.metadata, {
      topics: [{ name: topic, topicId: '00000000-0000-0000-0000-000000000000' }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    const t = r.topics[0];
    return {
      errorCode: t.errorCode,
      partitions: t.partitions.map((p: { partitionIndex: number; leaderId: number; leaderEpoch: number }) => ({
        partition: p.partitionIndex,
        leader: p.leaderId,
        leaderEpoch: p.leaderEpoch,
      })),
    };
  }
}
