/**
 * One client connection: size-prefixed framing, requests handled concurrently but answered strictly
 * in request order (every Kafka client relies on it), bounded work in flight, and backpressure from
 * slow readers. A frame that cannot be parsed closes this connection only (with a log line), after
 * the requests before it on the connection are answered, as Kafka does: a client that pipelines
 * requests still gets the answers to the good ones.
 *
 * Frame: `size:int32 | request header | request body` (protocol guide, "Common Request and Response
 * Structure"). A size below 0 or above socket.request.max.bytes is refused before any buffering.
 */
import type { Socket } from 'node:net';
import type { Logger } from '../io/logger';
import type { RateLimitedWarning } from './rate-limited-warning';
import { CloseConnection } from './close-connection';
import { responseBuffers } from './response-buffers';
import { allocateWithHeadroom } from '../runtime/envelope';

/**
 * Handles one complete request frame (without the size prefix); resolves with the framed response as
 * chunks (large record sets by reference, written with one corked burst) or null for no response.
 */
export type FrameHandler = (frame: Buffer, connection: Connection) => Promise<Buffer[] | null>;

interface Slot {
  done: boolean;
  response: Buffer[] | null;
  /** The connection closes once the slots before this one are written (a bad frame or request). */
  endsConnection?: boolean;
}

/** How long a closing connection may take to flush its last answers before it is destroyed (ms). */
const CLOSE_FLUSH_MS = 5_000;

/**
 * How long a closing connection stays open once its last answers are written (ms). Destroying a
 * socket with unread input sends a reset, and a reset that arrives before the client has read the
 * answers may make its stack drop them (HTTP servers' lingering close); a short wait lets them land.
 * Kafka closes at once; until then the socket still counts against max.connections.
 */
const CLOSE_LINGER_MS = 100;

/** A frame copied together from socket reads gets a buffer of its own from this size (Node's own pool takes less). */
const OWN_BUFFER_MIN_BYTES = 4096;

export interface ConnectionLimits {
  socketRequestMaxBytes: number;
  /** Requests read but not yet answered before the connection stops reading (backpressure). */
  maxInFlightRequests: number;
  /** connections.max.idle.ms: close a connection with nothing in flight after this long without a request; -1 = never. */
  connectionsMaxIdleMs: number;
  /** Tests: how long a closing connection may take to flush before it is destroyed (default CLOSE_FLUSH_MS). */
  closeFlushMs?: number;
}

export class Connection {
  readonly remote: string;
  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  private readonly slots: Slot[] = [];
  private closed = false;
  /** A bad frame or request was seen: read nothing more; close after the answers before it. */
  private closing = false;
  private pausedForWrites = false;

