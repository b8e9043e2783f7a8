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
