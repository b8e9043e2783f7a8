/**
 * FindCoordinator (key 10), v0-4. With one broker, this broker coordinates every group and
 * transactional id. Advertised from v0 because librdkafka 2.0.2 enables LZ4 compression and consumer
 * groups only when FindCoordinator's range contains 0 (its rdkafka_feature.c map). Group
 * coordination itself (JoinGroup...) arrives with the consumer-groups issue.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';

interface FindCoordinatorRequest { key: string; keyType: number; coordinatorKeys: string[] }

export const findCoordinatorHandler: ApiHandler<FindCoordinatorRequest> = {
  apiKey: ApiKey.FindCoordinator,
  name: 'FindCoordinator',
  minVersion: 0,
  maxVersion: 6,
  handle({ apiVersion, body, broker }) {
    const self = broker.brokers().find((b) => b.nodeId === broker.nodeId)!;
    const valid = body.keyType === 0 || body.keyType === 1;
    const errorCode = valid ? ErrorCode.NONE : ErrorCode.INVALID_REQUEST;
    const errorMessage = valid ? null : `Unknown coordinator key type ${body.keyType}`;
    if (apiVersion >= 4) {
      return {
        throttleTimeMs: 0,
        coordinators: body.coordinatorKeys.map((key) => ({
          key, nodeId: valid ? self.nodeId : -1, host: valid ? self.host : '', port: valid ? self.port : -1, errorCode, errorMessage,
        })),
      };
    }
    return { throttleTimeMs: 0, errorCode, errorMessage, nodeId: valid ? self.nodeId : -1, host: valid ? self.host : '', port: valid ? self.port : -1 };
  },
};
