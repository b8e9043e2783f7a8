/**
 * One TCP connection to a broker: size-prefixed frames out, responses matched to requests.
 *
 * Kafka answers the requests of one connection in the order it received them (protocol guide,
 * "Network"), so pending requests are a FIFO and each response must carry the correlation id at
 * its head; a mismatch is a protocol violation and closes the connection. Requests may be
 * pipelined: `send` writes at once and any number may be in flight (callers bound it). A Produce
 * with acks=0 has no response: it resolves once its bytes are handed to the kernel.
 *
 * On connect the API versions are negotiated (ApiVersions v3, falling back to v0 when the broker
 * answers UNSUPPORTED_VERSION, KIP-511); {@link BrokerConnection.versionFor} then picks, per API,
 * the highest version both sides speak.
 */
import * as net from 'node:net';
import { ApiKey, apiKeyName } from '../protocol/api-keys';
import { ErrorCode } from '../protocol/error-codes';
import { decodeResponse, encodeRequest } from '../protocol/index';
import { apiSchemas } from '../protocol/registry';
import { ConnectionError, KafkaError, UnsupportedApiError } from './errors';

/**
 * Caps where this client's requests change shape beyond what it builds: Produce v13 and Fetch v13+
 * name topics by topic ID only, and this client sends names.
 */
const CLIENT_MAX_VERSIONS = new Map<number, number>([
  [ApiKey.Produce, 12],
  [ApiKey.Fetch, 12],
]);

/** A version range one side supports for one API. */
export interface VersionRange {
  minVersion: number;
  maxVersion: number;
}

/** Options of {@link BrokerConnection.connect}. */
export interface ConnectionOptions {
  /** Sent in every request header; default `skiff-client`. */
  clientId?: string;
  /** Give up connecting after this long; default 10 000 ms. */
  connectTimeoutMs?: number;
  /** Fail a request (and close the connection) when its response takes longer; default 30 000 ms. */
  requestTimeoutMs?: number;
}

interface Pending {
  correlationId: number;
  apiKey: number;
  apiVersion: number;
  resolve(body: Record<string, unknown>): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout | null;
}

/** Client software name/version sent in ApiVersions v3 (KIP-511: letters, digits, '-', '.'). */
const CLIENT_SOFTWARE_NAME = 'skiff-client';
const CLIENT_SOFTWARE_VERSION = '0.1.0';

/** A connected, version-negotiated connection to one broker. */
export class BrokerConnection {
  /** The broker's advertised version range per API key. */
  readonly apiVersions = new Map<number, VersionRange>();
  private readonly pending: Pending[] = [];
  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  private nextCorrelationId = 1;
  private closedError: ConnectionError | null = null;
  private readonly clientId: string;
  private readonly requestTimeoutMs: number;

