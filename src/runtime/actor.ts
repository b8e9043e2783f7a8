/**
 * The actor contract: what every actor (controller, replica, log-dir checkpointer, later group
 * coordinators) may touch. Actor code gets time, timers, randomness, storage and messaging from its
 * {@link ActorContext} and never from Node directly (STYLE.md habit 6), so the same actor runs on a
 * worker thread (production runtime) and inside the single-threaded seeded simulation runtime.
 */
import type { Clock, Timers } from '../io/clock';
import type { FileSystem } from '../io/file-system';
import type { Logger } from '../io/logger';
import type { Random } from '../io/random';
import type { CpuJobs } from './cpu-jobs';

/** An actor's address, unique within a runtime: e.g. `controller`, `replica/0/orders-3`, `net/0`. */
export type ActorId = string;

/**
 * A message between actors. `body` is any msgpack-encodable value; Buffers inside it travel as
 * msgpack `bin` and arrive as views over the envelope's bytes (one copy in, none out).
 * `corr` is set on requests (and echoed on their reply); `replyTo` names the requester.
 */
export interface Envelope {
  to: ActorId;
  from: ActorId;
  /** Message type, e.g. `produce`, `fetch`, `create-topics`; replies use `reply`. */
  type: string;
  body: unknown;
  /** Correlation id of a request (set by {@link ActorContext.request}), echoed in the reply. */
  corr?: number;
  /** True on a reply envelope. */
  isReply?: boolean;
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
  /** Fire-and-forget message. */
  send(to: ActorId, type: string, body: unknown): void;
  /**
   * Request/reply: resolves with the reply body, rejects with {@link RequestTimeoutError} after
   * `timeoutMs` (measured on the runtime's clock).
   */
  request<T = unknown>(to: ActorId, type: string, body: unknown, timeoutMs: number): Promise<T>;
  /** Answers a request envelope (no-op if `request.corr` is undefined). */
  reply(request: Envelope, body: unknown): void;
  /** Stops this actor after the current message: `stop()` is called and it receives nothing more. */
  exit(): void;
}

/**
 * An actor. `start` runs once before any message; `receive` handles one message at a time (a returned
 * promise does NOT block the mailbox: actors that need ordering keep their own queues). `stop` runs on
 * orderly shutdown (flush, checkpoint, close files).
 */
export interface Actor {
  start?(ctx: ActorContext): void | Promise<void>;
  receive(envelope: Envelope, ctx: ActorContext): void | Promise<void>;
  stop?(ctx: ActorContext): void | Promise<void>;
}

/** Builds an actor from its spawn arguments (msgpack-encodable). Registered by kind name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each factory types its own args; `unknown` would reject them all (parameters are contravariant)
export type ActorFactory = (args: any) => Actor;