  constructor(
    private readonly socket: Socket,
    private readonly handleFrame: FrameHandler,
    private readonly limits: ConnectionLimits,
    private readonly log: Logger,
    private readonly onClose: (connection: Connection) => void,
    /** The warn-level 'closing connection' line, rate-limited across the listener's connections. */
    private readonly closeWarning: RateLimitedWarning,
  ) {
    this.remote = `${socket.remoteAddress}:${socket.remotePort}`;
    socket.setNoDelay(true);
    if (limits.connectionsMaxIdleMs >= 0) {
      socket.setTimeout(limits.connectionsMaxIdleMs);
      socket.on('timeout', () => {
        if (this.slots.length === 0)
          this.close(`idle for connections.max.idle.ms=${limits.connectionsMaxIdleMs}`, 'debug');
      });
    }
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => {
      this.pausedForWrites = false;
      this.pump();
    });
    socket.on('error', (error) => this.log.debug({ remote: this.remote, error: error.message }, 'connection error'));
    socket.on('close', () => {
      this.closed = true;
      this.onClose(this);
    });
  }

  /** Closes the connection after logging why (bad frame, unknown API key). */
  close(reason: string, level: 'warn' | 'debug' = 'warn'): void {
    if (this.closed) return;
    this.closed = true;
    if (level === 'warn') this.closeWarning.warn({ remote: this.remote, reason }, 'closing connection');
    else this.log.debug({ remote: this.remote, reason }, 'closing connection');
    this.socket.destroy();
  }

  /**
   * Logs why, stops reading, and closes once every request before the bad one is answered: `slot`
   * is the bad request's own slot (its answer is never written, nor those after it), or a new slot
   * at the end for a frame that was never dispatched.
   */
  private closeAfterAnswered(reason: string, slot?: Slot): void {
    if (this.closed) return;
    if (this.closing) {
      // An earlier request failed after a later one started the close: the connection ends there.
      if (slot !== undefined) {
        slot.done = true;
        slot.endsConnection = true;
        this.writeReady();
      }
      return;
    }
    this.closing = true;
    this.closeWarning.warn({ remote: this.remote, reason }, 'closing connection');
    this.chunks = [];
    this.bufferedBytes = 0;
    if (!this.socket.isPaused()) this.socket.pause();
    const end = slot ?? { done: true, response: null };
    end.done = true;
    end.endsConnection = true;
    if (slot === undefined) this.slots.push(end);
    this.writeReady();
  }

  /**
   * Ends the socket after its queued writes flush, and destroys it CLOSE_LINGER_MS later (whether or
   * not the client closes its side), or after CLOSE_FLUSH_MS if the client never reads them.
   */
  private endAfterFlush(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.once('finish', () => setTimeout(() => this.socket.destroy(), CLOSE_LINGER_MS).unref());
    this.socket.end();
    setTimeout(() => this.socket.destroy(), this.limits.closeFlushMs ?? CLOSE_FLUSH_MS).unref();
  }

  private onData(chunk: Buffer): void {
    if (this.closed || this.closing) return;
    this.chunks.push(chunk);
    this.bufferedBytes += chunk.length;
    this.pump();
  }

  /**
   * Dispatches buffered frames while the connection may take more work: fewer than
   * maxInFlightRequests unanswered and the client reading its responses. Frames beyond that stay
   * buffered (the socket is paused, so at most one read's worth), which bounds the memory a client
   * that pipelines requests and never reads can make the broker hold.
   */
  private pump(): void {
    while (!this.closed && !this.closing && this.canDispatch() && this.bufferedBytes >= 4) {
      const size = this.peekInt32();
      if (size < 0 || size > this.limits.socketRequestMaxBytes) {
        this.closeAfterAnswered(
          `frame size ${size} outside [0, socket.request.max.bytes=${this.limits.socketRequestMaxBytes}]`,
        );
        return;
      }
      if (this.bufferedBytes < 4 + size) break;
      this.dispatch(this.take(4 + size).subarray(4));
    }
    this.updateFlow();
  }

  private canDispatch(): boolean {
    return !this.pausedForWrites && this.slots.length < this.limits.maxInFlightRequests;
  }

  private dispatch(frame: Buffer): void {
    const slot: Slot = { done: false, response: null };
    this.slots.push(slot);
    this.handleFrame(frame, this).then(
      (response) => {
        slot.done = true;
        slot.response = response;
        this.writeReady();
      },
      (error: unknown) => {
        if (error instanceof CloseConnection) this.closeAfterAnswered(error.message, slot);
        else {
          this.log.error(
            { remote: this.remote, error: error instanceof Error ? error.stack : String(error) },
            'request handler failed',
          );
          this.closeAfterAnswered('internal error while handling a request', slot);
        }
      },
    );
  }

  /** Writes every answered response at the head of the queue, in request order. */
  private writeReady(): void {
    if (this.closed) return;
    if (!this.slots.length || !this.slots[0]!.done) return;
    this.socket.cork();
    let ended = false;
    while (this.slots.length && this.slots[0]!.done) {
      const slot = this.slots.shift()!;
      if (slot.endsConnection === true) {
        ended = true;
        break;
      }
      if (!slot.response) continue;
      for (const chunk of slot.response) {
        // A leased chunk goes back to its pool once the socket has taken it (written or failed).
        const roomLeft = responseBuffers.isLeased(chunk)
          ? this.socket.write(chunk, () => responseBuffers.release(chunk))
          : this.socket.write(chunk);
        if (!roomLeft) this.pausedForWrites = true;
      }
    }
    this.socket.uncork();
    if (ended) this.endAfterFlush();
    else this.pump();
  }

  /** Stops reading while requests wait undispatched or the client is not reading its responses. */
  private updateFlow(): void {
    if (this.closed || this.closing) return;
    const shouldPause = !this.canDispatch() || this.bufferedBytes > this.limits.socketRequestMaxBytes + 4;
    if (shouldPause && !this.socket.isPaused()) this.socket.pause();
    else if (!shouldPause && this.socket.isPaused()) this.socket.resume();
  }

  private peekInt32(): number {
    const first = this.chunks[0]!;
    if (first.length >= 4) return first.readInt32BE(0);
    return Buffer.concat(this.chunks, 4).readInt32BE(0);
  }

  /**
   * Removes and returns the first `n` buffered bytes: a view when they lie in one chunk, else a copy;
   * a copy of 4 KiB or more has a buffer of its own with headroom, so a produce handler can pass its
   * record batch on to a replica without copying it again (`whileLent`, src/runtime/envelope.ts).
   */
  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = n >= OWN_BUFFER_MIN_BYTES ? allocateWithHeadroom(n) : Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const chunk = this.chunks[0]!;
        const used = Math.min(chunk.length, n - filled);
        chunk.copy(out, filled, 0, used);
        filled += used;
        if (used === chunk.length) this.chunks.shift();
        else this.chunks[0] = chunk.subarray(used);
      }
    }
    this.bufferedBytes -= n;
    return out;
  }
}
