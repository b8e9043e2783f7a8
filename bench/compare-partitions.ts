/**
 * The `partitions` section of the reference harness (issue 13, item 4): cheap partitions and fast
 * restarts, Skiff beside Apache Kafka 4.4 (the test fixture, KRaft combined broker+controller), one
 * broker each, alternating Kafka / Skiff (/ an older Skiff build) every round.
 *
 * Each round, on a fresh broker of each kind (its own temp data dir):
 * 1. first consumer-group join: a wire client sends FindCoordinator (retried while the broker answers
 *    COORDINATOR_NOT_AVAILABLE / the coordinator loads), then JoinGroup (v5, KIP-394's second round
 *    trip) and SyncGroup for a new group on a broker that never had one (`__consumer_offsets` does not
 *    exist yet); the time from the first FindCoordinator sent to the SyncGroup assignment received.
 *    Both sides run with group.initial.rebalance.delay.ms=0 and 50 `__consumer_offsets` partitions
 *    (Kafka's default; the fixture's own default is 1);
 * 2. topic creation: CreateTopics of `partitions` partitions (1,000) until Metadata names a leader for
 *    every one, and until every one has acknowledged an acks=1 produce (Kafka names leaders at the
 *    controller's commit, before its broker creates the logs);
 * 3. 1 KiB acks=1 produce with ProducerPerformance over 10 partitions, then over the 1,000 (the
 *    producer's sticky partitioner spreads batches), and the ratio 1000/10 for each broker;
 * 4. broker RSS (process tree, /proc) with the 1,000 partitions loaded, after the produce;
 * 5. start-up with the 1,000 partitions: after SIGTERM (clean) and after SIGKILL, the time from
 *    starting the process until Metadata names a leader for every partition;
 * then, on another fresh broker, a one-partition topic filled with `logGiB` (10 GiB x scale) by
 * ProducerPerformance at full speed (512 KiB records, acks=1), SIGKILLed at once, and the time from
 * starting it again until Metadata names the leader and a Fetch at offset 0 answers records.
 *
 * `smoke` shrinks everything (20 partitions, 10 MiB log) so CI keeps the section working.
 * The machine is shared and noisy: quote ratios of one run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startKafka, type KafkaFixture } from '../test/helpers/kafka-fixture';
import { startBrokerProcess, type BrokerProcess } from '../test/helpers/broker-process';
import { WireClient } from '../test/helpers/wire-client';
import { fetchRequestBody } from '../test/helpers/fetch-request';
import { ApiKey } from '../src/protocol/api-keys';
import { ErrorCode } from '../src/protocol/error-codes';
import { decodeResponse } from '../src/protocol';
import { encodeConsumerSubscription } from '../src/protocol/consumer-protocol';
import { buildBatch } from '../src/client/batch';
import type { Figure } from './figures';
import { rssMiB } from './proc-cpu';
import { initKafkaTools, median, PRODUCER_PERFORMANCE, producePerformance, runJava } from './perf-tools';

/** Options of {@link runPartitionsCompare}. */
export interface PartitionsCompareOptions {
  /** Shrinks record counts and the restart log (1 = 10 GiB, 300,000 records per produce run). */
  scale: number;
  /** Alternating rounds per broker (medians over them). */
  rounds: number;
  /** Root of an older Skiff build (its bin/skiff.js), measured as the `before` variant. */
  skiffBefore?: string;
  /** CI size: 20 partitions, 10 MiB log, 20,000 records. */
  smoke?: boolean;
}

const SECTION = 'partitions';
/** Group settings both brokers get (see the module doc). */
const GROUP_OVERRIDES = { 'group.initial.rebalance.delay.ms': '0', 'offsets.topic.num.partitions': '50' };
const STEP_TIMEOUT_MS = 180_000;

type BrokerKind = 'kafka' | 'skiff' | 'before';

