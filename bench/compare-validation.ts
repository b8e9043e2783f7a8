/**
 * Issue 13 item 3's harness section: what validating produced records costs each broker, per codec.
 * Kafka's ProducerPerformance (--throughput -1, acks=1, `compression.type` set, the producer's
 * defaults otherwise) produces the same records to Kafka 4.4 (the test fixture) and to Skiff (a
 * broker process), alternating which goes first; each broker's own CPU time (utime + stime of its
 * process tree, bench/proc-cpu.ts) is read before and after, and divided by the MB of record bytes
 * produced (records x record size, uncompressed, 10^6 bytes). Both brokers decompress every
 * compressed batch to validate it (Kafka's LogValidator, Skiff's record-batch/validate.ts), so the
 * figure compares the validating produce paths; a first round per codec is a discarded warm-up
 * (Kafka's JIT). The lead wires {@link runValidationCompare} into bench/compare.ts; alone:
 * `node dist/bench/compare-validation.js [--records N] [--rounds N] [--sizes 1024,100]`. The machine is shared and
 * noisy: quote the ratios of one run.
 */
import { startKafka, type KafkaFixture } from '../test/helpers/kafka-fixture';
import { startBrokerProcess, type BrokerProcess } from '../test/helpers/broker-process';
import type { Figure } from './figures';
import {
  createTopic,
  initKafkaTools,
  median,
  numberArg,
  PRODUCER_PERFORMANCE,
  runJava,
  type ToolTarget,
} from './perf-tools';
import { measureCpu } from './proc-cpu';

/** Options of {@link runValidationCompare}. */
export interface ValidationCompareOptions {
  /** Records per run (default 30,000). */
  records?: number;
  /** Measured rounds after the warm-up (default 2). */
  rounds?: number;
  /** Discarded warm-up rounds per codec and size first (default 1: Kafka's JIT). */
  warmup?: number;
  /** Record sizes in bytes (default [1024, 100]; 100 B runs get 5x the records). */
  recordSizes?: number[];
  /** Codecs by compression.type name (default none, gzip, snappy, lz4, zstd). */
  codecs?: string[];
}

const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
const PRODUCER_LINE = /(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\)/g;

async function produceCompressed(
  target: ToolTarget,
  topic: string,
  codec: string,
  records: number,
  recordSize: number,
): Promise<number> {
  const r = await runJava(PRODUCER_PERFORMANCE, [
    '--topic',
    topic,
    '--num-records',
    String(records),
    '--record-size',
    String(recordSize),
    '--throughput',
    '-1',
    '--producer-props',
    `bootstrap.servers=${target.bootstrap}`,
    'acks=1',
    `compression.type=${codec}`,
  ]);
  // The summary is the last such line (ProducerPerformance prints one every 5 s while it runs).
  const m = [...r.stdout.matchAll(PRODUCER_LINE)].at(-1) ?? null;
  if (r.code !== 0 || m === null || Number(m[1]) !== records)
    throw new Error(
      `ProducerPerformance (${codec}) against ${target.label} failed:\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`,
    );
  return Number(m[3]);
}

/**
 * Runs the section and returns one `cpuMsPerMB` Figure per codec and record size (section
 * `validation`, target ratio 0.5 as the issue's CPU targets) and one `MBPerSec` Figure (the
 * producer's rate, higher is better, no target). Starts and stops its own Kafka and Skiff; a
 * failed run leaves that side null with the error in `note`.
 */
