/**
 * Produce (key 0). Advertised from v0 because librdkafka 2.0.2 enables compression only when the
 * range contains 0 (KAFKA-18659); v0-2 (magic 0/1) are refused with UNSUPPORTED_VERSION as Kafka 4
 * does. Each partition's record batch goes, as bytes, to its leader replica actor in one envelope.
 * acks=0 gets no response at all; when some partition fails, the connection is closed instead
 * (Kafka's KafkaApis.handleProduceRequest / sendErrorOrCloseConnection), so the producer, which
 * reads no answer, learns of it and refreshes its metadata (a moved leader, a deleted topic).
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode, errorName } from '../../protocol/error-codes';
import * as L from '../../protocol/record-batch/layout';
import { attributesOf } from '../../protocol/record-batch/view';
import type { ApiHandler, RequestContext } from '../api-handler';
import type { ProduceRequest, ProduceResponse, ProduceRequestData } from '../../protocol/schema/produce';
import { leaderFor, replicaFailureCode, replicaFailureLevel } from './leader-lookup';
import { OFFSETS_TOPIC } from '../../group/offsets-records';
import type { BrokerContext } from '../broker-context';
import { RateLimitedWarning } from '../rate-limited-warning';
import { CloseConnection } from '../close-connection';
import { responseErrorCounts } from '../error-counts';
import { whileLent } from '../../runtime/envelope';

/** Extra time beyond the produce timeout before the network layer gives up on a replica's answer. */
const REPLY_GRACE_MS = 5000;

/**
 * The codes a leader refuses a batch with for what the producer sent (its records, size or format),
 * as Kafka's ReplicaManager logs "Error processing append operation" for them: the operator's way
 * to find a buggy producer.
 */
const REFUSED_BATCH_CODES: ReadonlySet<number> = new Set([
  ErrorCode.CORRUPT_MESSAGE,
  ErrorCode.INVALID_RECORD,
  ErrorCode.MESSAGE_TOO_LARGE,
  ErrorCode.RECORD_LIST_TOO_LARGE,
  ErrorCode.INVALID_TIMESTAMP,
  ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
]);

/** One rate-limited warning per broker: a producer sending bad batches in a loop must not flood the log. */
const refusedBatchWarnings = new WeakMap<BrokerContext, RateLimitedWarning>();

function warnRefusedBatch(broker: BrokerContext, fields: object): void {
  let warning = refusedBatchWarnings.get(broker);
  if (warning === undefined) {
    warning = new RateLimitedWarning(broker.log, broker.clock);
    refusedBatchWarnings.set(broker, warning);
  }
  warning.warn(fields, 'produce refused: the record batch is invalid');
}

function partitionResponse(
  index: number,
  errorCode: number,
  errorMessage: string | null,
  baseOffset = -1,
  logStartOffset = -1,
) {
  return { index, errorCode, baseOffset, logAppendTimeMs: -1, logStartOffset, recordErrors: [], errorMessage };
}

/**
 * Whether some partition's first batch has the transactional flag (attributes bit 4), as Kafka's
 * ProduceRequest tells transactional records (it looks at each partition's first batch; magic 0/1
 * message sets have no such flag). A batch too short to hold attributes is left to the replica's validation.
 */
function hasTransactionalBatch(body: ProduceRequestData): boolean {
  for (const t of body.topicData)
    for (const p of t.partitionData) {
      const records = p.records;
      if (
        records !== null &&
        records.length >= L.RECORD_BATCH_OVERHEAD &&
        records.readInt8(L.MAGIC) === L.CURRENT_MAGIC &&
        (attributesOf(records) & L.TRANSACTIONAL_FLAG_MASK) !== 0
      )
        return true;
    }
  return false;
}

function allPartitions(body: ProduceRequestData, errorCode: number, message: string | null) {
  return {
    responses: body.topicData.map((t) => ({
      name: t.name,
      topicId: t.topicId,
      partitionResponses: t.partitionData.map((p) => partitionResponse(p.index, errorCode, message)),
    })),
    throttleTimeMs: 0,
  };
}

/**
 * The request's topics and partitions with each partition once, as Kafka's KafkaApis keys a produce
 * by topic-partition (a map: a partition named twice is appended once, with its last records; a
 * topic named twice answers as one). Topics keep the order they first appear in; v13+ names topics
 * by id.
 */
function uniquePartitions(body: ProduceRequestData, apiVersion: number): ProduceRequestData['topicData'] {
  // The common request (one partition of one topic) has nothing to merge.
  if (body.topicData.length === 1 && body.topicData[0]!.partitionData.length <= 1) return body.topicData;
  type TopicData = ProduceRequestData['topicData'][number];
  const topics = new Map<string, { topic: TopicData; partitions: Map<number, TopicData['partitionData'][number]> }>();
  for (const t of body.topicData) {
    const key = apiVersion >= 13 ? `id:${t.topicId}` : `name:${t.name}`;
    let entry = topics.get(key);
    if (entry === undefined) topics.set(key, (entry = { topic: t, partitions: new Map() }));
    for (const p of t.partitionData) {
      // Delete first: a partition named again takes the place of its last occurrence.
      entry.partitions.delete(p.index);
      entry.partitions.set(p.index, p);
    }
  }
  return [...topics.values()].map(({ topic, partitions }) => ({ ...topic, partitionData: [...partitions.values()] }));
}

