/**
 * `skiff verify --bootstrap`: real clients (librdkafka and the Java client) against any
 * Kafka-compatible broker while faults are caused from outside, checked from what the clients saw.
 *
 * One run: fresh topics (one per producer strategy, RF = `replicationFactor`, min.insync.replicas=2
 * when RF >= 3), one librdkafka producer per strategy printing every delivery report, three consumer
 * groups (one per commit strategy, two members each) on the acks=all topic whose members are SIGKILLed
 * and restarted on a seeded schedule, and broker faults on a seeded schedule. When the workload's
 * `durationS` is over: every broker up, the producers flushed, the groups caught up and closed, then a
 * final full read of each topic with Skiff's client, the groups' committed offsets, and the checks of
 * checks.ts (and, for Skiff with a data dir, log matching from the segment files).
 */
import { fetchGroupOffsets } from '../../client/group-admin';
import { Consumer, KafkaClient, LATEST_TIMESTAMP } from '../../client';
import type { PartitionInfo } from '../../admin/cluster-view';
import { createSeededRandom, type Random } from '../../io/random';
import type { FaultKind, StrategyCounts, VerifyReport } from '../report';
import {
  checkDenseRead,
  checkGroup,
  checkMemberOrder,
  checkProducer,
  newTally,
  type CheckTally,
  type ConsumerStrategy,
  type GroupObservation,
  type ProducerObservation,
  type ProducerStrategy,
  type TopicRead,
} from './checks';
import { spawnClient, stopClient, type ClientKind, type ClientProcess } from './client-process';
import { brokerFaults, type BrokerFaults, type FaultDriver } from './faults';
import { checkLogMatching, segmentBytes } from './log-matching';

export type { FaultDriver } from './faults';

/** Options of {@link runRealVerify}. */
export interface RealVerifyOptions {
  /** host:port[,host:port...] */
  bootstrap: string;
  /** The workload's length in seconds (bounded: the run ends by itself). */
  durationS: number;
  /** Which real clients drive the workload. */
  clients: ('librdkafka' | 'java')[];
  faults: FaultDriver;
  /** The fault kinds to cause (of those the driver can). */
  faultKinds: FaultKind[];
  /** Seed of the fault schedule (which broker, when). */
  seed: number;
  /** Topic name prefix; each run creates fresh topics. */
  topicPrefix: string;
  replicationFactor: number;
  /**
   * Skiff's `--data-dir` (brokers under `<dataDir>/node-<id>`), readable from here: with a
   * skiff-admin driver the run also checks log matching from the segment files.
   */
  dataDir?: string;
}

/** Where a real run writes its progress (the report itself is returned). */
export interface RealVerifyIo {
  progress(line: string): void;
}

/** Partitions of each workload topic. */
const PARTITIONS = 3;
/** Records per second of each producer. */
const PRODUCER_RATE = 40;
/** librdkafka's message.timeout.ms: a record without a delivery report by then fails. */
const MESSAGE_TIMEOUT_MS = 30_000;
/** Members of each consumer group. */
const MEMBERS_PER_GROUP = 2;
/** How long a member takes to process one record, so a SIGKILL can land between commit and processing. */
const PROCESS_MS = 5;
/** A killed member is started again after this long. */
const MEMBER_RESTART_MS = 500;
/** The bound on each wait of the end phase (catching up, reading back). */
const END_WAIT_MS = 90_000;

/** The producer strategies a real run drives, with their topic suffix and client settings. */
const PRODUCERS: Array<{
  strategy: ProducerStrategy;
  suffix: string;
  acks: -1 | 0 | 1;
  idempotent: boolean;
  /** Topic configs beyond min.insync.replicas; a broker that refuses them leaves the strategy out. */
  optionalConfigs?: Record<string, string>;
}> = [
  { strategy: 'acks=0', suffix: 'acks0', acks: 0, idempotent: false },
  { strategy: 'acks=1', suffix: 'acks1', acks: 1, idempotent: false },
  { strategy: 'acks=all', suffix: 'acksall', acks: -1, idempotent: false },
  { strategy: 'acks=all idempotent', suffix: 'idempotent', acks: -1, idempotent: true },
  // Skiff's (and Redpanda's) write.caching: acknowledged before an fsync; no real fault here is a power loss.
  {
    strategy: 'acks=all write.caching',
    suffix: 'writecaching',
    acks: -1,
    idempotent: false,
    optionalConfigs: { 'write.caching': 'true' },
  },
  {
    strategy: 'acks=all unclean-election',
    suffix: 'unclean',
    acks: -1,
    idempotent: false,
    optionalConfigs: { 'unclean.leader.election.enable': 'true' },
  },
];
const GROUPS: Array<{ strategy: ConsumerStrategy; suffix: string }> = [
  { strategy: 'commit-after-processing', suffix: 'commit-after' },
  { strategy: 'commit-before-processing', suffix: 'commit-before' },
  { strategy: 'auto-commit-5s', suffix: 'auto-commit' },
];
/** The topic the groups consume: the acks=all producer's. */
const GROUP_TOPIC_SUFFIX = 'acksall';

