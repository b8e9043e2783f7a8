/**
 * Messages between the main thread (the hub: {@link ThreadRuntime}) and a worker ({@link WorkerHost}),
 * sent with postMessage, and between two workers over a direct MessageChannel ({@link DirectMessage}).
 * Envelopes travel as exact-size ArrayBuffers in the transfer list; their routing fields ride next to
 * them in clear so the hub forwards the bytes without decoding them.
 */
import type { MessagePort } from 'node:worker_threads';
import type { ActorId } from './actor';
import type { ModuleRef } from './module-ref';
import type { Placement } from './placement';

/** Why a request could not be delivered (mirrors ActorUnavailableError's reasons). */
export type BounceReason = 'unknown-actor' | 'stopped' | 'crashed';

/** Main thread → worker. */
export type ToWorker =
  /** Start actor `id`: load `ref`, call it with the decoded `args`, run `start`. Answered by `spawned`. */
  | { k: 'spawn'; reqId: number; id: ActorId; kind: string; ref: ModuleRef; args: Uint8Array }
  /** An envelope for local actor `to` (bytes transferred). */
  | { k: 'env'; to: ActorId; buf: ArrayBuffer }
  /** Orderly stop of `id` (its `stop` runs). Answered by `stopped`. */
  | { k: 'stop'; reqId: number; id: ActorId }
  /** Request `corr` that local actor `requester` sent to `to` cannot be answered. */
  | { k: 'bounce'; requester: ActorId; corr: number; to: ActorId; reason: BounceReason }
  /**
   * These actors' worker died: fail the requests local actors have pending to them, and forget their
   * routes. `peers`: the serials of the workers that died; their direct channels are closed.
   */
  | { k: 'crashed'; ids: ActorId[]; peers: number[] }
  /**
   * One end of a direct MessageChannel to worker incarnation `peer` (the other end went to the peer).
   * Both ends carry {@link DirectMessage}s.
   */
  | { k: 'link'; peer: number; port: MessagePort }
  /**
   * An envelope this worker sent through the hub to actor `to`, handed back (bytes transferred): `to`
   * lives on worker `peer`, so this worker posts it on its direct channel there and sends `to`'s later
   * envelopes that way. `barrier`: how many messages the hub had posted to the peer by then (so the
   * peer holds what comes over the channel until it has taken those, its spawn of `to` among them).
   * `upTo`: how many of this worker's messages the hub has taken so far (module comment of
   * thread-runtime.ts: it tells when no envelope to `to` is still on its way through the hub).
   */
  | { k: 'reroute'; to: ActorId; buf: ArrayBuffer; peer: number; barrier: number; upTo: number }
  /** These actors stopped or moved: forget their direct routes and send to them through the hub again. */
  | { k: 'unroute'; ids: ActorId[] }
  /** Fault injection and tests: crash this worker as an uncaught actor error would. */
  | { k: 'crash'; error: string }
  /**
   * Answered by `pong` once the worker handles it: it has loaded its preloaded modules, which it
   * does before it listens (ThreadRuntime.prestartWorkers waits for this).
   */
  | { k: 'ping'; reqId: number }
  /**
   * The outcome of this worker's `spawn-request` or `stop-request` `reqId`: `error` (and the errno
   * `code` of a file-system error) if it failed.
   */
  | { k: 'answer'; reqId: number; error?: string; code?: string }
  /** Messages posted in one turn, in order: handled as if each had come alone ({@link PostBatcher}). */
  | { k: 'batch'; messages: ToWorker[] };

/** Worker → main thread. */
export type FromWorker =
  /** An envelope for an actor on another worker or an endpoint (bytes transferred). */
  | { k: 'env'; to: ActorId; from: ActorId; corr: number | null; isReply: boolean; buf: ArrayBuffer }
  /** `code`: the errno of a file-system error the actor's start threw (`ENOSPC`, ...), so the broker can tell a disk failure apart. */
  | { k: 'spawned'; reqId: number; error?: string; code?: string }
  | { k: 'stopped'; reqId: number; error?: string }
  /** The answer to `ping` `reqId`. */
  | { k: 'pong'; reqId: number }
  /** Actor `id` called `exit()` and its `stop` has run; it is gone from this worker. */
  | { k: 'exited'; id: ActorId }
  /** Request `corr` from `requester` (not on this worker) to `to` cannot be answered. */
  | { k: 'bounce'; requester: ActorId; corr: number; to: ActorId; reason: BounceReason }
  /** An actor's `ctx.spawn`: the hub runs `Runtime.spawn` (args msgpack-encoded, transferred) and sends `answer`. */
  | { k: 'spawn-request'; reqId: number; id: ActorId; kind: string; args: Uint8Array; placement: Placement }
  /** An actor's `ctx.stopActor`: the hub runs `Runtime.stopActor` and sends `answer`. */
  | { k: 'stop-request'; reqId: number; id: ActorId }
  /** Messages posted in one turn, in order: handled as if each had come alone ({@link PostBatcher}). */
  | { k: 'batch'; messages: FromWorker[] };

/**
 * Worker → worker over a direct channel: one envelope (bytes transferred). `b`: the sender's barrier
 * for this channel (see `reroute`); the receiver delivers it only once it has taken `b` messages from
 * the hub, and in channel order.
 */
export interface DirectMessage {
  b: number;
  buf: ArrayBuffer;
}

/** The errno (`ENOSPC`, `EIO`, ...) of a file-system error: besides its message, the only part of an error that crosses a thread. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/** The fields of a failed answer (`spawned`, `stopped`, `answer`) that carry `error` across a thread. */
export function answerFields(error: unknown): { error: string; code?: string } {
  const code = errnoOf(error);
  const message = error instanceof Error ? error.message : String(error);
  return code === undefined ? { error: message } : { error: message, code };
}

/** The rejection of a failed answer: an Error with the message, and the errno as `code` when one was sent. */
export function answerError(message: { error?: string; code?: string }): Error {
  const error: NodeJS.ErrnoException = new Error(message.error);
  if (message.code !== undefined) error.code = message.code;
  return error;
}

/** `workerData` a worker starts with. */
export interface WorkerInit {
  /** Display name, e.g. `controller#0`, `broker/1#2` (logs). */
  name: string;
  /** Correlation ids this worker hands out start here (unique per worker incarnation). */
  corrBase: number;
  logLevel: string;
  logFd: 1 | 2;
  /** The FileSystem class actors get (`new` on first use of `ctx.fs`); default NodeFileSystem. */
  fsRef?: ModuleRef;
  /**
   * Absolute module paths the worker requires before it listens (ThreadRuntime.prestartWorkers: a
   * prestarted worker pays the actor modules' load while the broker is idle, not on its first spawn).
   */
  preload?: string[];
}
