/**
 * A whole cluster under the deterministic simulation runtime: the real controller, and per broker the
 * real replica manager, which starts that broker's log-dir actors, replicas and group coordinators,
 * exactly as `skiff start --nodes N` wires them, but on one thread with virtual time and an in-memory
 * disk (DESIGN.md "Deterministic simulation"). The test talks to the actors through one endpoint, as
 * the network layer does, and each broker's network endpoint (`net/<i>`) exists to take the pushes.
 *
 * Beyond booting, it gives the scenario tests (test/unit/cluster/) what they check the invariants with:
 * every image the controller pushes ({@link ClusterSim.pushedImages}, recorded by the fault hook, so
 * install faults through {@link ClusterSim.setFaults}), a producer that retries as a client does, a
 * consumer fetch, follower isolation, controller crash and restart, power loss of the whole cluster,
 * and the checks of DESIGN.md's invariants 3 (log matching below the HW) and 5 (one leader per epoch).
 */
import assert from 'node:assert/strict';
import { SimRuntime } from '../runtime/sim-runtime';
import { MemoryFileSystem } from '../io/memory-file-system';
import type { Logger } from '../io/logger';
import type { Endpoint } from '../runtime/runtime';
import type { MessageMap, ActorRef } from '../runtime/actor';
import { buildBrokerConfig } from '../config/broker-config';
import type { BrokerConfig } from '../config/broker-config';
import { CONTROLLER_ACTOR_ID } from '../controller/messages';
import type { MetadataImage, PartitionState } from '../controller/metadata-records';
import { replicaActorId } from '../replica/messages';
import type { ReplicaMessages } from '../replica/messages';
import { replicaManagerRef } from '../replica-manager/messages';
import type { ReplicaManagerArgs } from '../replica-manager/replica-manager-actor';
import { controllerArgsFor, nodeConfig } from '../broker';
import { ErrorCode } from '../protocol/error-codes';
import { decodeRecordBatches } from '../protocol/record-batch/decode';
import { buildRecordBatch } from '../protocol/record-batch/builder';
import type { CrashMode } from '../io/memory-file-system';
import type { FaultHook } from '../runtime/sim-runtime';
import { SimFaults } from './sim-faults';
import type { MetadataListenerMessages } from '../controller/messages';
import type { ProduceReply } from '../replica/messages';
import { BrokerNode } from '../broker-node';
import { createLogger, levelFromEnv } from '../runtime/logger';

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
  /** An uncaught actor error fails the run (`fail`, default) or restarts the actor as production does (SimRuntimeOptions). */
  onActorError?: 'fail' | 'restart';
}

/** A simulated cluster and the operations tests drive it with. */
export class ClusterSim {
  readonly configs: BrokerConfig[];
  readonly net: Endpoint;
  /** Brokers currently up (their replica manager spawned and not crashed). */
  readonly up = new Set<number>();
  /**
   * The fault rules (partitions, slow followers, chaos, fsync schedule, full disks, clock jumps) and
   * the count of every fault injected, this class's crash operations included. Its hook sits under
   * the recorder of {@link pushedImages}, a test's {@link setFaults} hook under its rules.
   */
  readonly faults: SimFaults;

  constructor(
    readonly sim: SimRuntime,
    readonly fs: MemoryFileSystem,
    readonly base: BrokerConfig,
    readonly nodes: number,
  ) {
    this.configs = Array.from({ length: nodes }, (_, i) => nodeConfig(base, i, nodes));
    this.net = sim.endpoint('test');
    this.networkNodes = this.configs.map(
      (c) =>
        new BrokerNode(
          c,
          createLogger({ level: levelFromEnv('silent') }).child({ nodeId: c.nodeId }),
          sim.endpoint(`net/${c.nodeId}`),
          {
            awaitApplied: (offset) => this.awaitAppliedFromNode(offset),
          },
        ),
    );
    this.faults = new SimFaults(sim, fs, (b) => this.configs[b]?.logDirs ?? []);
    this.setFaults(null);
  }

  /**
   * Each broker's network node (its API handlers' `BrokerContext` and metadata cache), subscribed to
   * the controller's pushes as production's are; {@link SimClient} calls handlers through them.
   */
  private readonly networkNodes: BrokerNode[];

