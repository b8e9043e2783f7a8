/**
 * Wiring of a Skiff cluster in one process (DESIGN.md "The pieces"): one runtime, the controller on a
 * worker of its own, and per broker a network node on the main thread (broker-node.ts: listener and
 * metadata cache) and a replica manager actor on the broker's own worker pool, which starts that
 * broker's log-dir actors, replicas and group coordinators. `--nodes 1` is the single broker of
 * before, with the same data-dir layout; `--nodes N` gives broker i the port `port + i` and the log
 * dirs `<dir>/node-i`, with the controller's metadata log beside them.
 *
 * A broker can be crashed (its workers terminated at once, its listener and connections closed, its
 * in-memory state gone; the controller fences it at once) and started again (the same port, logs
 * recovered from disk, a new registration with a new broker epoch), or stopped cleanly (controlled
 * shutdown: leadership moves away first). Stopping the cluster stops brokers, then the controller.
 */
import path from 'node:path';
import type { BrokerConfig } from './config/broker-config';
import { CONTROLLER_ACTOR_ID } from './controller/messages';
import type { ControllerArgs } from './controller/controller-actor';
import type { Logger } from './io/logger';
import type { Runtime } from './runtime/runtime';
import { ThreadRuntime } from './runtime/thread-runtime';
import { replicaActorId } from './replica/messages';
import type { ReplicaManagerArgs } from './replica-manager/replica-manager-actor';
import { replicaManagerRef } from './replica-manager/messages';
import { BrokerNode, CONTROLLER_TIMEOUT_MS } from './broker-node';
import { lockLogDir, unlockLogDir } from './log-dir-lock';
import { METADATA_DIR, validateLogDirs } from './log-dir-validation';
import { EXIT_CONFIG, EXIT_FAILURE, StartupError, unlessAborted } from './startup-error';
import { promises as fsp } from 'node:fs';
import type { MetadataImage } from './controller/metadata-records';
import type { RequestDoneInfo } from './network/dispatcher';
import { AdminListenError, checkAdminPortFree, startAdminServer } from './admin/admin-server';
import type { AdminServer } from './admin/admin-server';
import { BrokerStateError, UnknownBrokerError } from './admin/cluster-view';
import type { BrokerInfo, ClusterObserver, ClusterView, PartitionInfo } from './admin/cluster-view';

export { OFFLINE_REPLICA_RETRY_MS } from './replica-manager/replica-manager-actor';

/** The controller's actor id. */
export const CONTROLLER_ID = CONTROLLER_ACTOR_ID;
/** How long a clean stop of one broker waits for the controller to move its leaderships away (ms). */
const CONTROLLED_SHUTDOWN_TIMEOUT_MS = 10_000;

/** A running broker (the cluster's first, for `--nodes 1` callers). */
export interface RunningBroker {
  /** The port the Kafka listener is bound to (the chosen one when the config said 0). */
  boundPort: number;
  clusterId: string;
  /** Orderly shutdown: listener, replicas (flush + checkpoint), log dirs, controller, workers. */
  stop(): Promise<void>;
}

/** The state of one broker of a running cluster, as the admin API shows it. */
export type BrokerRunState = 'running' | 'stopped';

/** A running cluster of brokers in this process. */
export interface RunningCluster {
  clusterId: string;
  /** Every broker: node id and bound port, in node id order. */
  brokers(): { nodeId: number; port: number; state: BrokerRunState }[];
  /**
   * Crashes broker `nodeId` as a killed process would: its workers terminate, its listener and client
   * connections close, nothing is flushed. Rejects for an unknown or already stopped broker.
   */
  crashBroker(nodeId: number): Promise<void>;
  /** Starts a crashed or stopped broker again on its port; resolves once it serves. */
  startBroker(nodeId: number): Promise<void>;
  /** Stops one broker cleanly (controlled shutdown first). */
  stopBroker(nodeId: number): Promise<void>;
  /** The admin HTTP API's port (null without `adminPort`). */
  readonly adminPort: number | null;
  /** Orderly shutdown of every broker, then the controller and the workers. */
  stop(): Promise<void>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** How many brokers (node ids 0..nodes-1; default 1). */
  nodes?: number;
  runtime?: Runtime;
  signal?: AbortSignal;
  /** Serve the admin HTTP API on 127.0.0.1:adminPort (0 picks a free port); null or absent: none. */
  adminPort?: number | null;
  /** A port in use for the admin API only warns (the port was not asked for: the default). */
  adminPortOptional?: boolean;
  /** Let the admin API crash and start brokers (`--fault-injection`). */
  faultInjection?: boolean;
}

