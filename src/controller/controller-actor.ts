/**
 * The controller actor: the single writer of cluster metadata (DESIGN.md "Controller actor").
 * Every change is appended to the metadata log (fsynced, one frame per change) and only then applied,
 * so a restart (the supervisor re-spawns it) replays the log into the same state, and commits a
 * controller epoch one above the last. After every change the whole new image goes to every
 * subscriber (`metadata.update`).
 *
 * It owns topics (create, delete, configs, partitions, with Kafka's rack-unaware replica assignment
 * over the active brokers), broker registration and sessions (a broker silent for
 * broker.session.timeout.ms is fenced), elections when a broker leaves or returns or a replica fails on
 * its disk (out of the ISR and leadership until its broker registers again), AlterPartition,
 * ElectLeaders and the leader imbalance check (replication-control.ts), and producer ids. Its
 * messages are declared with their bodies and replies in messages.ts.
 *
 * A metadata-log append the disk refuses (a full disk, EIO, a failed fsync) is an operating error
 * (STYLE.md habit 3), not a crash: the log cuts the frame back (metadata-log.ts), nothing is applied,
 * and the command is answered KAFKA_STORAGE_ERROR (see {@link ControllerActor.commit}). Kafka wraps
 * an IOException of a log in a KafkaStorageException (UnifiedLog's maybeHandleIOException), an
 * ApiException that the QuorumController's ControllerExceptions.toExternalException passes to the
 * client unchanged (UNKNOWN_SERVER_ERROR is what it gives exceptions it did not expect, i.e. bugs);
 * the code is retriable, so clients back off and try again, and the next command after space is
 * freed succeeds. Registrations, fencing and ISR changes that fail are retried by their senders (the
 * next heartbeat, the next session check, the next ISR check).
 */
import type { Actor, ActorContext, ActorRef, Envelope, EnvelopeOf } from '../runtime/actor';
import type { TimerHandle } from '../io/clock';
import type {
  AlterConfigResult,
  AlterTopicConfigsCommand,
  ControllerMessages,
  CreatePartitionsCommand,
  CreatePartitionsResult,
  CreateTopicResult,
  CreateTopicsCommand,
  DeleteTopicResult,
  MetadataListenerMessages,
} from './messages';
import { ErrorCode } from '../protocol/error-codes';
import { MetadataLog } from './metadata-log';
import type { MetadataImage, MetadataRecord } from './metadata-records';
import { MetadataState } from './metadata-state';
import { BrokerSessions } from './broker-sessions';
import { partitionRecord } from './partition-change';
import { assignReplicasRackUnaware, manualAssignmentInvalidReason } from './replica-assignment';
import {
  alterPartition,
  brokerRemoval,
  electLeaders,
  leaderImbalanceElections,
  leaderlessElections,
  replicaOffline,
  uncleanElectionEnabled,
} from './replication-control';
import type { Decision } from './replication-control';
import { topicNameInvalidReason } from './topic-names';
import { randomUuid } from './uuid';
import { validateTopicConfigs } from '../config/topic-config';
import { isIoError } from '../storage/storage-error';

/** Above this many leader changes in one metadata change, they are logged as one info line (each at debug). */
const LEADER_CHANGES_LOGGED_ONE_BY_ONE = 5;

/** Spawn arguments of the controller. */
export interface ControllerArgs {
  /** Directory of the metadata log (under the first log dir). */
  metadataDir: string;
  /** The cluster's node ids (0..N-1): only these may register. */
  nodeIds: number[];
  /** Broker defaults for CreateTopics with -1 and for auto-creation. */
  numPartitions: number;
  defaultReplicationFactor: number;
  /** broker.session.timeout.ms: a broker without a heartbeat for longer is fenced. */
  brokerSessionTimeoutMs: number;
  /** unclean.leader.election.enable, the default of the topic config of the same name. */
  uncleanLeaderElectionEnable: boolean;
  /** auto.leader.rebalance.enable, checked every leader.imbalance.check.interval.seconds. */
  autoLeaderRebalanceEnable: boolean;
  leaderImbalanceCheckIntervalSeconds: number;
  /** leader.imbalance.per.broker.percentage: the share of not-led preferred partitions tolerated. */
  leaderImbalancePerBrokerPercentage: number;
}

/** Upper bound on partitions per CreateTopics topic (a guard against absurd requests). */
const MAX_PARTITIONS_PER_TOPIC = 10_000;

