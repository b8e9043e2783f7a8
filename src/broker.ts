/**
 * Wiring of one Skiff broker: runtime -> controller -> log-dir actors -> replicas -> network, and the
 * ordered shutdown in reverse (DESIGN.md "The pieces"). The main thread is the network thread: it
 * holds the metadata cache published by the controller and routes each request to the leader
 * replica's actor; it never blocks on files (start-up directory scans use async fs).
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { BrokerConfig } from './config/broker-config';
import { effectiveLogConfig } from './config/topic-config';
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
import type { ControllerArgs } from './controller/controller-actor';
import type { MetadataImage, PartitionState, TopicState } from './controller/metadata-records';
import type { ActorRef } from './runtime/actor';
import type { Clock, TimerHandle, Timers } from './io/clock';
import type { Logger } from './io/logger';
import type { Endpoint, Runtime } from './runtime/runtime';
import { ThreadRuntime } from './runtime/thread-runtime';
import type { ReplicaArgs } from './replica/replica-actor';
import { logDirActorId, replicaActorId, replicaManagerActorId } from './replica/messages';
import type { LogDirMessages, PartitionRole, ReplicaHostMessages, ReplicaMessages } from './replica/messages';
import type { Envelope, EnvelopeOf } from './runtime/actor';
import type { LogDirArgs } from './replica/log-dir-actor';
import type { BrokerContext } from './network/broker-context';
import { Dispatcher } from './network/dispatcher';
import { allHandlers } from './network/handlers';
import { KafkaServer } from './network/server';
import { lockLogDir, unlockLogDir } from './log-dir-lock';
import { METADATA_DIR, validateLogDirs } from './log-dir-validation';
import { errnoCode, EXIT_CONFIG, EXIT_FAILURE, StartupError, unlessAborted } from './startup-error';
import type { GroupCoordinatorArgs } from './group/group-coordinator-actor';
import { OFFSETS_TOPIC, offsetsPartitionFor } from './group/offsets-records';
import { groupCoordinatorActorId } from './group/messages';
import type { GroupCoordinatorMessages } from './group/messages';
import { ErrorCode } from './protocol/error-codes';

/** The controller's actor id. */
export const CONTROLLER_ID = CONTROLLER_ACTOR_ID;
/** How long the network layer waits for the controller to answer a metadata change (ms). */
const CONTROLLER_TIMEOUT_MS = 30_000;
/**
 * Requests dispatched on one connection but not yet answered. Kafka handles one at a time per
 * connection; a few in parallel keep pipelined produces to different partitions flowing, while a
 * client that never reads can hold at most this many responses (plus one socket buffer).
 */
const MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = 16;
/**
 * How often the broker tries again to start the replicas (and group coordinators) that a disk error
 * kept from starting (ms): a partition comes online by itself a few seconds after space is freed.
 */
export const OFFLINE_REPLICA_RETRY_MS = 3_000;

/** A partition this broker leads (by the controller's metadata) whose replica or coordinator could not start. */
interface OfflineReplica {
  topicId: string;
  /** What the disk said, e.g. `ENOSPC: no space left on device, write` (logs, CreateTopics). */
  reason: string;
}

/** A running broker. */
export interface RunningBroker {
  /** The port the Kafka listener is bound to (the chosen one when the config said 0). */
  boundPort: number;
  clusterId: string;
  /** Orderly shutdown: listener, replicas (flush + checkpoint), log dirs, controller, workers. */
  stop(): Promise<void>;
}

/**
 * Starts a broker with `config`. Rejects (after stopping what started) with a {@link StartupError}
 * when a log dir is refused (pseudo file system, read-only, locked, meta.properties of another
 * cluster or node) or the port is taken, with StartAbortedError when `options.signal`
 * aborts first, and with the actor's error when an actor fails to start.
 */
export async function startBroker(
  config: BrokerConfig,
  logger: Logger,
  options: { runtime?: Runtime; signal?: AbortSignal } = {},
): Promise<RunningBroker> {
  const runtime =
    options.runtime ??
    new ThreadRuntime({
      brokers: [{ brokerId: config.nodeId, numIoThreads: config.numIoThreads }],
      logger,
      workerLogFd: 2,
    });
  const broker = new Broker(config, logger, runtime);
  try {
    await broker.start(options.signal);
  } catch (error) {
    await broker.stop().catch(() => undefined);
    throw error;
  }
  return { boundPort: broker.boundPort, clusterId: broker.clusterId, stop: () => broker.stop() };
}