  /** Broker `brokerId`'s network node. */
  node(brokerId: number): BrokerNode {
    const node = this.networkNodes[brokerId];
    if (node === undefined) throw new Error(`no broker ${brokerId} (the cluster has ${this.networkNodes.length})`);
    return node;
  }

  /** As production's `awaitApplied`: every running broker's manager has applied `offset` (bounded by the caller's wait). */
  private async awaitAppliedFromNode(offset: number): Promise<void> {
    for (const i of this.up)
      await this.net.request(replicaManagerRef(i), 'replica-manager.await-applied', { offset }, 30_000);
  }

  /**
   * Subscribes every network node to the controller (at its start and after each restart of it), as
   * production's wiring does; a node whose subscription fails (cut off from the controller) logs
   * nothing and keeps its cache, as production's logs and goes on: {@link resubscribeNodes} after
   * the heal catches it up.
   */
  private async subscribeNodes(): Promise<void> {
    for (const node of this.networkNodes) await this.sim.runUntil(node.subscribe()).catch(() => undefined);
  }

  /** Subscribes every network node again (after a network fault healed); each takes the current image. */
  async resubscribeNodes(): Promise<void> {
    await this.subscribeNodes();
  }

  /**
   * Every image the controller sent to a subscriber, in send order, once per (controllerEpoch,
   * offset). Recorded by the fault hook {@link setFaults} installs (`sim.setFaults` directly stops it).
   */
  readonly pushedImages: MetadataImage[] = [];
  private readonly seenPushes = new Set<string>();

  /**
   * Installs `hook` (null: deliver everything) under the recorder of {@link pushedImages} and the
   * rules of {@link faults}: every `metadata.update` the controller sends is recorded before the rules,
   * then the hook, decide its fate.
   */
  setFaults(hook: FaultHook | null): void {
    this.faults.setUserHook(hook);
    this.sim.setFaults((envelope, random) => {
      if (envelope.type === 'metadata.update' && envelope.from === CONTROLLER_ACTOR_ID) {
        const image = envelope.body as MetadataListenerMessages['metadata.update']['body'];
        const key = `${image.controllerEpoch}/${image.offset}`;
        if (!this.seenPushes.has(key)) {
          this.seenPushes.add(key);
          // A copy: the controller's image shares its state objects, which later changes update in place.
          this.pushedImages.push(structuredClone(image));
        }
      }
      return this.faults.decide(envelope, random);
    });
  }

