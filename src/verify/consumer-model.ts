/**
 * The consumer side of the `fc.commands` model (issue 12 items 2 and 3): one consumer per
 * {@link CONSUMER_STRATEGIES} entry, each in its own group, consuming the main topic's first two
 * partitions with a manual assignment and committed offsets, as a Java or kafka-python consumer does
 * with `assign()` and `commitSync()`: OffsetCommit with generation -1 and no member id, sent to the
 * group's coordinator that FindCoordinator names, retried on the coordinator errors.
 *
 * The strategies differ only in when they commit:
 * - `commit-after-processing`: the loop poll → process → commitSync. Its commit of what it processed
 *   is the first step of its next poll (so a consumer crash between a `process` and the next `poll`
 *   is a crash between processing and committing: duplicates, never a loss).
 * - `commit-before-processing`: poll → commitSync → process. A crash between the poll and the
 *   process loses what was polled.
 * - `auto-commit-5s`: enable.auto.commit with auto.commit.interval.ms=5000: at each of its commands
 *   (Kafka's fires in poll), once 5 s of virtual time have passed since its last auto-commit, its
 *   fetch position is committed, processed or not: both costs are possible.
 *
 * A consumer crash loses its position and the records it polled but did not process; it restarts
 * from its group's committed offset (OffsetFetch), or the log start when there is none. The checks
 * (each counted by the {@link Checker}): `committed-offsets-durable`, that every OffsetFetch serves
 * the last acknowledged commit or one attempted after it (DESIGN.md invariant 7: the coordinator
 * writes commits to __consumer_offsets with acks=all, and that topic takes the broker's
 * write.caching.default, false unless set, so a commit survives power loss too); `dense-offsets`,
 * that within one incarnation a consumer processes each partition's offsets densely from where it
 * started; and, under `dense-offsets` too, that commit-after-processing never loses a record.
 *
 * The consumers' state lives beside the run's world (model.ts's `World`, a WeakMap), so the World
 * needs no field of theirs; {@link finishConsumers} consumes to the end and counts what each strategy cost.
 */
import fc from 'fast-check';
import type { ClusterSim } from './cluster-sim';
import type { SimClient } from './sim-network';
import type { Checker } from './checker';
import type { FaultKind, StrategyCounts } from './report';
import { CONSUMER_STRATEGIES } from './report';
import { ErrorCode } from '../protocol/error-codes';
import { decodeRecordBatches } from '../protocol/record-batch/decode';

/**
 * What the consumers use of a run's world: model.ts's `World` is one (named here, not imported, so
 * this file and model.ts, which registers its commands, do not import each other).
 */
export interface World {
  readonly client: SimClient;
  readonly cluster: ClusterSim;
  readonly checker: Checker;
  /** Faults injected so far by kind (a power loss after a commit excuses it when the offsets topic caches writes). */
  readonly faults: Partial<Record<FaultKind, number>>;
  /** Any running broker, -1 when none is up. */
  anyBroker(): number;
}

/** One of report.ts's consumer strategies. */
export type ConsumerStrategy = (typeof CONSUMER_STRATEGIES)[number];

/** The partitions of the main topic every consumer is assigned (the topic is created with two). */
export const CONSUMED_PARTITIONS: readonly number[] = [0, 1];

/** auto.commit.interval.ms of the auto-commit consumer (Kafka's default). */
export const AUTO_COMMIT_INTERVAL_MS = 5_000;

/** Errors on which a Kafka consumer looks its coordinator up again and retries a commit or offset fetch. */
const COORDINATOR_RETRIABLE: ReadonlySet<number> = new Set([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.REQUEST_TIMED_OUT,
]);

/** Attempts of one commit or offset fetch, 100 ms of virtual time apart (a bounded retries/backoff). */
const COORDINATOR_ATTEMPTS = 5;
const RETRY_BACKOFF_MS = 100;

/** A record a poll returned, or the point where the consumer's position was reset (OFFSET_OUT_OF_RANGE). */
type Polled = { partition: number; offset: number; value: string } | { partition: number; resetTo: number };

/** What the group's coordinator may serve for one partition: the last acknowledged commit or one attempted after it. */
interface CommitLedger {
  /** The last acknowledged committed offset (-1: none yet, OffsetFetch then answers -1). */
  acked: number;
  /** Offsets committed since `acked` without an acknowledgement (timed out or failed: they may have been written). */
  attempted: number[];
  /** The run's power-loss count when `acked` was acknowledged (an excuse when the offsets topic caches writes). */
  powerLossesAtAck: number;
}

