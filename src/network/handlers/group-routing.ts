/**
 * Routing of group requests to the group coordinator actor that owns the group (the one beside the
 * leader of partition abs(hashCode(groupId)) % offsets.topic.num.partitions of __consumer_offsets), shared by the group API
 * handlers. A request the coordinator cannot take gets the coordinator error clients retry on:
 * COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS (the actor answers the
 * last itself while it reads its partition).
 */
import { ErrorCode } from '../../protocol/error-codes';
import type { RequestContext } from '../api-handler';
import type {
  CoordinatorErrorReply,
  GroupClientKind,
  GroupClientMessages,
  GroupClientRequestOf,
} from '../../group/messages';

/** How long the network layer waits for a coordinator beyond the request's own wait (ms). */
const COORDINATOR_SLACK_MS = 30_000;

/** Kafka's clientHost form: the peer address with a leading slash (`/127.0.0.1`). */
export function clientHostOf(remote: string): string {
  const split = remote.lastIndexOf(':');
  return `/${split > 0 ? remote.slice(0, split) : remote}`;
}

/**
 * Sends client request `type` (group/messages.ts) to the coordinator of `groupId`, wrapped with the
 * request header's version, client id and host; resolves with its reply (the result, or a bare
 * error), or with `{errorCode}` when the group has no coordinator here or the coordinator did not
 * answer (COORDINATOR_NOT_AVAILABLE: clients look the coordinator up again). `waitMs` is how long the
 * coordinator may hold the request (JoinGroup waits for the rebalance).
 */
export async function askCoordinator<K extends GroupClientKind>(
  ctx: RequestContext,
  groupId: string,
  type: K,
  request: GroupClientRequestOf<K>,
  waitMs = 0,
): Promise<GroupClientMessages[K]['reply']> {
  const route = ctx.broker.groupCoordinatorFor(groupId);
  if (route.actor === null) return { errorCode: route.errorCode };
  const body: GroupClientMessages[K]['body'] = {
    version: ctx.apiVersion,
    clientId: ctx.clientId ?? '',
    clientHost: clientHostOf(ctx.remote),
    request,
  };
  try {
    // The client requests are a part of the coordinator's map: its ref is a ref to them.
    return await ctx.broker.endpoint.request<GroupClientMessages, K>(
      route.actor,
      type,
      body,
      waitMs + COORDINATOR_SLACK_MS,
    );
  } catch (error) {
    ctx.broker.log.warn({ groupId, type, error: String(error) }, 'group coordinator did not answer');
    return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE };
  }
}

/** Whether a coordinator reply is a bare error (routing failure or loading), not a full result. */
export function isBareError(reply: object): reply is CoordinatorErrorReply {
  return Object.keys(reply).every((k) => k === 'errorCode' || k === 'loading');
}