  private constructor(
    private readonly socket: net.Socket,
    /** `host:port` of the broker, for messages. */
    readonly address: string,
    options: ConnectionOptions,
  ) {
    this.clientId = options.clientId ?? 'skiff-client';
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(new ConnectionError(`connection to ${address} failed: ${err.message}`)));
    socket.on('close', () => this.fail(new ConnectionError(`connection to ${address} closed`)));
  }

  /**
   * Connects to `host:port` and negotiates API versions. Rejects with ConnectionError when the
   * broker cannot be reached or closes during the handshake.
   */
  static async connect(host: string, port: number, options: ConnectionOptions = {}): Promise<BrokerConnection> {
    const address = `${host}:${port}`;
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ host, port });
      const timer = setTimeout(() => {
        s.destroy();
        reject(
          new ConnectionError(`cannot connect to ${address}: timed out after ${options.connectTimeoutMs ?? 10_000} ms`),
        );
      }, options.connectTimeoutMs ?? 10_000);
      s.once('connect', () => {
        clearTimeout(timer);
        s.removeAllListeners('error');
        resolve(s);
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(new ConnectionError(`cannot connect to ${address}: ${err.message}`));
      });
    });
    const connection = new BrokerConnection(socket, address, options);
    try {
      await connection.negotiateVersions();
    } catch (err) {
      connection.close();
      throw err;
    }
    return connection;
  }

  /** Whether the connection has closed (every later request fails). */
  get closed(): boolean {
    return this.closedError !== null;
  }

  /** Requests written whose responses have not arrived yet. */
  get inFlight(): number {
    return this.pending.length;
  }

  /**
   * The version to use for `apiKey`: the highest both this build's schema table and the broker
   * support, and at least `minVersion` (e.g. 3 for Produce, the first with record batches v2).
   * Throws UnsupportedApiError when there is none.
   */
  versionFor(apiKey: number, minVersion = 0): number {
    const ours = apiSchemas.get(apiKey);
    if (ours === undefined) throw new UnsupportedApiError(apiKey, 'no-schema');
    const theirs = this.apiVersions.get(apiKey);
    if (theirs === undefined) throw new UnsupportedApiError(apiKey, 'not-advertised');
    const max = Math.min(ours.maxVersion, theirs.maxVersion, CLIENT_MAX_VERSIONS.get(apiKey) ?? Infinity);
    const min = Math.max(ours.minVersion, theirs.minVersion, minVersion);
    if (max < min) {
      throw new UnsupportedApiError(
        apiKey,
        'no-common-version',
        `ours ${ours.minVersion}-${ours.maxVersion}, broker's ${theirs.minVersion}-${theirs.maxVersion}, needed >= ${minVersion}`,
      );
    }
    return max;
  }

  /** Whether the broker advertises `apiKey` and this build has its schema. */
  supports(apiKey: number): boolean {
    return apiSchemas.has(apiKey) && this.apiVersions.has(apiKey);
  }

  /**
   * Sends one request and resolves with the decoded response body (`MessageValue` keys:
   * lowerCamelCase). `expectResponse: false` (Produce acks=0 only) resolves with null once
   * written. Rejects with ConnectionError when the connection fails or the response times out
   * (after `timeoutMs`, default the connection's request timeout), and with Error when the body
   * cannot be encoded.
   */
  send(
    apiKey: number,
    apiVersion: number,
    body: object,
    options: { expectResponse?: boolean; timeoutMs?: number } = {},
  ): Promise<Record<string, unknown> | null> {
    if (this.closedError !== null) return Promise.reject(this.closedError);
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = (this.nextCorrelationId + 1) & 0x7fffffff;
    const frame = encodeRequest(apiKey, apiVersion, correlationId, this.clientId, body);
    if (options.expectResponse === false) {
      return new Promise((resolve, reject) => {
        this.socket.write(frame, (err) =>
          err ? reject(new ConnectionError(`write to ${this.address} failed: ${err.message}`)) : resolve(null),
        );
      });
    }
    return new Promise((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
      const entry: Pending = { correlationId, apiKey, apiVersion, resolve, reject, timer: null };
      entry.timer = setTimeout(() => {
        this.fail(
          new ConnectionError(`${apiKeyName(apiKey)} request to ${this.address} timed out after ${timeoutMs} ms`),
        );
      }, timeoutMs);
      this.pending.push(entry);
      this.socket.write(frame);
    });
  }

  /** Closes the connection; pending requests fail with ConnectionError. */
  close(): void {
    this.fail(new ConnectionError(`connection to ${this.address} closed by the client`));
  }

  private async negotiateVersions(): Promise<void> {
    let body = await this.send(ApiKey.ApiVersions, 3, {
      clientSoftwareName: CLIENT_SOFTWARE_NAME,
      clientSoftwareVersion: CLIENT_SOFTWARE_VERSION,
    });
    if (body!.errorCode === ErrorCode.UNSUPPORTED_VERSION) body = await this.send(ApiKey.ApiVersions, 0, {});
    const errorCode = body!.errorCode as number;
    if (errorCode !== ErrorCode.NONE) throw new KafkaError(errorCode, `ApiVersions from ${this.address}`);
    for (const api of body!.apiKeys as Array<{ apiKey: number; minVersion: number; maxVersion: number }>) {
      this.apiVersions.set(api.apiKey, { minVersion: api.minVersion, maxVersion: api.maxVersion });
    }
  }

  private onData(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bufferedBytes += chunk.length;
    while (this.bufferedBytes >= 4 && this.closedError === null) {
      const head = this.chunks[0]!.length >= 4 ? this.chunks[0]! : this.flatten();
      const size = head.readInt32BE(0);
      if (this.bufferedBytes < 4 + size) return;
      const all = this.chunks.length === 1 ? this.chunks[0]! : this.flatten();
      const frame = all.subarray(4, 4 + size);
      const rest = all.subarray(4 + size);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.bufferedBytes = rest.length;
      this.onFrame(frame);
    }
  }

  private flatten(): Buffer {
    const all = Buffer.concat(this.chunks, this.bufferedBytes);
    this.chunks = [all];
    return all;
  }

  private onFrame(frame: Buffer): void {
    const entry = this.pending.shift();
    if (entry === undefined) {
      this.fail(new ConnectionError(`unexpected response frame from ${this.address} with no request pending`));
      return;
    }
    if (entry.timer !== null) clearTimeout(entry.timer);
    let decoded: { correlationId: number; body: Record<string, unknown> };
    try {
      decoded = decodeResponse(entry.apiKey, entry.apiVersion, frame);
    } catch (err) {
      entry.reject(
        new ConnectionError(
          `cannot decode ${apiKeyName(entry.apiKey)} v${entry.apiVersion} response from ${this.address}: ${(err as Error).message}`,
        ),
      );
      this.fail(new ConnectionError(`connection to ${this.address} closed after an undecodable response`));
      return;
    }
    if (decoded.correlationId !== entry.correlationId) {
      const err = new ConnectionError(
        `response correlation id ${decoded.correlationId} from ${this.address}, expected ${entry.correlationId}`,
      );
      entry.reject(err);
      this.fail(err);
      return;
    }
    entry.resolve(decoded.body);
  }

  private fail(err: ConnectionError): void {
    if (this.closedError !== null) return;
    this.closedError = err;
    for (const entry of this.pending.splice(0)) {
      if (entry.timer !== null) clearTimeout(entry.timer);
      entry.reject(err);
    }
    this.socket.destroy();
  }
}