/** How long after a fence the disk refused the session check tries again (the session stays expired). */
const FAILED_FENCE_RETRY_MS = 1_000;

/** The message of a KAFKA_STORAGE_ERROR answer: the metadata log refused the change. */
const STORAGE_ERROR_MESSAGE = 'The controller could not write the change to its metadata log (a disk error).';

export class ControllerActor implements Actor<ControllerMessages> {
  private log!: MetadataLog;
  private ctx!: ActorContext;
  private readonly state = new MetadataState();
  private readonly subscribers = new Map<string, ActorRef<MetadataListenerMessages>>();
  private readonly sessions = new BrokerSessions();
  private sessionTimer: TimerHandle | null = null;
  private imbalanceTimer: TimerHandle | null = null;
  /**
   * The start's controller-epoch record when the disk refused it: it goes into the next change that
   * is committed (the epoch goes up with the first change the restarted controller makes), so a
   * restart on a full disk still starts. Empty once committed.
   */
  private pendingStartRecords: MetadataRecord[] = [];

  constructor(private readonly args: ControllerArgs) {}

  /**
   * Replays the log and commits the new controller epoch. Async so that a refused log (the throw of
   * MetadataLog.open) fails the spawn as a rejected start: the simulation runtime of main reports a
   * synchronous throw from `start` as "crashed while starting" (an unhandled rejection of its abort
   * promise) instead of the error itself.
   */
  async start(ctx: ActorContext): Promise<void> {
    this.ctx = ctx;
    const { log, records, frames } = MetadataLog.open(ctx.fs, this.args.metadataDir, ctx.log);
    this.log = log;
    for (const record of records) this.state.apply(record);
    this.state.offset = frames;
    const startRecords: MetadataRecord[] = [];
    if (this.state.clusterId === '') startRecords.push({ type: 'cluster', clusterId: randomUuid(ctx.random) });
    startRecords.push({ type: 'controller-epoch', controllerEpoch: this.state.controllerEpoch + 1 });
    if (this.commit(startRecords) !== ErrorCode.NONE) {
      // A new cluster without its cluster id cannot serve (brokers stamp it into meta.properties).
      if (this.state.clusterId === '')
        throw new Error(
          `the controller could not write its first record to the metadata log in ${this.args.metadataDir}`,
        );
      this.pendingStartRecords = startRecords;
      ctx.log.warn(
        { controllerEpoch: this.state.controllerEpoch + 1 },
        'the new controller epoch is not in the metadata log yet: it goes in with the next change',
      );
    }
    // A restarted controller gives every live broker a whole session before fencing it; a leader
    // named by a log that predates registration gets one too, to register in.
    const nowMs = ctx.clock.monotonicMs();
    for (const brokerId of this.args.nodeIds) {
      if (this.state.isActive(brokerId) || (!this.state.isRegistered(brokerId) && this.state.leadsAny(brokerId)))
        this.sessions.touch(brokerId, nowMs);
    }
    this.scheduleSessionCheck();
    if (this.args.autoLeaderRebalanceEnable) this.scheduleImbalanceCheck();
    ctx.log.info(
      {
        clusterId: this.state.clusterId,
        controllerEpoch: this.state.controllerEpoch,
        topics: this.state.topicsById.size,
        brokers: this.state.brokers.size,
        records: records.length,
      },
      'controller started from metadata log',
    );
  }

