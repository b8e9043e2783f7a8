/**
 * A whole cluster under the deterministic simulation runtime: the real controller, and per broker the
 * real replica manager, which starts that broker's log-dir actors, replicas and group coordinators,
 * exactly as `skiff start --nodes N` wires them, but on one thread with virtual time and an in-memory
 * disk (DESIGN.md "Deterministic simulation"). The test talks to the actors through one endpoint, as
 * the network layer does, and each broker's network endpoint (`net/<i>`) exists to take the pushes.
 */
import assert from 'node:assert/strict';
import { SimRuntime } from '../../src/runtime/sim-runtime';
import { MemoryFileSystem } from '../../src/io/memory-file-system';
import type { Logger } from '../../src/io/logger';
import type { Endpoint } from '../../src/runtime/runtime';
import type { MessageMap, ActorRef } from '../../src/runtime/actor';
import { buildBrokerConfig } from '../../src/config/broker-config';
import type { BrokerConfig } from '../../src/config/broker-config';
import { CONTROLLER_ACTOR_ID } from '../../src/controller/messages';
import type { MetadataImage, PartitionState } from '../../src/controller/metadata-records';
import { replicaActorId } from '../../src/replica/messages';
import type { ReplicaMessages } from '../../src/replica/messages';
import { replicaManagerRef } from '../../src/replica-manager/messages';
import type { ReplicaManagerArgs } from '../../src/replica-manager/replica-manager-actor';
import { controllerArgsFor, nodeConfig } from '../../src/broker';
import { ErrorCode } from '../../src/protocol/error-codes';
import { decodeRecordBatches } from '../../src/protocol/record-batch/decode';

/** Where the simulated brokers keep their logs: `/data/node-<i>`, the metadata log in `/data/__skiff_metadata`. */
export const DATA_DIR = '/data';

/** Options of {@link bootCluster}. */
export interface ClusterSimOptions {
  nodes?: number;
  /** Broker config keys (server.properties names) for every broker. */
  properties?: Record<string, string>;
  fs?: MemoryFileSystem;
  logger?: Logger;
  trace?: boolean;
}

/** A simulated cluster and the operations tests drive it with. */
export class ClusterSim {
  readonly configs: BrokerConfig[];
  readonly net: Endpoint;
  /** Brokers currently up (their replica manager spawned and not crashed). */
  readonly up = new Set<number>();

  constructor(
    readonly sim: SimRuntime,
    readonly fs: MemoryFileSystem,
    readonly base: BrokerConfig,
    readonly nodes: number,
  ) {
    this.configs = Array.from({ length: nodes }, (_, i) => nodeConfig(base, i, nodes));
    this.net = sim.endpoint('test');
    for (let i = 0; i < nodes; i++) sim.endpoint(`net/${i}`).onMessage(() => undefined);
  }

  /** Sends request `type` to `to` and drives the simulation (virtual time included) until it is answered. */
  async ask<M extends MessageMap, K extends keyof M & string>(
    to: ActorRef<M>,
    type: K,
    body: M[K]['body'],
    timeoutMs = 60_000,
  ): Promise<M[K]['reply']> {
    return this.sim.runUntil(this.net.request(to, type, body, timeoutMs));
  }

  /** Starts the controller. */
  async startController(): Promise<void> {
    const args = controllerArgsFor(
      this.base,
      this.configs.map((c) => c.nodeId),
      `${DATA_DIR}/__skiff_metadata`,
    );
    await this.sim.spawn(CONTROLLER_ACTOR_ID, 'controller', args, { pool: 'controller' });
  }

  /** Starts broker `i`'s replica manager (and so its log dirs and replicas); resolves once it has applied the image. */
  async startBroker(i: number): Promise<void> {
    const config = this.configs[i]!;
    const args: ReplicaManagerArgs = { config, host: '127.0.0.1', port: 9092 + i };
    await this.sim.runUntil(
      this.sim.spawn(replicaManagerRef(i), 'replica-manager', args, { pool: 'broker', brokerId: i }),
    );
    this.up.add(i);
    await this.ask(replicaManagerRef(i), 'replica-manager.await-applied', { offset: 0 });
  }

