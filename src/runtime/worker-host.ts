/**
 * The worker-thread entry (compiled to dist/src/runtime/worker-host.js): hosts many actors on one
 * thread. Each actor has its own mailbox; the host gives ready actors one message per turn, round
 * robin, in batches run from `setImmediate` so port messages and timers interleave with deliveries.
 * Envelopes between two actors of this worker stay here (encoded and decoded, so the receiver never
 * shares objects with the sender, but never posted); all others go to the main thread, which routes
 * them (see thread-runtime.ts).
 *
 * A throw (or a rejected promise) from actor code is a programmer error (STYLE.md habit 3): the host
 * logs it synchronously and rethrows it uncaught, the worker dies, and the supervisor restarts its
 * actors on a fresh worker.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { ActorId, Envelope } from './actor';
import type { Clock } from '../io/clock';
import type { Logger } from '../io/logger';
import type { FileSystem } from '../io/file-system';
import { NodeFileSystem } from '../io/node-file-system';
import { decodeEnvelope, decodeValue, encodeEnvelope, encodeEnvelopeForTransfer, encodeValue } from './envelope';
import { HostedActor } from './hosted-actor';
import type { ActorHostServices } from './hosted-actor';
import type { CpuJobs } from './cpu-jobs';
import { createPiscinaCpuJobs } from './cpu-pool';
import { createLogger } from './logger';
import { createSystemRandom } from '../io/random';
import { loadExport } from './module-ref';
import { loadActorFactory } from './registry';
import { systemClock } from './system-time';
import type { Placement } from './placement';
import { answerError, errnoOf } from './worker-protocol';
import type { BounceReason, FromWorker, ToWorker, WorkerInit } from './worker-protocol';

/** A request this worker makes of the hub, before its reqId is assigned. */
type HubRequest =
  | Omit<Extract<FromWorker, { k: 'spawn-request' }>, 'reqId'>
  | Omit<Extract<FromWorker, { k: 'stop-request' }>, 'reqId'>;

/** Deliveries per event-loop turn before yielding to port messages and timers. */
const DELIVERIES_PER_TURN = 1024;

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The actors of one worker thread and its side of the worker protocol (module comment). */
export class WorkerHost implements ActorHostServices {
  readonly clock: Clock = systemClock;
  private readonly actors = new Map<ActorId, HostedActor>();
  private readonly ready: HostedActor[] = [];
  private drainScheduled = false;
  private dead = false;
  private corr: number;
  private fileSystem: FileSystem | undefined;
  private cpuPool: CpuJobs | undefined;
  private readonly log: Logger;
  /** This worker's `spawn-request`s and `stop-request`s awaiting the hub's `answer`, by reqId. */
  private readonly awaiting = new Map<number, { resolve(): void; reject(error: Error): void }>();
  private nextReqId = 1;

  constructor(
    private readonly port: MessagePort,
    private readonly init: WorkerInit,
  ) {
    this.corr = init.corrBase;
    this.log = createLogger({ level: init.logLevel, fd: init.logFd, bindings: { worker: init.name } });
  }

  /** Starts handling messages from the main thread. */
  listen(): void {
    this.port.on('message', (message: ToWorker) => this.onMessage(message));
  }

  fs(): FileSystem {
    if (this.fileSystem === undefined) {
      const fsRef = this.init.fsRef;
      if (fsRef === undefined) {
        this.fileSystem = new NodeFileSystem();
      } else {
        const FileSystemClass = loadExport(fsRef);
        if (typeof FileSystemClass !== 'function') throw new Error(`${fsRef.module}#${fsRef.export} is not a class`);
        this.fileSystem = new (FileSystemClass as new () => FileSystem)();
      }
    }
    return this.fileSystem;
  }

  cpuJobs(): CpuJobs {
    this.cpuPool ??= createPiscinaCpuJobs();
    return this.cpuPool;
  }

  nextCorr(): number {
    return ++this.corr;
  }

  sendEnvelope(envelope: Envelope): void {
    if (this.dead) return;
    const local = this.actors.get(envelope.to);
    if (local !== undefined) {
      this.deliver(decodeEnvelope(encodeEnvelope(envelope)));
      return;
    }
    const buf = encodeEnvelopeForTransfer(envelope);
    this.post(
      {
        k: 'env',
        to: envelope.to,
        from: envelope.from,
        corr: envelope.corr ?? null,
        isReply: envelope.isReply === true,
        buf,
      },
      [buf],
    );
  }

