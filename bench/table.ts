/**
 * The result table of `npm run bench`: one row per task with its mean time per operation and the
 * operations per second derived from that same mean, so the two columns always agree
 * (ops/s = 1e6 / mean µs). tinybench's own `throughput.mean` is the mean of per-sample rates, which
 * is larger than 1 / mean latency whenever samples vary (Jensen's inequality), so it is not used.
 *
 * The task name is the last column and is never truncated or padded: a long label cannot push the
 * numbers out of line or be cut off by a fixed column width (console.table wraps on narrow terminals).
 */

/** One benchmark result: the task's name and its mean latency per operation in ms. */
export interface BenchRow {
  name: string;
  meanMs: number;
}

/** Operations per second of a mean latency in ms (0 when the mean is not a positive number). */
export function opsPerSecond(meanMs: number): number {
  return meanMs > 0 && Number.isFinite(meanMs) ? 1000 / meanMs : 0;
}

/**
 * Formats rows as aligned text lines (a header first): `ops/s` and `mean µs` right-aligned, then the
 * task name in full.
 */
export function formatBenchTable(rows: readonly BenchRow[]): string[] {
  const cells = rows.map((r) => {
    const ops = opsPerSecond(r.meanMs);
    return [
      ops > 0 ? Math.round(ops).toLocaleString('en-US') : '-',
      Number.isFinite(r.meanMs) ? (r.meanMs * 1000).toFixed(2) : '-',
      r.name,
    ];
  });
  const header = ['ops/s', 'mean µs', 'task'];
  const all = [header, ...cells];
  const w0 = Math.max(...all.map((c) => c[0]!.length));
  const w1 = Math.max(...all.map((c) => c[1]!.length));
  return all.map((c) => `${c[0]!.padStart(w0)}  ${c[1]!.padStart(w1)}  ${c[2]}`);
}
