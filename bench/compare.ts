/**
 * Side-by-side benchmark: Apache Kafka (the test fixture, KRaft combined broker+controller) and Skiff,
 * driven by Kafka's own perf tools, alternating Kafka / Skiff for every configuration.
 *
 *   npm run bench:compare                      # build, then node dist/bench/compare.js
 *   node dist/bench/compare.js --scale 0.25 --rounds 1    # a quick smoke run
 *   node dist/bench/compare.js --assign                   # also the group-less consumer
 *   node dist/bench/compare.js --cluster-only             # only the three-node section (npm run bench:cluster)
 *   node dist/bench/compare.js --no-cluster               # only the single-node section
 *
 * Two sections, one after the other (each stops its brokers before the next starts): the
 * single-node one below, then the three-node one of compare-cluster.ts (RF=3 acks=all against a
 * three-node Kafka, RF=3 / RF=1 on Skiff, and the failover window after a hard crash of a leader).
 *
 * Brokers: the Kafka fixture (test/helpers/kafka-fixture.ts), Skiff with its defaults
 * (write.caching=false: acks=all answers after fsync) and Skiff with
 * `--override write.caching.default=true` (page cache, as Kafka, which never fsyncs before acking):
 * each has its own temp data dir. Every configuration gets a fresh topic (RF=1, 1 partition, created
 * with TopicCommand) on each broker.
 *
 * Producer: org.apache.kafka.tools.ProducerPerformance (--throughput -1, the producer's defaults
 * otherwise, acks as configured). Consumer: org.apache.kafka.tools.ConsumerPerformance, which
 * subscribes with a consumer group of its own (a fresh group id per run) and reads the topic from
 * the beginning, against both brokers in the same alternating order; the ratio uses its fetch rate
 * (fetch.MB.sec / fetch.nMsg.sec: the time after the group join). `--assign` also runs
 * bench/compare-consumer.java, the same consumer settings reading partition 0 by assignment (no
 * group), to separate the fetch path from the group protocol. Tool JVMs run with the JDK's default
 * JIT (not the C1-only flags of `kafka-fixture.sh tool`, which would cap the client).
 *
 * The machine is shared and noisy: quote the Skiff/Kafka ratios of one run, never lone numbers.
 */
import * as path from 'node:path';
import { repoRoot, startKafka, type KafkaFixture } from '../test/helpers/kafka-fixture';
import { startBrokerProcess, type BrokerProcess } from '../test/helpers/broker-process';
import { runClusterCompare } from './compare-cluster';
import {
  CONSUMER_PERFORMANCE,
  createTopic,
  fmt,
  initKafkaTools,
  median,
  numberArg,
  producePerformance,
  ratio,
  runJava,
  type ProducerResult,
} from './perf-tools';

interface Config {
  acks: '1' | 'all';
  recordSize: number;
  records: number;
}

type TargetName = 'kafka' | 'skiff' | 'skiff-wc';

interface Target {
  name: TargetName;
  label: string;
  bootstrap: string;
}

interface ConsumerResult {
  mbPerSec: number;
  msgPerSec: number;
  fetchMbPerSec: number;
  fetchMsgPerSec: number;
  records: number;
}

const SCALE = numberArg('--scale', 1);
const WITH_ASSIGN = process.argv.includes('--assign');
/** `--cluster-only`: just the three-node section (compare-cluster.ts); `--no-cluster`: just the single-node one. */
const CLUSTER_ONLY = process.argv.includes('--cluster-only');
const NO_CLUSTER = process.argv.includes('--no-cluster');
/**
 * The group settings scripts/kafka-fixture.sh gives Kafka, given to Skiff too: with Kafka's default
 * group.initial.rebalance.delay.ms (3000) every ConsumerPerformance join on Skiff would wait 3 s
 * that the fixture does not.
 */
