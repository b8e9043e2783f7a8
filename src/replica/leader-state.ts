/**
 * What a leader replica knows of its followers (Kafka's Replica state in Partition.scala, and the
 * ISR rules of Partition.maybeExpandIsr / getOutOfSyncReplicas / maybeIncrementLeaderHW): each
 * follower's LEO and fsynced offset from its fetches, its last caught-up time, and the ISR change in
 * flight. Pure bookkeeping over numbers: the replica actor owns the one instance of its current
 * leader epoch (a new one per become-leader) and does the messaging.
 */
import assert from 'node:assert/strict';

/** One follower as its leader sees it (Kafka's ReplicaState). -1: not known yet (it has not fetched in this epoch). */
export interface FollowerReplicaState {
  brokerId: number;
  brokerEpoch: number;
  /** The follower's LEO: the offset of its last fetch. */
  logEndOffset: number;
  /** Every offset below this is fsynced on the follower (what it counts with write.caching=false). */
  fsyncedOffset: number;
  /**
   * The last time the follower was caught up: a fetch at which its LEO reached the leader's LEO, or
   * reached the leader's LEO as of its previous fetch (then the time of that previous fetch).
   */
  lastCaughtUpTimeMs: number;
  /** The leader's LEO and the time at the follower's previous fetch. */
  lastFetchLeaderLogEndOffset: number;
  lastFetchTimeMs: number;
}

/** The leader side of one leader epoch. */
export class LeaderState {
  readonly followers = new Map<number, FollowerReplicaState>();
  /** An AlterPartition is in flight (one at a time), proposing this ISR; null when none is. */
  pendingIsr: number[] | null = null;

  /**
   * @param selfId this replica's broker id
   * @param leaderEpochStartOffset the LEO when it became leader: the first offset of its epoch
   *   (a follower rejoins the ISR only once it has fetched past it)
   */
  constructor(
    private readonly selfId: number,
    readonly leaderEpoch: number,
    readonly leaderEpochStartOffset: number,
  ) {}

  /**
   * The assigned replicas or the ISR changed (or the leader is new): followers that joined get a
   * fresh state, those that left are forgotten. An ISR member starts as caught up now (Kafka's
   * resetReplicaState for a new leader), so it has replica.lag.time.max.ms to fetch.
   */
  resetFor(replicas: readonly number[], isr: readonly number[], nowMs: number): void {
    for (const id of [...this.followers.keys()]) if (!replicas.includes(id)) this.followers.delete(id);
    for (const id of replicas) {
      if (id === this.selfId || this.followers.has(id)) continue;
      this.followers.set(id, {
        brokerId: id,
        brokerEpoch: -1,
        logEndOffset: -1,
        fsyncedOffset: -1,
        lastCaughtUpTimeMs: isr.includes(id) ? nowMs : 0,
        lastFetchLeaderLogEndOffset: -1,
        lastFetchTimeMs: 0,
      });
    }
  }

  /**
   * A fetch from `brokerId` at `fetchOffset` (its LEO) when the leader's LEO is `leaderLogEndOffset`
   * (Kafka's Replica.updateFetchStateOrThrow). Returns false for a broker that is not an assigned
   * follower.
   */
  updateFetchState(
    brokerId: number,
    brokerEpoch: number,
    fetchOffset: number,
    fsyncedOffset: number,
    leaderLogEndOffset: number,
    nowMs: number,
  ): boolean {
    const state = this.followers.get(brokerId);
    if (state === undefined) return false;
    assert.ok(
      fetchOffset <= leaderLogEndOffset,
      `follower ${brokerId} LEO ${fetchOffset} past the leader's ${leaderLogEndOffset}`,
    );
    if (fetchOffset >= leaderLogEndOffset) state.lastCaughtUpTimeMs = Math.max(state.lastCaughtUpTimeMs, nowMs);
    else if (fetchOffset >= state.lastFetchLeaderLogEndOffset)
      state.lastCaughtUpTimeMs = Math.max(state.lastCaughtUpTimeMs, state.lastFetchTimeMs);
    state.brokerEpoch = brokerEpoch;
    state.logEndOffset = fetchOffset;
    state.fsyncedOffset = Math.min(fsyncedOffset, fetchOffset);
    state.lastFetchLeaderLogEndOffset = leaderLogEndOffset;
    state.lastFetchTimeMs = nowMs;
    return true;
  }

  /** `replica.follower-flushed`: the follower's fsync reached `fsyncedOffset`. False when nothing moved. */
  updateFsynced(brokerId: number, fsyncedOffset: number): boolean {
    const state = this.followers.get(brokerId);
    if (state === undefined || state.logEndOffset < 0) return false;
    const next = Math.min(fsyncedOffset, state.logEndOffset);
    if (next <= state.fsyncedOffset) return false;
    state.fsyncedOffset = next;
    return true;
  }

  /** Kafka's maximalIsr: while an AlterPartition is in flight, the larger of the two sets (shrink: the current one). */
  maximalIsr(isr: readonly number[]): number[] {
    if (this.pendingIsr === null) return [...isr];
    return [...new Set([...isr, ...this.pendingIsr])];
  }

  /** What follower `brokerId` counts toward the HW: its fsynced offset, or its LEO with write.caching; -1 when unknown. */
  countedOffset(brokerId: number, writeCaching: boolean): number {
    const state = this.followers.get(brokerId);
    if (state === undefined) return -1;
    return writeCaching ? state.logEndOffset : state.fsyncedOffset;
  }

  /** Kafka's getOutOfSyncReplicas: ISR followers neither at the leader's LEO nor caught up within `lagMaxMs`. */
  outOfSync(isr: readonly number[], leaderLogEndOffset: number, nowMs: number, lagMaxMs: number): number[] {
    return isr.filter((id) => {
      if (id === this.selfId) return false;
      const state = this.followers.get(id);
      if (state === undefined) return true;
      return !(state.logEndOffset === leaderLogEndOffset || nowMs - state.lastCaughtUpTimeMs <= lagMaxMs);
    });
  }

  /**
   * Kafka's isFollowerInSync for an ISR expansion: an assigned follower outside the maximal ISR whose
   * LEO reached the HW and the start of this leader epoch.
   */
  mayJoinIsr(brokerId: number, isr: readonly number[], highWatermark: number): boolean {
    const state = this.followers.get(brokerId);
    if (state === undefined || this.maximalIsr(isr).includes(brokerId)) return false;
    return state.logEndOffset >= highWatermark && state.logEndOffset >= this.leaderEpochStartOffset;
  }
}
