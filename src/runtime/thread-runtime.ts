/**
 * The production runtime: actors on worker threads, envelopes over MessagePorts.
 *
 * Threads. One controller worker (pool `controller`, capacity 1) and, per broker, a pool of
 * `numIoThreads` workers (pool `broker/<id>`). Workers are created lazily, when placement first needs
 * one, so a pool of 16 that hosts 3 replicas runs 3 threads. Placement: see placement.ts.
 *
 * Routing: the main thread is the hub. It keeps actorId → worker and is the only authority on it; a
 * worker delivers envelopes between its own actors itself. Endpoints (the network layer) live on the
 * main thread: an envelope to or from one crosses one port. Between two workers, envelopes go over a
 * direct MessageChannel, so replica-to-replica traffic never queues on the main thread, which is every
 * broker's network thread:
 * - A worker with no route to a target posts the envelope to the hub. If the target is on another
 *   worker, the hub creates the pair's channel if there is none (one end transferred to each worker,
 *   each on its port from the hub) and hands the envelope back (`reroute`, the same transferred
 *   ArrayBuffer) with the route; the sender posts it on the channel and routes the target there from
 *   now on. Bytes are transferred at every hop, never copied or decoded on the way.
 * - FIFO per pair across the switch: every `reroute` carries `upTo`, how many of the sender's messages
 *   the hub has taken. The sender sends directly only once the hub has taken the last envelope it sent
 *   to that target through the hub; until then it queues them locally, in order, and flushes the queue
 *   when a later `reroute` shows the hub is past them (sending through the hub meanwhile would keep a
 *   busy sender there for ever).
 * - The hub's earlier messages first: the route carries a barrier, the number of messages the hub had
 *   posted to the target's worker (its spawn of the target among them). The receiver holds what comes
 *   over a channel until it has taken that many messages from the hub, so a fresh actor is always there
 *   before its first direct envelope (Node happens to drain the hub's port first; this does not rely on
 *   it).
 * - Routes are dropped when they go stale: the hub tells every worker it gave a route to an actor that
 *   stops, exits or fails to start (`unroute`), and `crashed` closes the channels to a dead worker; the
 *   worker then sends through the hub again, which bounces (`crashed`, `unknown-actor`) or routes anew.
 *   A direct envelope to an actor that is gone is bounced by the receiving worker (`unknown-actor`).
 * Measured (bench/runtime-channels.ts: both modes side by side in one process, 2 shared cores, four
 * runs): a request/reply round trip between two workers takes 1.17-1.35x less time direct than through
 * the hub (~90 against ~110 µs on this loaded host); one-way 16 KiB envelopes stream at the same rate
 * (0.99-1.06x, ~1.4 GB/s: the copy into the envelope bounds it, not the hop), but the main thread is
 * ~50% busy forwarding them through the hub and ~4% direct, and with the main thread kept busy (as a
 * loaded network thread is) direct streams 1.39x faster. With `directChannels: false` every envelope
 * goes through the hub as before (two postMessages per envelope). The data path never queues behind
 * the controller's mailbox either way: the hub is plain routing code, not an actor.
 *
 * Supervision: a worker that exits without being asked (an actor threw, a fault was injected) is
 * replaced by a new worker in the same slot, which re-spawns the same actors (same ids, kinds, args);
 * then the `onWorkerRestart` handlers run. Requests that other actors or endpoints had pending to the
 * dead actors fail at once with ActorUnavailableError(`crashed`); requests to unknown actors fail with
 * `unknown-actor`. Envelopes in flight to the dead worker are lost (as on a network). A slot that
 * crashes more than `maxRestarts` times within `restartWindowMs` is given up (its actors are dropped and
 * an error is logged), so a crash loop cannot spin.
 *
 * Broker crash: {@link ThreadRuntime.crashBroker} terminates every worker of one broker's pool at once
 * (no `stop`, no restart), forgets its actors, fails requests pending to them with `crashed` and runs
 * the `onBrokerDown` handlers; the pool starts fresh workers on its next spawn. File descriptors the
 * actors opened are process-wide and outlive a terminated worker.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import { actorExistsError } from './actor';
import type { ActorId, Envelope } from './actor';
import type { Logger } from '../io/logger';
import { decodeEnvelope, encodeEnvelope, encodeEnvelopeForTransfer, encodeValue } from './envelope';
import { LocalEndpoint } from './local-endpoint';
import type { EndpointTransport } from './local-endpoint';
import { chooseWorker } from './placement';
import { resolveActorKind } from './registry';
import { resolveModulePath } from './module-ref';
import type { ModuleRef } from './module-ref';
import type { BrokerDownInfo, Endpoint, Placement, Runtime } from './runtime';
import { systemClock, TrackedTimers } from './system-time';
import { WorkerExitedError, WorkerSlot } from './worker-slot';
import { answerFields } from './worker-protocol';
import type { BounceReason, FromWorker, WorkerInit } from './worker-protocol';

/** Options of {@link ThreadRuntime}. */
export interface ThreadRuntimeOptions {
  /** Each broker's pool size (`num.io.threads`, ≥ 1). */
  brokers: Array<{ brokerId: number; numIoThreads: number }>;
  /** Main-thread logger (pino). Workers log at its `level` unless `workerLogLevel` is given. */
  logger: Logger;
  /**
   * The FileSystem class actors get as `ctx.fs` (constructed with `new` and no arguments, in each
   * worker, on first use). A module reference because a class cannot be posted to a worker. Default:
   * NodeFileSystem.
   */
  fsFactory?: ModuleRef;
  /** Workers' log level (default: `logger.level` if it has one, else `info`). */
  workerLogLevel?: string;
  /** Workers' log fd: 1 (default) or 2. Workers write synchronously to it. */
  workerLogFd?: 1 | 2;
  /** Restarts allowed per worker slot within `restartWindowMs` (default 5 in 10000 ms). */
  maxRestarts?: number;
  restartWindowMs?: number;
  /**
   * Direct MessageChannels between workers (default true). False: every cross-worker envelope is
   * forwarded by the hub, as before direct channels existed (the benchmark's baseline).
   */
  directChannels?: boolean;
}

