/**
 * The reference harness of issue 13 (item 1): Apache Kafka 4.4 beside Skiff on this host, measured
 * the same way every time, ending in one table of Skiff/Kafka ratios (medians) against the issue's
 * targets, printed and written as JSON.
 *
 *   npm run bench:compare                                   # build, then node dist/bench/compare.js
 *   node dist/bench/compare.js --smoke                      # every section, tiny (CI: test/bench/)
 *   node dist/bench/compare.js --skiff-before /work/before  # also an older build, as `before`
 *   node dist/bench/compare.js --only single-node --rounds 5 --json out.json
 *
 * Options: `--rounds N` (alternating measured rounds, default 3), `--warmup N` (discarded rounds
 * first, default 1), `--scale X` (multiplies record counts, default 1), `--loadgen franz|java`
 * (default franz: bench/loadgen, franz-go; java: Kafka's ProducerPerformance and the assign-based
 * bench/compare-consumer.java), `--linger-ms N` / `--batch-bytes N` (the load generator's producer
 * settings, the same for every broker), `--skiff-before <repo root>` (an older built Skiff, started
 * as `node <root>/bin/skiff.js start` with the same flags: the `before` variant of each figure),
 * `--only <section>` / `--no-cluster` / `--no-validation` / `--no-partitions` (sections:
 * single-node, validation, cluster, partitions), `--json <file>` (default bench-results/compare-<timestamp>.json), `--smoke`
 * (every section briefly: tiny counts, no warm-up, one round).
 *
 * Sections run one after the other, each starting and stopping its own brokers, and return
 * {@link Figure} rows (bench/figures.ts): single-node (below), validation (compare-validation.ts:
 * broker CPU per MB producing each codec, which both brokers decompress to validate), cluster (compare-cluster.ts: RF=3
 * acks=all against the three-node Kafka) and partitions (compare-partitions.ts: 1000 partitions,
 * start-up, first group join). A section that fails is reported as failed; the others still run.
 *
 * Single-node section, one partition RF=1 on each broker: Kafka (test/helpers/kafka-fixture.ts),
 * Skiff with its defaults (acks=all answers after fsync: write.caching=false), the same Skiff broker
 * with topics of `write.caching=true` (page cache, as Kafka) for acks=all, and the older build when
 * given. Per round, each configuration runs on every broker on a fresh topic, Kafka first on one
 * step and Skiff first on the next (and the other way round the next round):
 *   - peak produce, acks=1 and acks=all, 100 B and 1 KiB: records/s, MB/s, p50/p99/p99.9 latency;
 *   - consume 100 B and 1 KiB: the topics the acks=1 runs wrote, read from the start by assignment;
 *   - fixed rate, 20,000 records/s of 1 KiB, acks=1 and acks=all: latency at equal load;
 * and for each, the broker's own CPU time per MB moved (utime + stime of its process tree from /proc
 * around the run: bench/proc-cpu.ts), so the client's cost is not counted.
 *
 * The machine is shared and noisy: quote the ratios of one run, never lone numbers.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot, startKafka, type KafkaFixture } from '../test/helpers/kafka-fixture';
import { startBrokerProcess, type BrokerProcess } from '../test/helpers/broker-process';
import { runClusterCompare } from './compare-cluster';
import { runPartitionsCompare } from './compare-partitions';
import { runValidationCompare } from './compare-validation';
import { meetsTarget, type Figure } from './figures';
import {
  consumeRun,
  describeSample,
  figuresOf,
  formatRatioTable,
  produceRun,
  SampleBook,
  type MetricSpec,
  type RunSample,
  type SectionOptions,
} from './harness';
import { ensureLoadgen, loadgenCreate } from './loadgen';
import { initKafkaTools } from './perf-tools';

const SECTIONS = ['single-node', 'validation', 'cluster', 'partitions'] as const;
type SectionName = (typeof SECTIONS)[number];

/**
 * The group settings scripts/kafka-fixture.sh gives Kafka, given to Skiff too (the fixture's
 * group.initial.rebalance.delay.ms is 0 and its offsets topic has one partition).
 */