  /**
   * A fault hook that drops every replica-to-replica message to or from broker `brokerId`'s replicas
   * (its fetches and their answers): the broker is cut off the data path, its controller traffic flows.
   */
  static isolateReplicas(...brokerIds: number[]): FaultHook {
    const cut = (id: string) => brokerIds.some((b) => id.startsWith(`replica/${b}/`));
    return (envelope) =>
      envelope.from.startsWith('replica/') &&
      envelope.to.startsWith('replica/') &&
      (cut(envelope.from) || cut(envelope.to))
        ? 'drop'
        : 'deliver';
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
    await this.subscribeNodes();
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

  /**
   * Crashes the controller (no `stop`: as its worker dying) and restarts it from its metadata log with a
   * higher controller epoch; the replica managers find out from their heartbeats and subscribe again.
   * `beforeRestart` runs in between (a test tears the metadata log's tail there).
   */
  async restartController(beforeRestart?: () => void): Promise<void> {
    this.sim.crash(CONTROLLER_ACTOR_ID, 'simulated controller crash');
    this.faults.record('controller-crash');
    beforeRestart?.();
    await this.sim.restart(CONTROLLER_ACTOR_ID);
    await this.subscribeNodes();
  }

  /**
   * Power loss of the whole host: every actor dies at once (controller and every broker, nobody is
   * told), the disk loses what was not fsynced (`mode`), then the controller restarts from its log and
   * every broker from its log dirs, in node order. Requests in flight fail for their senders. A torn
   * write without `keepBytes` keeps a number of bytes drawn from the run's fault PRNG.
   */
  async powerLoss(mode: CrashMode): Promise<void> {
    this.faults.record('power-loss');
    this.sim.crash(CONTROLLER_ACTOR_ID, 'power loss');
    for (const i of [...this.up]) {
      await this.sim.crashBroker(i, 'power loss');
      this.up.delete(i);
    }
    this.fs.crash(mode, this.sim.faultRandom);
    await this.sim.restart(CONTROLLER_ACTOR_ID);
    await this.subscribeNodes();
    // A broker that cannot register (cut off from the controller by a fault) stays down.
    for (let i = 0; i < this.nodes; i++)
      await this.startBroker(i).catch(async () => {
        await this.sim.crashBroker(i, 'start failed after power loss');
        this.up.delete(i);
      });
  }

  /** Crashes broker `i` (every actor on it dies at once) and tells the controller, as the cluster does. */
  async crashBroker(i: number): Promise<void> {
    this.faults.record('broker-crash');
    await this.sim.crashBroker(i);
    this.up.delete(i);
    await this.ask(CONTROLLER_ACTOR_ID, 'controller.broker-down', { brokerId: i, reason: 'crashed' });
  }

  /**
   * Stops broker `i` as `skiff` does (Cluster.stopBroker): a controlled shutdown of its replica manager
   * (leadership moves away, its replicas stop with their final flush and checkpoint), then the
   * controller is told it is down.
   */
  async stopBroker(i: number): Promise<void> {
    this.faults.record('broker-stop');
    await this.ask(replicaManagerRef(i), 'replica-manager.shutdown', { controlled: true, timeoutMs: 10_000 }, 30_000);
    this.up.delete(i);
    await this.ask(CONTROLLER_ACTOR_ID, 'controller.broker-down', { brokerId: i, reason: 'shut down' });
  }

  /**
   * Crashes the replica actor of `topic`-`partition` on broker `brokerId` alone, as an uncaught error
   * in its code does in production (worker-host.ts lets the worker die; thread-runtime.ts's supervisor
   * re-spawns the same actor with the same args at once): no `stop`, its queued messages, timers and
   * state are lost (its unsynced bytes stay, as in the page cache), requests pending to it fail with
   * `crashed`; then it starts again, recovers its log and asks its replica manager for its role
   * (`replica-manager.replica-state`). Production co-hosts several actors per worker and restarts
   * them together; this crashes the one replica. Counts one `replica-crash`.
   */
  async crashReplica(brokerId: number, topic: string, partition = 0): Promise<void> {
    const p = await this.partition(topic, partition);
    const id = this.replica(brokerId, p.topicId, partition);
    // Not running (offline after a restart its disk refused, or its broker is down): nothing to crash.
    if (!this.sim.actorIds().includes(id)) return;
    this.faults.record('replica-crash');
    this.sim.crash(id, 'simulated replica crash');
    // A restart that fails (its disk refuses the start) leaves the actor gone, as production's
    // supervisor does ('actor failed to restart'); the replica told its manager, which reports it offline.
    await this.sim.restart(id).catch(() => undefined);
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

  /**
   * Runs at most `count` scheduler steps at the current virtual time (each a delivery or a due timer,
   * with the actors' microtasks after it), so a test can crash something part-way through a change.
   * Returns the steps taken (fewer when nothing was runnable).
   */
  async steps(count: number): Promise<number> {
    let taken = 0;
    while (taken < count) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!this.sim.step()) break;
      taken++;
    }
    await new Promise((resolve) => setImmediate(resolve));
    return taken;
  }

  /** Runs virtual time forward by `ms`, delivering everything due. */
  async advance(ms: number): Promise<void> {
    await this.sim.advanceTime(ms);
  }

