/**
 * The three-node section of `npm run bench:compare` (compare.ts calls {@link runClusterCompare};
 * `node dist/bench/compare.js --cluster-only` runs it alone): a three-node KRaft Kafka
 * (test/helpers/kafka-cluster.ts: combined node 0 + brokers 1 and 2, -Xmx384m each) against
 * `skiff start --nodes 3` (test/helpers/cluster-process.ts), both on this host.
 *
 * Throughput: the harness's load generator (bench/loadgen, franz-go, or ProducerPerformance with
 * `--loadgen java`) at peak, after the warm-up round(s) and in alternating order, each run on a
 * fresh one-partition topic (made by a CreateTopics with explicit replicas) led by broker 1 (replicas [1, 2, 0]: not Kafka's node 0,
 * which also runs the controller quorum), min.insync.replicas=2:
 *   - RF=3 acks=all on Kafka, and on Skiff with the topic's `write.caching=true` (Kafka's semantics:
 *     the ack needs every ISR member's page cache) and `false` (Skiff's default: every ISR member's
 *     fsync), each reported as Skiff/Kafka;
 *   - RF=1 acks=1 (replicas [1]) on both, so the same run gives Skiff RF=3 acks=all /
 *     RF=1 acks=1 (and Kafka's, for scale).
 * Each run's figures are those of the single-node section (records/s, MB/s, p50/p99/p99.9, and the
 * brokers' CPU per MB: Kafka's three JVMs summed, Skiff's one process, which runs all three brokers).
 *
 * Failover: the unavailability window after a hard crash of the leader's broker (broker 1): a
 * client of Skiff's src/client sends one acks=all produce at a time to the leader; at t0 the broker
 * is crashed (Skiff: POST /v1/brokers/1/crash; Kafka: SIGKILL of its JVM), then the client polls
 * Metadata every 20 ms and produces to whichever other broker it names as leader until one is
 * acknowledged; the window is that ack's time minus t0. Kafka's controller notices a killed broker
 * only after broker.session.timeout.ms (9000, the default here), Skiff's runtime reports the dead
 * workers at once. The crashed broker is started again (and back in the ISR) before the next round.
 *
 * The machine is shared: quote the ratios of one run.
 */
import { performance } from 'node:perf_hooks';
import { KafkaClient } from '../src/client';
import { buildBatch } from '../src/client/batch';
import { ApiKey } from '../src/protocol/api-keys';
import { errorName } from '../src/protocol/error-codes';
import { startKafkaCluster, type KafkaCluster } from '../test/helpers/kafka-cluster';
import { startClusterProcess, type ClusterProcess } from '../test/helpers/cluster-process';
import type { Figure } from './figures';
import { figuresOf, produceRun, SampleBook, type MetricSpec, type SectionOptions } from './harness';
import { fmt, median, ratio, type ToolTarget } from './perf-tools';

const SECTION = 'cluster';

/** One throughput run: which cluster, which topic layout and acks. */
interface RunKind {
  key: 'kafka-rf3' | 'kafka-rf1' | 'skiff-rf3-wc' | 'skiff-rf3' | 'skiff-rf1';
  cluster: 'kafka' | 'skiff';
  label: string;
  /** Broker ids of the one partition, the leader first. */
  replicaAssignment: number[];
  acks: '1' | 'all';
  configs: Record<string, string>;
}

