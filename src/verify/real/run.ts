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
import { spawnSync } from 'node:child_process';
import type { BrokerInfo, PartitionInfo } from '../../admin/cluster-view';
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
import { ClientSet, clientCommand, stopClient, type ClientKind, type ClientProcess } from './client-process';
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

/**
 * A setup problem found before or while the run starts (bootstrap unreachable, too few brokers for the
 * replication factor, a topic refused, the admin API unreachable or without fault injection, a client
 * runtime missing): the CLI prints its message on one line and exits 2, since no guarantee was tested.
 */
export class SetupError extends Error {
  override readonly name = 'SetupError';
}

/** The run was ended by SIGINT or SIGTERM to this process (after its clients were stopped). */
export class InterruptedError extends Error {
  override readonly name = 'InterruptedError';
  constructor(readonly signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}`);
  }
}

/** How long a client may take to exit after SIGTERM on the way out of a run, before its SIGKILL. */
const CLIENT_STOP_GRACE_MS = 2000;
/** The bound on starting again, on the way out, each broker a fault left down. */
const RESTORE_TIMEOUT_MS = 60_000;

/** What the parts of one run share so that any exit path can clean up after them. */
interface RunState {
  children: ClientSet;
  /** broker → the fault that took it down and is not undone yet (-1: the whole process). */
  down: Map<number, FaultKind>;
  /** Set on the way out: the fault and member loops start nothing new. */
  stopping: boolean;
}

/**
 * Runs the real-client workload against `options.bootstrap` and checks what the clients saw. Rejects
 * with {@link SetupError} for a setup problem (checked before any topic is created where possible),
 * with {@link InterruptedError} on SIGINT/SIGTERM (handled only while the run lasts). On every exit
 * path the client processes are stopped (SIGTERM, then SIGKILL) and each broker a fault left down is
 * started again (or named in a progress line when that fails).
 */
export async function runRealVerify(options: RealVerifyOptions, io: RealVerifyIo): Promise<VerifyReport> {
  const clients = [...new Set(options.clients)];
  if (clients.length === 0) throw new RangeError('a real run needs at least one client (librdkafka, java)');
  if (!(options.durationS > 0)) throw new RangeError(`durationS must be positive, got ${options.durationS}`);
  const faults = brokerFaults(options.faults, options.bootstrap);
  const state: RunState = { children: new ClientSet(), down: new Map(), stopping: false };
  let interrupt: (err: InterruptedError) => void = () => undefined;
  const interrupted = new Promise<never>((_, reject) => (interrupt = reject));
  interrupted.catch(() => undefined);
  let signalled = false;
  const onSignal = (signal: 'SIGINT' | 'SIGTERM'): void => {
    // A second signal while the run cleans up: no more grace for the clients.
    if (signalled) state.children.killAll();
    signalled = true;
    interrupt(new InterruptedError(signal));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const workload = runWorkload(options, clients, faults, state, io);
  // Abandoned on a signal: its later rejection (clients killed under it) is the cleanup's doing.
  workload.catch(() => undefined);
  try {
    return await Promise.race([workload, interrupted]);
  } finally {
    state.stopping = true;
    await state.children.stopAll(CLIENT_STOP_GRACE_MS);
    await restoreDown(faults, state.down, io);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Starts again each broker in `down` (bounded); names in one progress line those that stay down. */
async function restoreDown(faults: BrokerFaults, down: Map<number, FaultKind>, io: RealVerifyIo): Promise<void> {
  const failed: string[] = [];
  for (const [broker, kind] of down) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not started within ${RESTORE_TIMEOUT_MS} ms`)), RESTORE_TIMEOUT_MS);
    });
    try {
      // 409: the admin API's answer to a start of a running broker (the fault loop started it already).
      await Promise.race([faults.restore(kind, broker), timeout]).catch((err: Error) => {
        if (!/HTTP 409/.test(err.message)) throw err;
      });
      down.delete(broker);
      io.progress(`${kind}${broker >= 0 ? ` of broker ${broker}` : ''}: started again on the way out`);
    } catch (err) {
      failed.push(`${broker >= 0 ? `broker ${broker}` : 'the process'} (${kind}: ${(err as Error).message})`);
    } finally {
      clearTimeout(timer);
    }
  }
  if (failed.length > 0) io.progress(`left down, start by hand: ${failed.join('; ')}`);
}