/** Actor kinds a prestarted broker worker loads before its first message: the ones placed on broker pools. */
export const PRELOADED_KINDS: readonly string[] = ['replica', 'group-coordinator', 'log-dir'];

/** What the hub has done with envelopes between workers ({@link ThreadRuntime.hubStats}; tests, benchmarks). */
export interface HubStats {
  /** Envelopes the hub posted on to the target's worker (between two workers, or to a worker's own actor). */
  forwarded: number;
  /** Envelopes the hub handed back to their sender's worker to go over a direct channel. */
  rerouted: number;
  /** Direct channels the hub has created. */
  channels: number;
}

/** What {@link ThreadRuntime.workers} reports per worker slot (admin API, tests). */
export interface WorkerInfo {
  /** `controller` or `broker/<brokerId>`. */
  pool: string;
  index: number;
  /** The live worker's threadId; null if none is running. */
  threadId: number | null;
  actorIds: ActorId[];
}

interface Pool {
  capacity: number;
  slots: WorkerSlot[];
}

interface ActorRecord {
  id: ActorId;
  kind: string;
  ref: ModuleRef;
  /** Spawn args, msgpack-encoded once and kept for restarts. */
  args: Uint8Array;
  placement: Placement;
  slot: WorkerSlot;
  /** Slots whose workers were given a direct route to this actor (told `unroute` when it goes). */
  routedTo: Set<WorkerSlot>;
  state: 'starting' | 'running' | 'stopping';
  /** True once a start succeeded: only such actors are restarted after a crash. */
  started: boolean;
  stopping?: Promise<void>;
}

/** Correlation ids of worker incarnation n start at n × 2^32 (endpoints use [1, 2^32)). */
const CORR_SPAN = 0x1_0000_0000;

const WORKER_HOST_PATH = path.join(__dirname, 'worker-host.js');

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The production {@link Runtime}: worker pools, the main-thread hub, the supervisor (module comment). */
export class ThreadRuntime implements Runtime, EndpointTransport {
  private readonly log: Logger;
  private readonly pools = new Map<string, Pool>();
  private readonly actors = new Map<ActorId, ActorRecord>();
  private readonly endpoints = new Map<ActorId, LocalEndpoint>();
  private readonly restartHandlers: Array<(info: { actorIds: ActorId[]; error: string }) => void> = [];
  private readonly brokerDownHandlers: Array<(info: BrokerDownInfo) => void> = [];
  private readonly timers = new TrackedTimers();
  private readonly workerLogLevel: string;
  private readonly workerLogFd: 1 | 2;
  private readonly fsRef: ModuleRef | undefined;
  private readonly maxRestarts: number;
  private readonly restartWindowMs: number;
  private readonly directChannels: boolean;
  /** Direct channels by worker serial: the serials of the workers each one has a channel to. */
  private readonly channels = new Map<number, Set<number>>();
  private readonly stats: HubStats = { forwarded: 0, rerouted: 0, channels: 0 };
  private workerSerial = 0;
  private endpointCorr = 0;
  private closed = false;
  private shutdownPromise: Promise<void> | undefined;

