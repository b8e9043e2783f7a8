/**
 * Request dispatch: header, API lookup, version checks, decode, handler, encode. Kafka's rules
 * (protocol guide; DESIGN.md "Errors and bad input"):
 * - an unknown API key, a version outside the advertised range, or a body that cannot be parsed
 *   closes the connection (CloseConnection) and nothing else;
 * - ApiVersions at a version above ours answers UNSUPPORTED_VERSION with our list, in the v0 layout,
 *   so the client can retry with a version we serve (KIP-511);
 * - an advertised but refused version gets UNSUPPORTED_VERSION in the response's error fields.
 */
import { ApiKey } from '../protocol/api-keys';
import { ErrorCode } from '../protocol/error-codes';
import { decodeRequest, encodeResponse, encodeResponseChunks, peekRequestHeader } from '../protocol';
import type { AnyApiHandler, RequestContext } from './api-handler';
import type { BrokerContext } from './broker-context';
import { CloseConnection } from './close-connection';
import { responseErrorCounts } from './error-counts';
import type { Connection } from './connection';

/**
 * One request a handler served, as the admin API's metrics count it (`skiff_requests_total`,
 * `skiff_request_duration_seconds`). Kafka's counterpart: `RequestMetrics` (RequestsPerSec,
 * TotalTimeMs per request name).
 */
export interface RequestDoneInfo {
  apiKey: number;
  /** The handler's name, Kafka's API name (`Produce`, `Fetch`, ...). */
  apiName: string;
  apiVersion: number;
  /**
   * From the request decoded to its response encoded (or the handler failing), on the broker's
   * monotonic clock (`BrokerContext.clock`), in ms. Excludes the wait for earlier responses on the
   * same connection (they are answered in request order) and the socket write.
   */
  durationMs: number;
  /** The node id of the broker that served it. */
  brokerId: number;
  /**
   * The non-zero error codes in its response, each with how many `errorCode` fields carry it (a
   * Produce refused on two partitions counts 2): Kafka's AbstractResponse.errorCounts, which its
   * `ErrorsPerSec` metric counts; for a request closed for its errors, those of the answer it did
   * not get (a failed acks=0 produce). Absent otherwise when there was no response.
   */
  errorCounts?: ReadonlyMap<number, number>;
}

/** Options of a {@link Dispatcher}. */
export interface DispatcherOptions {
  /**
   * Called once per request that reached a handler (also when the handler threw or refused the
   * version), after the response is encoded. Not called for requests that close the connection before
   * a handler runs. It must not throw: it runs on the request path.
   */
  onRequestDone?: (info: RequestDoneInfo) => void;
}

export class Dispatcher {
  private readonly byKey = new Map<number, AnyApiHandler>();
  private readonly onRequestDone: ((info: RequestDoneInfo) => void) | undefined;

  constructor(
    handlers: AnyApiHandler[],
    private readonly broker: () => BrokerContext,
    options: DispatcherOptions = {},
  ) {
    for (const handler of handlers) this.byKey.set(handler.apiKey, handler);
    this.onRequestDone = options.onRequestDone;
  }

  handlers(): AnyApiHandler[] {
    return [...this.byKey.values()].sort((a, b) => a.apiKey - b.apiKey);
  }

  /** Handles one frame; resolves with the framed response (chunks), or null when none is due. */
  readonly handle = async (frame: Buffer, connection: Connection): Promise<Buffer[] | null> => {
    let peeked: { apiKey: number; apiVersion: number; correlationId: number };
    try {
      peeked = peekRequestHeader(frame);
    } catch (error) {
      throw new CloseConnection(`unparsable request header: ${(error as Error).message}`);
    }
    const handler = this.byKey.get(peeked.apiKey);
    if (!handler) throw new CloseConnection(`unknown or unsupported API key ${peeked.apiKey}`);
    if (peeked.apiVersion < handler.minVersion || peeked.apiVersion > handler.maxVersion) {
      if (peeked.apiKey === ApiKey.ApiVersions) return [this.apiVersionsFallback(peeked.correlationId)];
      throw new CloseConnection(
        `${handler.name} v${peeked.apiVersion} outside the supported range ${handler.minVersion}-${handler.maxVersion}`,
      );
    }
    let decoded: ReturnType<typeof decodeRequest>;
    try {
      decoded = decodeRequest(frame);
    } catch (error) {
      throw new CloseConnection(
        `unparsable ${handler.name} v${peeked.apiVersion} request: ${(error as Error).message}`,
      );
    }
    const broker = this.broker();
    const request: RequestContext = {
      apiKey: peeked.apiKey,
      apiVersion: peeked.apiVersion,
      correlationId: peeked.correlationId,
      clientId: decoded.header.clientId ?? null,
      body: decoded.body,
      broker,
      remote: connection.remote,
    };
    if (this.onRequestDone === undefined) return this.serve(handler, request);
    const startMs = broker.clock.monotonicMs();
    let errorCounts: ReadonlyMap<number, number> | undefined;
    try {
      return await this.serve(handler, request, (response) => (errorCounts = responseErrorCounts(response)));
    } catch (error) {
      // A request closed for its errors (a failed acks=0 produce) counts them, as Kafka's closeConnection does.
      if (error instanceof CloseConnection && error.errorCounts !== undefined) errorCounts = error.errorCounts;
      throw error;
    } finally {
      this.onRequestDone({
        apiKey: peeked.apiKey,
        apiName: handler.name,
        apiVersion: peeked.apiVersion,
        durationMs: broker.clock.monotonicMs() - startMs,
        brokerId: broker.nodeId,
        ...(errorCounts !== undefined ? { errorCounts } : {}),
      });
    }
  };

  /**
   * Runs the handler (or its refusal of a version below its supported range) and encodes the
   * response; `inspect` sees the response body first (the metrics' error counts).
   */
  private async serve(
    handler: AnyApiHandler,
    request: RequestContext,
    inspect?: (response: object) => void,
  ): Promise<Buffer[] | null> {
    const refused = handler.minSupportedVersion !== undefined && request.apiVersion < handler.minSupportedVersion;
    const response = refused ? handler.refuse!(request) : await handler.handle(request);
    if (response === null) return null;
    inspect?.(response);
    return encodeResponseChunks(request.apiKey, request.apiVersion, request.correlationId, response);
  }

  /** ApiVersions v0 layout with UNSUPPORTED_VERSION and our ranges (what librdkafka retries from). */
  private apiVersionsFallback(correlationId: number): Buffer {
    return encodeResponse(ApiKey.ApiVersions, 0, correlationId, {
      errorCode: ErrorCode.UNSUPPORTED_VERSION,
      apiKeys: this.handlers().map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion })),
    });
  }
}
