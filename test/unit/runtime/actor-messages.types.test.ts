/**
 * Actor messages are typed by the map of the actor they go to (runtime/actor.ts, the messages.ts of
 * each actor folder). The first half of this file is checked by tsc, not run: each `@ts-expect-error`
 * line must fail to compile, so if the typing regresses (a wrong body, a wrong reply, an unknown kind
 * or an id of the wrong actor kind compiles again) tsc reports the unused directive and the build
 * fails. The second half runs: the kinds travel namespaced, a pre-namespacing kind is an unknown one.
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { actorRef } from '../../../src/runtime/actor';
import type { ActorContext, ActorRef, EnvelopeOf, MessageMap } from '../../../src/runtime/actor';
import type { Endpoint } from '../../../src/runtime/runtime';
import { logDirActorId, replicaActorId } from '../../../src/replica/messages';
import type { FetchReply, LogDirMessages, ReplicaMessages } from '../../../src/replica/messages';
import { groupCoordinatorActorId } from '../../../src/group/messages';
import type { GroupCoordinatorMessages, PartitionLeaderMessages } from '../../../src/group/messages';
import { CONTROLLER_ACTOR_ID } from '../../../src/controller/messages';
import type { ControllerMessages } from '../../../src/controller/messages';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { bootReplica, REPLICA } from '../../helpers/sim-harness';
import { recordingLogger } from '../storage/helpers';

// ---- compile-time checks (never called) ---------------------------------------------------------

/** Requests and sends against each map: what compiles and what must not. */
export async function requestsAreChecked(net: Endpoint, ctx: ActorContext): Promise<void> {
  const replica = replicaActorId(0, 'topic-id', 0);
  const fetchBody = { fetchOffset: 0, maxBytes: 1024, minOneBatch: true };
  const describeBody = { version: 5, clientId: '', clientHost: '', request: { groupIds: [] } };

  // The reply type comes from the map: no caller picks it.
  const fetched: FetchReply = await net.request(replica, 'replica.fetch', fetchBody, 1000);
  const image = await net.request(CONTROLLER_ACTOR_ID, 'controller.get-metadata', {}, 1000);
  const clusterId: string = image.clusterId;
  ctx.send(logDirActorId(0, 0), 'log-dir.forget', { topic: 't', partition: 0 });

  // @ts-expect-error a wrong body: fetchOffset is a number
  await net.request(replica, 'replica.fetch', { ...fetchBody, fetchOffset: '0' }, 1000);
  // @ts-expect-error a body missing a field
  await ctx.request(replica, 'replica.produce', { records: null, acks: -1 }, 1000);
  // @ts-expect-error a wrong reply type: a fetch answers a FetchReply, not a ProduceReply's baseOffset
  const wrongReply: { baseOffset: number } = await net.request(replica, 'replica.fetch', fetchBody, 1000);
  // @ts-expect-error an unknown kind
  await net.request(replica, 'replica.no-such-kind', {}, 1000);
  // @ts-expect-error a kind of another actor: the coordinator's describe is not the replica's
  await net.request(replica, 'group.describe', describeBody, 1000);
  // @ts-expect-error the pre-namespacing kind no longer exists
  ctx.send(logDirActorId(0, 0), 'checkpoint', { topic: 't', partition: 0 });
  // @ts-expect-error an explicit reply type cannot be picked (request takes the map and the kind)
  await net.request<FetchReply>(replica, 'replica.fetch', fetchBody, 1000);
  // @ts-expect-error a plain string is no actor ref
  await net.request('replica/0/topic-id/0', 'replica.fetch', fetchBody, 1000);
  // @ts-expect-error an id of the wrong actor kind: the controller takes no replica.fetch
  await net.request(CONTROLLER_ACTOR_ID, 'replica.fetch', fetchBody, 1000);

  void fetched;
  void clusterId;
  void wrongReply;
}

/** Ids of one actor kind are not ids of another. */
export function refsAreChecked(): void {
  const coordinator: ActorRef<GroupCoordinatorMessages> = groupCoordinatorActorId(0, 0);
  // The replica's ref serves where the coordinator needs its partition leader (group/messages.ts).
  const leader: ActorRef<PartitionLeaderMessages> = replicaActorId(0, 'id', 0);
  // @ts-expect-error a log-dir actor is no replica
  const notReplica: ActorRef<ReplicaMessages> = logDirActorId(0, 0);
  // @ts-expect-error a replica is no controller
  const notController: ActorRef<ControllerMessages> = replicaActorId(0, 'id', 0);
  // @ts-expect-error nor a log-dir actor
  const notLogDir: ActorRef<LogDirMessages> = replicaActorId(0, 'id', 0);
  void coordinator;
  void leader;
  void notReplica;
  void notController;
  void notLogDir;
}

/** `receive` narrows the body on `type`, and `reply` takes the reply of the narrowed kind. */
export function receiveIsChecked(envelope: EnvelopeOf<ReplicaMessages>, ctx: ActorContext): void {
  switch (envelope.type) {
    case 'replica.delete-records': {
      const offset: number = envelope.body.offset;
      ctx.reply(envelope, { errorCode: 0, lowWatermark: offset });
      // @ts-expect-error a reply of the wrong shape for this kind
      ctx.reply(envelope, { errorCode: 0 });
      // @ts-expect-error the body of this kind has no fetchOffset
      void envelope.body.fetchOffset;
      return;
    }
    case 'replica.watch':
      ctx.reply(envelope, { ready: true });
      // @ts-expect-error a produce's reply to a watch
      ctx.reply(envelope, { errorCode: 0, baseOffset: 0 });
      return;
    // @ts-expect-error a kind the map does not declare
    case 'replica.no-such-kind':
      return;
    default:
      return;
  }
}

// ---- run-time behaviour -------------------------------------------------------------------------

test('the id helpers keep the ids the broker always used', () => {
  assert.equal(replicaActorId(1, 'AAAA', 3), 'replica/1/AAAA/3');
  assert.equal(logDirActorId(1, 2), 'log-dir/1/2');
  assert.equal(groupCoordinatorActorId(1, 7), 'group-coordinator/1/7');
  assert.equal(CONTROLLER_ACTOR_ID, 'controller');
});

test('a replica answers its namespaced kinds and logs a pre-namespacing kind as unknown', async () => {
  const logger = recordingLogger();
  const { sim, net } = await bootReplica(1, new MemoryFileSystem(), {}, { logger });
  const described = net.request(REPLICA, 'replica.describe', {}, 1000);
  await sim.settle();
  assert.equal((await described).logEndOffset, 0);

  // Only a ref typed with the open MessageMap may send an undeclared kind (as a stray sender could).
  const untyped = actorRef<MessageMap>(REPLICA);
  net.send(untyped, 'describe', {});
  await sim.settle();
  const unknownKinds = logger.lines.filter(
    (l) => l.msg === 'replica ignores unknown message type' && (l.fields as { type?: string }).type === 'describe',
  );
  assert.equal(unknownKinds.length, 1);
  await sim.shutdown();
});