  constructor(options: ThreadRuntimeOptions) {
    this.log = options.logger;
    this.pools.set('controller', { capacity: 1, slots: [] });
    for (const broker of options.brokers) {
      assert(
        Number.isInteger(broker.numIoThreads) && broker.numIoThreads >= 1,
        `broker ${broker.brokerId}: numIoThreads must be >= 1`,
      );
      const key = `broker/${broker.brokerId}`;
      assert(!this.pools.has(key), `broker ${broker.brokerId} listed twice`);
      this.pools.set(key, { capacity: broker.numIoThreads, slots: [] });
    }
    const loggerLevel = (options.logger as { level?: unknown }).level;
    this.workerLogLevel = options.workerLogLevel ?? (typeof loggerLevel === 'string' ? loggerLevel : 'info');
    this.workerLogFd = options.workerLogFd ?? 1;
    this.fsRef = options.fsFactory;
    this.maxRestarts = options.maxRestarts ?? 5;
    this.restartWindowMs = options.restartWindowMs ?? 10_000;
    this.directChannels = options.directChannels ?? true;
  }

  /**
   * Starts every worker a broker pool does not have yet (up to `numIoThreads`), each loading the
   * broker actor modules ({@link PRELOADED_KINDS}) before its first message; placement then fills
   * them as before (an idle worker first). A worker's start is ~0.3 s of CPU, nearly all of it module
   * loading: started lazily, that lands on the first topic creation or the first consumer group (50
   * __consumer_offsets replicas and coordinators spreading over fresh threads, issue 13). Resolves
   * once every worker this call started has loaded them (a `ping` each answers after its preload);
   * a worker that exits first is the supervisor's (its restart is not waited for), so this never
   * rejects. The broker calls it before its controller starts and waits for it before it says it
   * listens, as Kafka enables its acceptors only once its thread pools run: the first consumer group
   * then joins without waiting on module loads.
   */
  prestartWorkers(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const started: WorkerSlot[] = [];
    for (const [key, pool] of this.pools) {
      if (key === 'controller') continue;
      while (pool.slots.length < pool.capacity) {
        const slot = new WorkerSlot(key, pool.slots.length);
        pool.slots.push(slot);
        this.startWorker(slot, true);
        started.push(slot);
      }
    }
    return Promise.all(started.map((slot) => slot.request({ k: 'ping' }).catch(() => undefined))).then(() => undefined);
  }

  async spawn(id: ActorId, kind: string, args: unknown, placement: Placement): Promise<void> {
    if (this.closed) throw new Error(`runtime is shut down: cannot spawn ${id}`);
    await this.spawnEncoded(id, kind, encodeValue(args), placement);
  }

  /** {@link spawn} with the args already msgpack-encoded (an actor's `ctx.spawn` sends them so). */
  private async spawnEncoded(id: ActorId, kind: string, args: Uint8Array, placement: Placement): Promise<void> {
    if (this.closed) throw new Error(`runtime is shut down: cannot spawn ${id}`);
    if (this.actors.has(id) || this.endpoints.has(id)) throw actorExistsError(id);
    const ref = resolveActorKind(kind);
    const record: ActorRecord = {
      id,
      kind,
      ref,
      args,
      placement,
      slot: this.place(placement),
      routedTo: new Set(),
      state: 'starting',
      started: false,
    };
    this.actors.set(id, record);
    record.slot.actors.add(id);
    try {
      await this.startOn(record);
    } catch (error) {
      this.forget(record);
      throw error;
    }
  }

