/**
 * The `fc.commands` model of a verification run (issue 12 item 2): a world of one simulated cluster,
 * a client that talks to it through the brokers' real API handlers ({@link SimClient}), and a ledger of
 * what every producer strategy was acknowledged and what every consumer read; commands that produce,
 * fetch, change topics and configs, and inject faults. After every command the checker verifies what
 * can be checked mid-run (log matching below the HW); {@link finishRun} heals the cluster and checks
 * the rest against the final logs.
 *
 * The model state fast-check sees is small on purpose (which brokers are up, which faults are on):
 * commands' preconditions read it, so a shrunk schedule never crashes a broker that is down.
 */
import fc from 'fast-check';
import { ClusterSim } from './cluster-sim';
import { SimClient } from './sim-network';
import { consumerCommands, finishConsumers } from './consumer-model';
import type { Checker } from './checker';
import type { FaultKind, InvariantName, StrategyCounts } from './report';
import { PRODUCER_STRATEGIES } from './report';
import { ErrorCode } from '../protocol/error-codes';
import { CONTROLLER_ACTOR_ID } from '../controller/messages';
import { buildRecordBatch } from '../protocol/record-batch/builder';
import { decodeRecordBatches } from '../protocol/record-batch/decode';
import { crcValid } from '../protocol/record-batch/view';

/** The topics every run creates: `t` (RF 3, min.insync.replicas 2, two partitions) and `u` (the same, unclean election on). */
export const MAIN_TOPIC = 't';
export const UNCLEAN_TOPIC = 'u';

/** A producer strategy of report.ts. */
export type ProducerStrategy = (typeof PRODUCER_STRATEGIES)[number];

/** One record a producer sent: its strategy, where it went, and what the broker answered. */
export interface SentRecord {
  value: string;
  strategy: ProducerStrategy;
  topic: string;
  partition: number;
  /** The offset it was acknowledged at (acks=0: -1, no answer). */
  offset: number;
  /** Sent by the idempotent producer (stored at most once, whatever the strategy it is counted under). */
  idempotent: boolean;
  /**
   * Whether a later fault excuses its loss within the durability contract: acknowledged under
   * write.caching=true (strategy 'acks=all write.caching'), then a power loss.
   */
  excused: boolean;
}

/** What the fast-check model tracks: the brokers up (preconditions read it). */
export interface ModelState {
  up: boolean[];
  partitions: number;
}

/** Everything a run's commands act on and record. */
export class World {
  readonly client: SimClient;
  /** Records acknowledged (or sent with acks=0), in send order. */
  readonly sent: SentRecord[] = [];
  /**
   * Every record a consumer fetch returned below its response's HW: `topic/partition/offset` -> its
   * value and whether a later fault excuses its loss (write.caching=true, then a power loss).
   */
  readonly read = new Map<string, { value: string; excused: boolean }>();
  /** The commands run so far, as printed (the counterexample's list). */
  readonly executed: string[] = [];
  /** write.caching of the main topic now. */
  writeCaching = false;
  /**
   * Whether write.caching was true at any time since the last power loss: the HW (and acks=all) may
   * then have passed bytes no replica fsynced, which the next power loss may take (DESIGN.md).
   */
  cachedSincePowerLoss = false;
  private nextValue = 0;
  /** The producers' metadata cache: `topic/partition` -> the leader it last learned. */
  private readonly producerMetadata = new Map<string, number>();

  /** The leader of `topic`-`partition` in the producers' metadata cache (-1: none cached). */
  cachedLeader(topic: string, partition: number): number {
    return this.producerMetadata.get(`${topic}/${partition}`) ?? -1;
  }
  private producer: { producerId: number; producerEpoch: number; sequences: Map<string, number> } | null = null;

  constructor(
    readonly cluster: ClusterSim,
    readonly checker: Checker,
    readonly nodes: number,
  ) {
    this.client = new SimClient(cluster);
  }

  /** Faults injected so far, by kind (counted by the cluster's SimFaults). */
  get faults(): Partial<Record<FaultKind, number>> {
    return this.cluster.faults.counts();
  }

  /**
   * A power loss, or a disk that failed under a replica (its restart cuts back to what it fsynced),
   * after write.caching was true since the last power loss: what the cache covered may be gone.
   */
  exposeCachedWrites(): void {
    if (!this.cachedSincePowerLoss) return;
    // Not only what was acknowledged under write.caching=true: while it is on, a follower joins the
    // ISR with bytes it has not fsynced, so a power loss can leave an ISR member (even a new
    // leader) without a record acknowledged earlier under false. Every acks=all record of the topic
    // acknowledged so far is at risk, and counted under 'acks=all write.caching'.
    for (const r of this.sent)
      if (r.topic === MAIN_TOPIC && r.strategy.startsWith('acks=all')) {
        r.strategy = 'acks=all write.caching';
        r.excused = true;
      }
    for (const [key, r] of this.read) if (key.startsWith(`${MAIN_TOPIC}/`)) r.excused = true;
  }

  /** Counts one injected fault of `kind` that the cluster does not count itself (ClusterSim.faults). */
  injected(kind: FaultKind): void {
    this.cluster.faults.record(kind);
  }

  /** Whether a storage fault (disk full, a failed fsync) may have taken a replica offline this run. */
  storageFaults = false;

  /**
   * Per replica (`broker/topic/partition`) of a crashed broker or replica: the end offset of the
   * record batches it had fsynced when it went down, checked against its recovery when it starts.
   */
  readonly fsyncedAtCrash = new Map<string, number>();

