/**
 * The one builder of an {@link ActorContext}, used by both runtimes (hosted-actor.ts on a worker thread,
 * sim-runtime.ts in the simulation), so an actor's `send`, `request`, `reply` and `exit` run the same
 * code in production and in every simulated run. What differs between the runtimes (how an envelope is
 * routed, where correlation ids come from, what a stopped actor is, how exit stops it, how another
 * actor is spawned or stopped) is the {@link ActorContextHost} each passes in.
 */
import type { Clock, Timers } from '../io/clock';
import type { FileSystem } from '../io/file-system';
import type { Logger } from '../io/logger';
import type { Random } from '../io/random';
import type { ActorContext, ActorId, ActorRef, Envelope, MessageMap } from './actor';
import type { CpuJobs } from './cpu-jobs';
import type { PendingRequests } from './pending-requests';
import type { Placement } from './placement';

/** What {@link makeActorContext} needs from the runtime hosting one actor. */
export interface ActorContextHost {
  readonly self: ActorId;
  readonly clock: Clock;
  /** The actor's timers (the host cancels them when the actor stops). */
  readonly timers: Timers;
  readonly random: Random;
  readonly log: Logger;
  /** This actor's requests awaiting a reply (their timeouts run on `timers`). */
  readonly pending: PendingRequests;
  /** The file system; called on every `ctx.fs` read (production creates it on first use). */
  fs(): FileSystem;
  /** The CPU job runner; called on every `ctx.cpu` read (production creates its pool on first use). */
  cpu(): CpuJobs;
  /** Routes an envelope from this actor. */
  sendEnvelope(envelope: Envelope): void;
  /** A correlation id unique among this runtime's requesters (production: this worker incarnation). */
  nextCorr(): number;
  /** True once the actor is stopped: its context goes inert (nothing is sent, requests never settle). */
  stopped(): boolean;
  /** True once `exit()` was called or a stop began: a further `exit()` does nothing. */
  exiting(): boolean;
  /** Records that `exit()` was called (so `exiting()` is true from now on). */
  markExiting(): void;
  /** Stops the actor; called on a microtask after `exit()`, so the current message finishes first. */
  exitActor(): void;
  /** Spawns another actor for this one, with `Runtime.spawn`'s semantics (ActorContext.spawn). */
  spawn(id: ActorId, kind: string, args: unknown, placement: Placement): Promise<void>;
  /** Stops another actor for this one, with `Runtime.stopActor`'s semantics (ActorContext.stopActor). */
  stopActor(id: ActorId): Promise<void>;
}

/** `outcome`, except that it never settles once the actor has stopped (nothing of it runs any more). */
function settleUnlessStopped(host: ActorContextHost, outcome: Promise<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    outcome.then(
      () => {
        if (!host.stopped()) resolve();
      },
      (error: unknown) => {
        if (!host.stopped()) reject(error);
      },
    );
  });
}

/** The context an actor gets from `host` (module comment). */
export function makeActorContext(host: ActorContextHost): ActorContext {
  const self = host.self;
  return {
    self,
    clock: host.clock,
    timers: host.timers,
    random: host.random,
    get fs(): FileSystem {
      return host.fs();
    },
    log: host.log,
    get cpu(): CpuJobs {
      return host.cpu();
    },
    send(to: ActorId, type: string, body: unknown): void {
      if (host.stopped()) return;
      host.sendEnvelope({ to, from: self, type, body });
    },
    request<M extends MessageMap, K extends keyof M & string>(
      to: ActorRef<M>,
      type: K,
      body: M[K]['body'],
      timeoutMs: number,
    ): Promise<M[K]['reply']> {
      // A stopped actor's late continuation gets a promise that never settles: nobody awaits it.
      if (host.stopped()) return new Promise<M[K]['reply']>(() => undefined);
      const corr = host.nextCorr();
      const reply = host.pending.add<M[K]['reply']>(corr, to, type, timeoutMs);
      host.sendEnvelope({ to, from: self, type, body, corr });
      return reply;
    },
    reply(request: Envelope, body: unknown): void {
      if (request.corr === undefined || host.stopped()) return;
      host.sendEnvelope({ to: request.from, from: self, type: 'reply', body, corr: request.corr, isReply: true });
    },
    exit(): void {
      if (host.exiting()) return;
      host.markExiting();
      queueMicrotask(() => host.exitActor());
    },
    spawn(id: ActorId, kind: string, args: unknown, placement: Placement): Promise<void> {
      if (host.stopped()) return new Promise<void>(() => undefined);
      return settleUnlessStopped(host, host.spawn(id, kind, args, placement));
    },
    stopActor(id: ActorId): Promise<void> {
      if (host.stopped()) return new Promise<void>(() => undefined);
      return settleUnlessStopped(host, host.stopActor(id));
    },
  };
}