  receive(envelope: EnvelopeOf<ControllerMessages>, ctx: ActorContext): void {
    // The runtime delivers any kind sent to this id: `unknown` keeps a handle for the default branch.
    const unknown: Envelope = envelope;
    switch (envelope.type) {
      case 'controller.get-metadata':
        ctx.reply(envelope, this.image());
        return;
      case 'controller.subscribe':
        this.subscribers.set(envelope.body.listener, envelope.body.listener);
        ctx.reply(envelope, this.image());
        return;
      case 'controller.create-topics':
        ctx.reply(envelope, { results: this.createTopics(envelope.body, ctx), image: this.image() });
        return;
      case 'controller.delete-topics':
        ctx.reply(envelope, { results: envelope.body.topics.map((t) => this.deleteTopic(t)), image: this.image() });
        return;
      case 'controller.alter-topic-configs':
        ctx.reply(envelope, { results: this.alterTopicConfigs(envelope.body), image: this.image() });
        return;
      case 'controller.create-partitions':
        ctx.reply(envelope, { results: this.createPartitions(envelope.body), image: this.image() });
        return;
      case 'controller.init-producer-id': {
        const producerId = this.state.nextProducerId;
        const errorCode = this.commit([{ type: 'producer-ids', nextProducerId: producerId + 1 }]);
        if (errorCode !== ErrorCode.NONE) ctx.reply(envelope, { errorCode, producerId: -1, producerEpoch: -1 });
        else ctx.reply(envelope, { errorCode, producerId, producerEpoch: 0 });
        return;
      }
      case 'controller.register-broker':
        ctx.reply(envelope, this.registerBroker(envelope.body));
        return;
      case 'controller.broker-heartbeat':
        ctx.reply(envelope, this.brokerHeartbeat(envelope.body));
        return;
      case 'controller.broker-down':
        // Refused by the disk: the broker keeps its session, whose expiry fences it (the session check).
        this.fenceBroker(envelope.body.brokerId, `broker down: ${envelope.body.reason}`);
        ctx.reply(envelope, {});
        return;
      case 'controller.alter-partition': {
        const { result, records, reason } = alterPartition(this.state, envelope.body);
        if (reason !== null)
          ctx.log.info({ ...envelope.body, errorCode: result.errorCode, reason }, 'AlterPartition refused');
        const errorCode = this.commit(records);
        // The leader keeps its ISR and tries the change again at its next ISR check.
        ctx.reply(envelope, errorCode === ErrorCode.NONE ? result : { errorCode, state: null });
        return;
      }
      case 'controller.replica-offline': {
        const { errorCode, reason, decision } = replicaOffline(
          this.state,
          envelope.body,
          this.args.uncleanLeaderElectionEnable,
        );
        if (reason !== null) ctx.log.info({ ...envelope.body, errorCode, reason }, 'replica-offline refused');
        // Refused by the disk: the replica manager reports it again after its next heartbeat.
        const committed = this.commitDecision(
          decision,
          `replica of broker ${envelope.body.brokerId} offline on the disk`,
        );
        if (committed !== ErrorCode.NONE) {
          ctx.reply(envelope, { errorCode: committed });
          return;
        }
        if (reason === null && decision.records.length > 0)
          ctx.log.warn(
            { ...envelope.body },
            'replica offline on the disk: out of the ISR and leadership until its broker restarts',
          );
        ctx.reply(envelope, { errorCode });
        return;
      }
      case 'controller.elect-leaders': {
        const { results, decision } = electLeaders(this.state, envelope.body.electionType, envelope.body.partitions);
        const errorCode = this.commitDecision(decision, 'ElectLeaders');
        if (errorCode === ErrorCode.NONE) ctx.reply(envelope, { results });
        else
          ctx.reply(envelope, {
            results: results.map((r) =>
              r.errorCode === ErrorCode.NONE ? { ...r, errorCode, errorMessage: STORAGE_ERROR_MESSAGE } : r,
            ),
          });
        return;
      }
      default:
        ctx.log.warn({ type: unknown.type, from: unknown.from }, 'controller ignores unknown message type');
    }
  }

  stop(): void {
    if (this.sessionTimer) this.ctx.timers.clearTimeout(this.sessionTimer);
    if (this.imbalanceTimer) this.ctx.timers.clearTimeout(this.imbalanceTimer);
    this.log.close();
  }

  /**
   * Appends the records of one change as one frame (durably), applies them, and pushes the new image
   * to every subscriber; returns NONE. An empty change writes and pushes nothing (NONE).
   *
   * When the disk refuses the append (an I/O error: ENOSPC, EIO, a failed fsync) returns
   * KAFKA_STORAGE_ERROR (logged) having applied and pushed nothing: the log is as before the append
   * (MetadataLog.append), so the in-memory state still matches it and the next change tries again.
   * Any other throw (a programmer error) propagates and crashes the actor.
   */
  private commit(records: MetadataRecord[]): number {
    if (records.length === 0) return ErrorCode.NONE;
    const change = [...this.pendingStartRecords, ...records];
    try {
      this.log.append(change);
    } catch (error) {
      if (!isIoError(error)) throw error;
      this.ctx.log.error(
        { error: error.message, code: error.code, records: records.length, firstRecord: records[0]?.type },
        'the metadata log refused a change; answering KAFKA_STORAGE_ERROR',
      );
      return ErrorCode.KAFKA_STORAGE_ERROR;
    }
    this.pendingStartRecords = [];
    for (const record of change) this.state.apply(record);
    this.state.offset++;
    if (this.subscribers.size === 0) return ErrorCode.NONE;
    const image = this.image();
    for (const listener of this.subscribers.values()) this.ctx.send(listener, 'metadata.update', image);
    return ErrorCode.NONE;
  }

