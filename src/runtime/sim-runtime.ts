/**
 * The simulation runtime: the same actors as production, on one thread, driven by a seeded scheduler
 * over virtual time (DESIGN.md, deterministic simulation; TigerBeetle's simulator is the model).
 *
 * - Messages: every send is msgpack-encoded (so a body that would not survive a worker boundary fails
 *   here too) and queued on the channel of its (from, to) pair. Each step the scheduler picks, with the
 *   seeded PRNG, one channel head or the earliest due timer. Channels are FIFO, so two actors' messages
 *   stay in order while different pairs interleave in every order the seed chooses.
 * - Time: a virtual clock that moves only in {@link SimRuntime.advanceTime} (or when
 *   {@link SimRuntime.runUntil} has nothing else to do). A timer set with delay 0 fires only after the
 *   messages already queued for its owner, as the Timers contract says.
 * - Async actor code: promise continuations are real microtasks; the async drivers ({@link settle},
 *   {@link advanceTime}, {@link runUntil}) let them run after each step, as a worker would after each
 *   message. {@link step} and {@link runUntilIdle} are synchronous and do not.
 * - Faults: {@link setFaults} installs a hook that decides, per message and with its own seeded
 *   PRNG, to deliver, drop, duplicate, delay or reorder it. {@link crash} kills actors without `stop`
 *   (their queued messages, timers and state are lost); {@link restart} brings them back from kind and
 *   args. {@link jumpWallClock} moves the wall clock of one broker's actors (monotonic time never
 *   moves back); {@link schedule} runs simulator code (a disk's fsync completion) as a timed event.
 *
 * Same seed + same calls ⇒ same delivery order ({@link trace} records it when `trace: true`).
 */
import { strict as assert } from 'node:assert';
import { inlineCpuJobs } from './cpu-jobs';
import { makeActorContext } from './actor-context';
import { actorExistsError } from './actor';
import type { Actor, ActorContext, ActorId, Envelope } from './actor';
import type { Clock, TimerHandle, Timers } from '../io/clock';
import type { Logger } from '../io/logger';
import type { Random } from '../io/random';
import type { FileSystem } from '../io/file-system';
import { MemoryFileSystem } from '../io/memory-file-system';
import { deadActorGuardedFileSystem } from './dead-actor-file-system';
import { decodeEnvelope, decodeValue, encodeEnvelope, encodeValue } from './envelope';
import { Fifo } from './fifo';
import { LocalEndpoint } from './local-endpoint';
import type { EndpointTransport } from './local-endpoint';
import { createLogger, levelFromEnv } from './logger';
import { PendingRequests } from './pending-requests';
import type { UnavailableReason } from './pending-requests';
import { Xoshiro128 } from '../io/random';
import { loadActorFactory, resolveActorKind } from './registry';
import type { ModuleRef } from './module-ref';
import type { BrokerDownInfo, Endpoint, Placement, Runtime } from './runtime';
import { SimTimerQueue } from './sim-timer-queue';
import type { SimTimer } from './sim-timer-queue';

/** Virtual wall-clock start: 2023-11-14T22:13:20Z. */
export const SIM_EPOCH_MS = 1_700_000_000_000;

/** Options of {@link SimRuntime}. */
export interface SimRuntimeOptions {
  /** Seeds the scheduler, every actor's Random, and the fault hook's Random. */
  seed: number;
  /** The disk actors share as `ctx.fs` (default: a new `MemoryFileSystem`, created on first use). */
  fs?: FileSystem;
  /** Default: pino at SKIFF_LOG_LEVEL (else `silent`), timestamped with virtual time. */
  logger?: Logger;
  /** Virtual wall-clock start in ms since the Unix epoch (default {@link SIM_EPOCH_MS}). */
  epochMs?: number;
  /** Record every delivery, timer and fault in {@link SimRuntime.trace} (default false). */
  trace?: boolean;
  /**
   * What an uncaught error in actor code does. `fail` (default): the driver throws it, failing the
   * test (a programmer error). `restart`: what production's supervisor does (thread-runtime.ts): the
   * actor crashes as {@link SimRuntime.crash} makes it, is re-created from its kind and args and
   * started again at once (a scheduled event), and the onWorkerRestart handlers run; an actor that
   * crashes more than {@link SUPERVISOR_MAX_RESTARTS} times within {@link SUPERVISOR_RESTART_WINDOW_MS}
   * of virtual time is given up (forgotten, as a slot's actors are). Production restarts every actor
   * of the dead worker; the simulation restarts the one that threw.
   */
  onActorError?: 'fail' | 'restart';
}