/** A broker process the section drives, whichever kind. */
interface Broker {
  kind: BrokerKind;
  /** The client port on 127.0.0.1 (a Skiff restart may listen on another). */
  readonly port: number;
  /** PID whose process tree is the broker (Kafka: the JVM; Skiff: node). */
  pid(): number;
  /** SIGTERM and wait for the exit (data kept). */
  stopClean(): Promise<void>;
  /** SIGKILL and wait for the exit (data kept). */
  kill9(): Promise<void>;
  /** Starts again on the same data; resolves when the process is up (its own readiness, not ours). */
  restart(): Promise<void>;
  /** Stops for good and removes the data. */
  destroy(): Promise<void>;
}

interface RoundResult {
  joinMs: number | null;
  createMs: number | null;
  createServesMs: number | null;
  rss: number | null;
  mbPerSec10: number | null;
  mbPerSec1000: number | null;
  cleanStartMs: number | null;
  killStartMs: number | null;
  logRestartMs: number | null;
  errors: string[];
}

/**
 * Runs the section and returns its {@link Figure} rows (section `partitions`): first group join,
 * creation time, RSS, the produce ratio 1000/10 (and both rates), clean and SIGKILL start-up with
 * the partitions, and the restart after SIGKILL with a large log. Kafka's jars are fetched if
 * missing; every broker started is stopped and its data removed. A step that fails leaves that
 * figure null for the round and adds its message to the note.
 */