/** One consumer of one strategy, its in-memory state (lost on a crash) and what it processed over the run. */
class SimConsumer {
  readonly group: string;
  /** The fetch position per partition; null until (re)started from OffsetFetch. */
  position: Map<number, number> | null = null;
  /** The offset after the last record processed in this incarnation, per partition (what commit-after commits). */
  processedPosition = new Map<number, number>();
  /** The next offset this incarnation must process per partition (dense-offsets). */
  nextToProcess = new Map<number, number>();
  /** Records polled and not processed yet, in poll order. */
  pending: Polled[] = [];
  /** Virtual ms of the last auto-commit (or of the start of this incarnation). */
  lastAutoCommitMs = 0;
  /** The offset this incarnation last committed (or started from) per partition: an unchanged one is not sent again. */
  lastCommitted = new Map<number, number>();
  /** The coordinator node id as last found (-1: look it up). */
  coordinator = -1;
  incarnation = 0;
  /** Every processing over the run: `partition/offset` -> each value processed there, once per processing. */
  readonly processed = new Map<string, string[]>();
  readonly commits = new Map<number, CommitLedger>();

  constructor(readonly strategy: ConsumerStrategy) {
    this.group = `verify-${strategy}`;
  }
}

/** The consumers of one run. */
class Consumers {
  readonly byStrategy = new Map<ConsumerStrategy, SimConsumer>();
  constructor(readonly topic: string) {
    for (const s of CONSUMER_STRATEGIES) this.byStrategy.set(s, new SimConsumer(s));
  }
}

const consumersOfWorld = new WeakMap<World, Consumers>();

function consumersOf(world: World, topic: string): Consumers {
  let c = consumersOfWorld.get(world);
  if (c === undefined) {
    c = new Consumers(topic);
    consumersOfWorld.set(world, c);
  }
  return c;
}

function consumerOf(world: World, topic: string, strategy: ConsumerStrategy): SimConsumer {
  const c = consumersOf(world, topic).byStrategy.get(strategy);
  if (c === undefined) throw new Error(`no consumer of strategy ${strategy}`);
  return c;
}

/** The coordinator of the consumer's group, found through any running broker; -1 when none is up or known. */
async function coordinatorOf(world: World, consumer: SimConsumer, refresh: boolean): Promise<number> {
  if (!refresh && consumer.coordinator >= 0 && world.cluster.up.has(consumer.coordinator)) return consumer.coordinator;
  consumer.coordinator = -1;
  const broker = world.anyBroker();
  if (broker < 0) return -1;
  const r = await world.client.findCoordinator(broker, consumer.group).catch(() => null);
  if (r !== null && r.errorCode === ErrorCode.NONE) consumer.coordinator = r.nodeId;
  return consumer.coordinator;
}

/**
 * Commits `offset` for `partition` as commitSync does: through the coordinator, retrying the
 * coordinator errors (and a coordinator that is down or unknown) with the coordinator looked up again,
 * at most {@link COORDINATOR_ATTEMPTS} times. Records the attempt in the consumer's ledger; returns
 * whether it was acknowledged.
 */
async function commit(
  world: World,
  consumer: SimConsumer,
  topic: string,
  partition: number,
  offset: number,
): Promise<boolean> {
  // Nothing new to commit (a Kafka client would send it again; the coordinator's answer is the same).
  if (consumer.lastCommitted.get(partition) === offset) return true;
  const ledger = consumer.commits.get(partition) ?? { acked: -1, attempted: [], powerLossesAtAck: 0 };
  consumer.commits.set(partition, ledger);
  for (let attempt = 0; attempt < COORDINATOR_ATTEMPTS; attempt++) {
    const coordinator = await coordinatorOf(world, consumer, attempt > 0);
    let error: number = ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (coordinator >= 0 && world.cluster.up.has(coordinator)) {
      if (!ledger.attempted.includes(offset)) ledger.attempted.push(offset);
      error = await world.client
        .offsetCommit(coordinator, consumer.group, topic, partition, offset)
        .catch(() => ErrorCode.REQUEST_TIMED_OUT);
    }
    if (error === ErrorCode.NONE) {
      ledger.acked = offset;
      ledger.attempted = [];
      ledger.powerLossesAtAck = world.faults['power-loss'] ?? 0;
      consumer.lastCommitted.set(partition, offset);
      return true;
    }
    if (!COORDINATOR_RETRIABLE.has(error)) return false;
    await world.cluster.advance(RETRY_BACKOFF_MS);
  }
  return false;
}

