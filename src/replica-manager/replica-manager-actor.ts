/**
 * The replica manager actor, one per broker (DESIGN.md "Replica manager actor"; Kafka's
 * ReplicaManager): it owns its broker's replica lifecycle. At start it registers the broker with the
 * controller (a new broker epoch), subscribes to metadata pushes, starts its log-dir actors and
 * applies the image; then every pushed image (`metadata.update`, ignored unless newer than the one it
 * applied) is applied in order:
 * - a partition assigned to this broker gets a replica actor if it has none (spawned on this broker's
 *   pool), and every replica whose role (leader, epochs, ISR, config) changed is told so
 *   (`replica.update-role`: become-leader / become-follower);
 * - a replica whose topic was deleted (or which is no longer assigned here) deletes its log;
 * - a group coordinator runs beside every __consumer_offsets partition this broker leads, and stops
 *   when leadership moves away (clients then get NOT_COORDINATOR and look it up again).
 * A replica restarted by the supervisor asks it for its current role (`replica-manager.replica-state`)
 * instead of trusting its spawn arguments. A leader's ISR change goes through it to the controller
 * (`replica-manager.alter-partition`), with the broker epoch. It heartbeats the controller every
 * broker.heartbeat.interval.ms; a failed heartbeat (the controller restarting) makes it subscribe
 * again, so no image is missed.
 *
 * A replica or coordinator that cannot start on the disk (an errno error: ENOSPC, EIO) leaves its
 * partition offline on this broker, retried every {@link OFFLINE_REPLICA_RETRY_MS}; the network layer
 * learns of it from `net.local-state` and answers KAFKA_STORAGE_ERROR.
 *
 * A replica of a replicated partition whose disk failed under it (a failed fsync) reports itself
 * offline (`replica-manager.replica-offline`): it is listed offline the same way, never retried, and
 * reported to the controller (`controller.replica-offline`, retried with the heartbeats until the
 * controller takes it, and again after a re-registration), which takes it out of the ISR and out of
 * leadership until this broker registers again at its next start (KIP-112's offline log dir).
 */
import { isActorExistsError } from '../runtime/actor';
import type { Actor, ActorContext, ActorId, ActorRef, Envelope, EnvelopeOf } from '../runtime/actor';
import type { Placement } from '../runtime/placement';
import type { TimerHandle } from '../io/clock';
import type { BrokerConfig } from '../config/broker-config';
import { effectiveLogConfig } from '../config/topic-config';
import { CONTROLLER_ACTOR_ID } from '../controller/messages';
import type { MetadataImage, PartitionState, TopicState } from '../controller/metadata-records';
import { ErrorCode } from '../protocol/error-codes';
import type { ReplicaArgs } from '../replica/replica-actor';
import { logDirActorId, replicaActorId } from '../replica/messages';
import type { LogDirMessages, PartitionRole, ReplicaMessages } from '../replica/messages';
import { forgetCheckpointEntries, type LogDirArgs } from '../replica/log-dir-actor';
import type { GroupCoordinatorArgs } from '../group/group-coordinator-actor';
import { groupCoordinatorActorId } from '../group/messages';
import type { GroupCoordinatorMessages } from '../group/messages';
import { OFFSETS_TOPIC } from '../group/offsets-records';
import { readPartitionMetadata } from '../storage/checkpoint';
import { networkNodeRef, replicaManagerRef } from './messages';
import type { LocalBrokerState, OfflinePartition, ReplicaManagerMessages } from './messages';

/** How often the manager retries starting the replicas and coordinators a disk error kept from starting (ms). */
export const OFFLINE_REPLICA_RETRY_MS = 3_000;
/** How long a request to the controller or a local actor may take before the manager gives up on it (ms). */
const REQUEST_TIMEOUT_MS = 30_000;

/** Spawn arguments of a replica manager. */
export interface ReplicaManagerArgs {
  /** This broker's config (node.id, log.dirs already resolved to this broker's dirs, defaults). */
  config: BrokerConfig;
  /** The advertised listener it registers with (the bound port, never 0). */
  host: string;
  port: number;
}

interface HostedReplica {
  topic: string;
  topicId: string;
  partition: number;
  actor: ActorRef<ReplicaMessages>;
  /** The role last sent (or answered) to the replica, by (leaderEpoch, partitionEpoch, config). */
  roleKey: string;
}

type ManagerEnvelope<K extends keyof ReplicaManagerMessages & string> = EnvelopeOf<ReplicaManagerMessages, K>;