class Broker implements BrokerContext {
  readonly nodeId: number;
  readonly controllerId: number;
  clusterId = '';
  boundPort = 0;
  readonly endpoint: Endpoint;
  readonly clock: Clock;
  readonly timers: Timers;
  private readonly logDirs: string[];
  private readonly topicsByName = new Map<string, TopicState>();
  private readonly topicsById = new Map<string, TopicState>();
  /** `${topic}\0${partition}` -> actor id of this broker's serving leader replica. */
  private readonly leaders = new Map<string, ActorRef<ReplicaMessages>>();
  /** `${topic}-${partition}` -> the log dir holding it. */
  private readonly partitionDirs = new Map<string, string>();
  private readonly logDirActors: ActorRef<LogDirMessages>[] = [];
  /** __consumer_offsets partition -> actor id of this broker's group coordinator for it. */
  private readonly coordinators = new Map<number, ActorRef<GroupCoordinatorMessages>>();
  private offsetsTopicCreation: Promise<void> | null = null;
  /**
   * `${topic}\0${partition}` -> why its replica (or, for __consumer_offsets, its group coordinator)
   * failed to start with a disk error. Kafka's counterpart is a partition on an offline log dir
   * (HostedPartition.Offline): the topic exists, as the controller committed it, and requests for the
   * partition answer KAFKA_STORAGE_ERROR until a retry ({@link OFFLINE_REPLICA_RETRY_MS}) starts it.
   */
  private readonly offline = new Map<string, OfflineReplica>();
  private offlineRetryTimer: TimerHandle | null = null;
  private readonly lockedDirs: string[] = [];
  /**
   * Stand-in for the replica manager actor (the lead's src/replica-manager/ replaces it): answers a
   * replica's `replica-manager.replica-state` with the role this single broker gives it (leader,
   * ISR as the controller has it, current topic config). Keyed by `${topicId}/${partition}`.
   */
  private readonly replicaManager: Endpoint;
  private readonly roles = new Map<string, PartitionRole>();
  private applyChain: Promise<void> = Promise.resolve();
  private readonly dispatcher: Dispatcher;
  private readonly server: KafkaServer;
  private ready!: Promise<void>;
  /** start() completed: the broker served (a failed start's stop is not news at info). */
  private served = false;
  private stopped = false;

  constructor(
    readonly config: BrokerConfig,
    readonly log: Logger,
    private readonly runtime: Runtime,
  ) {
    this.nodeId = config.nodeId;
    this.controllerId = config.nodeId;
    this.logDirs = config.logDirs.map((d) => path.resolve(d));
    this.endpoint = runtime.endpoint(`net/${config.nodeId}`);
    this.replicaManager = runtime.endpoint(replicaManagerActorId(config.nodeId));
    this.replicaManager.onMessage((envelope: Envelope) => {
      const request = envelope as EnvelopeOf<ReplicaHostMessages>;
      if (request.type === 'replica-manager.replica-state') {
        const { topicId, partition } = request.body;
        this.replicaManager.reply(request, { role: this.roles.get(`${topicId}/${partition}`) ?? null });
      } else if (request.type === 'replica-manager.alter-partition') {
        const { topicId, partition } = request.body;
        // One broker: ISR = {self} never changes.
        this.replicaManager.reply(request, {
          errorCode: ErrorCode.INVALID_REQUEST,
          role: this.roles.get(`${topicId}/${partition}`) ?? null,
        });
      }
    });
    this.clock = this.endpoint.clock;
    this.timers = this.endpoint.timers;
    this.dispatcher = new Dispatcher(allHandlers, () => this);
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
  }