/**
 * Starts a broker with `config` (a cluster of one). Rejects (after stopping what started) with a
 * {@link StartupError} when a log dir is refused or the port is taken, with StartAbortedError when
 * `options.signal` aborts first, and with the actor's error when an actor fails to start.
 */
export async function startBroker(
  config: BrokerConfig,
  logger: Logger,
  options: { runtime?: Runtime; signal?: AbortSignal } = {},
): Promise<RunningBroker> {
  const cluster = await startCluster(config, logger, { ...options, nodes: 1 });
  const [first] = cluster.brokers();
  return { boundPort: first!.port, clusterId: cluster.clusterId, stop: () => cluster.stop() };
}

/** The controller's spawn arguments for a cluster of `nodeIds` with broker defaults from `config`. */
export function controllerArgsFor(config: BrokerConfig, nodeIds: number[], metadataDir: string): ControllerArgs {
  return {
    metadataDir,
    nodeIds,
    numPartitions: config.numPartitions,
    defaultReplicationFactor: config.defaultReplicationFactor,
    brokerSessionTimeoutMs: config.brokerSessionTimeoutMs,
    uncleanLeaderElectionEnable: config.uncleanLeaderElectionEnable,
    autoLeaderRebalanceEnable: config.autoLeaderRebalanceEnable,
    leaderImbalanceCheckIntervalSeconds: config.leaderImbalanceCheckIntervalSeconds,
    leaderImbalancePerBrokerPercentage: config.leaderImbalancePerBrokerPercentage,
  };
}

/** Broker `index`'s config in a cluster of `nodes`: node id, port + index, `<dir>/node-<index>` when nodes > 1. */
export function nodeConfig(config: BrokerConfig, index: number, nodes: number): BrokerConfig {
  if (nodes === 1) return { ...config, logDirs: config.logDirs.map((d) => path.resolve(d)) };
  const shift = <T extends { port: number }>(l: T): T => ({ ...l, port: l.port === 0 ? 0 : l.port + index });
  return {
    ...config,
    nodeId: index,
    listeners: config.listeners.map(shift),
    advertisedListeners: config.advertisedListeners.map(shift),
    logDirs: config.logDirs.map((d) => path.join(path.resolve(d), `node-${index}`)),
  };
}

/**
 * Refuses a data dir made for another cluster size: `node-<i>` dirs exist (a cluster of several) but
 * not as many as `nodes`, or a single broker's layout when `nodes` > 1 (or the reverse).
 */
async function checkClusterSize(config: BrokerConfig, nodes: number): Promise<void> {
  const first = path.resolve(config.logDirs[0]!);
  const names: string[] = await fsp.readdir(first).catch(() => []);
  const indexes = names.flatMap((n) => (/^node-\d+$/.test(n) ? [Number(n.slice(5))] : []));
  const flat = names.some((n) => n === 'meta.properties' || /^.+-\d+$/.test(n)) && indexes.length === 0;
  const made = indexes.length > 0 ? Math.max(...indexes) + 1 : flat ? 1 : 0;
  if (made !== 0 && made !== nodes)
    throw new StartupError(
      `data dir ${first} was made by a cluster of ${made} broker${made === 1 ? '' : 's'}, not ${nodes}: ` +
        `start it with --nodes ${made}, or choose another data dir with --data-dir`,
      EXIT_CONFIG,
    );
  // Only a cluster that has run (its metadata log exists) can have had replicas on a missing broker.
  const ran = names.includes(METADATA_DIR);
  const missing = Array.from({ length: made }, (_, i) => i).filter((i) => made > 1 && !indexes.includes(i));
  if (ran && missing.length > 0)
    throw new StartupError(
      `data dir ${first} was made by a cluster of ${made} brokers but ${missing.map((i) => `node-${i}`).join(', ')} ` +
        `is missing: those brokers' logs are gone, and starting them empty could lose acknowledged records; ` +
        `restore the directory, or choose another data dir with --data-dir`,
      EXIT_FAILURE,
    );
}