export async function runPartitionsCompare(opts: PartitionsCompareOptions): Promise<Figure[]> {
  await initKafkaTools();
  const partitions = opts.smoke === true ? 20 : 1000;
  const fewPartitions = opts.smoke === true ? 2 : 10;
  const records = opts.smoke === true ? 20_000 : Math.max(100_000, Math.round(300_000 * opts.scale));
  const logBytes = opts.smoke === true ? 10 * 1024 * 1024 : Math.round(10 * 1024 ** 3 * opts.scale);
  const kinds: BrokerKind[] = ['kafka', 'skiff'];
  if (opts.skiffBefore !== undefined) kinds.push('before');
  const results = new Map<BrokerKind, RoundResult[]>(kinds.map((k) => [k, []]));
  for (let round = 0; round < opts.rounds; round++) {
    const order = round % 2 === 0 ? kinds : [...kinds].reverse();
    for (const kind of order) {
      const r = await measureRound(kind, opts.skiffBefore, { partitions, fewPartitions, records, logBytes });
      results.get(kind)!.push(r);
      log(`round ${round + 1} ${kind}: ${JSON.stringify(r)}`);
    }
  }
  const med = (kind: BrokerKind, pick: (r: RoundResult) => number | null): number | null => {
    const xs = (results.get(kind) ?? []).map(pick).filter((x): x is number => x !== null);
    return xs.length === 0 ? null : median(xs);
  };
  const errorsNote = (): string => {
    const errs = kinds.flatMap((k) => results.get(k)!.flatMap((r) => r.errors.map((e) => `${k}: ${e}`)));
    return errs.length === 0 ? '' : `; failures: ${errs.join(' | ').slice(0, 600)}`;
  };
  const roundsNote = `${opts.rounds} round(s), alternating, shared 2-core machine`;
  const fig = (
    config: string,
    metric: string,
    better: Figure['better'],
    pick: (r: RoundResult) => number | null,
    extra: Partial<Figure>,
  ): Figure => {
    const f: Figure = {
      section: SECTION,
      config,
      metric,
      better,
      kafka: med('kafka', pick),
      skiff: med('skiff', pick),
    };
    if (opts.skiffBefore !== undefined) f.variants = { before: med('before', pick) };
    return { ...f, ...extra };
  };
  const ratioOf = (r: RoundResult): number | null =>
    r.mbPerSec10 === null || r.mbPerSec1000 === null || r.mbPerSec10 === 0 ? null : r.mbPerSec1000 / r.mbPerSec10;
  const logLabel =
    logBytes >= 1024 ** 3 ? `${(logBytes / 1024 ** 3).toFixed(1)} GiB` : `${Math.round(logBytes / 1024 ** 2)} MiB`;
  const figures: Figure[] = [
    fig(
      'first group join, fresh broker (FindCoordinator to SyncGroup assignment)',
      'seconds',
      'lower',
      (r) => sec(r.joinMs),
      {
        targetRatio: 1.0,
        note: `group.initial.rebalance.delay.ms=0 and offsets.topic.num.partitions=50 on both; ${roundsNote}`,
      },
    ),
    fig(`create topic of ${partitions} partitions until all led`, 'seconds', 'lower', (r) => sec(r.createMs), {
      targetRatio: 1.0,
      note: roundsNote,
    }),
    fig(
      `create topic of ${partitions} partitions until every partition takes a produce`,
      'seconds',
      'lower',
      (r) => sec(r.createServesMs),
      {
        targetRatio: 1.0,
        note: `from CreateTopics sent to every partition's acks=1 produce of one record acknowledged (retried every 10 ms on NOT_LEADER_OR_FOLLOWER and the like); ${roundsNote}`,
      },
    ),
    fig(`broker RSS with ${partitions} partitions`, 'rssMiB', 'lower', (r) => r.rss, {
      targetAbsolute: 1024,
      note: `process tree VmRSS after the produce runs; Kafka's heap is the fixture's -Xmx768m; ${roundsNote}`,
    }),
    fig(`produce 1024 B acks=1 over ${fewPartitions} partitions`, 'MBPerSec', 'higher', (r) => r.mbPerSec10, {
      note: `ProducerPerformance, ${records} records; ${roundsNote}`,
    }),
    fig(`produce 1024 B acks=1 over ${partitions} partitions`, 'MBPerSec', 'higher', (r) => r.mbPerSec1000, {
      note: `ProducerPerformance, ${records} records, sticky partitioner; ${roundsNote}`,
    }),
    fig(
      `produce 1024 B acks=1 ratio ${partitions}/${fewPartitions} partitions (per broker)`,
      'ratio',
      'higher',
      ratioOf,
      {
        targetAbsolute: 0.7,
        note: `each broker's rate over ${partitions} partitions divided by its rate over ${fewPartitions}; ${roundsNote}`,
      },
    ),
    fig(
      `start-up with ${partitions} partitions after SIGTERM, until all led`,
      'seconds',
      'lower',
      (r) => sec(r.cleanStartMs),
      {
        targetAbsolute: 5,
        note: `from spawning the process; ${roundsNote}`,
      },
    ),
    fig(
      `start-up with ${partitions} partitions after SIGKILL, until all led`,
      'seconds',
      'lower',
      (r) => sec(r.killStartMs),
      {
        targetAbsolute: 5,
        note: `from spawning the process; ${roundsNote}`,
      },
    ),
    fig(
      `restart after SIGKILL with a ${logLabel} log (1 partition), until it serves a fetch`,
      'seconds',
      'lower',
      (r) => sec(r.logRestartMs),
      {
        targetAbsolute: 5,
        note: `filled by ProducerPerformance (512 KiB records, acks=1), SIGKILLed at once; from spawning the process to a Fetch at offset 0 answering records; ${roundsNote}${errorsNote()}`,
      },
    ),
  ];
  return figures;
}

const sec = (ms: number | null): number | null => (ms === null ? null : ms / 1000);

function log(line: string): void {
  process.stderr.write(`[partitions] ${line}\n`);
}

interface Sizes {
  partitions: number;
  fewPartitions: number;
  records: number;
  logBytes: number;
}

