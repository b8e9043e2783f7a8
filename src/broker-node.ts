/**
 * One broker's network side, on the main thread (DESIGN.md "The pieces": the network layer knows
 * leaders from a metadata cache). A `BrokerNode` holds its Kafka listener, its endpoint `net/<id>`,
 * and a read-only metadata cache fed by the controller's pushes (`metadata.update`, applied only when
 * newer than the image it holds) plus its replica manager's `net.local-state` (partitions offline
 * here, group coordinators running here). It implements `BrokerContext` for the handlers. Replica and
 * coordinator lifecycles are not here: they belong to the broker's replica manager actor
 * (src/replica-manager/), which the cluster (cluster.ts) spawns.
 */
import { promises as fsp } from 'node:fs';
import type { BrokerConfig } from './config/broker-config';
import type {
  AlterConfigResult,
  AlterTopicConfigsCommand,
  CreatePartitionsCommand,
  CreatePartitionsResult,
  CreateTopicsCommand,
  CreateTopicResult,
  DeleteTopicResult,
} from './controller/messages';
import { CONTROLLER_ACTOR_ID } from './controller/messages';
import type { MetadataImage, TopicState } from './controller/metadata-records';
import type { ActorRef, Envelope } from './runtime/actor';
import type { Clock, Timers } from './io/clock';
import type { Logger } from './io/logger';
import type { Endpoint } from './runtime/runtime';
import { replicaActorId } from './replica/messages';
import type { ReplicaDescription, ReplicaMessages, SegmentRange } from './replica/messages';
import type { BrokerContext } from './network/broker-context';
import { Dispatcher } from './network/dispatcher';
import type { RequestDoneInfo } from './network/dispatcher';
import { allHandlers } from './network/handlers';
import { KafkaServer } from './network/server';
import { SegmentRangeReader } from './network/segment-reader';
import { OFFSETS_TOPIC, offsetsPartitionFor } from './group/offsets-records';
import { groupCoordinatorActorId } from './group/messages';
import type { GroupCoordinatorMessages } from './group/messages';
import { ErrorCode } from './protocol/error-codes';
import { networkNodeRef, replicaManagerRef } from './replica-manager/messages';
import type { HostedPartition, LocalBrokerState } from './replica-manager/messages';
import { errnoCode, EXIT_CONFIG, EXIT_FAILURE, StartupError } from './startup-error';

/** How long the network layer waits for the controller (or a replica manager) to answer a metadata change (ms). */
export const CONTROLLER_TIMEOUT_MS = 30_000;
/**
 * Requests dispatched on one connection but not yet answered. Kafka handles one at a time per
 * connection; a few in parallel keep pipelined produces to different partitions flowing, while a
 * client that never reads can hold at most this many responses (plus one socket buffer).
 */
const MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = 16;

/** What a node needs of the cluster around it. */
export interface NodeCluster {
  /** Called with each image this node's cache takes (the admin API's metrics count ISR changes from them). */
  onImage?(image: MetadataImage): void;
  /** Called after each request this node served (the admin API's request metrics). */
  onRequestDone?(info: RequestDoneInfo): void;
  /**
   * Resolves once every running broker's replica manager has applied metadata at least as new as
   * `offset` (so a created topic's replicas serve), bounded by the controller timeout.
   */
  awaitApplied(offset: number): Promise<void>;
}

/** One broker's listener, metadata cache and `BrokerContext` (module comment). */
export class BrokerNode implements BrokerContext {
  readonly nodeId: number;
  readonly controllerId: number;
  clusterId = '';
  boundPort = 0;
  readonly endpoint: Endpoint;
  readonly clock: Clock;
  readonly timers: Timers;
  private image: MetadataImage | null = null;
  private local: LocalBrokerState = { appliedOffset: -1, brokerEpoch: -1, offline: [], coordinators: [], version: 0 };
  private topicsByName = new Map<string, TopicState>();
  private topicsById = new Map<string, TopicState>();
  private offlineReasons = new Map<string, string>();
  private offsetsTopicCreation: Promise<void> | null = null;
  private readonly dispatcher: Dispatcher;
  private readonly server: KafkaServer;
  private ready!: Promise<void>;
  private releaseRequests!: () => void;
  private listening = false;
  private readonly segmentReader = new SegmentRangeReader();