/** Starts a cluster of `options.nodes` brokers (module comment); rejects as {@link startBroker}. */
export async function startCluster(
  config: BrokerConfig,
  logger: Logger,
  options: ClusterOptions = {},
): Promise<RunningCluster> {
  const nodes = options.nodes ?? 1;
  const configs = Array.from({ length: nodes }, (_, i) => nodeConfig(config, i, nodes));
  const ownRuntime =
    options.runtime === undefined
      ? new ThreadRuntime({
          brokers: configs.map((c) => ({ brokerId: c.nodeId, numIoThreads: c.numIoThreads })),
          logger,
          workerLogFd: 2,
        })
      : null;
  const runtime = options.runtime ?? ownRuntime!;
  const cluster = new Cluster(config, configs, logger, runtime);
  try {
    // A required admin port in use refuses the start before anything is written (README).
    if (options.adminPort !== undefined && options.adminPort !== null && options.adminPortOptional !== true)
      await checkAdminPortFree(options.adminPort).catch((error: unknown) => {
        if (error instanceof AdminListenError)
          throw new StartupError(`${error.message}: choose another port with --admin-port`, EXIT_FAILURE);
        throw error;
      });
    // Replica workers load their modules while the controller starts and the logs load, rather than
    // on the first topic creation or consumer group (ThreadRuntime.prestartWorkers); the start ends
    // once they have (Kafka enables its acceptors once its thread pools run). A runtime the caller
    // passed (tests) is left as it is.
    const workersLoaded = ownRuntime?.prestartWorkers();
    await cluster.start(options.signal);
    if (options.adminPort !== undefined && options.adminPort !== null)
      await cluster.startAdmin(options.adminPort, options.faultInjection ?? false, options.adminPortOptional ?? false);
    await workersLoaded;
  } catch (error) {
    await cluster.stop().catch(() => undefined);
    throw error;
  }
  return cluster;
}

interface NodeEntry {
  config: BrokerConfig;
  node: BrokerNode;
  state: BrokerRunState;
  /** The port it listens on: kept across a crash, so a restart binds it again. */
  port: number;
  /** A crash, start or stop of this broker is under way (another one is refused until it ends). */
  busy: boolean;
}

class Cluster implements RunningCluster {
  clusterId = '';
  adminPort: number | null = null;
  private admin: AdminServer | null = null;
  private readonly observers = new Set<ClusterObserver>();
  private newestImage: MetadataImage | null = null;
  private readonly entries: NodeEntry[] = [];
  private readonly lockedDirs: string[] = [];
  private readonly metadataDir: string;
  private served = false;
  private stopped = false;