  /**
   * Produces one single-record batch per value to the partition's current leader, retrying as a client
   * does (up to `attempts` times, 100 ms of virtual time apart) on NOT_LEADER_OR_FOLLOWER and
   * LEADER_NOT_AVAILABLE while the leader moves; a replica that is not there answers as the network
   * layer does (NOT_LEADER_OR_FOLLOWER). `keys`: the record keys, one per value (null keys otherwise).
   * Returns each value's final answer.
   */
  async produce(
    topic: string,
    values: string[],
    acks: number,
    options: { partition?: number; keys?: string[]; attempts?: number; timeoutMs?: number } = {},
  ): Promise<ProduceReply[]> {
    const replies: ProduceReply[] = [];
    for (const [index, value] of values.entries()) {
      const key = options.keys?.[index];
      const records = buildRecordBatch([
        { key: key === undefined ? null : Buffer.from(key), value: Buffer.from(value), headers: [] },
      ]);
      let reply: ProduceReply = notLeader();
      for (let attempt = 0; attempt < (options.attempts ?? 20); attempt++) {
        const p = await this.partition(topic, options.partition ?? 0);
        if (p.leader < 0) reply = { ...notLeader(), errorCode: ErrorCode.LEADER_NOT_AVAILABLE };
        else
          reply = await this.ask(this.replica(p.leader, p.topicId, p.partition), 'replica.produce', {
            records,
            acks,
            timeoutMs: options.timeoutMs ?? 10_000,
          }).catch(() => notLeader());
        if (!RETRIABLE.has(reply.errorCode)) break;
        await this.advance(100);
      }
      replies.push(reply);
    }
    return replies;
  }

  /**
   * Sends one produce of a single-record batch of `value` to broker `brokerId`'s replica without
   * driving the simulation (the test drives it meanwhile); the promise settles when the replica answers,
   * and rejects when it is unavailable (crashed, stopped) or does not answer within `timeoutMs` + 1 s.
   */
  sendProduce(
    brokerId: number,
    topicId: string,
    value: string,
    acks: number,
    options: { partition?: number; key?: string; timeoutMs?: number } = {},
  ): Promise<ProduceReply> {
    const records = buildRecordBatch([
      { key: options.key === undefined ? null : Buffer.from(options.key), value: Buffer.from(value), headers: [] },
    ]);
    const timeoutMs = options.timeoutMs ?? 10_000;
    return this.net.request(
      this.replica(brokerId, topicId, options.partition ?? 0),
      'replica.produce',
      { records, acks, timeoutMs },
      timeoutMs + 1_000,
    );
  }

  /**
   * Waits (virtual time, 250 ms steps, at most `maxMs`) until `condition` holds; fails the test with
   * `what` otherwise.
   */
  async waitFor(what: string, condition: () => boolean | Promise<boolean>, maxMs = 60_000): Promise<void> {
    for (let waited = 0; waited <= maxMs; waited += 250) {
      if (await condition()) return;
      await this.advance(250);
    }
    assert.fail(`${what}: not within ${maxMs} ms of virtual time`);
  }

  /** Waits until every broker in `brokers` (default: all) holds the same log bytes of `topic`-`partition`. */
  async converge(topic: string, brokers?: number[], partition = 0, maxMs = 60_000): Promise<void> {
    const list = brokers ?? Array.from({ length: this.nodes }, (_, i) => i);
    await this.waitFor(
      `replicas on ${list.join(',')} of ${topic}-${partition} converge`,
      () => {
        const logs = list.map((b) => this.logBytes(b, topic, partition).toString('hex'));
        return logs.every((l) => l === logs[0]);
      },
      maxMs,
    );
  }

  /**
   * DESIGN.md invariant 3 (log matching): the batches of every running ISR member of `topic`-`partition`
   * that lie wholly below the leader's HW are byte-identical, batch by batch at the same offsets (a
   * follower that has not fetched up to the HW yet holds a prefix of them).
   * Returns that HW (-1 when the partition has no leader: nothing is checked then).
   */
  async assertLogsMatchBelowHighWatermark(topic: string, partition = 0): Promise<number> {
    const p = await this.partition(topic, partition);
    if (p.leader < 0 || !this.up.has(p.leader)) return -1;
    // A leader replica that is not there (offline on its disk, restarting) has no HW to check below.
    const leader = await this.ask(this.replica(p.leader, p.topicId, partition), 'replica.describe', {}).catch(
      () => null,
    );
    if (leader === null) return -1;
    const hw = leader.highWatermark;
    const reference = batchesBelow(this.logBytes(p.leader, topic, partition), hw);
    // The HW covers the ISR only: a replica outside it may still hold an old epoch's suffix it has not
    // truncated yet (it truncates before it rejoins).
    for (const b of p.isr) {
      if (!this.up.has(b) || b === p.leader) continue;
      const mine = batchesBelow(this.logBytes(b, topic, partition), hw);
      // A follower may not have fetched up to the HW yet: its batches below it are a prefix of the leader's.
      assert.ok(mine.length <= reference.length, `broker ${b} holds more batches below HW ${hw} than the leader`);
      for (const [i, bytes] of mine.entries())
        assert.ok(bytes.equals(reference[i]!), `broker ${b}: batch ${i} below HW ${hw} differs from the leader's`);
    }
    return hw;
  }

