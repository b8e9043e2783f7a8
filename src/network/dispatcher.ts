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
import { CloseConnection, type Connection } from './connection';

export class Dispatcher {
  private readonly byKey = new Map<number, AnyApiHandler>();

  constructor(
    handlers: AnyApiHandler[],
    private readonly broker: () => BrokerContext,
  ) {
    for (const handler of handlers) this.byKey.set(handler.apiKey, handler);
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
    const request: RequestContext = {
      apiKey: peeked.apiKey,
      apiVersion: peeked.apiVersion,
      correlationId: peeked.correlationId,
      clientId: decoded.header.clientId ?? null,
      body: decoded.body,
      broker: this.broker(),
      remote: connection.remote,
    };
    const refused = handler.minSupportedVersion !== undefined && peeked.apiVersion < handler.minSupportedVersion;
    const response = refused ? handler.refuse!(request) : await handler.handle(request);
    if (response === null) return null;
    return encodeResponseChunks(peeked.apiKey, peeked.apiVersion, peeked.correlationId, response);
  };

  /** ApiVersions v0 layout with UNSUPPORTED_VERSION and our ranges (what librdkafka retries from). */
  private apiVersionsFallback(correlationId: number): Buffer {
    return encodeResponse(ApiKey.ApiVersions, 0, correlationId, {
      errorCode: ErrorCode.UNSUPPORTED_VERSION,
      apiKeys: this.handlers().map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion })),
    });
  }
}
