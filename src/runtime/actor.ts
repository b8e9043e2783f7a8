/**
 * The actor contract: what every actor (controller, replica, log-dir checkpointer, group coordinator)
 * may touch. Actor code gets time, timers, randomness, storage and messaging from its
 * {@link ActorContext} and never from Node directly (STYLE.md habit 6), so the same actor runs on a
 * worker thread (production runtime) and inside the single-threaded seeded simulation runtime.
 *
 * Messages are typed by the actor that takes them: each actor kind declares a {@link MessageMap}
 * (kind -> {body, reply}) in its folder's `messages.ts`, and hands out its ids as an
 * {@link ActorRef} of that map. `send`, `request` and `reply` check the kind, the body and the reply
 * against the map of the target; `receive` gets an {@link EnvelopeOf} its map, a union that a
 * `switch (envelope.type)` narrows. This is type-level only: on the wire (envelope.ts) the kind is
 * still a string and the body any msgpack value. Kinds are namespaced by actor (`replica.fetch`,
 * `group.describe`), so one string never means two things.
 */
import type { Clock, Timers } from '../io/clock';
import type { FileSystem } from '../io/file-system';
import type { Logger } from '../io/logger';
import type { Random } from '../io/random';
import type { CpuJobs } from './cpu-jobs';
import type { Placement } from './placement';

/** An actor's address, unique within a runtime: e.g. `controller`, `replica/0/<topicId>/3`, `net/0`. */
export type ActorId = string;

/**
 * What an actor kind takes: message kind -> the body it carries and the reply it gets. A message only
 * ever sent (`send`) declares the reply its receiver would give to a request (usually `void`). Declared
 * as a `type` (an `interface` has no implicit index signature and does not satisfy this constraint).
 */
export type MessageMap = Record<string, { body: unknown; reply: unknown }>;

declare const messagesOf: unique symbol;
declare const replyOf: unique symbol;

/**
 * An actor id that carries, at type level only, the {@link MessageMap} of the actor it names. Made by
 * the id helpers in each actor's folder (e.g. `replicaActorId`), so a message to an id of the wrong
 * actor kind does not compile. At run time it is the plain id string.
 */
export type ActorRef<M extends MessageMap> = ActorId & { readonly [messagesOf]: M };

/** Types `id` as an actor of map `M`: for the id helpers of each actor's folder, nothing else. */
export function actorRef<M extends MessageMap>(id: ActorId): ActorRef<M> {
  return id as ActorRef<M>;
}

/**
 * A message between actors. `body` is any msgpack-encodable value; Buffers inside it travel as
 * msgpack `bin` and arrive as views over the envelope's bytes (one copy in, none out).
 * `corr` is set on requests (and echoed on their reply); `replyTo` names the requester.
 */
export interface Envelope {
  to: ActorId;
  from: ActorId;
  /** Message kind, e.g. `replica.produce`, `controller.create-topics` (the target's map); replies use `reply`. */
  type: string;
  body: unknown;
  /** Correlation id of a request (set by {@link ActorContext.request}), echoed in the reply. */
  corr?: number;
  /** True on a reply envelope. */
  isReply?: boolean;
}

/**
 * An envelope of kind `K` with body `B`, answered with `R`. `R` is a type-level tag only (no such
 * field exists at run time): {@link ActorContext.reply} reads it to check the reply.
 */
export interface MessageEnvelope<K extends string, B, R> extends Envelope {
  type: K;
  body: B;
  readonly [replyOf]?: () => R;
}

/**
 * The envelopes an actor of map `M` receives (of kinds `K`, default all): a union discriminated on
 * `type`, so `switch (envelope.type)` narrows `body` and the reply {@link ActorContext.reply} takes.
 */
export type EnvelopeOf<M extends MessageMap, K extends keyof M & string = keyof M & string> = {
  [P in K]: MessageEnvelope<P, M[P]['body'], M[P]['reply']>;
}[K];

/** The reply an envelope of {@link EnvelopeOf} takes; `unknown` for an untyped {@link Envelope}. */
export type ReplyOf<E extends Envelope> = E extends { readonly [replyOf]?: () => infer R } ? R : unknown;

/**
 * The error a spawn rejects with when the id is taken: code `EEXIST`, which survives the worker
 * boundary as a start error's errno does, so an actor respawning its children after its own restart
 * can tell "already running" apart from a failed start ({@link isActorExistsError}).
 */