const MIN_ISR = { 'min.insync.replicas': '2' };
const KINDS: RunKind[] = [
  {
    key: 'kafka-rf3',
    cluster: 'kafka',
    label: 'Kafka RF=3 acks=all',
    replicaAssignment: [1, 2, 0],
    acks: 'all',
    configs: MIN_ISR,
  },
  { key: 'kafka-rf1', cluster: 'kafka', label: 'Kafka RF=1 acks=1', replicaAssignment: [1], acks: '1', configs: {} },
  {
    key: 'skiff-rf3-wc',
    cluster: 'skiff',
    label: 'Skiff RF=3 acks=all write.caching=true',
    replicaAssignment: [1, 2, 0],
    acks: 'all',
    configs: { ...MIN_ISR, 'write.caching': 'true' },
  },
  {
    key: 'skiff-rf3',
    cluster: 'skiff',
    label: 'Skiff RF=3 acks=all write.caching=false',
    replicaAssignment: [1, 2, 0],
    acks: 'all',
    configs: { ...MIN_ISR, 'write.caching': 'false' },
  },
  { key: 'skiff-rf1', cluster: 'skiff', label: 'Skiff RF=1 acks=1', replicaAssignment: [1], acks: '1', configs: {} },
];
const RECORD_SIZE = 100;
const CRASHED_BROKER = 1;
const FAILOVER_LIMIT_MS = 60_000;
const REJOIN_LIMIT_MS = 90_000;

/** A cluster the failover runs crash and restart. */
interface FailoverTarget {
  name: 'kafka' | 'skiff';
  /** Broker 0's address (never crashed). */
  address0: string;
  crash(): Promise<void>;
  restart(): Promise<void>;
}

const METRICS: MetricSpec[] = [
  { metric: 'recordsPerSec', field: 'recordsPerSec', better: 'higher' },
  { metric: 'MBPerSec', field: 'mbPerSec', better: 'higher' },
  { metric: 'p50Ms', field: 'p50Ms', better: 'lower' },
  { metric: 'p99Ms', field: 'p99Ms', better: 'lower' },
  { metric: 'p999Ms', field: 'p999Ms', better: 'lower' },
  { metric: 'cpuMsPerMB', field: 'cpuMsPerMB', better: 'lower' },
];

/**
 * Runs the section, prints its tables and returns its figures (section `cluster`): RF=3 acks=all
 * (Skiff write.caching=false as `skiff`, true as the `write.caching=true` variant) and RF=1 acks=1
 * beside Kafka's, and the failover window (`windowMs`).
 */