/** `${topicId}/${partition}`: a hosted partition's key. */
function keyOf(topicId: string, partition: number): string {
  return `${topicId}/${partition}`;
}

/** True for a file-system error (an errno code such as ENOSPC, EIO), as opposed to a bug. */
function isDiskError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && !isActorExistsError(error);
}

/** One broker's replica manager (module comment). */
export class ReplicaManagerActor implements Actor<ReplicaManagerMessages> {
  private readonly brokerId: number;
  private brokerEpoch = -1;
  private image: MetadataImage | null = null;
  /** The topics of `image` by topic id (a role lookup per partition must not scan every topic). */
  private topicsById = new Map<string, TopicState>();
  /** `effectiveLogConfig` of each topic of `image` by topic id, computed once per image. */
  private configsById = new Map<string, { config: PartitionRole['config']; key: string }>();
  /** The offset of the last image whose application finished (replicas started, deleted logs gone). */
  private appliedOffset = -1;
  /** The last LocalBrokerState.version handed out. */
  private localStateVersion = 0;
  private readonly replicas = new Map<string, HostedReplica>();
  /** `${topic}-${partition}` -> the log dir holding it (found on disk at start, or chosen). */
  private readonly partitionDirs = new Map<string, string>();
  /** How many entries of `partitionDirs` each log dir holds, kept with it ({@link setPartitionDir}). */
  private readonly partitionsPerDir = new Map<string, number>();
  private readonly logDirActors: ActorRef<LogDirMessages>[] = [];
  /** __consumer_offsets partition -> its coordinator on this broker. */
  private readonly coordinators = new Map<number, ActorRef<GroupCoordinatorMessages>>();
  private readonly offline = new Map<string, OfflinePartition>();
  /**
   * Replicas offline after a storage error until this broker restarts (never retried), by partition key;
   * `reported`: the controller has taken the report.
   */
  private readonly failedReplicas = new Map<string, OfflinePartition & { topicId: string; reported: boolean }>();
  private applyChain: Promise<void> = Promise.resolve();
  private readonly waiters: { offset: number; envelope: ManagerEnvelope<'replica-manager.await-applied'> }[] = [];
  private heartbeatTimer: TimerHandle | null = null;
  private offlineTimer: TimerHandle | null = null;
  private resubscribe = false;
  private stopping = false;

  constructor(private readonly args: ReplicaManagerArgs) {
    this.brokerId = args.config.nodeId;
  }

  async start(ctx: ActorContext): Promise<void> {
    const { config } = this.args;
    const registration = await ctx.request(
      CONTROLLER_ACTOR_ID,
      'controller.register-broker',
      { brokerId: this.brokerId, host: this.args.host, port: this.args.port },
      REQUEST_TIMEOUT_MS,
    );
    if (registration.errorCode !== ErrorCode.NONE)
      throw new Error(
        `broker ${this.brokerId}: the controller refused its registration (error ${registration.errorCode})`,
      );
    this.brokerEpoch = registration.brokerEpoch;
    const image = await ctx.request(
      CONTROLLER_ACTOR_ID,
      'controller.subscribe',
      { listener: replicaManagerRef(this.brokerId) },
      REQUEST_TIMEOUT_MS,
    );
    for (const [index, logDir] of config.logDirs.entries()) {
      const id = logDirActorId(this.brokerId, index);
      const directoryId = ctx.random.bytes16().toString('base64url');
      const args: LogDirArgs = { logDir, clusterId: image.clusterId, nodeId: this.brokerId, directoryId };
      await this.spawnChild(ctx, id, 'log-dir', args);
      this.logDirActors.push(id);
    }
    this.scanLogDirs(ctx);
    // Not awaited: the replicas it starts ask this manager for their role while they start, which it
    // can answer only once its own start is done. `replica-manager.await-applied` tells when it is.
    void this.enqueueApply(ctx, image);
    this.armHeartbeat(ctx);
    ctx.log.debug({ brokerId: this.brokerId, brokerEpoch: this.brokerEpoch }, 'replica manager started');
  }