  /**
   * Starts in an order that writes nothing into a log dir before it is validated and the listener
   * bound: check the dirs (read-only), bind the port, then create and lock the dirs, then the
   * controller (metadata log, cluster id), log-dir actors (meta.properties, checkpoints) and
   * replicas. Requests that arrive before the end wait for `ready`. `signal` ends the start at its
   * next step, or at once while it waits on an actor.
   */
  async start(signal?: AbortSignal): Promise<void> {
    let markReady!: () => void;
    this.ready = new Promise((resolve) => {
      markReady = resolve;
    });
    const step = <T>(promise: Promise<T>): Promise<T> => unlessAborted(promise, signal);
    await step(validateLogDirs(this.logDirs, this.nodeId));
    const listener = this.config.listeners[0]!;
    this.boundPort = await step(this.listen(listener.host, listener.port));
    const staleOwners: number[] = [];
    for (const logDir of this.logDirs) {
      const lock = await step(lockLogDir(logDir));
      this.lockedDirs.push(logDir);
      if (lock.staleOwner !== null) staleOwners.push(lock.staleOwner);
    }
    const controllerArgs: ControllerArgs = {
      metadataDir: path.join(this.logDirs[0]!, METADATA_DIR),
      brokers: [
        { nodeId: this.nodeId, host: this.config.advertisedListeners[0]?.host ?? listener.host, port: listener.port },
      ],
      numPartitions: this.config.numPartitions,
      defaultReplicationFactor: this.config.defaultReplicationFactor,
    };
    await step(this.runtime.spawn(CONTROLLER_ID, 'controller', controllerArgs, { pool: 'controller' }));
    const image = await step(
      this.endpoint.request(CONTROLLER_ID, 'controller.get-metadata', {}, CONTROLLER_TIMEOUT_MS),
    );
    this.clusterId = image.clusterId;
    for (const [index, logDir] of this.logDirs.entries()) {
      const id = logDirActorId(this.nodeId, index);
      const args: LogDirArgs = {
        logDir,
        clusterId: this.clusterId,
        nodeId: this.nodeId,
        directoryId: randomBytes(16).toString('base64url'),
      };
      await step(this.runtime.spawn(id, 'log-dir', args, { pool: 'broker', brokerId: this.nodeId }));
      this.logDirActors.push(id);
    }
    await step(this.scanLogDirs());
    await step(this.applyImage(image));
    await step(this.logLoadSummary(staleOwners));
    markReady();
    this.served = true;
    this.log.info(
      {
        host: listener.host,
        port: this.boundPort,
        clusterId: this.clusterId,
        nodeId: this.nodeId,
        logDirs: this.logDirs,
        topics: this.topicsByName.size,
      },
      'broker started',
    );
  }