/**
 * The group's committed offset of `partition` (OffsetFetch through the coordinator, retried as
 * {@link commit} is), checked against the ledger: it must be the last acknowledged commit or one
 * attempted after it. Returns the offset (-1: none committed), or null when no coordinator answered.
 */
async function fetchCommitted(
  world: World,
  consumer: SimConsumer,
  topic: string,
  partition: number,
): Promise<number | null> {
  for (let attempt = 0; attempt < COORDINATOR_ATTEMPTS; attempt++) {
    const coordinator = await coordinatorOf(world, consumer, attempt > 0);
    let r: { errorCode: number; offset: number } = { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, offset: -1 };
    if (coordinator >= 0 && world.cluster.up.has(coordinator))
      r = await world.client
        .offsetFetch(coordinator, consumer.group, topic, partition)
        .catch(() => ({ errorCode: ErrorCode.REQUEST_TIMED_OUT, offset: -1 }));
    if (r.errorCode === ErrorCode.NONE) {
      checkCommitted(world, consumer, topic, partition, r.offset);
      return r.offset;
    }
    if (!COORDINATOR_RETRIABLE.has(r.errorCode)) return null;
    await world.cluster.advance(RETRY_BACKOFF_MS);
  }
  return null;
}

/** `committed-offsets-durable`: `served` is the last acknowledged commit of `partition` or one attempted after it. */
function checkCommitted(world: World, consumer: SimConsumer, topic: string, partition: number, served: number): void {
  const ledger = consumer.commits.get(partition) ?? { acked: -1, attempted: [], powerLossesAtAck: 0 };
  // With write.caching.default=true, __consumer_offsets acknowledges from the page cache: a power loss
  // after the commit may take it (DESIGN.md "Durability contract"), so it is not checked then.
  const excused = world.cluster.base.writeCachingDefault && (world.faults['power-loss'] ?? 0) > ledger.powerLossesAtAck;
  if (excused) return;
  world.checker.check(
    'committed-offsets-durable',
    served === ledger.acked || ledger.attempted.includes(served),
    () =>
      `group ${consumer.group} ${topic}-${partition}: OffsetFetch served ${served}, the last acknowledged commit is ${ledger.acked}` +
      (ledger.attempted.length > 0 ? ` (attempted after it: ${ledger.attempted.join(', ')})` : ''),
  );
}

/**
 * Starts a consumer's incarnation when it has no position: each partition's committed offset, or
 * the log start (0; a fetch below the log start is reset by OFFSET_OUT_OF_RANGE). False when a
 * committed offset could not be fetched (the consumer stays unstarted until its next command).
 */
async function ensureStarted(world: World, consumer: SimConsumer, topic: string): Promise<boolean> {
  if (consumer.position !== null) return true;
  const position = new Map<number, number>();
  for (const p of CONSUMED_PARTITIONS) {
    const committed = await fetchCommitted(world, consumer, topic, p);
    if (committed === null) return false;
    position.set(p, Math.max(0, committed));
  }
  consumer.position = position;
  consumer.processedPosition = new Map(position);
  consumer.nextToProcess = new Map(position);
  consumer.lastCommitted = new Map(position);
  consumer.pending = [];
  consumer.lastAutoCommitMs = world.cluster.sim.elapsedMs;
  return true;
}

/** The auto-commit consumer's commit of its fetch positions once the interval has passed since the last. */
async function maybeAutoCommit(world: World, consumer: SimConsumer, topic: string): Promise<void> {
  if (consumer.strategy !== 'auto-commit-5s' || consumer.position === null) return;
  if (world.cluster.sim.elapsedMs - consumer.lastAutoCommitMs < AUTO_COMMIT_INTERVAL_MS) return;
  consumer.lastAutoCommitMs = world.cluster.sim.elapsedMs;
  for (const [p, offset] of consumer.position) await commit(world, consumer, topic, p, offset);
}

/**
 * One poll: the strategy's commit that comes before it (auto-commit, commit-after's commit of what it
 * processed), then a fetch of each assigned partition from its position at the leader the metadata
 * names (a partition whose leader is unknown or down, or that answers an error, is skipped until the
 * next poll; OFFSET_OUT_OF_RANGE resets to the log start, auto.offset.reset=earliest); then
 * commit-before's commit of the new positions. Returns the records it polled.
 */
