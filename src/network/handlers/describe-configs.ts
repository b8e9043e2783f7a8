/**
 * DescribeConfigs (key 32): topic configs with their effective values and sources (KIP-226's
 * synonyms from v1, types and documentation from v3), and this broker's static configs.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';
import type { DescribeConfigsRequest, DescribeConfigsResponse } from '../../protocol/schema/describe-configs';
import { describeBrokerConfigs, describeTopicConfigs, ResourceType } from './config-resources';

export const describeConfigsHandler: ApiHandler<typeof DescribeConfigsRequest, typeof DescribeConfigsResponse> = {
  apiKey: ApiKey.DescribeConfigs,
  name: 'DescribeConfigs',
  minVersion: 0,
  maxVersion: 4,
  handle({ body, broker }) {
    const results = body.resources.map((resource) => {
      const base = { resourceType: resource.resourceType, resourceName: resource.resourceName };
      if (resource.resourceType === ResourceType.TOPIC) {
        const topic = broker.topic(resource.resourceName);
        if (!topic)
          return {
            ...base,
            errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            errorMessage: `Topic ${resource.resourceName} does not exist`,
            configs: [],
          };
        return {
          ...base,
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          configs: withDocs(
            describeTopicConfigs(topic, broker, resource.configurationKeys, body.includeSynonyms),
            body.includeDocumentation,
          ),
        };
      }
      if (resource.resourceType === ResourceType.BROKER) {
        if (resource.resourceName !== '' && resource.resourceName !== String(broker.nodeId)) {
          return {
            ...base,
            errorCode: ErrorCode.INVALID_REQUEST,
            errorMessage: `Unexpected broker id, expected ${broker.nodeId} or empty string, but received ${resource.resourceName}`,
            configs: [],
          };
        }
        return {
          ...base,
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          configs: withDocs(
            describeBrokerConfigs(broker, resource.configurationKeys, body.includeSynonyms),
            body.includeDocumentation,
          ),
        };
      }
      return {
        ...base,
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `Unsupported resource type ${resource.resourceType}`,
        configs: [],
      };
    });
    return { throttleTimeMs: 0, results };
  },
};

function withDocs<T extends { documentation: string | null }>(configs: T[], include: boolean): T[] {
  return include ? configs : configs.map((c) => ({ ...c, documentation: null }));
}