  receive(envelope: EnvelopeOf<ReplicaManagerMessages>, ctx: ActorContext): void | Promise<void> {
    const unknown: Envelope = envelope;
    switch (envelope.type) {
      case 'metadata.update':
        void this.enqueueApply(ctx, envelope.body);
        return;
      case 'replica-manager.replica-state':
        ctx.reply(envelope, { role: this.roleFor(envelope.body.topicId, envelope.body.partition) });
        return;
      case 'replica-manager.alter-partition':
        return this.alterPartition(envelope, ctx);
      case 'replica-manager.replica-offline':
        return this.replicaOffline(envelope, ctx);
      case 'replica-manager.await-applied':
        if (this.appliedOffset >= envelope.body.offset) ctx.reply(envelope, this.localState());
        else this.waiters.push({ offset: envelope.body.offset, envelope });
        return;
      case 'replica-manager.hosted':
        ctx.reply(envelope, {
          partitions: [...this.replicas.values()].map((r) => ({
            topic: r.topic,
            partition: r.partition,
            topicId: r.topicId,
            logDir: this.partitionDirs.get(`${r.topic}-${r.partition}`) ?? '',
          })),
        });
        return;
      case 'replica-manager.shutdown':
        return this.shutdown(envelope, ctx);
      default:
        ctx.log.warn({ type: unknown.type, from: unknown.from }, 'replica manager ignores unknown message type');
    }
  }

  stop(ctx: ActorContext): void {
    this.stopping = true;
    if (this.heartbeatTimer !== null) ctx.timers.clearTimeout(this.heartbeatTimer);
    if (this.offlineTimer !== null) ctx.timers.clearTimeout(this.offlineTimer);
  }

  /**
   * Spawns a child on this broker's pool; returns false when it is already running (this manager was
   * restarted by the supervisor while its children lived on other workers: it adopts them).
   */
  private async spawnChild(ctx: ActorContext, id: ActorId, kind: string, args: unknown): Promise<boolean> {
    const placement: Placement = { pool: 'broker', brokerId: this.brokerId };
    try {
      await ctx.spawn(id, kind, args, placement);
      return true;
    } catch (error) {
      if (isActorExistsError(error)) return false;
      throw error;
    }
  }

  // ---- metadata ----

  /** Applies `image` after the ones before it; an image not newer than the last applied is ignored. */
  private enqueueApply(ctx: ActorContext, image: MetadataImage): Promise<void> {
    const next = this.applyChain.then(async () => {
      if (this.stopping) return;
      if (this.image !== null && image.offset <= this.image.offset) return;
      await this.apply(ctx, image);
    });
    this.applyChain = next.catch((error) =>
      ctx.log.error({ brokerId: this.brokerId, error: String(error) }, 'applying metadata failed'),
    );
    return next;
  }

  private async apply(ctx: ActorContext, image: MetadataImage): Promise<void> {
    const previous = this.image;
    this.image = image;
    this.topicsById = new Map(image.topics.map((t) => [t.topicId, t]));
    this.configsById = new Map();
    if (previous === null) await this.removeStrayPartitions(ctx, image);
    const assigned = new Map<string, { topic: TopicState; p: PartitionState }>();
    for (const topic of image.topics)
      for (const p of topic.partitions)
        if (p.replicas.includes(this.brokerId)) assigned.set(keyOf(topic.topicId, p.partition), { topic, p });
    // Gone: deleted topics (or partitions no longer assigned here) delete their logs, all at once:
    // one at a time, each replica's removal of its entries made the log-dir actor rewrite its
    // checkpoints once per partition (about 30 partitions a second), and DeleteTopics waits for this.
    const deletedTopics = new Set<string>();
    const liveTopicIds = new Set(image.topics.map((t) => t.topicId));
    const gone = [...this.replicas.entries()].filter(([key]) => !assigned.has(key));
    for (const [key, hosted] of gone) {
      this.replicas.delete(key);
      if (!liveTopicIds.has(hosted.topicId)) deletedTopics.add(hosted.topic);
      this.deletePartitionDir(`${hosted.topic}-${hosted.partition}`);
    }
    await Promise.all(
      gone.map(async ([, hosted]) => {
        await this.stopCoordinatorIf(ctx, hosted.topic, hosted.partition);
        await ctx
          .request(hosted.actor, 'replica.delete', {}, REQUEST_TIMEOUT_MS)
          .catch((error) => ctx.log.warn({ actor: hosted.actor, error: String(error) }, 'replica delete failed'));
      }),
    );
    for (const key of [...this.failedReplicas.keys()]) if (!assigned.has(key)) this.failedReplicas.delete(key);
    for (const [key, entry] of [...this.offline.entries()])
      if (!assigned.has(key)) {
        this.offline.delete(key);
        await this.removeOrphanDir(ctx, entry.topic, entry.partition);
      }
    for (const name of deletedTopics) if (name !== OFFSETS_TOPIC) await this.tellCoordinatorsDeleted(ctx, name);
    if (previous !== null)
      for (const topic of previous.topics)
        if (!image.topics.some((t) => t.topicId === topic.topicId))
          ctx.log.info({ topic: topic.name, topicId: topic.topicId }, 'deleted topic');
    // New or changed: start replicas (in parallel: a restart recovers every partition at once).
    await Promise.all([...assigned.entries()].map(([key, { topic, p }]) => this.ensureReplica(ctx, key, topic, p)));
    this.appliedOffset = image.offset;
    this.pushLocalState(ctx);
    for (const waiter of this.waiters.splice(0))
      if (image.offset >= waiter.offset) ctx.reply(waiter.envelope, this.localState());
      else this.waiters.push(waiter);
  }