export async function runClusterCompare(opts: SectionOptions): Promise<Figure[]> {
  const started = Date.now();
  const records = Math.max(opts.smoke ? 100 : 1000, Math.round(300_000 * opts.scale));
  console.log(
    `\nbench/compare (3 nodes): ${opts.warmup} warm-up + ${opts.rounds} round(s), ${records} x ${RECORD_SIZE} B per run, load generator ${opts.client.loadgen}; failover: ${opts.rounds} crash(es) per cluster`,
  );
  let kafka: KafkaCluster | null = null;
  let skiff: ClusterProcess | null = null;
  try {
    const [k, s] = await Promise.allSettled([startKafkaCluster(), startClusterProcess()]);
    if (k.status === 'fulfilled') kafka = k.value;
    if (s.status === 'fulfilled') skiff = s.value;
    if (k.status === 'rejected') throw k.reason;
    if (s.status === 'rejected') throw s.reason;
    const kc = kafka!;
    const sc = skiff!;
    const targets: Record<'kafka' | 'skiff', ToolTarget> = {
      kafka: { label: 'Kafka 3 nodes', bootstrap: kc.bootstrap },
      skiff: { label: 'Skiff --nodes 3', bootstrap: sc.bootstrap },
    };
    console.log(`Kafka at ${kc.bootstrap}, Skiff at ${sc.bootstrap} (admin ${sc.adminUrl})`);

    const book = new SampleBook();
    const pids = {
      kafka: () => kc.nodes.filter((n) => n.running).map((n) => n.pid),
      skiff: () => [sc.proc.pid!],
    };
    for (let round = 1 - opts.warmup; round <= opts.rounds; round++) {
      // Alternate which cluster goes first; within a cluster the kinds rotate too.
      const kafkaKinds = KINDS.filter((k) => k.cluster === 'kafka');
      const skiffKinds = KINDS.filter((k) => k.cluster === 'skiff');
      const rotate = <T>(xs: T[], by: number): T[] => xs.map((_, i) => xs[(i + by) % xs.length]!);
      const order =
        round % 2 === 1
          ? interleave(rotate(skiffKinds, round), rotate(kafkaKinds, round))
          : interleave(rotate(kafkaKinds, round), rotate(skiffKinds, round));
      for (const kind of order) {
        const topic = `cluster-r${round + opts.warmup}-${kind.key}`;
        const target = targets[kind.cluster];
        const address0 = kind.cluster === 'kafka' ? kc.address(0) : sc.address(0);
        await createTopic(address0, topic, kind.replicaAssignment, kind.configs);
        await waitFullyReplicated(address0, topic);
        const p = await produceRun(
          target.bootstrap,
          pids[kind.cluster],
          topic,
          { acks: kind.acks, records, recordSize: RECORD_SIZE },
          opts.client,
        );
        if (round > 0) book.add(kind.key, kind.key, p);
        console.log(
          `${round > 0 ? `round ${round}` : 'warm-up'} ${kind.label}: ${fmt(p.recordsPerSec)} rec/s ${p.mbPerSec.toFixed(2)} MB/s p50 ${p.p50Ms} ms p99 ${p.p99Ms} ms p99.9 ${p.p999Ms} ms cpu ${p.cpuMsPerMB.toFixed(1)} ms/MB`,
        );
      }
    }

    const failoverTargets: Record<'kafka' | 'skiff', FailoverTarget> = {
      kafka: {
        name: 'kafka',
        address0: kc.address(0),
        crash: () => kc.kill9Node(CRASHED_BROKER),
        restart: () => kc.startNode(CRASHED_BROKER),
      },
      skiff: {
        name: 'skiff',
        address0: sc.address(0),
        crash: async () => void (await sc.crash(CRASHED_BROKER)),
        restart: async () => void (await sc.start(CRASHED_BROKER)),
      },
    };
    const windows: Record<'kafka' | 'skiff', number[]> = { kafka: [], skiff: [] };
    for (let round = 1; round <= opts.rounds; round++) {
      const order: Array<'kafka' | 'skiff'> = round % 2 === 1 ? ['skiff', 'kafka'] : ['kafka', 'skiff'];
      for (const name of order) {
        const target = failoverTargets[name];
        const topic = `failover-r${round}`;
        await createTopic(target.address0, topic, [1, 2, 0], MIN_ISR);
        await waitFullyReplicated(target.address0, topic);
        const w = await failoverWindow(target, topic);
        windows[name].push(w.windowMs);
        console.log(
          `failover round ${round} ${targets[name].label}: ${fmt(w.windowMs, 0)} ms from the crash of broker ${CRASHED_BROKER} to the first ack on broker ${w.newLeader} (${w.attempts} produce attempts, ${w.ackedBefore} acked before the crash)`,
        );
        await target.restart();
        await waitFullyReplicated(target.address0, topic, REJOIN_LIMIT_MS);
      }
    }

    const med = (key: RunKind['key'], f: 'recordsPerSec' | 'mbPerSec' | 'p99Ms' | 'p50Ms'): number =>
      book.median(key, key, f) ?? NaN;
    const out: string[] = [''];
    out.push(
      `Three nodes on one host: ${opts.client.loadgen} load generator at peak, ${records} x ${RECORD_SIZE} B, one partition led by broker 1, min.insync.replicas=2. Medians of ${opts.rounds} alternating round(s).`,
    );
    out.push('');
    out.push('| run | rec/s | MB/s | p50 ms | p99 ms | thr. vs Kafka RF=3 acks=all | p99 vs Kafka RF=3 acks=all |');
    out.push('|---|---:|---:|---:|---:|---:|---:|');
    for (const kind of KINDS) {
      const vsKafka = kind.key === 'skiff-rf3' || kind.key === 'skiff-rf3-wc';
      out.push(
        `| ${kind.label} | ${fmt(med(kind.key, 'recordsPerSec'))} | ${fmt(med(kind.key, 'mbPerSec'), 2)} | ${fmt(
          med(kind.key, 'p50Ms'),
          1,
        )} | ${fmt(med(kind.key, 'p99Ms'), 1)} | ${
          vsKafka ? ratio(med(kind.key, 'recordsPerSec'), med('kafka-rf3', 'recordsPerSec')) : ''
        } | ${vsKafka ? ratio(med(kind.key, 'p99Ms'), med('kafka-rf3', 'p99Ms')) : ''} |`,
      );
    }
    const thr = (key: RunKind['key']): number => med(key, 'recordsPerSec');
    out.push('');
    out.push(
      `Skiff RF=3 acks=all / RF=1 acks=1: ${ratio(thr('skiff-rf3'), thr('skiff-rf1'))} (write.caching=false), ${ratio(thr('skiff-rf3-wc'), thr('skiff-rf1'))} (true); Kafka's: ${ratio(thr('kafka-rf3'), thr('kafka-rf1'))}`,
    );
    const mk = median(windows.kafka);
    const ms = median(windows.skiff);
    out.push(
      `Unavailability after a hard crash of the leader's broker (median of ${opts.rounds}): Skiff ${fmt(ms, 0)} ms, Kafka ${fmt(mk, 0)} ms (broker.session.timeout.ms=9000); Skiff/Kafka ${ratio(ms, mk)}. Runs: Skiff ${windows.skiff.map((w) => Math.round(w)).join(', ')} ms; Kafka ${windows.kafka.map((w) => Math.round(w)).join(', ')} ms.`,
    );
    out.push(`Total three-node section ${Math.round((Date.now() - started) / 1000)} s.`);
    console.log(out.join('\n'));

    // The same runs as figures: Kafka's RF=3 acks=all beside Skiff's (write.caching=false; true as a
    // variant), RF=1 acks=1 beside each other, and the failover window.
    const note = `${opts.rounds} alternating round(s) after ${opts.warmup} warm-up, three nodes on one host, load generator ${opts.client.loadgen}`;
    const alias = (kafkaKey: RunKind['key'], skiffKey: RunKind['key'], variant?: RunKind['key']): SampleBook => {
      const b = new SampleBook();
      for (const [from, to] of [
        [kafkaKey, 'kafka'],
        [skiffKey, 'skiff'],
        ...(variant !== undefined ? [[variant, 'write.caching=true']] : []),
      ] as const)
        for (const sample of book.samples(from, from)) b.add('x', to, sample);
      return b;
    };
    const figures: Figure[] = [
      ...figuresOf(
        alias('kafka-rf3', 'skiff-rf3', 'skiff-rf3-wc'),
        SECTION,
        'x',
        `produce RF=3 acks=all ${RECORD_SIZE} B peak`,
        METRICS,
        ['write.caching=true'],
        note,
      ),
      ...figuresOf(
        alias('kafka-rf1', 'skiff-rf1'),
        SECTION,
        'x',
        `produce RF=1 acks=1 ${RECORD_SIZE} B peak (3 nodes)`,
        METRICS,
        [],
        note,
      ),
      {
        section: SECTION,
        config: `failover after a hard crash of the leader's broker`,
        metric: 'windowMs',
        better: 'lower',
        kafka: windows.kafka.length > 0 ? mk : null,
        skiff: windows.skiff.length > 0 ? ms : null,
        note: `${opts.rounds} crash(es) per cluster; Kafka's broker.session.timeout.ms=9000`,
      },
    ];
    return figures;
  } finally {
    await Promise.allSettled([kafka?.stop(), skiff?.stop()]);
  }
}