/** One round of one broker kind: the partition figures on one fresh broker, the log restart on another. */
async function measureRound(kind: BrokerKind, beforeRoot: string | undefined, sizes: Sizes): Promise<RoundResult> {
  const r: RoundResult = {
    joinMs: null,
    createMs: null,
    createServesMs: null,
    rss: null,
    mbPerSec10: null,
    mbPerSec1000: null,
    cleanStartMs: null,
    killStartMs: null,
    logRestartMs: null,
    errors: [],
  };
  const step = async <T>(name: string, work: () => Promise<T>): Promise<T | null> => {
    try {
      const started = Date.now();
      const result = await withTimeout(work(), STEP_TIMEOUT_MS, name);
      log(`${kind} ${name}: done in ${Date.now() - started} ms${typeof result === 'number' ? ` (${result})` : ''}`);
      return result;
    } catch (error) {
      r.errors.push(`${name}: ${(error as Error).message.split('\n')[0]}`);
      log(`${kind} ${name} failed: ${(error as Error).message.slice(0, 2000)}`);
      return null;
    }
  };
  let broker = await step('start', () => startBroker(kind, beforeRoot));
  if (broker !== null) {
    const b = broker;
    r.joinMs = await step('first group join', () => firstGroupJoinMs(b.port));
    const many = 'spread-many';
    const few = 'spread-few';
    const created = await step('create', () => createAndWaitServesMs(b.port, many, sizes.partitions));
    r.createMs = created?.ledMs ?? null;
    r.createServesMs = created?.servesMs ?? null;
    const fewOk = await step('create few', () => createAndWaitLedMs(b.port, few, sizes.fewPartitions));
    const target = { label: kind, bootstrap: `127.0.0.1:${b.port}` };
    if (fewOk !== null)
      r.mbPerSec10 = await step(
        'produce few',
        async () =>
          (await producePerformance(target, few, { acks: '1', records: sizes.records, recordSize: 1024 })).mbPerSec,
      );
    if (r.createMs !== null) {
      r.mbPerSec1000 = await step(
        'produce many',
        async () =>
          (await producePerformance(target, many, { acks: '1', records: sizes.records, recordSize: 1024 })).mbPerSec,
      );
      r.rss = rssMiB(b.pid());
      r.cleanStartMs = await step('clean start-up', async () => {
        await b.stopClean();
        return timedStart(b, many, sizes.partitions);
      });
      r.killStartMs = await step('SIGKILL start-up', async () => {
        await b.kill9();
        return timedStart(b, many, sizes.partitions);
      });
    }
    await step('destroy', () => b.destroy());
  }
  broker = await step('start (log)', () => startBroker(kind, beforeRoot));
  if (broker !== null) {
    const b = broker;
    r.logRestartMs = await step('log restart', async () => {
      await createAndWaitLedMs(b.port, 'big-log', 1);
      await fillLog(b.port, 'big-log', sizes.logBytes);
      await b.kill9();
      const started = Date.now();
      await b.restart();
      await waitServesFetch(b.port, 'big-log', started + STEP_TIMEOUT_MS);
      return Date.now() - started;
    });
    await step('destroy (log)', () => b.destroy());
  }
  return r;
}

/** Starts the broker process again and returns the ms until Metadata names a leader for every partition of `topic`. */
async function timedStart(b: Broker, topic: string, partitions: number): Promise<number> {
  const started = Date.now();
  await b.restart();
  await waitAllLed(b.port, topic, partitions, started + STEP_TIMEOUT_MS);
  return Date.now() - started;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
    }),
  ]);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Brokers

async function startBroker(kind: BrokerKind, beforeRoot: string | undefined): Promise<Broker> {
  if (kind === 'kafka') return startKafkaBroker();
  if (kind === 'skiff') return startSkiffBroker();
  return startBeforeBroker(beforeRoot!);
}

async function startKafkaBroker(): Promise<Broker> {
  const kafka: KafkaFixture = await startKafka({ overrides: GROUP_OVERRIDES });
  return {
    kind: 'kafka',
    port: kafka.port,
    pid: () => kafka.pid,
    async stopClean() {
      const pid = kafka.pid;
      process.kill(pid, 'SIGTERM');
      await waitGone(pid, 60_000);
      // The fixture notices the exit through its child's 'exit' event: let it run.
      await sleep(100);
    },
    kill9: () => kafka.kill9(),
    restart: () => kafka.restart(STEP_TIMEOUT_MS),
    destroy: () => kafka.stop(),
  };
}

