/**
 * A follower's fetch loop (the per-partition counterpart of Kafka's ReplicaFetcherThread /
 * AbstractFetcherThread.processFetchRequest): one `replica.fetch` at a time to the leader's replica
 * actor, actor to actor, carrying the follower's LEO as the fetch offset, its last fetched epoch and
 * fsynced offset (messages.ts FollowerFetchState). The replica handles each reply
 * ({@link FollowerFetcherHost.onFetchReply}) and says when the next fetch goes:
 * - `now`: at once (nothing appended, or truncated; the leader parks an empty fetch up to maxWaitMs);
 * - `after-flush`: once the group commit covering what was appended completes (write.caching=false,
 *   so the fetch reports the fsynced offset that lets the leader's HW move);
 * - `back-off`: after replica.fetch.backoff.ms (an error, an unreachable leader);
 * - `stop`: not again until {@link FollowerFetcher.resume} (the log refuses writes).
 * A fsync that completes while a fetch is parked at the leader is reported by `replica.follower-flushed`.
 *
 * A new role stops the loop ({@link FollowerFetcher.stop}): replies to fetches of an older
 * generation are dropped, so a follower never applies a reply from a leader of an older epoch.
 *
 * State written only by the replica actor's turns (its messages, its timers, the continuations of
 * its own requests).
 */
import type { ActorContext, ActorRef } from '../runtime/actor';
import type { TimerHandle } from '../io/clock';
import type { FetchReply, ReplicaMessages } from './messages';

/** Kafka's replica.socket.timeout.ms default: how long a fetch may go unanswered beyond its maxWaitMs. */
export const REPLICA_FETCH_TIMEOUT_MS = 30_000;

/** What the replica does after a fetch reply. */
export type NextFetch = 'now' | 'after-flush' | 'back-off' | 'stop';

/** The broker-level replication settings a follower fetches with (Kafka's names). */
export interface FollowerFetchSettings {
  replicaFetchMaxBytes: number;
  replicaFetchWaitMaxMs: number;
  replicaFetchBackoffMs: number;
}

export interface FollowerFetcherHost {
  readonly brokerId: number;
  readonly brokerEpoch: number;
  readonly settings: FollowerFetchSettings;
  /** The follower's fetch offset (its LEO), last fetched epoch and fsynced offset now; null: do not fetch (no open log, or it refuses writes). */
  fetchPosition(): { fetchOffset: number; lastFetchedEpoch: number; fsyncedOffset: number } | null;
  /** Handles a reply of the current generation; returns when to fetch next. */
  onFetchReply(ctx: ActorContext, reply: FetchReply): Promise<NextFetch> | NextFetch;
}

export class FollowerFetcher {
  private generation = 0;
  private leader: ActorRef<ReplicaMessages> | null = null;
  private leaderEpoch = -1;
  private inFlight = false;
  /** The fsynced offset the in-flight fetch (or the last flushed note) reported. */
  private reportedFsyncedOffset = -1;
  /** `after-flush`: the next fetch goes once the fsynced offset reaches this; else null. */
  private awaitingFlushTo: number | null = null;
  private backoffTimer: TimerHandle | null = null;
  private stopped = true;

  constructor(private readonly host: FollowerFetcherHost) {}

  /** The leader it fetches from, or null when stopped. */
  get currentLeader(): ActorRef<ReplicaMessages> | null {
    return this.stopped ? null : this.leader;
  }

  /** Starts fetching from `leader` in `leaderEpoch` (a new generation: replies to older fetches are dropped). */
  start(ctx: ActorContext, leader: ActorRef<ReplicaMessages>, leaderEpoch: number): void {
    this.stop(ctx);
    this.stopped = false;
    this.leader = leader;
    this.leaderEpoch = leaderEpoch;
    this.fetch(ctx);
  }