function interleave<T>(a: readonly T[], b: readonly T[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== undefined) out.push(a[i]!);
    if (b[i] !== undefined) out.push(b[i]!);
  }
  return out;
}

/**
 * Creates a one-partition topic on `replicas` with `configs` by a CreateTopics of Skiff's client
 * (TopicCommand refuses config names Kafka does not know, such as Skiff's `write.caching`).
 */
async function createTopic(
  address: string,
  topic: string,
  replicas: number[],
  configs: Record<string, string>,
): Promise<void> {
  const client = await KafkaClient.connect({ brokers: address, clientId: 'skiff-bench', requestTimeoutMs: 30_000 });
  try {
    const body = await client.request(
      ApiKey.CreateTopics,
      5,
      {
        topics: [
          {
            name: topic,
            numPartitions: -1,
            replicationFactor: -1,
            assignments: [{ partitionIndex: 0, brokerIds: replicas }],
            configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
          },
        ],
        timeoutMs: 30_000,
        validateOnly: false,
      },
      0,
    );
    const code = (body.topics as Array<{ errorCode: number; errorMessage: string | null }>)[0];
    if (code === undefined || code.errorCode !== 0)
      throw new Error(
        `creating ${topic} on ${address}: ${code === undefined ? 'no answer' : `${errorName(code.errorCode)} ${code.errorMessage ?? ''}`}`,
      );
  } finally {
    client.close();
  }
}

