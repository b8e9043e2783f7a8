/**
 * The body of a consumer's Fetch request for one partition (replicaId -1, read uncommitted, no fetch
 * session, no forgotten topics), shared by the wire, simulation and real-client tests so each states
 * only what it varies. Fields follow FetchRequest.json; the encoder writes those of the version it is
 * given. Optional fields are left out unless set, so a handler called directly sees exactly them.
 */

/** What a test varies in a one-partition Fetch; the defaults are partition 0 from offset 0, no long poll. */
export interface FetchPartitionOptions {
  /** The topic by name (versions up to 12). */
  topic?: string;
  /** The topic by id (versions 13 and up; the simulation handlers read it at any version). */
  topicId?: string;
  partition?: number;
  fetchOffset?: number;
  /** -1 (the default) skips the leader-epoch check (KIP-320). */
  currentLeaderEpoch?: number;
  /** Left out unless set (versions 12 and up). */
  lastFetchedEpoch?: number;
  /** Long-poll time; 0 (the default) answers at once. */
  maxWaitMs?: number;
  minBytes?: number;
  /** Per partition; the response-wide maxBytes is 1 MiB. */
  partitionMaxBytes?: number;
}

/** Builds the Fetch request body for one partition; see {@link FetchPartitionOptions} for the defaults. */
export function fetchRequestBody(o: FetchPartitionOptions) {
  return {
    replicaId: -1,
    maxWaitMs: o.maxWaitMs ?? 0,
    minBytes: o.minBytes ?? 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        ...(o.topic !== undefined ? { topic: o.topic } : {}),
        ...(o.topicId !== undefined ? { topicId: o.topicId } : {}),
        partitions: [
          {
            partition: o.partition ?? 0,
            currentLeaderEpoch: o.currentLeaderEpoch ?? -1,
            fetchOffset: o.fetchOffset ?? 0,
            ...(o.lastFetchedEpoch !== undefined ? { lastFetchedEpoch: o.lastFetchedEpoch } : {}),
            logStartOffset: -1,
            partitionMaxBytes: o.partitionMaxBytes ?? 1 << 20,
          },
        ],
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  };
}
