/**
 * JoinGroup (key 11) (Kafka 4.1+ serves v0-1 again, KAFKA-19444). Held by the group's
 * coordinator until the join phase completes (src/group/group-coordinator-actor.ts). v4+ members
 * without an id get MEMBER_ID_REQUIRED and rejoin with the id handed out (KIP-394); v5+ static
 * membership (KIP-345); v7+ ProtocolType/ProtocolName nullable in the response (KIP-559).
 */
import { ApiKey } from '../../protocol/api-keys';
import type { JoinGroupRequest, JoinGroupResponse } from '../../protocol/schema/join-group';
import type { JoinResult } from '../../group/messages';
import type { ApiHandler } from '../api-handler';
import { askCoordinator, isBareError } from './group-routing';

export const joinGroupHandler: ApiHandler<typeof JoinGroupRequest, typeof JoinGroupResponse> = {
  apiKey: ApiKey.JoinGroup,
  name: 'JoinGroup',
  minVersion: 0,
  maxVersion: 9,
  async handle(ctx) {
    const { body, apiVersion } = ctx;
    const waitMs =
      Math.max(body.rebalanceTimeoutMs, body.sessionTimeoutMs) + ctx.broker.config.groupInitialRebalanceDelayMs;
    const reply = await askCoordinator(ctx, body.groupId, 'group.join', body, waitMs);
    const result: JoinResult = isBareError(reply)
      ? {
          errorCode: reply.errorCode,
          generationId: -1,
          protocolType: null,
          protocolName: null,
          leader: '',
          memberId: body.memberId,
          skipAssignment: false,
          members: [],
        }
      : reply;
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      generationId: result.generationId,
      protocolType: result.protocolType,
      protocolName: apiVersion >= 7 ? result.protocolName : (result.protocolName ?? ''),
      leader: result.leader,
      skipAssignment: result.skipAssignment,
      memberId: result.memberId,
      members: result.members,
    };
  },
};
