/**
 * The table-driven codec: one encoder and one decoder for every message and version, flexible
 * (KIP-482) or not, driven by the tables in schema/.
 *
 * Each (table, version) is compiled once into a flat list of steps (compile.ts), and from those
 * into one generated encoder and decoder function per struct (generate.ts): straight-line code
 * with constant property names, no per-call closures or version arithmetic. What the generated
 * code does not spell out (arrays of other than int32 or structs, tagged-field sections) it
 * delegates to the generic step reader and writer (interpret.ts, which also states the wire rules).
 * This file holds the per-(table, version) cache and the entry points.
 *
 * Decoded values are plain objects holding every field of the table (absent ones at their
 * default), keyed by lowerCamelCase names; see dsl.ts for the default rules and JS types.
 */
import { Reader } from '../reader';
import { Writer } from '../writer';
import { inRange, parseVersions } from '../schema/dsl';
import type { EncodeInput, MessageSpec, MessageValue, VersionRange } from '../schema/dsl';
import { compileStruct, defaultStruct } from './compile';
import type { CompiledStruct, Rec } from './compile';
import { generateCodecs } from './generate';

export { EncodeError } from './interpret';

interface CompiledMessage {
  readonly spec: MessageSpec;
  readonly valid: VersionRange;
  readonly byVersion: (CompiledStruct | undefined)[];
}

const compiledMessages = new WeakMap<MessageSpec, CompiledMessage>();

function compiledFor(spec: MessageSpec): CompiledMessage {
  let c = compiledMessages.get(spec);
  if (c === undefined) {
    c = { spec, valid: parseVersions(spec.validVersions), byVersion: [] };
    compiledMessages.set(spec, c);
  }
  return c;
}

/**
 * The compiled form of `spec` at `version`, its encoders and decoders generated (on first use,
 * then cached). Throws Error if the version is outside the table's validVersions.
 */
function compiled(spec: MessageSpec, version: number): CompiledStruct {
  const c = compiledFor(spec);
  let s = c.byVersion[version];
  if (s === undefined) {
    if (!Number.isInteger(version) || !inRange(c.valid, version)) {
      throw new Error(`${spec.name} has no version ${version} (valid ${spec.validVersions})`);
    }
    const flexible = inRange(parseVersions(spec.flexibleVersions), version);
    s = compileStruct(spec.fields, version, flexible, spec.name);
    generateCodecs(s);
    c.byVersion[version] = s;
  }
  return s;
}

/**
 * Compiles every valid version of `spec` now, checking the table's consistency (tags unique and
 * only in flexible versions, known types, nested fields present). Throws AssertionError on a
 * malformed table.
 */
export function precompile(spec: MessageSpec): void {
  const valid = parseVersions(spec.validVersions);
  for (let v = valid.min; v <= valid.max; v++) compiled(spec, v);
}

/** Whether `version` of `spec` uses flexible (KIP-482) encodings. */
export function isFlexible(spec: MessageSpec, version: number): boolean {
  return inRange(parseVersions(spec.flexibleVersions), version);
}

/** Whether `version` lies in the table's validVersions. */
export function isValidVersion(spec: MessageSpec, version: number): boolean {
  return Number.isInteger(version) && inRange(compiledFor(spec).valid, version);
}

/**
 * Decodes one message body of `spec` at `version` from `reader`, advancing it.
 * Returns a plain object with every field of the table (see dsl.ts `MessageValue`); `bytes` and
 * `records` values are views into the reader's buffer. Throws ProtocolError on malformed or
 * truncated input, Error if `version` is not valid for the table.
 */
export function decodeMessage<M extends MessageSpec>(spec: M, version: number, reader: Reader): MessageValue<M> {
  return compiled(spec, version).decode(reader) as MessageValue<M>;
}

/** `decodeMessage` over a whole buffer (trailing bytes are ignored, as Kafka does). */
export function decodeBuffer<M extends MessageSpec>(spec: M, version: number, buf: Buffer): MessageValue<M> {
  return decodeMessage(spec, version, new Reader(buf));
}

/**
 * Encodes `value` as a body of `spec` at `version`, appending to `w`. Fields omitted from `value`
 * take their defaults; fields not present at `version` are ignored (Kafka's "ignorable").
 * Throws EncodeError on a null in a non-nullable field, RangeError on an out-of-range number,
 * Error on an invalid version.
 */
export function encodeMessageInto<M extends MessageSpec>(
  w: Writer,
  spec: M,
  version: number,
  value: EncodeInput<MessageValue<M>>,
): void {
  compiled(spec, version).encode(w, value as Rec);
}

/** Encodes `value` as a body of `spec` at `version` into a new Buffer (see encodeMessageInto). */
export function encodeMessage<M extends MessageSpec>(
  spec: M,
  version: number,
  value: EncodeInput<MessageValue<M>>,
): Buffer {
  const w = new Writer(256);
  encodeMessageInto(w, spec, version, value);
  return w.finish();
}

/**
 * A body of `spec` at `version` with every field at its default: the starting point for building
 * a response, and what decoding an empty-fielded message yields.
 */
export function defaultMessage<M extends MessageSpec>(spec: M, version: number): MessageValue<M> {
  return defaultStruct(compiled(spec, version)) as MessageValue<M>;
}