  /**
   * DESIGN.md invariant 5 over every pushed image ({@link pushedImages}) and the controller's current
   * one: per partition, leader epochs never decrease from one image to the next, and an epoch names at
   * most one leader (-1, no leader, aside). Returns the number of (partition, epoch) pairs seen.
   */
  async assertOneLeaderPerEpoch(): Promise<number> {
    const images = [
      ...this.pushedImages,
      ...(this.sim.actorIds().includes(CONTROLLER_ACTOR_ID) ? [await this.image()] : []),
    ];
    const leaders = new Map<string, number>();
    const lastEpoch = new Map<string, { epoch: number; at: string }>();
    for (const image of images) {
      const at = `image ${image.controllerEpoch}/${image.offset}`;
      for (const t of image.topics)
        for (const p of t.partitions) {
          const where = `${t.name}-${p.partition}`;
          const last = lastEpoch.get(where);
          assert.ok(
            last === undefined || p.leaderEpoch >= last.epoch,
            `${where}: leader epoch went back from ${last?.epoch} (${last?.at}) to ${p.leaderEpoch} (${at})`,
          );
          lastEpoch.set(where, { epoch: p.leaderEpoch, at });
          if (p.leader < 0) continue;
          const key = `${t.topicId}/${p.partition}/${p.leaderEpoch}`;
          const seen = leaders.get(key);
          assert.ok(
            seen === undefined || seen === p.leader,
            `${where}: epoch ${p.leaderEpoch} has two leaders, ${seen} and ${p.leader} (${at})`,
          );
          leaders.set(key, p.leader);
        }
    }
    return leaders.size;
  }

  /** The bytes of broker `brokerId`'s segment files of `topic`-`partition`, concatenated in offset order. */
  logBytes(brokerId: number, topic: string, partition = 0): Buffer {
    const dir = `${this.configs[brokerId]!.logDirs[0]}/${topic}-${partition}`;
    if (!this.fs.exists(dir)) return Buffer.alloc(0);
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

/** Errors on which a Kafka client refreshes its metadata and retries (the leader moved or is not there yet). */
const RETRIABLE: ReadonlySet<number> = new Set([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE]);

function notLeader(): ProduceReply {
  return {
    errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
    errorMessage: null,
    baseOffset: -1,
    logAppendTimeMs: -1,
    logStartOffset: -1,
    recordErrors: [],
  };
}

/**
 * The record batches in `log` (segment bytes in offset order) whose last offset is below `limit`, each
 * as its bytes. Reads the v2 header only: baseOffset int64 at 0, batchLength int32 at 8 (the bytes after
 * it), lastOffsetDelta int32 at 23.
 */
export function batchesBelow(log: Buffer, limit: number): Buffer[] {
  const out: Buffer[] = [];
  for (let position = 0; position + 27 <= log.length;) {
    const size = 12 + log.readInt32BE(position + 8);
    const lastOffset = Number(log.readBigInt64BE(position)) + log.readInt32BE(position + 23);
    if (lastOffset >= limit || position + size > log.length) break;
    out.push(log.subarray(position, position + size));
    position += size;
  }
  return out;
}

/** Boots a cluster of `options.nodes` (default 3) brokers in a seeded simulation, controller first. */
export async function bootCluster(seed: number, options: ClusterSimOptions = {}): Promise<ClusterSim> {
  const fs = options.fs ?? new MemoryFileSystem();
  const sim = new SimRuntime({
    seed,
    fs,
    ...(options.trace !== undefined ? { trace: options.trace } : {}),
    ...(options.onActorError !== undefined ? { onActorError: options.onActorError } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const nodes = options.nodes ?? 3;
  const base = buildBrokerConfig(new Map(Object.entries({ 'log.dirs': DATA_DIR, ...options.properties })));
  const cluster = new ClusterSim(sim, fs, base, nodes);
  await cluster.startController();
  for (let i = 0; i < nodes; i++) await cluster.startBroker(i);
  return cluster;
}
