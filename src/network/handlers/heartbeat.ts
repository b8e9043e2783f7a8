/**
 * Heartbeat (key 12): keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin.
 */
import { ApiKey } from '../../protocol/api-keys';
import type { HeartbeatRequest, HeartbeatResponse } from '../../protocol/schema/heartbeat';
import type { ApiHandler } from '../api-handler';
import { askCoordinator } from './group-routing';

export const heartbeatHandler: ApiHandler<typeof HeartbeatRequest, typeof HeartbeatResponse> = {
  apiKey: ApiKey.Heartbeat,
  name: 'Heartbeat',
  minVersion: 0,
  maxVersion: 4,
  async handle(ctx) {
    const reply = await askCoordinator(ctx, ctx.body.groupId, 'group.heartbeat', ctx.body);
    return { throttleTimeMs: 0, errorCode: reply.errorCode };
  },
};