  constructor(
    readonly config: BrokerConfig,
    readonly log: Logger,
    endpoint: Endpoint,
    private readonly cluster: NodeCluster,
  ) {
    this.nodeId = config.nodeId;
    this.controllerId = config.nodeId;
    this.endpoint = endpoint;
    this.clock = endpoint.clock;
    this.timers = endpoint.timers;
    this.dispatcher = new Dispatcher(allHandlers, () => this, {
      onRequestDone: cluster.onRequestDone ? (info) => cluster.onRequestDone?.(info) : undefined,
    });
    this.server = new KafkaServer(
      async (frame, connection) => {
        await this.ready;
        return this.dispatcher.handle(frame, connection);
      },
      {
        socketRequestMaxBytes: config.socketRequestMaxBytes,
        maxInFlightRequests: MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
        maxConnections: config.maxConnections,
        connectionsMaxIdleMs: config.connectionsMaxIdleMs,
      },
      log,
      this.clock,
    );
    endpoint.onMessage((envelope) => this.onMessage(envelope));
    this.holdRequests();
  }

  /** Requests that arrive from now on wait until {@link markReady} (a broker starting or restarting). */
  holdRequests(): void {
    this.ready = new Promise((resolve) => {
      this.releaseRequests = resolve;
    });
  }

  /** Requests are served (those waiting go on). */
  markReady(): void {
    this.releaseRequests();
  }

  /**
   * Binds the Kafka listener (the same port again after a crash); a port in use or not ours to bind
   * is a {@link StartupError}.
   */
  async listen(host: string, port: number): Promise<number> {
    try {
      this.boundPort = await this.server.listen(host, port);
      this.listening = true;
      return this.boundPort;
    } catch (error) {
      const code = errnoCode(error);
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (code === 'EADDRINUSE')
        throw new StartupError(
          `port ${port} is in use (cannot listen on ${where}): stop the process using it, or choose another port with --port (or listeners)`,
          EXIT_FAILURE,
        );
      if (code === 'EACCES')
        throw new StartupError(
          `not allowed to listen on ${where} (EACCES: ports below 1024 need privileges): choose a port from 1024 with --port (or listeners)`,
          EXIT_FAILURE,
        );
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
        throw new StartupError(
          `cannot listen on ${where} (${code}: ${host} is not an address of this host): fix the host in listeners`,
          EXIT_CONFIG,
        );
      throw error;
    }
  }

  /** Closes the listener and every client connection (a crash or a stop of this broker), then its open segment files. */
  async closeListener(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    await this.server.close().catch(() => undefined);
    this.segmentReader.close();
  }

  readSegmentRanges(ranges: readonly SegmentRange[]): Promise<Buffer | null> {
    return this.segmentReader.read(ranges);
  }

  /** Subscribes this node's endpoint to the controller's metadata pushes; resolves with the current image. */
  async subscribe(): Promise<MetadataImage> {
    const image = await this.endpoint.request(
      CONTROLLER_ACTOR_ID,
      'controller.subscribe',
      { listener: networkNodeRef(this.nodeId) },
      CONTROLLER_TIMEOUT_MS,
    );
    this.applyImage(image);
    return image;
  }

  /** Takes a newer image into the cache (an older or equal one is ignored). */
  applyImage(image: MetadataImage): void {
    if (this.image !== null && image.offset <= this.image.offset) return;
    this.image = image;
    this.clusterId = image.clusterId;
    this.topicsByName = new Map(image.topics.map((t) => [t.name, t]));
    this.topicsById = new Map(image.topics.map((t) => [t.topicId, t]));
    this.cluster.onImage?.(image);
  }

  /** The image this node's cache holds (null before the first). */
  get cachedImage(): MetadataImage | null {
    return this.image;
  }

  /**
   * Takes the replica manager's local state (offline partitions, running coordinators), unless it is
   * older than the one held (LocalBrokerState.version: a push that arrives after a newer state).
   */
  applyLocalState(state: LocalBrokerState): void {
    const held = this.local;
    if (
      state.brokerEpoch < held.brokerEpoch ||
      (state.brokerEpoch === held.brokerEpoch && state.version <= held.version)
    )
      return;
    this.local = state;
    this.offlineReasons = new Map(state.offline.map((o) => [`${o.topic}\0${o.partition}`, o.reason]));
  }

  /** The metadata offset of the image this node's cache holds (-1 before the first). */
  get cachedOffset(): number {
    return this.image?.offset ?? -1;
  }

  private onMessage(envelope: Envelope): void {
    if (envelope.type === 'metadata.update') this.applyImage(envelope.body as MetadataImage);
    else if (envelope.type === 'net.local-state') this.applyLocalState(envelope.body as LocalBrokerState);
    else this.log.warn({ type: envelope.type, from: envelope.from }, 'network endpoint ignores unknown message');
  }

  // ---- BrokerContext ----

