/**
 * AlterConfigs (key 33): replaces a topic's whole set of config overrides (the legacy API;
 * IncrementalAlterConfigs is the one to use). Broker configs are static in Skiff.
 */
import { ApiKey } from '../../protocol/api-keys';
import type { ApiHandler } from '../api-handler';
import type { AlterConfigsRequest, AlterConfigsResponse } from '../../protocol/schema/alter-configs';
import { alterTopicResources } from './incremental-alter-configs';

export const alterConfigsHandler: ApiHandler<typeof AlterConfigsRequest, typeof AlterConfigsResponse> = {
  apiKey: ApiKey.AlterConfigs,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  async handle({ body, broker }) {
    const responses = await alterTopicResources(
      broker,
      body.resources.map((r) => ({
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        ops: r.configs.map((c) => ({ name: c.name, op: 'set' as const, value: c.value })),
      })),
      false,
      body.validateOnly,
    );
    return { throttleTimeMs: 0, responses };
  },
};