async function poll(world: World, consumer: SimConsumer, topic: string): Promise<number> {
  if (!(await ensureStarted(world, consumer, topic))) return 0;
  await maybeAutoCommit(world, consumer, topic);
  if (consumer.strategy === 'commit-after-processing')
    for (const [p, offset] of consumer.processedPosition) await commit(world, consumer, topic, p, offset);
  const position = consumer.position!;
  const broker = world.anyBroker();
  if (broker < 0) return 0;
  const metadata = await world.client.metadata(broker, topic).catch(() => null);
  let polled = 0;
  for (const p of CONSUMED_PARTITIONS) {
    const leader = metadata?.partitions.find((x) => x.partition === p);
    const from = position.get(p);
    if (leader === undefined || from === undefined || leader.leader < 0 || !world.cluster.up.has(leader.leader))
      continue;
    const r = await world.client
      .fetch(leader.leader, topic, p, from, { currentLeaderEpoch: leader.leaderEpoch })
      .catch(() => null);
    if (r === null) continue;
    if (r.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      // auto.offset.reset=earliest: the consumer asks the leader for the log start (the fetch
      // response's logStartOffset is -1 with this error, as Kafka's).
      const listed = await world.client.listOffset(leader.leader, topic, p, -2).catch(() => null);
      if (listed === null || listed.errorCode !== ErrorCode.NONE) continue;
      const earliest = Math.max(0, listed.offset);
      position.set(p, earliest);
      consumer.pending.push({ partition: p, resetTo: earliest });
      continue;
    }
    if (r.errorCode !== ErrorCode.NONE || r.records === null) continue;
    let next = from;
    for (const batch of decodeRecordBatches(r.records))
      for (const record of batch.records) {
        // A batch may begin before the position; a consumer skips those records, as Kafka's fetcher does.
        if (record.offset < next || record.offset >= r.highWatermark) continue;
        consumer.pending.push({ partition: p, offset: record.offset, value: record.value?.toString() ?? '' });
        next = record.offset + 1;
        polled++;
      }
    position.set(p, next);
  }
  if (consumer.strategy === 'commit-before-processing')
    for (const [p, offset] of position) await commit(world, consumer, topic, p, offset);
  return polled;
}

/** Processes every polled record in poll order: counted, and checked dense from where this incarnation started. */
async function processPolled(world: World, consumer: SimConsumer, topic: string): Promise<void> {
  await maybeAutoCommit(world, consumer, topic);
  for (const item of consumer.pending) {
    if ('resetTo' in item) {
      consumer.nextToProcess.set(item.partition, item.resetTo);
      continue;
    }
    const expected = consumer.nextToProcess.get(item.partition);
    world.checker.check(
      'dense-offsets',
      item.offset === expected,
      () =>
        `consumer ${consumer.strategy} (incarnation ${consumer.incarnation}) processed ${topic}-${item.partition} offset ${item.offset}, expected ${expected}`,
    );
    consumer.nextToProcess.set(item.partition, item.offset + 1);
    consumer.processedPosition.set(item.partition, item.offset + 1);
    const key = `${item.partition}/${item.offset}`;
    const values = consumer.processed.get(key) ?? [];
    values.push(item.value);
    consumer.processed.set(key, values);
  }
  consumer.pending = [];
}

/** A consumer command: it reads no model state (its preconditions always hold). */
type Command = fc.AsyncCommand<object, World>;

/** `poll(strategy)`: the consumer's poll of its partitions (see {@link poll}). */
export class PollCommand implements Command {
  constructor(
    readonly topic: string,
    readonly strategy: ConsumerStrategy,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: object, world: World): Promise<void> {
    await poll(world, consumerOf(world, this.topic, this.strategy), this.topic);
  }
  toString(): string {
    return `poll(${this.strategy})`;
  }
}

/** `process(strategy)`: the consumer processes what it polled. */
export class ProcessCommand implements Command {
  constructor(
    readonly topic: string,
    readonly strategy: ConsumerStrategy,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: object, world: World): Promise<void> {
    const consumer = consumerOf(world, this.topic, this.strategy);
    if (consumer.position === null) return;
    await processPolled(world, consumer, this.topic);
  }
  toString(): string {
    return `process(${this.strategy})`;
  }
}

/** `consumer-crash(strategy)`: the consumer's process dies: its position and unprocessed records are gone. */
export class ConsumerCrashCommand implements Command {
  constructor(
    readonly topic: string,
    readonly strategy: ConsumerStrategy,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: object, world: World): Promise<void> {
    const consumer = consumerOf(world, this.topic, this.strategy);
    consumer.position = null;
    consumer.pending = [];
    consumer.processedPosition = new Map();
    consumer.nextToProcess = new Map();
    consumer.lastCommitted = new Map();
    consumer.coordinator = -1;
    consumer.incarnation++;
  }
  toString(): string {
    return `consumer-crash(${this.strategy})`;
  }
}