  constructor(
    private readonly base: BrokerConfig,
    configs: BrokerConfig[],
    private readonly log: Logger,
    private readonly runtime: Runtime,
  ) {
    const nodes = configs.length;
    this.metadataDir = path.join(path.resolve(nodes === 1 ? configs[0]!.logDirs[0]! : base.logDirs[0]!), METADATA_DIR);
    for (const c of configs) {
      const endpoint = runtime.endpoint(`net/${c.nodeId}`);
      const node = new BrokerNode(c, log.child({ nodeId: c.nodeId }), endpoint, {
        awaitApplied: (offset) => this.awaitApplied(offset),
        onImage: (image) => this.observeImage(image),
        onRequestDone: (info) => this.observeRequest(info),
      });
      this.entries.push({ config: c, node, state: 'stopped', port: 0, busy: false });
    }
    runtime.onWorkerRestart((info) => {
      // A restarted controller has forgotten its subscribers: the network nodes subscribe again (the
      // replica managers do so from their failed heartbeat).
      if (!info.actorIds.includes(CONTROLLER_ID)) return;
      for (const entry of this.entries)
        if (entry.state === 'running')
          entry.node
            .subscribe()
            .catch((error) =>
              this.log.warn({ nodeId: entry.config.nodeId, error: String(error) }, 'subscribing again failed'),
            );
    });
  }

  /**
   * Starts without writing into a log dir before it is validated and every listener bound: check the
   * dirs (read-only), bind the ports, lock the dirs, start the controller (metadata log, cluster id),
   * then each broker's replica manager (registration, log dirs, replicas). Requests that arrive
   * before the end wait. `signal` ends the start at its next step.
   */
  async start(signal?: AbortSignal): Promise<void> {
    const step = <T>(promise: Promise<T>): Promise<T> => unlessAborted(promise, signal);
    await step(checkClusterSize(this.base, this.entries.length));
    for (const entry of this.entries)
      await step(validateLogDirs(entry.config.logDirs, entry.config.nodeId, this.metadataDir));
    for (const entry of this.entries) {
      const listener = entry.config.listeners[0]!;
      entry.port = await step(entry.node.listen(listener.host, listener.port));
    }
    const staleOwners: number[] = [];
    for (const entry of this.entries)
      for (const logDir of entry.config.logDirs) {
        const lock = await step(lockLogDir(logDir));
        this.lockedDirs.push(logDir);
        if (lock.staleOwner !== null) staleOwners.push(lock.staleOwner);
      }
    const controllerArgs = controllerArgsFor(
      this.base,
      this.entries.map((e) => e.config.nodeId),
      this.metadataDir,
    );
    await step(this.runtime.spawn(CONTROLLER_ID, 'controller', controllerArgs, { pool: 'controller' }));
    for (const entry of this.entries) {
      const image = await step(entry.node.subscribe());
      this.clusterId = image.clusterId;
    }
    for (const entry of this.entries) await step(this.startManager(entry));
    await step(this.logLoadSummary(staleOwners));
    for (const entry of this.entries) entry.node.markReady();
    this.served = true;
    for (const entry of this.entries) {
      const listener = entry.config.listeners[0]!;
      this.log.info(
        {
          host: listener.host,
          port: entry.port,
          clusterId: this.clusterId,
          nodeId: entry.config.nodeId,
          logDirs: entry.config.logDirs,
        },
        'broker started',
      );
    }
  }

  /** Spawns broker `entry`'s replica manager; it registers, starts its log dirs and replicas, then resolves. */
  private async startManager(entry: NodeEntry): Promise<void> {
    const advertised = entry.config.advertisedListeners[0] ?? entry.config.listeners[0]!;
    const args: ReplicaManagerArgs = {
      config: entry.config,
      host: advertised.host,
      port: advertised.port === 0 ? entry.port : advertised.port,
    };
    const manager = replicaManagerRef(entry.config.nodeId);
    await this.runtime.spawn(manager, 'replica-manager', args, { pool: 'broker', brokerId: entry.config.nodeId });
    entry.state = 'running';
    // Its start registered and subscribed; this waits until it has applied that image (replicas started).
    const state = await entry.node.endpoint.request(
      manager,
      'replica-manager.await-applied',
      { offset: entry.node.cachedOffset },
      CONTROLLER_TIMEOUT_MS * 4,
    );
    entry.node.applyLocalState(state);
  }

