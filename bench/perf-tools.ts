/**
 * What the side-by-side benchmarks (compare.ts, compare-cluster.ts) share: Kafka's tool classes run
 * as JVMs with a timeout (their process groups SIGKILLed on exit), TopicCommand topic creation,
 * ProducerPerformance runs parsed into numbers, and the formatting of the result tables.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { ensureKafkaJars, repoRoot } from '../test/helpers/kafka-fixture';

/** One ProducerPerformance run's summary line (latencies in ms; the percentiles are whole ms). */
export interface ProducerResult {
  recordsPerSec: number;
  mbPerSec: number;
  avgMs: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
}

/** One consumer run's summary line (ConsumerPerformance's format): MB are MiB of key + value bytes. */
export interface ConsumerResult {
  mbPerSec: number;
  msgPerSec: number;
  /** The rates after the group join (equal to the totals for compare-consumer.java, which has no group). */
  fetchMbPerSec: number;
  fetchMsgPerSec: number;
  records: number;
}

/** A broker or cluster a tool runs against. */
export interface ToolTarget {
  label: string;
  bootstrap: string;
}

export const PRODUCER_PERFORMANCE = 'org.apache.kafka.tools.ProducerPerformance';
export const CONSUMER_PERFORMANCE = 'org.apache.kafka.tools.ConsumerPerformance';
export const TOPIC_COMMAND = 'org.apache.kafka.tools.TopicCommand';
const TOOL_TIMEOUT_MS = 180_000;

const liveTools = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of liveTools) killGroup(child);
});
// A plain SIGTERM/SIGINT would end node without 'exit' hooks and orphan the JVMs and brokers.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

let libDir = '';

/** Resolves Kafka's lib folder (fetching the jars when missing); call once before {@link runJava}. */
export async function initKafkaTools(): Promise<void> {
  libDir = await ensureKafkaJars();
}

/**
 * Runs `java <opts> -cp '<lib>/*' <main> <args>` (main: a class or a .java source file) with a
 * timeout. Tool JVMs run with the JDK's default JIT (not the C1-only flags of `kafka-fixture.sh
 * tool`, which would cap the client).
 */
export function runJava(
  main: string,
  args: readonly string[],
  timeoutMs = TOOL_TIMEOUT_MS,
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  if (libDir === '') throw new Error('initKafkaTools() first');
  const log4j = path.join(path.dirname(libDir), 'log4j2-tools.properties');
  const child = spawn(
    'java',
    ['-Xmx512m', `-Dlog4j2.configurationFile=${log4j}`, '-cp', `${libDir}/*`, main, ...args],
    {
      cwd: repoRoot(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  liveTools.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, timeoutMs);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      liveTools.delete(child);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

/** How a topic is laid out: a partition count and RF, or a TopicCommand `--replica-assignment` (e.g. `1:2:0`). */
export interface TopicLayout {
  partitions?: number;
  replicationFactor?: number;
  replicaAssignment?: string;
  configs?: Record<string, string>;
}

/** Creates `topic` with TopicCommand (default: 1 partition, RF 1); throws with the tool's output on failure. */
export async function createTopic(target: ToolTarget, topic: string, layout: TopicLayout = {}): Promise<void> {
  const shape =
    layout.replicaAssignment !== undefined
      ? ['--replica-assignment', layout.replicaAssignment]
      : ['--partitions', String(layout.partitions ?? 1), '--replication-factor', String(layout.replicationFactor ?? 1)];
  const configs = Object.entries(layout.configs ?? {}).flatMap(([k, v]) => ['--config', `${k}=${v}`]);
  const r = await runJava(
    TOPIC_COMMAND,
    ['--bootstrap-server', target.bootstrap, '--create', '--topic', topic, ...shape, ...configs],
    60_000,
  );
  if (r.code !== 0) throw new Error(`creating ${topic} on ${target.label} failed:\n${r.stdout}\n${r.stderr}`);
}

const PRODUCER_LINE =
  /(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th/;

/**
 * One ProducerPerformance run (`--throughput` `cfg.rate`, default -1: as fast as it goes; the
 * producer's defaults otherwise, with `acks` and any `producerProps`); throws unless it reports every
 * record sent.
 */
export async function producePerformance(
  target: ToolTarget,
  topic: string,
  cfg: {
    acks: '1' | 'all';
    records: number;
    recordSize: number;
    rate?: number;
    producerProps?: Record<string, string>;
  },
): Promise<ProducerResult> {
  const r = await runJava(PRODUCER_PERFORMANCE, [
    '--topic',
    topic,
    '--num-records',
    String(cfg.records),
    '--record-size',
    String(cfg.recordSize),
    '--throughput',
    String(cfg.rate !== undefined && cfg.rate > 0 ? cfg.rate : -1),
    '--producer-props',
    `bootstrap.servers=${target.bootstrap}`,
    `acks=${cfg.acks}`,
    ...Object.entries(cfg.producerProps ?? {}).map(([k, v]) => `${k}=${v}`),
  ]);
  const m = PRODUCER_LINE.exec(r.stdout);
  if (r.code !== 0 || m === null || Number(m[1]) !== cfg.records) {
    throw new Error(
      `ProducerPerformance against ${target.label} failed (code ${r.code}${r.timedOut ? ', timed out' : ''}):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`,
    );
  }
  return {
    recordsPerSec: Number(m[2]),
    mbPerSec: Number(m[3]),
    avgMs: Number(m[4]),
    p50Ms: Number(m[6]),
    p99Ms: Number(m[8]),
    p999Ms: Number(m[9]),
  };
}

/** ConsumerPerformance's (and compare-consumer.java's) summary line after its header, or null. */
export function parseConsumerLine(stdout: string): ConsumerResult | null {
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

/**
 * bench/compare-consumer.java: the Java consumer reading partition 0 of `topic` by assignment (no
 * group) with ConsumerPerformance's settings; throws unless it read `records`.
 */
export async function consumeAssigned(target: ToolTarget, topic: string, records: number): Promise<ConsumerResult> {
  const source = path.join(repoRoot(), 'bench', 'compare-consumer.java');
  const r = await runJava(source, [target.bootstrap, topic, String(records), '10000']);
  const parsed = parseConsumerLine(r.stdout);
  if (r.code !== 0 || parsed === null || parsed.records !== records) {
    throw new Error(
      `compare-consumer against ${target.label} failed (code ${r.code}):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`,
    );
  }
  return parsed;
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
export const fmt = (n: number, digits = 1): string =>
  n >= 1000 ? Math.round(n).toLocaleString('en-US') : n.toFixed(digits);
export const ratio = (a: number, b: number): string => (b === 0 ? 'n/a' : `${(a / b).toFixed(2)}x`);

/** A positive number flag (`--name N`), or `fallback`. */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} needs a positive number`);
  return v;
}
