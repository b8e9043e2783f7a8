/**
 * The contract of one Kafka API handler (one file per API in handlers/, as Redpanda's
 * `kafka/server/handlers/`). A handler is typed by its API's schema tables, so the request body it
 * reads and the response it returns are checked against the tables the codec uses; it declares the
 * version range it advertises in ApiVersions, so ApiVersions is built from the handlers and cannot
 * drift, and that declaration is the one statement of the range (docstrings do not repeat it).
 */
import type { EncodeInput, MessageSpec, MessageValue } from '../protocol/schema/dsl';
import type { BrokerContext } from './broker-context';

/** One decoded request as a handler sees it. `body` is the schema-decoded request value. */
export interface RequestContext<Req = Record<string, unknown>> {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  body: Req;
  broker: BrokerContext;
  /** Remote address of the connection, for log lines. */
  remote: string;
}

/** What a handler returns for its response table: any field left out takes the table's default. */
export type ResponseBody<Res extends MessageSpec> = EncodeInput<MessageValue<Res>>;

/**
 * A handler of one API, typed by its request and response tables, e.g.
 * `ApiHandler<typeof FetchRequest, typeof FetchResponse>`.
 */
export interface ApiHandler<Req extends MessageSpec = MessageSpec, Res extends MessageSpec = MessageSpec> {
  apiKey: number;
  name: string;
  /** Advertised range (ApiVersions). A request outside it is a broken request: the connection closes. */
  minVersion: number;
  maxVersion: number;
  /**
   * Versions in [minVersion, minSupportedVersion) are advertised for client feature detection but
   * refused (Kafka 4's Produce v0-2, KAFKA-18659): they get `refuse()`'s UNSUPPORTED_VERSION response.
   */
  minSupportedVersion?: number;
  refuse?(request: RequestContext<MessageValue<Req>>): ResponseBody<Res>;
  /** Returns the response body, or null for no response (Produce with acks=0). */
  handle(request: RequestContext<MessageValue<Req>>): Promise<ResponseBody<Res> | null> | ResponseBody<Res> | null;
}

/**
 * A handler of any API, as the dispatcher and ApiVersions hold them: every `ApiHandler<Req, Res>` is
 * one. The dispatcher hands it the body its schema table decoded for the same API key, so the body's
 * shape matches the handler's own declaration.
 */
export interface AnyApiHandler {
  apiKey: number;
  name: string;
  minVersion: number;
  maxVersion: number;
  minSupportedVersion?: number;
  refuse?(request: RequestContext<Record<string, unknown>>): object;
  handle(request: RequestContext<Record<string, unknown>>): Promise<object | null> | object | null;
}