  /** The role of this broker's replica of a partition in the current image, or null if not assigned here. */
  private roleFor(topicId: string, partition: number): PartitionRole | null {
    const topic = this.topicsById.get(topicId);
    const p = topic?.partitions[partition];
    if (topic === undefined || p === undefined || !p.replicas.includes(this.brokerId)) return null;
    return {
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      partitionEpoch: p.partitionEpoch,
      replicas: p.replicas,
      isr: p.isr,
      config: this.topicConfig(topic).config,
    };
  }

  /** The topic's effective log config and its change key, once per topic per image (1,000 partitions share it). */
  private topicConfig(topic: TopicState): { config: PartitionRole['config']; key: string } {
    let entry = this.configsById.get(topic.topicId);
    if (entry === undefined) {
      entry = { config: effectiveLogConfig(topic.configs, this.args.config), key: JSON.stringify(topic.configs) };
      this.configsById.set(topic.topicId, entry);
    }
    return entry;
  }

  /**
   * Starts this broker's replica of `p` if it has none, tells it its new role if that changed, and
   * starts or stops the group coordinator of a __consumer_offsets partition with its leadership. A
   * start that fails on the disk records the partition offline (retried); other errors are rethrown.
   */
  private async ensureReplica(ctx: ActorContext, key: string, topic: TopicState, p: PartitionState): Promise<void> {
    const role = this.roleFor(topic.topicId, p.partition);
    if (role === null) return;
    const roleKey = `${role.leaderEpoch}/${role.partitionEpoch}/${this.topicConfig(topic).key}`;
    // Offline until this broker restarts (it could not start on the disk): not retried.
    if (this.failedReplicas.has(key) && !this.replicas.has(key)) return;
    try {
      let hosted = this.replicas.get(key);
      if (hosted === undefined) {
        const actor = replicaActorId(this.brokerId, topic.topicId, p.partition);
        const spawned = await this.spawnChild(ctx, actor, 'replica', this.replicaArgs(topic, p.partition));
        hosted = { topic: topic.name, topicId: topic.topicId, partition: p.partition, actor, roleKey };
        this.replicas.set(key, hosted);
        // An adopted replica may hold an older role than this image's.
        if (!spawned) await ctx.request(actor, 'replica.update-role', role, REQUEST_TIMEOUT_MS);
      } else if (hosted.roleKey !== roleKey) {
        hosted.roleKey = roleKey;
        await ctx.request(hosted.actor, 'replica.update-role', role, REQUEST_TIMEOUT_MS);
      }
      if (topic.name === OFFSETS_TOPIC) {
        if (p.leader === this.brokerId) await this.startCoordinator(ctx, p.partition, hosted.actor);
        else await this.stopCoordinatorIf(ctx, topic.name, p.partition);
      }
      if (this.offline.delete(key))
        ctx.log.info({ topic: topic.name, partition: p.partition }, 'offline partition is online again');
    } catch (error) {
      if (!isDiskError(error)) throw error;
      const reason = (error as Error).message;
      // A replicated partition's replica that cannot start on its disk is an offline log dir's
      // (KIP-112): reported to the controller, which moves leadership and the ISR to the other
      // replicas, and not retried until this broker starts again (the failed-fsync case's path).
      if (p.replicas.length > 1) {
        if (!this.failedReplicas.has(key)) {
          ctx.log.error(
            { topic: topic.name, partition: p.partition, error: reason },
            `replica of ${topic.name}-${p.partition} could not start on the disk and is offline until this broker restarts: ` +
              'requests for it answer KAFKA_STORAGE_ERROR',
          );
          this.failedReplicas.set(key, {
            topic: topic.name,
            partition: p.partition,
            reason,
            topicId: topic.topicId,
            reported: false,
          });
          this.pushLocalState(ctx);
          void this.reportOfflineReplicas(ctx);
        }
        return;
      }
      if (!this.offline.has(key))
        ctx.log.error(
          { topic: topic.name, partition: p.partition, error: reason },
          `partition ${topic.name}-${p.partition} could not start on the disk and is offline: ` +
            `requests for it answer KAFKA_STORAGE_ERROR; retrying every ${OFFLINE_REPLICA_RETRY_MS} ms`,
        );
      this.offline.set(key, { topic: topic.name, partition: p.partition, reason });
      this.armOfflineRetry(ctx);
    }
  }