/** Restarts of one actor allowed within {@link SUPERVISOR_RESTART_WINDOW_MS} (thread-runtime's defaults). */
export const SUPERVISOR_MAX_RESTARTS = 5;
/** The window of {@link SUPERVISOR_MAX_RESTARTS}, in virtual ms. */
export const SUPERVISOR_RESTART_WINDOW_MS = 10_000;

/**
 * What the fault hook decides for one message. `delayMs` is virtual time before it joins its channel
 * (so messages sent after it on the same channel may overtake it). `reorder` holds it back until the
 * next message on its (from, to) channel has joined, then puts it behind that one; if none comes
 * within {@link REORDER_MAX_HOLD_MS} it joins then (so a reorder never turns into a drop).
 */
export type FaultDecision = 'deliver' | 'drop' | 'duplicate' | 'reorder' | { delayMs: number };

/** Virtual ms a `reorder`ed message waits at most for a later message on its channel to overtake it. */
export const REORDER_MAX_HOLD_MS = 1_000;

/**
 * Decides the fate of each message as it is sent. `random` is a PRNG seeded from the run's seed and
 * used only by the hook, so the decisions replay too.
 */
export type FaultHook = (envelope: Envelope, random: Random) => FaultDecision;

interface ActorSpec {
  id: ActorId;
  kind: string;
  ref: ModuleRef;
  args: Uint8Array;
  placement: Placement;
}

interface SimMessage {
  seq: number;
  from: ActorId;
  to: ActorId;
  bytes: Uint8Array;
  /** A reply: delivered to a starting actor too (its start may await a request), as on worker threads. */
  isReply: boolean;
  /**
   * How many incarnations of `to` had crashed when the message was sent: a message a fault delayed or held
   * back past a crash of its target is dropped instead of reaching the next incarnation (see enqueueOnChannel).
   */
  targetKills: number;
}

interface SimCell {
  spec: ActorSpec;
  actor: Actor;
  ctx: ActorContext;
  pending: PendingRequests;
  state: 'starting' | 'running' | 'stopping' | 'dead';
  exitRequested: boolean;
  stopping?: Promise<void>;
  /** Fails the spawn of a cell killed while `start` runs (set during `start`). */
  abortStart?: (error: Error) => void;
}

const MAX_STEPS = 1_000_000;

/** Fails a run that is still busy after `maxSteps` steps: a livelock (nothing ever settles). */
function assertBelowStepLimit(steps: number, maxSteps: number): void {
  assert(steps <= maxSteps, `simulation still busy after ${maxSteps} steps (livelock?)`);
}

function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** The deterministic {@link Runtime} for tests and the simulation (module comment). */
export class SimRuntime implements Runtime, EndpointTransport {
  /** The virtual clock (also what every actor gets). */
  readonly clock: Clock;
  /** Deliveries, timers and faults in order, when the `trace` option is on. */
  readonly trace: string[] = [];
  private nowMs: number;
  private readonly epochMs: number;
  private readonly schedulerRandom: Xoshiro128;
  private readonly actorSeeds: Xoshiro128;
  private readonly faultPrng: Xoshiro128;
  private readonly tracing: boolean;
  private readonly log: Logger;
  private fileSystem: FileSystem | undefined;
  private faults: FaultHook | null = null;
  private readonly channels = new Map<string, Fifo<SimMessage>>();
  private readonly timers = new SimTimerQueue();
  private readonly actors = new Map<ActorId, SimCell>();
  private readonly crashed = new Map<ActorId, { spec: ActorSpec; reason: string }>();
  private readonly endpoints = new Map<ActorId, LocalEndpoint>();
  private readonly restartHandlers: Array<(info: { actorIds: ActorId[]; error: string }) => void> = [];
  private readonly brokerDownHandlers: Array<(info: BrokerDownInfo) => void> = [];
  /** Messages a `reorder` decision holds back, by (from, to), oldest first. */
  private readonly heldForReorder = new Map<string, SimMessage[]>();
  /** Per actor id, how many of its incarnations crashed ({@link crash}, {@link crashBroker}): SimMessage.targetKills. */
  private readonly kills = new Map<ActorId, number>();
  /** Wall-clock offset of each broker's actors (key -1: actors not placed on a broker), in ms. */
  private readonly wallClockOffsets = new Map<number, number>();
  private readonly onActorError: 'fail' | 'restart';
  /** Virtual times of each actor's supervised restarts within the window (onActorError `restart`). */
  private readonly restartTimesMs = new Map<ActorId, number[]>();
  /** Uncaught actor errors the supervisor handled, in order: `{ actorId, error, restarted }`. */
  readonly supervised: Array<{ actorId: ActorId; error: string; restarted: boolean }> = [];
  private seq = 0;
  private corr = 0;
  private failure: Error | undefined;
  private closed = false;