/** The run itself (see {@link runRealVerify}), its children and downed brokers tracked in `state`. */
async function runWorkload(
  options: RealVerifyOptions,
  clients: ClientKind[],
  faults: BrokerFaults,
  state: RunState,
  io: RealVerifyIo,
): Promise<VerifyReport> {
  await preflight(options, clients);
  const random = createSeededRandom(options.seed);
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
  const producerRuns = producers.map((p, i) =>
    startProducer(options, state.children, topicOf(p.suffix), p, clientOf(i)),
  );
  const groups = GROUPS.map(
    (g) =>
      new GroupRun(
        state.children,
        options.bootstrap,
        `${options.topicPrefix}-${g.suffix}`,
        groupTopic,
        g.strategy,
        clientOf,
      ),
  );
  io.progress(
    `producers: ${producers.map((p, i) => `${p.strategy} ${clientOf(i)}`).join(', ')}; group members: ` +
      range(MEMBERS_PER_GROUP).map(clientOf).join(', '),
  );
  const workloadEnd = Date.now() + options.durationS * 1000;

  const faultLoop = runFaults(faults, state, faultKinds, random, workloadEnd - 3000, counts, io, [
    ...producers.map((p) => topicOf(p.suffix)),
  ]);
  const memberLoop = killMembers(groups, state, random, workloadEnd - 2000, io);
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
 * The setup checks before any topic is created, each failing with a {@link SetupError}: the bootstrap
 * answers Metadata and lists at least `replicationFactor` brokers; with `--admin`, its API answers and
 * has fault injection on (a start of a running broker answers 409 then, 403 without); the runtime of
 * each client asked for runs (`java`, and the Python with confluent_kafka importable).
 */
export async function preflight(options: RealVerifyOptions, clients: readonly ClientKind[]): Promise<void> {
  const client = await KafkaClient.connect({ brokers: options.bootstrap }).catch((err: Error) => {
    throw new SetupError(`cannot reach --bootstrap ${options.bootstrap}: ${err.message}`);
  });
  const brokers = [...client.knownBrokers.keys()];
  client.close();
  if (brokers.length < options.replicationFactor)
    throw new SetupError(
      `${options.bootstrap} lists ${brokers.length} broker${brokers.length === 1 ? '' : 's'}, fewer than the ` +
        `replication factor ${options.replicationFactor}: use --replication-factor ${Math.max(1, brokers.length)}`,
    );
  if (options.faults.kind === 'skiff-admin') await checkAdmin(options.faults.adminUrl);
  for (const kind of clients) checkClientRuntime(kind);
}

async function checkAdmin(adminUrl: string): Promise<void> {
  const call = async (method: 'GET' | 'POST', route: string): Promise<{ status: number; text: string }> => {
    try {
      const res = await fetch(`${adminUrl}${route}`, { method, signal: AbortSignal.timeout(10_000) });
      return { status: res.status, text: (await res.text()).trim() };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      throw new SetupError(`--admin ${adminUrl}: ${method} ${route} failed: ${cause ?? (err as Error).message}`);
    }
  };
  const listed = await call('GET', '/v1/brokers');
  if (listed.status !== 200)
    throw new SetupError(`--admin ${adminUrl}: GET /v1/brokers: HTTP ${listed.status} ${listed.text}`);
  let running: number | undefined;
  try {
    running = (JSON.parse(listed.text) as BrokerInfo[]).find((b) => b.state === 'running')?.id;
  } catch {
    throw new SetupError(`--admin ${adminUrl}: GET /v1/brokers did not answer JSON: is it Skiff's admin API?`);
  }
  if (running === undefined) throw new SetupError(`--admin ${adminUrl}: no broker is running`);
  const probe = await call('POST', `/v1/brokers/${running}/start`);
  if (probe.status !== 409 && probe.status !== 200)
    throw new SetupError(`--admin ${adminUrl}: cannot bounce brokers: HTTP ${probe.status} ${probe.text}`);
}

/** Throws a {@link SetupError} when the runtime of `kind` cannot run. */
function checkClientRuntime(kind: ClientKind): void {
  let command: { command: string; args: string[] };
  try {
    command = clientCommand(kind);
  } catch (err) {
    throw new SetupError(`the ${kind} client: ${(err as Error).message}`);
  }
  const probe =
    kind === 'java'
      ? spawnSync(command.command, ['-version'], { stdio: 'ignore', timeout: 30_000 })
      : spawnSync(command.command, ['-c', 'import confluent_kafka'], {
          stdio: ['ignore', 'ignore', 'pipe'],
          timeout: 30_000,
        });
  if (probe.error !== undefined)
    throw new SetupError(
      `the ${kind} client needs ${command.command}: ${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message}` +
        (kind === 'java' ? ' (put a JDK 17+ on PATH or set SKIFF_VERIFY_JAVA, or give --clients librdkafka)' : ''),
    );
  if (probe.status !== 0)
    throw new SetupError(
      kind === 'java'
        ? `the java client: \`${command.command} -version\` exited with ${probe.status ?? probe.signal}`
        : `the librdkafka client: ${command.command} cannot import confluent_kafka ` +
            '(pip install confluent-kafka, or set SKIFF_VERIFY_PYTHON)',
    );
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
  const client = await KafkaClient.connect({ brokers: options.bootstrap }).catch((err: Error) => {
    throw new SetupError(`cannot reach --bootstrap ${options.bootstrap}: ${err.message}`);
  });
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
      if (p.optionalConfigs === undefined) {
        const n = client.knownBrokers.size;
        const hint = n < rf ? `: use --replication-factor ${Math.max(1, n)} (${n} broker${n === 1 ? '' : 's'})` : '';
        throw new SetupError(`cannot create ${why.trim()}${hint}`);
      }
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
  children: ClientSet,
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
  const client = children.spawn(`${kind} producer ${p.strategy}`, kind, args, (msg) => {
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
  // Awaited only when the workload gets that far; a run that fails first kills it under this promise.
  done.catch(() => undefined);
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
    private readonly children: ClientSet,
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
    return this.children.spawn(`${this.group} ${kind} member ${member}`, kind, args, (msg) => {
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
async function killMembers(
  groups: GroupRun[],
  state: RunState,
  random: Random,
  untilMs: number,
  io: RealVerifyIo,
): Promise<void> {
  let kills = 0;
  for (;;) {
    const wait = between(random, 3000, 6000);
    if (Date.now() + wait > untilMs) break;
    await sleep(wait);
    if (state.stopping) return;
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
  state: RunState,
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
    if (state.stopping) return;
    const kind = kinds[(first + n) % kinds.length];
    if (kind === undefined) return;
    const broker = faults.targetsBroker(kind) ? await faults.pickTarget(random, topics) : -1;
    const down = between(random, 1000, 3000);
    const started = Date.now();
    if (state.stopping) return;
    // Marked down before the fault: an inject cut short (a signal, a failing command) may have taken it down.
    state.down.set(broker, kind);
    await faults.inject(kind, broker);
    counts[kind] = (counts[kind] ?? 0) + 1;
    await sleep(down);
    await faults.restore(kind, broker);
    state.down.delete(broker);
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
