/**
 * SyncGroup (key 14): members fetch their assignment; the leader's request carries every
 * member's (opaque) assignment, which the coordinator stores in __consumer_offsets before anyone
 * is answered. v5 checks ProtocolType/ProtocolName (INCONSISTENT_GROUP_PROTOCOL; KIP-559).
 */
import { ApiKey } from '../../protocol/api-keys';
import type { SyncGroupRequest, SyncGroupResponse } from '../../protocol/schema/sync-group';
import type { ApiHandler } from '../api-handler';
import { askCoordinator, isBareError } from './group-routing';

/** How long a SyncGroup may wait for the leader's assignment (bounded by the rebalance timeout there). */
const SYNC_WAIT_MS = 5 * 60_000;

export const syncGroupHandler: ApiHandler<typeof SyncGroupRequest, typeof SyncGroupResponse> = {
  apiKey: ApiKey.SyncGroup,
  name: 'SyncGroup',
  minVersion: 0,
  maxVersion: 5,
  async handle(ctx) {
    const reply = await askCoordinator(ctx, ctx.body.groupId, 'group.sync', ctx.body, SYNC_WAIT_MS);
    const result = isBareError(reply)
      ? { errorCode: reply.errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) }
      : reply;
    return { throttleTimeMs: 0, ...result };
  },
};
