/**
 * What the sections of the reference harness (bench/compare.ts, compare-cluster.ts) share: one
 * produce or consume run with the chosen load generator and the broker's CPU measured around it,
 * the samples of a run's rounds and their medians as {@link Figure} rows, and the ratio table.
 */
import { figureRatio, meetsTarget, type Better, type Figure } from './figures';
import { loadgenConsume, loadgenProduce } from './loadgen';
import { consumeAssigned, median, producePerformance } from './perf-tools';
import { cpuTimeMs } from './proc-cpu';

/** Which client drives the load: bench/loadgen (franz-go) or Kafka's Java tools. */
export type LoadgenKind = 'franz' | 'java';

/** A produce or consume run's figures, whichever client ran it. */
export interface RunSample {
  recordsPerSec: number;
  mbPerSec: number;
  p50Ms?: number;
  p99Ms?: number;
  p999Ms?: number;
  /** The broker's CPU ms (all threads, its process tree) per MiB moved. */
  cpuMsPerMB: number;
}

/** Client settings given alike to every broker. */
export interface ClientSettings {
  loadgen: LoadgenKind;
  lingerMs: number;
  batchBytes: number;
}

/** MiB: the MB of ProducerPerformance's MB/sec and of the CPU-per-MB figures. */
export const MIB = 1024 * 1024;

/** Options every section gets. */
export interface SectionOptions {
  scale: number;
  rounds: number;
  warmup: number;
  smoke: boolean;
  skiffBefore?: string;
  client: ClientSettings;
}

/**
 * One produce run with the chosen client, the broker's CPU (`pids`' process trees, summed, as
 * bench/proc-cpu.ts's measureCpu) measured around it.
 */
export async function produceRun(
  bootstrap: string,
  pids: () => number[],
  topic: string,
  cfg: { acks: '1' | 'all'; records: number; recordSize: number; rate?: number },
  client: ClientSettings,
): Promise<RunSample> {
  const { result, cpuMs } = await measureCpuSum(pids(), async () => {
    if (client.loadgen === 'franz')
      return loadgenProduce(bootstrap, topic, { ...cfg, lingerMs: client.lingerMs, batchBytes: client.batchBytes });
    return producePerformance({ label: bootstrap, bootstrap }, topic, {
      ...cfg,
      producerProps: { 'linger.ms': String(client.lingerMs), 'batch.size': String(client.batchBytes) },
    });
  });
  const mb = (cfg.records * cfg.recordSize) / MIB;
  return {
    recordsPerSec: result.recordsPerSec,
    mbPerSec: result.mbPerSec,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    p999Ms: result.p999Ms,
    cpuMsPerMB: cpuMs / mb,
  };
}

/** One consume run (partition 0 from the start, by assignment) with the chosen client, CPU as {@link produceRun}. */
export async function consumeRun(
  bootstrap: string,
  pids: () => number[],
  topic: string,
  records: number,
  recordSize: number,
  client: ClientSettings,
): Promise<RunSample> {
  const { result, cpuMs } = await measureCpuSum(pids(), async () => {
    if (client.loadgen === 'franz') return loadgenConsume(bootstrap, topic, records);
    const r = await consumeAssigned({ label: bootstrap, bootstrap }, topic, records);
    return { recordsPerSec: r.msgPerSec, mbPerSec: r.mbPerSec, bytes: records * recordSize };
  });
  return { recordsPerSec: result.recordsPerSec, mbPerSec: result.mbPerSec, cpuMsPerMB: cpuMs / (result.bytes / MIB) };
}

/**
 * CPU ms of several processes' trees, summed, around `work` (a three-node Kafka is three JVMs),
 * as {@link measureCpu} does for one; throws if one of them is gone.
 */
export async function measureCpuSum<T>(pids: number[], work: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  if (pids.length === 0) throw new Error('no broker process to measure');
  const before = pids.map((p) => cpuTimeMs(p));
  const result = await work();
  const cpuMs = pids.reduce((sum, p, i) => sum + cpuTimeMs(p) - before[i]!, 0);
  return { result, cpuMs };
}

/** Medians of samples per figure key and broker/variant label; what failed, by key. */
export class SampleBook {
  private readonly byKey = new Map<string, Map<string, RunSample[]>>();
  readonly errors: string[] = [];

