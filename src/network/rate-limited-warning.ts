/**
 * A warning that logs at most one line per interval, for what a remote peer can trigger at will
 * (garbage connections, connections over max.connections): a flood of them must not flood the log
 * (83k lines in 10 s before this). Time comes from the injected {@link Clock}, never `Date.now`, so
 * the simulation and the tests drive it.
 *
 * The first warning logs at once; later ones within `intervalMs` of the last logged line are
 * counted, and the next line logged carries `suppressed`: how many were left out since the previous
 * line (their details are lost; the count says how many there were).
 */
import type { Clock } from '../io/clock';
import type { Logger } from '../io/logger';

/** The default interval between two lines of one warning (ms). */
export const WARNING_INTERVAL_MS = 1000;

export class RateLimitedWarning {
  private lastLoggedMs: number | null = null;
  private suppressed = 0;

  constructor(
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly intervalMs: number = WARNING_INTERVAL_MS,
  ) {}

  /** Logs `msg` with `fields` at warn, unless a line was logged less than the interval ago. */
  warn(fields: object, msg: string): void {
    const nowMs = this.clock.monotonicMs();
    if (this.lastLoggedMs !== null && nowMs - this.lastLoggedMs < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.lastLoggedMs = nowMs;
    const suppressed = this.suppressed;
    this.suppressed = 0;
    this.log.warn(suppressed > 0 ? { ...fields, suppressed } : fields, msg);
  }
}