  /**
   * Commits a decision's records as one change, between `before` and `after` (the broker records
   * that go with them), and logs its leader changes under `cause`. Returns {@link commit}'s code
   * (nothing is logged as elected when the disk refused the change).
   */
  private commitDecision(
    decision: Decision,
    cause: string,
    before: MetadataRecord[] = [],
    after: MetadataRecord[] = [],
  ): number {
    const errorCode = this.commit([...before, ...decision.records, ...after]);
    if (errorCode !== ErrorCode.NONE) return errorCode;
    // One info line per change when few partitions move; a broker's restart or fencing moves all it
    // led: one summary line at info then, each partition at debug.
    const clean = decision.elected.filter((e) => !e.unclean);
    if (clean.length > LEADER_CHANGES_LOGGED_ONE_BY_ONE)
      this.ctx.log.info({ partitions: clean.length, cause }, 'partition leaders changed');
    for (const e of decision.elected) {
      if (e.unclean) this.ctx.log.warn({ ...e, cause }, 'unclean leader election: acknowledged records may be lost');
      else if (clean.length > LEADER_CHANGES_LOGGED_ONE_BY_ONE)
        this.ctx.log.debug({ ...e, cause }, 'partition leader changed');
      else this.ctx.log.info({ ...e, cause }, 'partition leader changed');
    }
    return ErrorCode.NONE;
  }

  private image(): MetadataImage {
    return this.state.image(this.args.nodeIds[0] ?? 0);
  }

  // ---- brokers ----

  /**
   * Registration: a new broker epoch (the offset of the frame that records it, so larger than any
   * before, as KRaft's), unfenced; leaderless partitions it can lead get it as leader in the same
   * change. A broker that registers while still unfenced (its process restarted before anyone
   * reported it down, or the whole host lost power) is fenced first, as KRaft fences a registration's
   * old incarnation: its leaderships move to other live ISR members or go leaderless, so whatever it
   * leads again does so in a new leader epoch. A restarted leader may have lost an unsynced tail
   * (write.caching=true); in its old epoch a follower that kept that tail would find no divergence
   * and keep bytes the new appends at the same offsets differ from (found by the verify campaign).
   */
  private registerBroker(body: { brokerId: number; host: string; port: number }): {
    errorCode: number;
    brokerEpoch: number;
  } {
    if (!this.args.nodeIds.includes(body.brokerId)) {
      this.ctx.log.warn({ brokerId: body.brokerId, nodeIds: this.args.nodeIds }, 'registration of an unknown node id');
      return { errorCode: ErrorCode.INVALID_REQUEST, brokerEpoch: -1 };
    }
    const previous = this.state.brokers.get(body.brokerId);
    if (previous !== undefined && !previous.fenced) {
      const fenced = this.fenceBroker(body.brokerId, `broker ${body.brokerId} registered again (restarted)`);
      if (fenced !== ErrorCode.NONE) return { errorCode: fenced, brokerEpoch: -1 };
    }
    const brokerEpoch = this.state.offset;
    const decision = leaderlessElections(this.state, body.brokerId, this.args.uncleanLeaderElectionEnable);
    const registration: MetadataRecord = {
      type: 'register-broker',
      brokerId: body.brokerId,
      brokerEpoch,
      host: body.host,
      port: body.port,
    };
    const errorCode = this.commitDecision(decision, `broker ${body.brokerId} registered`, [registration]);
    // Not registered: the broker tries again (its next heartbeat still finds its epoch stale).
    if (errorCode !== ErrorCode.NONE) return { errorCode, brokerEpoch: -1 };
    this.sessions.touch(body.brokerId, this.ctx.clock.monotonicMs());
    this.scheduleSessionCheck();
    this.ctx.log.info({ ...body, brokerEpoch, elected: decision.elected.length }, 'broker registered');
    return { errorCode: ErrorCode.NONE, brokerEpoch };
  }

