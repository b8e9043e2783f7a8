/**
 * ApiVersions (key 18); v3 is flexible, but its response header stays v0 (KIP-511).
 * The list is built from the registered handlers, so it cannot drift from what we serve.
 *
 * v5 (KIP-1242): a client may name the cluster and node it means to reach. As Kafka 4.4 answers
 * (checked against the fixture): both given and either differs from this broker -> REBOOTSTRAP_REQUIRED;
 * only one of the two given -> INVALID_REQUEST; both absent (null / -1) or both matching -> the list.
 * An error answer carries no API keys.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';
import type {
  ApiVersionsRequest,
  ApiVersionsResponse,
  ApiVersionsRequestData,
} from '../../protocol/schema/api-versions';

export const apiVersionsHandler: ApiHandler<typeof ApiVersionsRequest, typeof ApiVersionsResponse> = {
  apiKey: ApiKey.ApiVersions,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 5,
  handle({ apiVersion, body, broker }) {
    const refused = apiVersion >= 5 ? targetError(body, broker.clusterId, broker.nodeId) : ErrorCode.NONE;
    if (refused !== ErrorCode.NONE) return { errorCode: refused, apiKeys: [], throttleTimeMs: 0 };
    return {
      errorCode: ErrorCode.NONE,
      apiKeys: broker.handlers().map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion })),
      throttleTimeMs: 0,
    };
  },
};

/** KIP-1242's target check: the error for a v5 request naming `clusterId`/`nodeId`, or NONE. */
function targetError(body: ApiVersionsRequestData, clusterId: string, nodeId: number): number {
  const wantedCluster = body.clusterId ?? null;
  const wantedNode = body.nodeId ?? -1;
  if (wantedCluster === null && wantedNode === -1) return ErrorCode.NONE;
  if (wantedCluster === null || wantedNode === -1) return ErrorCode.INVALID_REQUEST;
  return wantedCluster === clusterId && wantedNode === nodeId ? ErrorCode.NONE : ErrorCode.REBOOTSTRAP_REQUIRED;
}