  stopActor(id: ActorId): Promise<void> {
    const record = this.actors.get(id);
    if (record === undefined) return Promise.resolve();
    record.stopping ??= (async () => {
      record.state = 'stopping';
      try {
        await record.slot.request({ k: 'stop', id });
      } catch (error) {
        // The worker reported a failing stop() (already logged there) or died: the actor is gone either way.
        if (!(error instanceof WorkerExitedError))
          this.log.error({ actor: id, error: errorMessage(error) }, 'actor stop failed');
      }
      this.forget(record);
    })();
    return record.stopping;
  }

  endpoint(id: ActorId): Endpoint {
    assert(!this.closed, `runtime is shut down: cannot create endpoint ${id}`);
    assert(!this.endpoints.has(id) && !this.actors.has(id), `address ${id} is already in use`);
    const endpoint = new LocalEndpoint(id, this, systemClock, this.timers, this.log);
    this.endpoints.set(id, endpoint);
    return endpoint;
  }

  onWorkerRestart(handler: (info: { actorIds: ActorId[]; error: string }) => void): void {
    this.restartHandlers.push(handler);
  }

  /**
   * Terminates every worker of pool `broker/<brokerId>` at once (Runtime.crashBroker): the slots are
   * dropped from the pool, so their exits are not crashes to supervise and a later spawn starts fresh
   * workers with a fresh restart budget. Resolves once the threads have ended and the handlers ran.
   */
  async crashBroker(brokerId: number, reason = 'broker crashed'): Promise<ActorId[]> {
    const key = `broker/${brokerId}`;
    const pool = this.pools.get(key);
    if (pool === undefined) throw new Error(`no worker pool for ${key}`);
    const slots = pool.slots;
    pool.slots = [];
    const records = [...this.actors.values()].filter((r) => slots.includes(r.slot));
    const actorIds = records.map((r) => r.id).sort();
    const exits: Promise<number>[] = [];
    const deadSerials: number[] = [];
    for (const slot of slots) {
      const worker = slot.worker;
      // From here on its messages, errors and exit are ignored (the listeners check slot.worker).
      slot.worker = null;
      if (worker === null) continue;
      exits.push(worker.terminate());
      deadSerials.push(slot.serial);
      this.dropChannelsOf(slot.serial);
      slot.failAll(new WorkerExitedError(slot.name, reason));
    }
    for (const record of records) this.forget(record, false);
    this.log.error({ broker: brokerId, reason, actors: actorIds }, 'broker crashed: its workers are terminated');
    this.announceCrash(actorIds, deadSerials);
    await Promise.all(exits);
    for (const handler of this.brokerDownHandlers) {
      try {
        handler({ brokerId, actorIds: [...actorIds], reason });
      } catch (handlerError) {
        this.log.error({ err: handlerError }, 'onBrokerDown handler threw');
      }
    }
    return actorIds;
  }

  onBrokerDown(handler: (info: BrokerDownInfo) => void): void {
    this.brokerDownHandlers.push(handler);
  }

