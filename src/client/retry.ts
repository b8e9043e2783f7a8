/**
 * When and how long the client waits before trying again, as Kafka's clients do after a broker
 * crash or a leadership move: an error is retriable when a metadata refresh and a later try may
 * succeed (a lost connection, NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, FENCED/UNKNOWN_LEADER_EPOCH,
 * a coordinator that moved or is loading, REQUEST_TIMED_OUT, ...), and the wait between tries grows
 * from `retry.backoff.ms` (100) to `retry.backoff.max.ms` (1000), doubling with ±20 % jitter
 * (KIP-580, Kafka's ExponentialBackoff).
 */
import { ErrorCode } from '../protocol/error-codes';
import { ConnectionError, KafkaError } from './errors';

/** retry.backoff.ms: the first wait (Kafka's default). */
export const RETRY_BACKOFF_MS = 100;
/** retry.backoff.max.ms: the longest wait (Kafka's default). */
export const RETRY_BACKOFF_MAX_MS = 1000;

/** Codes after which a group request must find its coordinator again. */
export const COORDINATOR_ERROR_CODES: ReadonlySet<number> = new Set<number>([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);

/** Broker codes worth a metadata refresh and another try (KafkaError.retriable's, and the broker ones). */
const RETRIABLE_CODES: ReadonlySet<number> = new Set<number>([
  ErrorCode.BROKER_NOT_AVAILABLE,
  ErrorCode.NETWORK_EXCEPTION,
  ...COORDINATOR_ERROR_CODES,
]);

/**
 * Whether `err` may go away after a metadata refresh and a wait: a {@link ConnectionError} (the
 * broker crashed, refused the connection or timed out) or a {@link KafkaError} with a retriable code.
 */
export function isRetriable(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  return err instanceof KafkaError && (err.retriable || RETRIABLE_CODES.has(err.code));
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The waits of one outage: `next()` gives 100, 200, 400, 800, 1000, 1000, ... ms (±20 %); `reset()`
 * after a success starts over. `random` is injectable for tests.
 */
export class Backoff {
  private attempts = 0;

  constructor(
    private readonly initialMs = RETRY_BACKOFF_MS,
    private readonly maxMs = RETRY_BACKOFF_MAX_MS,
    private readonly random: () => number = Math.random,
  ) {}

  /** The tries failed since the last reset. */
  get failures(): number {
    return this.attempts;
  }

  /** The wait before the next try, in ms. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempts, 30));
    this.attempts++;
    return Math.round(base * (0.8 + 0.4 * this.random()));
  }

  /** Waits {@link next} ms. */
  wait(): Promise<void> {
    return sleep(this.next());
  }

  reset(): void {
    this.attempts = 0;
  }
}
