/**
 * A harness for the group coordinator under the deterministic simulation runtime: a replica of
 * __consumer_offsets-0 (compacted, on a MemoryFileSystem) and its coordinator, plus a client that
 * talks to the coordinator as the network handlers do. Used by the scenario tests and the
 * fast-check property tests.
 */
import { SimRuntime } from '../../../src/runtime/sim-runtime';
import { MemoryFileSystem } from '../../../src/storage/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import type { ReplicaArgs } from '../../../src/replica/replica-actor';
import type { LogDirArgs } from '../../../src/replica/log-dir-actor';
import type { Endpoint } from '../../../src/runtime/runtime';
import { effectiveLogConfig } from '../../../src/config/topic-config';
import { defaultBrokerConfig } from '../../../src/config/broker-config';
import type {
  GroupCoordinatorArgs,
  JoinResult,
  SyncResult,
  FetchOffsetsResult,
  CommitResult,
  DescribedGroup,
} from '../../../src/group/group-coordinator-actor';

export const LOG_DIR = '/data';
export const REPLICA = 'replica/0/offsets/0';
export const LOG_DIR_ACTOR = 'log-dir/0/0';
export const COORDINATOR = 'group-coordinator/0/0';
export const GROUP = 'g';
export const SESSION_MS = 10_000;
export const REBALANCE_MS = 30_000;

export function coordinatorArgs(initialRebalanceDelayMs: number): GroupCoordinatorArgs {
  return {
    partition: 0,
    replicaActor: REPLICA,
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

export async function boot(seed: number, fs: MemoryFileSystem, initialRebalanceDelayMs = 0) {
  const sim = new SimRuntime({ seed, fs });
  const logDirArgs: LogDirArgs = {
    logDir: LOG_DIR,
    clusterId: 'AAAAAAAAAAAAAAAAAAAAAw',
    nodeId: 0,
    directoryId: 'AAAAAAAAAAAAAAAAAAAABA',
  };
  const replicaArgs: ReplicaArgs = {
    topic: '__consumer_offsets',
    topicId: 'AAAAAAAAAAAAAAAAAAAAAg',
    partition: 0,
    logDir: LOG_DIR,
    brokerId: 0,
    leaderEpoch: 0,
    config: effectiveLogConfig({ 'cleanup.policy': 'compact' }, defaultBrokerConfig()),
    logDirActor: LOG_DIR_ACTOR,
    checkpointIntervalMs: 5000,
    retentionCheckIntervalMs: 300_000,
    isr: [0],
  };
  await sim.spawn(LOG_DIR_ACTOR, 'log-dir', logDirArgs, { pool: 'broker', brokerId: 0 });
  await sim.spawn(REPLICA, 'replica', replicaArgs, { pool: 'broker', brokerId: 0 });
  await sim.spawn(COORDINATOR, 'group-coordinator', coordinatorArgs(initialRebalanceDelayMs), {
    pool: 'broker',
    brokerId: 0,
  });
  await sim.settle();
  return { sim, net: sim.endpoint('net/0') };
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

  send<T>(type: string, request: unknown, version: number): Promise<T> {
    return this.net.request<T>(
      COORDINATOR,
      type,
      { version, clientId: this.clientId, clientHost: '/127.0.0.1', request },
      600_000,
    );
  }

  /** Starts a JoinGroup (v5) and returns its pending answer; the caller drives time. */
  join(metadata = 'sub', version = 5): Promise<JoinResult> {
    return this.send<JoinResult>(
      'join',
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
      'sync',
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
      'heartbeat',
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
      'commit',
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

export function fetchOffsets(net: Endpoint): Promise<FetchOffsetsResult> {
  return net.request(
    COORDINATOR,
    'fetch-offsets',
    { version: 8, clientId: 'admin', clientHost: '/127.0.0.1', request: { groupId: GROUP, topics: null } },
    60_000,
  );
}

export function describeGroup(net: Endpoint): Promise<DescribedGroup[]> {
  return net.request(
    COORDINATOR,
    'describe',
    { version: 5, clientId: 'admin', clientHost: '/127.0.0.1', request: { groupIds: [GROUP] } },
    60_000,
  );
}
