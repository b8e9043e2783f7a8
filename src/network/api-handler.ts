/**
 * The contract of one Kafka API handler (one file per API in handlers/, as Redpanda's
 * `kafka/server/handlers/`). A handler declares the version range it advertises in ApiVersions,
 * so ApiVersions is built from the handlers and cannot drift.
 */
import type { BrokerContext } from './broker-context';

/** One decoded request as a handler sees it. `body` is the schema-decoded request value. */
export interface RequestContext<Req = unknown> {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  body: Req;
  broker: BrokerContext;
  /** Remote address of the connection, for log lines. */
  remote: string;
}

/**
 * One Kafka API. `Req` and `Res` are the schema-decoded request and response bodies; the defaults
 * (unknown, object) are what the dispatcher's registry of every API sees.
 */
export interface ApiHandler<Req = unknown, Res = object> {
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
  refuse?(request: RequestContext<Req>): Res;
  /** Returns the response body, or null for no response (Produce with acks=0). */
  handle(request: RequestContext<Req>): Promise<Res | null> | Res | null;
}