  /** Binds the Kafka listener; a port in use or not ours to bind is a {@link StartupError}. */
  private async listen(host: string, port: number): Promise<number> {
    try {
      return await this.server.listen(host, port);
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

  /**
   * One info line for the whole start instead of one per partition (those are at debug): how many
   * partitions and group coordinators were loaded and, after an unclean shutdown (a log dir's lock
   * was left by a process that is gone: Skiff's counterpart of Kafka's missing
   * `.kafka_cleanshutdown`), how much recovery did.
   */
  private async logLoadSummary(staleOwners: number[]): Promise<void> {
    const leaders = [...this.leaders.values()];
    const summaries = await Promise.all(
      leaders.map((actor) =>
        this.endpoint
          .request(actor, 'replica.describe', {}, CONTROLLER_TIMEOUT_MS)
          .then((reply) => reply.recovery)
          .catch(() => null),
      ),
    );
    const total = { segments: 0, scannedBytes: 0, truncatedBytes: 0, deletedSegments: 0, partitionsTruncated: 0 };
    for (const summary of summaries) {
      if (summary === null) continue;
      total.segments += summary.segments;
      total.scannedBytes += summary.scannedBytes;
      total.truncatedBytes += summary.truncatedBytes;
      total.deletedSegments += summary.deletedSegments;
      if (summary.truncatedBytes > 0 || summary.deletedSegments > 0) total.partitionsTruncated += 1;
    }
    const fields = {
      partitions: leaders.length,
      groupCoordinators: this.coordinators.size,
      segments: total.segments,
      recoveryScannedBytes: total.scannedBytes,
      recoveryTruncatedBytes: total.truncatedBytes,
      recoveryDeletedSegments: total.deletedSegments,
      partitionsTruncated: total.partitionsTruncated,
    };
    if (staleOwners.length > 0) {
      this.log.info(
        { ...fields, previousOwner: staleOwners[0] },
        `recovered after an unclean shutdown: ${leaders.length} partitions checked from their recovery points, ` +
          `${total.scannedBytes} bytes scanned, ${total.truncatedBytes} bytes truncated in ${total.partitionsTruncated} partitions`,
      );
    } else {
      this.log.info(fields, `loaded ${leaders.length} partitions and ${this.coordinators.size} group coordinators`);
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.offlineRetryTimer !== null) this.timers.clearTimeout(this.offlineRetryTimer);
    this.offlineRetryTimer = null;
    await this.server.close().catch(() => undefined);
    await this.applyChain.catch(() => undefined);
    await Promise.all([...this.coordinators.values()].map((id) => this.runtime.stopActor(id).catch(() => undefined)));
    await Promise.all([...this.leaders.values()].map((id) => this.runtime.stopActor(id).catch(() => undefined)));
    await Promise.all(this.logDirActors.map((id) => this.runtime.stopActor(id).catch(() => undefined)));
    await this.runtime.stopActor(CONTROLLER_ID).catch(() => undefined);
    this.endpoint.close();
    this.replicaManager.close();
    await this.runtime.shutdown();
    for (const logDir of this.lockedDirs) await unlockLogDir(logDir).catch(() => undefined);
    if (this.served) this.log.info({ nodeId: this.nodeId }, 'broker stopped');
    else this.log.debug({ nodeId: this.nodeId }, 'stopped what the failed start had started');
  }

  // ---- BrokerContext ----

  brokers() {
    const advertised = this.config.advertisedListeners[0] ?? this.config.listeners[0]!;
    const port = advertised.port === 0 ? this.boundPort : advertised.port;
    return [{ nodeId: this.nodeId, host: advertised.host, port }];
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
    return this.leaders.get(`${topic}\0${partition}`) ?? null;
  }

  offlineReason(topic: string, partition: number): string | null {
    return this.offline.get(`${topic}\0${partition}`)?.reason ?? null;
  }

  async createTopics(command: CreateTopicsCommand): Promise<CreateTopicResult[]> {
    const reply = await this.endpoint.request(
      CONTROLLER_ID,
      'controller.create-topics',
      command,
      CONTROLLER_TIMEOUT_MS,
    );
    await this.applyImage(reply.image);
    return reply.results;
  }

  async deleteTopics(topics: { name: string | null; topicId: string | null }[]): Promise<DeleteTopicResult[]> {
    const reply = await this.endpoint.request(
      CONTROLLER_ID,
      'controller.delete-topics',
      { topics },
      CONTROLLER_TIMEOUT_MS,
    );
    await this.applyImage(reply.image);
    return reply.results;
  }

  async alterTopicConfigs(command: AlterTopicConfigsCommand): Promise<AlterConfigResult[]> {
    const reply = await this.endpoint.request(
      CONTROLLER_ID,
      'controller.alter-topic-configs',
      command,
      CONTROLLER_TIMEOUT_MS,
    );
    await this.applyImage(reply.image);
    return reply.results;
  }

  initProducerId(): Promise<{ producerId: number; producerEpoch: number }> {
    return this.endpoint.request(CONTROLLER_ID, 'controller.init-producer-id', {}, CONTROLLER_TIMEOUT_MS);
  }

  async createPartitions(command: CreatePartitionsCommand): Promise<CreatePartitionsResult[]> {
    const reply = await this.endpoint.request(
      CONTROLLER_ID,
      'controller.create-partitions',
      command,
      CONTROLLER_TIMEOUT_MS,
    );
    await this.applyImage(reply.image);
    return reply.results;
  }

  groupCoordinatorFor(groupId: string): { errorCode: number; actor: ActorRef<GroupCoordinatorMessages> | null } {
    const topic = this.topicsByName.get(OFFSETS_TOPIC);
    if (!topic || topic.partitions.length === 0) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, actor: null };
    const partition = offsetsPartitionFor(groupId, topic.partitions.length);
    if (topic.partitions[partition]!.leader !== this.nodeId)
      return { errorCode: ErrorCode.NOT_COORDINATOR, actor: null };
    const actor = this.coordinators.get(partition);
    return actor
      ? { errorCode: ErrorCode.NONE, actor }
      : { errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, actor: null };
  }

  groupCoordinators(): ActorRef<GroupCoordinatorMessages>[] {
    return [...this.coordinators.values()];
  }

  /**
   * Creates __consumer_offsets (offsets.topic.num.partitions, compacted, offsets.topic.segment.bytes,
   * replication factor capped by the brokers) unless it exists: Kafka does this at the first
   * FindCoordinator for a group. Concurrent callers share one creation.
   */
  ensureOffsetsTopic(): Promise<void> {
    if (this.topicsByName.has(OFFSETS_TOPIC)) return Promise.resolve();
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

  async describeLogDirs() {
    return Promise.all(
      this.logDirs.map(async (logDir) => {
        const stats = await fsp.statfs(logDir).catch(() => null);
        const local = [...this.partitionDirs.entries()].filter(([, dir]) => dir === logDir);
        const partitions = await Promise.all(
          local.map(async ([dirName]) => {
            const split = dirName.lastIndexOf('-');
            const topic = dirName.slice(0, split);
            const partition = Number(dirName.slice(split + 1));
            const actor = this.leaders.get(`${topic}\0${partition}`);
            const unknown = { sizeBytes: -1, logEndOffset: -1, highWatermark: -1, fsyncedOffset: -1 };
            const described = actor
              ? await this.endpoint.request(actor, 'replica.describe', {}, 10_000).catch(() => unknown)
              : unknown;
            return {
              topic,
              partition,
              sizeBytes: described.sizeBytes,
              logEndOffset: described.logEndOffset,
              highWatermark: described.highWatermark,
              fsyncedOffset: described.fsyncedOffset,
            };
          }),
        );
        return {
          logDir,
          totalBytes: stats ? stats.blocks * stats.bsize : -1,
          usableBytes: stats ? stats.bavail * stats.bsize : -1,
          partitions: partitions.filter((p) => p.sizeBytes >= 0),
        };
      }),
    );
  }

  // ---- replica management ----

  /** New overrides: the cache takes them and every local replica of the topic gets its new effective config. */
  private async updateTopicConfig(topic: TopicState): Promise<void> {
    this.topicsById.set(topic.topicId, topic);
    this.topicsByName.set(topic.name, topic);
    const config = effectiveLogConfig(topic.configs, this.config);
    await Promise.all(
      topic.partitions.map(async (p) => {
        const role = this.roles.get(`${topic.topicId}/${p.partition}`);
        if (role) role.config = config; // a restarted replica asks for it
        const actor = this.leaders.get(`${topic.name}\0${p.partition}`);
        if (actor)
          await this.endpoint
            .request(actor, 'replica.update-config', { config }, CONTROLLER_TIMEOUT_MS)
            .catch((error) => this.log.warn({ actor, error: String(error) }, 'replica config update failed'));
      }),
    );
    this.log.info({ topic: topic.name, configs: topic.configs }, 'topic configs changed');
  }

  /** Starts the coordinator of one __consumer_offsets partition beside its leader replica; it loads its groups. */
  private async startGroupCoordinator(partition: number, replicaActor: ActorRef<ReplicaMessages>): Promise<void> {
    const id = groupCoordinatorActorId(this.nodeId, partition);
    const { config } = this;
    const args: GroupCoordinatorArgs = {
      partition,
      replicaActor,
      config: {
        initialRebalanceDelayMs: config.groupInitialRebalanceDelayMs,
        minSessionTimeoutMs: config.groupMinSessionTimeoutMs,
        maxSessionTimeoutMs: config.groupMaxSessionTimeoutMs,
        maxSize: config.groupMaxSize,
        offsetMetadataMaxBytes: config.offsetMetadataMaxBytes,
        offsetsRetentionMs: config.offsetsRetentionMinutes * 60_000,
        offsetsRetentionCheckIntervalMs: config.offsetsRetentionCheckIntervalMs,
      },
    };
    await this.runtime.spawn(id, 'group-coordinator', args, { pool: 'broker', brokerId: this.nodeId });
    this.coordinators.set(partition, id);
  }

  /** Finds the partition directories already on disk, so a restarted broker reopens them in place. */
  private async scanLogDirs(): Promise<void> {
    for (const logDir of this.logDirs) {
      const entries = await fsp.readdir(logDir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        if (entry.isDirectory() && /^.+-\d+$/.test(entry.name)) this.partitionDirs.set(entry.name, logDir);
      }
    }
  }

  /** The log dir for a new partition: the one holding the fewest partitions (Kafka's rule). */
  private chooseLogDir(): string {
    const counts = new Map(this.logDirs.map((d) => [d, 0]));
    for (const dir of this.partitionDirs.values()) counts.set(dir, (counts.get(dir) ?? 0) + 1);
    return [...counts.entries()].sort((a, b) => a[1] - b[1])[0]![0];
  }

  /** Applies a metadata image: removed topics' replicas delete their logs, new leaders start. Serialized. */
  private applyImage(image: MetadataImage): Promise<void> {
    const next = this.applyChain.then(() => this.applyImageNow(image));
    this.applyChain = next.catch((error) => this.log.error({ error: String(error) }, 'applying metadata failed'));
    return next;
  }

  private async applyImageNow(image: MetadataImage): Promise<void> {
    const incoming = new Map(image.topics.map((t) => [t.topicId, t]));
    for (const old of [...this.topicsById.values()]) {
      if (incoming.has(old.topicId)) continue;
      this.topicsById.delete(old.topicId);
      if (this.topicsByName.get(old.name)?.topicId === old.topicId) this.topicsByName.delete(old.name);
      await Promise.all(
        old.partitions.map(async (p) => {
          const key = `${old.name}\0${p.partition}`;
          const actor = this.leaders.get(key);
          this.leaders.delete(key);
          const dirName = `${old.name}-${p.partition}`;
          const logDir = this.partitionDirs.get(dirName);
          if (this.offline.delete(key) && !actor && logDir !== undefined)
            // No replica to delete its log: what the failed start left behind goes here.
            await fsp
              .rm(path.join(logDir, dirName), { recursive: true, force: true })
              .catch((error) =>
                this.log.warn({ dir: dirName, error: String(error) }, 'removing an offline partition failed'),
              );
          const coordinator = old.name === OFFSETS_TOPIC ? this.coordinators.get(p.partition) : undefined;
          if (coordinator) {
            this.coordinators.delete(p.partition);
            await this.runtime.stopActor(coordinator).catch(() => undefined);
          }
          this.partitionDirs.delete(dirName);
          if (actor)
            await this.endpoint
              .request(actor, 'replica.delete', {}, CONTROLLER_TIMEOUT_MS)
              .catch((error) => this.log.warn({ actor, error: String(error) }, 'replica delete failed'));
        }),
      );
      this.log.info({ topic: old.name, topicId: old.topicId }, 'deleted topic');
      if (old.name !== OFFSETS_TOPIC) {
        // Kafka's onPartitionsDeleted: every coordinator drops the groups' offsets of the topic.
        await Promise.all(
          [...this.coordinators.values()].map((id) =>
            this.endpoint
              .request(id, 'group.topics-deleted', { topics: [old.name] }, CONTROLLER_TIMEOUT_MS)
              .catch((error) =>
                this.log.warn(
                  { coordinator: id, topic: old.name, error: String(error) },
                  'telling a group coordinator about a deleted topic failed',
                ),
              ),
          ),
        );
      }
    }
    // Topics start in parallel (a restart recovers every partition at once, spread over the pool).
    await Promise.all(
      image.topics.map(async (topic) => {
        const known = this.topicsById.get(topic.topicId);
        if (known) {
          if (JSON.stringify(known.configs) !== JSON.stringify(topic.configs)) await this.updateTopicConfig(topic);
          if (topic.partitions.length === known.partitions.length) return;
        }
        const start = known ? known.partitions.length : 0;
        await Promise.all(
          topic.partitions.slice(start).map(async (p) => {
            if (p.leader === this.nodeId) await this.startLeader(topic, p);
          }),
        );
        this.topicsById.set(topic.topicId, topic);
        this.topicsByName.set(topic.name, topic);
      }),
    );
  }

  /**
   * Starts this broker's leader replica of `p` (and, for __consumer_offsets, its group coordinator).
   * A start that fails on the disk (ENOSPC, EIO: an errno error) does not fail the metadata update:
   * the controller committed the topic, so it stays in the cache and the partition is recorded
   * offline here, retried every {@link OFFLINE_REPLICA_RETRY_MS}. Any other error is rethrown.
   * Idempotent: a replica or coordinator already running is kept, so a retry starts only what is missing.
   */
  private async startLeader(topic: TopicState, p: PartitionState): Promise<void> {
    const key = `${topic.name}\0${p.partition}`;
    try {
      let actorId = this.leaders.get(key);
      if (actorId === undefined) {
        const dirName = `${topic.name}-${p.partition}`;
        const logDir = this.partitionDirs.get(dirName) ?? this.chooseLogDir();
        this.partitionDirs.set(dirName, logDir);
        actorId = replicaActorId(this.nodeId, topic.topicId, p.partition);
        this.roles.set(`${topic.topicId}/${p.partition}`, {
          leader: this.nodeId,
          leaderEpoch: p.leaderEpoch,
          partitionEpoch: 0,
          replicas: [this.nodeId],
          isr: p.isr,
          config: effectiveLogConfig(topic.configs, this.config),
        });
        const args: ReplicaArgs = {
          topic: topic.name,
          topicId: topic.topicId,
          partition: p.partition,
          logDir,
          brokerId: this.nodeId,
          brokerEpoch: 0,
          manager: replicaManagerActorId(this.nodeId),
          logDirActor: this.logDirActors[this.logDirs.indexOf(logDir)]!,
          checkpointIntervalMs: this.config.replicaHighWatermarkCheckpointIntervalMs,
          retentionCheckIntervalMs: this.config.logRetentionCheckIntervalMs,
          replication: {
            replicaLagTimeMaxMs: this.config.replicaLagTimeMaxMs,
            replicaFetchMaxBytes: this.config.replicaFetchMaxBytes,
            replicaFetchWaitMaxMs: this.config.replicaFetchWaitMaxMs,
            replicaFetchBackoffMs: this.config.replicaFetchBackoffMs,
          },
        };
        await this.runtime.spawn(actorId, 'replica', args, { pool: 'broker', brokerId: this.nodeId });
        this.leaders.set(key, actorId);
      }
      if (topic.name === OFFSETS_TOPIC && !this.coordinators.has(p.partition))
        await this.startGroupCoordinator(p.partition, actorId);
      if (this.offline.delete(key))
        this.log.info({ topic: topic.name, partition: p.partition }, 'offline partition is online again');
    } catch (error) {
      // An errno (ENOSPC, EIO, ...; not node's ERR_* codes) is the disk's doing (storage-error.ts's rule).
      if (!/^E[A-Z0-9]+$/.test(errnoCode(error) ?? '')) throw error;
      const reason = (error as Error).message;
      if (!this.offline.has(key))
        this.log.error(
          { topic: topic.name, partition: p.partition, error: reason },
          `partition ${topic.name}-${p.partition} could not start on the disk and is offline: ` +
            `requests for it answer KAFKA_STORAGE_ERROR; retrying every ${OFFLINE_REPLICA_RETRY_MS} ms`,
        );
      this.offline.set(key, { topicId: topic.topicId, reason });
      this.scheduleOfflineRetry();
    }
  }

  /** Arms the retry of the offline partitions (once; it re-arms itself while some stay offline). */
  private scheduleOfflineRetry(): void {
    if (this.offlineRetryTimer !== null || this.stopped) return;
    this.offlineRetryTimer = this.timers.setTimeout(() => {
      this.offlineRetryTimer = null;
      // Through the apply chain, so a retry never races a metadata update (a deletion, a new image).
      const retry = this.applyChain.then(() => this.retryOfflineNow());
      this.applyChain = retry.catch((error) =>
        this.log.error({ error: String(error) }, 'retrying offline partitions failed'),
      );
    }, OFFLINE_REPLICA_RETRY_MS);
  }

  private async retryOfflineNow(): Promise<void> {
    if (this.stopped) return;
    await Promise.all(
      [...this.offline.entries()].map(async ([key, entry]) => {
        const partition = Number(key.slice(key.lastIndexOf('\0') + 1));
        const topic = this.topicsById.get(entry.topicId);
        const p = topic?.partitions[partition];
        if (topic === undefined || p === undefined || p.leader !== this.nodeId) {
          this.offline.delete(key); // deleted or led elsewhere meanwhile
          return;
        }
        await this.startLeader(topic, p);
      }),
    );
  }
}