  /** Every running broker's replica manager has applied `offset` (bounded; a broker that does not answer is skipped). */
  private async awaitApplied(offset: number): Promise<void> {
    await Promise.all(
      this.entries
        .filter((e) => e.state === 'running')
        .map((e) =>
          e.node.endpoint
            .request(
              replicaManagerRef(e.config.nodeId),
              'replica-manager.await-applied',
              { offset },
              CONTROLLER_TIMEOUT_MS,
            )
            .then((state) => e.node.applyLocalState(state))
            .catch(() => undefined),
        ),
    );
  }

  /**
   * One info line for the whole start instead of one per partition (those are at debug): how many
   * partitions were loaded and, after an unclean shutdown (a log dir's lock was left by a process
   * that is gone: Skiff's counterpart of Kafka's missing `.kafka_cleanshutdown`), how much recovery did.
   */
  private async logLoadSummary(staleOwners: number[]): Promise<void> {
    const total = { partitions: 0, segments: 0, scannedBytes: 0, truncatedBytes: 0, deletedSegments: 0, truncated: 0 };
    let coordinators = 0;
    for (const entry of this.entries) {
      const described = await entry.node.describeHosted(CONTROLLER_TIMEOUT_MS);
      coordinators += entry.node.groupCoordinators().length;
      total.partitions += described.length;
      for (const { description } of described) {
        const summary = description?.recovery;
        if (summary === undefined) continue;
        total.segments += summary.segments;
        total.scannedBytes += summary.scannedBytes;
        total.truncatedBytes += summary.truncatedBytes;
        total.deletedSegments += summary.deletedSegments;
        if (summary.truncatedBytes > 0 || summary.deletedSegments > 0) total.truncated += 1;
      }
    }
    const fields = {
      partitions: total.partitions,
      groupCoordinators: coordinators,
      segments: total.segments,
      recoveryScannedBytes: total.scannedBytes,
      recoveryTruncatedBytes: total.truncatedBytes,
      recoveryDeletedSegments: total.deletedSegments,
      partitionsTruncated: total.truncated,
    };
    if (staleOwners.length > 0) {
      this.log.info(
        { ...fields, previousOwner: staleOwners[0] },
        `recovered after an unclean shutdown: ${total.partitions} partitions checked from their recovery points, ` +
          `${total.scannedBytes} bytes scanned, ${total.truncatedBytes} bytes truncated in ${total.truncated} partitions`,
      );
    } else {
      this.log.info(fields, `loaded ${total.partitions} partitions and ${coordinators} group coordinators`);
    }
  }

  brokers(): { nodeId: number; port: number; state: BrokerRunState }[] {
    return this.entries.map((e) => ({ nodeId: e.config.nodeId, port: e.port, state: e.state }));
  }

  private entry(nodeId: number): NodeEntry {
    const entry = this.entries.find((e) => e.config.nodeId === nodeId);
    if (entry === undefined) throw new Error(`no broker ${nodeId} in this cluster`);
    return entry;
  }

  async crashBroker(nodeId: number): Promise<void> {
    const entry = this.entry(nodeId);
    if (entry.busy) throw new Error(`broker ${nodeId} is being crashed, started or stopped`);
    if (entry.state !== 'running') throw new Error(`broker ${nodeId} is not running`);
    entry.busy = true;
    try {
      await this.crashBrokerNow(nodeId, entry);
    } finally {
      entry.busy = false;
    }
  }

  private async crashBrokerNow(nodeId: number, entry: NodeEntry): Promise<void> {
    entry.state = 'stopped';
    entry.node.holdRequests();
    await entry.node.closeListener();
    await this.runtime.crashBroker(nodeId, 'crashed by request');
    await entry.node.endpoint
      .request(CONTROLLER_ID, 'controller.broker-down', { brokerId: nodeId, reason: 'crashed' }, CONTROLLER_TIMEOUT_MS)
      .catch((error) => this.log.warn({ nodeId, error: String(error) }, 'telling the controller of a crash failed'));
    this.log.warn({ nodeId }, 'broker crashed');
  }