const SKIFF_AS_FIXTURE = { 'group.initial.rebalance.delay.ms': '0', 'offsets.topic.num.partitions': '1' };
const WRITE_CACHING = 'write.caching=true';
const FIXED_RATE = 20_000;

// ---- the single-node section ----

interface Broker {
  /** `kafka`, `skiff` or `before`. */
  who: string;
  bootstrap: string;
  pid(): number;
}

/** One configuration of the single-node section. */
interface Step {
  key: string;
  config: string;
  kind: 'produce' | 'consume';
  acks: '1' | 'all';
  recordSize: number;
  records: number;
  /** Records per second (fixed-rate runs); undefined: peak. */
  rate?: number;
  /** For consume: the produce step whose topic it reads. */
  source?: string;
  /** Run also on Skiff with topics of write.caching=true (acks=all). */
  writeCachingVariant: boolean;
  metrics: MetricSpec[];
}

const LATENCY: MetricSpec[] = [
  { metric: 'p50Ms', field: 'p50Ms', better: 'lower' },
  { metric: 'p99Ms', field: 'p99Ms', better: 'lower' },
  { metric: 'p999Ms', field: 'p999Ms', better: 'lower' },
];
const CPU_TARGET: MetricSpec = { metric: 'cpuMsPerMB', field: 'cpuMsPerMB', better: 'lower', targetRatio: 0.5 };

function singleNodeSteps(scale: number): Step[] {
  const n = (x: number): number => Math.max(100, Math.round(x * scale));
  const steps: Step[] = [];
  for (const recordSize of [100, 1024]) {
    for (const acks of ['1', 'all'] as const) {
      steps.push({
        key: `produce-${acks}-${recordSize}`,
        config: `produce acks=${acks} ${recordSize} B peak`,
        kind: 'produce',
        acks,
        recordSize,
        records: n(recordSize === 100 ? 1_000_000 : 250_000),
        writeCachingVariant: acks === 'all',
        metrics: [
          { metric: 'recordsPerSec', field: 'recordsPerSec', better: 'higher', targetRatio: 1.5 },
          { metric: 'MBPerSec', field: 'mbPerSec', better: 'higher' },
          ...LATENCY,
          CPU_TARGET,
        ],
      });
    }
  }
  for (const recordSize of [100, 1024]) {
    const source = steps.find((s) => s.key === `produce-1-${recordSize}`)!;
    steps.push({
      key: `consume-${recordSize}`,
      config: `consume ${recordSize} B`,
      kind: 'consume',
      acks: '1',
      recordSize,
      records: source.records,
      source: source.key,
      writeCachingVariant: false,
      metrics: [
        { metric: 'recordsPerSec', field: 'recordsPerSec', better: 'higher', targetRatio: 1.5 },
        { metric: 'MBPerSec', field: 'mbPerSec', better: 'higher' },
        CPU_TARGET,
      ],
    });
  }
  for (const acks of ['1', 'all'] as const) {
    steps.push({
      key: `fixed-${acks}-1024`,
      config: `produce acks=${acks} 1024 B ${FIXED_RATE} rec/s`,
      kind: 'produce',
      acks,
      recordSize: 1024,
      records: n(FIXED_RATE * 10),
      rate: FIXED_RATE,
      writeCachingVariant: acks === 'all',
      metrics: [
        { metric: 'recordsPerSec', field: 'recordsPerSec', better: 'higher' },
        { metric: 'p50Ms', field: 'p50Ms', better: 'lower' },
        // acks=all is compared with Skiff's default, write.caching=false (Skiff fsyncs, Kafka does not).
        { metric: 'p99Ms', field: 'p99Ms', better: 'lower', targetRatio: acks === '1' ? 0.5 : 1.0 },
        { metric: 'p999Ms', field: 'p999Ms', better: 'lower' },
        { metric: 'cpuMsPerMB', field: 'cpuMsPerMB', better: 'lower' },
      ],
    });
  }
  return steps;
}

