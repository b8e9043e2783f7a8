/**
 * ElectLeaders (key 43) (KIP-183 preferred elections, KIP-460 election types). Answered from
 * the metadata cache, as Kafka 4.4 answers on a healthy cluster (checked against the Kafka fixture,
 * test/oracle scenario `elect-leaders`):
 *
 * - ElectionType 0 (preferred; the only one before v1): a partition whose leader is its preferred
 *   replica (the first of its replicas) gets ELECTION_NOT_NEEDED. One led by another replica gets
 *   PREFERRED_LEADER_NOT_AVAILABLE: Skiff's controller never moves leadership off the preferred
 *   replica yet (elections come with replication), so no election can be run.
 * - ElectionType 1 (unclean): a partition with a leader gets ELECTION_NOT_NEEDED; one without gets
 *   ELIGIBLE_LEADERS_NOT_AVAILABLE (no unclean election without replication).
 * - Any other type (v1+): INVALID_REQUEST at the top level and for every listed partition.
 * - An unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION ("No such topic as X", "No such
 *   partition as X-P"); partitions are answered in request order, repeats included.
 * - Null TopicPartitions: every topic, each listing only its partitions that need an election (so
 *   an empty list for a topic whose leaders are all preferred). An empty list: no results.
 */
import type { PartitionState, TopicState } from '../../controller/metadata-records';
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';
import type { ElectLeadersRequest, ElectLeadersResponse } from '../../protocol/schema/elect-leaders';

/** Kafka's ElectionType values. */
export const PREFERRED_ELECTION = 0;
export const UNCLEAN_ELECTION = 1;

interface PartitionResult {
  partitionId: number;
  errorCode: number;
  errorMessage: string | null;
}

export const electLeadersHandler: ApiHandler<typeof ElectLeadersRequest, typeof ElectLeadersResponse> = {
  apiKey: ApiKey.ElectLeaders,
  name: 'ElectLeaders',
  minVersion: 0,
  maxVersion: 2,
  handle({ apiVersion, body, broker }) {
    // ElectionType is absent (decoded as 0, preferred) before v1.
    const type = apiVersion >= 1 ? body.electionType : PREFERRED_ELECTION;
    const validType = type === PREFERRED_ELECTION || type === UNCLEAN_ELECTION;
    if (body.topicPartitions === null) {
      const all = validType ? broker.allTopics() : [];
      return {
        throttleTimeMs: 0,
        errorCode: validType ? ErrorCode.NONE : ErrorCode.INVALID_REQUEST,
        replicaElectionResults: all.map((t) => ({
          topic: t.name,
          partitionResult: t.partitions.filter((p) => needsElection(type, p)).map((p) => electionResult(type, t, p)),
        })),
      };
    }
    return {
      throttleTimeMs: 0,
      errorCode: validType ? ErrorCode.NONE : ErrorCode.INVALID_REQUEST,
      replicaElectionResults: body.topicPartitions.map((t) => {
        const state = broker.topic(t.topic);
        return {
          topic: t.topic,
          partitionResult: t.partitions.map((partitionId): PartitionResult => {
            if (!validType)
              return {
                partitionId,
                errorCode: ErrorCode.INVALID_REQUEST,
                errorMessage: `Unknown election type ${type}`,
              };
            if (state === undefined)
              return {
                partitionId,
                errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                errorMessage: `No such topic as ${t.topic}`,
              };
            const partition = state.partitions.find((p) => p.partition === partitionId);
            if (partition === undefined)
              return {
                partitionId,
                errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                errorMessage: `No such partition as ${t.topic}-${partitionId}`,
              };
            return electionResult(type, state, partition);
          }),
        };
      }),
    };
  },
};

/** Whether an election of `type` would change `p`'s leader (Kafka lists only these for a null request). */
function needsElection(type: number, p: PartitionState): boolean {
  return type === PREFERRED_ELECTION ? p.leader !== p.replicas[0] : p.leader < 0;
}

/** The outcome for one existing partition; see the file comment. */
function electionResult(type: number, topic: TopicState, p: PartitionState): PartitionResult {
  const partitionId = p.partition;
  if (!needsElection(type, p))
    return {
      partitionId,
      errorCode: ErrorCode.ELECTION_NOT_NEEDED,
      errorMessage: 'Leader election not needed for topic partition.',
    };
  if (type === PREFERRED_ELECTION) {
    const preferred = p.replicas[0];
    const why =
      preferred === undefined || !p.isr.includes(preferred)
        ? `it is not in the ISR ${JSON.stringify(p.isr)}`
        : 'Skiff does not move leadership between replicas yet';
    return {
      partitionId,
      errorCode: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
      errorMessage: `Failed to elect the preferred replica ${preferred} of ${topic.name}-${partitionId}: ${why}.`,
    };
  }
  return {
    partitionId,
    errorCode: ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
    errorMessage: `No replica of ${topic.name}-${partitionId} is eligible for an unclean election.`,
  };
}