  /** Stops broker-pool actors, then controller actors (each `stop` runs), closes endpoints, ends workers. */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= (async () => {
      this.closed = true;
      const brokerActors = [...this.actors.values()].filter((r) => r.placement.pool === 'broker');
      await Promise.all(brokerActors.map((r) => this.stopActor(r.id)));
      await Promise.all([...this.actors.keys()].map((id) => this.stopActor(id)));
      for (const endpoint of [...this.endpoints.values()]) endpoint.close();
      const exits: Promise<number>[] = [];
      for (const pool of this.pools.values()) {
        for (const slot of pool.slots) {
          if (slot.worker === null) continue;
          slot.terminating = true;
          exits.push(slot.worker.terminate());
        }
      }
      await Promise.all(exits);
      this.timers.clearAll();
    })();
    return this.shutdownPromise;
  }

  /**
   * Fault injection (admin API, tests): crashes the worker hosting `id` as an uncaught actor error
   * would; the supervisor then restarts its actors. Throws if `id` is not a live actor.
   */
  crashWorkerOf(id: ActorId, reason = 'injected crash'): void {
    const record = this.actors.get(id);
    assert(record !== undefined && record.slot.worker !== null, `no live worker hosts ${id}`);
    record.slot.post({ k: 'crash', error: reason });
  }

  /** Counts of what the hub did with envelopes between workers (module comment: direct channels). */
  hubStats(): HubStats {
    return { ...this.stats };
  }

  /** Every worker slot created so far, with its actors (admin API, placement tests). */
  workers(): WorkerInfo[] {
    const out: WorkerInfo[] = [];
    for (const pool of this.pools.values()) {
      for (const slot of pool.slots) {
        out.push({
          pool: slot.pool,
          index: slot.index,
          threadId: slot.worker?.threadId ?? null,
          actorIds: [...slot.actors].sort(),
        });
      }
    }
    return out;
  }

  /** The worker slot hosting `id`, or undefined. */
  workerOf(id: ActorId): WorkerInfo | undefined {
    const slot = this.actors.get(id)?.slot;
    if (slot === undefined) return undefined;
    return {
      pool: slot.pool,
      index: slot.index,
      threadId: slot.worker?.threadId ?? null,
      actorIds: [...slot.actors].sort(),
    };
  }

  // ---- EndpointTransport (main-thread endpoints) ----

  /** Routes an envelope from a main-thread endpoint. */
  sendEnvelope(envelope: Envelope): void {
    const endpoint = this.endpoints.get(envelope.to);
    if (endpoint !== undefined) {
      const copy = decodeEnvelope(encodeEnvelope(envelope));
      queueMicrotask(() => endpoint.deliver(copy));
      return;
    }
    const slot = this.actors.get(envelope.to)?.slot;
    if (slot !== undefined && slot.worker !== null) {
      const buf = encodeEnvelopeForTransfer(envelope);
      slot.post({ k: 'env', to: envelope.to, buf }, [buf]);
      return;
    }
    const corr = envelope.corr;
    if (corr !== undefined && envelope.isReply !== true) {
      const reason: BounceReason = this.actors.has(envelope.to) ? 'crashed' : 'unknown-actor';
      queueMicrotask(() => this.bounce(envelope.from, corr, envelope.to, reason));
    }
  }

  nextCorr(): number {
    this.endpointCorr++;
    assert(this.endpointCorr < CORR_SPAN, 'endpoint correlation ids exhausted');
    return this.endpointCorr;
  }

  removeEndpoint(endpoint: LocalEndpoint): void {
    if (this.endpoints.get(endpoint.id) === endpoint) this.endpoints.delete(endpoint.id);
  }

  // ---- placement and workers ----

  private pool(placement: Placement): Pool {
    const key = placement.pool === 'controller' ? 'controller' : `broker/${placement.brokerId}`;
    const pool = this.pools.get(key);
    if (pool === undefined) throw new Error(`no worker pool for ${key}`);
    return pool;
  }

  private place(placement: Placement): WorkerSlot {
    const pool = this.pool(placement);
    const key = placement.pool === 'controller' ? 'controller' : `broker/${placement.brokerId}`;
    const index = chooseWorker(
      pool.slots.map((s) => s.actors.size),
      pool.capacity,
    );
    if (index === pool.slots.length) pool.slots.push(new WorkerSlot(key, index));
    const slot = pool.slots[index] as WorkerSlot;
    if (slot.worker === null) this.startWorker(slot);
    return slot;
  }

  /** Starts `slot`'s worker; `preload`: one that loads {@link PRELOADED_KINDS} first ({@link prestartWorkers}). */
  private startWorker(slot: WorkerSlot, preload = false): void {
    assert(slot.worker === null, `worker ${slot.name} is already running`);
    this.workerSerial++;
    const init: WorkerInit = {
      name: slot.name,
      corrBase: this.workerSerial * CORR_SPAN,
      logLevel: this.workerLogLevel,
      logFd: this.workerLogFd,
    };
    if (this.fsRef !== undefined) init.fsRef = this.fsRef;
    assert(Number.isSafeInteger(init.corrBase + CORR_SPAN), 'worker serials exhausted');
    if (preload) init.preload = PRELOADED_KINDS.map((kind) => resolveModulePath(resolveActorKind(kind).module));
    const worker = new Worker(WORKER_HOST_PATH, { workerData: init, name: slot.name });
    slot.worker = worker;
    slot.serial = this.workerSerial;
    slot.posted = 0;
    slot.received = 0;
    slot.terminating = false;
    slot.lastError = undefined;
    worker.on('message', (message: FromWorker) => {
      if (slot.worker === worker) this.onWorkerMessage(slot, message);
    });
    worker.on('error', (error: Error) => {
      if (slot.worker === worker) slot.lastError = error.stack ?? error.message;
    });
    worker.on('exit', (code: number) => {
      if (slot.worker === worker) this.onWorkerExit(slot, code);
    });
  }

  private startOn(record: ActorRecord): Promise<void> {
    record.state = 'starting';
    return record.slot
      .request({ k: 'spawn', id: record.id, kind: record.kind, ref: record.ref, args: record.args })
      .then(() => {
        if (record.state === 'starting') record.state = 'running';
        record.started = true;
      });
  }

  /**
   * Drops an actor from the tables. `unroute`: tell the workers given a direct route to it to forget the
   * route (not needed when its worker died: `crashed` closes every channel to that worker).
   */
  private forget(record: ActorRecord, unroute = true): void {
    if (this.actors.get(record.id) === record) this.actors.delete(record.id);
    record.slot.actors.delete(record.id);
    if (unroute) for (const slot of record.routedTo) slot.post({ k: 'unroute', ids: [record.id] });
    record.routedTo.clear();
  }

  // ---- routing (the hub) ----

  private onWorkerMessage(slot: WorkerSlot, message: FromWorker): void {
    if (message.k === 'batch') {
      // Each as if it had come alone (post-batcher.ts); a worker replaced meanwhile gets none of the rest.
      const worker = slot.worker;
      for (const inner of message.messages) if (slot.worker === worker) this.onWorkerMessage(slot, inner);
      return;
    }
    slot.received++;
    switch (message.k) {
      case 'env':
        this.route(slot, message);
        return;
      case 'spawned':
      case 'stopped':
      case 'pong':
        slot.answer(message);
        return;
      case 'exited': {
        const record = this.actors.get(message.id);
        if (record !== undefined && record.slot === slot) this.forget(record);
        return;
      }
      case 'bounce':
        this.bounce(message.requester, message.corr, message.to, message.reason);
        return;
      case 'spawn-request':
        this.answerWorker(
          slot,
          message.reqId,
          this.spawnEncoded(message.id, message.kind, message.args, message.placement),
        );
        return;
      case 'stop-request':
        this.answerWorker(slot, message.reqId, this.stopActor(message.id));
        return;
    }
  }

  /**
   * Answers a worker's `spawn-request` or `stop-request` with `outcome`, to the worker incarnation that
   * asked: a worker that died meanwhile is not answered (its successor numbers its requests afresh).
   */
  private answerWorker(slot: WorkerSlot, reqId: number, outcome: Promise<void>): void {
    const asker = slot.worker;
    outcome.then(
      () => {
        if (slot.worker === asker) slot.post({ k: 'answer', reqId });
      },
      (error: unknown) => {
        if (slot.worker === asker) slot.post({ k: 'answer', reqId, ...answerFields(error) });
      },
    );
  }

  /**
   * An envelope from worker `from`: to an endpoint (decoded and delivered here), to an actor on the
   * same worker or with direct channels off (forwarded), to an actor on another worker (handed back
   * with a direct route, after creating the channel if the pair has none), or bounced.
   */
  private route(from: WorkerSlot, message: Extract<FromWorker, { k: 'env' }>): void {
    const endpoint = this.endpoints.get(message.to);
    if (endpoint !== undefined) {
      endpoint.deliver(decodeEnvelope(message.buf));
      return;
    }
    const record = this.actors.get(message.to);
    const target = record?.slot;
    if (record !== undefined && target !== undefined && target.worker !== null) {
      if (!this.directChannels || target === from) {
        this.stats.forwarded++;
        target.post({ k: 'env', to: message.to, buf: message.buf }, [message.buf]);
        return;
      }
      this.ensureChannel(from, target);
      record.routedTo.add(from);
      this.stats.rerouted++;
      from.post(
        {
          k: 'reroute',
          to: message.to,
          buf: message.buf,
          peer: target.serial,
          barrier: target.posted,
          upTo: from.received,
        },
        [message.buf],
      );
      return;
    }
    if (message.corr !== null && !message.isReply) {
      this.bounce(message.from, message.corr, message.to, record !== undefined ? 'crashed' : 'unknown-actor');
    }
  }

  /** Creates the direct channel between the live workers of `a` and `b` unless they have one. */
  private ensureChannel(a: WorkerSlot, b: WorkerSlot): void {
    const ofA = this.channels.get(a.serial) ?? new Set<number>();
    if (ofA.has(b.serial)) return;
    const ofB = this.channels.get(b.serial) ?? new Set<number>();
    ofA.add(b.serial);
    ofB.add(a.serial);
    this.channels.set(a.serial, ofA);
    this.channels.set(b.serial, ofB);
    const { port1, port2 } = new MessageChannel();
    a.post({ k: 'link', peer: b.serial, port: port1 }, [port1]);
    b.post({ k: 'link', peer: a.serial, port: port2 }, [port2]);
    this.stats.channels++;
  }

  /** Forgets the channels of a worker that is gone (its ends closed with it). */
  private dropChannelsOf(serial: number): void {
    for (const peer of this.channels.get(serial) ?? []) this.channels.get(peer)?.delete(serial);
    this.channels.delete(serial);
  }

  /** Tells `requester` (endpoint or actor) that its request `corr` to `to` gets no reply. */
  private bounce(requester: ActorId, corr: number, to: ActorId, reason: BounceReason): void {
    const endpoint = this.endpoints.get(requester);
    if (endpoint !== undefined) {
      endpoint.pending.fail(corr, reason);
      return;
    }
    this.actors.get(requester)?.slot.post({ k: 'bounce', requester, corr, to, reason });
  }

  // ---- supervision ----

  private onWorkerExit(slot: WorkerSlot, code: number): void {
    const error = slot.lastError ?? `worker exited with code ${code}`;
    const intentional = slot.terminating;
    slot.worker = null;
    this.dropChannelsOf(slot.serial);
    slot.failAll(new WorkerExitedError(slot.name, error));
    if (intentional) return;

    const lost = [...slot.actors].map((id) => this.actors.get(id) as ActorRecord);
    const restart = lost.filter((r) => r.started && r.state !== 'stopping');
    for (const record of lost) if (!restart.includes(record)) this.forget(record, false);
    const lostIds = lost.map((r) => r.id);
    this.log.error({ worker: slot.name, error, actors: lostIds }, 'worker crashed');
    this.announceCrash(lostIds, [slot.serial]);
    if (this.closed || restart.length === 0) {
      for (const record of restart) this.forget(record);
      return;
    }

    const nowMs = performance.now();
    while (slot.restartTimesMs.length > 0 && nowMs - (slot.restartTimesMs[0] as number) > this.restartWindowMs)
      slot.restartTimesMs.shift();
    if (slot.restartTimesMs.length >= this.maxRestarts) {
      this.log.error(
        { worker: slot.name, actors: restart.map((r) => r.id) },
        'worker crashes too often: giving up its actors',
      );
      for (const record of restart) this.forget(record);
      return;
    }
    slot.restartTimesMs.push(nowMs);
    void this.restartSlot(slot, restart, error);
  }

  /**
   * Fails every request pending to `ids` (on workers and endpoints); workers also close their channels
   * to the dead workers `peers` and forget the routes through them.
   */
  private announceCrash(ids: ActorId[], peers: number[]): void {
    if (ids.length === 0 && peers.length === 0) return;
    const targets = new Set(ids);
    for (const endpoint of this.endpoints.values()) endpoint.pending.failTo(targets, 'crashed');
    for (const pool of this.pools.values()) for (const slot of pool.slots) slot.post({ k: 'crashed', ids, peers });
  }

  private async restartSlot(slot: WorkerSlot, records: ActorRecord[], error: string): Promise<void> {
    this.startWorker(slot);
    const results = await Promise.allSettled(records.map((r) => this.startOn(r)));
    const restarted: ActorId[] = [];
    results.forEach((result, i) => {
      const record = records[i] as ActorRecord;
      if (result.status === 'fulfilled') {
        restarted.push(record.id);
        return;
      }
      // A worker that died again during the restart hands these actors to its own restart.
      if (result.reason instanceof WorkerExitedError) return;
      this.log.error({ actor: record.id, error: errorMessage(result.reason) }, 'actor failed to restart');
      this.forget(record);
    });
    if (restarted.length === 0) return;
    this.log.warn({ worker: slot.name, actors: restarted }, 'worker restarted');
    for (const handler of this.restartHandlers) {
      try {
        handler({ actorIds: restarted, error });
      } catch (handlerError) {
        this.log.error({ err: handlerError }, 'onWorkerRestart handler threw');
      }
    }
  }
}
