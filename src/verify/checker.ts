/**
 * The invariant checker of a verification run: every check made is counted under its invariant
 * (report.ts `INVARIANTS`), and the first that fails throws an {@link InvariantViolation}, which fails
 * the fast-check property (and so starts shrinking). The checks themselves live beside the state they
 * read (the model's ledger, the cluster's logs); this holds the counting and the failing.
 */
import type { InvariantName, Violation } from './report';

/** Thrown by {@link Checker.check} when an invariant does not hold. */
export class InvariantViolation extends Error {
  constructor(readonly violation: Violation) {
    super(`${violation.invariant}: ${violation.message}`);
    this.name = 'InvariantViolation';
  }
}

/** Counts checks by invariant and throws on the first that fails. */
export class Checker {
  readonly checks: Partial<Record<InvariantName, number>> = {};

  /**
   * One check of `invariant`: counted, and when `holds` is false an {@link InvariantViolation} with
   * `message()` (built only then) is thrown.
   */
  check(invariant: InvariantName, holds: boolean, message: () => string): void {
    this.checks[invariant] = (this.checks[invariant] ?? 0) + 1;
    if (!holds) throw new InvariantViolation({ invariant, message: message() });
  }

  /**
   * Runs `body`, a check written with node:assert (the cluster harness's log-matching and epoch
   * checks), counted once under `invariant`; an assertion failure becomes an {@link InvariantViolation}.
   */
  async checkAssertion<T>(invariant: InvariantName, body: () => Promise<T>): Promise<T> {
    this.checks[invariant] = (this.checks[invariant] ?? 0) + 1;
    try {
      return await body();
    } catch (error) {
      if ((error as Error).name === 'AssertionError')
        throw new InvariantViolation({ invariant, message: (error as Error).message.split('\n')[0]! });
      throw error;
    }
  }
}
