/**
 * FindCoordinator (key 10). Key type 0 (group): the coordinator is the leader of the group's
 * __consumer_offsets partition, abs(hashCode(group)) % offsets.topic.num.partitions; the topic is
 * created at the first such request, as Kafka does. Key type 1 (transaction): this broker (Skiff has
 * no transaction coordinator; transactional producers fail at InitProducerId). Other key types get
 * INVALID_REQUEST. v4+ batches keys (KIP-699). Advertised from v0 because librdkafka 2.0.2 enables
 * LZ4 compression and consumer groups only when FindCoordinator's range contains 0 (its
 * rdkafka_feature.c map).
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler, RequestContext } from '../api-handler';
import type { FindCoordinatorRequest, FindCoordinatorResponse } from '../../protocol/schema/find-coordinator';
import { OFFSETS_TOPIC, offsetsPartitionFor } from '../../group/offsets-records';

interface Coordinator {
  key: string;
  nodeId: number;
  host: string;
  port: number;
  errorCode: number;
  errorMessage: string | null;
}

async function coordinatorOf(ctx: RequestContext, key: string, keyType: number): Promise<Coordinator> {
  const { broker } = ctx;
  const fail = (errorCode: number, errorMessage: string): Coordinator => ({
    key,
    nodeId: -1,
    host: '',
    port: -1,
    errorCode,
    errorMessage,
  });
  const self = broker.brokers().find((b) => b.nodeId === broker.nodeId)!;
  if (keyType === 1)
    return {
      key,
      nodeId: self.nodeId,
      host: self.host,
      port: self.port,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
    };
  if (keyType !== 0) return fail(ErrorCode.INVALID_REQUEST, `Unknown coordinator key type ${keyType}`);
  try {
    await broker.ensureOffsetsTopic();
  } catch (error) {
    broker.log.warn({ error: String(error) }, 'creating the offsets topic failed');
    return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'The coordinator is not available.');
  }
  // The coordinator is the leader of the group's partition (this broker while there is one broker).
  const topic = broker.topic(OFFSETS_TOPIC);
  const leader =
    topic && topic.partitions.length > 0
      ? topic.partitions[offsetsPartitionFor(key, topic.partitions.length)]!.leader
      : -1;
  const node = broker.brokers().find((b) => b.nodeId === leader);
  if (!node) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'The coordinator is not available.');
  return { key, nodeId: node.nodeId, host: node.host, port: node.port, errorCode: ErrorCode.NONE, errorMessage: null };
}

export const findCoordinatorHandler: ApiHandler<typeof FindCoordinatorRequest, typeof FindCoordinatorResponse> = {
  apiKey: ApiKey.FindCoordinator,
  name: 'FindCoordinator',
  minVersion: 0,
  maxVersion: 6,
  async handle(ctx) {
    const { apiVersion, body } = ctx;
    if (apiVersion >= 4) {
      return {
        throttleTimeMs: 0,
        coordinators: await Promise.all(body.coordinatorKeys.map((key) => coordinatorOf(ctx, key, body.keyType))),
      };
    }
    const { key: _key, ...single } = await coordinatorOf(ctx, body.key, body.keyType);
    return { throttleTimeMs: 0, ...single };
  },
};
