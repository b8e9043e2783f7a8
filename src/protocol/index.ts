/**
 * Skiff's Kafka protocol layer: bytes in, values out. No sockets, no actors.
 *
 * Framing convention (protocol guide "Common Request and Response Structure"): on the wire every
 * message is `int32 size` + `size` bytes. `decodeRequest` takes a frame WITHOUT the size (what
 * the network framer hands over); `encodeResponse`/`encodeRequest` return bytes WITH the size,
 * ready for the socket. `frame(buf)` adds a size to any buffer.
 */
import { apiKeyName } from './api-keys';
import { decodeMessage, encodeMessageInto, isValidVersion } from './codec';
import {
  decodeRequestHeader,
  decodeResponseHeader,
  encodeRequestHeader,
  encodeResponseHeader,
  headerVersions,
  peekRequestHeader,
} from './header';
import type { RequestHeader, RequestHeaderPeek } from './header';
import { ProtocolError } from './primitives';
import { Reader } from './reader';
import { Writer } from './writer';
import { apiSchemas } from './registry';
import type { ApiSchema } from './registry';

export { ApiKey, apiKeyName } from './api-keys';
export { ErrorCode, errorName } from './error-codes';
export type { ErrorName, ErrorCodeValue } from './error-codes';
export { ProtocolError, ZERO_UUID } from './primitives';
export { Reader } from './reader';
export { Writer } from './writer';
export {
  EncodeError,
  decodeMessage,
  decodeBuffer,
  encodeMessage,
  encodeMessageInto,
  defaultMessage,
  isFlexible,
  isValidVersion,
  precompile,
} from './codec';
export {
  headerVersions,
  peekRequestHeader,
  decodeRequestHeader,
  encodeRequestHeader,
  encodeResponseHeader,
  decodeResponseHeader,
} from './header';
export type { RequestHeader, RequestHeaderPeek, HeaderVersions } from './header';
export { apiSchemas } from './registry';
export type { ApiSchema } from './registry';
export type { MessageSpec, FieldSpec, MessageValue, EncodeInput, VersionRange } from './schema/dsl';
export { parseVersions, fieldKey } from './schema/dsl';
export * from './schema/api-versions';
export * from './schema/metadata';
export * from './schema/produce';
export * from './schema/fetch';
export * from './schema/list-offsets';
export * from './schema/create-topics';
export * from './schema/delete-topics';
export * from './schema/init-producer-id';
export * from './schema/find-coordinator';
export * from './schema/delete-records';
export * from './schema/offset-for-leader-epoch';
export * from './schema/describe-configs';
export * from './schema/alter-configs';
export * from './schema/describe-log-dirs';
export * from './schema/create-partitions';
export * from './schema/incremental-alter-configs';
export * from './schema/describe-cluster';
export * from './schema/elect-leaders';
export * from './schema/join-group';
export * from './schema/sync-group';
export * from './schema/heartbeat';
export * from './schema/leave-group';
export * from './schema/offset-commit';
export * from './schema/offset-fetch';
export * from './schema/list-groups';
export * from './schema/describe-groups';
export * from './schema/delete-groups';
export * from './schema/offset-delete';

/** A request frame whose API Skiff has no table for; the connection should be closed (as Kafka does). */
export class UnknownApiKeyError extends ProtocolError {
  constructor(readonly peek: RequestHeaderPeek) {
    super(`unknown API key ${peek.apiKey} (${apiKeyName(peek.apiKey)})`);
    this.name = 'UnknownApiKeyError';
  }
}

/**
 * A request for a known API at a version outside its table. The header fields are kept so the
 * server can answer: ApiVersions with UNSUPPORTED_VERSION in a v0 body (KIP-511), others by
 * closing the connection.
 */
export class UnsupportedVersionError extends ProtocolError {
  constructor(readonly peek: RequestHeaderPeek) {
    super(`${apiKeyName(peek.apiKey)} v${peek.apiVersion} is not supported`);
    this.name = 'UnsupportedVersionError';
  }
}

/** A decoded request: header plus body (a `MessageValue` of the API's request table). */
export interface DecodedRequest<T = Record<string, unknown>> {
  readonly header: RequestHeader;
  readonly body: T;
}