  async startBroker(nodeId: number): Promise<void> {
    const entry = this.entry(nodeId);
    if (entry.busy) throw new Error(`broker ${nodeId} is being crashed, started or stopped`);
    if (entry.state !== 'stopped') throw new Error(`broker ${nodeId} is already running`);
    entry.busy = true;
    try {
      await this.startBrokerNow(nodeId, entry);
    } finally {
      entry.busy = false;
    }
  }

  private async startBrokerNow(nodeId: number, entry: NodeEntry): Promise<void> {
    const listener = entry.config.listeners[0]!;
    entry.node.holdRequests();
    entry.port = await entry.node.listen(listener.host, entry.port);
    try {
      await entry.node.subscribe();
      await this.startManager(entry);
    } catch (error) {
      // A start that failed leaves the broker stopped, its port free for the next try.
      entry.state = 'stopped';
      await entry.node.closeListener();
      throw error;
    }
    entry.node.markReady();
    this.log.info({ nodeId, port: entry.port }, 'broker started again');
  }

  async stopBroker(nodeId: number): Promise<void> {
    const entry = this.entry(nodeId);
    if (entry.busy) throw new Error(`broker ${nodeId} is being crashed, started or stopped`);
    if (entry.state !== 'running') throw new Error(`broker ${nodeId} is not running`);
    entry.busy = true;
    try {
      await this.stopBrokerNow(nodeId, entry);
    } finally {
      entry.busy = false;
    }
  }

  private async stopBrokerNow(nodeId: number, entry: NodeEntry): Promise<void> {
    await this.stopEntry(entry, this.base.controlledShutdownEnable && this.entries.length > 1);
    await entry.node.endpoint
      .request(
        CONTROLLER_ID,
        'controller.broker-down',
        { brokerId: nodeId, reason: 'shut down' },
        CONTROLLER_TIMEOUT_MS,
      )
      .catch(() => undefined);
  }

  /** Stops one broker's manager (and so its actors), then its listener. */
  private async stopEntry(entry: NodeEntry, controlled: boolean): Promise<void> {
    entry.state = 'stopped';
    await entry.node.endpoint
      .request(
        replicaManagerRef(entry.config.nodeId),
        'replica-manager.shutdown',
        { controlled, timeoutMs: CONTROLLED_SHUTDOWN_TIMEOUT_MS },
        CONTROLLED_SHUTDOWN_TIMEOUT_MS + CONTROLLER_TIMEOUT_MS,
      )
      .catch((error) => this.log.warn({ nodeId: entry.config.nodeId, error: String(error) }, 'broker stop failed'));
    entry.node.holdRequests();
    await entry.node.closeListener();
  }

  // ---- admin API ----

  /** Starts the admin HTTP API on 127.0.0.1:`port`; a port in use is a {@link StartupError}. */
  async startAdmin(port: number, faultInjection: boolean, optional: boolean): Promise<void> {
    try {
      this.admin = await startAdminServer(this.view(faultInjection), { port, logger: this.log });
    } catch (error) {
      if (!(error instanceof AdminListenError)) throw error;
      if (optional) {
        this.log.warn(
          { port, error: error.message },
          'admin API not started: its default port is taken (--admin-port chooses another)',
        );
        return;
      }
      throw new StartupError(`${error.message}: choose another port with --admin-port`, EXIT_FAILURE);
    }
    this.adminPort = this.admin.port;
    this.log.info({ port: this.adminPort, faultInjection }, 'admin API listening');
  }

  private observeImage(image: MetadataImage): void {
    if (this.newestImage !== null && image.offset <= this.newestImage.offset) return;
    this.newestImage = image;
    for (const observer of this.observers) observer.observeMetadata(image);
  }

  private observeRequest(info: RequestDoneInfo): void {
    for (const observer of this.observers) observer.recordRequest(info);
  }