export function actorExistsError(id: ActorId): Error {
  const error: Error & { code?: string } = new Error(`actor ${id} already exists`);
  error.code = 'EEXIST';
  return error;
}

/** True for the rejection of a spawn whose id is taken (see {@link actorExistsError}). */
export function isActorExistsError(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EEXIST';
}

/** Raised (as a rejected promise) when a request gets no reply within its timeout. */
export class RequestTimeoutError extends Error {
  constructor(
    readonly to: ActorId,
    readonly type: string,
    readonly timeoutMs: number,
  ) {
    super(`request ${type} to ${to} timed out after ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}

/**
 * Raised (as a rejected promise) when a request can get no reply because its target is not there:
 * `unknown-actor` (no such id), `stopped` (it stopped or exited before answering), `crashed` (its
 * worker died, or the simulation crashed it), `closed` (the requesting endpoint was closed). Unlike a
 * timeout it comes as soon as the runtime knows. The request may or may not have been processed.
 */
export class ActorUnavailableError extends Error {
  constructor(
    readonly to: ActorId,
    readonly type: string,
    readonly reason: 'unknown-actor' | 'stopped' | 'crashed' | 'closed',
  ) {
    super(`request ${type} to ${to} failed: ${reason}`);
    this.name = 'ActorUnavailableError';
  }
}

/** What the runtime gives an actor. */
export interface ActorContext {
  readonly self: ActorId;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly random: Random;
  /** Synchronous file system (blocks only this actor's thread). */
  readonly fs: FileSystem;
  readonly log: Logger;
  /**
   * Stateless CPU jobs run off this actor's turn (cpu-jobs.ts): a piscina pool in production, inline
   * in the simulation. The result arrives as a promise; the actor re-checks its state when it does.
   */
  readonly cpu: CpuJobs;
  /** Fire-and-forget message of a kind `to`'s map declares. */
  send<M extends MessageMap, K extends keyof M & string>(to: ActorRef<M>, type: K, body: M[K]['body']): void;
  /**
   * Request/reply: resolves with the reply `to`'s map declares for `type`, rejects with
   * {@link RequestTimeoutError} after `timeoutMs` (measured on the runtime's clock).
   */
  request<M extends MessageMap, K extends keyof M & string>(
    to: ActorRef<M>,
    type: K,
    body: M[K]['body'],
    timeoutMs: number,
  ): Promise<M[K]['reply']>;
  /** Answers a request envelope with the reply its kind declares (no-op if `request.corr` is undefined). */
  reply<E extends Envelope>(request: E, body: ReplyOf<E>): void;
  /** Stops this actor after the current message: `stop()` is called and it receives nothing more. */
  exit(): void;
  /**
   * Starts actor `id` of registered `kind` with `args` (msgpack-encodable) on `placement`, as
   * `Runtime.spawn` does (a per-broker replica manager spawns its replicas and group coordinators this
   * way): resolves once the new actor's `start` has finished; rejects with the error `start` threw
   * (an Error with the same message and, for a file-system error, the same errno `code`: `ENOSPC`,
   * `EIO`), or when `id` is already in use, `kind` is unknown, the pool does not exist or the runtime
   * is shutting down. The new actor is not linked to this one: it outlives it. A stopped actor's call
   * never settles.
   */
  spawn(id: ActorId, kind: string, args: unknown, placement: Placement): Promise<void>;
  /**
   * Orderly stop of actor `id` (its `stop` runs), as `Runtime.stopActor`: resolves when done; an
   * unknown id resolves at once. To stop itself an actor calls {@link exit} instead.
   */
  stopActor(id: ActorId): Promise<void>;
}

/**
 * An actor taking the messages of map `M`. `start` runs once before any message; `receive` handles one
 * message at a time (a returned promise does NOT block the mailbox: actors that need ordering keep
 * their own queues). The runtime delivers whatever kind was sent to the id, so `receive`'s `default`
 * branch still handles an unknown kind. `stop` runs on orderly shutdown (flush, checkpoint, close files).
 */
export interface Actor<M extends MessageMap = MessageMap> {
  start?(ctx: ActorContext): void | Promise<void>;
  receive(envelope: EnvelopeOf<M>, ctx: ActorContext): void | Promise<void>;
  stop?(ctx: ActorContext): void | Promise<void>;
}

/** Builds an actor from its spawn arguments (msgpack-encodable). Registered by kind name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each factory types its own args; `unknown` would reject them all (parameters are contravariant)
export type ActorFactory = (args: any) => Actor;