async function startSkiffBroker(): Promise<Broker> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-bench-partitions-'));
  let proc: BrokerProcess = await startBrokerProcess({
    dataDir,
    overrides: GROUP_OVERRIDES,
    startTimeoutMs: STEP_TIMEOUT_MS,
  });
  return {
    kind: 'skiff',
    get port() {
      return proc.port;
    },
    pid: () => proc.proc.pid!,
    async stopClean() {
      // Not proc.stop(): its 30 s bound is shorter than a loaded machine's stop with 1,000 partitions
      // (each replica's final checkpoint rewrites the log dir's three files).
      const pid = proc.proc.pid!;
      proc.proc.kill('SIGTERM');
      await waitGone(pid, STEP_TIMEOUT_MS);
    },
    kill9: () => proc.kill9(),
    async restart() {
      proc = await startBrokerProcess({ dataDir, overrides: GROUP_OVERRIDES, startTimeoutMs: STEP_TIMEOUT_MS });
    },
    async destroy() {
      await proc.stop('SIGTERM').catch(() => proc.kill9());
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const liveBefore = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of liveBefore) child.kill('SIGKILL');
});

/**
 * The older Skiff build at `root`, started as startBrokerProcess starts the current one
 * (`node <root>/bin/skiff.js start --port P --data-dir D --override k=v`), ready at its listening line.
 */