export async function runValidationCompare(options: ValidationCompareOptions = {}): Promise<Figure[]> {
  const rounds = options.rounds ?? 2;
  const warmup = options.warmup ?? 1;
  const baseRecords = options.records ?? 30_000;
  await initKafkaTools();
  let kafka: KafkaFixture | null = null;
  let skiff: BrokerProcess | null = null;
  const figures: Figure[] = [];
  try {
    [kafka, skiff] = await Promise.all([
      startKafka(),
      startBrokerProcess({ overrides: { 'offsets.topic.num.partitions': '1' } }),
    ]);
    const targets = {
      kafka: { label: 'Kafka', bootstrap: kafka.bootstrap, pid: kafka.pid },
      skiff: { label: 'Skiff', bootstrap: `127.0.0.1:${skiff.port}`, pid: skiff.proc.pid! },
    };
    for (const recordSize of options.recordSizes ?? [1024, 100]) {
      const records = recordSize < 512 ? baseRecords * 5 : baseRecords;
      const mb = (records * recordSize) / 1e6;
      for (const codec of options.codecs ?? CODECS) {
        const cpu = { kafka: [] as number[], skiff: [] as number[] };
        const rate = { kafka: [] as number[], skiff: [] as number[] };
        const errors: string[] = [];
        for (let round = 0; round < warmup + rounds; round++) {
          const order =
            (round + CODECS.indexOf(codec)) % 2 === 0 ? (['kafka', 'skiff'] as const) : (['skiff', 'kafka'] as const);
          for (const side of order) {
            const t = targets[side];
            const topic = `validation-${codec}-${recordSize}-r${round}`;
            try {
              await createTopic(t, topic);
              const { result, cpuMs } = await measureCpu(t.pid, () =>
                produceCompressed(t, topic, codec, records, recordSize),
              );
              console.log(
                `validation ${codec} ${recordSize} B round ${round}${round < warmup ? ' (warm-up)' : ''} ${t.label}: ${result} MB/s, ${(cpuMs / mb).toFixed(1)} CPU ms/MB`,
              );
              if (round < warmup) continue;
              cpu[side].push(cpuMs / mb);
              rate[side].push(result);
            } catch (error) {
              errors.push(`${t.label} round ${round}: ${String(error).slice(0, 300)}`);
              console.log(
                `validation ${codec} ${recordSize} B round ${round} ${t.label} failed: ${String(error).slice(0, 2000)}`,
              );
            }
          }
        }
        const med = (xs: number[]): number | null => (xs.length === 0 ? null : median(xs));
        const note = `ProducerPerformance acks=1 compression.type=${codec}, ${records} x ${recordSize} B, median of ${rounds} alternating round(s) after ${warmup} warm-up round(s); CPU per MB of uncompressed record bytes${errors.length ? `; failures: ${errors.join('; ')}` : ''}`;
        const config = `produce acks=1 ${recordSize} B compression=${codec}`;
        figures.push({
          section: 'validation',
          config,
          metric: 'cpuMsPerMB',
          better: 'lower',
          kafka: med(cpu.kafka),
          skiff: med(cpu.skiff),
          // Issue 13 item 3: validating (decompressing) each codec must cost less than Kafka's.
          targetRatio: 1,
          note,
        });
        figures.push({
          section: 'validation',
          config,
          metric: 'MBPerSec',
          better: 'higher',
          kafka: med(rate.kafka),
          skiff: med(rate.skiff),
          note,
        });
      }
    }
  } finally {
    await Promise.allSettled([kafka?.stop(), skiff?.stop()]);
  }
  return figures;
}

if (require.main === module) {
  const sizes = process.argv.includes('--sizes')
    ? process.argv[process.argv.indexOf('--sizes') + 1]!.split(',').map(Number)
    : undefined;
  runValidationCompare({
    records: numberArg('--records', 30_000),
    rounds: numberArg('--rounds', 2),
    recordSizes: sizes,
  })
    .then((figures) => {
      console.log('\nconfig | metric | Kafka | Skiff | Skiff/Kafka');
      for (const f of figures)
        console.log(
          `${f.config} | ${f.metric} | ${f.kafka?.toFixed(1) ?? '-'} | ${f.skiff?.toFixed(1) ?? '-'} | ${f.kafka && f.skiff ? (f.skiff / f.kafka).toFixed(2) : '-'}`,
        );
      process.exit(0);
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
}