  private replicaArgs(topic: TopicState, partition: number): ReplicaArgs {
    const { config } = this.args;
    const dirName = `${topic.name}-${partition}`;
    const logDir = this.partitionDirs.get(dirName) ?? this.chooseLogDir();
    this.setPartitionDir(dirName, logDir);
    return {
      topic: topic.name,
      topicId: topic.topicId,
      partition,
      logDir,
      brokerId: this.brokerId,
      brokerEpoch: this.brokerEpoch,
      manager: replicaManagerRef(this.brokerId),
      logDirActor: this.logDirActors[config.logDirs.indexOf(logDir)]!,
      checkpointIntervalMs: config.replicaHighWatermarkCheckpointIntervalMs,
      retentionCheckIntervalMs: config.logRetentionCheckIntervalMs,
      replication: {
        replicaLagTimeMaxMs: config.replicaLagTimeMaxMs,
        replicaFetchMaxBytes: config.replicaFetchMaxBytes,
        replicaFetchWaitMaxMs: config.replicaFetchWaitMaxMs,
        replicaFetchBackoffMs: config.replicaFetchBackoffMs,
      },
    };
  }

  /** Starts the coordinator of a __consumer_offsets partition beside its replica, unless it runs. */
  private async startCoordinator(
    ctx: ActorContext,
    partition: number,
    replicaActor: ActorRef<ReplicaMessages>,
  ): Promise<void> {
    if (this.coordinators.has(partition)) return;
    const { config } = this.args;
    const id = groupCoordinatorActorId(this.brokerId, partition);
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
    await this.spawnChild(ctx, id, 'group-coordinator', args);
    this.coordinators.set(partition, id);
  }

  private async stopCoordinatorIf(ctx: ActorContext, topic: string, partition: number): Promise<void> {
    if (topic !== OFFSETS_TOPIC) return;
    const coordinator = this.coordinators.get(partition);
    if (coordinator === undefined) return;
    this.coordinators.delete(partition);
    this.pushLocalState(ctx); // NOT_COORDINATOR from now on
    await ctx.stopActor(coordinator).catch(() => undefined);
  }

  /** Kafka's onPartitionsDeleted: every local coordinator drops the groups' offsets of a deleted topic. */
  private async tellCoordinatorsDeleted(ctx: ActorContext, topic: string): Promise<void> {
    await Promise.all(
      [...this.coordinators.values()].map((id) =>
        ctx
          .request(id, 'group.topics-deleted', { topics: [topic] }, REQUEST_TIMEOUT_MS)
          .catch((error) =>
            ctx.log.warn(
              { coordinator: id, topic, error: String(error) },
              'telling a group coordinator about a deleted topic failed',
            ),
          ),
      ),
    );
  }

  // ---- log dirs ----

  /** Finds the partition directories already on disk, so a restarted broker reopens them in place. */
  private scanLogDirs(ctx: ActorContext): void {
    for (const logDir of this.args.config.logDirs) {
      const names = ctx.fs.exists(logDir) ? ctx.fs.readdir(logDir) : [];
      for (const name of names) if (/^.+-\d+$/.test(name)) this.setPartitionDir(name, logDir);
    }
  }

