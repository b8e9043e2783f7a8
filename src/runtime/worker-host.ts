/**
 * The worker-thread entry (compiled to dist/src/runtime/worker-host.js): hosts many actors on one
 * thread. Each actor has its own mailbox; the host gives ready actors one message per turn, round
 * robin, in batches run from `setImmediate` so port messages and timers interleave with deliveries.
 * Envelopes between two actors of this worker stay here (encoded and decoded, so the receiver never
 * shares objects with the sender, but never posted); an envelope to an actor this worker has a direct
 * route to goes over that worker's channel; all others go to the main thread, which routes them and
 * hands out the routes (thread-runtime.ts, module comment: the ordering rules live there).
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
import type { BounceReason, DirectMessage, FromWorker, ToWorker, WorkerInit } from './worker-protocol';
import { Fifo } from './fifo';
import { PostBatcher } from './post-batcher';

/** A request this worker makes of the hub, before its reqId is assigned. */
type HubRequest =
  | Omit<Extract<FromWorker, { k: 'spawn-request' }>, 'reqId'>
  | Omit<Extract<FromWorker, { k: 'stop-request' }>, 'reqId'>;

/** This worker's end of a direct channel to another worker (thread-runtime.ts, module comment). */
interface PeerChannel {
  /** The peer's worker serial. */
  readonly peer: number;
  readonly port: MessagePort;
  /** False once the peer died or the hub said so: routes through it are dropped when next used. */
  open: boolean;
  /** The barrier this worker puts on what it sends: the highest the hub gave for routes through this channel. */
  barrier: number;
  /** What came from the peer before this worker had taken as many hub messages as its barrier says, in order. */
  readonly held: Fifo<DirectMessage>;
}

/** An envelope as posted to the hub. */
type HubEnvelope = Extract<FromWorker, { k: 'env' }>;