/** The single-node section (module comment); returns its figures (section `single-node`). */
export async function runSingleNodeCompare(opts: SectionOptions): Promise<Figure[]> {
  const section = 'single-node';
  const started = Date.now();
  const steps = singleNodeSteps(opts.scale);
  console.log(
    `\nbench/compare single-node: ${opts.warmup} warm-up + ${opts.rounds} round(s), load generator ${opts.client.loadgen}; ${steps.map((s) => `${s.config} x ${s.records}`).join('; ')}`,
  );
  let kafka: KafkaFixture | null = null;
  let skiff: BrokerProcess | null = null;
  let before: BrokerProcess | null = null;
  try {
    const started3 = await Promise.allSettled([
      startKafka(),
      startBrokerProcess({ overrides: SKIFF_AS_FIXTURE }),
      opts.skiffBefore !== undefined
        ? startBrokerProcess({ overrides: SKIFF_AS_FIXTURE, root: path.resolve(opts.skiffBefore) })
        : Promise.resolve(null),
    ]);
    if (started3[0].status === 'fulfilled') kafka = started3[0].value;
    if (started3[1].status === 'fulfilled') skiff = started3[1].value;
    if (started3[2].status === 'fulfilled') before = started3[2].value;
    for (const s of started3) if (s.status === 'rejected') throw s.reason;
    const k = kafka!;
    const s = skiff!;
    const brokers: Broker[] = [
      { who: 'kafka', bootstrap: k.bootstrap, pid: () => k.pid },
      { who: 'skiff', bootstrap: `127.0.0.1:${s.port}`, pid: () => s.proc.pid! },
    ];
    const b = before;
    if (b !== null) brokers.push({ who: 'before', bootstrap: `127.0.0.1:${b.port}`, pid: () => b.proc.pid! });
    console.log(brokers.map((x) => `${x.who} at ${x.bootstrap} (pid ${x.pid()})`).join(', '));

    const book = new SampleBook();
    for (let round = 1 - opts.warmup; round <= opts.rounds; round++) {
      const tag = round <= 0 ? `warm-up ${round + opts.warmup}` : `round ${round}`;
      for (const [si, step] of steps.entries()) {
        // Kafka first on one step, Skiff first on the next; the other way round the next round.
        const kafkaFirst = (round + si) % 2 === 0;
        const skiffSide = brokers.filter((x) => x.who !== 'kafka');
        const order = kafkaFirst ? [brokers[0]!, ...skiffSide] : [...skiffSide, brokers[0]!];
        const runs: Array<{ broker: Broker; who: string; configs: Record<string, string> }> = [];
        for (const broker of order) {
          runs.push({ broker, who: broker.who, configs: {} });
          if (broker.who === 'skiff' && step.writeCachingVariant)
            runs.push({ broker, who: WRITE_CACHING, configs: { 'write.caching': 'true' } });
        }
        for (const r of runs) {
          const topic = `cmp-r${round + opts.warmup}-${step.key}-${r.who.replace(/[^a-z0-9]+/g, '_')}`;
          try {
            let sample: RunSample;
            if (step.kind === 'produce') {
              await loadgenCreate(r.broker.bootstrap, topic, { configs: r.configs });
              sample = await produceRun(r.broker.bootstrap, () => [r.broker.pid()], topic, step, opts.client);
            } else {
              const sourceTopic = `cmp-r${round + opts.warmup}-${step.source!}-${r.who}`;
              sample = await consumeRun(
                r.broker.bootstrap,
                () => [r.broker.pid()],
                sourceTopic,
                step.records,
                step.recordSize,
                opts.client,
              );
            }
            if (round > 0) book.add(step.key, r.who, sample);
            console.log(`${tag} ${step.config} ${r.who}: ${describeSample(sample)}`);
          } catch (err) {
            const msg = `${tag} ${step.config} ${r.who}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
            console.log(`FAILED ${msg}`);
            if (round > 0) book.errors.push(msg.slice(0, 300));
          }
        }
      }
    }
    const variants = [WRITE_CACHING, ...(before !== null ? ['before'] : [])];
    const note = `${opts.rounds} alternating round(s) after ${opts.warmup} warm-up, load generator ${opts.client.loadgen}`;
    const figures = steps.flatMap((step) =>
      figuresOf(
        book,
        section,
        step.key,
        step.config,
        step.metrics,
        variants.filter((v) => v !== WRITE_CACHING || step.writeCachingVariant),
        note,
      ),
    );
    if (book.errors.length > 0) for (const f of figures) f.note = `${f.note}; failures: ${book.errors.length}`;
    console.log(`single-node section: ${Math.round((Date.now() - started) / 1000)} s`);
    if (book.errors.length > 0) console.log(`failed runs:\n  ${book.errors.join('\n  ')}`);
    return figures;
  } finally {
    await Promise.allSettled([kafka?.stop(), skiff?.stop(), before?.stop()]);
  }
}

// ---- main ----

interface CliOptions extends SectionOptions {
  sections: SectionName[];
  json: string;
}

/** A bad command line: printed as one line with a pointer to --help, exit 2 (no stack trace). */
class UsageError extends Error {}

const USAGE = `Usage: node dist/bench/compare.js [options]   (npm run bench:compare -- [options])

Apache Kafka 4.4 beside Skiff on this host, ending in a table of Skiff/Kafka ratios against issue 13's
targets (printed, and written as JSON). The machine must be quiet. README: "Side by side with Apache Kafka".

  --rounds N            alternating measured rounds (default 3; smoke 1)
  --warmup N            discarded warm-up rounds first (default 1; smoke 0)
  --scale X             multiplies every record count (default 1)
  --loadgen franz|java  load generator: bench/loadgen (franz-go, default) or Kafka's perf tools
  --linger-ms N         producer linger, the same for every broker (default 0)
  --batch-bytes N       producer batch size (default 1048576)
  --skiff-before ROOT   also an older built Skiff checkout, reported as the "before" variant
  --only SECTION        one of ${SECTIONS.join(', ')}
  --no-cluster, --no-validation, --no-partitions   skip that section
  --json FILE           where the figures go (default bench-results/compare-<timestamp>.json)
  --smoke               every section briefly, to check the harness works (not for figures)
  --help                print this and exit`;

function parseCli(argv: string[]): CliOptions {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    process.exit(0);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        smoke: { type: 'boolean', default: false },
        scale: { type: 'string' },
        rounds: { type: 'string' },
        warmup: { type: 'string' },
        loadgen: { type: 'string', default: 'franz' },
        'linger-ms': { type: 'string', default: '0' },
        'batch-bytes': { type: 'string', default: String(1 << 20) },
        'skiff-before': { type: 'string' },
        only: { type: 'string' },
        'no-cluster': { type: 'boolean', default: false },
        'no-partitions': { type: 'boolean', default: false },
        'no-validation': { type: 'boolean', default: false },
        'cluster-only': { type: 'boolean', default: false },
        json: { type: 'string' },
      },
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values } = parsed;
  const num = (name: string, v: string | undefined, fallback: number, min = 0): number => {
    if (v === undefined) return fallback;
    const x = Number(v);
    if (!Number.isFinite(x) || x < min)
      throw new UsageError(`--${name} needs a number >= ${min}, got ${JSON.stringify(v)}`);
    return x;
  };
  const smoke = values.smoke === true;
  const loadgen = values.loadgen;
  if (loadgen !== 'franz' && loadgen !== 'java') throw new UsageError('--loadgen is franz or java');
  let sections: SectionName[] = [...SECTIONS];
  const only = values['cluster-only'] === true ? 'cluster' : values.only;
  if (only !== undefined) {
    if (!(SECTIONS as readonly string[]).includes(only))
      throw new UsageError(`--only ${only}: not a section; one of ${SECTIONS.join(', ')}`);
    sections = [only as SectionName];
  }
  if (values['no-cluster'] === true) sections = sections.filter((s) => s !== 'cluster');
  if (values['no-partitions'] === true) sections = sections.filter((s) => s !== 'partitions');
  if (values['no-validation'] === true) sections = sections.filter((s) => s !== 'validation');
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    smoke,
    scale: num('scale', values.scale, smoke ? 0.002 : 1, Number.MIN_VALUE),
    rounds: Math.round(num('rounds', values.rounds, smoke ? 1 : 3, 1)),
    warmup: Math.round(num('warmup', values.warmup, smoke ? 0 : 1)),
    skiffBefore: values['skiff-before'],
    client: {
      loadgen,
      lingerMs: num('linger-ms', values['linger-ms'], 0),
      batchBytes: Math.round(num('batch-bytes', values['batch-bytes'], 1 << 20, 1)),
    },
    sections,
    json: values.json ?? path.join(repoRoot(), 'bench-results', `compare-${stamp}.json`),
  };
}

async function main(): Promise<void> {
  const opts = parseCli(process.argv.slice(2));
  const started = Date.now();
  if (opts.skiffBefore !== undefined && !fs.existsSync(path.join(opts.skiffBefore, 'bin', 'skiff.js')))
    throw new UsageError(`--skiff-before ${opts.skiffBefore}: no bin/skiff.js there`);
  await initKafkaTools();
  await ensureLoadgen();
  console.log(
    `bench/compare: sections ${opts.sections.join(', ')}; scale ${opts.scale}, ${opts.warmup} warm-up + ${opts.rounds} round(s)${opts.smoke ? ' (smoke)' : ''}; the machine should be quiet (load average now ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
  );
  const figures: Figure[] = [];
  const failed: Array<{ section: SectionName; error: string }> = [];
  const seconds: Partial<Record<SectionName, number>> = {};
  for (const section of opts.sections) {
    const t0 = Date.now();
    try {
      if (section === 'single-node') figures.push(...(await runSingleNodeCompare(opts)));
      if (section === 'validation')
        figures.push(
          ...(await runValidationCompare({
            records: Math.max(1000, Math.round(30_000 * opts.scale)),
            rounds: opts.rounds,
            warmup: opts.warmup,
            ...(opts.smoke ? { recordSizes: [1024] } : {}),
          })),
        );
      if (section === 'cluster') figures.push(...(await runClusterCompare(opts)));
      if (section === 'partitions')
        figures.push(
          ...(await runPartitionsCompare({
            scale: opts.scale,
            rounds: opts.rounds,
            skiffBefore: opts.skiffBefore,
            smoke: opts.smoke,
          })),
        );
    } catch (err) {
      const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
      failed.push({ section, error: error.slice(0, 4000) });
      console.log(`section ${section} FAILED: ${error.split('\n')[0]}`);
    }
    seconds[section] = Math.round((Date.now() - t0) / 1000);
  }
  const totalSeconds = Math.round((Date.now() - started) / 1000);
  const out: string[] = [''];
  out.push(
    `Skiff/Kafka, medians of ${opts.rounds} alternating round(s) after ${opts.warmup} warm-up; load generator ${opts.client.loadgen} (linger ${opts.client.lingerMs} ms, batch ${opts.client.batchBytes} B); CPU = the broker's utime+stime per MiB moved. Throughput: higher is better; latency and CPU: lower.`,
  );
  out.push('');
  out.push(...formatRatioTable(figures));
  for (const f of failed) out.push(`section ${f.section} FAILED: ${f.error.split('\n')[0]}`);
  const withTarget = figures.filter((f) => meetsTarget(f) !== null);
  out.push('');
  out.push(
    `Targets met: ${withTarget.filter((f) => meetsTarget(f) === true).length} of ${withTarget.length}. Total run ${totalSeconds} s (${Object.entries(
      seconds,
    )
      .map(([k, v]) => `${k} ${v} s`)
      .join(', ')}).`,
  );
  if (opts.smoke)
    out.push(
      'Smoke run: tiny counts and no warm-up, so these figures and verdicts only show that the harness works, not how Skiff compares.',
    );
  console.log(out.join('\n'));
  fs.mkdirSync(path.dirname(opts.json), { recursive: true });
  fs.writeFileSync(
    opts.json,
    `${JSON.stringify(
      {
        startedAt: new Date(started).toISOString(),
        totalSeconds,
        sectionSeconds: seconds,
        options: { ...opts, json: undefined },
        loadAverageAtEnd: fs.readFileSync('/proc/loadavg', 'utf8').trim(),
        figures,
        failedSections: failed,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`JSON: ${opts.json}`);
  if (failed.length > 0) process.exitCode = 1;
}

if (require.main === module) {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (err: unknown) => {
      if (err instanceof UsageError) {
        console.error(`bench/compare: ${err.message} (see --help)`);
        process.exit(2);
      }
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}