  schedule(actor: HostedActor): void {
    if (actor.inReadyQueue || this.dead) return;
    actor.inReadyQueue = true;
    this.ready.push(actor);
    if (!this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => this.drain());
    }
  }

  crash(error: unknown, actorId?: ActorId): void {
    if (this.dead) return;
    this.dead = true;
    const err = error instanceof Error ? error : new Error(String(error));
    const why = actorId === undefined ? 'crash requested' : 'uncaught error in actor code';
    this.log.error({ err, actor: actorId }, `${why}: crashing the worker`);
    process.nextTick(() => {
      throw err;
    });
  }

  bounce(requester: ActorId, corr: number, to: ActorId, reason: BounceReason): void {
    const local = this.actors.get(requester);
    if (local !== undefined) {
      local.pending.fail(corr, reason);
      return;
    }
    this.post({ k: 'bounce', requester, corr, to, reason });
  }

  spawnActor(id: ActorId, kind: string, args: unknown, placement: Placement): Promise<void> {
    let bytes: Uint8Array;
    try {
      bytes = encodeValue(args);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return this.ask({ k: 'spawn-request', id, kind, args: bytes, placement }, [bytes.buffer as ArrayBuffer]);
  }

  stopActor(id: ActorId): Promise<void> {
    return this.ask({ k: 'stop-request', id });
  }

  exitActor(actor: HostedActor): void {
    void actor.stop().then(() => {
      if (this.actors.get(actor.id) === actor) this.actors.delete(actor.id);
      this.post({ k: 'exited', id: actor.id });
    });
  }

  /** Posts a request to the hub and settles with its `answer` (never, if this worker dies first). */
  private ask(message: HubRequest, transfer?: ArrayBuffer[]): Promise<void> {
    const reqId = this.nextReqId++;
    return new Promise<void>((resolve, reject) => {
      this.awaiting.set(reqId, { resolve, reject });
      this.post({ ...message, reqId } as FromWorker, transfer);
    });
  }

  private post(message: FromWorker, transfer?: ArrayBuffer[]): void {
    if (this.dead) return;
    this.port.postMessage(message, transfer);
  }

  /** One delivery batch; `drainScheduled` stays true while it runs so sends during it do not reschedule. */
  private drain(): void {
    let budget = DELIVERIES_PER_TURN;
    let index = 0;
    while (index < this.ready.length && budget > 0 && !this.dead) {
      const actor = this.ready[index++] as HostedActor;
      actor.deliverNext();
      budget--;
      if (actor.deliverable) this.ready.push(actor);
      else actor.inReadyQueue = false;
    }
    this.ready.splice(0, index);
    if (this.ready.length > 0 && !this.dead) setImmediate(() => this.drain());
    else this.drainScheduled = false;
  }

  private deliver(envelope: Envelope): void {
    const actor = this.actors.get(envelope.to);
    if (envelope.isReply === true) {
      if (actor !== undefined && envelope.corr !== undefined)
        actor.pending.resolve(envelope.corr, envelope.from, envelope.body);
      return;
    }
    if (actor === undefined) {
      if (envelope.corr !== undefined) this.bounce(envelope.from, envelope.corr, envelope.to, 'unknown-actor');
      return;
    }
    actor.enqueue(envelope);
  }

  private onMessage(message: ToWorker): void {
    if (this.dead) return;
    switch (message.k) {
      case 'env':
        this.deliver(decodeEnvelope(message.buf));
        return;
      case 'spawn':
        void this.spawn(message);
        return;
      case 'stop':
        void this.stop(message.reqId, message.id);
        return;
      case 'bounce':
        this.actors.get(message.requester)?.pending.fail(message.corr, message.reason);
        return;
      case 'crashed': {
        const ids = new Set(message.ids);
        for (const actor of this.actors.values()) actor.pending.failTo(ids, 'crashed');
        return;
      }
      case 'crash':
        this.crash(new Error(message.error));
        return;
      case 'answer': {
        const waiting = this.awaiting.get(message.reqId);
        if (waiting === undefined) return;
        this.awaiting.delete(message.reqId);
        if (message.error === undefined) waiting.resolve();
        else waiting.reject(answerError(message));
        return;
      }
    }
  }

  private async spawn(message: Extract<ToWorker, { k: 'spawn' }>): Promise<void> {
    let error: string | undefined;
    let code: string | undefined;
    let actor: HostedActor | undefined;
    try {
      if (this.actors.has(message.id)) throw new Error(`actor ${message.id} already exists on this worker`);
      const factory = loadActorFactory(message.ref);
      const instance = factory(decodeValue(message.args));
      const log = this.log.child({ actor: message.id });
      actor = new HostedActor(message.id, message.kind, instance, this, createSystemRandom(), log);
      this.actors.set(message.id, actor);
      await actor.start();
    } catch (caught) {
      error = errorMessage(caught);
      code = errnoOf(caught);
      if (actor !== undefined && this.actors.get(message.id) === actor) this.actors.delete(message.id);
      this.log.warn({ actor: message.id, kind: message.kind, error }, 'actor failed to start');
    }
    this.post(
      error === undefined
        ? { k: 'spawned', reqId: message.reqId }
        : { k: 'spawned', reqId: message.reqId, error, ...(code === undefined ? {} : { code }) },
    );
  }

  private async stop(reqId: number, id: ActorId): Promise<void> {
    const actor = this.actors.get(id);
    const error = actor === undefined ? undefined : await actor.stop();
    if (actor !== undefined && this.actors.get(id) === actor) this.actors.delete(id);
    this.post(error === undefined ? { k: 'stopped', reqId } : { k: 'stopped', reqId, error });
  }
}

if (!isMainThread && parentPort !== null && require.main === module) {
  new WorkerHost(parentPort, workerData as WorkerInit).listen();
}