  add(key: string, who: string, s: RunSample): void {
    const m = this.byKey.get(key) ?? new Map<string, RunSample[]>();
    m.set(who, [...(m.get(who) ?? []), s]);
    this.byKey.set(key, m);
  }

  /** Median of `metric` over `who`'s samples of `key`; null when there are none. */
  median(key: string, who: string, metric: keyof RunSample): number | null {
    const xs = (this.byKey.get(key)?.get(who) ?? []).map((s) => s[metric]).filter((x): x is number => x !== undefined);
    return xs.length === 0 ? null : median(xs);
  }

  /** `who`'s samples of `key`, in the order added. */
  samples(key: string, who: string): readonly RunSample[] {
    return this.byKey.get(key)?.get(who) ?? [];
  }

  count(key: string, who: string): number {
    return this.byKey.get(key)?.get(who)?.length ?? 0;
  }
}

/** A figure's metric: its name in {@link Figure.metric}, the sample field, which way is better, its target. */
export interface MetricSpec {
  metric: string;
  field: keyof RunSample;
  better: Better;
  targetRatio?: number;
}

/** Figure rows of one configuration from a {@link SampleBook}: Kafka as `kafka`, Skiff as `skiff`, the rest as variants. */
export function figuresOf(
  book: SampleBook,
  section: string,
  key: string,
  config: string,
  metrics: readonly MetricSpec[],
  variants: readonly string[],
  note: string,
): Figure[] {
  return metrics.map((m) => {
    const f: Figure = {
      section,
      config,
      metric: m.metric,
      better: m.better,
      kafka: book.median(key, 'kafka', m.field),
      skiff: book.median(key, 'skiff', m.field),
      note: `${note}; samples kafka ${book.count(key, 'kafka')}, skiff ${book.count(key, 'skiff')}`,
    };
    if (variants.length > 0) f.variants = Object.fromEntries(variants.map((v) => [v, book.median(key, v, m.field)]));
    if (m.targetRatio !== undefined) f.targetRatio = m.targetRatio;
    return f;
  });
}

/** One line of a run's figures for the progress log. */
export function describeSample(s: RunSample): string {
  const lat =
    s.p99Ms !== undefined
      ? ` p50 ${s.p50Ms?.toFixed(1)} p99 ${s.p99Ms.toFixed(1)} p99.9 ${s.p999Ms?.toFixed(1)} ms`
      : '';
  return `${Math.round(s.recordsPerSec).toLocaleString('en-US')} rec/s ${s.mbPerSec.toFixed(1)} MB/s${lat} cpu ${s.cpuMsPerMB.toFixed(1)} ms/MB`;
}

// ---- the ratio table ----

function cell(x: number | null | undefined, digits = 2): string {
  if (x === null || x === undefined) return '-';
  if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString('en-US');
  return x.toFixed(digits);
}

/** The result table: one line per figure, Skiff/Kafka (and each variant/Kafka), the target and whether it is met. */
export function formatRatioTable(figures: readonly Figure[]): string[] {
  const variantNames = [...new Set(figures.flatMap((f) => Object.keys(f.variants ?? {})))];
  const header = [
    'section',
    'config',
    'metric',
    'Kafka',
    'Skiff',
    'Skiff/Kafka',
    ...variantNames.map((v) => `${v}/Kafka`),
    'target',
    'met',
  ];
  const rows = figures.map((f) => {
    const target =
      f.targetRatio !== undefined
        ? `${f.better === 'higher' ? '>=' : '<='} ${f.targetRatio}`
        : f.targetAbsolute !== undefined
          ? `${f.better === 'higher' ? '>=' : '<='} ${f.targetAbsolute} (abs)`
          : '';
    const met = meetsTarget(f);
    return [
      f.section,
      f.config,
      f.metric,
      cell(f.kafka),
      cell(f.skiff),
      cell(figureRatio(f)),
      ...variantNames.map((v) =>
        f.variants !== undefined && v in f.variants ? cell(figureRatio({ kafka: f.kafka, skiff: f.variants[v]! })) : '',
      ),
      target,
      met === null ? (target === '' ? '' : 'n/a') : met ? 'yes' : 'NO',
    ];
  });
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const numeric = (i: number): boolean => i >= 3 && i < header.length - 2;
  return all.map((r) =>
    ['|', r.map((c, i) => (numeric(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | '), '|'].join(' '),
  );
}