const SKIFF_AS_FIXTURE = { 'group.initial.rebalance.delay.ms': '0', 'offsets.topic.num.partitions': '1' };
const ROUNDS = Math.round(numberArg('--rounds', 2));
const CONFIGS: Config[] = [
  { acks: '1', recordSize: 100, records: Math.round(200_000 * SCALE) },
  { acks: 'all', recordSize: 100, records: Math.round(200_000 * SCALE) },
  { acks: '1', recordSize: 1024, records: Math.round(50_000 * SCALE) },
  { acks: 'all', recordSize: 1024, records: Math.round(50_000 * SCALE) },
];

/** ConsumerPerformance's (and compare-consumer.java's) summary line after its header. */
function parseConsumerLine(stdout: string): ConsumerResult | null {
  const lines = stdout.split('\n');
  const h = lines.findIndex((l) => l.startsWith('start.time, end.time'));
  if (h < 0 || lines[h + 1] === undefined) return null;
  const f = lines[h + 1]!.split(', ').map((s) => s.trim());
  if (f.length < 10) return null;
  return {
    mbPerSec: Number(f[3]),
    records: Number(f[4]),
    msgPerSec: Number(f[5]),
    fetchMbPerSec: Number(f[8]),
    fetchMsgPerSec: Number(f[9]),
  };
}

async function consumeAssigned(target: Target, topic: string, cfg: Config): Promise<ConsumerResult> {
  const source = path.join(repoRoot(), 'bench', 'compare-consumer.java');
  const r = await runJava(source, [target.bootstrap, topic, String(cfg.records), '10000']);
  const parsed = parseConsumerLine(r.stdout);
  if (r.code !== 0 || parsed === null || parsed.records !== cfg.records) {
    throw new Error(
      `compare-consumer against ${target.label} failed (code ${r.code}):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`,
    );
  }
  return parsed;
}

/** ConsumerPerformance in a fresh group `group`; a string saying what failed instead of throwing. */
async function consumePerformance(
  target: Target,
  topic: string,
  cfg: Config,
  group: string,
): Promise<ConsumerResult | string> {
  const r = await runJava(
    CONSUMER_PERFORMANCE,
    [
      '--bootstrap-server',
      target.bootstrap,
      '--topic',
      topic,
      '--group',
      group,
      '--num-records',
      String(cfg.records),
      '--timeout',
      '10000',
    ],
    90_000,
  );
  const parsed = parseConsumerLine(r.stdout);
  if (r.code !== 0 || parsed === null || parsed.records !== cfg.records) {
    const why = (r.stderr + r.stdout)
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /Exception|Error|error/.test(l))
      .slice(0, 2)
      .join(' | ');
    return `failed (code ${r.code}${r.timedOut ? ', timed out' : ''}, ${parsed?.records ?? 0}/${cfg.records} records)${why !== '' ? `: ${why.slice(0, 400)}` : ''}`;
  }
  return parsed;
}

async function main(): Promise<void> {
  await initKafkaTools();
  if (!CLUSTER_ONLY) await compareSingleNode();
  if (!NO_CLUSTER) await runClusterCompare({ scale: SCALE, rounds: ROUNDS });
}