  /** Stops the loop: no fetch is sent, and the reply to one in flight is dropped. */
  stop(ctx: ActorContext): void {
    this.generation++;
    this.stopped = true;
    this.inFlight = false;
    this.awaitingFlushTo = null;
    if (this.backoffTimer !== null) ctx.timers.clearTimeout(this.backoffTimer);
    this.backoffTimer = null;
  }

  /** The loop stopped itself (`stop`: the log refused writes) and may go on: fetch again unless busy. */
  resume(ctx: ActorContext): void {
    if (this.stopped || this.inFlight || this.backoffTimer !== null) return;
    this.awaitingFlushTo = null;
    this.fetch(ctx);
  }

  /**
   * A group commit completed with every offset below `fsyncedOffset` durable: the awaited fetch goes
   * now, or a fetch parked at the leader learns it through `replica.follower-flushed`.
   */
  onFlushed(ctx: ActorContext, fsyncedOffset: number): void {
    if (this.stopped || this.leader === null) return;
    if (this.awaitingFlushTo !== null) {
      if (fsyncedOffset >= this.awaitingFlushTo) {
        this.awaitingFlushTo = null;
        this.fetch(ctx);
      }
      return;
    }
    if (this.inFlight && fsyncedOffset > this.reportedFsyncedOffset) {
      this.reportedFsyncedOffset = fsyncedOffset;
      ctx.send(this.leader, 'replica.follower-flushed', {
        brokerId: this.host.brokerId,
        brokerEpoch: this.host.brokerEpoch,
        fsyncedOffset,
      });
    }
  }

  private fetch(ctx: ActorContext): void {
    const leader = this.leader;
    if (this.stopped || leader === null || this.inFlight) return;
    const position = this.host.fetchPosition();
    if (position === null) return; // resumed by the replica
    const generation = this.generation;
    const { replicaFetchMaxBytes, replicaFetchWaitMaxMs } = this.host.settings;
    this.inFlight = true;
    this.reportedFsyncedOffset = position.fsyncedOffset;
    ctx
      .request(
        leader,
        'replica.fetch',
        {
          fetchOffset: position.fetchOffset,
          maxBytes: replicaFetchMaxBytes,
          minOneBatch: true,
          currentLeaderEpoch: this.leaderEpoch,
          maxWaitMs: replicaFetchWaitMaxMs,
          follower: {
            brokerId: this.host.brokerId,
            brokerEpoch: this.host.brokerEpoch,
            lastFetchedEpoch: position.lastFetchedEpoch,
            fsyncedOffset: position.fsyncedOffset,
          },
        },
        replicaFetchWaitMaxMs + REPLICA_FETCH_TIMEOUT_MS,
      )
      .then(
        async (reply) => {
          if (generation !== this.generation) return;
          this.inFlight = false;
          const next = await this.host.onFetchReply(ctx, reply);
          if (generation !== this.generation) return;
          this.schedule(ctx, next);
        },
        (error: unknown) => {
          if (generation !== this.generation) return;
          this.inFlight = false;
          ctx.log.debug({ leader, error: String(error) }, 'replica fetch failed; backing off');
          this.schedule(ctx, 'back-off');
        },
      )
      // A programmer error in the reply's handling crashes the actor, on its own turn.
      .catch((error: unknown) =>
        ctx.timers.setTimeout(() => {
          throw error;
        }, 0),
      );
  }

  private schedule(ctx: ActorContext, next: NextFetch): void {
    if (next === 'now') this.fetch(ctx);
    else if (next === 'after-flush') {
      const position = this.host.fetchPosition();
      if (position === null) return;
      if (position.fsyncedOffset >= position.fetchOffset) this.fetch(ctx);
      else this.awaitingFlushTo = position.fetchOffset;
    } else if (next === 'back-off') {
      this.backoffTimer = ctx.timers.setTimeout(() => {
        this.backoffTimer = null;
        this.fetch(ctx);
      }, this.host.settings.replicaFetchBackoffMs);
    }
  }
}