  brokers() {
    const advertised = this.config.advertisedListeners[0] ?? this.config.listeners[0]!;
    const registered = this.image?.brokers ?? [];
    if (registered.length === 0) {
      const port = advertised.port === 0 ? this.boundPort : advertised.port;
      return [{ nodeId: this.nodeId, host: advertised.host, port }];
    }
    return registered
      .filter((b) => !b.fenced)
      .map((b) => ({
        nodeId: b.nodeId,
        host: b.host,
        port: b.port,
        ...(b.offlineReplicas !== undefined ? { offlineReplicas: b.offlineReplicas } : {}),
      }));
  }

  handlers() {
    return this.dispatcher.handlers();
  }

  topic(name: string) {
    return this.topicsByName.get(name);
  }

  topicById(topicId: string) {
    return this.topicsById.get(topicId);
  }

  allTopics() {
    return [...this.topicsByName.values()];
  }

  leaderReplica(topic: string, partition: number): ActorRef<ReplicaMessages> | null {
    const state = this.topicsByName.get(topic);
    const p = state?.partitions[partition];
    if (state === undefined || p === undefined || p.leader !== this.nodeId) return null;
    if (this.offlineReasons.has(`${topic}\0${partition}`)) return null;
    return replicaActorId(this.nodeId, state.topicId, partition);
  }

  localReplica(topic: string, partition: number): ActorRef<ReplicaMessages> | null {
    const state = this.topicsByName.get(topic);
    const p = state?.partitions[partition];
    if (state === undefined || p === undefined || !p.replicas.includes(this.nodeId)) return null;
    if (this.offlineReasons.has(`${topic}\0${partition}`)) return null;
    return replicaActorId(this.nodeId, state.topicId, partition);
  }

  offlineReason(topic: string, partition: number): string | null {
    return this.offlineReasons.get(`${topic}\0${partition}`) ?? null;
  }

  /** Waits until this broker's cache and every running replica manager reflect `image` (replicas serve). */
  private async published(image: MetadataImage): Promise<void> {
    this.applyImage(image);
    await this.cluster.awaitApplied(image.offset);
    const state = await this.endpoint
      .request(
        replicaManagerRef(this.nodeId),
        'replica-manager.await-applied',
        { offset: image.offset },
        CONTROLLER_TIMEOUT_MS,
      )
      .catch(() => null);
    if (state !== null) this.applyLocalState(state);
  }

  async createTopics(command: CreateTopicsCommand): Promise<CreateTopicResult[]> {
    const reply = await this.endpoint.request(
      CONTROLLER_ACTOR_ID,
      'controller.create-topics',
      command,
      CONTROLLER_TIMEOUT_MS,
    );
    await this.published(reply.image);
    return reply.results;
  }

  async deleteTopics(topics: { name: string | null; topicId: string | null }[]): Promise<DeleteTopicResult[]> {
    const reply = await this.endpoint.request(
      CONTROLLER_ACTOR_ID,
      'controller.delete-topics',
      { topics },
      CONTROLLER_TIMEOUT_MS,
    );
    await this.published(reply.image);
    return reply.results;
  }

  async alterTopicConfigs(command: AlterTopicConfigsCommand): Promise<AlterConfigResult[]> {
    const reply = await this.endpoint.request(
      CONTROLLER_ACTOR_ID,
      'controller.alter-topic-configs',
      command,
      CONTROLLER_TIMEOUT_MS,
    );
    await this.published(reply.image);
    return reply.results;
  }

  async electLeaders(
    electionType: number,
    partitions: { topic: string; partition: number }[] | null,
  ): Promise<{ topic: string; partition: number; errorCode: number; errorMessage: string | null }[]> {
    const reply = await this.endpoint.request(
      CONTROLLER_ACTOR_ID,
      'controller.elect-leaders',
      { electionType, partitions },
      CONTROLLER_TIMEOUT_MS,
    );
    // The reply carries no image: take the one the elections went into, so replicas act on it first.
    if (reply.results.some((r) => r.errorCode === ErrorCode.NONE))
      await this.published(
        await this.endpoint.request(CONTROLLER_ACTOR_ID, 'controller.get-metadata', {}, CONTROLLER_TIMEOUT_MS),
      );
    return reply.results;
  }

  initProducerId(): Promise<{ errorCode: number; producerId: number; producerEpoch: number }> {
    return this.endpoint.request(CONTROLLER_ACTOR_ID, 'controller.init-producer-id', {}, CONTROLLER_TIMEOUT_MS);
  }

  async createPartitions(command: CreatePartitionsCommand): Promise<CreatePartitionsResult[]> {
    const reply = await this.endpoint.request(
      CONTROLLER_ACTOR_ID,
      'controller.create-partitions',
      command,
      CONTROLLER_TIMEOUT_MS,
    );
    await this.published(reply.image);
    return reply.results;
  }

