/**
 * Planted bugs (issue 12 item 4): switches, off by default, that break the replication protocol in
 * ways Kafka has known, so a test can show the verification campaign catches each. Only the
 * simulation sets them (`skiff verify --planted-bug`, the planted-bug test), and only in its own
 * thread: a production worker loads its own copy of this module, where they stay false. Each costs
 * the production path one boolean check where it is consulted (src/replica/replica-actor.ts).
 */
export const plantedBugs = {
  /**
   * Pre-KIP-101 truncation: a replica that becomes a follower (at start after its own recovery, or
   * on a leader change) truncates its log to its own high watermark, then fetches from there with no
   * last fetched epoch (-1), so the leader never answers `divergingEpoch` (KIP-320) and the follower
   * never truncates by the leaders' epochs; a follower whose LEO is past its leader's (OFFSET_OUT_OF_RANGE)
   * truncates to the leader's LEO, as pre-KIP-101 Kafka's handleOffsetOutOfRange did. What breaks (KIP-101 "Scenario 1"): a follower's HW lags
   * the leader's by one fetch, so a follower that restarts drops acknowledged acks=all records, and
   * if the leader dies before it fetches them again, it leads without them. "Scenario 2": a replica
   * whose HW covers a batch the new leader lost keeps it, and fetches on after it, so the logs
   * diverge below the HW (DESIGN.md invariants 3 and 4).
   */
  truncateToHighWatermark: false,
  /**
   * The leader answers an acks=all produce as soon as the batch is in its own log (its LEO passed
   * it), before the HW does: before the ISR fetched (or, with write.caching=false, fsynced) it. What
   * breaks: a leader that dies before its followers fetched the batch loses an acknowledged acks=all
   * record (DESIGN.md invariant 4).
   */
  ackBeforeHighWatermark: false,
  /**
   * A leader demoted by a newer leader epoch (a role naming another leader, or none) keeps accepting
   * produces as the leader of the epoch it led: it appends them at its own LEO stamped with its old
   * epoch, answers acks=0/1 at once, and keeps its acks=all produces (those waiting at the demotion
   * and new ones, min.insync.replicas checked against the ISR it is told) waiting for its HW. It
   * follows the new leader all the same, so its HW moves as a follower's does, from the new leader's
   * fetch answers (min of the leader's HW and its own LEO), and an acks=all produce it took is
   * answered once that HW passes the batch's offset, although the new leader holds another record
   * there. What breaks: two leaders take writes at once; an acknowledged acks=all record is lost
   * (the new leader's answer to the demoted one's next fetch truncates it, or, when its last fetched
   * epoch still matches, its log keeps a batch the leader's does not: invariants 3 and 4).
   */
  fencedLeaderAppends: false,
};

/** The name of one planted bug. */
export type PlantedBug = keyof typeof plantedBugs;

/** The planted bugs by name, for `--planted-bug`. */
export const PLANTED_BUGS = Object.keys(plantedBugs) as PlantedBug[];

/** Turns every planted bug off, then `bug` (when given) on. */
export function plantBug(bug: PlantedBug | null): void {
  for (const name of PLANTED_BUGS) plantedBugs[name] = false;
  if (bug !== null) plantedBugs[bug] = true;
}