export const produceHandler: ApiHandler<typeof ProduceRequest, typeof ProduceResponse> = {
  apiKey: ApiKey.Produce,
  name: 'Produce',
  minVersion: 0,
  maxVersion: 13,
  minSupportedVersion: 3,
  refuse({ body }: RequestContext<ProduceRequestData>) {
    // acks=0 reads no answer: the refusal closes the connection (module comment).
    if (body.acks === 0) throw new CloseConnection('Produce v0-2 (message format v0/v1) is not supported');
    return allPartitions(body, ErrorCode.UNSUPPORTED_VERSION, 'Produce v0-2 (message format v0/v1) is not supported');
  },
  async handle({ apiVersion, body, broker, clientId, remote }) {
    const { acks, timeoutMs } = body;
    if (acks !== -1 && acks !== 0 && acks !== 1) {
      return allPartitions(body, ErrorCode.INVALID_REQUIRED_ACKS, `acks must be -1, 0 or 1, got ${acks}`);
    }
    // Kafka's KafkaApis.handleProduceRequest: a request with a transactional id, or with a
    // transactional batch but no id, fails whole with TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
    if (body.transactionalId !== null || hasTransactionalBatch(body)) {
      if (acks === 0)
        throw new CloseConnection(
          'produce with acks=0 failed: TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
          responseErrorCounts(allPartitions(body, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, null)),
        );
      return allPartitions(body, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 'Transactions are not supported yet');
    }
    const partitions = uniquePartitions(body, apiVersion);
    // A request for one partition (the common one) gives its record batch up with the envelope that
    // carries it to the replica: the frame's own buffer is transferred, not copied (nothing here reads
    // the frame afterwards; with more partitions each batch is copied, the frame still in use).
    const onlyOne = partitions.length === 1 && partitions[0]!.partitionData.length === 1;
    const pending = partitions.map((topicData) => ({
      name: topicData.name,
      topicId: topicData.topicId,
      partitions: topicData.partitionData.map(async (p) => {
        // v13+ names topics by topic ID only (KIP-516).
        const leader =
          apiVersion >= 13
            ? leaderFor(broker, broker.topicById(topicData.topicId), p.index, ErrorCode.UNKNOWN_TOPIC_ID)
            : leaderFor(broker, topicData.name, p.index);
        if ('errorCode' in leader) return partitionResponse(p.index, leader.errorCode, null);
        // Kafka's ReplicaManager: clients may not append to internal topics (only the coordinator does).
        if (leader.topic.name === OFFSETS_TOPIC)
          return partitionResponse(
            p.index,
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            `Cannot append to internal topic ${OFFSETS_TOPIC}`,
          );
        const { replica, topic } = leader;
        const send = () =>
          broker.endpoint.request(
            replica,
            'replica.produce',
            { records: p.records, acks, timeoutMs },
            Math.max(0, timeoutMs) + REPLY_GRACE_MS,
          );
        try {
          const reply = await (onlyOne && p.records !== null ? whileLent(p.records, send) : send());
          if (REFUSED_BATCH_CODES.has(reply.errorCode))
            warnRefusedBatch(broker, {
              topic: topic.name,
              partition: p.index,
              clientId,
              remote,
              errorCode: reply.errorCode,
              errorMessage: reply.errorMessage,
              ...(reply.recordErrors.length > 0 ? { batchIndex: reply.recordErrors[0]!.batchIndex } : {}),
            });
          return {
            index: p.index,
            errorCode: reply.errorCode,
            baseOffset: reply.baseOffset,
            logAppendTimeMs: reply.logAppendTimeMs,
            logStartOffset: reply.logStartOffset,
            recordErrors: reply.recordErrors,
            errorMessage: reply.errorMessage,
          };
        } catch (error) {
          broker.log[replicaFailureLevel(error)](
            { topic: topic.name, partition: p.index, error: String(error) },
            'produce to replica failed',
          );
          const code = replicaFailureCode(error);
          return partitionResponse(
            p.index,
            code,
            code === ErrorCode.REQUEST_TIMED_OUT
              ? 'The replica did not answer in time'
              : 'This server is not the leader for that topic-partition.',
          );
        }
      }),
    }));
    const responses = [];
    for (const t of pending)
      responses.push({ name: t.name, topicId: t.topicId, partitionResponses: await Promise.all(t.partitions) });
    if (acks === 0) {
      // No response is due; an error closes the connection (module comment).
      const failed = responses.flatMap((t) =>
        t.partitionResponses
          .filter((p) => p.errorCode !== ErrorCode.NONE)
          .map((p) => `${t.name ?? t.topicId}-${p.index}: ${errorName(p.errorCode)}`),
      );
      if (failed.length > 0)
        throw new CloseConnection(`produce with acks=0 failed (${failed.join(', ')})`, responseErrorCounts(responses));
      return null;
    }
    return { responses, throttleTimeMs: 0 };
  },
};