  groupCoordinatorFor(groupId: string): { errorCode: number; actor: ActorRef<GroupCoordinatorMessages> | null } {
    const topic = this.topicsByName.get(OFFSETS_TOPIC);
    if (!topic || topic.partitions.length === 0) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, actor: null };
    const partition = offsetsPartitionFor(groupId, topic.partitions.length);
    if (topic.partitions[partition]!.leader !== this.nodeId)
      return { errorCode: ErrorCode.NOT_COORDINATOR, actor: null };
    return this.local.coordinators.includes(partition)
      ? { errorCode: ErrorCode.NONE, actor: groupCoordinatorActorId(this.nodeId, partition) }
      : { errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, actor: null };
  }

  groupCoordinators(): ActorRef<GroupCoordinatorMessages>[] {
    return this.local.coordinators.map((p) => groupCoordinatorActorId(this.nodeId, p));
  }

  /**
   * Creates __consumer_offsets (offsets.topic.num.partitions, compacted, offsets.topic.segment.bytes,
   * replication factor min(offsets.topic.replication.factor, live brokers)) unless it exists: Kafka
   * does this at the first FindCoordinator for a group. Concurrent callers share one creation.
   */
  ensureOffsetsTopic(): Promise<void> {
    if (this.offsetsTopicCreation !== null) return this.offsetsTopicCreation;
    if (this.topicsByName.has(OFFSETS_TOPIC)) {
      // The push may name the topic before this broker's manager has started its coordinators: wait
      // for that, so a FindCoordinator is not followed by a JoinGroup answered LOAD_IN_PROGRESS.
      if (this.local.appliedOffset >= this.cachedOffset) return Promise.resolve();
      return this.endpoint
        .request(
          replicaManagerRef(this.nodeId),
          'replica-manager.await-applied',
          { offset: this.cachedOffset },
          CONTROLLER_TIMEOUT_MS,
        )
        .then(
          (state) => this.applyLocalState(state),
          () => undefined,
        );
    }
    this.offsetsTopicCreation ??= (async () => {
      const [result] = await this.createTopics({
        topics: [
          {
            name: OFFSETS_TOPIC,
            numPartitions: this.config.offsetsTopicNumPartitions,
            replicationFactor: Math.min(this.config.offsetsTopicReplicationFactor, this.brokers().length),
            configs: {
              'cleanup.policy': 'compact',
              'segment.bytes': String(this.config.offsetsTopicSegmentBytes),
              'compression.type': 'producer',
            },
          },
        ],
        validateOnly: false,
      });
      if (result && result.errorCode !== ErrorCode.NONE && result.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) {
        throw new Error(`creating ${OFFSETS_TOPIC} failed: ${result.errorMessage ?? result.errorCode}`);
      }
      this.log.info(
        { topic: OFFSETS_TOPIC, partitions: this.config.offsetsTopicNumPartitions },
        'created the offsets topic',
      );
    })().finally(() => {
      this.offsetsTopicCreation = null;
    });
    return this.offsetsTopicCreation;
  }

  /**
   * Every partition this broker hosts (its replica manager's list) with its replica's description,
   * or null for a replica that does not answer within `timeoutMs`: DescribeLogDirs and the start-up
   * summary read it.
   */
  async describeHosted(
    timeoutMs: number,
  ): Promise<{ hosted: HostedPartition; description: ReplicaDescription | null }[]> {
    const hosted = await this.endpoint
      .request(replicaManagerRef(this.nodeId), 'replica-manager.hosted', {}, CONTROLLER_TIMEOUT_MS)
      .then((r) => r.partitions)
      .catch(() => []);
    return Promise.all(
      hosted.map(async (h) => ({
        hosted: h,
        description: await this.endpoint
          .request(replicaActorId(this.nodeId, h.topicId, h.partition), 'replica.describe', {}, timeoutMs)
          .catch(() => null),
      })),
    );
  }

  async describeLogDirs() {
    const described = await this.describeHosted(10_000);
    return Promise.all(
      this.config.logDirs.map(async (logDir) => {
        const stats = await fsp.statfs(logDir).catch(() => null);
        const partitions = described.flatMap(({ hosted: h, description: d }) =>
          h.logDir === logDir && d !== null
            ? [
                {
                  topic: h.topic,
                  partition: h.partition,
                  sizeBytes: d.sizeBytes,
                  logEndOffset: d.logEndOffset,
                  highWatermark: d.highWatermark,
                  fsyncedOffset: d.fsyncedOffset,
                },
              ]
            : [],
        );
        return {
          logDir,
          totalBytes: stats ? stats.blocks * stats.bsize : -1,
          usableBytes: stats ? stats.bavail * stats.bsize : -1,
          partitions,
        };
      }),
    );
  }
}
