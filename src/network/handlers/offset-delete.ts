/**
 * OffsetDelete (key 47) (KIP-496): deletes a group's committed offsets for some partitions.
 * Refused per partition with GROUP_SUBSCRIBED_TO_TOPIC while a member of a consumer group subscribes
 * to the topic; unknown topics get UNKNOWN_TOPIC_OR_PARTITION; an unknown group GROUP_ID_NOT_FOUND.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../../protocol/schema/offset-delete';
import type { ApiHandler } from '../api-handler';
import { askCoordinator } from './group-routing';

export const offsetDeleteHandler: ApiHandler<typeof OffsetDeleteRequest, typeof OffsetDeleteResponse> = {
  apiKey: ApiKey.OffsetDelete,
  name: 'OffsetDelete',
  minVersion: 0,
  maxVersion: 0,
  async handle(ctx) {
    const { body, broker } = ctx;
    const unknown = new Set<string>();
    const valid: { name: string; partitions: number[] }[] = [];
    for (const t of body.topics) {
      const topic = broker.topic(t.name);
      const partitions = t.partitions
        .map((p) => p.partitionIndex)
        .filter((p) => {
          const ok = topic !== undefined && p >= 0 && p < topic.partitions.length;
          if (!ok) unknown.add(`${t.name}\0${p}`);
          return ok;
        });
      if (partitions.length > 0) valid.push({ name: t.name, partitions });
    }
    const reply = await askCoordinator(ctx, body.groupId, 'group.offset-delete', {
      groupId: body.groupId,
      topics: valid,
    });
    if (!('topics' in reply) || reply.errorCode !== ErrorCode.NONE)
      return { throttleTimeMs: 0, errorCode: reply.errorCode, topics: [] };
    const codes = new Map<string, number>();
    for (const t of reply.topics)
      for (const p of t.partitions) codes.set(`${t.name}\0${p.partitionIndex}`, p.errorCode);
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      topics: body.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          errorCode: unknown.has(`${t.name}\0${p.partitionIndex}`)
            ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            : (codes.get(`${t.name}\0${p.partitionIndex}`) ?? ErrorCode.NONE),
        })),
      })),
    };
  },
};