  /**
   * A heartbeat: STALE_BROKER_EPOCH unless it names the broker's current registration; a fenced
   * broker stays fenced (it registers again to come back); otherwise its session is renewed. With
   * `wantShutDown` (controlled shutdown) its leaderships move to other live ISR members, it leaves
   * every ISR that has other members, and it is fenced, all in one change; it then leads nothing, so
   * `shutdownReady` (Kafka's BrokerHeartbeatManager goes CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW).
   */
  private brokerHeartbeat(body: { brokerId: number; brokerEpoch: number; wantShutDown?: boolean }): {
    errorCode: number;
    fenced: boolean;
    shutdownReady: boolean;
    controllerEpoch: number;
  } {
    const broker = this.state.brokers.get(body.brokerId);
    if (broker === undefined || broker.brokerEpoch !== body.brokerEpoch)
      return {
        errorCode: ErrorCode.STALE_BROKER_EPOCH,
        fenced: true,
        shutdownReady: false,
        controllerEpoch: this.state.controllerEpoch,
      };
    const wantShutDown = body.wantShutDown === true;
    if (broker.fenced)
      return {
        errorCode: ErrorCode.NONE,
        fenced: true,
        shutdownReady: wantShutDown,
        controllerEpoch: this.state.controllerEpoch,
      };
    if (!wantShutDown) {
      this.sessions.touch(body.brokerId, this.ctx.clock.monotonicMs());
      return {
        errorCode: ErrorCode.NONE,
        fenced: false,
        shutdownReady: false,
        controllerEpoch: this.state.controllerEpoch,
      };
    }
    const errorCode = this.fenceBroker(body.brokerId, 'controlled shutdown');
    // Not fenced: the broker's next shutdown heartbeat asks again.
    if (errorCode !== ErrorCode.NONE)
      return { errorCode, fenced: false, shutdownReady: false, controllerEpoch: this.state.controllerEpoch };
    return {
      errorCode: ErrorCode.NONE,
      fenced: true,
      shutdownReady: !this.state.leadsAny(body.brokerId),
      controllerEpoch: this.state.controllerEpoch,
    };
  }

  /**
   * Fences `brokerId` in one change: it leaves every ISR (see brokerRemoval), its leaderships move,
   * and a fence record ends its registration's right to lead. Idempotent: a fenced broker is in no
   * ISR it could leave and leads nothing, so nothing is written. A node that never registered but
   * is named by an older log loses its leaderships the same way, without a fence record. Returns
   * {@link commit}'s code: when the disk refused the change the broker keeps its session (expired or
   * not), so the session check fences it later.
   */
  private fenceBroker(brokerId: number, cause: string): number {
    const broker = this.state.brokers.get(brokerId);
    const decision = brokerRemoval(this.state, brokerId, this.args.uncleanLeaderElectionEnable);
    const fence: MetadataRecord[] =
      broker !== undefined && !broker.fenced
        ? [{ type: 'fence-broker', brokerId, brokerEpoch: broker.brokerEpoch }]
        : [];
    if (decision.records.length === 0 && fence.length === 0) {
      this.sessions.remove(brokerId);
      return ErrorCode.NONE;
    }
    const errorCode = this.commitDecision(decision, cause, [], fence);
    if (errorCode !== ErrorCode.NONE) {
      this.ctx.log.warn({ brokerId, cause }, 'fencing a broker failed on the metadata log; retrying later');
      return errorCode;
    }
    this.sessions.remove(brokerId);
    this.ctx.log.info({ brokerId, cause, partitionsChanged: decision.records.length }, 'broker fenced');
    return ErrorCode.NONE;
  }

  /**
   * Arms the session timer for the first session to expire (a pending one is never later), at
   * least `minDelayMs` from now (after a fence the disk refused: that session is still expired).
   */
  private scheduleSessionCheck(minDelayMs = 0): void {
    if (this.sessionTimer !== null) return;
    const expiryMs = this.sessions.nextExpiryMs(this.args.brokerSessionTimeoutMs);
    if (expiryMs === null) return;
    const delayMs = Math.max(minDelayMs, expiryMs - this.ctx.clock.monotonicMs());
    this.sessionTimer = this.ctx.timers.setTimeout(() => {
      this.sessionTimer = null;
      // One fence per change, as KRaft's maybeFenceOneStaleBroker: each is visible before the next.
      const nowMs = this.ctx.clock.monotonicMs();
      let refused = false;
      for (const brokerId of this.sessions.expired(nowMs, this.args.brokerSessionTimeoutMs)) {
        const errorCode = this.fenceBroker(
          brokerId,
          `no heartbeat for more than ${this.args.brokerSessionTimeoutMs} ms`,
        );
        if (errorCode !== ErrorCode.NONE) refused = true;
      }
      this.scheduleSessionCheck(refused ? FAILED_FENCE_RETRY_MS : 0);
    }, delayMs);
  }

