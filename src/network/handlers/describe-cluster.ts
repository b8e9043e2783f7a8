/**
 * DescribeCluster (key 60) (KIP-700): the cluster id, controller and brokers that Metadata
 * v11+ no longer carries, for admin clients.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';
import type { DescribeClusterRequest, DescribeClusterResponse } from '../../protocol/schema/describe-cluster';

export const describeClusterHandler: ApiHandler<typeof DescribeClusterRequest, typeof DescribeClusterResponse> = {
  apiKey: ApiKey.DescribeCluster,
  name: 'DescribeCluster',
  minVersion: 0,
  maxVersion: 2,
  handle({ body, broker }) {
    if (body.endpointType !== 1) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
        errorMessage: 'Only broker endpoints (type 1) are served',
        endpointType: body.endpointType,
        clusterId: broker.clusterId,
        controllerId: -1,
        brokers: [],
      };
    }
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      endpointType: 1,
      clusterId: broker.clusterId,
      controllerId: broker.controllerId,
      brokers: broker.brokers().map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: null })),
      clusterAuthorizedOperations: -2147483648,
    };
  },
};