function schemaFor(apiKey: number): ApiSchema {
  const api = apiSchemas.get(apiKey);
  if (api === undefined) throw new Error(`no schema for API key ${apiKey} (${apiKeyName(apiKey)})`);
  return api;
}

/**
 * Decodes a request frame (the bytes after the 4-byte size): header v0-v2 and body.
 * Body `bytes`/`records` fields are views into `frame`. Trailing bytes are ignored.
 * Throws UnknownApiKeyError, UnsupportedVersionError (both ProtocolError, carrying the peeked
 * header), or ProtocolError for a malformed frame.
 */
export function decodeRequest(frame: Buffer): DecodedRequest {
  const peek = peekRequestHeader(frame);
  const api = apiSchemas.get(peek.apiKey);
  if (api === undefined) throw new UnknownApiKeyError(peek);
  if (!isValidVersion(api.request, peek.apiVersion)) throw new UnsupportedVersionError(peek);
  const r = new Reader(frame);
  const header = decodeRequestHeader(r, headerVersions(peek.apiKey, peek.apiVersion).request);
  const body = decodeMessage(api.request, peek.apiVersion, r) as Record<string, unknown>;
  return { header, body };
}

function writeResponse(apiKey: number, apiVersion: number, correlationId: number, body: object): Writer {
  const api = schemaFor(apiKey);
  const w = new Writer(512);
  w.int32(0); // size, patched below
  encodeResponseHeader(w, correlationId, headerVersions(apiKey, apiVersion).response);
  encodeMessageInto(w, api.response, apiVersion, body as never);
  w.patchInt32(0, w.length - 4);
  return w;
}

/**
 * Encodes a response: int32 size, response header (v0/v1 per headerVersions), body.
 * Returns ONE Buffer including the 4-byte size prefix. Omitted body fields take their defaults.
 * Throws EncodeError/RangeError on a value the table cannot encode, Error on an unknown API or
 * invalid version (all caller bugs).
 */
export function encodeResponse(apiKey: number, apiVersion: number, correlationId: number, body: object): Buffer {
  return writeResponse(apiKey, apiVersion, correlationId, body).finish();
}

/**
 * As encodeResponse, but as a list of Buffers for `socket.writev`/`cork`: record sets of 16 KiB
 * or more are included by reference, not copied (the fetch path).
 */
export function encodeResponseChunks(
  apiKey: number,
  apiVersion: number,
  correlationId: number,
  body: object,
): Buffer[] {
  return writeResponse(apiKey, apiVersion, correlationId, body).finishChunks();
}

/**
 * Encodes a request (int32 size, request header v1/v2, body), for tests, tools and clients.
 * Returns one Buffer including the size prefix.
 */
export function encodeRequest(
  apiKey: number,
  apiVersion: number,
  correlationId: number,
  clientId: string | null,
  body: object,
): Buffer {
  const api = schemaFor(apiKey);
  const w = new Writer(256);
  w.int32(0);
  encodeRequestHeader(w, { apiKey, apiVersion, correlationId, clientId }, headerVersions(apiKey, apiVersion).request);
  encodeMessageInto(w, api.request, apiVersion, body as never);
  w.patchInt32(0, w.length - 4);
  return w.finish();
}

/**
 * Decodes a response frame (bytes after the size) for `apiKey`/`apiVersion`, for tests, tools and
 * clients. Throws ProtocolError on malformed input.
 */
export function decodeResponse(
  apiKey: number,
  apiVersion: number,
  frame: Buffer,
): { correlationId: number; body: Record<string, unknown> } {
  const api = schemaFor(apiKey);
  const r = new Reader(frame);
  const correlationId = decodeResponseHeader(r, headerVersions(apiKey, apiVersion).response);
  const body = decodeMessage(api.response, apiVersion, r) as Record<string, unknown>;
  return { correlationId, body };
}

/** Prefixes `buf` with its int32 size (a copy). */
export function frame(buf: Buffer): Buffer {
  const out = Buffer.allocUnsafe(4 + buf.length);
  out.writeInt32BE(buf.length, 0);
  buf.copy(out, 4);
  return out;
}