  /** The cluster as the admin API sees it (admin/cluster-view.ts). */
  private view(faultInjection: boolean): ClusterView {
    const entryOf = (id: number): NodeEntry => {
      const entry = this.entries.find((e) => e.config.nodeId === id);
      if (entry === undefined) throw new UnknownBrokerError(id);
      return entry;
    };
    return {
      faultInjection,
      brokers: async (): Promise<BrokerInfo[]> =>
        this.entries.map((e) => {
          const registered = this.newestImage?.brokers.find((b) => b.nodeId === e.config.nodeId);
          const advertised = e.config.advertisedListeners[0] ?? e.config.listeners[0]!;
          return {
            id: e.config.nodeId,
            host: advertised.host,
            port: e.port,
            state: e.state === 'stopped' ? 'stopped' : registered?.fenced === true ? 'fenced' : 'running',
            brokerEpoch: registered?.brokerEpoch ?? -1,
          };
        }),
      partitions: () => this.describePartitions(),
      crashBroker: async (id) => {
        const entry = entryOf(id);
        if (entry.busy || entry.state !== 'running') throw new BrokerStateError(id, entry.state, 'crash');
        await this.crashBroker(id);
      },
      startBroker: async (id) => {
        const entry = entryOf(id);
        if (entry.busy || entry.state !== 'stopped') throw new BrokerStateError(id, entry.state, 'start');
        await this.startBroker(id);
      },
      stopBroker: async (id) => {
        const entry = entryOf(id);
        if (entry.busy || entry.state !== 'running') throw new BrokerStateError(id, entry.state, 'stop');
        await this.stopBroker(id);
      },
      watch: (observer) => {
        this.observers.add(observer);
        if (this.newestImage !== null) observer.observeMetadata(this.newestImage);
        return () => this.observers.delete(observer);
      },
    };
  }

  /** Every partition with its leader, ISR and each replica's LEO, fsynced offset and HW (-1 when its broker is down). */
  private async describePartitions(): Promise<PartitionInfo[]> {
    const image = this.newestImage;
    if (image === null) return [];
    const running = new Map(this.entries.filter((e) => e.state === 'running').map((e) => [e.config.nodeId, e]));
    const live = new Set(image.brokers.filter((b) => !b.fenced).map((b) => b.nodeId));
    const topics = [...image.topics].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const out: PartitionInfo[] = [];
    for (const topic of topics)
      for (const p of topic.partitions) {
        const perReplica = await Promise.all(
          p.replicas.map(async (brokerId) => {
            const unknown = { brokerId, logEndOffset: -1, fsyncedOffset: -1, highWatermark: -1 };
            const entry = running.get(brokerId);
            if (entry === undefined) return unknown;
            return entry.node.endpoint
              .request(replicaActorId(brokerId, topic.topicId, p.partition), 'replica.describe', {}, 5_000)
              .then((d) => ({
                brokerId,
                logEndOffset: d.logEndOffset,
                fsyncedOffset: d.fsyncedOffset,
                highWatermark: d.highWatermark,
              }))
              .catch(() => unknown);
          }),
        );
        out.push({
          topic: topic.name,
          partition: p.partition,
          leader: p.leader,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicas,
          isr: p.isr,
          offlineReplicas: p.replicas.filter((id) => !live.has(id)),
          perReplica,
        });
      }
    return out;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.admin?.close().catch(() => undefined);
    for (const entry of this.entries) await entry.node.closeListener();
    await Promise.all(this.entries.filter((e) => e.state === 'running').map((e) => this.stopEntry(e, false)));
    await this.runtime.stopActor(CONTROLLER_ID).catch(() => undefined);
    for (const entry of this.entries) entry.node.endpoint.close();
    await this.runtime.shutdown();
    for (const logDir of this.lockedDirs) await unlockLogDir(logDir).catch(() => undefined);
    if (this.served) this.log.info({ nodes: this.entries.length }, 'broker stopped');
    else this.log.debug({}, 'stopped what the failed start had started');
  }
}