  private scheduleImbalanceCheck(): void {
    this.imbalanceTimer = this.ctx.timers.setTimeout(() => {
      const decision = leaderImbalanceElections(this.state, this.args.leaderImbalancePerBrokerPercentage);
      this.commitDecision(decision, 'leader imbalance check');
      this.scheduleImbalanceCheck();
    }, this.args.leaderImbalanceCheckIntervalSeconds * 1000);
  }

  // ---- topics ----

  /**
   * The partitions of a new topic (or new partitions of one) on the given replica lists: the ISR is
   * the active replicas, the leader the first of them, both epochs 0 (`buildPartitionRegistration`).
   */
  private newPartitionRecords(topicId: string, firstPartition: number, assignments: number[][]): MetadataRecord[] {
    return assignments.map((replicas, i) => {
      const isr = replicas.filter((id) => this.state.isActive(id));
      return partitionRecord(topicId, {
        partition: firstPartition + i,
        replicas,
        isr,
        leader: isr[0] ?? -1,
        leaderEpoch: 0,
        partitionEpoch: 0,
      });
    });
  }

  /**
   * Why explicit assignments are refused (INVALID_REPLICA_ASSIGNMENT), or null: a bad replica list
   * (replica-assignment.ts), or a partition none of whose replicas is active (it could get no leader).
   */
  private assignmentsInvalidReason(
    assignments: readonly number[][],
    firstPartition: number,
    replicationFactor: number | null,
  ): string | null {
    let rf = replicationFactor;
    for (const [i, replicas] of assignments.entries()) {
      const reason = manualAssignmentInvalidReason(replicas, (id) => this.state.isRegistered(id), rf);
      if (reason !== null) return reason;
      rf = replicas.length;
      if (!replicas.some((id) => this.state.isActive(id)))
        return `All brokers specified in the manual partition assignment for partition ${firstPartition + i} are fenced or in controlled shutdown.`;
    }
    return null;
  }

  /** INVALID_REPLICATION_FACTOR's message when `replicationFactor` exceeds the active brokers, or null. */
  private replicationFactorUnreachable(replicationFactor: number): string | null {
    const active = this.state.activeBrokerIds().length;
    if (replicationFactor <= active) return null;
    return `Unable to replicate the partition ${replicationFactor} time(s): The target replication factor of ${replicationFactor} cannot be reached because only ${active} broker(s) are registered.`;
  }

