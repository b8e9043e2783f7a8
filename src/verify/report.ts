/**
 * What a verification run reports, the same shape for the simulated cluster (`skiff verify`, the
 * property campaign) and for real clients against real brokers (`skiff verify --bootstrap`): runs,
 * faults injected by kind, invariant checks made by invariant, what each client choice cost
 * (records lost or duplicated per producer and consumer strategy), and the violations found.
 */

/**
 * The fault kinds a campaign may inject (`--faults` takes a comma list of these). The simulation
 * injects every kind; a real run only the broker-level ones it can cause from outside.
 */
export const FAULT_KINDS = [
  'broker-crash', // every actor of one broker dies at once, its unsynced bytes kept (process crash)
  'broker-stop', // a controlled shutdown of one broker, then a start
  'replica-crash', // one replica actor dies and its supervisor restarts it
  'controller-crash', // the controller actor dies and restarts from its metadata log
  'power-loss', // the whole host: every unsynced byte lost, the last writes torn at any byte
  'network-partition', // messages between two brokers (or a broker and the controller) dropped, one way or both, healed later
  'slow-follower', // a follower's fetches delayed past replica.lag.time.max.ms
  'message-drop',
  'message-duplicate',
  'message-delay',
  'message-reorder',
  'fsync-delay', // an fsync completes as a scheduled event, late
  'fsync-failure', // an fsync fails (EIO)
  'disk-full', // ENOSPC on append and on fsync
  'clock-jump', // one broker's wall clock jumps forward or back
  'process-kill', // real runs: SIGKILL of the whole broker process (or the user's kill command), then a start
] as const;

/** One kind of {@link FAULT_KINDS}. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * The invariants a checker verifies (DESIGN.md "Invariants"; issue 12 item 2). Each check made is
 * counted under its name in {@link VerifyReport.checks}.
 */
export const INVARIANTS = [
  'dense-offsets', // offsets of a log (and of what a consumer reads) are dense and increasing
  'read-below-hw', // no record read at or past the HW of the response that carried it
  'log-matching', // ISR members' logs are byte-identical below the HW
  'acks-all-durable', // an acks=all write is never lost while an ISR member lives (within the durability contract)
  'recovery-keeps-fsynced', // a replica's own recovery keeps every batch it fsynced
  'leader-epochs', // leader epochs strictly increase, at most one leader per epoch
  'idempotent-no-duplicate', // an idempotent producer's record is stored once
  'committed-offsets-durable', // an acknowledged offset commit is served back (or a later one)
  'converges', // once faults heal and every broker is up, every partition has a leader and identical replicas
] as const;

/** One of {@link INVARIANTS}. */
export type InvariantName = (typeof INVARIANTS)[number];

/**
 * Producer strategies (issue 12 item 3): what a producer with this choice saw acknowledged, and how
 * much of it the final log lost or holds twice.
 */
export const PRODUCER_STRATEGIES = [
  'acks=0',
  'acks=1',
  'acks=all',
  'acks=all idempotent',
  'acks=all write.caching', // acknowledged while the topic had write.caching=true: a power loss may take it
  'acks=all unclean-election', // on a topic with unclean.leader.election.enable=true
] as const;

/** Consumer strategies: when a consumer in a group commits relative to processing what it polled. */
export const CONSUMER_STRATEGIES = ['commit-after-processing', 'commit-before-processing', 'auto-commit-5s'] as const;

/** One of {@link PRODUCER_STRATEGIES} or {@link CONSUMER_STRATEGIES}. */
export type Strategy = (typeof PRODUCER_STRATEGIES)[number] | (typeof CONSUMER_STRATEGIES)[number];

/**
 * What one strategy cost over a campaign. Producers: `records` acknowledged, `lost` of those missing
 * from the final log (or not at their acknowledged offset), `duplicated` stored more than once.
 * Consumers: `records` that the partition held for them to process, `lost` never processed by any
 * member (skipped past by a commit), `duplicated` processed more than once.
 */
