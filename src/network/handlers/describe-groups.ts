/**
 * DescribeGroups (key 15): state, protocol and members of each group (member metadata and
 * assignment only while Stable, as Kafka's ClassicGroup.describe). An unknown group is Dead; from
 * v6 it also gets GROUP_ID_NOT_FOUND with a message (KIP-1043), before v6 no error.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { DescribeGroupsRequest, DescribeGroupsResponse } from '../../protocol/schema/describe-groups';
import type { DescribedGroup } from '../../group/messages';
import type { ApiHandler } from '../api-handler';
import { askCoordinator } from './group-routing';

const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

export const describeGroupsHandler: ApiHandler<typeof DescribeGroupsRequest, typeof DescribeGroupsResponse> = {
  apiKey: ApiKey.DescribeGroups,
  name: 'DescribeGroups',
  minVersion: 0,
  maxVersion: 6,
  async handle(ctx) {
    const { body, apiVersion } = ctx;
    const groups = await Promise.all(
      body.groups.map(async (groupId) => {
        const reply = await askCoordinator(ctx, groupId, 'group.describe', { groupIds: [groupId] });
        const described: DescribedGroup = Array.isArray(reply)
          ? reply[0]!
          : {
              errorCode: reply.errorCode,
              groupId,
              groupState: 'Dead',
              protocolType: '',
              protocolData: '',
              members: [],
            };
        const notFound = described.errorCode === ErrorCode.GROUP_ID_NOT_FOUND;
        return {
          ...described,
          errorCode: notFound && apiVersion < 6 ? ErrorCode.NONE : described.errorCode,
          errorMessage: notFound && apiVersion >= 6 ? `Group ${groupId} not found.` : null,
          authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
        };
      }),
    );
    return { throttleTimeMs: 0, groups };
  },
};