/** The single-node section: Kafka fixture vs Skiff (write.caching false and true), RF=1, every config of {@link CONFIGS}. */
async function compareSingleNode(): Promise<void> {
  const started = Date.now();
  console.log(
    `bench/compare: ${ROUNDS} round(s), configs: ${CONFIGS.map((c) => `acks=${c.acks} ${c.records} x ${c.recordSize} B`).join('; ')}`,
  );

  let kafka: KafkaFixture | null = null;
  let skiff: BrokerProcess | null = null;
  let skiffWc: BrokerProcess | null = null;
  try {
    [kafka, skiff, skiffWc] = await Promise.all([
      startKafka(),
      startBrokerProcess({ overrides: SKIFF_AS_FIXTURE }),
      startBrokerProcess({ overrides: { ...SKIFF_AS_FIXTURE, 'write.caching.default': 'true' } }),
    ]);
    const targets: Record<TargetName, Target> = {
      kafka: { name: 'kafka', label: 'Kafka 4.4.0', bootstrap: kafka.bootstrap },
      skiff: { name: 'skiff', label: 'Skiff', bootstrap: `127.0.0.1:${skiff.port}` },
      'skiff-wc': { name: 'skiff-wc', label: 'Skiff write.caching=true', bootstrap: `127.0.0.1:${skiffWc.port}` },
    };
    console.log(
      `Kafka at ${targets.kafka.bootstrap}, Skiff at ${targets.skiff.bootstrap}, Skiff (write.caching.default=true) at ${targets['skiff-wc'].bootstrap}`,
    );

    type Key = string;
    const prod = new Map<Key, ProducerResult[]>();
    const cons = new Map<Key, ConsumerResult[]>();
    const consPerf = new Map<Key, (ConsumerResult | string)[]>();
    const push = <T>(m: Map<Key, T[]>, k: Key, v: T): void => {
      m.set(k, [...(m.get(k) ?? []), v]);
    };
    const cfgKey = (c: Config): string => `acks=${c.acks} ${c.recordSize}B`;

    for (let round = 1; round <= ROUNDS; round++) {
      for (const [ci, cfg] of CONFIGS.entries()) {
        // Alternate: Kafka first on even steps, Skiff first on odd ones.
        const order: TargetName[] = (round + ci) % 2 === 0 ? ['kafka', 'skiff'] : ['skiff', 'kafka'];
        if (cfg.acks === 'all') order.push('skiff-wc');
        const topic = `compare-r${round}-acks${cfg.acks}-${cfg.recordSize}b`;
        for (const t of order) {
          const target = targets[t];
          await createTopic(target, topic);
          const p = await producePerformance(target, topic, cfg);
          push(prod, `${cfgKey(cfg)}|${t}`, p);
          console.log(
            `round ${round} ${cfgKey(cfg)} ${target.label}: produce ${fmt(p.recordsPerSec)} rec/s ${p.mbPerSec} MB/s avg ${p.avgMs} ms p99 ${p.p99Ms} ms`,
          );
        }
        for (const t of order.filter((n) => n !== 'skiff-wc')) {
          const target = targets[t];
          const c = await consumePerformance(target, topic, cfg, `${topic}-${t}`);
          push(consPerf, `${cfgKey(cfg)}|${t}`, c);
          console.log(
            `round ${round} ${cfgKey(cfg)} ${target.label}: ConsumerPerformance ${typeof c === 'string' ? c : `${c.mbPerSec} MB/s (fetch ${c.fetchMbPerSec} MB/s) ${fmt(c.msgPerSec)} msg/s (fetch ${fmt(c.fetchMsgPerSec)})`}`,
          );
          if (WITH_ASSIGN) {
            const a = await consumeAssigned(target, topic, cfg);
            push(cons, `${cfgKey(cfg)}|${t}`, a);
            console.log(
              `round ${round} ${cfgKey(cfg)} ${target.label}: consume (assign) ${a.mbPerSec} MB/s ${fmt(a.msgPerSec)} msg/s`,
            );
          }
        }
      }
    }

    // ---- table ----
    const med = (k: Key, f: (p: ProducerResult) => number): number => median((prod.get(k) ?? []).map(f));
    const medC = (k: Key, f: (p: ConsumerResult) => number): number => median((cons.get(k) ?? []).map(f));
    /** Medians over the runs of ConsumerPerformance that succeeded; null when none did. */
    const medG = (k: Key, f: (p: ConsumerResult) => number): number | null => {
      const ok = (consPerf.get(k) ?? []).filter((c): c is ConsumerResult => typeof c !== 'string');
      return ok.length === 0 ? null : median(ok.map(f));
    };
    const failures = (k: Key): string[] => (consPerf.get(k) ?? []).filter((c): c is string => typeof c === 'string');
    const out: string[] = [];
    out.push('');
    out.push(
      `Producer: ProducerPerformance --throughput -1; consumer: ConsumerPerformance in a consumer group, fetch rates (after the join). Medians of ${ROUNDS} alternating round(s).`,
    );
    out.push('');
    out.push(
      '| config | broker | produce rec/s | produce MB/s | avg ms | p99 ms | consume MB/s | consume msg/s | produce thr. Skiff/Kafka | p99 Skiff/Kafka | consume thr. Skiff/Kafka |',
    );
    out.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const cfg of CONFIGS) {
      const k = cfgKey(cfg);
      const label = `acks=${cfg.acks}, ${cfg.records.toLocaleString('en-US')} x ${cfg.recordSize} B`;
      const names: TargetName[] = cfg.acks === 'all' ? ['kafka', 'skiff', 'skiff-wc'] : ['kafka', 'skiff'];
      for (const t of names) {
        const key = `${k}|${t}`;
        const kk = `${k}|kafka`;
        const isKafka = t === 'kafka';
        const mb = medG(key, (c) => c.fetchMbPerSec);
        const msg = medG(key, (c) => c.fetchMsgPerSec);
        const kafkaMsg = medG(kk, (c) => c.fetchMsgPerSec);
        const consumeCells = !consPerf.has(key)
          ? ['-', '-']
          : msg === null
            ? ['failed', 'failed']
            : [fmt(mb!, 1), fmt(msg)];
        const consumeRatio = isKafka || msg === null || kafkaMsg === null ? '' : ratio(msg, kafkaMsg);
        out.push(
          `| ${t === 'kafka' ? label : ''} | ${targets[t].label} | ${fmt(med(key, (p) => p.recordsPerSec))} | ${fmt(
            med(key, (p) => p.mbPerSec),
            2,
          )} | ${fmt(
            med(key, (p) => p.avgMs),
            1,
          )} | ${fmt(
            med(key, (p) => p.p99Ms),
            0,
          )} | ${consumeCells[0]} | ${consumeCells[1]} | ${
            isKafka
              ? ''
              : ratio(
                  med(key, (p) => p.recordsPerSec),
                  med(kk, (p) => p.recordsPerSec),
                )
          } | ${
            isKafka
              ? ''
              : ratio(
                  med(key, (p) => p.p99Ms),
                  med(kk, (p) => p.p99Ms),
                )
          } | ${consumeRatio} |`,
        );
      }
    }
    const failed = [...consPerf.keys()].filter((k) => failures(k).length > 0);
    if (failed.length > 0) {
      out.push('');
      out.push('ConsumerPerformance failures:');
      for (const k of failed) out.push(`  ${k.replace('|', ' ')}: ${failures(k).join('; ')}`);
    }
    if (WITH_ASSIGN) {
      out.push('');
      out.push('Group-less consumer (compare-consumer.java, by assignment):');
      for (const cfg of CONFIGS) {
        const k = cfgKey(cfg);
        const kafkaMsg = medC(`${k}|kafka`, (c) => c.msgPerSec);
        const skiffMsg = medC(`${k}|skiff`, (c) => c.msgPerSec);
        out.push(
          `  ${k}: Kafka ${fmt(kafkaMsg)} msg/s, Skiff ${fmt(skiffMsg)} msg/s, Skiff/Kafka ${ratio(skiffMsg, kafkaMsg)}`,
        );
      }
    }
    out.push('');
    out.push(
      `p99 ratio > 1 means Skiff is slower; throughput ratio < 1 means Skiff is slower. Total run ${Math.round((Date.now() - started) / 1000)} s.`,
    );
    console.log(out.join('\n'));
  } finally {
    await Promise.allSettled([kafka?.stop(), skiff?.stop(), skiffWc?.stop()]);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
