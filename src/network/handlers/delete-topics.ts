/**
 * DeleteTopics (key 20) (topic names up to v5; names or topic IDs from v6), through the
 * controller; the topic's replicas close and remove their partition directories.
 */
import { ApiKey } from '../../protocol/api-keys';
import type { ApiHandler } from '../api-handler';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../../protocol/schema/delete-topics';

export const deleteTopicsHandler: ApiHandler<typeof DeleteTopicsRequest, typeof DeleteTopicsResponse> = {
  apiKey: ApiKey.DeleteTopics,
  name: 'DeleteTopics',
  minVersion: 0,
  maxVersion: 6,
  async handle({ apiVersion, body, broker }) {
    const requested =
      apiVersion >= 6
        ? body.topics.map((t) => ({ name: t.name, topicId: t.topicId === 'AAAAAAAAAAAAAAAAAAAAAA' ? null : t.topicId }))
        : body.topicNames.map((name) => ({ name, topicId: null }));
    const results = await broker.deleteTopics(requested);
    return {
      throttleTimeMs: 0,
      responses: results.map((r) => ({
        name: r.name,
        topicId: r.topicId,
        errorCode: r.errorCode,
        errorMessage: r.errorMessage,
      })),
    };
  },
};
