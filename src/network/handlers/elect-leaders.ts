/**
 * ElectLeaders (key 43) (KIP-183 preferred elections, KIP-460 election types): the controller runs
 * the elections (`controller.elect-leaders`, Kafka's ReplicationControlManager.electLeaders) and this
 * handler shapes its answer as Kafka 4.4 does (checked against the Kafka fixture, test/oracle
 * scenario `elect-leaders`):
 *
 * - ElectionType 0 (preferred; the only one before v1): the first replica becomes leader when it is
 *   live and in the ISR (NONE); ELECTION_NOT_NEEDED when it already leads; PREFERRED_LEADER_NOT_AVAILABLE
 *   when it cannot.
 * - ElectionType 1 (unclean): a partition without a leader gets one, from the ISR if a member is
 *   live, else any live replica (NONE); ELECTION_NOT_NEEDED when it has a leader;
 *   ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is live.
 * - Any other type (v1+): INVALID_REQUEST at the top level and for every listed partition; nothing
 *   is asked of the controller.
 * - An unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION ("No such topic as X", "No such
 *   partition as X-P"); partitions are answered in request order, repeats included, grouped under
 *   their request topic.
 * - Null TopicPartitions: every topic, each listing only its partitions whose election was needed
 *   (so an empty list for a topic whose leaders are all preferred). An empty list: no results.
 * - An error the controller answers without a message gets Kafka's default message for the code
 *   (ApiError.message()); NONE has none.
 * - The controller not answering in time: REQUEST_TIMED_OUT at the top level and for every listed
 *   partition.
 */
import assert from 'node:assert/strict';
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

/** Kafka's default messages (Errors.java) for the codes the controller answers without one. */
const DEFAULT_MESSAGES = new Map<number, string>([
  [ErrorCode.ELECTION_NOT_NEEDED, 'Leader election not needed for topic partition.'],
  [ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, 'The preferred leader was not available.'],
  [ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, 'Eligible topic partition leaders are not available.'],
  [ErrorCode.REQUEST_TIMED_OUT, 'The request timed out.'],
]);

function partitionResult(partitionId: number, errorCode: number, errorMessage: string | null): PartitionResult {
  return {
    partitionId,
    errorCode,
    errorMessage: errorMessage ?? (errorCode === ErrorCode.NONE ? null : (DEFAULT_MESSAGES.get(errorCode) ?? null)),
  };
}

export const electLeadersHandler: ApiHandler<typeof ElectLeadersRequest, typeof ElectLeadersResponse> = {
  apiKey: ApiKey.ElectLeaders,
  name: 'ElectLeaders',
  minVersion: 0,
  maxVersion: 2,
  async handle({ apiVersion, body, broker }) {
    // ElectionType is absent (decoded as 0, preferred) before v1.
    const type = apiVersion >= 1 ? body.electionType : PREFERRED_ELECTION;
    const listed = body.topicPartitions;
    /** Every listed partition answered `errorCode`, under its request topic. */
    const allListed = (errorCode: number, message: string | null) =>
      (listed ?? []).map((t) => ({
        topic: t.topic,
        partitionResult: t.partitions.map((id) => partitionResult(id, errorCode, message)),
      }));
    if (type !== PREFERRED_ELECTION && type !== UNCLEAN_ELECTION)
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.INVALID_REQUEST,
        replicaElectionResults: allListed(ErrorCode.INVALID_REQUEST, `Unknown election type ${type}`),
      };
    if (listed !== null && listed.every((t) => t.partitions.length === 0))
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, replicaElectionResults: allListed(ErrorCode.NONE, null) };
    const asked =
      listed === null ? null : listed.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
    let results;
    try {
      results = await broker.electLeaders(type, asked);
    } catch (error) {
      broker.log.warn({ electionType: type, error: String(error) }, 'ElectLeaders: the controller did not answer');
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.REQUEST_TIMED_OUT,
        replicaElectionResults: allListed(ErrorCode.REQUEST_TIMED_OUT, null),
      };
    }
    if (listed !== null) {
      // The controller answers in request order: hand the results back under their request topics.
      let next = 0;
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        replicaElectionResults: listed.map((t) => ({
          topic: t.topic,
          partitionResult: t.partitions.map((partitionId) => {
            const r = results[next++];
            assert.ok(
              r !== undefined && r.topic === t.topic && r.partition === partitionId,
              `controller.elect-leaders answers in request order (at ${t.topic}-${partitionId})`,
            );
            return partitionResult(partitionId, r.errorCode, r.errorMessage);
          }),
        })),
      };
    }
    // Null: every topic, with the partitions whose election was needed (the controller lists only those).
    const byTopic = new Map<string, PartitionResult[]>(broker.allTopics().map((t) => [t.name, []]));
    for (const r of results) {
      const list = byTopic.get(r.topic) ?? [];
      list.push(partitionResult(r.partition, r.errorCode, r.errorMessage));
      byTopic.set(r.topic, list);
    }
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      replicaElectionResults: [...byTopic].map(([topic, partitionResult]) => ({ topic, partitionResult })),
    };
  },
};
