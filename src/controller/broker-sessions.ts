/**
 * Broker sessions: when the controller last heard from each live broker (registration or
 * heartbeat), on the monotonic clock. A broker silent for more than broker.session.timeout.ms has
 * lost its session and is fenced. In memory only: a restarted controller starts every live broker's
 * session afresh, a grace of one session timeout (KRaft's `BrokerHeartbeatManager` does the same on
 * controller failover).
 */
export class BrokerSessions {
  private readonly lastContactMs = new Map<number, number>();

  /** Records contact with `brokerId` at monotonic time `nowMs`; starts its session if it has none. */
  touch(brokerId: number, nowMs: number): void {
    this.lastContactMs.set(brokerId, nowMs);
  }

  /** Ends `brokerId`'s session (fenced, or shut down): it can no longer expire. */
  remove(brokerId: number): void {
    this.lastContactMs.delete(brokerId);
  }

  /** Brokers whose last contact is more than `timeoutMs` before `nowMs`, by id. */
  expired(nowMs: number, timeoutMs: number): number[] {
    return [...this.lastContactMs]
      .filter(([, lastMs]) => nowMs - lastMs > timeoutMs)
      .map(([brokerId]) => brokerId)
      .sort((a, b) => a - b);
  }

  /** The first monotonic time at which some session has expired, or null when there are none. */
  nextExpiryMs(timeoutMs: number): number | null {
    let earliest: number | null = null;
    for (const lastMs of this.lastContactMs.values()) if (earliest === null || lastMs < earliest) earliest = lastMs;
    return earliest === null ? null : earliest + timeoutMs + 1;
  }
}