  /**
   * At the first image after a start: partition directories whose topic id (partition.metadata) is
   * in no topic of the image belong to topics deleted while this broker was down; they are removed
   * (their checkpoint entries first: {@link forgetCheckpoints}), as Kafka's broker deletes stray logs
   * at start-up. A directory without a readable
   * partition.metadata is left alone (nothing says whose it is).
   */
  private async removeStrayPartitions(ctx: ActorContext, image: MetadataImage): Promise<void> {
    const live = new Set(image.topics.map((t) => t.topicId));
    const strays: { name: string; logDir: string; topicId: string }[] = [];
    for (const [name, logDir] of this.partitionDirs.entries()) {
      const topicId = readPartitionMetadata(ctx.fs, `${logDir}/${name}/partition.metadata`, ctx.log)?.topicId;
      if (topicId !== undefined && !live.has(topicId)) strays.push({ name, logDir, topicId });
    }
    // All at once, so the log-dir actors rewrite their checkpoints once for every stray.
    await Promise.all(
      strays.map(({ name, logDir }) => {
        const dash = name.lastIndexOf('-');
        return this.forgetCheckpoints(ctx, logDir, name.slice(0, dash), Number(name.slice(dash + 1)));
      }),
    );
    for (const { name, logDir, topicId } of strays) {
      const dir = `${logDir}/${name}`;
      try {
        ctx.fs.rmrf(dir);
        this.deletePartitionDir(name);
        ctx.log.info({ dir, topicId }, 'removed the log of a topic deleted while this broker was down');
      } catch (error) {
        ctx.log.warn({ dir, error: String(error) }, 'removing a stray partition directory failed');
      }
    }
  }

  /**
   * The log dir for a new partition: the one holding the fewest partitions (Kafka's rule), the first
   * of `log.dirs` on a tie. Reads the counts {@link setPartitionDir} keeps, so starting N partitions
   * is not O(N²).
   */
  private chooseLogDir(): string {
    let best = this.args.config.logDirs[0]!;
    for (const dir of this.args.config.logDirs)
      if ((this.partitionsPerDir.get(dir) ?? 0) < (this.partitionsPerDir.get(best) ?? 0)) best = dir;
    return best;
  }

  /** Records that partition directory `name` is in `logDir` (moving its count if it was elsewhere). */
  private setPartitionDir(name: string, logDir: string): void {
    const previous = this.partitionDirs.get(name);
    if (previous === logDir) return;
    if (previous !== undefined) this.partitionsPerDir.set(previous, this.partitionsPerDir.get(previous)! - 1);
    this.partitionDirs.set(name, logDir);
    this.partitionsPerDir.set(logDir, (this.partitionsPerDir.get(logDir) ?? 0) + 1);
  }

  private deletePartitionDir(name: string): void {
    const logDir = this.partitionDirs.get(name);
    if (logDir === undefined) return;
    this.partitionDirs.delete(name);
    this.partitionsPerDir.set(logDir, this.partitionsPerDir.get(logDir)! - 1);
  }

  /**
   * Removes `topic`-`partition`'s entries from `logDir`'s checkpoint files (the log-dir actor answers
   * once it has rewritten them) before its directory goes: entries left behind would be read by a
   * later partition of that name as its own (its log start offset, recovery point and HW) once its
   * directory exists, as Kafka's LogManager never does (it checkpoints only the logs it holds).
   * A log-dir actor that does not answer is warned about; the removal goes on.
   */
  private async forgetCheckpoints(ctx: ActorContext, logDir: string, topic: string, partition: number): Promise<void> {
    const actor = this.logDirActors[this.args.config.logDirs.indexOf(logDir)];
    if (actor !== undefined) await forgetCheckpointEntries(ctx, actor, topic, partition, REQUEST_TIMEOUT_MS);
  }

  /** A deleted partition that never started here: what its failed start left on disk goes. */
  private async removeOrphanDir(ctx: ActorContext, topic: string, partition: number): Promise<void> {
    const dirName = `${topic}-${partition}`;
    const logDir = this.partitionDirs.get(dirName);
    this.deletePartitionDir(dirName);
    if (logDir === undefined) return;
    await this.forgetCheckpoints(ctx, logDir, topic, partition);
    try {
      ctx.fs.rmrf(`${logDir}/${dirName}`);
    } catch (error) {
      ctx.log.warn({ dir: dirName, error: String(error) }, 'removing an offline partition failed');
    }
  }

  // ---- offline partitions ----

