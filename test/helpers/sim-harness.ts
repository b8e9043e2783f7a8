/**
 * The one harness for actors under the deterministic simulation runtime (seeded SimRuntime, virtual
 * time, a MemoryFileSystem that can lose unsynced bytes or tear the last write). Every sim test boots
 * its actors here, so the replica tests, the power-loss campaign, the group coordinator tests and
 * properties, and the controller tests share one set-up (code-review D26):
 *
 * - {@link bootReplica}: a log-dir actor and the replica of `t-0` ({@link REPLICA}), with a
 *   {@link FakeReplicaManager} giving it its role (leader, ISR = {0}).
 * - {@link bootCluster}: three brokers' log-dir actors and replicas of one partition, RF=3, and a
 *   {@link FakeReplicaManager} that elects, applies AlterPartition and pushes roles.
 * - {@link bootCoordinator}: a log-dir actor, the replica of `__consumer_offsets-0` ({@link OFFSETS_REPLICA})
 *   and its group coordinator ({@link COORDINATOR}), with {@link Member} as a client.
 * - {@link bootController}: the controller ({@link CONTROLLER}) on its metadata log.
 * - {@link powerLossRun}: the replica power-loss scenario, run for a few seeds by the unit test and for
 *   hundreds by the long campaign.
 * - {@link powerCycle}: a disk crash plus a crash and restart of the given actors, in start order.
 */
import assert from 'node:assert/strict';
import { SimRuntime } from '../../src/runtime/sim-runtime';
import { MemoryFileSystem } from '../../src/io/memory-file-system';
import type { CrashMode } from '../../src/io/memory-file-system';
import type { FileSystem } from '../../src/io/file-system';
import { buildRecordBatch } from '../../src/protocol/record-batch/builder';
import { decodeRecordBatches } from '../../src/protocol/record-batch/decode';
import { ErrorCode } from '../../src/protocol/error-codes';
import type { ReplicaArgs, ReplicationSettings } from '../../src/replica/replica-actor';
import { replicaActorId, replicaManagerActorId } from '../../src/replica/messages';
import type { LogDirMessages, PartitionRole, ReplicaHostMessages, ReplicaMessages } from '../../src/replica/messages';
import type { ReplicaLogConfig } from '../../src/config/topic-config';
import type { Envelope, EnvelopeOf } from '../../src/runtime/actor';
import type { LogDirArgs } from '../../src/replica/log-dir-actor';
import type { ControllerArgs } from '../../src/controller/controller-actor';
import { CONTROLLER_ACTOR_ID } from '../../src/controller/messages';
import { actorRef } from '../../src/runtime/actor';
import type { ActorId, ActorRef, MessageMap } from '../../src/runtime/actor';
import type { Logger } from '../../src/io/logger';
import type { Endpoint } from '../../src/runtime/runtime';
import { effectiveLogConfig } from '../../src/config/topic-config';
import { defaultBrokerConfig } from '../../src/config/broker-config';
import type { GroupCoordinatorArgs } from '../../src/group/group-coordinator-actor';
import type {
  CoordinatorErrorReply,
  GroupClientKind,
  GroupClientMessages,
  GroupClientRequestOf,
  GroupClientResultOf,
  GroupCoordinatorMessages,
  JoinResult,
  SyncResult,
  FetchOffsetsResult,
  CommitResult,
  DescribedGroup,
} from '../../src/group/messages';

// ---- shared -------------------------------------------------------------------------------------

export const LOG_DIR = '/data';
/** The topic ID of every partition the harness boots. */
export const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAg';
export const LOG_DIR_ACTOR = actorRef<LogDirMessages>('log-dir/0/0');
/** The endpoint every harness talks through, as the network layer does. */
export const NET = 'net/0';

/** Options of a simulated boot: `trace` records deliveries in `sim.trace`; `logger` replaces the silent one. */
export interface SimOptions {
  trace?: boolean;
  logger?: Logger;
}

