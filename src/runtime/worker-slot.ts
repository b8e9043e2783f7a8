/**
 * One worker position in a pool, as the main thread sees it: the current Worker (replaced when it
 * crashes), the actors placed on it, and the spawn/stop requests awaiting the worker's answer.
 */
import type { TransferListItem, Worker } from 'node:worker_threads';
import type { ActorId } from './actor';
import { PostBatcher } from './post-batcher';
import { answerError } from './worker-protocol';
import type { FromWorker, ToWorker } from './worker-protocol';

/** A spawn or stop the worker never answered because it exited. */
export class WorkerExitedError extends Error {
  constructor(
    readonly workerName: string,
    readonly reason: string,
  ) {
    super(`worker ${workerName} exited: ${reason}`);
    this.name = 'WorkerExitedError';
  }
}

type SlotRequest = Extract<ToWorker, { k: 'spawn' | 'stop' | 'ping' }>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A worker position in a pool, surviving the workers that crash in it (module comment). */
export class WorkerSlot {
  /** The live worker; null before the first actor is placed here and between a crash and its restart. */
  worker: Worker | null = null;
  /** Actors placed here (their records live in the runtime), including those starting or restarting. */
  readonly actors = new Set<ActorId>();
  /** Set before an intentional terminate, so its exit is not treated as a crash. */
  terminating = false;
  /** The last uncaught error the worker reported (for the crash report). */
  lastError: string | undefined;
  /** When this slot's worker was restarted (monotonic ms), for the restart-intensity limit. */
  readonly restartTimesMs: number[] = [];
  /** The live worker's incarnation number, unique in the runtime (names its direct channels); 0 before the first. */
  serial = 0;
  /** Messages posted to the live worker so far (a direct channel's barrier counts these). */
  posted = 0;
  /** Messages taken from the live worker so far (a reroute's `upTo`). */
  received = 0;
  private nextReqId = 1;
  private readonly waiting = new Map<number, { resolve(): void; reject(error: Error): void }>();

  constructor(
    /** Pool key: `controller` or `broker/<brokerId>`. */
    readonly pool: string,
    readonly index: number,
  ) {}

  /** `pool#index`, used in logs and worker names. */
  get name(): string {
    return `${this.pool}#${this.index}`;
  }

  /** What this turn posted to the worker, sent as one message at its end (post-batcher.ts). */
  private readonly outbox = new PostBatcher<ToWorker>();

  /**
   * Posts a message to the live worker (dropped if there is none), counting it in {@link posted}.
   * Messages posted in one turn reach the worker in one postMessage, in order.
   */
  post(message: ToWorker, transfer?: readonly TransferListItem[]): void {
    if (this.worker === null) return;
    this.outbox.post(this.worker, message, transfer);
    this.posted++;
  }

  /**
   * Posts a spawn or stop and resolves when the worker answers; rejects with Error(message) if the
   * worker reports one, or with WorkerExitedError if the worker dies first.
   */
  request(message: DistributiveOmit<SlotRequest, 'reqId'>): Promise<void> {
    const reqId = this.nextReqId++;
    return new Promise<void>((resolve, reject) => {
      if (this.worker === null) {
        reject(new WorkerExitedError(this.name, 'no live worker'));
        return;
      }
      this.waiting.set(reqId, { resolve, reject });
      this.post({ ...message, reqId } as SlotRequest);
    });
  }

  /** Settles request `reqId` from a `spawned`/`stopped`/`pong` answer. */
  answer(message: Extract<FromWorker, { k: 'spawned' | 'stopped' | 'pong' }>): void {
    const waiting = this.waiting.get(message.reqId);
    if (waiting === undefined) return;
    this.waiting.delete(message.reqId);
    if (message.k === 'pong' || message.error === undefined) waiting.resolve();
    else waiting.reject(answerError(message));
  }

  /** Rejects every unanswered request (the worker exited). */
  failAll(error: Error): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const request of waiting) request.reject(error);
  }
}