  private armOfflineRetry(ctx: ActorContext): void {
    if (this.offlineTimer !== null || this.stopping) return;
    this.offlineTimer = ctx.timers.setTimeout(() => {
      this.offlineTimer = null;
      const image = this.image;
      if (image === null || this.offline.size === 0) return;
      // Through the apply chain, so a retry never races a metadata update.
      const retry = this.applyChain.then(async () => {
        await Promise.all(
          [...this.offline.keys()].map(async (key) => {
            const [topicId, partition] = key.split('/') as [string, string];
            const topic = image.topics.find((t) => t.topicId === topicId);
            const p = topic?.partitions[Number(partition)];
            if (topic === undefined || p === undefined) this.offline.delete(key);
            else await this.ensureReplica(ctx, key, topic, p);
          }),
        );
        this.pushLocalState(ctx);
      });
      this.applyChain = retry.catch((error) =>
        ctx.log.error({ error: String(error) }, 'retrying offline partitions failed'),
      );
    }, OFFLINE_REPLICA_RETRY_MS);
  }

  // ---- controller ----

  /** A replica went offline after a storage error: listed offline here, and reported to the controller. */
  private replicaOffline(envelope: ManagerEnvelope<'replica-manager.replica-offline'>, ctx: ActorContext): void {
    const { topicId, partition, reason } = envelope.body;
    const key = keyOf(topicId, partition);
    const hosted = this.replicas.get(key);
    if (hosted === undefined || this.failedReplicas.has(key)) return;
    ctx.log.error(
      { topic: hosted.topic, partition, reason },
      `replica of ${hosted.topic}-${partition} is offline after a storage error until this broker restarts: ` +
        'requests for it answer KAFKA_STORAGE_ERROR',
    );
    this.failedReplicas.set(key, { topic: hosted.topic, partition, reason, topicId, reported: false });
    this.pushLocalState(ctx);
    void this.reportOfflineReplicas(ctx);
  }

  /**
   * Tells the controller of every offline replica it has not taken yet (`controller.replica-offline`
   * with this registration's epoch). A failed report is retried after the next heartbeat.
   */
  private async reportOfflineReplicas(ctx: ActorContext): Promise<void> {
    for (const entry of this.failedReplicas.values()) {
      if (entry.reported) continue;
      try {
        const { errorCode } = await ctx.request(
          CONTROLLER_ACTOR_ID,
          'controller.replica-offline',
          {
            brokerId: this.brokerId,
            brokerEpoch: this.brokerEpoch,
            topicId: entry.topicId,
            partition: entry.partition,
          },
          REQUEST_TIMEOUT_MS,
        );
        if (errorCode === ErrorCode.NONE) entry.reported = true;
        else
          ctx.log.warn(
            { topic: entry.topic, partition: entry.partition, errorCode },
            'the controller refused an offline replica report; retrying after the next heartbeat',
          );
      } catch (error) {
        ctx.log.warn(
          { topic: entry.topic, partition: entry.partition, error: String(error) },
          'offline replica report got no answer',
        );
      }
    }
  }

  private async alterPartition(
    envelope: ManagerEnvelope<'replica-manager.alter-partition'>,
    ctx: ActorContext,
  ): Promise<void> {
    const { topicId, partition, leaderEpoch, partitionEpoch, newIsr } = envelope.body;
    try {
      const result = await ctx.request(
        CONTROLLER_ACTOR_ID,
        'controller.alter-partition',
        {
          brokerId: this.brokerId,
          brokerEpoch: this.brokerEpoch,
          topicId,
          partition,
          leaderEpoch,
          partitionEpoch,
          newIsr,
        },
        REQUEST_TIMEOUT_MS,
      );
      const topic = this.image?.topics.find((t) => t.topicId === topicId);
      const role: PartitionRole | null =
        result.state === null || topic === undefined
          ? null
          : {
              leader: result.state.leader,
              leaderEpoch: result.state.leaderEpoch,
              partitionEpoch: result.state.partitionEpoch,
              replicas: result.state.replicas,
              isr: result.state.isr,
              config: effectiveLogConfig(topic.configs, this.args.config),
            };
      ctx.reply(envelope, { errorCode: result.errorCode, role });
    } catch (error) {
      ctx.log.warn({ topicId, partition, error: String(error) }, 'AlterPartition did not reach the controller');
      ctx.reply(envelope, { errorCode: ErrorCode.REQUEST_TIMED_OUT, role: null });
    }
  }

  private armHeartbeat(ctx: ActorContext): void {
    if (this.stopping) return;
    this.heartbeatTimer = ctx.timers.setTimeout(() => {
      this.heartbeatTimer = null;
      void this.heartbeat(ctx).finally(() => this.armHeartbeat(ctx));
    }, this.args.config.brokerHeartbeatIntervalMs);
  }

