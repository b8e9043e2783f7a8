/**
 * The figures every section of the reference harness (`npm run bench:compare`) reports, so one table
 * of Skiff/Kafka ratios and one JSON file can gather them (issue 13, item 1).
 *
 * A section (single node, three nodes, partitions and restarts) measures both brokers in the same
 * run, alternating, and returns {@link Figure} rows; compare.ts prints them and writes them as JSON.
 */

/** Which way is better for a figure: throughput is `higher`, latency, CPU and seconds are `lower`. */
export type Better = 'higher' | 'lower';

/** One measured quantity beside Kafka's, medians over the rounds of one run. */
export interface Figure {
  /** Section name, e.g. `single-node`, `cluster`, `partitions`. */
  section: string;
  /** What was measured and under which load, e.g. `produce acks=1 1024 B peak` or `first group join`. */
  config: string;
  /** The quantity, units last: `MBPerSec`, `recordsPerSec`, `p99Ms`, `cpuMsPerMB`, `seconds`, `rssMiB`. */
  metric: string;
  better: Better;
  /** Kafka's median (null when Kafka was not measured or failed). */
  kafka: number | null;
  /** Skiff's median (null when it failed). */
  skiff: number | null;
  /** Other Skiff variants by label (e.g. `write.caching=true`, `before` for an older build). */
  variants?: Record<string, number | null>;
  /** The target as a Skiff/Kafka ratio bound, e.g. 0.5 for CPU per MB, 1.5 for peak throughput. */
  targetRatio?: number;
  /** For figures whose target is absolute (start-up under 5 s, RSS at most 1024 MiB): the bound, in `metric` units. */
  targetAbsolute?: number;
  /** Free text: what failed, how many rounds, the load generator. */
  note?: string;
}

/** Skiff/Kafka, or null when either side is missing or Kafka's is 0. */
export function figureRatio(f: Pick<Figure, 'kafka' | 'skiff'>): number | null {
  if (f.kafka === null || f.skiff === null || f.kafka === 0) return null;
  return f.skiff / f.kafka;
}

/** Whether the figure meets its target (null when it has none or a side is missing). */
export function meetsTarget(f: Figure): boolean | null {
  if (f.targetRatio !== undefined) {
    const r = figureRatio(f);
    if (r === null) return null;
    return f.better === 'higher' ? r >= f.targetRatio : r <= f.targetRatio;
  }
  if (f.targetAbsolute !== undefined) {
    if (f.skiff === null) return null;
    return f.better === 'higher' ? f.skiff >= f.targetAbsolute : f.skiff <= f.targetAbsolute;
  }
  return null;
}
