/**
 * A minimal Kafka wire client for tests: sends schema-encoded requests (or raw bytes) over one TCP
 * connection and reads size-prefixed response frames, so tests can check exact error codes and
 * connection behaviour that real clients hide.
 */
import net from 'node:net';
import { decodeResponse, encodeRequest } from '../../src/protocol';

export class WireClient {
  private chunks: Buffer[] = [];
  private waiters: (() => void)[] = [];
  private correlationId = 1;
  closed = false;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk) => {
      this.chunks.push(chunk);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static connect(port: number): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(new WireClient(socket)));
      socket.once('error', reject);
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Sends one request; returns its correlation id. */
  send(apiKey: number, apiVersion: number, body: object, clientId: string | null = 'wire-test'): number {
    const id = this.correlationId++;
    this.socket.write(encodeRequest(apiKey, apiVersion, id, clientId, body));
    return id;
  }

  sendRaw(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Reads the next response frame (without its size), or null if the connection closed first. */
  async readFrame(timeoutMs = 10_000): Promise<Buffer | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const all = Buffer.concat(this.chunks);
      if (all.length >= 4) {
        const size = all.readInt32BE(0);
        if (all.length >= 4 + size) {
          this.chunks = [all.subarray(4 + size)];
          return all.subarray(4, 4 + size);
        }
      }
      if (this.closed) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a response frame');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a request and decodes its response. */
  async request(apiKey: number, apiVersion: number, body: object): Promise<{ correlationId: number; body: any }> {
    const id = this.send(apiKey, apiVersion, body);
    const frame = await this.readFrame();
    if (frame === null) throw new Error(`connection closed before the response to correlation id ${id}`);
    const decoded = decodeResponse(apiKey, apiVersion, frame);
    if (decoded.correlationId !== id) throw new Error(`correlation id ${decoded.correlationId}, expected ${id}`);
    return decoded;
  }

  /** Resolves true if the server closes the connection within `timeoutMs`. */
  async waitClosed(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.closed;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Resolves whether a TCP connection to `host`:`port` opens within 2 s (a listener's readiness probe). */
export function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
