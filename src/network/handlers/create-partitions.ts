/**
 * CreatePartitions (key 37), v0-3 (KIP-195): raises a topic's partition count through the
 * controller; the new partitions' replicas serve before the response.
 */
import { ApiKey } from '../../protocol/api-keys';
import type { ApiHandler } from '../api-handler';

interface CreatePartitionsRequest {
  topics: { name: string; count: number; assignments: { brokerIds: number[] }[] | null }[];
  timeoutMs: number;
  validateOnly: boolean;
}

export const createPartitionsHandler: ApiHandler<CreatePartitionsRequest> = {
  apiKey: ApiKey.CreatePartitions,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  async handle({ body, broker }) {
    const results = await broker.createPartitions({
      topics: body.topics.map((t) => ({
        name: t.name,
        count: t.count,
        assignments: t.assignments ? t.assignments.map((a) => a.brokerIds) : null,
      })),
      validateOnly: body.validateOnly,
    });
    return { throttleTimeMs: 0, results };
  },
};