  constructor(options: SimRuntimeOptions) {
    this.epochMs = options.epochMs ?? SIM_EPOCH_MS;
    this.nowMs = this.epochMs;
    this.clock = { nowMs: () => this.nowMs, monotonicMs: () => this.nowMs - this.epochMs };
    const master = new Xoshiro128(options.seed);
    this.schedulerRandom = new Xoshiro128(master.nextUint32());
    this.actorSeeds = new Xoshiro128(master.nextUint32());
    this.faultPrng = new Xoshiro128(master.nextUint32());
    this.tracing = options.trace ?? false;
    this.onActorError = options.onActorError ?? 'fail';
    this.fileSystem = options.fs;
    this.log = options.logger ?? createLogger({ level: levelFromEnv('silent'), timeMs: () => this.nowMs });
  }

  /** The shared simulated disk (a MemoryFileSystem unless one was given). */
  get fs(): FileSystem {
    this.fileSystem ??= new MemoryFileSystem();
    return this.fileSystem;
  }

  // ---- Runtime ----

  /**
   * Builds the actor in-process from its registered kind and runs `start`, driving the simulation
   * (messages, timers, virtual time) until `start` settles. Rejects with `start`'s error, removing it.
   */
  async spawn(id: ActorId, kind: string, args: unknown, placement: Placement): Promise<void> {
    assert(!this.closed, `runtime is shut down: cannot spawn ${id}`);
    await this.spawnCell(id, kind, args, placement, true);
  }

  /** Runs `stop` (driving the simulation until it settles), then removes the actor. */
  stopActor(id: ActorId): Promise<void> {
    const cell = this.actors.get(id);
    if (cell === undefined || cell.state === 'dead') return Promise.resolve();
    cell.stopping ??= this.stopCell(cell);
    return this.runUntil(cell.stopping);
  }

  endpoint(id: ActorId): Endpoint {
    assert(!this.closed, `runtime is shut down: cannot create endpoint ${id}`);
    assert(!this.endpoints.has(id) && !this.actors.has(id), `address ${id} is already in use`);
    const endpoint = new LocalEndpoint(id, this, this.clock, this.timersFor(id), this.log);
    this.endpoints.set(id, endpoint);
    return endpoint;
  }

  onWorkerRestart(handler: (info: { actorIds: ActorId[]; error: string }) => void): void {
    this.restartHandlers.push(handler);
  }