/** Runs the real-client workload against `options.bootstrap` and checks what the clients saw. */
export async function runRealVerify(options: RealVerifyOptions, io: RealVerifyIo): Promise<VerifyReport> {
  const clients = [...new Set(options.clients)];
  if (clients.length === 0) throw new RangeError('a real run needs at least one client (librdkafka, java)');
  if (!(options.durationS > 0)) throw new RangeError(`durationS must be positive, got ${options.durationS}`);
  const random = createSeededRandom(options.seed);
  const faults = brokerFaults(options.faults, options.bootstrap);
  const faultKinds = options.faultKinds.filter((k) => faults.kinds.includes(k));
  const counts: Partial<Record<FaultKind, number>> = {};
  const tally = newTally();
  const topicOf = (suffix: string): string => `${options.topicPrefix}-${suffix}`;

  const producers = await createTopics(options, io, topicOf);
  const groupTopic = topicOf(GROUP_TOPIC_SUFFIX);
  io.progress(
    `topics: ${producers.map((p) => topicOf(p.suffix)).join(', ')}; faults: ${faultKinds.join(', ') || 'none'}`,
  );

  // Clients in turn: producer i and group member m run clients[i % n] and clients[m % n], so with both
  // clients each group mixes librdkafka and Java members (both with the range assignor).
  const clientOf = (i: number): ClientKind => clients[i % clients.length] ?? 'librdkafka';
  const producerRuns = producers.map((p, i) => startProducer(options, topicOf(p.suffix), p, clientOf(i)));
  const groups = GROUPS.map(
    (g) => new GroupRun(options.bootstrap, `${options.topicPrefix}-${g.suffix}`, groupTopic, g.strategy, clientOf),
  );
  io.progress(
    `producers: ${producers.map((p, i) => `${p.strategy} ${clientOf(i)}`).join(', ')}; group members: ` +
      range(MEMBERS_PER_GROUP).map(clientOf).join(', '),
  );
  const workloadEnd = Date.now() + options.durationS * 1000;

  const faultLoop = runFaults(faults, faultKinds, random, workloadEnd - 3000, counts, io, [
    ...producers.map((p) => topicOf(p.suffix)),
  ]);
  const memberLoop = killMembers(groups, random, workloadEnd - 2000, io);
  await Promise.all([faultLoop, memberLoop]);

  const observations = await Promise.all(producerRuns.map((r) => r.done));
  for (const o of observations) io.progress(`${o.strategy}: ${o.acked.length} acknowledged, ${o.failed} failed`);

  const endClient = await KafkaClient.connect({ brokers: options.bootstrap });
  try {
    const groupEnd = await endOffsets(endClient, groupTopic);
    await Promise.all(groups.map((g) => g.catchUp(groupEnd, END_WAIT_MS)));
    await Promise.all(groups.map((g) => g.close()));
    for (const g of groups)
      io.progress(`${g.group}: processed by ${[...g.processedBy].map(([k, n]) => `${k} ${n}`).join(', ') || 'nobody'}`);

    const strategies: StrategyCounts[] = [];
    const reads = new Map<string, TopicRead>();
    for (const o of observations) {
      const read = await readTopic(endClient, o.topic);
      reads.set(o.topic, read);
      checkDenseRead(read, tally);
      strategies.push(checkProducer(o, read, tally));
    }
    const groupRead = reads.get(groupTopic);
    if (groupRead === undefined) throw new Error(`no read of ${groupTopic}`);
    for (const g of groups) {
      const committed = await fetchGroupOffsets(endClient, g.group, new Map([[groupTopic, range(PARTITIONS)]]));
      const served = new Map<number, number>();
      for (const [partition, c] of committed.get(groupTopic) ?? new Map()) served.set(partition, c.offset);
      const obs = g.observation();
      checkMemberOrder(obs, tally);
      strategies.push(checkGroup(obs, groupRead, served, tally));
    }
    if (options.dataDir !== undefined && options.faults.kind === 'skiff-admin')
      await checkSkiffLogs(options.faults.adminUrl, options.dataDir, [...reads.keys()], tally);
    return report(counts, tally, strategies);
  } finally {
    endClient.close();
    for (const g of groups) g.killAll();
  }
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A seeded delay in [minMs, maxMs). */
function between(random: Random, minMs: number, maxMs: number): number {
  return minMs + random.int(maxMs - minMs);
}

/**
 * Creates one topic per producer strategy and waits until each partition has a leader. The
 * write.caching and unclean-election topics are left out (with a progress line) when the broker
 * refuses their config (Kafka has no write.caching).
 */
async function createTopics(
  options: RealVerifyOptions,
  io: RealVerifyIo,
  topicOf: (suffix: string) => string,
): Promise<typeof PRODUCERS> {
  const rf = options.replicationFactor;
  const base: Record<string, string> = rf >= 3 ? { 'min.insync.replicas': '2' } : {};
  const client = await KafkaClient.connect({ brokers: options.bootstrap });
  try {
    const created: typeof PRODUCERS = [];
    for (const p of PRODUCERS) {
      const configs = { ...base, ...(p.optionalConfigs ?? {}) };
      const [r] = await client.createTopics([
        { name: topicOf(p.suffix), numPartitions: PARTITIONS, replicationFactor: rf, configs },
      ]);
      if (r?.errorCode === 0) {
        created.push(p);
        continue;
      }
      const why = `${topicOf(p.suffix)}: error ${r?.errorCode} ${r?.errorMessage ?? ''}`;
      if (p.optionalConfigs === undefined) throw new Error(`creating ${why}`);
      io.progress(`${p.strategy} left out: the broker refused the topic (${why})`);
    }
    const deadline = Date.now() + 60_000;
    for (const p of created) {
      for (;;) {
        const md = await client.topicMetadata(topicOf(p.suffix)).catch(() => null);
        if (md !== null && md.partitions.length === PARTITIONS && md.partitions.every((x) => x.leader >= 0)) break;
        if (Date.now() > deadline) throw new Error(`${topicOf(p.suffix)}: no leader for every partition within 60 s`);
        await sleep(200);
      }
    }
    return created;
  } finally {
    client.close();
  }
}

/** A producer process and what it will have seen. */
interface ProducerRun {
  done: Promise<ProducerObservation>;
}

function startProducer(
  options: RealVerifyOptions,
  topic: string,
  p: (typeof PRODUCERS)[number],
  kind: ClientKind,
): ProducerRun {
  const obs: ProducerObservation = { strategy: p.strategy, topic, acked: [], failed: 0 };
  const prefix = `${topic}-v`;
  const args = ['produce', '--bootstrap', options.bootstrap, '--topic', topic, '--acks', String(p.acks)];
  args.push('--prefix', prefix, '--rate', String(PRODUCER_RATE), '--duration', String(options.durationS));
  args.push('--message-timeout-ms', String(MESSAGE_TIMEOUT_MS));
  if (p.idempotent) args.push('--idempotent');
  const client = spawnClient(`${kind} producer ${p.strategy}`, kind, args, (msg) => {
    const a = msg.a as [number, number, number] | undefined;
    if (a !== undefined) obs.acked.push({ value: `${prefix}-${a[0]}`, partition: a[1], offset: a[2] });
    else if (msg.e !== undefined) obs.failed++;
  });
  const timer = setTimeout(() => client.kill('SIGKILL'), (options.durationS + MESSAGE_TIMEOUT_MS / 1000 + 60) * 1000);
  const done = client.exited.then((code) => {
    clearTimeout(timer);
    // Exit 2: some record got no delivery report in time; the reports it printed still count.
    if (code !== 0 && code !== 2) throw new Error(`${client.name} exited with ${code}:\n${client.stderr()}`);
    return obs;
  });
  return { done };
}

/** A consumer group of {@link MEMBERS_PER_GROUP} member processes, each one restartable. */
class GroupRun {
  private readonly members: Array<ClientProcess | null> = [];
  private readonly events: GroupObservation['members'] = [];
  private readonly commits = new Map<number, number>();
  /** partition → the highest offset any member processed. */
  private readonly maxProcessed = new Map<number, number>();

  constructor(
    private readonly bootstrap: string,
    readonly group: string,
    private readonly topic: string,
    private readonly strategy: ConsumerStrategy,
    private readonly clientOf: (member: number) => ClientKind,
  ) {
    for (let m = 0; m < MEMBERS_PER_GROUP; m++) this.members.push(this.spawn(m));
  }

  /** Records processed per client kind (each processing counted, duplicates included). */
  readonly processedBy = new Map<ClientKind, number>();

  private spawn(member: number): ClientProcess {
    const events: GroupObservation['members'][number] = [];
    this.events.push(events);
    const args = ['consume', '--bootstrap', this.bootstrap, '--topic', this.topic, '--group', this.group];
    args.push('--strategy', this.strategy, '--process-ms', String(PROCESS_MS));
    const kind = this.clientOf(member);
    return spawnClient(`${this.group} ${kind} member ${member}`, kind, args, (msg) => {
      if (Array.isArray(msg.assigned)) events.push({ kind: 'assigned', partitions: msg.assigned as number[] });
      const r = msg.r as [number, number, string] | undefined;
      if (r !== undefined) {
        events.push({ kind: 'record', partition: r[0], offset: r[1], value: r[2] });
        this.processedBy.set(kind, (this.processedBy.get(kind) ?? 0) + 1);
        this.maxProcessed.set(r[0], Math.max(this.maxProcessed.get(r[0]) ?? -1, r[1]));
      }
      for (const [partition, offset] of (msg.c as Array<[number, number]> | undefined) ?? [])
        this.commits.set(partition, Math.max(this.commits.get(partition) ?? -1, offset));
    });
  }

  /** SIGKILLs member `m` and starts a new process in its place. */
  async bounce(m: number): Promise<void> {
    this.members[m]?.kill('SIGKILL');
    await this.members[m]?.exited;
    await sleep(MEMBER_RESTART_MS);
    this.members[m] = this.spawn(m);
  }

  /**
   * Waits (at most `timeoutMs`) until each partition is processed up to its end offset or, when a
   * commit skipped the tail (commit before processing), committed up to it.
   */
  async catchUp(end: ReadonlyMap<number, number>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const done = (): boolean =>
      [...end].every(([p, e]) => (this.maxProcessed.get(p) ?? -1) >= e - 1 || (this.commits.get(p) ?? -1) >= e);
    while (!done()) {
      if (Date.now() > deadline) return; // what was not processed counts as lost for this strategy
      await sleep(250);
    }
  }

  /** SIGTERM each member (it leaves the group; auto-commit commits on close). */
  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => (m === null ? null : stopClient(m, 15_000))));
  }

  killAll(): void {
    for (const m of this.members) m?.kill('SIGKILL');
  }

  observation(): GroupObservation {
    return {
      strategy: this.strategy,
      group: this.group,
      topic: this.topic,
      members: this.events,
      acknowledgedCommits: this.commits,
    };
  }
}

