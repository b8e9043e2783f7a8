/**
 * OffsetFetch (key 9) (Kafka 4 removed v0). v1-7 ask for one group (v2+: null topics = all
 * committed offsets; top-level error from v2, per-partition before); v8+ batch groups (KIP-709);
 * v10 names topics by id. A partition without a committed offset, or an unknown group, answers
 * offset -1 with no error (Kafka's behaviour).
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import { ZERO_UUID } from '../../protocol/primitives';
import type { OffsetFetchRequest, OffsetFetchResponse } from '../../protocol/schema/offset-fetch';
import type { FetchOffsetsRequest, FetchOffsetsResult } from '../../group/messages';
import type { ApiHandler, RequestContext } from '../api-handler';
import { askCoordinator, isBareError } from './group-routing';

async function fetchGroup(
  ctx: RequestContext,
  groupId: string,
  topics: FetchOffsetsRequest['topics'],
): Promise<FetchOffsetsResult> {
  const reply = await askCoordinator(ctx, groupId, 'group.fetch-offsets', { groupId, topics });
  if (!isBareError(reply)) return reply;
  return {
    errorCode: reply.errorCode,
    topics: (topics ?? []).map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((partitionIndex) => ({
        partitionIndex,
        committedOffset: -1,
        committedLeaderEpoch: -1,
        metadata: '',
        errorCode: reply.errorCode,
      })),
    })),
  };
}

export const offsetFetchHandler: ApiHandler<typeof OffsetFetchRequest, typeof OffsetFetchResponse> = {
  apiKey: ApiKey.OffsetFetch,
  name: 'OffsetFetch',
  minVersion: 1,
  maxVersion: 10,
  async handle(ctx) {
    const { body, apiVersion, broker } = ctx;
    if (apiVersion < 8) {
      const result = await fetchGroup(ctx, body.groupId, body.topics);
      const perPartitionErrors = apiVersion < 2;
      return {
        throttleTimeMs: 0,
        errorCode: result.errorCode,
        topics: result.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({
            ...p,
            errorCode: perPartitionErrors && p.errorCode === ErrorCode.NONE ? result.errorCode : p.errorCode,
          })),
        })),
      };
    }
    const useIds = apiVersion >= 10;
    const groups = await Promise.all(
      body.groups.map(async (g) => {
        const unknownIds = new Map<string, number[]>();
        const topics =
          g.topics === null
            ? null
            : g.topics.flatMap((t) => {
                if (!useIds) return [{ name: t.name, partitionIndexes: t.partitionIndexes }];
                const topic = broker.topicById(t.topicId);
                if (!topic) {
                  unknownIds.set(t.topicId, t.partitionIndexes);
                  return [];
                }
                return [{ name: topic.name, partitionIndexes: t.partitionIndexes }];
              });
        const result = await fetchGroup(ctx, g.groupId, topics);
        const answered = result.topics
          .map((t) => ({
            name: t.name,
            topicId: useIds ? (broker.topic(t.name)?.topicId ?? '') : ZERO_UUID,
            partitions: t.partitions,
          }))
          .filter((t) => !useIds || t.topicId !== '');
        for (const [topicId, partitionIndexes] of unknownIds) {
          answered.push({
            name: '',
            topicId,
            partitions: partitionIndexes.map((partitionIndex) => ({
              partitionIndex,
              committedOffset: -1,
              committedLeaderEpoch: -1,
              metadata: '',
              errorCode: ErrorCode.UNKNOWN_TOPIC_ID,
            })),
          });
        }
        return { groupId: g.groupId, errorCode: result.errorCode, topics: answered };
      }),
    );
    return { throttleTimeMs: 0, groups };
  },
};
