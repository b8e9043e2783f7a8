/**
 * AlterConfigs (key 33), v0-2: replaces a topic's whole set of config overrides (the legacy API;
 * IncrementalAlterConfigs is the one to use). Broker configs are static in Skiff.
 */
import { ApiKey } from '../../protocol/api-keys';
import type { ApiHandler } from '../api-handler';
import { alterTopicResources } from './incremental-alter-configs';

interface AlterConfigsRequest {
  resources: { resourceType: number; resourceName: string; configs: { name: string; value: string | null }[] }[];
  validateOnly: boolean;
}

export const alterConfigsHandler: ApiHandler<AlterConfigsRequest> = {
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