async function startBeforeBroker(root: string): Promise<Broker> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-bench-before-'));
  const spawnOne = async (port: number): Promise<{ child: ChildProcess; port: number; exited: Promise<void> }> => {
    const args = [path.join(root, 'bin', 'skiff.js'), 'start', '--port', String(port), '--data-dir', dataDir];
    for (const [k, v] of Object.entries(GROUP_OVERRIDES)) args.push('--override', `${k}=${v}`);
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    liveBefore.add(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => (liveBefore.delete(child), resolve())));
    let out = '';
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (out += c));
    const listening = await new Promise<number>((resolve, reject) => {
      let stdout = '';
      const timer = setTimeout(
        () => reject(new Error(`before broker printed no listening line:\n${out.slice(-2000)}`)),
        STEP_TIMEOUT_MS,
      );
      child.stdout!.setEncoding('utf8').on('data', (c: string) => {
        stdout += c;
        const m = /^skiff listening on (\S+):(\d+)\r?\n/m.exec(stdout);
        if (m !== null) {
          clearTimeout(timer);
          resolve(Number(m[2]));
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`before broker exited during start:\n${out.slice(-2000)}`));
      });
    });
    return { child, port: listening, exited };
  };
  let run = await spawnOne(0);
  const signal = async (sig: NodeJS.Signals): Promise<void> => {
    if (run.child.exitCode !== null || run.child.signalCode !== null) return;
    run.child.kill(sig);
    await run.exited;
  };
  return {
    kind: 'before',
    get port() {
      return run.port;
    },
    pid: () => run.child.pid!,
    stopClean: () => signal('SIGTERM'),
    kill9: () => signal('SIGKILL'),
    async restart() {
      run = await spawnOne(0);
    },
    async destroy() {
      await signal('SIGTERM');
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Resolves once /proc/<pid> is gone; throws after `timeoutMs`. */
async function waitGone(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (fs.existsSync(`/proc/${pid}`)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still runs ${timeoutMs} ms after SIGTERM`);
    await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------
// Wire probes (the same requests to both brokers)

/** Connects to `port`, retrying while the broker is not listening yet, until `deadline`. */
async function connect(port: number, deadline: number): Promise<WireClient> {
  for (;;) {
    try {
      return await WireClient.connect(port);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(20);
    }
  }
}

/**
 * One request and its decoded response body, waiting up to `timeoutMs` for the frame (WireClient.request
 * waits 10 s, shorter than a loaded machine's answers to CreateTopics or a first FindCoordinator).
 */
async function call(
  client: WireClient,
  apiKey: ApiKey,
  version: number,
  body: object,
  timeoutMs = STEP_TIMEOUT_MS,
): Promise<unknown> {
  const id = client.send(apiKey, version, body);
  const frame = await client.readFrame(timeoutMs);
  if (frame === null) throw new Error(`connection closed before the response to ${ApiKey[apiKey]}`);
  const res = decodeResponse(apiKey, version, frame);
  if (res.correlationId !== id) throw new Error(`correlation id ${res.correlationId}, expected ${id}`);
  return res.body;
}

/** The Metadata response fields the probes read. */
interface MetadataTopic {
  errorCode: number;
  partitions: Array<{ errorCode: number; leaderId: number }>;
}

async function metadata(client: WireClient, topic: string): Promise<{ topics: MetadataTopic[] }> {
  return (await call(
    client,
    ApiKey.Metadata,
    9,
    { topics: [{ name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false },
    30_000,
  )) as { topics: MetadataTopic[] };
}

/** Polls Metadata (every 20 ms, reconnecting on errors) until every one of `partitions` partitions of `topic` has a leader. */
async function waitAllLed(port: number, topic: string, partitions: number, deadline: number): Promise<void> {
  let client: WireClient | null = null;
  let last = '';
  try {
    for (;;) {
      if (Date.now() > deadline) throw new Error(`${topic}: not all ${partitions} partitions led (${last})`);
      try {
        client ??= await connect(port, deadline);
        const t = (await metadata(client, topic)).topics[0]!;
        const led =
          t.errorCode === ErrorCode.NONE ? t.partitions.filter((p) => p.errorCode === 0 && p.leaderId >= 0).length : 0;
        last = `error ${t.errorCode}, ${led} led`;
        if (led === partitions && t.partitions.length === partitions) return;
      } catch (error) {
        last = (error as Error).message;
        client?.close();
        client = null;
      }
      await sleep(20);
    }
  } finally {
    client?.close();
  }
}

/** Partition errors a producer retries on a topic just created (its logs may not exist yet). */
const RETRIABLE_PRODUCE_ERRORS = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.REQUEST_TIMED_OUT,
]);

/**
 * Sends CreateTopics (RF 1), then Produce (v9, acks=1, one 10-byte record per partition, all the
 * partitions still pending in one request, retried every 10 ms on retriable partition errors) until
 * every partition has acknowledged its record. Returns `{ ledMs, servesMs }`: ms from CreateTopics
 * sent to every partition led in Metadata, and to every partition's produce acknowledged. Kafka
 * answers CreateTopics at the controller's commit and its broker creates the logs after, so only
 * the second figure holds Kafka's log creation.
 */
async function createAndWaitServesMs(
  port: number,
  topic: string,
  partitions: number,
): Promise<{ ledMs: number; servesMs: number }> {
  const started = Date.now();
  const ledMs = await createAndWaitLedMs(port, topic, partitions);
  const client = await WireClient.connect(port);
  try {
    const records = buildBatch([{ key: null, value: Buffer.from('serves-now'), headers: [], timestamp: Date.now() }], {
      baseTimestamp: Date.now(),
      compression: 0,
      producerId: -1,
      producerEpoch: -1,
      baseSequence: -1,
    });
    let pending = Array.from({ length: partitions }, (_, i) => i);
    const deadline = started + STEP_TIMEOUT_MS;
    while (pending.length > 0) {
      if (Date.now() > deadline) throw new Error(`${topic}: ${pending.length} partitions still refuse a produce`);
      const body = (await call(client, ApiKey.Produce, 9, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 30_000,
        topicData: [{ name: topic, partitionData: pending.map((index) => ({ index, records })) }],
      })) as { responses: Array<{ partitionResponses: Array<{ index: number; errorCode: number }> }> };
      const retry: number[] = [];
      for (const p of body.responses[0]?.partitionResponses ?? []) {
        if (p.errorCode === ErrorCode.NONE) continue;
        if (!RETRIABLE_PRODUCE_ERRORS.has(p.errorCode))
          throw new Error(`${topic}-${p.index}: produce error ${p.errorCode}`);
        retry.push(p.index);
      }
      pending = retry;
      if (pending.length > 0) await sleep(10);
    }
    return { ledMs, servesMs: Date.now() - started };
  } finally {
    client.close();
  }
}

/** Sends CreateTopics (RF 1) and returns the ms until every partition has a leader in Metadata. */
async function createAndWaitLedMs(port: number, topic: string, partitions: number): Promise<number> {
  const client = await WireClient.connect(port);
  try {
    const started = Date.now();
    // send + readFrame: request()'s 10 s frame timeout is shorter than a loaded machine's 1,000-partition creation.
    const id = client.send(ApiKey.CreateTopics, 4, {
      topics: [{ name: topic, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: STEP_TIMEOUT_MS,
      validateOnly: false,
    });
    const frame = await client.readFrame(STEP_TIMEOUT_MS);
    if (frame === null) throw new Error(`CreateTopics ${topic}: connection closed`);
    const res = decodeResponse(ApiKey.CreateTopics, 4, frame);
    if (res.correlationId !== id) throw new Error('correlation id mismatch');
    const code = (res.body as { topics: Array<{ errorCode: number }> }).topics[0]!.errorCode;
    if (code !== ErrorCode.NONE) throw new Error(`CreateTopics ${topic}: error ${code}`);
    await waitAllLed(port, topic, partitions, started + STEP_TIMEOUT_MS);
    return Date.now() - started;
  } finally {
    client.close();
  }
}

const RETRIABLE_GROUP_ERRORS = new Set<number>([
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.NOT_COORDINATOR,
]);

/**
 * The first group join on a fresh broker, as a client does it: FindCoordinator until the coordinator
 * is known, JoinGroup v5 (MEMBER_ID_REQUIRED, then again with the id), SyncGroup with the leader's
 * (empty) assignment; retriable coordinator errors are retried after 20 ms. Returns ms from the first
 * FindCoordinator to the SyncGroup answer. The broker's coordinator is itself (one node).
 */
async function firstGroupJoinMs(port: number): Promise<number> {
  const client = await WireClient.connect(port);
  const groupId = `bench-first-group-${Date.now()}`;
  try {
    const started = Date.now();
    const deadline = started + STEP_TIMEOUT_MS;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded response bodies, read field by field below
    const retry = async (what: string, send: () => Promise<any>): Promise<any> => {
      for (;;) {
        const body = await send();
        if (!RETRIABLE_GROUP_ERRORS.has(body.errorCode)) return body;
        if (Date.now() > deadline) throw new Error(`${what}: still error ${body.errorCode}`);
        await sleep(20);
      }
    };
    const found = await retry('FindCoordinator', async () =>
      call(client, ApiKey.FindCoordinator, 3, { key: groupId, keyType: 0 }),
    );
    if (found.errorCode !== ErrorCode.NONE) throw new Error(`FindCoordinator: error ${found.errorCode}`);
    const join = (memberId: string) =>
      retry('JoinGroup', async () =>
        call(client, ApiKey.JoinGroup, 5, {
          groupId,
          sessionTimeoutMs: 30_000,
          rebalanceTimeoutMs: 30_000,
          memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: encodeConsumerSubscription(['spread-many']) }],
        }),
      );
    let joined = await join('');
    if (joined.errorCode === ErrorCode.MEMBER_ID_REQUIRED) joined = await join(joined.memberId);
    if (joined.errorCode !== ErrorCode.NONE) throw new Error(`JoinGroup: error ${joined.errorCode}`);
    const sync = await retry('SyncGroup', async () =>
      call(client, ApiKey.SyncGroup, 3, {
        groupId,
        generationId: joined.generationId,
        memberId: joined.memberId,
        groupInstanceId: null,
        assignments: [{ memberId: joined.memberId, assignment: Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }],
      }),
    );
    if (sync.errorCode !== ErrorCode.NONE) throw new Error(`SyncGroup: error ${sync.errorCode}`);
    return Date.now() - started;
  } finally {
    client.close();
  }
}

/** Fills partition 0 of `topic` with about `bytes` bytes: ProducerPerformance, 512 KiB records, acks=1, full speed. */
async function fillLog(port: number, topic: string, bytes: number): Promise<void> {
  const recordSize = 512 * 1024;
  const count = Math.max(1, Math.ceil(bytes / recordSize));
  const r = await runJava(
    PRODUCER_PERFORMANCE,
    [
      '--topic',
      topic,
      '--num-records',
      String(count),
      '--record-size',
      String(recordSize),
      '--throughput',
      '-1',
      '--producer-props',
      `bootstrap.servers=127.0.0.1:${port}`,
      'acks=1',
      'batch.size=1048576',
      'max.request.size=1048576',
      'linger.ms=5',
      'buffer.memory=67108864',
    ],
    STEP_TIMEOUT_MS * 4,
  );
  if (r.code !== 0 || !/\d+ records sent/.test(r.stdout))
    throw new Error(`filling ${topic} failed (code ${r.code}):\n${r.stdout.slice(-1500)}\n${r.stderr.slice(-1500)}`);
  log(`filled ${topic} with ${count} x ${recordSize} B: ${r.stdout.trim().split('\n').pop()}`);
}

/** Polls until partition 0 of `topic` is led and a Fetch (v11) at offset 0 answers records. */
async function waitServesFetch(port: number, topic: string, deadline: number): Promise<void> {
  let client: WireClient | null = null;
  let last = '';
  try {
    for (;;) {
      if (Date.now() > deadline) throw new Error(`${topic}: no fetch answered (${last})`);
      try {
        client ??= await connect(port, deadline);
        const t = (await metadata(client, topic)).topics[0]!;
        const p = t.partitions?.[0];
        if (t.errorCode === ErrorCode.NONE && p !== undefined && p.errorCode === 0 && p.leaderId >= 0) {
          const id = client.send(ApiKey.Fetch, 11, fetchRequestBody({ topic, minBytes: 0 }));
          const frame = await client.readFrame(30_000);
          if (frame === null) throw new Error('connection closed');
          const res = decodeResponse(ApiKey.Fetch, 11, frame);
          if (res.correlationId !== id) throw new Error('correlation id mismatch');
          const part = (
            res.body as { responses: Array<{ partitions: Array<{ errorCode: number; records: Buffer | null }> }> }
          ).responses[0]!.partitions[0]!;
          last = `fetch error ${part.errorCode}, ${part.records?.length ?? 0} bytes`;
          if (part.errorCode === 0 && part.records !== null && part.records.length > 0) return;
        } else {
          last = `metadata error ${t.errorCode}/${p?.errorCode}, leader ${p?.leaderId}`;
        }
      } catch (error) {
        last = (error as Error).message;
        client?.close();
        client = null;
      }
      await sleep(20);
    }
  } finally {
    client?.close();
  }
}

/** `node dist/bench/compare-partitions.js [--scale S] [--rounds N] [--before ROOT] [--smoke]`: prints the figures as JSON. */
async function main(): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i < 0 ? undefined : process.argv[i + 1];
  };
  const figures = await runPartitionsCompare({
    scale: Number(arg('--scale') ?? '1'),
    rounds: Number(arg('--rounds') ?? '1'),
    skiffBefore: arg('--before'),
    smoke: process.argv.includes('--smoke'),
  });
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