/**
 * The consumer commands' arbitraries for the model's list (fc.commands picks among them uniformly):
 * poll, process and crash equally likely (a crash as often as a poll makes each strategy's cost show
 * in a short schedule), the strategy uniform.
 */
export function consumerCommands(topic: string): fc.Arbitrary<Command>[] {
  const strategy = fc.constantFrom(...CONSUMER_STRATEGIES);
  return [
    strategy.map((s) => new PollCommand(topic, s)),
    strategy.map((s) => new ProcessCommand(topic, s)),
    strategy.map((s) => new ConsumerCrashCommand(topic, s)),
  ];
}

/** Attempts of one consumer's catch-up at the end of a run (poll + process each), 100 ms apart when idle. */
const CATCH_UP_ROUNDS = 50;

/**
 * The consumers' end of a run, after the model has healed the cluster and converged the replicas:
 * every committed offset checked against its ledger (OffsetFetch, through whatever coordinator
 * crashes the run made), then each consumer polls and processes until it has reached the final HW of
 * each partition, and the counts: `records` the final log holds below the final HW, `lost` those its
 * consumer never processed (not counting an offset the log rewrote after the consumer processed it:
 * that is the broker's loss, which the model's read checks judge), `duplicated` those processed more
 * than once. A commit-after-processing loss is a `dense-offsets` violation; a partition whose HW never
 * reaches its log end, or a consumer that never reaches the HW, a `converges` one.
 */
export async function finishConsumers(world: World, topic: string): Promise<StrategyCounts[]> {
  const { cluster, checker } = world;
  const consumers = consumersOf(world, topic);
  const finalHighWatermark = new Map<number, number>();
  const finalLog = new Map<number, Map<number, string>>();
  for (const p of CONSUMED_PARTITIONS) {
    let hw = -1;
    let leader = -1;
    await checker.checkAssertion('converges', () =>
      cluster.waitFor(`${topic}-${p}: the high watermark reaches the log end`, async () => {
        const state = await cluster.partition(topic, p);
        if (state.leader < 0 || !cluster.up.has(state.leader)) return false;
        const d = await cluster.ask(cluster.replica(state.leader, state.topicId, p), 'replica.describe', {});
        hw = d.highWatermark;
        leader = state.leader;
        return d.highWatermark === d.logEndOffset;
      }),
    );
    finalHighWatermark.set(p, hw);
    finalLog.set(p, new Map(cluster.logValues(leader, topic, p).map((r) => [r.offset, r.value])));
  }

  for (const consumer of consumers.byStrategy.values())
    for (const p of CONSUMED_PARTITIONS) if (consumer.commits.has(p)) await fetchCommitted(world, consumer, topic, p);

  const counts: StrategyCounts[] = [];
  for (const consumer of consumers.byStrategy.values()) {
    const caughtUp = () =>
      consumer.position !== null &&
      consumer.pending.length === 0 &&
      CONSUMED_PARTITIONS.every((p) => (consumer.position!.get(p) ?? -1) >= finalHighWatermark.get(p)!);
    for (let round = 0; round < CATCH_UP_ROUNDS && !caughtUp(); round++) {
      const polled = await poll(world, consumer, topic);
      if (consumer.position !== null) await processPolled(world, consumer, topic);
      if (polled === 0) await cluster.advance(RETRY_BACKOFF_MS);
    }
    checker.check(
      'converges',
      caughtUp(),
      () => `consumer ${consumer.strategy} did not reach the final high watermarks within ${CATCH_UP_ROUNDS} polls`,
    );

    const c: StrategyCounts = { strategy: consumer.strategy, records: 0, lost: 0, duplicated: 0 };
    const lostOffsets: string[] = [];
    for (const p of CONSUMED_PARTITIONS) {
      const hw = finalHighWatermark.get(p)!;
      for (const [offset, value] of finalLog.get(p)!) {
        if (offset >= hw) continue;
        c.records++;
        const values = consumer.processed.get(`${p}/${offset}`) ?? [];
        const times = values.filter((v) => v === value).length;
        if (times === 0 && values.length === 0) {
          c.lost++;
          lostOffsets.push(`${p}/${offset}`);
        }
        if (times > 1) c.duplicated++;
      }
    }
    if (consumer.strategy === 'commit-after-processing')
      checker.check(
        'dense-offsets',
        c.lost === 0,
        () =>
          `commit-after-processing never processed ${topic} records ${lostOffsets.slice(0, 5).join(', ')} (partition/offset) that the final log holds below the HW`,
      );
    counts.push(c);
  }
  return counts;
}