  /**
   * Remembers what broker `broker`'s replicas (`partitions`, or all of the run's) had fsynced, before
   * a crash or power loss: the valid record batches of their durable segment bytes, in offset order.
   */
  async rememberFsynced(broker: number, partitions: { topic: string; partition: number }[]): Promise<void> {
    for (const { topic, partition } of partitions) {
      let fsynced = fsyncedEnd(this.cluster, broker, topic, partition);
      // What the replica itself saw fsynced (its fsyncedOffset): an fsync that completed after the
      // replica went offline on a failed one never counted for it, and its restart may cut back to
      // its own durable point (a failed fsync leaves the page cache untrustworthy).
      const p = await this.cluster.partition(topic, partition).catch(() => null);
      if (p !== null && this.cluster.up.has(broker)) {
        const own = await this.cluster
          .ask(this.cluster.replica(broker, p.topicId, partition), 'replica.describe', {}, 5_000)
          .catch(() => null);
        if (own !== null) fsynced = Math.min(fsynced, own.fsyncedOffset);
      }
      this.fsyncedAtCrash.set(`${broker}/${topic}/${partition}`, fsynced);
    }
  }

  /**
   * DESIGN.md's recovery invariant for broker `broker`'s replicas remembered by {@link rememberFsynced}:
   * each recovered (before any truncation a leader orders) at least every batch it had fsynced.
   */
  async checkRecovered(broker: number): Promise<void> {
    for (const [key, fsynced] of [...this.fsyncedAtCrash]) {
      const [b, topic, partition] = key.split('/') as [string, string, string];
      if (Number(b) !== broker) continue;
      this.fsyncedAtCrash.delete(key);
      if (fsynced <= 0) continue;
      const p = await this.cluster.partition(topic, Number(partition)).catch(() => null);
      if (p === null) continue;
      const described = await this.cluster
        .ask(this.cluster.replica(broker, p.topicId, Number(partition)), 'replica.describe', {}, 5_000)
        .catch(() => null);
      if (described === null || described.recoveredLogEndOffset < 0) continue;
      this.checker.check(
        'recovery-keeps-fsynced',
        described.recoveredLogEndOffset >= fsynced,
        () =>
          `${topic}-${partition} on broker ${broker}: recovered to offset ${described.recoveredLogEndOffset} but had fsynced batches up to ${fsynced}`,
      );
    }
  }

  /** A value no other record of the run has. */
  freshValue(strategy: ProducerStrategy): string {
    return `${strategy.replace(/[^a-z0-9]+/gi, '')}-${this.nextValue++}`;
  }

  /** Any running broker (the lowest id), as a client's bootstrap; -1 when none is up. */
  anyBroker(): number {
    for (let b = 0; b < this.nodes; b++) if (this.cluster.up.has(b)) return b;
    return -1;
  }

  /** The leader of `topic`-`partition` as a running broker's metadata cache names it (-1: none known). */
  async leaderOf(
    topic: string,
    partition: number,
    via = this.anyBroker(),
  ): Promise<{ leader: number; leaderEpoch: number }> {
    const broker = this.cluster.up.has(via) ? via : this.anyBroker();
    if (broker < 0) return { leader: -1, leaderEpoch: -1 };
    const m = await this.client.metadata(broker, topic);
    const p = m.partitions.find((x) => x.partition === partition);
    return p === undefined ? { leader: -1, leaderEpoch: -1 } : p;
  }

