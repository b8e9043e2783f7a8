/**
 * IncrementalAlterConfigs (key 44) (KIP-339): SET, DELETE, APPEND and SUBTRACT on a topic's
 * config overrides, through the controller; replicas apply the new effective config before the
 * response. Invalid values get INVALID_CONFIG with the reason. Broker configs are static in Skiff.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';
import type {
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse,
} from '../../protocol/schema/incremental-alter-configs';
import type { BrokerContext } from '../broker-context';
import { ResourceType } from './config-resources';

const OPERATIONS = ['set', 'delete', 'append', 'subtract'] as const;

type Op = { name: string; op: (typeof OPERATIONS)[number]; value: string | null };

/** Applies config ops to topic resources; answers every resource in request order. */
export async function alterTopicResources(
  broker: BrokerContext,
  resources: { resourceType: number; resourceName: string; ops: Op[] }[],
  incremental: boolean,
  validateOnly: boolean,
) {
  const answers = new Map<number, { errorCode: number; errorMessage: string | null }>();
  const topics: { index: number; topic: string; ops: Op[] }[] = [];
  resources.forEach((r, index) => {
    if (r.resourceType === ResourceType.BROKER) {
      answers.set(index, {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: 'Skiff has no dynamic broker configs: set them in server.properties or with --override',
      });
    } else if (r.resourceType !== ResourceType.TOPIC) {
      answers.set(index, {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `Unsupported resource type ${r.resourceType}`,
      });
    } else if (topics.some((t) => t.topic === r.resourceName)) {
      answers.set(index, {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `Duplicate resource ${r.resourceName}`,
      });
    } else {
      topics.push({ index, topic: r.resourceName, ops: r.ops });
    }
  });
  if (topics.length) {
    const results = await broker.alterTopicConfigs({
      resources: topics.map((t) => ({ topic: t.topic, ops: t.ops })),
      incremental,
      validateOnly,
    });
    topics.forEach((t, i) =>
      answers.set(t.index, { errorCode: results[i]!.errorCode, errorMessage: results[i]!.errorMessage }),
    );
  }
  return resources.map((r, index) => ({
    ...answers.get(index)!,
    resourceType: r.resourceType,
    resourceName: r.resourceName,
  }));
}

export const incrementalAlterConfigsHandler: ApiHandler<
  typeof IncrementalAlterConfigsRequest,
  typeof IncrementalAlterConfigsResponse
> = {
  apiKey: ApiKey.IncrementalAlterConfigs,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  async handle({ body, broker }) {
    const invalid = body.resources.findIndex((r) => r.configs.some((c) => OPERATIONS[c.configOperation] === undefined));
    const resources = body.resources.map((r) => ({
      resourceType: r.resourceType,
      resourceName: r.resourceName,
      ops: r.configs.map((c) => ({ name: c.name, op: OPERATIONS[c.configOperation] ?? 'set', value: c.value })),
    }));
    if (invalid >= 0) {
      return {
        throttleTimeMs: 0,
        responses: body.resources.map((r, i) => ({
          errorCode: i === invalid ? ErrorCode.INVALID_REQUEST : ErrorCode.NONE,
          errorMessage: i === invalid ? 'Unknown config operation' : null,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
        })),
      };
    }
    return { throttleTimeMs: 0, responses: await alterTopicResources(broker, resources, true, body.validateOnly) };
  },
};