export interface StrategyCounts {
  strategy: Strategy;
  records: number;
  lost: number;
  duplicated: number;
}

/** An invariant that did not hold: which, and a one-line account naming the partition, offsets, replicas. */
export interface Violation {
  invariant: InvariantName;
  message: string;
}

/**
 * A failing run, shrunk: replay it with `skiff verify --replay <seed>:<path>`. `commands` is the
 * shrunk schedule, one line per command; `logs` each replica's log as a printed table.
 */
export interface Counterexample {
  seed: number;
  path: string;
  commands: string[];
  logs: string;
  violation: Violation;
}

/** The report of a campaign (simulated or real). Counts are totals over every run. */
export interface VerifyReport {
  mode: 'sim' | 'real';
  runs: number;
  faults: Partial<Record<FaultKind, number>>;
  checks: Partial<Record<InvariantName, number>>;
  strategies: StrategyCounts[];
  violations: Violation[];
  counterexample: Counterexample | null;
}

/**
 * The fast-check seed of run `run` (0-based) of a campaign with seed `seed`: a fixed integer mix
 * (murmur3's 32-bit finalizer over seed and run), so run `run` is the same wherever it runs. Positive
 * and below 2^31, as fast-check's seeds are printed.
 */
export function runSeed(seed: number, run: number): number {
  let h = (Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(run + 1, 0x85ebca6b)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h & 0x7fffffff || 1;
}

/**
 * Whether a strategy may lose records by design (issue 12 item 3): acks=0 and acks=1 (a leader that
 * dies before its followers fetch), acks=all on a write.caching topic (acknowledged before any fsync,
 * so a power loss may take it), unclean election (an out-of-sync replica becomes leader),
 * committing before processing and auto-commit (a commit can pass records never processed). The
 * others must lose none; a loss there is also an invariant violation.
 */
export const LOSS_EXPECTED: Readonly<Record<Strategy, boolean>> = {
  'acks=0': true,
  'acks=1': true,
  'acks=all': false,
  'acks=all idempotent': false,
  'acks=all write.caching': true,
  'acks=all unclean-election': true,
  'commit-after-processing': false,
  'commit-before-processing': true,
  'auto-commit-5s': true,
};

/** Every strategy in printing order: producers, then consumers. */
const STRATEGY_ORDER: readonly Strategy[] = [...PRODUCER_STRATEGIES, ...CONSUMER_STRATEGIES];

/** An empty report of `mode`: no runs, nothing counted. */
export function emptyReport(mode: VerifyReport['mode'] = 'sim'): VerifyReport {
  return { mode, runs: 0, faults: {}, checks: {}, strategies: [], violations: [], counterexample: null };
}

/**
 * Merges the reports of consecutive runs, given in run order, into one: runs, faults, checks and
 * strategy counts summed (strategies in {@link PRODUCER_STRATEGIES} then {@link CONSUMER_STRATEGIES}
 * order, those any report has), violations concatenated in run order, and the first counterexample.
 * An empty list merges to {@link emptyReport}. Throws when the reports' modes differ.
 */
export function mergeReports(reports: readonly VerifyReport[]): VerifyReport {
  const first = reports[0];
  const merged = emptyReport(first?.mode ?? 'sim');
  const strategies = new Map<Strategy, StrategyCounts>();
  for (const report of reports) {
    if (report.mode !== merged.mode) throw new Error(`cannot merge a ${report.mode} report into a ${merged.mode} one`);
    merged.runs += report.runs;
    addCounts(merged.faults, report.faults);
    addCounts(merged.checks, report.checks);
    for (const counts of report.strategies) {
      const total = strategies.get(counts.strategy) ?? {
        strategy: counts.strategy,
        records: 0,
        lost: 0,
        duplicated: 0,
      };
      total.records += counts.records;
      total.lost += counts.lost;
      total.duplicated += counts.duplicated;
      strategies.set(counts.strategy, total);
    }
    merged.violations.push(...report.violations);
    merged.counterexample ??= report.counterexample;
  }
  for (const strategy of STRATEGY_ORDER) {
    const counts = strategies.get(strategy);
    if (counts !== undefined) merged.strategies.push(counts);
  }
  return merged;
}

function addCounts<K extends string>(into: Partial<Record<K, number>>, from: Partial<Record<K, number>>): void {
  for (const [key, n] of Object.entries(from) as Array<[K, number | undefined]>) {
    if (n !== undefined) into[key] = (into[key] ?? 0) + n;
  }
}

/**
 * The report as printed by `skiff verify` (stdout): runs, faults injected by kind (in
 * {@link FAULT_KINDS} order), invariant checks by invariant ({@link INVARIANTS} order), the
 * per-strategy table (records, lost, duplicated, whether loss is expected: {@link LOSS_EXPECTED}),
 * the violations and the counterexample (its `--replay SEED:PATH`, shrunk commands and log table).
 * A pure function of the report, so the same seed prints the same text; ends with a newline.
 */
export function formatReport(report: VerifyReport): string {
  const lines: string[] = [`mode: ${report.mode === 'sim' ? 'simulated cluster' : 'real brokers'}`];
  lines.push(`runs: ${report.runs}`);
  lines.push(...countsSection('faults injected', FAULT_KINDS, report.faults));
  lines.push(...countsSection('invariant checks', INVARIANTS, report.checks));
  // A run that breaks an invariant stops before its final counts: its cost shows in its violation.
  lines.push(
    report.mode === 'sim' && report.counterexample !== null
      ? 'strategies (the runs before the failing one; the failing run stops before its counts):'
      : 'strategies:',
  );
  if (report.strategies.length === 0) lines.push('  (none exercised)');
  else {
    const rows: string[][] = [['strategy', 'records', 'lost', 'duplicated', 'loss expected']];
    for (const s of report.strategies) {
      const expected = LOSS_EXPECTED[s.strategy];
      const note = expected ? 'yes' : s.lost > 0 ? 'no (UNEXPECTED LOSS)' : 'no';
      rows.push([s.strategy, String(s.records), String(s.lost), String(s.duplicated), note]);
    }
    lines.push(...alignedRows(rows, [false, true, true, true, false]).map((row) => `  ${row}`));
  }
  if (report.violations.length === 0) lines.push('violations: none');
  else {
    lines.push(`violations: ${report.violations.length}`);
    for (const v of report.violations) lines.push(`  ${v.invariant}: ${v.message}`);
  }
  const cx = report.counterexample;
  if (cx === null) lines.push('counterexample: none');
  else {
    lines.push('counterexample:');
    lines.push(`  replay: ${cx.seed}:${cx.path}`);
    lines.push(`  violation: ${cx.violation.invariant}: ${cx.violation.message}`);
    lines.push(`  commands (${cx.commands.length}):`);
    cx.commands.forEach((command, i) => lines.push(`    ${i + 1}. ${command}`));
    lines.push('  logs:');
    for (const line of cx.logs.replace(/\n+$/, '').split('\n')) lines.push(`    ${line}`.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

/** `title: none`, or `title:` and one aligned `  name  count` line per key present, in `order`. */
function countsSection<K extends string>(
  title: string,
  order: readonly K[],
  counts: Partial<Record<K, number>>,
): string[] {
  const rows = order.filter((k) => counts[k] !== undefined).map((k) => [k, String(counts[k])]);
  if (rows.length === 0) return [`${title}: none`];
  const total = rows.reduce((sum, [, n]) => sum + Number(n), 0);
  return [`${title}: ${total}`, ...alignedRows(rows, [false, true]).map((row) => `  ${row}`)];
}

/** Rows as space-aligned columns (two spaces apart), numbers right-aligned where `right[i]`. */
function alignedRows(rows: readonly string[][], right: readonly boolean[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => {
        const width = widths[i] ?? cell.length;
        return right[i] === true ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd(),
  );
}