  /**
   * Sends one single-record batch of `value` as `strategy` does, retrying as a Kafka client does on
   * retriable errors (up to 5 attempts, 100 ms of virtual time apart, metadata refreshed each time): an
   * idempotent producer resends the same batch with the same sequence, the others resend it as new.
   * Returns the acknowledged offset, or -1 (not acknowledged; acks=0: never known).
   */
  async produce(
    strategy: ProducerStrategy,
    topic: string,
    partition: number,
    value: string,
    via = this.anyBroker(),
  ): Promise<number> {
    const acks = strategy === 'acks=0' ? 0 : strategy === 'acks=1' ? 1 : -1;
    const idempotent = strategy === 'acks=all idempotent';
    // CreateTime from the client's clock (the simulation's wall clock), as a producer stamps it: a
    // timestamp of 0 would put every record past retention.ms at once.
    const record = { key: null, value: Buffer.from(value), headers: [], timestamp: this.cluster.sim.clock.nowMs() };
    let batch = buildRecordBatch([record]);
    if (idempotent) {
      const producer = await this.idempotentProducer();
      if (producer === null) return -1;
      const key = `${topic}/${partition}`;
      const sequence = producer.sequences.get(key) ?? 0;
      batch = buildRecordBatch([record], {
        producerId: producer.producerId,
        producerEpoch: producer.producerEpoch,
        baseSequence: sequence,
      });
      producer.sequences.set(key, sequence + 1);
    }
    const key = `${topic}/${partition}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      // As a Kafka producer does: the leader from its metadata cache, refreshed (from `via`) only when
      // it has none or the last send to that leader failed, so it may well send to a demoted leader.
      let leader = this.producerMetadata.get(key) ?? -1;
      if (leader < 0 || !this.cluster.up.has(leader)) {
        leader = (await this.leaderOf(topic, partition, via)).leader;
        this.producerMetadata.set(key, leader);
      }
      if (leader >= 0 && this.cluster.up.has(leader)) {
        const reply = await this.client
          .produce(leader, topic, partition, batch, acks, 3_000)
          .catch(() => ({ errorCode: ErrorCode.REQUEST_TIMED_OUT, baseOffset: -1 }));
        if (reply.errorCode === ErrorCode.NONE) return reply.baseOffset;
        this.producerMetadata.delete(key);
        if (!RETRIABLE.has(reply.errorCode)) break;
      }
      await this.cluster.advance(100);
    }
    // Kafka's idempotent producer that gives up on a batch bumps its epoch (KIP-360): here a new producer id.
    if (idempotent) this.producer = null;
    return -1;
  }

  private async idempotentProducer(): Promise<World['producer']> {
    if (this.producer !== null) return this.producer;
    const broker = this.anyBroker();
    if (broker < 0) return null;
    const r = await this.client.initProducerId(broker).catch(() => null);
    if (r === null || r.errorCode !== ErrorCode.NONE) return null;
    this.producer = { producerId: r.producerId, producerEpoch: r.producerEpoch, sequences: new Map() };
    return this.producer;
  }
}

/** Errors a Kafka producer retries (the leader moved, the ISR is short, the request timed out). */
const RETRIABLE: ReadonlySet<number> = new Set([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.KAFKA_STORAGE_ERROR,
]);

type Command = fc.AsyncCommand<ModelState, World>;

/** A batch of `count` records of one strategy to one partition. */
class ProduceCommand implements Command {
  constructor(
    readonly strategy: ProducerStrategy,
    readonly partition: number,
    readonly count: number,
    /** The broker the client asks for metadata (its bootstrap; another up broker when it is down). */
    readonly via: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: ModelState, world: World): Promise<void> {
    const topic = this.strategy === 'acks=all unclean-election' ? UNCLEAN_TOPIC : MAIN_TOPIC;
    const partition = topic === UNCLEAN_TOPIC ? 0 : this.partition % model.partitions;
    for (let i = 0; i < this.count; i++) {
      const value = world.freshValue(this.strategy);
      const offset = await world.produce(this.strategy, topic, partition, value, this.via);
      // Acknowledged with write.caching=true: before any fsync, so counted apart (a power loss may take it).
      const cached = topic === MAIN_TOPIC && world.writeCaching && this.strategy.startsWith('acks=all');
      const strategy: ProducerStrategy = cached ? 'acks=all write.caching' : this.strategy;
      const idempotent = this.strategy === 'acks=all idempotent';
      if (offset >= 0 || this.strategy === 'acks=0')
        world.sent.push({ value, strategy, topic, partition, offset, idempotent, excused: false });
    }
  }
  toString(): string {
    return `produce(${this.strategy}, p${this.partition}, ${this.count}, via ${this.via})`;
  }
}

/**
 * Two producers of one strategy send to the same partition at once: the first from its cached
 * metadata (the leader `viaA` names, or the one it last used), the second through broker `viaB`, so
 * a record sent to a demoted leader is in flight while the new leader takes writes (what a fenced
 * leader must refuse). Each is a single send, no retries.
 */
class ProducePairCommand implements Command {
  constructor(
    readonly strategy: ProducerStrategy,
    readonly partition: number,
    readonly viaA: number,
    readonly viaB: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: ModelState, world: World): Promise<void> {
    const partition = this.partition % model.partitions;
    const acks = this.strategy === 'acks=0' ? 0 : this.strategy === 'acks=1' ? 1 : -1;
    const cached = world.writeCaching && acks === -1;
    const strategy: ProducerStrategy = cached ? 'acks=all write.caching' : this.strategy;
    const sends = [];
    for (const [i, via] of [this.viaA, this.viaB].entries()) {
      // The first producer sends where its metadata cache says (a client that has not refreshed).
      const cachedLeader = i === 0 ? world.cachedLeader(MAIN_TOPIC, partition) : -1;
      const leader = cachedLeader >= 0 ? cachedLeader : (await world.leaderOf(MAIN_TOPIC, partition, via)).leader;
      if (leader < 0 || !world.cluster.up.has(leader)) continue;
      const value = world.freshValue(this.strategy);
      const record = { key: null, value: Buffer.from(value), headers: [], timestamp: world.cluster.sim.clock.nowMs() };
      const reply = world.client
        .produce(leader, MAIN_TOPIC, partition, buildRecordBatch([record]), acks, 3_000, false)
        .catch(() => ({ errorCode: ErrorCode.REQUEST_TIMED_OUT, baseOffset: -1 }));
      sends.push({ value, reply });
    }
    for (const { value, reply } of sends) {
      const r = await world.cluster.sim.runUntil(reply);
      if (r.errorCode === ErrorCode.NONE && (r.baseOffset >= 0 || acks === 0))
        world.sent.push({
          value,
          strategy,
          topic: MAIN_TOPIC,
          partition,
          offset: r.baseOffset,
          idempotent: false,
          excused: false,
        });
    }
  }
  toString(): string {
    return `produce-pair(${this.strategy}, p${this.partition}, via ${this.viaA} and ${this.viaB})`;
  }
}

/**
 * A consumer's fetch from the partition's leader, from offset 0: what it gets must lie below the HW
 * of the response that carried it (DESIGN.md invariant 2), with dense offsets; it is remembered, and
 * at the end it must still be in the log at the same offset (a record read below the HW is committed).
 */
class FetchCommand implements Command {
  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: ModelState, world: World): Promise<void> {
    const partition = this.topic === UNCLEAN_TOPIC ? 0 : this.partition % model.partitions;
    const { leader, leaderEpoch } = await world.leaderOf(this.topic, partition);
    if (leader < 0 || !world.cluster.up.has(leader)) return;
    const r = await world.client
      .fetch(leader, this.topic, partition, 0, { currentLeaderEpoch: leaderEpoch })
      .catch(() => null);
    if (r === null || r.errorCode !== ErrorCode.NONE || r.records === null) return;
    let expected = -1;
    for (const batch of decodeRecordBatches(r.records))
      for (const record of batch.records) {
        world.checker.check(
          'read-below-hw',
          record.offset < r.highWatermark,
          () =>
            `${this.topic}-${partition}: broker ${leader} returned offset ${record.offset} with high watermark ${r.highWatermark}`,
        );
        world.checker.check(
          'dense-offsets',
          expected < 0 || record.offset === expected,
          () => `${this.topic}-${partition}: a fetch returned offset ${record.offset} after ${expected - 1}`,
        );
        expected = record.offset + 1;
        world.read.set(`${this.topic}/${partition}/${record.offset}`, {
          value: record.value?.toString() ?? '',
          excused: false,
        });
      }
  }
  toString(): string {
    return `fetch(${this.topic}-${this.partition})`;
  }
}

/** Crashes broker `broker` (every actor at once, unsynced bytes kept: a process crash). */
class CrashBrokerCommand implements Command {
  constructor(readonly broker: number) {}
  check(model: ModelState): boolean {
    return model.up[this.broker] === true;
  }
  async run(model: ModelState, world: World): Promise<void> {
    await world.rememberFsynced(this.broker, partitionsOf(model));
    await world.cluster.crashBroker(this.broker);
    model.up[this.broker] = false;
  }
  toString(): string {
    return `crash-broker(${this.broker})`;
  }
}

/** A controlled shutdown of broker `broker` (leadership moves away first). */
class StopBrokerCommand implements Command {
  constructor(readonly broker: number) {}
  check(model: ModelState): boolean {
    return model.up[this.broker] === true;
  }
  async run(model: ModelState, world: World): Promise<void> {
    await world.cluster.stopBroker(this.broker);
    model.up[this.broker] = false;
  }
  toString(): string {
    return `stop-broker(${this.broker})`;
  }
}

/** Starts broker `broker` again (its log recovery, then its replicas' roles from the controller). */
class StartBrokerCommand implements Command {
  constructor(readonly broker: number) {}
  check(model: ModelState): boolean {
    return model.up[this.broker] === false;
  }
  async run(model: ModelState, world: World): Promise<void> {
    // A broker cut off from the controller cannot register: its start fails, as it would in
    // production, and it stays down (the model's next start may find the way clear).
    const started = await world.cluster.startBroker(this.broker).then(
      () => true,
      () => false,
    );
    if (!started) {
      await world.cluster.crashBroker(this.broker).catch(() => undefined);
      return;
    }
    model.up[this.broker] = true;
    await world.checkRecovered(this.broker);
  }
  toString(): string {
    return `start-broker(${this.broker})`;
  }
}

/** Power loss of the whole host: unsynced bytes lost (torn: the last write cut at a byte), everything restarts. */
class PowerLossCommand implements Command {
  constructor(readonly torn: boolean) {}
  check(): boolean {
    return true;
  }
  async run(model: ModelState, world: World): Promise<void> {
    // write.caching=true acknowledges acks=all and moves the HW before the fsync: what it covered may go.
    world.exposeCachedWrites();
    world.cachedSincePowerLoss = world.writeCaching;
    for (const b of world.cluster.up) await world.rememberFsynced(b, partitionsOf(model));
    await world.cluster.powerLoss(this.torn ? { kind: 'torn-last-write' } : { kind: 'lose-unsynced' });
    for (let b = 0; b < model.up.length; b++) model.up[b] = world.cluster.up.has(b);
    for (const b of world.cluster.up) await world.checkRecovered(b);
  }
  toString(): string {
    return `power-loss(${this.torn ? 'torn' : 'clean'})`;
  }
}

/** The controller dies and restarts from its metadata log. */
class ControllerCrashCommand implements Command {
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    await world.cluster.restartController();
  }
  toString(): string {
    return 'controller-crash';
  }
}

/** Cuts broker `broker`'s replicas off the data path (their fetches and answers dropped) until a heal. */
class IsolateCommand implements Command {
  constructor(readonly broker: number) {}
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    world.cluster.setFaults(ClusterSim.isolateReplicas(this.broker));
    world.injected('network-partition');
  }
  toString(): string {
    return `isolate-replicas(${this.broker})`;
  }
}

/** Every network fault healed. */
class HealCommand implements Command {
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    world.cluster.setFaults(null);
    world.cluster.faults.healAll();
    await world.cluster.resubscribeNodes();
  }
  toString(): string {
    return 'heal';
  }
}

/**
 * A network partition between broker `a` and broker `b` (or the controller, -1): every message from
 * one side to the other dropped, one way (`a` to `b`) or both, until a heal.
 */
class NetworkPartitionCommand implements Command {
  constructor(
    readonly a: number,
    readonly b: number,
    readonly direction: 'both' | 'a-to-b',
  ) {}
  check(): boolean {
    return this.a !== this.b;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    world.cluster.faults.partition(this.a, this.b, this.direction);
  }
  toString(): string {
    const other = this.b === -1 ? 'controller' : `broker ${this.b}`;
    return `partition(broker ${this.a} ${this.direction === 'both' ? '<->' : '->'} ${other})`;
  }
}

/** Broker `broker`'s followers fetch `delayMs` late (past replica.lag.time.max.ms, 3 s here) until a heal. */
class SlowFollowerCommand implements Command {
  constructor(
    readonly broker: number,
    readonly delayMs: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    world.cluster.faults.slowFollower(this.broker, this.delayMs);
  }
  toString(): string {
    return `slow-follower(${this.broker}, ${this.delayMs} ms)`;
  }
}

/**
 * Message chaos until a heal: replica-to-replica messages dropped, or any message between the
 * cluster's actors duplicated, delayed or reordered, with the given probability (production's
 * MessagePorts never do any of it; the invariants must hold anyway). Drops stay on the data path: a
 * control-plane request dropped is never retried by its sender, which stalls a run and says nothing
 * about safety.
 */
class ChaosCommand implements Command {
  constructor(
    readonly kind: 'drop' | 'duplicate' | 'delay' | 'reorder',
    readonly probability: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    world.cluster.faults.chaos({
      [this.kind]: this.probability,
      maxDelayMs: 2_000,
      filter: this.kind === 'drop' ? 'replica-to-replica' : 'cluster',
    });
  }
  toString(): string {
    return `chaos(${this.kind} ${this.probability})`;
  }
}

/**
 * The metadata pushes to broker `broker`'s network node are dropped until a heal: its cache goes
 * stale, so a client that asks it for the leader may send to a demoted one, which must refuse.
 */
class StaleMetadataCommand implements Command {
  /** `broker` -1: the broker that leads main-topic partition `partition` now (the one a demotion would fence). */
  constructor(
    readonly broker: number,
    readonly partition = 0,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: ModelState, world: World): Promise<void> {
    const broker =
      this.broker >= 0
        ? this.broker
        : (await world.cluster.partition(MAIN_TOPIC, this.partition % model.partitions)).leader;
    if (broker < 0) return;
    const to = `net/${broker}`;
    world.cluster.faults.chaos({ drop: 1, filter: (e) => e.type === 'metadata.update' && e.to === to });
  }
  toString(): string {
    return this.broker >= 0 ? `stale-metadata(net/${this.broker})` : `stale-metadata(leader of t-${this.partition})`;
  }
}

/**
 * The zombie leader: the broker leading main-topic partition `partition` loses its way to the
 * controller (its heartbeats and requests dropped; the controller's pushes still reach its replica
 * manager) and its network node's metadata goes stale, until a heal. After
 * broker.session.timeout.ms the controller fences it and elects another leader, which its replicas
 * learn from the pushes while clients that ask it still see it leading: what it must now refuse.
 */
class ZombieLeaderCommand implements Command {
  constructor(readonly partition: number) {}
  check(): boolean {
    return true;
  }
  async run(model: ModelState, world: World): Promise<void> {
    const leader = (await world.cluster.partition(MAIN_TOPIC, this.partition % model.partitions)).leader;
    if (leader < 0) return;
    world.cluster.faults.partition(leader, -1, 'a-to-b');
    const to = `net/${leader}`;
    world.cluster.faults.chaos({ drop: 1, filter: (e) => e.type === 'metadata.update' && e.to === to });
  }
  toString(): string {
    return `zombie-leader(t-${this.partition})`;
  }
}

/** A preferred-leader election of every partition (ElectLeaders PREFERRED): live leaders may be demoted. */
class ElectPreferredCommand implements Command {
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    await world.cluster
      .ask(CONTROLLER_ACTOR_ID, 'controller.elect-leaders', { electionType: 0, partitions: null })
      .catch(() => undefined);
  }
  toString(): string {
    return 'elect-preferred';
  }
}

/** fsyncs complete as scheduled events up to `maxDelayMs` late, failing with EIO at `failProbability`, until a heal. */
class FsyncScheduleCommand implements Command {
  constructor(
    readonly maxDelayMs: number,
    readonly failProbability: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    if (this.failProbability > 0) world.storageFaults = true;
    world.cluster.faults.fsyncSchedule({ maxDelayMs: this.maxDelayMs, failProbability: this.failProbability });
  }
  toString(): string {
    return `fsync-schedule(late up to ${this.maxDelayMs} ms, fail ${this.failProbability})`;
  }
}

/** Broker `broker`'s disk is full (ENOSPC on write and fsync), or freed. */
class DiskFullCommand implements Command {
  constructor(
    readonly broker: number,
    readonly full: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    if (this.full) world.storageFaults = true;
    world.cluster.faults.diskFull(this.broker, this.full);
  }
  toString(): string {
    return `disk-${this.full ? 'full' : 'freed'}(${this.broker})`;
  }
}

/** Broker `broker`'s wall clock jumps by `deltaMs` (forward or back); its monotonic time does not. */
class ClockJumpCommand implements Command {
  constructor(
    readonly broker: number,
    readonly deltaMs: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    world.cluster.faults.jumpClock(this.broker, this.deltaMs);
  }
  toString(): string {
    return `clock-jump(${this.broker}, ${this.deltaMs > 0 ? '+' : ''}${this.deltaMs} ms)`;
  }
}

/** One replica actor of the main topic crashes and its supervisor restarts it (log recovery, role from its manager). */
class ReplicaCrashCommand implements Command {
  constructor(
    readonly broker: number,
    readonly partition: number,
  ) {}
  check(model: ModelState): boolean {
    return model.up[this.broker] === true;
  }
  async run(model: ModelState, world: World): Promise<void> {
    const partition = this.partition % model.partitions;
    await world.rememberFsynced(this.broker, [{ topic: MAIN_TOPIC, partition }]);
    await world.cluster.crashReplica(this.broker, MAIN_TOPIC, partition);
    await world.checkRecovered(this.broker);
  }
  toString(): string {
    return `replica-crash(${this.broker}, t-${this.partition})`;
  }
}

/** Virtual time passes (timers fire: ISR shrink, session timeouts, retention, the cleaner). */
class AdvanceCommand implements Command {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    await world.cluster.advance(this.ms);
  }
  toString(): string {
    return `advance(${this.ms} ms)`;
  }
}

/** Changes the main topic's min.insync.replicas and write.caching (IncrementalAlterConfigs through a broker). */
class AlterConfigCommand implements Command {
  constructor(
    readonly minInsyncReplicas: number,
    readonly writeCaching: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: ModelState, world: World): Promise<void> {
    const broker = world.anyBroker();
    if (broker < 0) return;
    const error = await world.client
      .alterTopicConfigs(broker, MAIN_TOPIC, {
        'min.insync.replicas': String(this.minInsyncReplicas),
        'write.caching': String(this.writeCaching),
      })
      .catch(() => -1);
    // An error may still have changed the config (it was committed, then a broker was slow to apply
    // it): the controller's image says what the topic has.
    const caching =
      error === ErrorCode.NONE
        ? this.writeCaching
        : await world.cluster
            .image()
            .then((image) => image.topics.find((t) => t.name === MAIN_TOPIC)?.configs['write.caching'] === 'true')
            .catch(() => world.writeCaching);
    world.writeCaching = caching;
    if (caching) world.cachedSincePowerLoss = true;
  }
  toString(): string {
    return `alter-config(min.insync.replicas=${this.minInsyncReplicas}, write.caching=${this.writeCaching})`;
  }
}

/** Grows the main topic by one partition (CreatePartitions through a broker). */
class CreatePartitionCommand implements Command {
  check(model: ModelState): boolean {
    return model.partitions < 4;
  }
  async run(model: ModelState, world: World): Promise<void> {
    const broker = world.anyBroker();
    if (broker < 0) return;
    const error = await world.client.createPartitions(broker, MAIN_TOPIC, model.partitions + 1).catch(() => -1);
    if (error === ErrorCode.NONE) {
      model.partitions++;
      await world.cluster.awaitApplied((await world.cluster.image()).offset);
    }
  }
  toString(): string {
    return 'create-partition';
  }
}

/** The strategies a producer chooses (write.caching is the topic's, so 'acks=all write.caching' is counted, not chosen). */
const SENDER_STRATEGIES = PRODUCER_STRATEGIES.filter((s) => s !== 'acks=all write.caching');

/** Options of {@link modelCommands}: the brokers and the enabled fault kinds. */
export interface ModelOptions {
  nodes: number;
  faults: ReadonlySet<FaultKind>;
  maxCommands: number;
  /** fast-check's replay path of the commands (a shrunk counterexample's), when replaying one. */
  replayPath?: string;
}

/**
 * The command arbitraries of a run: produces (every strategy) and fetches are the most likely,
 * starts twice as likely as crashes so the cluster mostly takes writes while it is being broken; a
 * fault kind not in `options.faults` is never generated.
 */
export function modelCommands(options: ModelOptions): fc.Arbitrary<Iterable<Command>> {
  const broker = fc.integer({ min: 0, max: options.nodes - 1 });
  const on = (kind: FaultKind) => options.faults.has(kind);
  const produce = fc
    .tuple(fc.constantFrom(...SENDER_STRATEGIES), fc.nat(3), fc.integer({ min: 1, max: 3 }), broker)
    .map(([s, p, n, via]) => new ProduceCommand(s, p, n, via));
  const fetch = fc.tuple(fc.constantFrom(MAIN_TOPIC, UNCLEAN_TOPIC), fc.nat(3)).map(([t, p]) => new FetchCommand(t, p));
  // fc.commands picks among its arbitraries uniformly: repeating one weighs it.
  const pair = fc
    .tuple(fc.constantFrom('acks=1' as const, 'acks=all' as const), fc.nat(3), broker, broker)
    .map(([s, p, a, b]) => new ProducePairCommand(s, p, a, b));
  const arbitraries: fc.Arbitrary<Command>[] = [
    ...Array.from({ length: 7 }, () => produce),
    pair,
    ...Array.from({ length: 3 }, () => fetch),
    broker.map((b) => new StartBrokerCommand(b)),
    broker.map((b) => new StartBrokerCommand(b)),
    fc.integer({ min: 0, max: 8000 }).map((ms) => new AdvanceCommand(ms)),
    fc.tuple(fc.integer({ min: 1, max: 3 }), fc.boolean()).map(([m, w]) => new AlterConfigCommand(m, w)),
    fc.constant(new CreatePartitionCommand()),
    ...consumerCommands(MAIN_TOPIC),
  ];
  if (on('broker-crash')) arbitraries.push(broker.map((b) => new CrashBrokerCommand(b)));
  if (on('broker-stop')) arbitraries.push(broker.map((b) => new StopBrokerCommand(b)));
  if (on('power-loss')) arbitraries.push(fc.boolean().map((t) => new PowerLossCommand(t)));
  if (on('controller-crash')) arbitraries.push(fc.constant(new ControllerCrashCommand()));
  const heal = fc.constant(new HealCommand());
  if (on('network-partition'))
    arbitraries.push(
      broker.map((b) => new IsolateCommand(b)),
      fc
        .tuple(
          broker,
          fc.integer({ min: -1, max: options.nodes - 1 }),
          fc.constantFrom('both' as const, 'a-to-b' as const),
        )
        .map(([a, b, d]) => new NetworkPartitionCommand(a, b, d)),
    );
  if (on('slow-follower'))
    arbitraries.push(
      fc.tuple(broker, fc.integer({ min: 3_500, max: 10_000 })).map(([b, ms]) => new SlowFollowerCommand(b, ms)),
    );
  for (const [kind, name] of [
    ['message-drop', 'drop'],
    ['message-duplicate', 'duplicate'],
    ['message-delay', 'delay'],
    ['message-reorder', 'reorder'],
  ] as const)
    if (on(kind)) arbitraries.push(fc.constantFrom(0.05, 0.2).map((p) => new ChaosCommand(name, p)));
  if (on('message-drop'))
    arbitraries.push(
      broker.map((b) => new StaleMetadataCommand(b)),
      fc.nat(3).map((p) => new StaleMetadataCommand(-1, p)),
      fc.nat(3).map((p) => new ZombieLeaderCommand(p)),
      fc.constant(new ElectPreferredCommand()),
    );
  if (on('fsync-delay'))
    arbitraries.push(fc.integer({ min: 1, max: 500 }).map((ms) => new FsyncScheduleCommand(ms, 0)));
  if (on('fsync-failure')) arbitraries.push(fc.constantFrom(0.05, 0.3).map((p) => new FsyncScheduleCommand(50, p)));
  if (on('disk-full'))
    arbitraries.push(fc.tuple(broker, fc.boolean()).map(([b, full]) => new DiskFullCommand(b, full)));
  if (on('clock-jump'))
    arbitraries.push(
      fc.tuple(broker, fc.integer({ min: -3_600_000, max: 3_600_000 })).map(([b, ms]) => new ClockJumpCommand(b, ms)),
    );
  if (on('replica-crash')) arbitraries.push(fc.tuple(broker, fc.nat(3)).map(([b, p]) => new ReplicaCrashCommand(b, p)));

  // One heal for all the faults that last until healed, twice as likely as each of them: a fault
  // stays on for a few commands, long enough for a client to meet it.
  if (
    [
      'network-partition',
      'slow-follower',
      'message-drop',
      'message-duplicate',
      'message-delay',
      'message-reorder',
      'fsync-delay',
      'fsync-failure',
      'disk-full',
    ].some((k) => on(k as FaultKind))
  )
    arbitraries.push(heal, heal);
  return fc.commands(arbitraries, {
    maxCommands: options.maxCommands,
    size: 'max',
    ...(options.replayPath !== undefined ? { replayPath: options.replayPath } : {}),
  });
}

/** The topic-partitions a run's checks cover. */
function partitionsOf(model: ModelState): { topic: string; partition: number }[] {
  const out = [{ topic: UNCLEAN_TOPIC, partition: 0 }];
  for (let p = 0; p < model.partitions; p++) out.push({ topic: MAIN_TOPIC, partition: p });
  return out;
}

/** The checks after every command: log matching below the HW on every partition (DESIGN.md invariant 3). */
export async function checkStep(model: ModelState, world: World): Promise<void> {
  for (const { topic, partition } of partitionsOf(model))
    await world.checker.checkAssertion('log-matching', () =>
      world.cluster.assertLogsMatchBelowHighWatermark(topic, partition),
    );
}

/** Sets up a run's topics: `t` with two partitions and `u` with unclean election, both RF 3 and min.insync.replicas 2. */
export async function setUpWorld(world: World): Promise<ModelState> {
  const rf = Math.min(3, world.nodes);
  const minIsr = String(Math.min(2, rf));
  for (const [topic, partitions, configs] of [
    [MAIN_TOPIC, 2, { 'min.insync.replicas': minIsr }],
    [UNCLEAN_TOPIC, 1, { 'min.insync.replicas': minIsr, 'unclean.leader.election.enable': 'true' }],
  ] as const) {
    const error = await world.client.createTopic(0, topic, partitions, rf, configs);
    if (error !== ErrorCode.NONE) throw new Error(`creating ${topic}: error ${error}`);
  }
  await world.cluster.awaitApplied((await world.cluster.image()).offset);
  return { up: Array.from({ length: world.nodes }, () => true), partitions: 2 };
}

/**
 * The end offset (last offset + 1) of the valid record batches in broker `broker`'s durable segment
 * bytes of `topic`-`partition` (what a power loss would leave), read segment by segment from each
 * file's base offset; 0 when none. Reads the v2 header: baseOffset int64 at 0, batchLength int32 at 8,
 * lastOffsetDelta int32 at 23, and checks each batch's CRC-32C.
 */
export function fsyncedEnd(cluster: ClusterSim, broker: number, topic: string, partition: number): number {
  const fs = cluster.fs;
  const dir = `${cluster.configs[broker]!.logDirs[0]}/${topic}-${partition}`;
  if (!fs.exists(dir)) return 0;
  let end = 0;
  for (const name of fs
    .readdir(dir)
    .filter((n) => n.endsWith('.log'))
    .sort()) {
    const bytes = fs.durableContent(`${dir}/${name}`);
    for (let position = 0; position + 61 <= bytes.length;) {
      const size = 12 + bytes.readInt32BE(position + 8);
      if (size < 61 || position + size > bytes.length || !crcValid(bytes, position, size)) break;
      end = Number(bytes.readBigInt64BE(position)) + bytes.readInt32BE(position + 23) + 1;
      position += size;
    }
  }
  return end;
}

/** One broker's log of a partition as (offset, leader epoch, value) rows, read from its segment files. */
export function logRows(
  cluster: ClusterSim,
  broker: number,
  topic: string,
  partition: number,
): { offset: number; epoch: number; value: string }[] {
  const rows: { offset: number; epoch: number; value: string }[] = [];
  for (const b of decodeRecordBatches(cluster.logBytes(broker, topic, partition)))
    for (const r of b.records)
      rows.push({ offset: r.offset, epoch: b.partitionLeaderEpoch, value: r.value?.toString() ?? '' });
  return rows;
}

/**
 * The end of a run: faults healed, every broker started, a leader for every partition and its
 * replicas converged; then the final-log checks (dense offsets, acks=all durable, reads still there,
 * no idempotent duplicate, one leader per epoch) and the per-strategy counts.
 */
export async function finishRun(model: ModelState, world: World): Promise<StrategyCounts[]> {
  const { cluster, checker } = world;
  cluster.setFaults(null);
  cluster.faults.healAll();
  await cluster.resubscribeNodes();
  // A replica a storage fault took offline stays offline until its broker restarts (as Kafka's log
  // dir does): the operator's restart, once the disk is healthy again.
  if (world.storageFaults) {
    world.exposeCachedWrites();
    for (const b of [...cluster.up]) await cluster.crashBroker(b);
  }
  for (let b = 0; b < world.nodes; b++) if (!cluster.up.has(b)) await cluster.startBroker(b);
  const finals = new Map<string, { offset: number; value: string }[]>();
  for (const { topic, partition } of partitionsOf(model)) {
    await checker.checkAssertion('converges', async () => {
      await cluster.waitFor(
        `${topic}-${partition} has a leader`,
        async () => (await cluster.partition(topic, partition)).leader >= 0,
      );
      // The partition's assigned replicas: with more brokers than the replication factor the others hold no log.
      await cluster.converge(topic, (await cluster.partition(topic, partition)).replicas, partition);
    });
    await checker.checkAssertion('log-matching', () => cluster.assertLogsMatchBelowHighWatermark(topic, partition));
    const p = await cluster.partition(topic, partition);
    const rows = logRows(cluster, p.leader, topic, partition);
    for (const [i, r] of rows.entries())
      checker.check(
        'dense-offsets',
        i === 0 || r.offset === rows[i - 1]!.offset + 1,
        () => `${topic}-${partition}: offset ${r.offset} follows ${rows[i - 1]!.offset} in broker ${p.leader}'s log`,
      );
    finals.set(`${topic}/${partition}`, rows);
  }
  await checker.checkAssertion('leader-epochs', () => cluster.assertOneLeaderPerEpoch());

  const valueAt = (topic: string, partition: number, offset: number): string | undefined => {
    const rows = finals.get(`${topic}/${partition}`) ?? [];
    const first = rows[0]?.offset ?? 0;
    return rows[offset - first]?.value;
  };
  // A record a consumer read below the HW is committed: it stays at its offset (unclean election aside).
  for (const [key, { value, excused }] of world.read) {
    const [topic, partition, offset] = key.split('/') as [string, string, string];
    if (topic === UNCLEAN_TOPIC || excused) continue;
    const now = valueAt(topic, Number(partition), Number(offset));
    checker.check(
      'log-matching',
      now === value,
      () =>
        `${topic}-${partition}: offset ${offset} was read as ${value} below the HW, the final log has ${now ?? 'nothing'} there`,
    );
  }

  const copies = new Map<string, number>();
  for (const rows of finals.values()) for (const r of rows) copies.set(r.value, (copies.get(r.value) ?? 0) + 1);
  const counts = new Map<ProducerStrategy, StrategyCounts>();
  for (const strategy of PRODUCER_STRATEGIES) counts.set(strategy, { strategy, records: 0, lost: 0, duplicated: 0 });
  for (const r of world.sent) {
    const c = counts.get(r.strategy)!;
    c.records++;
    const n = copies.get(r.value) ?? 0;
    const kept = r.offset >= 0 ? valueAt(r.topic, r.partition, r.offset) === r.value : n > 0;
    if (!kept) c.lost++;
    if (n > 1) c.duplicated++;
    const mustKeep: InvariantName | null =
      r.strategy === 'acks=all' || r.strategy === 'acks=all idempotent' || r.strategy === 'acks=all write.caching'
        ? 'acks-all-durable'
        : null;
    if (mustKeep !== null && !r.excused)
      checker.check(
        mustKeep,
        kept,
        () =>
          `${r.topic}-${r.partition}: ${r.strategy} record ${r.value} acknowledged at offset ${r.offset} is ${n > 0 ? 'at another offset' : 'lost'} (final log has ${valueAt(r.topic, r.partition, r.offset) ?? 'nothing'} there)`,
      );
    if (r.idempotent)
      checker.check(
        'idempotent-no-duplicate',
        n <= 1,
        () => `${r.topic}-${r.partition}: idempotent record ${r.value} is stored ${n} times`,
      );
  }
  return [...counts.values(), ...(await finishConsumers(world, MAIN_TOPIC))];
}

