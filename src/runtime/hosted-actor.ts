/**
 * One actor on a worker thread: its mailbox, its context, its timers and pending requests, and its
 * lifecycle `starting → running → stopping → stopped`. The {@link WorkerHost} decides when it gets a
 * message; this class makes sure it gets one at a time and only while running.
 */
import { strict as assert } from 'node:assert';
import type { Actor, ActorContext, ActorId, Envelope } from './actor';
import type { Clock } from '../io/clock';
import type { FileSystem } from '../io/file-system';
import type { Logger } from '../io/logger';
import type { Random } from '../io/random';
import type { CpuJobs } from './cpu-jobs';
import { makeActorContext } from './actor-context';
import { Fifo } from './fifo';
import { PendingRequests } from './pending-requests';
import type { Placement } from './placement';
import { TrackedTimers } from './system-time';
import type { BounceReason } from './worker-protocol';

/** What a hosted actor needs from its worker. */
export interface ActorHostServices {
  readonly clock: Clock;
  /** The worker's FileSystem (created on first use). */
  fs(): FileSystem;
  /** The worker's CPU job runner (its piscina pool is created on first use). */
  cpuJobs(): CpuJobs;
  /** Routes an envelope: a local actor's mailbox, or the main thread. */
  sendEnvelope(envelope: Envelope): void;
  /** A correlation id unique on this worker incarnation. */
  nextCorr(): number;
  /** Queues the actor for a delivery turn. */
  schedule(actor: HostedActor): void;
  /** Logs and crashes the worker (programmer error in actor code). Never returns normally to the actor. */
  crash(error: unknown, actorId?: ActorId): void;
  /** Tells `requester` that its request `corr` to `to` will get no reply. */
  bounce(requester: ActorId, corr: number, to: ActorId, reason: BounceReason): void;
  /** The actor called `exit()`: stop it after the current message and forget it. */
  exitActor(actor: HostedActor): void;
  /** An actor's `ctx.spawn`: the hub spawns (Runtime.spawn) and answers. */
  spawnActor(id: ActorId, kind: string, args: unknown, placement: Placement): Promise<void>;
  /** An actor's `ctx.stopActor`: the hub stops (Runtime.stopActor) and answers. */
  stopActor(id: ActorId): Promise<void>;
}

/** Lifecycle of a hosted actor. */
export type HostedActorState = 'starting' | 'running' | 'stopping' | 'stopped';

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** One actor on a worker: mailbox, context, lifecycle (module comment). */
export class HostedActor {
  state: HostedActorState = 'starting';
  /** True while queued in the host's ready list (so it is queued at most once). */
  inReadyQueue = false;
  readonly ctx: ActorContext;
  readonly pending: PendingRequests;
  private readonly mailbox = new Fifo<Envelope>();
  private readonly timers: TrackedTimers;
  private exitRequested = false;
  private startPromise: Promise<void> | undefined;
  private stopPromise: Promise<string | undefined> | undefined;

  constructor(
    readonly id: ActorId,
    readonly kind: string,
    private readonly actor: Actor,
    private readonly host: ActorHostServices,
    random: Random,
    readonly log: Logger,
  ) {
    this.timers = new TrackedTimers((fn) => {
      if (this.state === 'stopped') return;
      try {
        fn();
      } catch (error) {
        this.host.crash(error, this.id);
      }
    });
    this.pending = new PendingRequests(this.timers);
    this.ctx = this.makeContext(random);
  }

  /** Runs `start`; rejects with its error (the actor is then `stopped` and must be forgotten). */
  start(): Promise<void> {
    assert(this.startPromise === undefined, `actor ${this.id} started twice`);
    this.startPromise = (async () => {
      try {
        await this.actor.start?.(this.ctx);
      } catch (error) {
        this.finish('stopped');
        throw error;
      }
      if (this.state === 'starting') this.state = 'running';
      if (this.mailbox.length > 0) this.host.schedule(this);
    })();
    return this.startPromise;
  }

  /** Accepts a (non-reply) envelope. Requests that arrive once stopping are bounced. */
  enqueue(envelope: Envelope): void {
    if (this.state === 'stopping' || this.state === 'stopped' || this.exitRequested) {
      this.bounceIfRequest(envelope, 'stopped');
      return;
    }
    this.mailbox.push(envelope);
    if (this.state === 'running') this.host.schedule(this);
  }

  /** True if a delivery turn would deliver something. */
  get deliverable(): boolean {
    return this.state === 'running' && !this.exitRequested && this.mailbox.length > 0;
  }

  /**
   * Delivers the oldest message. `receive` runs synchronously; a promise it returns is not awaited
   * (the Actor contract) but a rejection crashes the worker, as a throw does.
   */
  deliverNext(): void {
    if (!this.deliverable) return;
    const envelope = this.mailbox.shift() as Envelope;
    try {
      const result = this.actor.receive(envelope, this.ctx);
      if (isPromiseLike(result)) result.then(undefined, (error: unknown) => this.host.crash(error, this.id));
    } catch (error) {
      this.host.crash(error, this.id);
    }
  }

  /**
   * Orderly stop: waits for `start` if it is still running, bounces queued requests, runs `stop`
   * (timers and requests still work during it), then cancels timers and forgets pending requests.
   * Resolves with the error message if `stop` threw (logged here), else undefined. Idempotent.
   */
  stop(): Promise<string | undefined> {
    this.stopPromise ??= (async () => {
      if (this.startPromise !== undefined) await this.startPromise.catch(() => undefined);
      if (this.state === 'stopped') return undefined;
      this.state = 'stopping';
      for (const envelope of this.mailbox.drain()) this.bounceIfRequest(envelope, 'stopped');
      let failure: string | undefined;
      try {
        await this.actor.stop?.(this.ctx);
      } catch (error) {
        failure = errorMessage(error);
        this.log.error({ err: error }, 'actor stop failed');
      }
      this.finish('stopped');
      return failure;
    })();
    return this.stopPromise;
  }

  private finish(state: 'stopped'): void {
    this.state = state;
    for (const envelope of this.mailbox.drain()) this.bounceIfRequest(envelope, 'stopped');
    this.timers.clearAll();
    this.pending.dropAll();
  }

  private bounceIfRequest(envelope: Envelope, reason: BounceReason): void {
    if (envelope.corr !== undefined && envelope.isReply !== true) {
      this.host.bounce(envelope.from, envelope.corr, this.id, reason);
    }
  }

  private makeContext(random: Random): ActorContext {
    const host = this.host;
    return makeActorContext({
      self: this.id,
      clock: host.clock,
      timers: this.timers,
      random,
      log: this.log,
      pending: this.pending,
      fs: () => host.fs(),
      cpu: () => host.cpuJobs(),
      sendEnvelope: (envelope) => host.sendEnvelope(envelope),
      nextCorr: () => host.nextCorr(),
      stopped: () => this.state === 'stopped',
      exiting: () => this.exitRequested || this.state === 'stopping' || this.state === 'stopped',
      markExiting: () => {
        this.exitRequested = true;
      },
      exitActor: () => host.exitActor(this),
      spawn: (id, kind, args, placement) => host.spawnActor(id, kind, args, placement),
      stopActor: (id) => host.stopActor(id),
    });
  }
}
