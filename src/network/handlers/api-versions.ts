/**
 * ApiVersions (key 18), v0-3; v3 is flexible, but its response header stays v0 (KIP-511).
 * The list is built from the registered handlers, so it cannot drift from what we serve.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';

export const apiVersionsHandler: ApiHandler = {
  apiKey: ApiKey.ApiVersions,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 4,
  handle({ broker }) {
    return {
      errorCode: ErrorCode.NONE,
      apiKeys: broker.handlers().map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion })),
      throttleTimeMs: 0,
    };
  },
};
