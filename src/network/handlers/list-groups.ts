/**
 * ListGroups (key 16): every group on this broker's coordinators, filtered by state (v4,
 * KIP-518) and type (v5, KIP-848: all of Skiff's groups are "classic"). A coordinator still loading
 * makes the answer COORDINATOR_LOAD_IN_PROGRESS, as in Kafka.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ListGroupsRequest, ListGroupsResponse } from '../../protocol/schema/list-groups';
import type { ListedGroup } from '../../group/messages';
import type { ApiHandler } from '../api-handler';

export const listGroupsHandler: ApiHandler<typeof ListGroupsRequest, typeof ListGroupsResponse> = {
  apiKey: ApiKey.ListGroups,
  name: 'ListGroups',
  minVersion: 0,
  maxVersion: 5,
  async handle({ body, broker }) {
    const replies = await Promise.all(
      broker
        .groupCoordinators()
        .map((actor) =>
          broker.endpoint
            .request(actor, 'group.list', { statesFilter: body.statesFilter, typesFilter: body.typesFilter }, 30_000)
            .catch(() => ({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] as ListedGroup[] })),
        ),
    );
    const errorCode = replies.find((r) => r.errorCode !== ErrorCode.NONE)?.errorCode ?? ErrorCode.NONE;
    const groups = replies
      .flatMap((r) => r.groups)
      .sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
    return { throttleTimeMs: 0, errorCode, groups };
  },
};
