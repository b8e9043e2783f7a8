/**
 * What a broker (and the tests) see of a runtime: spawning actors on a pool, endpoints for code that is
 * not an actor (the network thread), and shutdown. Two implementations share this contract:
 * `ThreadRuntime` (worker threads + MessagePorts, production) and `SimRuntime` (one thread, seeded
 * scheduler, virtual clock, in-memory disk; tests and the deterministic simulation).
 */
import type { ActorId, ActorRef, Envelope, MessageMap, ReplyOf } from './actor';
import type { Clock, Timers } from '../io/clock';
import type { Placement } from './placement';

export type { Placement } from './placement';

/**
 * A mailbox owned by non-actor code (the network layer of broker N): it can send, request and
 * reply like an actor, and receives envelopes addressed to its id through `onMessage`.
 */
export interface Endpoint {
  readonly id: ActorId;
  /** The runtime's clock (virtual time in the simulation), for deadlines kept by non-actor code. */
  readonly clock: Clock;
  /** Timers on the endpoint's thread, driven by the same clock (cancelled when the runtime shuts down). */
  readonly timers: Timers;
  /** Fire-and-forget message of a kind `to`'s map declares (as ActorContext.send). */
  send<M extends MessageMap, K extends keyof M & string>(to: ActorRef<M>, type: K, body: M[K]['body']): void;
  /** Resolves with the reply `to`'s map declares for `type`; rejects with RequestTimeoutError after `timeoutMs`. */
  request<M extends MessageMap, K extends keyof M & string>(
    to: ActorRef<M>,
    type: K,
    body: M[K]['body'],
    timeoutMs: number,
  ): Promise<M[K]['reply']>;
  /** Answers a request envelope with the reply its kind declares (as ActorContext.reply). */
  reply<E extends Envelope>(request: E, body: ReplyOf<E>): void;
  /** Handler for non-reply envelopes sent to this endpoint. */
  onMessage(handler: (envelope: Envelope) => void): void;
  close(): void;
}

/** What {@link Runtime.onBrokerDown} handlers hear: the broker, the actors that were on it, and why. */
export interface BrokerDownInfo {
  brokerId: number;
  /** The actors that were placed on the broker's pool when it crashed (sorted); all of them are gone. */
  actorIds: ActorId[];
  reason: string;
}

export interface Runtime {
  /**
   * Starts actor `id` of registered `kind` with `args` (msgpack-encodable) on `placement`; resolves
   * once its `start` has finished (rejects with the error `start` threw). A replica actor gets a
   * worker of its own while the pool has a free one, else the least-loaded worker.
   */
  spawn(id: ActorId, kind: string, args: unknown, placement: Placement): Promise<void>;
  /** Orderly stop of one actor (its `stop` runs); resolves when done. Unknown ids resolve at once. */
  stopActor(id: ActorId): Promise<void>;
  /** Creates an endpoint for non-actor code. */
  endpoint(id: ActorId): Endpoint;
  /**
   * Called when a worker crashes, after the supervisor has restarted its actors (same ids, kinds and
   * args, so the controller replays its metadata log and replicas recover their logs).
   */
  onWorkerRestart(handler: (info: { actorIds: ActorId[]; error: string }) => void): void;
  /**
   * Crashes broker `brokerId` as a dying broker process would (fault injection, the cluster's "crash
   * broker"): every worker of its pool ends at once, no actor's `stop` runs, nothing is restarted, and
   * its actors are forgotten (their in-memory state, queued messages and timers are lost; what is on
   * disk stays). Requests other actors and endpoints had pending to them fail at once with
   * ActorUnavailableError(`crashed`); later ones fail with `unknown-actor`. Then the
   * {@link onBrokerDown} handlers run. Resolves with the ids that were on the broker. A later `spawn` on
   * the pool starts fresh workers (restarting a broker is spawning its actors again). Throws for an
   * unknown broker.
   */
  crashBroker(brokerId: number, reason?: string): Promise<ActorId[]>;
  /** Called after {@link crashBroker} has taken a broker down (the controller fences it at once). */
  onBrokerDown(handler: (info: BrokerDownInfo) => void): void;
  /** Stops every actor (their `stop` runs), then the workers. */
  shutdown(): Promise<void>;
}
