/**
 * Planted bugs (issue 12 item 4): switches, off by default, that break the replication protocol in
 * ways Kafka has known, so a test can show the verification campaign catches each. Only the
 * simulation sets them (`skiff verify --planted-bug`, the planted-bug test), and only in its own
 * thread: a production worker loads its own copy of this module, where they stay false.
 */
export const plantedBugs = {
  /** A follower truncates to its high watermark on becoming a follower instead of asking the leader's epochs (pre-KIP-101). */
  truncateToHighWatermark: false,
  /** The leader acknowledges acks=all as soon as the batch is in its own log, before the HW passes it. */
  ackBeforeHighWatermark: false,
  /** A leader demoted (fenced by a newer leader epoch) keeps accepting appends as if it still led. */
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
