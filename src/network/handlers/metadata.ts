/**
 * Metadata (key 3). Topics are auto-created (with num.partitions) only when the request
 * allows it (always below v4; the allowAutoTopicCreation flag from v4) and auto.create.topics.enable
 * is true: Kafka's rule. An empty topic list means "all topics" at v0 only; a null list (v1+) means all.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import { topicNameInvalidReason } from '../../controller/topic-names';
import type { TopicState } from '../../controller/metadata-records';
import type { ApiHandler } from '../api-handler';
import type { MetadataRequest, MetadataResponse } from '../../protocol/schema/metadata';
import type { BrokerContext } from '../broker-context';

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

export const metadataHandler: ApiHandler<typeof MetadataRequest, typeof MetadataResponse> = {
  apiKey: ApiKey.Metadata,
  name: 'Metadata',
  minVersion: 0,
  maxVersion: 13,
  async handle({ apiVersion, body, broker }) {
    const wantsAll = body.topics === null || (apiVersion === 0 && body.topics.length === 0);
    const allowAutoCreate = (apiVersion < 4 || body.allowAutoTopicCreation) && broker.config.autoCreateTopicsEnable;
    let topics: object[];
    if (wantsAll) {
      topics = broker.allTopics().map((t) => describeTopic(t, broker));
    } else {
      const requested = body.topics!;
      const missing = requested
        .filter(
          (t) =>
            t.name !== null &&
            !broker.topic(t.name) &&
            (t.topicId === ZERO_UUID || !t.topicId) &&
            topicNameInvalidReason(t.name) === null,
        )
        .map((t) => t.name!);
      if (allowAutoCreate && missing.length) {
        const unique = [...new Set(missing)];
        await broker.createTopics({
          topics: unique.map((name) => ({ name, numPartitions: -1, replicationFactor: -1, configs: {} })),
          validateOnly: false,
        });
      }
      topics = requested.map((t) => {
        const byId = t.topicId && t.topicId !== ZERO_UUID ? broker.topicById(t.topicId) : undefined;
        const topic = byId ?? (t.name !== null ? broker.topic(t.name) : undefined);
        if (topic) return describeTopic(topic, broker);
        const invalid = t.name !== null && topicNameInvalidReason(t.name) !== null;
        const errorCode =
          t.topicId && t.topicId !== ZERO_UUID && t.name === null
            ? ErrorCode.UNKNOWN_TOPIC_ID
            : invalid
              ? ErrorCode.INVALID_TOPIC_EXCEPTION
              : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        return {
          errorCode,
          name: t.name,
          topicId: t.topicId || ZERO_UUID,
          isInternal: false,
          partitions: [],
          topicAuthorizedOperations: -2147483648,
        };
      });
    }
    return {
      throttleTimeMs: 0,
      brokers: broker.brokers().map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: null })),
      clusterId: broker.clusterId,
      controllerId: broker.controllerId,
      topics,
      clusterAuthorizedOperations: -2147483648,
    };
  },
};

/**
 * One topic's metadata. A partition this broker leads whose replica could not start on the disk is
 * reported with KAFKA_STORAGE_ERROR and this broker among its offline replicas (KIP-112's
 * offline_replicas). Kafka's controller would move leadership off the failed log dir (leader -1,
 * LEADER_NOT_AVAILABLE with one replica); Skiff's controller does not hear of log-dir failures, so
 * the leader stays the controller's and the partition error says why it does not serve. Clients
 * treat KAFKA_STORAGE_ERROR as retriable (Java: an InvalidMetadataException, so it refreshes).
 */
function describeTopic(topic: TopicState, broker: BrokerContext): object {
  const live = new Set(broker.brokers().map((b) => b.nodeId));
  // Replicas the controller holds offline after a storage error until their broker restarts (KIP-112).
  const failedOnDisk = (id: number, partition: number): boolean =>
    broker
      .brokers()
      .some(
        (b) =>
          b.nodeId === id &&
          (b.offlineReplicas ?? []).some((r) => r.topicId === topic.topicId && r.partition === partition),
      );
  const offlineHere = (partition: number) =>
    broker.offlineReason(topic.name, partition) !== null ? [broker.nodeId] : [];
  return {
    errorCode: ErrorCode.NONE,
    name: topic.name,
    topicId: topic.topicId,
    isInternal: topic.name.startsWith('__'),
    partitions: topic.partitions.map((p) => {
      const here = offlineHere(p.partition);
      return {
        errorCode:
          p.leader < 0
            ? ErrorCode.LEADER_NOT_AVAILABLE
            : here.length > 0
              ? ErrorCode.KAFKA_STORAGE_ERROR
              : ErrorCode.NONE,
        partitionIndex: p.partition,
        leaderId: p.leader,
        leaderEpoch: p.leaderEpoch,
        replicaNodes: p.replicas,
        isrNodes: p.isr,
        offlineReplicas: [
          ...new Set([...p.replicas.filter((id) => !live.has(id) || failedOnDisk(id, p.partition)), ...here]),
        ],
      };
    }),
    topicAuthorizedOperations: -2147483648,
  };
}
