/**
 * DeleteGroups (key 42): removes Empty groups with their committed offsets (tombstones in
 * __consumer_offsets); a group with members gets NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.
 * v3 adds an error message (Kafka 4.4).
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode, errorName } from '../../protocol/error-codes';
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../../protocol/schema/delete-groups';
import type { ApiHandler } from '../api-handler';
import { askCoordinator } from './group-routing';

const MESSAGES: Record<number, (groupId: string) => string> = {
  [ErrorCode.GROUP_ID_NOT_FOUND]: (g) => `Group ${g} not found.`,
  [ErrorCode.NON_EMPTY_GROUP]: (g) => `Group ${g} is not empty.`,
};

export const deleteGroupsHandler: ApiHandler<typeof DeleteGroupsRequest, typeof DeleteGroupsResponse> = {
  apiKey: ApiKey.DeleteGroups,
  name: 'DeleteGroups',
  minVersion: 0,
  maxVersion: 3,
  async handle(ctx) {
    const results = await Promise.all(
      ctx.body.groupsNames.map(async (groupId) => {
        const reply = await askCoordinator(ctx, groupId, 'group.delete-groups', {
          groupIds: [groupId],
        });
        const errorCode = Array.isArray(reply) ? reply[0]!.errorCode : reply.errorCode;
        const errorMessage =
          errorCode === ErrorCode.NONE ? null : (MESSAGES[errorCode]?.(groupId) ?? errorName(errorCode));
        return { groupId, errorCode, errorMessage };
      }),
    );
    return { throttleTimeMs: 0, results };
  },
};