/**
 * Every replica's log of every partition as a printed table: one row per offset, one column per
 * broker, each cell `e<leader epoch> <value>` (blank where that broker has no record).
 */
export async function logTable(model: ModelState, world: World): Promise<string> {
  const lines: string[] = [];
  for (const { topic, partition } of partitionsOf(model)) {
    const p = await world.cluster.partition(topic, partition).catch(() => null);
    lines.push(
      `${topic}-${partition}` +
        (p === null ? '' : `: leader ${p.leader}, leader epoch ${p.leaderEpoch}, isr [${p.isr.join(',')}]`),
    );
    const columns = Array.from({ length: world.nodes }, (_, b) => logRows(world.cluster, b, topic, partition));
    const offsets = [...new Set(columns.flatMap((rows) => rows.map((r) => r.offset)))].sort((a, b) => a - b);
    const cells = offsets.map((o) => [
      String(o),
      ...columns.map((rows) => {
        const r = rows.find((x) => x.offset === o);
        return r === undefined ? '' : `e${r.epoch} ${r.value}`;
      }),
    ]);
    const header = ['offset', ...columns.map((_, b) => `broker ${b}`)];
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    const row = (c: string[]) =>
      c
        .map((x, i) => x.padEnd(widths[i]!))
        .join(' | ')
        .trimEnd();
    lines.push(row(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...cells.map(row));
  }
  return lines.join('\n');
}
