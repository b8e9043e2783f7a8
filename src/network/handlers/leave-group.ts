/**
 * LeaveGroup (key 13). v0-2 name one member; v3+ a batch of members, static ones by
 * group.instance.id (KIP-345). As in Kafka's LeaveGroupResponse, v0-2 carry the first member error
 * as the top-level error.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { LeaveGroupRequest, LeaveGroupResponse } from '../../protocol/schema/leave-group';
import type { LeaveResult } from '../../group/messages';
import type { ApiHandler } from '../api-handler';
import { askCoordinator, isBareError } from './group-routing';

export const leaveGroupHandler: ApiHandler<typeof LeaveGroupRequest, typeof LeaveGroupResponse> = {
  apiKey: ApiKey.LeaveGroup,
  name: 'LeaveGroup',
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx) {
    const { body, apiVersion } = ctx;
    const members = apiVersion >= 3 ? body.members : [{ memberId: body.memberId, groupInstanceId: null }];
    const reply = await askCoordinator(ctx, body.groupId, 'group.leave', { groupId: body.groupId, members });
    const result: LeaveResult = isBareError(reply) ? { errorCode: reply.errorCode, members: [] } : reply;
    if (apiVersion >= 3) return { throttleTimeMs: 0, errorCode: result.errorCode, members: result.members };
    const memberError = result.members.find((m) => m.errorCode !== ErrorCode.NONE)?.errorCode ?? ErrorCode.NONE;
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode !== ErrorCode.NONE ? result.errorCode : memberError,
      members: [],
    };
  },
};