  /** Crashes broker `i` (every actor on it dies at once) and tells the controller, as the cluster does. */
  async crashBroker(i: number): Promise<void> {
    await this.sim.crashBroker(i);
    this.up.delete(i);
    await this.ask(CONTROLLER_ACTOR_ID, 'controller.broker-down', { brokerId: i, reason: 'crashed' });
  }

  /** The controller's current image. */
  async image(): Promise<MetadataImage> {
    return this.ask(CONTROLLER_ACTOR_ID, 'controller.get-metadata', {});
  }

  /** The state of `topic`'s partition `partition` in the controller's image. */
  async partition(topic: string, partition = 0): Promise<PartitionState & { topicId: string }> {
    const image = await this.image();
    const t = image.topics.find((x) => x.name === topic);
    assert.ok(t, `topic ${topic} exists`);
    return { ...t.partitions[partition]!, topicId: t.topicId };
  }

  /** Creates a topic and waits until every running broker's manager has applied it. */
  async createTopic(
    name: string,
    numPartitions: number,
    replicationFactor: number,
    configs: Record<string, string> = {},
  ): Promise<void> {
    const reply = await this.ask(CONTROLLER_ACTOR_ID, 'controller.create-topics', {
      topics: [{ name, numPartitions, replicationFactor, configs }],
      validateOnly: false,
    });
    assert.equal(reply.results[0]!.errorCode, ErrorCode.NONE, JSON.stringify(reply.results[0]));
    await this.awaitApplied(reply.image.offset);
  }

  /** Every running broker's replica manager has applied `offset`. */
  async awaitApplied(offset: number): Promise<void> {
    for (const i of this.up) await this.ask(replicaManagerRef(i), 'replica-manager.await-applied', { offset });
  }

  /** The replica actor of `topic`-`partition` on broker `brokerId`. */
  replica(brokerId: number, topicId: string, partition = 0): ActorRef<ReplicaMessages> {
    return replicaActorId(brokerId, topicId, partition);
  }

  /** Runs virtual time forward by `ms`, delivering everything due. */
  async advance(ms: number): Promise<void> {
    await this.sim.advanceTime(ms);
  }

  /** The bytes of broker `brokerId`'s segment files of `topic`-`partition`, concatenated in offset order. */
  logBytes(brokerId: number, topic: string, partition = 0): Buffer {
    const dir = `${this.configs[brokerId]!.logDirs[0]}/${topic}-${partition}`;
    const segments = this.fs
      .readdir(dir)
      .filter((n) => n.endsWith('.log'))
      .sort();
    return Buffer.concat(segments.map((n) => this.fs.readFile(`${dir}/${n}`)));
  }

  /** Every record in broker `brokerId`'s log of `topic`-`partition` (read from its files), in offset order. */
  logValues(brokerId: number, topic: string, partition = 0): { offset: number; value: string }[] {
    const out: { offset: number; value: string }[] = [];
    for (const b of decodeRecordBatches(this.logBytes(brokerId, topic, partition)))
      for (const [k, r] of b.records.entries()) out.push({ offset: b.baseOffset + k, value: r.value!.toString() });
    return out;
  }
}

/** Boots a cluster of `options.nodes` (default 3) brokers in a seeded simulation, controller first. */
export async function bootCluster(seed: number, options: ClusterSimOptions = {}): Promise<ClusterSim> {
  const fs = options.fs ?? new MemoryFileSystem();
  const sim = new SimRuntime({
    seed,
    fs,
    ...(options.trace !== undefined ? { trace: options.trace } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const nodes = options.nodes ?? 3;
  const base = buildBrokerConfig(new Map(Object.entries({ 'log.dirs': DATA_DIR, ...options.properties })));
  const cluster = new ClusterSim(sim, fs, base, nodes);
  await cluster.startController();
  for (let i = 0; i < nodes; i++) await cluster.startBroker(i);
  return cluster;
}