/** SIGKILLs a random member of a random group every 3-6 s (seeded) until `untilMs`. */
async function killMembers(groups: GroupRun[], random: Random, untilMs: number, io: RealVerifyIo): Promise<void> {
  let kills = 0;
  for (;;) {
    const wait = between(random, 3000, 6000);
    if (Date.now() + wait > untilMs) break;
    await sleep(wait);
    const group = groups[random.int(groups.length)];
    if (group === undefined) break;
    await group.bounce(random.int(MEMBERS_PER_GROUP));
    kills++;
  }
  io.progress(`consumer members SIGKILLed and restarted: ${kills}`);
}

/**
 * One fault at a time until `untilMs` (and at least one of each kind): a seeded pause of 2-5 s, the
 * next kind of `kinds`, a target (the leader of a workload partition where the driver sees leaders),
 * the fault, 1-3 s down, the start.
 */
async function runFaults(
  faults: BrokerFaults,
  kinds: readonly FaultKind[],
  random: Random,
  untilMs: number,
  counts: Partial<Record<FaultKind, number>>,
  io: RealVerifyIo,
  topics: readonly string[],
): Promise<void> {
  if (kinds.length === 0) return;
  // The kinds in turn from a seeded first one, so a short run causes each kind at least once.
  const first = random.int(kinds.length);
  for (let n = 0; ; n++) {
    const wait = between(random, 2000, 5000);
    // Past `untilMs` only while some kind has not been caused yet (at most kinds.length faults more), so
    // a run on a slow machine (or brokers slow to start) still causes each kind once.
    if (Date.now() + wait > untilMs && n >= kinds.length) return;
    await sleep(wait);
    const kind = kinds[(first + n) % kinds.length];
    if (kind === undefined) return;
    const broker = faults.targetsBroker(kind) ? await faults.pickTarget(random, topics) : -1;
    const down = between(random, 1000, 3000);
    const started = Date.now();
    await faults.inject(kind, broker);
    counts[kind] = (counts[kind] ?? 0) + 1;
    await sleep(down);
    await faults.restore(kind, broker);
    io.progress(`${kind}${broker >= 0 ? ` of broker ${broker}` : ''}: back after ${Date.now() - started} ms`);
  }
}