  private createTopics(command: CreateTopicsCommand, ctx: ActorContext): CreateTopicResult[] {
    const seen = new Set<string>();
    return command.topics.map((request) => {
      const fail = (errorCode: number, errorMessage: string): CreateTopicResult => ({
        name: request.name,
        topicId: '',
        errorCode,
        errorMessage,
        numPartitions: -1,
        replicationFactor: -1,
      });
      const nameReason = topicNameInvalidReason(request.name);
      if (nameReason) return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, nameReason);
      if (seen.has(request.name))
        return fail(ErrorCode.INVALID_REQUEST, `Duplicate topic name ${request.name} in request`);
      seen.add(request.name);
      if (this.state.topicIdsByName.has(request.name))
        return fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${request.name}' already exists.`);
      // Kafka's Topic.hasCollision: '.' and '_' map to the same metric name, so such names collide.
      const unified = request.name.replaceAll('.', '_');
      const collision = [...this.state.topicIdsByName.keys()].find((name) => name.replaceAll('.', '_') === unified);
      if (collision)
        return fail(
          ErrorCode.INVALID_TOPIC_EXCEPTION,
          `Topic '${request.name}' collides with existing topic: ${collision}`,
        );
      const manual = request.assignments ?? [];
      let numPartitions: number;
      let replicationFactor: number;
      if (manual.length > 0) {
        // KRaft's createTopic: an explicit assignment needs -1 for both counts (KIP-464).
        if (request.replicationFactor !== -1)
          return fail(
            ErrorCode.INVALID_REQUEST,
            'A manual partition assignment was specified, but replication factor was not set to -1.',
          );
        if (request.numPartitions !== -1)
          return fail(
            ErrorCode.INVALID_REQUEST,
            'A manual partition assignment was specified, but numPartitions was not set to -1.',
          );
        const reason = this.assignmentsInvalidReason(manual, 0, null);
        if (reason !== null) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, reason);
        numPartitions = manual.length;
        replicationFactor = manual[0]!.length;
      } else {
        numPartitions = request.numPartitions === -1 ? this.args.numPartitions : request.numPartitions;
        replicationFactor =
          request.replicationFactor === -1 ? this.args.defaultReplicationFactor : request.replicationFactor;
      }
      if (numPartitions <= 0 || numPartitions > MAX_PARTITIONS_PER_TOPIC) {
        return fail(
          ErrorCode.INVALID_PARTITIONS,
          `Number of partitions must be larger than 0 and at most ${MAX_PARTITIONS_PER_TOPIC}.`,
        );
      }
      if (replicationFactor <= 0)
        return fail(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.');
      const unreachable = manual.length > 0 ? null : this.replicationFactorUnreachable(replicationFactor);
      if (unreachable !== null) return fail(ErrorCode.INVALID_REPLICATION_FACTOR, unreachable);
      const configError = validateTopicConfigs(request.configs);
      if (configError) return fail(ErrorCode.INVALID_CONFIG, configError);
      const topicId = randomUuid(ctx.random);
      if (!command.validateOnly) {
        const assignments =
          manual.length > 0
            ? manual.map((replicas) => [...replicas])
            : assignReplicasRackUnaware(numPartitions, replicationFactor, this.state.activeBrokerIds(), ctx.random);
        const errorCode = this.commit([
          { type: 'topic', name: request.name, topicId, configs: request.configs },
          ...this.newPartitionRecords(topicId, 0, assignments),
        ]);
        if (errorCode !== ErrorCode.NONE) return fail(errorCode, STORAGE_ERROR_MESSAGE);
        ctx.log.info({ topic: request.name, topicId, numPartitions, replicationFactor }, 'created topic');
      }
      return {
        name: request.name,
        topicId,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        numPartitions,
        replicationFactor,
      };
    });
  }

  private createPartitions(command: CreatePartitionsCommand): CreatePartitionsResult[] {
    const seen = new Set<string>();
    return command.topics.map((request) => {
      const fail = (errorCode: number, errorMessage: string) => ({ name: request.name, errorCode, errorMessage });
      if (seen.has(request.name)) return fail(ErrorCode.INVALID_REQUEST, `Duplicate topic ${request.name} in request`);
      seen.add(request.name);
      const topic = this.state.topicByName(request.name);
      if (!topic) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${request.name}' does not exist.`);
      const current = topic.partitions.length;
      if (request.count <= current) {
        return fail(
          ErrorCode.INVALID_PARTITIONS,
          `Topic currently has ${current} partitions, which is higher than the requested ${request.count}.`,
        );
      }
      if (request.count > MAX_PARTITIONS_PER_TOPIC)
        return fail(ErrorCode.INVALID_PARTITIONS, `At most ${MAX_PARTITIONS_PER_TOPIC} partitions per topic`);
      const replicationFactor = topic.partitions[0]?.replicas.length ?? 1;
      const added = request.count - current;
      if (request.assignments !== null) {
        if (request.assignments.length !== added) {
          return fail(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            `Increasing the number of partitions by ${added} but ${request.assignments.length} assignments provided.`,
          );
        }
        const reason = this.assignmentsInvalidReason(request.assignments, current, replicationFactor);
        if (reason !== null) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, reason);
      } else {
        const unreachable = this.replicationFactorUnreachable(replicationFactor);
        if (unreachable !== null) return fail(ErrorCode.INVALID_REPLICATION_FACTOR, unreachable);
      }
      if (!command.validateOnly) {
        let assignments: number[][];
        if (request.assignments !== null) assignments = request.assignments.map((replicas) => [...replicas]);
        else {
          // AdminZkClient.createPartitions: continue the layout from partition 0's preferred leader.
          const active = this.state.activeBrokerIds();
          const first = topic.partitions[0]?.replicas[0] ?? 0;
          const startIndex = Math.max(
            0,
            active.findIndex((id) => id >= first),
          );
          assignments = assignReplicasRackUnaware(
            added,
            replicationFactor,
            active,
            this.ctx.random,
            startIndex,
            current,
          );
        }
        const errorCode = this.commit(this.newPartitionRecords(topic.topicId, current, assignments));
        if (errorCode !== ErrorCode.NONE) return fail(errorCode, STORAGE_ERROR_MESSAGE);
      }
      return { name: request.name, errorCode: ErrorCode.NONE, errorMessage: null };
    });
  }

  private alterTopicConfigs(command: AlterTopicConfigsCommand): AlterConfigResult[] {
    return command.resources.map((resource) => {
      const topic = this.state.topicByName(resource.topic);
      if (!topic)
        return {
          topic: resource.topic,
          errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          errorMessage: `Topic ${resource.topic} does not exist`,
        };
      const next: Record<string, string> = command.incremental ? { ...topic.configs } : {};
      for (const { name, op, value } of resource.ops) {
        if (op === 'delete') {
          delete next[name];
          continue;
        }
        if (value === null)
          return {
            topic: resource.topic,
            errorCode: ErrorCode.INVALID_CONFIG,
            errorMessage: `Null value not supported for ${name}`,
          };
        if (op === 'set') next[name] = value;
        else {
          // APPEND / SUBTRACT apply to list configs only (cleanup.policy here), KIP-339.
          if (name !== 'cleanup.policy')
            return {
              topic: resource.topic,
              errorCode: ErrorCode.INVALID_CONFIG,
              errorMessage: `Config ${name} is not a list: ${op.toUpperCase()} is not allowed`,
            };
          const current = (next[name] ?? 'delete')
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean);
          const items = value
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean);
          const result =
            op === 'append'
              ? [...current, ...items.filter((i) => !current.includes(i))]
              : current.filter((c) => !items.includes(c));
          next[name] = result.join(',');
        }
      }
      const reason = validateTopicConfigs(next);
      if (reason) return { topic: resource.topic, errorCode: ErrorCode.INVALID_CONFIG, errorMessage: reason };
      if (!command.validateOnly) {
        // Turning unclean election on elects the topic's leaderless partitions in the same change.
        const configRecord: MetadataRecord = { type: 'topic-configs', topicId: topic.topicId, configs: next };
        const enabled = uncleanElectionEnabled({ ...topic, configs: next }, this.args.uncleanLeaderElectionEnable);
        const decision = enabled ? leaderlessElections(this.state, null, true, topic) : { records: [], elected: [] };
        const errorCode = this.commitDecision(decision, `unclean.leader.election.enable on ${topic.name}`, [
          configRecord,
        ]);
        if (errorCode !== ErrorCode.NONE)
          return { topic: resource.topic, errorCode, errorMessage: STORAGE_ERROR_MESSAGE };
      }
      return { topic: resource.topic, errorCode: ErrorCode.NONE, errorMessage: null };
    });
  }

  private deleteTopic(request: { name: string | null; topicId: string | null }): DeleteTopicResult {
    const topicId =
      request.topicId && request.topicId !== 'AAAAAAAAAAAAAAAAAAAAAA'
        ? request.topicId
        : request.name
          ? this.state.topicIdsByName.get(request.name)
          : undefined;
    const topic = topicId ? this.state.topicsById.get(topicId) : undefined;
    if (!topic) {
      const errorCode =
        request.topicId && request.topicId !== 'AAAAAAAAAAAAAAAAAAAAAA'
          ? ErrorCode.UNKNOWN_TOPIC_ID
          : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      return {
        name: request.name,
        topicId: request.topicId ?? 'AAAAAAAAAAAAAAAAAAAAAA',
        errorCode,
        errorMessage: 'This server does not host this topic-partition.',
      };
    }
    const errorCode = this.commit([{ type: 'remove-topic', topicId: topic.topicId }]);
    if (errorCode !== ErrorCode.NONE)
      return { name: topic.name, topicId: topic.topicId, errorCode, errorMessage: STORAGE_ERROR_MESSAGE };
    return { name: topic.name, topicId: topic.topicId, errorCode: ErrorCode.NONE, errorMessage: null };
  }
}

/** Actor factory registered as kind `controller` (src/runtime/registry.ts). */
export function createControllerActor(args: ControllerArgs): Actor {
  return new ControllerActor(args);
}
