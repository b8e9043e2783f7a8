/**
 * CreatePartitions (key 37) (KIP-195): raises a topic's partition count through the
 * controller; the new partitions' replicas serve before the response.
 */
import { ApiKey } from '../../protocol/api-keys';
import type { ApiHandler } from '../api-handler';
import type { CreatePartitionsRequest, CreatePartitionsResponse } from '../../protocol/schema/create-partitions';

export const createPartitionsHandler: ApiHandler<typeof CreatePartitionsRequest, typeof CreatePartitionsResponse> = {
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