/** Polls Metadata on `address` (every 100 ms, bounded) until every partition of `topic` is led and fully in sync. */
async function waitFullyReplicated(address: string, topic: string, limitMs = 30_000): Promise<void> {
  const client = await KafkaClient.connect({ brokers: address, clientId: 'skiff-bench', requestTimeoutMs: 10_000 });
  try {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const t = (await client.metadata([topic])).topics.find((x) => x.name === topic);
      if (
        t !== undefined &&
        t.errorCode === 0 &&
        t.partitions.length > 0 &&
        t.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length)
      )
        return;
      if (Date.now() > deadline)
        throw new Error(`${topic} on ${address} not fully in sync after ${limitMs} ms: ${JSON.stringify(t)}`);
      await sleep(100);
    }
  } finally {
    client.close();
  }
}

/**
 * Measures one failover (module comment): warms up with 50 acknowledged produces on broker
 * {@link CRASHED_BROKER}, crashes it, and returns the time to the first ack on another broker.
 */
async function failoverWindow(
  target: FailoverTarget,
  topic: string,
): Promise<{ windowMs: number; newLeader: number; attempts: number; ackedBefore: number }> {
  const client = await KafkaClient.connect({
    brokers: target.address0,
    clientId: 'skiff-bench-failover',
    requestTimeoutMs: 5000,
  });
  try {
    let ackedBefore = 0;
    for (let i = 0; i < 50; i++) {
      const e = await produceOne(client, topic, CRASHED_BROKER, `before-${i}`);
      if (e !== 'NONE') throw new Error(`${target.name}: produce before the crash failed: ${e}`);
      ackedBefore++;
    }
    const t0 = performance.now();
    const crashed = target.crash();
    let attempts = 0;
    for (;;) {
      if (performance.now() - t0 > FAILOVER_LIMIT_MS)
        throw new Error(`${target.name}: no acknowledged produce within ${FAILOVER_LIMIT_MS} ms of the crash`);
      const p = (await client.metadata([topic]).catch(() => null))?.topics.find((t) => t.name === topic)?.partitions[0];
      if (p !== undefined && p.leader >= 0 && p.leader !== CRASHED_BROKER) {
        attempts++;
        const e = await produceOne(client, topic, p.leader, `after-${attempts}`).catch((err: unknown) => String(err));
        if (e === 'NONE') {
          const windowMs = performance.now() - t0;
          await crashed;
          return { windowMs, newLeader: p.leader, attempts, ackedBefore };
        }
      }
      await sleep(20);
    }
  } finally {
    client.close();
  }
}

/** One acks=all produce of one record to partition 0 on `nodeId`; the partition's error name. */
async function produceOne(client: KafkaClient, topic: string, nodeId: number, value: string): Promise<string> {
  const batch = buildBatch([{ key: null, value: Buffer.from(value), headers: [], timestamp: Date.now() }], {
    baseTimestamp: Date.now(),
    compression: 0,
    producerId: -1,
    producerEpoch: -1,
    baseSequence: -1,
  });
  const body = await client.request(
    ApiKey.Produce,
    9,
    {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }],
    },
    nodeId,
  );
  const p = (body.responses as Array<{ partitionResponses: Array<{ errorCode: number }> }>)[0]?.partitionResponses[0];
  return p === undefined ? 'NO_PARTITION_IN_RESPONSE' : errorName(p.errorCode);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