/** The high watermark of each partition of `topic`. */
async function endOffsets(client: KafkaClient, topic: string): Promise<Map<number, number>> {
  const offsets = await client.listOffsets(
    topic,
    range(PARTITIONS).map((partition) => ({ partition, timestamp: LATEST_TIMESTAMP })),
  );
  return new Map([...offsets].map(([p, o]) => [p, o.offset]));
}

/** Every record of `topic` from offset 0 to the high watermark, with Skiff's client (bounded). */
async function readTopic(client: KafkaClient, topic: string): Promise<TopicRead> {
  const consumer = new Consumer(client, { maxWaitMs: 100 });
  consumer.assign(range(PARTITIONS).map((partition) => ({ topic, partition, offset: 0 })));
  await consumer.refreshEndOffsets();
  const read: TopicRead = { topic, partitions: new Map(), endOffsets: new Map(), logStartOffsets: new Map() };
  for (const p of range(PARTITIONS)) read.partitions.set(p, []);
  const deadline = Date.now() + END_WAIT_MS;
  while (!consumer.allAtEnd()) {
    if (Date.now() > deadline)
      throw new Error(`${topic}: the final read did not reach the end: ${JSON.stringify(consumer.assignments())}`);
    for (const r of await consumer.poll())
      read.partitions.get(r.partition)?.push({ offset: r.offset, value: r.value?.toString('utf8') ?? null });
  }
  for (const s of consumer.assignments()) {
    read.endOffsets.set(s.partition, s.highWatermark);
    read.logStartOffsets.set(s.partition, Math.max(0, s.logStartOffset));
  }
  return read;
}

