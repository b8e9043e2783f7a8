/**
 * CreateTopics (key 19), through the controller. Explicit replica assignments are honoured when
 * they name registered brokers (one broker for now). From v5 the response echoes partitions,
 * replication factor and the topic's config overrides.
 *
 * A topic the controller created but whose replicas on this broker could not start on the disk (a
 * full disk: ENOSPC) answers KAFKA_STORAGE_ERROR with a message naming the disk's error and saying
 * the topic exists. Kafka answers NONE there (the controller committed the topic; the broker's log
 * dir failure shows only later, as KAFKA_STORAGE_ERROR on produce and fetch); we answer the error so
 * that `skiff topic create` and other tools tell the user at once why the topic does not serve yet,
 * and the message says it was created, so a retry's TOPIC_ALREADY_EXISTS is no surprise. The other
 * fields (topic ID, partitions, configs) are filled, since the topic does exist. The partitions come
 * online by themselves once the disk takes writes (the broker retries their start).
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';
import type { BrokerContext } from '../broker-context';
import type { CreateTopicsRequest, CreateTopicsResponse } from '../../protocol/schema/create-topics';

export const createTopicsHandler: ApiHandler<typeof CreateTopicsRequest, typeof CreateTopicsResponse> = {
  apiKey: ApiKey.CreateTopics,
  name: 'CreateTopics',
  minVersion: 0,
  maxVersion: 7,
  async handle({ body, broker }) {
    const early = new Map<string, { errorCode: number; errorMessage: string }>();
    const commands = body.topics.map((t) => {
      const numPartitions = t.numPartitions;
      const replicationFactor = t.replicationFactor;
      let assignments: number[][] | null = null;
      if (t.assignments.length > 0) {
        const sorted = [...t.assignments].sort((a, b) => a.partitionIndex - b.partitionIndex);
        if (numPartitions !== -1 || replicationFactor !== -1) {
          early.set(t.name, {
            errorCode: ErrorCode.INVALID_REQUEST,
            errorMessage:
              'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.',
          });
        } else if (sorted.some((a, i) => a.partitionIndex !== i)) {
          // Kafka's ReplicationControlManager: the explicit partition ids must be 0, 1, ..., n-1.
          early.set(t.name, {
            errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            errorMessage: 'Partitions should be a consecutive 0-based integer sequence',
          });
        }
        // Unknown or duplicate brokers and uneven replica counts are the controller's to refuse. The
        // counts stay -1: the controller takes them from the assignments and refuses anything else (KIP-464).
        assignments = sorted.map((a) => a.brokerIds);
      }
      const configs: Record<string, string> = {};
      for (const c of t.configs) if (c.value !== null) configs[c.name] = c.value;
      return { name: t.name, numPartitions, replicationFactor, configs, assignments };
    });
    const toCreate = commands.filter((c) => !early.has(c.name));
    const results = toCreate.length
      ? await broker.createTopics({ topics: toCreate, validateOnly: body.validateOnly })
      : [];
    const byName = new Map(results.map((r) => [r.name, r]));
    return {
      throttleTimeMs: 0,
      topics: commands.map((c) => {
        const failed = early.get(c.name);
        const r = byName.get(c.name);
        const ok = !failed && r && r.errorCode === ErrorCode.NONE;
        const offline = ok && !body.validateOnly ? offlinePartitions(broker, c.name) : null;
        return {
          name: c.name,
          topicId: ok ? r.topicId : 'AAAAAAAAAAAAAAAAAAAAAA',
          errorCode: offline
            ? ErrorCode.KAFKA_STORAGE_ERROR
            : (failed?.errorCode ?? r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR),
          errorMessage: offline ?? failed?.errorMessage ?? r?.errorMessage ?? null,
          topicConfigErrorCode: ErrorCode.NONE,
          numPartitions: ok ? r.numPartitions : -1,
          replicationFactor: ok ? r.replicationFactor : -1,
          configs: ok
            ? Object.entries(c.configs).map(([name, value]) => ({
                name,
                value,
                readOnly: false,
                configSource: 1,
                isSensitive: false,
              }))
            : null,
        };
      }),
    };
  },
};

/**
 * The message for a created topic some of whose partitions are offline on this broker (their
 * replicas could not start on the disk), or null when all serve.
 */
function offlinePartitions(broker: BrokerContext, name: string): string | null {
  const topic = broker.topic(name);
  if (!topic) return null;
  const offline = topic.partitions
    .map((p) => ({ partition: p.partition, reason: broker.offlineReason(name, p.partition) }))
    .filter((p): p is { partition: number; reason: string } => p.reason !== null);
  const first = offline[0];
  if (first === undefined) return null;
  return (
    `Topic '${name}' was created, but ${offline.length === 1 ? 'partition' : 'partitions'} ` +
    `${offline.map((p) => p.partition).join(', ')} could not start on broker ${broker.nodeId} (${first.reason}) ` +
    `and ${offline.length === 1 ? 'is' : 'are'} offline: free space in the log dir; ` +
    `the broker retries and brings ${offline.length === 1 ? 'it' : 'them'} online by itself`
  );
}