function newSim(seed: number, fs: FileSystem, options: SimOptions): SimRuntime {
  return new SimRuntime({
    seed,
    fs,
    ...(options.trace !== undefined ? { trace: options.trace } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}

async function spawnLogDir(sim: SimRuntime, brokerId = 0, logDir = LOG_DIR): Promise<void> {
  const logDirArgs: LogDirArgs = {
    logDir,
    clusterId: 'AAAAAAAAAAAAAAAAAAAAAw',
    nodeId: brokerId,
    directoryId: 'AAAAAAAAAAAAAAAAAAAABA',
  };
  await sim.spawn(actorRef<LogDirMessages>(`log-dir/${brokerId}/0`), 'log-dir', logDirArgs, {
    pool: 'broker',
    brokerId,
  });
}

/** Replication settings of the simulated brokers: Kafka's defaults but a short fetch backoff. */
export const REPLICATION: ReplicationSettings = {
  replicaLagTimeMaxMs: 30_000,
  replicaFetchMaxBytes: 1 << 20,
  replicaFetchWaitMaxMs: 500,
  replicaFetchBackoffMs: 100,
};

/**
 * A replica manager for the simulation (what src/replica-manager/ is on a broker, reduced to a model):
 * one endpoint per broker at `replica-manager/<id>` that answers `replica-manager.replica-state` from
 * the model, applies `replica-manager.alter-partition` to it (checking the epochs, as the controller
 * does, and bumping the partition epoch) and pushes `replica.update-role` to every replica of the
 * partition. {@link elect} and {@link setConfig} change the model the same way. Every change and
 * AlterPartition is logged in {@link history}.
 */
export class FakeReplicaManager {
  readonly roles = new Map<string, PartitionRole>();
  readonly history: string[] = [];
  private readonly endpoints: Endpoint[] = [];

  constructor(sim: SimRuntime, brokerIds: readonly number[]) {
    for (const brokerId of brokerIds) {
      const endpoint = sim.endpoint(replicaManagerActorId(brokerId));
      endpoint.onMessage((envelope: Envelope) => this.handle(endpoint, envelope as EnvelopeOf<ReplicaHostMessages>));
      this.endpoints.push(endpoint);
    }
  }

  /** Sets the role of `topicId`-`partition` (no push: for before the replicas start). */
  define(topicId: string, partition: number, role: PartitionRole): void {
    this.roles.set(`${topicId}/${partition}`, structuredClone(role));
  }

  role(topicId: string, partition: number): PartitionRole {
    const role = this.roles.get(`${topicId}/${partition}`);
    assert.ok(role !== undefined, `no role for ${topicId}/${partition}`);
    return role;
  }

  /** A new leader (and ISR): leader epoch and partition epoch bumped, pushed to every replica. */
  elect(topicId: string, partition: number, leader: number, isr?: number[]): PartitionRole {
    const role = this.role(topicId, partition);
    role.leader = leader;
    role.leaderEpoch++;
    role.partitionEpoch++;
    if (isr !== undefined) role.isr = [...isr];
    this.history.push(`elect ${leader} epoch ${role.leaderEpoch} isr ${role.isr.join(',')}`);
    this.push(topicId, partition);
    return role;
  }

  /** New topic config overrides: pushed with the same epochs (the config always applies). */
  setConfig(topicId: string, partition: number, overrides: Partial<ReplicaLogConfig>): void {
    const role = this.role(topicId, partition);
    role.config = { ...role.config, ...overrides };
    this.push(topicId, partition);
  }

  /** Pushes the current role to every assigned replica (fire and forget; a crashed one asks at restart). */
  push(topicId: string, partition: number): void {
    const role = this.role(topicId, partition);
    for (const brokerId of role.replicas) {
      const endpoint = this.endpoints[0]!;
      endpoint
        .request(replicaActorId(brokerId, topicId, partition), 'replica.update-role', structuredClone(role), 60_000)
        .catch(() => undefined);
    }
  }

  private handle(endpoint: Endpoint, envelope: EnvelopeOf<ReplicaHostMessages>): void {
    if (envelope.type === 'replica-manager.replica-state') {
      const role = this.roles.get(`${envelope.body.topicId}/${envelope.body.partition}`);
      endpoint.reply(envelope, { role: role === undefined ? null : structuredClone(role) });
      return;
    }
    if (envelope.type === 'replica-manager.alter-partition') {
      const { topicId, partition, leaderEpoch, partitionEpoch, newIsr } = envelope.body;
      const role = this.roles.get(`${topicId}/${partition}`);
      if (role === undefined) {
        endpoint.reply(envelope, { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, role: null });
        return;
      }
      const errorCode =
        leaderEpoch !== role.leaderEpoch
          ? ErrorCode.FENCED_LEADER_EPOCH
          : partitionEpoch !== role.partitionEpoch
            ? ErrorCode.INVALID_UPDATE_VERSION
            : ErrorCode.NONE;
      this.history.push(`alter-partition isr ${newIsr.join(',')} -> ${errorCode}`);
      if (errorCode === ErrorCode.NONE) {
        role.isr = [...newIsr];
        role.partitionEpoch++;
        this.push(topicId, partition);
      }
      endpoint.reply(envelope, { errorCode, role: structuredClone(role) });
    }
  }
}

/** Sends request `type` to `to` and drives the simulation until it is answered. */
export async function ask<M extends MessageMap, K extends keyof M & string>(
  sim: SimRuntime,
  net: Endpoint,
  to: ActorRef<M>,
  type: K,
  body: M[K]['body'],
): Promise<M[K]['reply']> {
  const reply = net.request(to, type, body, 60_000);
  await sim.settle();
  return reply;
}

/**
 * Power loss: the disk crashes (`mode`), then `actors` crash and restart. `actors` is in start order
 * (log dir first); they crash in the reverse order and the simulation settles after the restart.
 */
export async function powerCycle(
  sim: SimRuntime,
  fs: MemoryFileSystem,
  mode: CrashMode,
  actors: readonly ActorId[],
): Promise<void> {
  fs.crash(mode);
  sim.crash([...actors].reverse());
  await sim.restart([...actors]);
  await sim.settle();
}

// ---- replica ------------------------------------------------------------------------------------

export const REPLICA: ActorRef<ReplicaMessages> = replicaActorId(0, TOPIC_ID, 0);

/** The config of t-0 in the replica tests: small segments and index interval. */
export function replicaConfig(overrides: Partial<ReplicaLogConfig> = {}): ReplicaLogConfig {
  return {
    ...effectiveLogConfig({}, defaultBrokerConfig()),
    segmentBytes: 4096,
    indexIntervalBytes: 256,
    ...overrides,
  };
}

/** Spawn arguments of the replica of t-0 on broker `brokerId` (its log dir: {@link LOG_DIR}, or `/data/node-<id>` in a cluster). */
export function replicaArgs(brokerId = 0, logDir = LOG_DIR, topic = 't', topicId = TOPIC_ID): ReplicaArgs {
  return {
    topic,
    topicId,
    partition: 0,
    logDir,
    brokerId,
    brokerEpoch: 1,
    manager: replicaManagerActorId(brokerId),
    logDirActor: actorRef<LogDirMessages>(`log-dir/${brokerId}/0`),
    checkpointIntervalMs: 5000,
    retentionCheckIntervalMs: 300_000,
    replication: REPLICATION,
  };
}

/** The role of a partition that broker 0 leads alone (ISR = {0}, epoch 0). */
export function soleLeaderRole(config: ReplicaLogConfig): PartitionRole {
  return { leader: 0, leaderEpoch: 0, partitionEpoch: 0, replicas: [0], isr: [0], config };
}

/**
 * A traced simulation with the log-dir actor and the replica of t-0 ({@link REPLICA}) leading alone,
 * its fake replica manager, and the net endpoint.
 */
export async function bootReplica(
  seed: number,
  fs: FileSystem,
  config: Partial<ReplicaLogConfig> = {},
  options: SimOptions = {},
) {
  const sim = newSim(seed, fs, { trace: true, ...options });
  const manager = new FakeReplicaManager(sim, [0]);
  manager.define(TOPIC_ID, 0, soleLeaderRole(replicaConfig(config)));
  await spawnLogDir(sim);
  await sim.spawn(REPLICA, 'replica', replicaArgs(), { pool: 'broker', brokerId: 0 });
  const net = sim.endpoint(NET);
  return { sim, net, manager };
}

/** A record batch of one record per value (no keys, no headers). */
export function batch(values: string[]): Buffer {
  return buildRecordBatch(values.map((v) => ({ key: null, value: Buffer.from(v), headers: [] })));
}

/** Fetches the replica's whole log up to the HW; asserts dense offsets; returns the values in order. */
export async function readAll(sim: SimRuntime, net: Endpoint): Promise<string[]> {
  const fetched = await ask(sim, net, REPLICA, 'replica.fetch', {
    fetchOffset: 0,
    maxBytes: 1 << 20,
    minOneBatch: true,
  });
  assert.equal(fetched.errorCode, ErrorCode.NONE);
  const batches = decodeRecordBatches(Buffer.from(fetched.records ?? Buffer.alloc(0)));
  let expected = 0;
  for (const b of batches) {
    assert.equal(b.baseOffset, expected, 'offsets are dense');
    expected += b.records.length;
  }
  return batches.flatMap((b) => b.records.map((r) => r.value!.toString()));
}

/**
 * Power loss under a mixed acks workload: `records` single-record batches, every third with acks=all,
 * the simulation advanced only 1 + ((i + seed) % 4) steps after send i so acks=1 batches are often
 * unsynced (the seed shifts which sends get few steps, so different seeds give different schedules),
 * then the disk loses its unsynced bytes (even seeds) or tears the last write (odd seeds) and both
 * actors crash and restart. Asserts the recovered log is a prefix of what was sent and holds every
 * acknowledged acks=all batch (DESIGN.md invariants 4 and 6). Returns how many records survived.
 */
export async function powerLossRun(seed: number, records = 30): Promise<number> {
  const fs = new MemoryFileSystem();
  const { sim, net } = await bootReplica(seed, fs);
  const acked: string[] = [];
  const sent: string[] = [];
  for (let i = 0; i < records; i++) {
    const value = `r${i}`;
    sent.push(value);
    const acks = i % 3 === 0 ? -1 : 1;
    const pending = net.request(REPLICA, 'replica.produce', { records: batch([value]), acks, timeoutMs: 1000 }, 60_000);
    for (let s = 0; s < 1 + ((i + seed) % 4); s++) sim.step();
    if (acks === -1) {
      await sim.settle();
      assert.equal((await pending).errorCode, ErrorCode.NONE);
      acked.push(value);
    } else pending.catch(() => undefined);
  }
  await powerCycle(sim, fs, { kind: seed % 2 === 0 ? 'lose-unsynced' : 'torn-last-write' }, [LOG_DIR_ACTOR, REPLICA]);
  const recovered = await readAll(sim, net);
  assert.deepEqual(recovered, sent.slice(0, recovered.length), `seed ${seed}: a prefix of what was appended`);
  for (const value of acked) assert.ok(recovered.includes(value), `seed ${seed}: acknowledged ${value} survives`);
  await sim.shutdown();
  return recovered.length;
}

// ---- group coordinator --------------------------------------------------------------------------

export const OFFSETS_REPLICA: ActorRef<ReplicaMessages> = replicaActorId(0, TOPIC_ID, 0);
export const COORDINATOR = actorRef<GroupCoordinatorMessages>('group-coordinator/0/0');
export const GROUP = 'g';
export const SESSION_MS = 10_000;
export const REBALANCE_MS = 30_000;

/**
 * Spawn arguments of the coordinator of __consumer_offsets-`partition` (default 0, on
 * `replicaActor`, default the harness's offsets replica), with Kafka's default group limits.
 */
export function coordinatorArgs(
  initialRebalanceDelayMs: number,
  partition = 0,
  replicaActor: GroupCoordinatorArgs['replicaActor'] = OFFSETS_REPLICA,
): GroupCoordinatorArgs {
  return {
    partition,
    replicaActor,
    config: {
      initialRebalanceDelayMs,
      minSessionTimeoutMs: 6000,
      maxSessionTimeoutMs: 1_800_000,
      maxSize: 1000,
      offsetMetadataMaxBytes: 4096,
      offsetsRetentionMs: 7 * 24 * 3_600_000,
      offsetsRetentionCheckIntervalMs: 600_000,
    },
  };
}

/**
 * An untraced simulation with the log-dir actor, the compacted replica of __consumer_offsets-0
 * ({@link OFFSETS_REPLICA}) and its coordinator ({@link COORDINATOR}), settled; and the net endpoint.
 */
export async function bootCoordinator(seed: number, fs: MemoryFileSystem, initialRebalanceDelayMs = 0) {
  const sim = newSim(seed, fs, {});
  const offsetsReplicaArgs = replicaArgs(0, LOG_DIR, '__consumer_offsets', TOPIC_ID);
  const manager = new FakeReplicaManager(sim, [0]);
  manager.define(
    TOPIC_ID,
    0,
    soleLeaderRole(effectiveLogConfig({ 'cleanup.policy': 'compact' }, defaultBrokerConfig())),
  );
  await spawnLogDir(sim);
  await sim.spawn(OFFSETS_REPLICA, 'replica', offsetsReplicaArgs, { pool: 'broker', brokerId: 0 });
  await sim.spawn(COORDINATOR, 'group-coordinator', coordinatorArgs(initialRebalanceDelayMs), {
    pool: 'broker',
    brokerId: 0,
  });
  await sim.settle();
  return { sim, net: sim.endpoint(NET) };
}

/** The coordinator's actors in start order, for {@link powerCycle}. */
export const COORDINATOR_ACTORS: readonly ActorId[] = [LOG_DIR_ACTOR, OFFSETS_REPLICA, COORDINATOR];

/**
 * The body the network layer hands a group coordinator for one group API request (version
 * `version`, from `clientId` on host /127.0.0.1), as src/network/handlers/group-routing.ts builds it.
 */
export function groupRequestBody<K extends GroupClientKind>(
  clientId: string,
  version: number,
  request: GroupClientRequestOf<K>,
): GroupClientMessages[K]['body'] {
  return { version, clientId, clientHost: '/127.0.0.1', request };
}

/** A client of the coordinator, as the network handlers talk to it. */
export class Member {
  memberId = '';
  generationId = -1;
  constructor(
    private readonly net: Endpoint,
    readonly clientId: string,
    readonly groupInstanceId: string | null = null,
  ) {}

  /**
   * Sends client request `type` and resolves with its reply read as the full result: a bare
   * `CoordinatorErrorReply` (loading, NOT_COORDINATOR) carries only `errorCode`, which the tests
   * check before reading more.
   */
  send<K extends GroupClientKind>(
    type: K,
    request: GroupClientRequestOf<K>,
    version: number,
  ): Promise<GroupClientResultOf<K>> {
    return this.net
      .request<GroupClientMessages, K>(COORDINATOR, type, groupRequestBody(this.clientId, version, request), 600_000)
      .then((reply) => reply as GroupClientResultOf<K>);
  }

  /** Starts a JoinGroup (v5) and returns its pending answer; the caller drives time. */
  join(metadata = 'sub', version = 5): Promise<JoinResult> {
    return this.send(
      'group.join',
      {
        groupId: GROUP,
        sessionTimeoutMs: SESSION_MS,
        rebalanceTimeoutMs: REBALANCE_MS,
        memberId: this.memberId,
        groupInstanceId: this.groupInstanceId,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.from(metadata) }],
        reason: null,
      },
      version,
    ).then((r) => {
      if (r.errorCode === ErrorCode.MEMBER_ID_REQUIRED || r.errorCode === ErrorCode.NONE) this.memberId = r.memberId;
      if (r.errorCode === ErrorCode.NONE) this.generationId = r.generationId;
      return r;
    });
  }

  sync(assignments: { memberId: string; assignment: Buffer }[] = []): Promise<SyncResult> {
    return this.send(
      'group.sync',
      {
        groupId: GROUP,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: this.groupInstanceId,
        protocolType: null,
        protocolName: null,
        assignments,
      },
      3,
    );
  }

  heartbeat(): Promise<{ errorCode: number }> {
    return this.send(
      'group.heartbeat',
      {
        groupId: GROUP,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: this.groupInstanceId,
      },
      3,
    );
  }

  commit(offset: number, generationId = this.generationId, metadata = 'm'): Promise<CommitResult> {
    return this.send(
      'group.commit',
      {
        groupId: GROUP,
        generationId,
        memberId: this.memberId,
        groupInstanceId: this.groupInstanceId,
        topics: [
          {
            name: 't',
            partitions: [
              { partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: 3, committedMetadata: metadata },
            ],
          },
        ],
      },
      7,
    );
  }
}

/** OffsetFetch v8 of every committed offset of {@link GROUP}. */
export function fetchOffsets(net: Endpoint): Promise<FetchOffsetsResult> {
  return asResult(
    net.request(
      COORDINATOR,
      'group.fetch-offsets',
      { version: 8, clientId: 'admin', clientHost: '/127.0.0.1', request: { groupId: GROUP, topics: null } },
      60_000,
    ),
  );
}

/** DescribeGroups v5 of {@link GROUP}. */
export function describeGroup(net: Endpoint): Promise<DescribedGroup[]> {
  return asResult(
    net.request(
      COORDINATOR,
      'group.describe',
      { version: 5, clientId: 'admin', clientHost: '/127.0.0.1', request: { groupIds: [GROUP] } },
      60_000,
    ),
  );
}

/** Requests client message `type` of the coordinator; the reply is read as its full result (see {@link Member.send}). */
export function coordinatorRequest<K extends GroupClientKind>(
  net: Endpoint,
  type: K,
  body: GroupClientMessages[K]['body'],
  timeoutMs: number,
): Promise<GroupClientResultOf<K>> {
  return net
    .request<GroupClientMessages, K>(COORDINATOR, type, body, timeoutMs)
    .then((reply) => reply as GroupClientResultOf<K>);
}

/** A coordinator reply read as its full result (see {@link Member.send}). */
function asResult<T>(reply: Promise<T | CoordinatorErrorReply>): Promise<T> {
  return reply.then((r) => r as T);
}

// ---- controller ---------------------------------------------------------------------------------

/** The controller's actor id (as src/broker.ts spawns it). */
export const CONTROLLER = CONTROLLER_ACTOR_ID;
export const METADATA_DIR = `${LOG_DIR}/__skiff_metadata`;
export const METADATA_LOG = `${METADATA_DIR}/metadata.log`;

/**
 * Controller spawn arguments: a cluster of node ids 0, 1, 2 (none registered yet: see
 * {@link registerBrokers}), defaults 1 partition, RF 1, and Kafka's defaults for the session timeout
 * (9000 ms), unclean election (off) and auto leader rebalance (on, every 300 s, 10 %).
 */
export function controllerArgs(overrides: Partial<ControllerArgs> = {}): ControllerArgs {
  return {
    metadataDir: METADATA_DIR,
    nodeIds: [0, 1, 2],
    numPartitions: 1,
    defaultReplicationFactor: 1,
    brokerSessionTimeoutMs: 9000,
    uncleanLeaderElectionEnable: false,
    autoLeaderRebalanceEnable: true,
    leaderImbalanceCheckIntervalSeconds: 300,
    leaderImbalancePerBrokerPercentage: 10,
    ...overrides,
  };
}

/** The advertised listener the harness registers node `nodeId` with. */
export function brokerListener(nodeId: number): { host: string; port: number } {
  return { host: 'localhost', port: 9092 + nodeId };
}

/**
 * Registers brokers `nodeIds` with the controller (as each broker's replica manager does at its
 * start), in order; returns their broker epochs by node id. Asserts each registration succeeded.
 */
export async function registerBrokers(
  sim: SimRuntime,
  net: Endpoint,
  nodeIds: readonly number[],
): Promise<Map<number, number>> {
  const epochs = new Map<number, number>();
  for (const brokerId of nodeIds) {
    const reply = await ask(sim, net, CONTROLLER, 'controller.register-broker', {
      brokerId,
      ...brokerListener(brokerId),
    });
    assert.equal(reply.errorCode, ErrorCode.NONE, `broker ${brokerId} registers`);
    epochs.set(brokerId, reply.brokerEpoch);
  }
  return epochs;
}

/** A traced simulation with the controller ({@link CONTROLLER}) on its own pool, and the net endpoint. */
export async function bootController(
  seed: number,
  fs: FileSystem,
  args: ControllerArgs = controllerArgs(),
  options: SimOptions = {},
) {
  const sim = newSim(seed, fs, { trace: true, ...options });
  await sim.spawn(CONTROLLER, 'controller', args, { pool: 'controller' });
  const net = sim.endpoint(NET);
  return { sim, net };
}

// ---- a replicated partition: three brokers ------------------------------------------------------

/** The brokers of {@link bootCluster}. */
export const CLUSTER_BROKERS: readonly number[] = [0, 1, 2];

/** Broker `brokerId`'s log dir in a cluster. */
export function brokerLogDir(brokerId: number): string {
  return `${LOG_DIR}/node-${brokerId}`;
}

/** The replica of t-0 on broker `brokerId`. */
export function clusterReplica(brokerId: number): ActorRef<ReplicaMessages> {
  return replicaActorId(brokerId, TOPIC_ID, 0);
}

/** The log-dir actor of broker `brokerId`. */
export function clusterLogDir(brokerId: number): ActorRef<LogDirMessages> {
  return actorRef<LogDirMessages>(`log-dir/${brokerId}/0`);
}

/**
 * t-0 replicated on brokers 0, 1 and 2 (RF=3, leader 0, ISR {0,1,2}, epoch 0) on one simulated disk,
 * each broker with its own log dir and log-dir actor, its replica fetching from the leader, and a
 * {@link FakeReplicaManager} for all three. Settled; `net` talks to them as the network layer does.
 */
export async function bootCluster(
  seed: number,
  fs: FileSystem,
  config: Partial<ReplicaLogConfig> = {},
  options: SimOptions & { replication?: Partial<ReplicationSettings> } = {},
) {
  const sim = newSim(seed, fs, options);
  const manager = new FakeReplicaManager(sim, CLUSTER_BROKERS);
  manager.define(TOPIC_ID, 0, {
    leader: 0,
    leaderEpoch: 0,
    partitionEpoch: 0,
    replicas: [...CLUSTER_BROKERS],
    isr: [...CLUSTER_BROKERS],
    config: replicaConfig(config),
  });
  for (const b of CLUSTER_BROKERS) {
    fs.mkdirp(brokerLogDir(b));
    await spawnLogDir(sim, b, brokerLogDir(b));
  }
  for (const b of CLUSTER_BROKERS) await spawnClusterReplica(sim, b, options.replication);
  await sim.settle();
  return { sim, net: sim.endpoint(NET), manager };
}

async function spawnClusterReplica(
  sim: SimRuntime,
  brokerId: number,
  replication: Partial<ReplicationSettings> = {},
): Promise<void> {
  const args: ReplicaArgs = {
    ...replicaArgs(brokerId, brokerLogDir(brokerId)),
    replication: { ...REPLICATION, ...replication },
  };
  await sim.spawn(clusterReplica(brokerId), 'replica', args, { pool: 'broker', brokerId });
}

/** One record of a replica's log as its segment files hold it. */
export interface LoggedRecord {
  offset: number;
  value: string;
  leaderEpoch: number;
}

/**
 * Broker `brokerId`'s log of t-0 as its segment files hold it (every batch, not only below the HW),
 * read straight from the simulated disk.
 */
export function logOnDisk(fs: FileSystem, brokerId: number): LoggedRecord[] {
  const dir = `${brokerLogDir(brokerId)}/t-0`;
  if (!fs.exists(dir)) return [];
  const parts = fs
    .readdir(dir)
    .filter((name) => name.endsWith('.log'))
    .map((name) => fs.readFile(`${dir}/${name}`));
  return decodeRecordBatches(Buffer.concat(parts)).flatMap((b) =>
    b.records.map((r) => ({ offset: r.offset, value: r.value?.toString() ?? '', leaderEpoch: b.partitionLeaderEpoch })),
  );
}

/** Sends a one-batch produce of `values` to broker `brokerId`'s replica; the caller drives time. */
export function produceTo(net: Endpoint, brokerId: number, values: string[], acks = -1, timeoutMs = 30_000) {
  return net.request(clusterReplica(brokerId), 'replica.produce', { records: batch(values), acks, timeoutMs }, 120_000);
}

/** `replica.describe` of broker `brokerId`'s replica. */
export function describeReplica(sim: SimRuntime, net: Endpoint, brokerId: number) {
  return ask(sim, net, clusterReplica(brokerId), 'replica.describe', {});
}

/** A fault hook that drops every message to or from broker `brokerId`'s replica (a partitioned follower). */
export function isolate(brokerId: number) {
  const id = clusterReplica(brokerId);
  return (envelope: Envelope): 'drop' | 'deliver' => (envelope.to === id || envelope.from === id ? 'drop' : 'deliver');
}

/** Crashes broker `brokerId`'s replica and log-dir actor (a worker crash; the disk keeps what it has). */
export function crashBroker(sim: SimRuntime, brokerId: number): void {
  sim.crash([clusterReplica(brokerId), clusterLogDir(brokerId)]);
}

/** Restarts what {@link crashBroker} crashed (the replica asks the manager for its role) and settles. */
export async function restartBroker(sim: SimRuntime, brokerId: number): Promise<void> {
  await sim.restart([clusterLogDir(brokerId), clusterReplica(brokerId)]);
  await sim.settle();
}