/**
 * Log matching from Skiff's segment files: waits (bounded) until each partition of `topics` is in
 * sync (full ISR, every replica's LEO and HW at the leader's LEO), then one check per partition.
 */
async function checkSkiffLogs(
  adminUrl: string,
  dataDir: string,
  topics: readonly string[],
  tally: CheckTally,
): Promise<void> {
  const deadline = Date.now() + END_WAIT_MS;
  let partitions: PartitionInfo[];
  for (;;) {
    const res = await fetch(`${adminUrl}/v1/partitions`, { signal: AbortSignal.timeout(30_000) });
    partitions = ((await res.json()) as PartitionInfo[]).filter((p) => topics.includes(p.topic));
    if (partitions.every(inSync)) break;
    if (Date.now() > deadline) break; // checked as they are: a replica out of sync shows as a mismatch
    await sleep(250);
  }
  for (const p of partitions) {
    const leader = p.perReplica.find((r) => r.brokerId === p.leader);
    const hw = leader?.highWatermark ?? -1;
    const logs = new Map<number, Buffer>();
    for (const id of p.isr) logs.set(id, segmentBytes(dataDir, id, p.topic, p.partition));
    checkLogMatching(p.topic, p.partition, logs, Math.max(0, hw), tally);
  }
}

function inSync(p: PartitionInfo): boolean {
  const leader = p.perReplica.find((r) => r.brokerId === p.leader);
  if (p.leader < 0 || leader === undefined || p.isr.length !== p.replicas.length) return false;
  return p.perReplica.every((r) => r.logEndOffset === leader.logEndOffset && r.highWatermark === leader.logEndOffset);
}

function report(
  counts: Partial<Record<FaultKind, number>>,
  tally: CheckTally,
  strategies: StrategyCounts[],
): VerifyReport {
  const violations = [...tally.violations];
  for (const [invariant, n] of Object.entries(tally.suppressed))
    violations.push({
      invariant: invariant as keyof typeof tally.suppressed,
      message: `... and ${n} more like the above`,
    });
  return { mode: 'real', runs: 1, faults: counts, checks: tally.checks, strategies, violations, counterexample: null };
}