  /**
   * Stops broker-pool actors, then the rest (each `stop` runs), delivers what they sent, closes
   * endpoints, cancels timers.
   */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    const cells = [...this.actors.values()];
    for (const cell of cells) if (cell.spec.placement.pool === 'broker') await this.stopActor(cell.spec.id);
    for (const cell of cells) await this.stopActor(cell.spec.id);
    await this.settle(); // what `stop` sent (e.g. to endpoints) is delivered, as on threads
    for (const endpoint of [...this.endpoints.values()]) endpoint.close();
    this.closed = true;
    this.timers.cancelAll();
    this.channels.clear();
    this.heldForReorder.clear();
  }

  // ---- driving the simulation ----

  /** Current virtual monotonic time in ms (0 at construction). */
  get elapsedMs(): number {
    return this.nowMs - this.epochMs;
  }

  /**
   * Delivers one message or fires one due timer, chosen by the seeded scheduler; false if nothing is
   * runnable at the current virtual time. Throws an actor's uncaught error (a programmer error).
   */
  step(): boolean {
    this.throwIfFailed();
    const candidates: Array<string | SimTimer> = [];
    for (const [key, channel] of this.channels) {
      if (this.isDeliverable(channel.peek() as SimMessage)) candidates.push(key);
    }
    const timer = this.dueTimer();
    if (timer !== undefined) candidates.push(timer);
    if (candidates.length === 0) return false;
    const pick = candidates[this.schedulerRandom.int(candidates.length)] as string | SimTimer;
    if (typeof pick === 'string') this.deliverHead(pick);
    else this.fireTimer(pick);
    this.throwIfFailed();
    return true;
  }

  /** Steps synchronously until nothing is runnable; returns the step count. For synchronous actors. */
  runUntilIdle(maxSteps = MAX_STEPS): number {
    let steps = 0;
    while (this.step()) {
      steps++;
      assertBelowStepLimit(steps, maxSteps);
    }
    return steps;
  }

  /**
   * Runs until no message is deliverable, no timer is due and no microtask is pending (actors may be
   * async). Virtual time does not move. Returns the step count.
   */
  async settle(maxSteps = MAX_STEPS): Promise<number> {
    let steps = 0;
    for (;;) {
      await flushMicrotasks();
      if (this.step()) {
        steps++;
        assertBelowStepLimit(steps, maxSteps);
        continue;
      }
      await flushMicrotasks();
      if (!this.step()) return steps;
      steps++;
      assertBelowStepLimit(steps, maxSteps);
    }
  }

  /**
   * Moves virtual time forward by `ms`, firing timers in due order (time jumps to each one's due time)
   * and settling what they trigger at that instant.
   */
  async advanceTime(ms: number): Promise<void> {
    assert(Number.isFinite(ms) && ms >= 0, `advanceTime needs ms >= 0, got ${ms}`);
    const targetMs = this.nowMs + ms;
    await this.settle();
    for (;;) {
      const next = this.timers.peek();
      if (next === undefined || next.dueMs > targetMs) break;
      this.nowMs = Math.max(this.nowMs, next.dueMs);
      await this.settle();
    }
    this.nowMs = targetMs;
    await this.settle();
  }

  /**
   * Drives the simulation until `promise` settles, jumping virtual time to the next timer whenever
   * nothing else is runnable; resolves or rejects as `promise` does. Throws if nothing can ever settle
   * it (no message, no timer): a deadlock in the scenario.
   */
  async runUntil<T>(promise: Promise<T>, maxSteps = MAX_STEPS): Promise<T> {
    let done = false;
    promise.then(
      () => (done = true),
      () => (done = true),
    );
    let steps = 0;
    for (;;) {
      await flushMicrotasks();
      if (done) return promise;
      if (this.step()) {
        steps++;
        assertBelowStepLimit(steps, maxSteps);
        continue;
      }
      await flushMicrotasks();
      if (done) return promise;
      if (this.step()) {
        // Counted too: a livelock whose every step waits on a microtask (an actor's async turn) takes
        // this branch each time, and went on forever when only the branch above counted.
        steps++;
        assertBelowStepLimit(steps, maxSteps);
        continue;
      }
      const next = this.timers.peek();
      if (next === undefined) throw new Error('simulation deadlock: awaited promise pending, nothing runnable');
      this.nowMs = Math.max(this.nowMs, next.dueMs);
    }
  }

  /** Installs (or with null removes) the fault hook. */
  setFaults(hook: FaultHook | null): void {
    this.faults = hook;
  }

  /**
   * The seeded PRNG the fault hook gets: other fault decisions of the simulation's driver (a torn
   * write's kept bytes, an fsync's delay) draw from it too, so they replay with the seed.
   */
  get faultRandom(): Random {
    return this.faultPrng;
  }

  /**
   * Runs `fn` after `delayMs` of virtual time as an event of the scheduler (delay 0: at the current
   * time, in an order among the runnable messages the seed chooses). For the simulator's own events,
   * such as a memory disk's fsync completing; `fn` must not throw.
   */
  schedule(delayMs: number, fn: () => void): void {
    assert(Number.isFinite(delayMs) && delayMs >= 0, `schedule needs delayMs >= 0, got ${delayMs}`);
    this.timers.add(null, fn, this.nowMs + delayMs, ++this.seq, false);
  }

  /**
   * The broker actor `id` is placed on (`placement.brokerId` of the broker pool), -1 for an actor of
   * another pool (the controller), undefined for an endpoint or an id never spawned. Live and crashed
   * actors are known.
   */
  brokerOf(id: ActorId): number | undefined {
    const placement = (this.actors.get(id)?.spec ?? this.crashed.get(id)?.spec)?.placement;
    if (placement === undefined) return undefined;
    return placement.pool === 'broker' ? placement.brokerId : -1;
  }

  /**
   * Moves the wall clock (`Clock.nowMs`) of every actor placed on broker `brokerId` (-1: actors not on
   * a broker, the controller) by `deltaMs`, forward or back, cumulatively; actors spawned later there
   * get the moved clock too. Monotonic time and timers are untouched (an NTP step moves only the wall
   * clock). Returns the broker's total offset.
   */
  jumpWallClock(brokerId: number, deltaMs: number): number {
    assert(Number.isFinite(deltaMs), `bad clock jump ${deltaMs}`);
    const offsetMs = (this.wallClockOffsets.get(brokerId) ?? 0) + deltaMs;
    this.wallClockOffsets.set(brokerId, offsetMs);
    this.traceLine(`clock ${brokerId} ${deltaMs >= 0 ? '+' : ''}${deltaMs}`);
    return offsetMs;
  }

  /**
   * Crashes actors as a worker crash would: no `stop`, their queued inbound messages and timers are
   * dropped, their state is gone, and requests others have pending to them fail with
   * ActorUnavailableError(`crashed`). Messages they already sent stay in flight. (A disk crash is the
   * file system's business: call MemoryFileSystem's own crash method alongside.)
   */
  crash(ids: ActorId | ActorId[], reason = 'simulated crash'): void {
    const list = typeof ids === 'string' ? [ids] : ids;
    for (const id of list) {
      const cell = this.actors.get(id);
      assert(cell !== undefined, `cannot crash ${id}: no such actor`);
      this.kill(cell);
      this.countCrash(id);
      this.crashed.set(id, { spec: cell.spec, reason });
      this.dropInbound(id, null);
      this.traceLine(`crash ${id}`);
    }
    const targets = new Set(list);
    for (const cell of this.actors.values()) cell.pending.failTo(targets, 'crashed');
    for (const endpoint of this.endpoints.values()) endpoint.pending.failTo(targets, 'crashed');
  }

  /**
   * Crashes every actor placed on broker `brokerId` as {@link crash} does (no `stop`, queued messages,
   * timers and state lost; pending requests to them fail with `crashed`), but forgets them instead of
   * keeping them for {@link restart} (actors crashed earlier on the broker are forgotten too); then the
   * onBrokerDown handlers run. Resolves with the ids that were on the broker (Runtime.crashBroker).
   */
  crashBroker(brokerId: number, reason = 'simulated broker crash'): Promise<ActorId[]> {
    const onBroker = (placement: Placement): boolean => placement.pool === 'broker' && placement.brokerId === brokerId;
    const cells = [...this.actors.values()].filter((cell) => onBroker(cell.spec.placement));
    const actorIds = cells.map((cell) => cell.spec.id).sort();
    for (const [id, crashed] of [...this.crashed]) if (onBroker(crashed.spec.placement)) this.crashed.delete(id);
    for (const cell of cells) {
      this.kill(cell);
      this.countCrash(cell.spec.id);
      this.dropInbound(cell.spec.id, null);
    }
    this.traceLine(`crash broker ${brokerId}`);
    const targets = new Set(actorIds);
    for (const cell of this.actors.values()) cell.pending.failTo(targets, 'crashed');
    for (const endpoint of this.endpoints.values()) endpoint.pending.failTo(targets, 'crashed');
    for (const handler of this.brokerDownHandlers) handler({ brokerId, actorIds: [...actorIds], reason });
    return Promise.resolve(actorIds);
  }

  onBrokerDown(handler: (info: BrokerDownInfo) => void): void {
    this.brokerDownHandlers.push(handler);
  }

  /**
   * Re-creates crashed actors from their kind and args (same ids), runs their `start` (driving the
   * simulation), then calls the onWorkerRestart handlers once with all of them, like the supervisor.
   */
  async restart(ids: ActorId | ActorId[]): Promise<void> {
    const list = typeof ids === 'string' ? [ids] : ids;
    const reasons: string[] = [];
    for (const id of list) {
      const crashed = this.crashed.get(id);
      assert(crashed !== undefined, `cannot restart ${id}: it has not crashed`);
      this.crashed.delete(id);
      reasons.push(crashed.reason);
      this.traceLine(`restart ${id}`);
      await this.startCell(crashed.spec);
    }
    for (const handler of this.restartHandlers)
      handler({ actorIds: [...list], error: reasons[0] ?? 'simulated crash' });
  }

  /** Ids of live actors, sorted. */
  actorIds(): ActorId[] {
    return [...this.actors.keys()].sort();
  }

  /** Messages queued (not yet delivered), all channels. */
  get queuedMessages(): number {
    let n = 0;
    for (const channel of this.channels.values()) n += channel.length;
    return n;
  }

  // ---- EndpointTransport and the actors' transport ----

  /** Encodes and queues an envelope (after the fault hook's decision). */
  sendEnvelope(envelope: Envelope): void {
    if (this.closed) return;
    const message: SimMessage = {
      seq: 0,
      from: envelope.from,
      to: envelope.to,
      bytes: encodeEnvelope(envelope),
      isReply: envelope.isReply === true,
      targetKills: this.kills.get(envelope.to) ?? 0,
    };
    const decision = this.faults === null ? 'deliver' : this.faults(envelope, this.faultPrng);
    if (decision === 'deliver') {
      this.enqueue(message);
    } else if (decision === 'drop') {
      this.traceLine(`drop ${envelope.from}>${envelope.to} ${envelope.type}`);
    } else if (decision === 'duplicate') {
      this.traceLine(`duplicate ${envelope.from}>${envelope.to} ${envelope.type}`);
      this.enqueue(message);
      this.enqueue({ ...message });
    } else if (decision === 'reorder') {
      this.traceLine(`reorder ${envelope.from}>${envelope.to} ${envelope.type}`);
      this.holdForReorder(message);
    } else {
      assert(decision.delayMs >= 0, `fault delay must be >= 0, got ${decision.delayMs}`);
      this.traceLine(`delay ${envelope.from}>${envelope.to} ${envelope.type} ${decision.delayMs}`);
      this.timers.add(null, () => this.enqueue(message), this.nowMs + decision.delayMs, ++this.seq, false);
    }
  }

  nextCorr(): number {
    return ++this.corr;
  }

  removeEndpoint(endpoint: LocalEndpoint): void {
    if (this.endpoints.get(endpoint.id) === endpoint) this.endpoints.delete(endpoint.id);
    this.timers.cancelOwner(endpoint.id);
  }

  // ---- internals ----

  private holdForReorder(message: SimMessage): void {
    const key = `${message.from}\u0000${message.to}`;
    const held = this.heldForReorder.get(key) ?? [];
    held.push(message);
    this.heldForReorder.set(key, held);
    this.timers.add(
      null,
      () => {
        const list = this.heldForReorder.get(key);
        const index = list?.indexOf(message) ?? -1;
        if (list === undefined || index < 0) return; // overtaken and released already
        list.splice(index, 1);
        if (list.length === 0) this.heldForReorder.delete(key);
        this.enqueue(message);
      },
      this.nowMs + REORDER_MAX_HOLD_MS,
      ++this.seq,
      false,
    );
  }

  private enqueue(message: SimMessage): void {
    this.enqueueOnChannel(message);
    // A message held back by `reorder` joins behind the first one to overtake it.
    const key = `${message.from}\u0000${message.to}`;
    const held = this.heldForReorder.get(key);
    if (held === undefined) return;
    this.heldForReorder.delete(key);
    for (const late of held) this.enqueueOnChannel(late);
  }

  private enqueueOnChannel(message: SimMessage): void {
    // Its target crashed while a fault held it (delayed, reordered): the message was addressed to the
    // dead incarnation, whose process (or connection) it dies with, as a broker's internal messages and
    // the TCP connections to it do; the requests among them already failed for their senders (crash).
    if (message.targetKills !== (this.kills.get(message.to) ?? 0)) {
      this.traceLine(`drop ${message.from}>${message.to} (target crashed while the message was held)`);
      return;
    }
    message.seq = ++this.seq;
    // Replies to a starting actor travel on a channel of their own: its mailbox holds messages until
    // its start is done, but a start that awaits a request must get the reply (a worker resolves
    // replies beside the mailbox), even when a message from the same sender is queued before it.
    const replyLane = message.isReply && this.actors.get(message.to)?.state === 'starting' ? '\u0000reply' : '';
    const key = `${message.from}\u0000${message.to}${replyLane}`;
    let channel = this.channels.get(key);
    if (channel === undefined) {
      channel = new Fifo<SimMessage>();
      this.channels.set(key, channel);
    }
    channel.push(message);
  }

  private isDeliverable(message: SimMessage): boolean {
    const cell = this.actors.get(message.to);
    return cell === undefined || cell.state !== 'starting' || message.isReply;
  }

  /** The earliest due timer, unless it is a zero-delay timer whose owner has older messages queued. */
  private dueTimer(): SimTimer | undefined {
    const timer = this.timers.peek();
    if (timer === undefined || timer.dueMs > this.nowMs) return undefined;
    if (timer.zeroDelay && timer.owner !== null && this.actors.get(timer.owner)?.state === 'running') {
      for (const channel of this.channels.values()) {
        const head = channel.peek() as SimMessage;
        if (head.to === timer.owner && head.seq < timer.seq) return undefined;
      }
    }
    return timer;
  }

  private fireTimer(timer: SimTimer): void {
    this.timers.take(timer);
    this.traceLine(`timer ${timer.owner ?? '-'}`);
    const cell = timer.owner === null ? undefined : this.actors.get(timer.owner);
    if (cell === undefined) {
      timer.fn();
      return;
    }
    try {
      timer.fn();
    } catch (error) {
      this.fail(error, cell);
    }
  }

  private deliverHead(key: string): void {
    const channel = this.channels.get(key) as Fifo<SimMessage>;
    const message = channel.shift() as SimMessage;
    if (channel.length === 0) this.channels.delete(key);
    const envelope = decodeEnvelope(message.bytes);
    const corr = envelope.corr === undefined ? '' : `#${envelope.corr}`;
    this.traceLine(`${envelope.from}>${envelope.to} ${envelope.type}${corr}`);

    const endpoint = this.endpoints.get(envelope.to);
    if (endpoint !== undefined) {
      endpoint.deliver(envelope);
      return;
    }
    const cell = this.actors.get(envelope.to);
    if (envelope.isReply === true) {
      if (cell !== undefined && envelope.corr !== undefined)
        cell.pending.resolve(envelope.corr, envelope.from, envelope.body);
      return;
    }
    if (cell === undefined || cell.state !== 'running' || cell.exitRequested) {
      const reason: UnavailableReason =
        cell !== undefined ? 'stopped' : this.crashed.has(envelope.to) ? 'crashed' : 'unknown-actor';
      if (envelope.corr !== undefined) this.bounce(envelope.from, envelope.corr, reason);
      return;
    }
    try {
      const result = cell.actor.receive(envelope, cell.ctx);
      if (isPromiseLike(result)) result.then(undefined, (error: unknown) => this.fail(error, cell));
    } catch (error) {
      this.fail(error, cell);
    }
  }

  private bounce(requester: ActorId, corr: number, reason: UnavailableReason): void {
    const pending = this.endpoints.get(requester)?.pending ?? this.actors.get(requester)?.pending;
    pending?.fail(corr, reason);
  }

  /**
   * An actor's uncaught error: recorded for the driver to throw (a programmer error fails the test),
   * or with onActorError `restart` handled as production's supervisor does (option doc).
   */
  private fail(error: unknown, failed: SimCell): void {
    const actorId = failed.spec.id;
    const err = error instanceof Error ? error : new Error(String(error));
    // A dead incarnation's late continuation (its disk refused: dead-actor-file-system.ts) is no error of
    // the actor, and must not crash the restarted successor that now has its id.
    if (failed.state === 'dead' && this.actors.get(actorId) !== failed) {
      this.log.debug({ err, actor: actorId }, 'error in a dead actor incarnation ignored');
      return;
    }
    this.log.error({ err, actor: actorId }, 'uncaught error in actor code');
    if (this.onActorError === 'fail') {
      this.failure ??= err;
      return;
    }
    const cell = this.actors.get(actorId);
    // Dead already (an earlier error of the same message), or stopping: nothing to restart.
    if (cell === undefined || cell.state !== 'running') return;
    this.crash(actorId, err.message);
    const times = (this.restartTimesMs.get(actorId) ?? []).filter(
      (atMs) => this.nowMs - atMs <= SUPERVISOR_RESTART_WINDOW_MS,
    );
    if (times.length >= SUPERVISOR_MAX_RESTARTS) {
      this.crashed.delete(actorId);
      this.restartTimesMs.delete(actorId);
      this.supervised.push({ actorId, error: err.message, restarted: false });
      this.log.error({ actor: actorId }, 'actor crashes too often: giving it up');
      return;
    }
    times.push(this.nowMs);
    this.restartTimesMs.set(actorId, times);
    this.supervised.push({ actorId, error: err.message, restarted: true });
    this.schedule(0, () => void this.superviseRestart(actorId, err.message));
  }

  /** The supervisor's restart of a crashed actor (not driving: the driver running now does). */
  private async superviseRestart(actorId: ActorId, error: string): Promise<void> {
    const crashed = this.crashed.get(actorId);
    if (crashed === undefined || this.closed) return; // restarted or forgotten meanwhile
    this.crashed.delete(actorId);
    this.traceLine(`restart ${actorId}`);
    try {
      await this.startCell(crashed.spec, false);
    } catch (startError) {
      this.log.error({ err: startError, actor: actorId }, 'actor failed to restart');
      return;
    }
    for (const handler of this.restartHandlers) handler({ actorIds: [actorId], error });
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private traceLine(line: string): void {
    if (this.tracing) this.trace.push(`${this.nowMs - this.epochMs} ${line}`);
  }

  private timersFor(owner: ActorId): Timers {
    return {
      setTimeout: (fn: () => void, delayMs: number): TimerHandle => {
        assert(Number.isFinite(delayMs), `bad timer delay ${delayMs}`);
        const timer = this.timers.add(owner, fn, this.nowMs + Math.max(0, delayMs), ++this.seq, delayMs <= 0);
        return { id: timer.id };
      },
      clearTimeout: (handle: TimerHandle): void => this.timers.cancel(handle.id),
    };
  }

  /**
   * `spawn` for the runtime's caller (`drive`: runs the simulation until `start` settles) and for an
   * actor's `ctx.spawn` (the driver already running the actor's message runs the start too).
   */
  private async spawnCell(id: ActorId, kind: string, args: unknown, placement: Placement, drive: boolean) {
    if (this.closed) throw new Error(`runtime is shut down: cannot spawn ${id}`);
    if (this.actors.has(id) || this.endpoints.has(id)) throw actorExistsError(id);
    this.crashed.delete(id);
    this.traceLine(`spawn ${id}`);
    await this.startCell({ id, kind, ref: resolveActorKind(kind), args: encodeValue(args), placement }, drive);
  }

  /** `ctx.stopActor`: as {@link stopActor}, without driving (the driver running the caller does). */
  private stopFromActor(id: ActorId): Promise<void> {
    const cell = this.actors.get(id);
    if (cell === undefined || cell.state === 'dead') return Promise.resolve();
    cell.stopping ??= this.stopCell(cell);
    return cell.stopping;
  }

  private async startCell(spec: ActorSpec, drive = true): Promise<void> {
    const factory = loadActorFactory(spec.ref);
    const actor = factory(decodeValue(spec.args));
    const cell = this.makeCell(spec, actor);
    this.actors.set(spec.id, cell);
    // A crash while `start` runs cancels its timers and drops its messages: the spawn fails then, as a
    // worker dying before `spawned` fails it in production, instead of waiting for ever.
    const killed = new Promise<never>((_, reject) => (cell.abortStart = reject));
    try {
      const started = Promise.race([Promise.resolve(actor.start?.(cell.ctx)), killed]);
      await (drive ? this.runUntil(started) : started);
    } catch (error) {
      this.kill(cell);
      this.dropInbound(spec.id, 'stopped');
      throw error;
    }
    if (cell.state === 'starting') cell.state = 'running';
  }

  private async stopCell(cell: SimCell): Promise<void> {
    cell.state = 'stopping';
    this.dropInbound(cell.spec.id, 'stopped');
    try {
      await cell.actor.stop?.(cell.ctx);
    } catch (error) {
      this.log.error({ err: error, actor: cell.spec.id }, 'actor stop failed');
    }
    this.kill(cell);
  }

  /** One more crashed incarnation of `id`: messages held by a fault for it are dropped (SimMessage.targetKills). */
  private countCrash(id: ActorId): void {
    this.kills.set(id, (this.kills.get(id) ?? 0) + 1);
  }

  /** Removes a cell: its timers and pending requests are dropped; its context goes inert. */
  private kill(cell: SimCell): void {
    if (cell.state === 'starting') cell.abortStart?.(new Error(`actor ${cell.spec.id} crashed while starting`));
    cell.state = 'dead';
    this.timers.cancelOwner(cell.spec.id);
    cell.pending.dropAll();
    if (this.actors.get(cell.spec.id) === cell) this.actors.delete(cell.spec.id);
  }

  /** Drops queued messages to `id`; with a reason, requests among them fail for their requesters. */
  private dropInbound(id: ActorId, reason: UnavailableReason | null): void {
    const bounced: Envelope[] = [];
    for (const [key, channel] of [...this.channels]) {
      if ((channel.peek() as SimMessage).to !== id) continue;
      this.channels.delete(key);
      if (reason === null) continue;
      for (const message of channel.drain()) bounced.push(decodeEnvelope(message.bytes));
    }
    for (const envelope of bounced) {
      if (envelope.corr !== undefined && envelope.isReply !== true)
        this.bounce(envelope.from, envelope.corr, reason as UnavailableReason);
    }
  }

  /** An actor's clock: virtual time, its wall clock moved by its broker's {@link jumpWallClock} offset. */
  private clockFor(placement: Placement): Clock {
    const key = placement.pool === 'broker' ? placement.brokerId : -1;
    return {
      nowMs: () => this.nowMs + (this.wallClockOffsets.get(key) ?? 0),
      monotonicMs: () => this.nowMs - this.epochMs,
    };
  }

  private makeCell(spec: ActorSpec, actor: Actor): SimCell {
    const id = spec.id;
    const timers = this.timersFor(id);
    const pending = new PendingRequests(timers);
    const random = new Xoshiro128(this.actorSeeds.nextUint32());
    const log = this.log.child({ actor: id });
    const cell: SimCell = {
      spec,
      actor,
      pending,
      state: 'starting',
      exitRequested: false,
      ctx: undefined as unknown as ActorContext,
    };
    // A dead cell's continuations may still resume (an fsync the disk completes later): they must not
    // touch the disk its restarted successor now owns (a terminated worker runs nothing).
    let fs: FileSystem | undefined;
    cell.ctx = makeActorContext({
      self: id,
      clock: this.clockFor(spec.placement),
      timers: {
        setTimeout: (fn, delayMs) => (cell.state === 'dead' ? { id: 0 } : timers.setTimeout(fn, delayMs)),
        clearTimeout: (handle) => timers.clearTimeout(handle),
      },
      random,
      log,
      pending,
      fs: () => (fs ??= deadActorGuardedFileSystem(this.fs, () => cell.state === 'dead', id)),
      cpu: () => inlineCpuJobs,
      sendEnvelope: (envelope) => this.sendEnvelope(envelope),
      nextCorr: () => this.nextCorr(),
      stopped: () => cell.state === 'dead',
      exiting: () => cell.exitRequested || cell.state === 'stopping' || cell.state === 'dead',
      markExiting: () => {
        cell.exitRequested = true;
      },
      exitActor: () => {
        cell.stopping ??= this.stopCell(cell);
      },
      spawn: (childId, kind, args, placement) => this.spawnCell(childId, kind, args, placement, false),
      stopActor: (childId) => this.stopFromActor(childId),
    });
    return cell;
  }
}