/** Entries of `lastHubSendTo` above which the settled ones are pruned. */
const HUB_SEND_TRACK_LIMIT = 1024;

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
  /** Messages taken from the hub so far (direct messages wait until this reaches their barrier). */
  private hubSeen = 0;
  /** Messages posted to the hub so far (the hub's `upTo` counts the same). */
  private sentToHub = 0;
  /** What one actor turn (or one port message's handling) posted to the hub, sent as one message at its end. */
  private readonly outbox = new PostBatcher<FromWorker>();
  /** The highest `upTo` the hub has sent: this many of this worker's messages have been routed. */
  private hubRouted = 0;
  /** Per target: the number (in `sentToHub`) of the last envelope sent to it through the hub. */
  private readonly lastHubSendTo = new Map<ActorId, number>();
  /** Direct channels by peer serial, and the actors reached through them. */
  private readonly channels = new Map<number, PeerChannel>();
  private readonly routes = new Map<ActorId, PeerChannel>();
  /** Per routed target: envelopes waiting for the hub to route what went to it before (`sendEnvelope`). */
  private readonly waitingForHub = new Map<ActorId, HubEnvelope[]>();
  /** Channels holding messages for a barrier. */
  private readonly holding = new Set<PeerChannel>();
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
    const outgoing: HubEnvelope = {
      k: 'env',
      to: envelope.to,
      from: envelope.from,
      corr: envelope.corr ?? null,
      isReply: envelope.isReply === true,
      buf: encodeEnvelopeForTransfer(envelope),
    };
    let channel = this.routes.get(envelope.to);
    if (channel !== undefined && !channel.open) {
      this.dropRoute(envelope.to);
      channel = undefined;
    }
    if (channel === undefined) {
      this.postToHub(outgoing);
      return;
    }
    // Direct only once nothing sent to this target through the hub can still be on its way: until
    // then, wait here (sending through the hub meanwhile could keep a busy sender there for ever).
    const waiting = this.waitingForHub.get(envelope.to);
    if (waiting === undefined && (this.lastHubSendTo.get(envelope.to) ?? 0) <= this.hubRouted) {
      this.postDirect(channel, outgoing.buf);
    } else if (waiting === undefined) {
      this.waitingForHub.set(envelope.to, [outgoing]);
    } else {
      waiting.push(outgoing);
    }
  }

  /** An envelope to the hub, remembered as the last one to its target that the hub has yet to route. */
  private postToHub(outgoing: HubEnvelope): void {
    this.post(outgoing, [outgoing.buf]);
    this.lastHubSendTo.set(outgoing.to, this.sentToHub);
  }

  private postDirect(channel: PeerChannel, buf: ArrayBuffer): void {
    const message: DirectMessage = { b: channel.barrier, buf };
    channel.port.postMessage(message, [buf]);
  }

  /** Forgets the route to `id`; what waited to go direct goes through the hub, in order, ahead of what follows. */
  private dropRoute(id: ActorId): void {
    this.routes.delete(id);
    const waiting = this.waitingForHub.get(id);
    if (waiting === undefined) return;
    this.waitingForHub.delete(id);
    for (const outgoing of waiting) this.postToHub(outgoing);
  }

  /** Sends on their channels the envelopes whose targets the hub has now routed everything to. */
  private flushWaiting(): void {
    for (const [id, waiting] of [...this.waitingForHub]) {
      if ((this.lastHubSendTo.get(id) ?? 0) > this.hubRouted) continue;
      const channel = this.routes.get(id);
      if (channel === undefined || !channel.open) {
        this.dropRoute(id);
        continue;
      }
      this.waitingForHub.delete(id);
      for (const outgoing of waiting) this.postDirect(channel, outgoing.buf);
    }
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
    // What was posted before the crash still goes, as it would have without batching.
    this.outbox.flush();
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

  /** Posts to the hub; what one turn posts goes as one message at its end (post-batcher.ts). */
  private post(message: FromWorker, transfer?: ArrayBuffer[]): void {
    if (this.dead) return;
    this.outbox.post(this.port, message, transfer);
    this.sentToHub++;
  }

  /** One delivery batch; `drainScheduled` stays true while it runs so sends during it do not reschedule. */
  private drain(): void {
    let budget = DELIVERIES_PER_TURN;
    let index = 0;
    while (index < this.ready.length && budget > 0 && !this.dead) {
      const actor = this.ready[index++] as HostedActor;
      actor.deliverNext();
      // What this turn posted leaves now: the hub works on it while later actors run (the batch
      // is one actor turn's, e.g. the produces a group commit answers, not the whole drain's).
      this.outbox.flush();
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
    if (message.k === 'batch') {
      // Each as if it had come alone (post-batcher.ts): the barriers count messages.
      for (const inner of message.messages) {
        if (this.dead) return;
        this.hubSeen++;
        this.onHubMessage(inner);
      }
    } else {
      this.hubSeen++;
      this.onHubMessage(message);
    }
    if (this.holding.size > 0) this.releaseHeld();
  }

  private onHubMessage(message: ToWorker): void {
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
      case 'ping':
        this.post({ k: 'pong', reqId: message.reqId });
        return;
      case 'bounce':
        this.actors.get(message.requester)?.pending.fail(message.corr, message.reason);
        return;
      case 'crashed': {
        const ids = new Set(message.ids);
        for (const actor of this.actors.values()) actor.pending.failTo(ids, 'crashed');
        for (const id of message.ids) this.dropRoute(id);
        for (const peer of message.peers) {
          const channel = this.channels.get(peer);
          if (channel !== undefined) this.closeChannel(channel);
        }
        return;
      }
      case 'link':
        this.openChannel(message.peer, message.port);
        return;
      case 'reroute':
        this.reroute(message);
        return;
      case 'unroute':
        for (const id of message.ids) this.dropRoute(id);
        return;
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

  // ---- direct channels ----

  private openChannel(peer: number, port: MessagePort): void {
    const channel: PeerChannel = { peer, port, open: true, barrier: 0, held: new Fifo<DirectMessage>() };
    this.channels.set(peer, channel);
    port.on('message', (message: DirectMessage) => this.onDirect(channel, message));
    // The peer's worker ended (crash, terminate): its end closed, and so does this one.
    port.on('close', () => this.closeChannel(channel));
  }

  private closeChannel(channel: PeerChannel): void {
    if (!channel.open) return;
    channel.open = false;
    if (this.channels.get(channel.peer) === channel) this.channels.delete(channel.peer);
    // What the dead peer sent and this worker held is lost with it, as in-flight envelopes are.
    channel.held.drain();
    this.holding.delete(channel);
    for (const [id, routed] of [...this.routes]) if (routed === channel) this.dropRoute(id);
    channel.port.close();
  }

  /** The hub handed an envelope back: send it on the direct channel, and route its target there from now on. */
  private reroute(message: Extract<ToWorker, { k: 'reroute' }>): void {
    this.hubRouted = Math.max(this.hubRouted, message.upTo);
    this.pruneHubSends();
    const channel = this.channels.get(message.peer);
    // The peer died after the hub routed this: lost, as an envelope to a dead worker is (`crashed` follows).
    if (channel !== undefined && channel.open) {
      channel.barrier = Math.max(channel.barrier, message.barrier);
      this.routes.set(message.to, channel);
      this.postDirect(channel, message.buf);
    }
    if (this.waitingForHub.size > 0) this.flushWaiting();
  }

  private pruneHubSends(): void {
    if (this.lastHubSendTo.size <= HUB_SEND_TRACK_LIMIT) return;
    for (const [id, sent] of [...this.lastHubSendTo]) if (sent <= this.hubRouted) this.lastHubSendTo.delete(id);
  }

  /** An envelope from a peer: delivered in channel order, once the hub messages before it are taken. */
  private onDirect(channel: PeerChannel, message: DirectMessage): void {
    if (this.dead || !channel.open) return;
    if (channel.held.length > 0 || message.b > this.hubSeen) {
      channel.held.push(message);
      this.holding.add(channel);
      return;
    }
    this.deliver(decodeEnvelope(message.buf));
  }

  private releaseHeld(): void {
    for (const channel of [...this.holding]) {
      while (channel.held.length > 0 && (channel.held.peek() as DirectMessage).b <= this.hubSeen) {
        this.deliver(decodeEnvelope((channel.held.shift() as DirectMessage).buf));
      }
      if (channel.held.length === 0) this.holding.delete(channel);
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
  const init = workerData as WorkerInit;
  // Loaded for their side effect only (module cache), as module-ref.ts loads actor modules.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  for (const modulePath of init.preload ?? []) require(modulePath);
  new WorkerHost(parentPort, init).listen();
}