  /**
   * One heartbeat. A heartbeat that fails (the controller's worker restarting) or finds this broker
   * fenced or its epoch stale makes the manager register and subscribe again, so it never misses an image.
   */
  private async heartbeat(ctx: ActorContext, wantShutDown = false): Promise<boolean> {
    try {
      const reply = await ctx.request(
        CONTROLLER_ACTOR_ID,
        'controller.broker-heartbeat',
        { brokerId: this.brokerId, brokerEpoch: this.brokerEpoch, wantShutDown },
        this.args.config.brokerHeartbeatIntervalMs * 2,
      );
      if (wantShutDown) return reply.shutdownReady;
      // A restarted controller (a larger epoch than the image's) has forgotten its subscribers.
      if (this.image !== null && reply.controllerEpoch > this.image.controllerEpoch) this.resubscribe = true;
      if (reply.errorCode === ErrorCode.STALE_BROKER_EPOCH || (reply.fenced && !this.stopping)) {
        const registration = await ctx.request(
          CONTROLLER_ACTOR_ID,
          'controller.register-broker',
          { brokerId: this.brokerId, host: this.args.host, port: this.args.port },
          REQUEST_TIMEOUT_MS,
        );
        if (registration.errorCode === ErrorCode.NONE) this.brokerEpoch = registration.brokerEpoch;
        this.resubscribe = true;
        // A new registration starts with no offline replicas at the controller: they are still offline here.
        for (const entry of this.failedReplicas.values()) entry.reported = false;
      }
      if ([...this.failedReplicas.values()].some((e) => !e.reported)) await this.reportOfflineReplicas(ctx);
      if (this.resubscribe) {
        this.resubscribe = false;
        const image = await ctx.request(
          CONTROLLER_ACTOR_ID,
          'controller.subscribe',
          { listener: replicaManagerRef(this.brokerId) },
          REQUEST_TIMEOUT_MS,
        );
        void this.enqueueApply(ctx, image);
      }
      return false;
    } catch (error) {
      this.resubscribe = true;
      ctx.log.debug({ brokerId: this.brokerId, error: String(error) }, 'heartbeat failed');
      return false;
    }
  }

  // ---- network and shutdown ----

  private localState(): LocalBrokerState {
    return {
      appliedOffset: this.appliedOffset,
      brokerEpoch: this.brokerEpoch,
      offline: [
        ...this.offline.values(),
        ...[...this.failedReplicas.values()].map(({ topic, partition, reason }) => ({ topic, partition, reason })),
      ],
      coordinators: [...this.coordinators.keys()],
      version: ++this.localStateVersion,
    };
  }

  private pushLocalState(ctx: ActorContext): void {
    ctx.send(networkNodeRef(this.brokerId), 'net.local-state', this.localState());
  }

  private async shutdown(envelope: ManagerEnvelope<'replica-manager.shutdown'>, ctx: ActorContext): Promise<void> {
    const { controlled, timeoutMs } = envelope.body;
    if (controlled) {
      const deadline = ctx.clock.nowMs() + timeoutMs;
      while (ctx.clock.nowMs() < deadline && !(await this.heartbeat(ctx, true)))
        await new Promise<void>((resolve) => ctx.timers.setTimeout(resolve, 100));
    }
    this.stopping = true;
    if (this.heartbeatTimer !== null) ctx.timers.clearTimeout(this.heartbeatTimer);
    if (this.offlineTimer !== null) ctx.timers.clearTimeout(this.offlineTimer);
    this.heartbeatTimer = null;
    this.offlineTimer = null;
    await this.applyChain.catch(() => undefined);
    await Promise.all([...this.coordinators.values()].map((id) => ctx.stopActor(id).catch(() => undefined)));
    this.coordinators.clear();
    await Promise.all([...this.replicas.values()].map((r) => ctx.stopActor(r.actor).catch(() => undefined)));
    this.replicas.clear();
    await Promise.all(this.logDirActors.map((id) => ctx.stopActor(id).catch(() => undefined)));
    ctx.reply(envelope, {});
    ctx.exit();
  }
}

/** Actor factory registered as kind `replica-manager` (src/runtime/registry.ts). */
export function createReplicaManagerActor(args: ReplicaManagerArgs): Actor<ReplicaManagerMessages> {
  return new ReplicaManagerActor(args);
}
