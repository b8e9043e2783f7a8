/**
 * Request and response headers (protocol guide "Headers"; KIP-482 for the flexible forms).
 *
 * ```
 * request header v0  apiKey int16, apiVersion int16, correlationId int32
 * request header v1  v0 + clientId NULLABLE_STRING (int16 length, even in v2)
 * request header v2  v1 + TAGGED_FIELDS
 * response header v0 correlationId int32
 * response header v1 v0 + TAGGED_FIELDS
 * ```
 *
 * A flexible API version uses request header v2 and response header v1; others v1 and v0. The
 * exception (ApiVersionsResponse.json): the ApiVersions response header is always v0, so a client
 * can read the answer whatever version it asked for.
 */
import { ApiKey, apiKeyName } from './api-keys';
import { ProtocolError } from './primitives';
import { Reader } from './reader';
import { Writer } from './writer';
import { apiSchemas } from './registry';
import { inRange } from './schema/dsl';

/** A decoded request header. `clientId` is null when the client sent a null string (or header v0). */
export interface RequestHeader {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  readonly headerVersion: 0 | 1 | 2;
}

/** The fixed first eight bytes of every request: enough to answer even an unparseable one. */
export interface RequestHeaderPeek {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
}

/** Request and response header versions for one (apiKey, apiVersion). */
export interface HeaderVersions {
  readonly request: 0 | 1 | 2;
  readonly response: 0 | 1;
}

/**
 * Header versions for `apiKey` at `apiVersion`, from the API's flexibleVersions. Works for any
 * version ≥ 0, including ones above validVersions ("3+" covers them), so a newer client's header
 * can still be parsed. Throws ProtocolError for an API Skiff has no table for.
 */
export function headerVersions(apiKey: number, apiVersion: number): HeaderVersions {
  const api = apiSchemas.get(apiKey);
  if (api === undefined) throw new ProtocolError(`no schema for API key ${apiKey} (${apiKeyName(apiKey)})`);
  const flexible = inRange(api.flexible, apiVersion);
  return {
    request: flexible ? 2 : 1,
    response: flexible && apiKey !== ApiKey.ApiVersions ? 1 : 0,
  };
}

/**
 * Reads apiKey, apiVersion and correlationId from the start of a request frame (the bytes after
 * the 4-byte size). Throws ProtocolError if the frame is shorter than 8 bytes.
 */
export function peekRequestHeader(frame: Buffer): RequestHeaderPeek {
  if (frame.length < 8) throw new ProtocolError(`request frame of ${frame.length} bytes is shorter than a header`);
  return { apiKey: frame.readInt16BE(0), apiVersion: frame.readInt16BE(2), correlationId: frame.readInt32BE(4) };
}

/** Decodes a request header of `headerVersion` from `r`; unknown header tags are skipped. */
export function decodeRequestHeader(r: Reader, headerVersion: 0 | 1 | 2): RequestHeader {
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const clientId = headerVersion >= 1 ? r.nullableString() : null;
  if (headerVersion >= 2) r.taggedFields();
  return { apiKey, apiVersion, correlationId, clientId, headerVersion };
}

/** Writes a request header of `headerVersion` (no tagged fields). */
export function encodeRequestHeader(
  w: Writer,
  header: RequestHeaderPeek & { clientId: string | null },
  headerVersion: 0 | 1 | 2,
): void {
  w.int16(header.apiKey);
  w.int16(header.apiVersion);
  w.int32(header.correlationId);
  if (headerVersion >= 1) w.nullableString(header.clientId);
  if (headerVersion >= 2) w.emptyTaggedFields();
}

/** Writes a response header of `headerVersion` (no tagged fields). */
export function encodeResponseHeader(w: Writer, correlationId: number, headerVersion: 0 | 1): void {
  w.int32(correlationId);
  if (headerVersion >= 1) w.emptyTaggedFields();
}

/** Reads a response header of `headerVersion`; returns the correlation id. */
export function decodeResponseHeader(r: Reader, headerVersion: 0 | 1): number {
  const correlationId = r.int32();
  if (headerVersion >= 1) r.taggedFields();
  return correlationId;
}
