/**
 * The table-driven codec: one encoder and one decoder for every message and version, flexible
 * (KIP-482) or not, driven by the tables in schema/.
 *
 * Each (table, version) is compiled once into a flat list of steps (field key, wire kind,
 * nullability at that version, default, nested compiled struct), and from those into one
 * generated encoder and decoder function per struct: straight-line code with constant property
 * names, no per-call closures or version arithmetic (see "Code generation" below).
 *
 * Wire rules (protocol guide "Protocol Primitive Types"; KIP-482):
 * - non-flexible: STRING/NULLABLE_STRING (int16), BYTES/NULLABLE_BYTES/RECORDS (int32), ARRAY (int32);
 * - flexible: COMPACT_* forms (uvarint N+1, 0 = null), and every struct, the message body
 *   included, ends with a tagged-field section; known tags are decoded, unknown ones skipped;
 *   a tagged field is written only when it differs from its default, in ascending tag order.
 *
 * Decoded values are plain objects holding every field of the table (absent ones at their
 * default), keyed by lowerCamelCase names; see dsl.ts for the default rules and JS types.
 */
import assert from 'node:assert/strict';
import { ProtocolError, ZERO_UUID } from './primitives';
import { Reader } from './reader';
import { Writer } from './writer';
import { fieldKey, inRange, parseVersions } from './schema/dsl';
import type { EncodeInput, FieldDefault, FieldSpec, MessageSpec, MessageValue, VersionRange } from './schema/dsl';

/**
 * An encoder was handed a value its table cannot encode at that version (e.g. null in a
 * non-nullable field): a bug in the caller, not bad client input.
 */
export class EncodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EncodeError';
  }
}

const enum Kind {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  Uint16,
  Uint32,
  Float64,
  String,
  Bytes,
  Records,
  Uuid,
  Array,
  Struct,
}

const PRIMITIVE_KINDS: Record<string, Kind> = {
  bool: Kind.Bool,
  int8: Kind.Int8,
  int16: Kind.Int16,
  int32: Kind.Int32,
  int64: Kind.Int64,
  uint16: Kind.Uint16,
  uint32: Kind.Uint32,
  float64: Kind.Float64,
  string: Kind.String,
  bytes: Kind.Bytes,
  records: Kind.Records,
  uuid: Kind.Uuid,
};

/** How a field appears at one version. */
const enum Mode {
  /** In the fixed part of the struct, in table order. */
  Wire,
  /** In the struct's tagged-field section. */
  Tagged,
  /** Not on the wire at this version: decodes to its default. */
  Absent,
}

const EMPTY_BUFFER = Buffer.alloc(0);

/** One field of one struct at one version. */
interface Step {
  readonly key: string;
  readonly path: string;
  readonly mode: Mode;
  readonly kind: Kind;
  readonly nullable: boolean;
  readonly tag: number;
  /** Default value; for arrays ([]) and structs a fresh one is built per use. */
  readonly def: unknown;
  /** For arrays: the element as a step (never nullable). */
  readonly elem: Step | null;
  /** For structs and struct elements: the nested struct compiled at the same version. */
  readonly sub: CompiledStruct | null;
}

/** A struct (or message body) compiled for one version. */
interface CompiledStruct {
  readonly flexible: boolean;
  /** All fields of the table, in table order. */
  readonly steps: readonly Step[];
  /** Fields in the fixed part, in wire order. */
  readonly wire: readonly Step[];
  /** Tagged fields at this version, ascending tag. */
  readonly tagged: readonly Step[];
  readonly byTag: ReadonlyMap<number, Step>;
  /** Generated encoder for this struct at this version (see generateEncoder). */
  encode: StructEncoder;
  /** Generated decoder for this struct at this version (see generateDecoder). */
  decode: StructDecoder;
}

type Rec = Record<string, unknown>;
type StructEncoder = (w: Writer, v: Rec) => void;
type StructDecoder = (r: Reader) => Rec;

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
 * The compiled form of `spec` at `version` (compiled on first use, then cached).
 * Throws Error if the version is outside the table's validVersions.
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

function compileStruct(fields: readonly FieldSpec[], version: number, flexible: boolean, path: string): CompiledStruct {
  const steps: Step[] = [];
  const keys = new Set<string>();
  for (const f of fields) {
    const step = compileField(f, version, flexible, `${path}.${f.name}`);
    assert.ok(!keys.has(step.key), `${path}: duplicate field ${f.name}`);
    keys.add(step.key);
    steps.push(step);
  }
  const wire = steps.filter((s) => s.mode === Mode.Wire);
  const tagged = steps.filter((s) => s.mode === Mode.Tagged).sort((a, b) => a.tag - b.tag);
  const byTag = new Map<number, Step>();
  for (const s of tagged) {
    assert.ok(!byTag.has(s.tag), `${path}: duplicate tag ${s.tag}`);
    byTag.set(s.tag, s);
  }
  const cs: CompiledStruct = {
    flexible,
    steps,
    wire,
    tagged,
    byTag,
    encode: unreachableEncoder,
    decode: unreachableDecoder,
  };
  cs.encode = generateEncoder(cs);
  cs.decode = generateDecoder(cs);
  return cs;
}

function compileField(f: FieldSpec, version: number, flexible: boolean, path: string): Step {
  const versions = parseVersions(f.versions);
  const present = inRange(versions, version);
  const taggedRange = f.taggedVersions === undefined ? null : parseVersions(f.taggedVersions);
  const tagged = present && taggedRange !== null && inRange(taggedRange, version);
  if (taggedRange !== null) assert.ok(Number.isInteger(f.tag) && f.tag! >= 0, `${path}: taggedVersions without a tag`);
  if (tagged) assert.ok(flexible, `${path}: tagged at non-flexible version ${version}`);
  const nullableRange = f.nullableVersions === undefined ? null : parseVersions(f.nullableVersions);
  const nullable = nullableRange !== null && inRange(nullableRange, version);
  const nullableEverywhere =
    nullableRange !== null && nullableRange.min <= versions.min && nullableRange.max >= versions.max;
  const mode = !present ? Mode.Absent : tagged ? Mode.Tagged : Mode.Wire;

  let kind: Kind;
  let elem: Step | null = null;
  let sub: CompiledStruct | null = null;
  if (f.type.startsWith('[]')) {
    kind = Kind.Array;
    const elemType = f.type.slice(2);
    let elemKind: Kind;
    if (f.fields !== undefined) {
      elemKind = Kind.Struct;
      sub = compileStruct(f.fields, version, flexible, path);
    } else {
      const k = PRIMITIVE_KINDS[elemType];
      assert.ok(k !== undefined, `${path}: unknown element type ${elemType}`);
      elemKind = k;
    }
    elem = {
      key: '',
      path: `${path}[]`,
      mode: Mode.Wire,
      kind: elemKind,
      nullable: false,
      tag: -1,
      def: elemKind === Kind.Struct ? null : primitiveDefault(elemKind, false),
      elem: null,
      sub,
    };
  } else if (f.fields !== undefined) {
    kind = Kind.Struct;
    sub = compileStruct(f.fields, version, flexible, path);
  } else {
    const k = PRIMITIVE_KINDS[f.type];
    assert.ok(k !== undefined, `${path}: unknown type ${f.type}`);
    kind = k;
  }

  let def: unknown;
  if (f.default !== undefined) {
    def = checkedDefault(kind, f.default, path);
  } else if (kind === Kind.Array) {
    def = EMPTY_ARRAY_MARK;
  } else if (kind === Kind.Struct) {
    def = STRUCT_MARK;
  } else {
    def = primitiveDefault(kind, nullableEverywhere);
  }
  return { key: fieldKey(f.name), path, mode, kind, nullable, tag: f.tag ?? -1, def, elem, sub };
}

/** Marks a default that must be built fresh per use (mutable values). */
const EMPTY_ARRAY_MARK = Symbol('[]');
const STRUCT_MARK = Symbol('{}');

function primitiveDefault(kind: Kind, nullable: boolean): unknown {
  switch (kind) {
    case Kind.Bool:
      return false;
    case Kind.String:
      return nullable ? null : '';
    case Kind.Bytes:
    case Kind.Records:
      return nullable ? null : EMPTY_BUFFER;
    case Kind.Uuid:
      return ZERO_UUID;
    default:
      return 0;
  }
}

function checkedDefault(kind: Kind, d: FieldDefault, path: string): unknown {
  if (d === null) {
    assert.ok(
      kind === Kind.String || kind === Kind.Bytes || kind === Kind.Records || kind === Kind.Array,
      `${path}: null default on a non-nullable type`,
    );
    return null;
  }
  switch (kind) {
    case Kind.Bool:
      assert.equal(typeof d, 'boolean', `${path}: default must be boolean`);
      return d;
    case Kind.String:
    case Kind.Uuid:
      assert.equal(typeof d, 'string', `${path}: default must be a string`);
      return d;
    case Kind.Array:
    case Kind.Struct:
    case Kind.Bytes:
    case Kind.Records:
      return assert.fail(`${path}: only null may be given as a default here`);
    case Kind.Float64:
      assert.ok(typeof d === 'number' && Number.isFinite(d), `${path}: default must be a number`);
      return d;
    default:
      assert.ok(typeof d === 'number' && Number.isInteger(d), `${path}: default must be an integer`);
      return d;
  }
}

/** A fresh default value for `s` (new arrays and structs each call). */
function defaultOf(s: Step): unknown {
  const d = s.def;
  if (d === EMPTY_ARRAY_MARK) return [];
  if (d === STRUCT_MARK) return defaultStruct(s.sub!);
  return d;
}

function defaultStruct(cs: CompiledStruct): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of cs.steps) out[s.key] = defaultOf(s);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoding

function decodeStruct(r: Reader, cs: CompiledStruct): Record<string, unknown> {
  return cs.decode(r);
}

function readTaggedSection(r: Reader, cs: CompiledStruct, out: Record<string, unknown>): void {
  const count = r.unsignedVarint();
  if (count > r.remaining()) throw new ProtocolError(`${count} tagged fields exceed the bytes left`);
  for (let i = 0; i < count; i++) {
    const tag = r.unsignedVarint();
    const size = r.unsignedVarint();
    r.need(size);
    const start = r.offset;
    const s = cs.byTag.get(tag);
    if (s !== undefined) {
      const fieldReader = new Reader(r.buf, start, start + size);
      out[s.key] = readValue(fieldReader, s, true);
    }
    r.offset = start + size;
  }
}

function readValue(r: Reader, s: Step, flexible: boolean): unknown {
  switch (s.kind) {
    case Kind.Bool:
      return r.bool();
    case Kind.Int8:
      return r.int8();
    case Kind.Int16:
      return r.int16();
    case Kind.Int32:
      return r.int32();
    case Kind.Int64:
      return r.int64();
    case Kind.Uint16:
      return r.uint16();
    case Kind.Uint32:
      return r.uint32();
    case Kind.Float64:
      return r.float64();
    case Kind.String: {
      const v = flexible ? r.compactNullableString() : r.nullableString();
      if (v === null && !s.nullable) throw new ProtocolError(`${s.path}: null in a non-nullable string`);
      return v;
    }
    case Kind.Bytes:
    case Kind.Records: {
      const v = flexible ? r.compactNullableBytes() : r.nullableBytes();
      if (v === null && !s.nullable) throw new ProtocolError(`${s.path}: null in non-nullable bytes`);
      return v;
    }
    case Kind.Uuid:
      return r.uuid();
    case Kind.Array: {
      const n = flexible ? r.compactArrayLength() : r.arrayLength();
      if (n < 0) {
        if (!s.nullable) throw new ProtocolError(`${s.path}: null in a non-nullable array`);
        return null;
      }
      const elem = s.elem!;
      const out: unknown[] = new Array(n);
      if (elem.kind === Kind.Struct) {
        const sub = elem.sub!;
        for (let i = 0; i < n; i++) out[i] = decodeStruct(r, sub);
      } else {
        for (let i = 0; i < n; i++) out[i] = readValue(r, elem, flexible);
      }
      return out;
    }
    case Kind.Struct:
      return decodeStruct(r, s.sub!);
  }
}

/**
 * Decodes one message body of `spec` at `version` from `reader`, advancing it.
 * Returns a plain object with every field of the table (see dsl.ts `MessageValue`); `bytes` and
 * `records` values are views into the reader's buffer. Throws ProtocolError on malformed or
 * truncated input, Error if `version` is not valid for the table.
 */
export function decodeMessage<M extends MessageSpec>(spec: M, version: number, reader: Reader): MessageValue<M> {
  return decodeStruct(reader, compiled(spec, version)) as MessageValue<M>;
}

/** `decodeMessage` over a whole buffer (trailing bytes are ignored, as Kafka does). */
export function decodeBuffer<M extends MessageSpec>(spec: M, version: number, buf: Buffer): MessageValue<M> {
  return decodeMessage(spec, version, new Reader(buf));
}

// ---------------------------------------------------------------------------------------------
// Encoding

function encodeStruct(w: Writer, cs: CompiledStruct, v: Record<string, unknown>): void {
  cs.encode(w, v);
}

function writeTaggedSection(w: Writer, cs: CompiledStruct, v: Record<string, unknown>): void {
  const tagged = cs.tagged;
  if (tagged.length === 0) {
    w.emptyTaggedFields();
    return;
  }
  let count = 0;
  for (let i = 0; i < tagged.length; i++) if (!isDefault(tagged[i]!, v[tagged[i]!.key])) count++;
  w.unsignedVarint(count);
  if (count === 0) return;
  for (let i = 0; i < tagged.length; i++) {
    const s = tagged[i]!;
    const x = v[s.key];
    if (isDefault(s, x)) continue;
    const fieldWriter = new Writer(64);
    writeValue(fieldWriter, s, x, true);
    const bytes = fieldWriter.finish();
    w.unsignedVarint(s.tag);
    w.unsignedVarint(bytes.length);
    w.raw(bytes);
  }
}

/** Whether a tagged field's value equals its default (then it is left off the wire). */
function isDefault(s: Step, x: unknown): boolean {
  if (x === undefined) return true;
  switch (s.kind) {
    case Kind.Array:
      return s.def === null ? x === null : x !== null && (x as unknown[]).length === 0;
    case Kind.Struct: {
      if (x === null) return true;
      const o = x as Record<string, unknown>;
      for (const sub of s.sub!.steps) if (!isDefault(sub, o[sub.key])) return false;
      return true;
    }
    case Kind.Bytes:
    case Kind.Records:
      return s.def === null ? x === null : x !== null && (x as Buffer).length === 0;
    default:
      return x === s.def;
  }
}

function writeValue(w: Writer, s: Step, x: unknown, flexible: boolean): void {
  if (x === undefined) x = defaultOf(s);
  switch (s.kind) {
    case Kind.Bool:
      w.bool(x as boolean);
      return;
    case Kind.Int8:
      w.int8(x as number);
      return;
    case Kind.Int16:
      w.int16(x as number);
      return;
    case Kind.Int32:
      w.int32(x as number);
      return;
    case Kind.Int64:
      w.int64(x as number);
      return;
    case Kind.Uint16:
      w.uint16(x as number);
      return;
    case Kind.Uint32:
      w.uint32(x as number);
      return;
    case Kind.Float64:
      w.float64(x as number);
      return;
    case Kind.String:
      if (x === null) {
        if (!s.nullable) throw new EncodeError(`${s.path}: null in a non-nullable string`);
        if (flexible) w.unsignedVarint(0);
        else w.int16(-1);
      } else if (flexible) {
        w.compactString(x as string);
      } else {
        w.string(x as string);
      }
      return;
    case Kind.Bytes:
    case Kind.Records: {
      if (x === null) {
        if (!s.nullable) throw new EncodeError(`${s.path}: null in non-nullable bytes`);
        if (flexible) w.unsignedVarint(0);
        else w.int32(-1);
        return;
      }
      const b = x as Buffer;
      if (flexible) w.unsignedVarint(b.length + 1);
      else w.int32(b.length);
      if (s.kind === Kind.Records) w.rawRef(b);
      else w.raw(b);
      return;
    }
    case Kind.Uuid:
      w.uuid(x as string);
      return;
    case Kind.Array: {
      if (x === null) {
        if (!s.nullable) throw new EncodeError(`${s.path}: null in a non-nullable array`);
        if (flexible) w.unsignedVarint(0);
        else w.int32(-1);
        return;
      }
      const a = x as unknown[];
      if (flexible) w.unsignedVarint(a.length + 1);
      else w.int32(a.length);
      const elem = s.elem!;
      if (elem.kind === Kind.Struct) {
        const sub = elem.sub!;
        for (let i = 0; i < a.length; i++) encodeStruct(w, sub, (a[i] ?? EMPTY_OBJECT) as Record<string, unknown>);
      } else {
        for (let i = 0; i < a.length; i++) writeValue(w, elem, a[i], flexible);
      }
      return;
    }
    case Kind.Struct:
      encodeStruct(w, s.sub!, (x ?? EMPTY_OBJECT) as Record<string, unknown>);
      return;
  }
}

const EMPTY_OBJECT: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

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
  encodeStruct(w, compiled(spec, version), value as Record<string, unknown>);
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

// ---------------------------------------------------------------------------------------------
// Code generation. Each compiled struct gets a straight-line encoder and decoder built with
// `new Function` from our own tables (never from input): constant property names keep V8's
// inline caches monomorphic, and simple fields cost one Writer/Reader call. Arrays, nested
// structs and tagged sections call back into the generic helpers above.

const EMPTY_ARRAY: readonly unknown[] = Object.freeze([]);

function unreachableEncoder(): void {
  throw new Error('struct encoder used before generation');
}

function unreachableDecoder(): Rec {
  throw new Error('struct decoder used before generation');
}

function literal(v: unknown): string {
  assert.ok(v === null || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string', 'literal default');
  return JSON.stringify(v);
}

const NUMBER_WRITERS: Partial<Record<Kind, string>> = {
  [Kind.Int8]: 'int8',
  [Kind.Int16]: 'int16',
  [Kind.Int32]: 'int32',
  [Kind.Int64]: 'int64',
  [Kind.Uint16]: 'uint16',
  [Kind.Uint32]: 'uint32',
  [Kind.Float64]: 'float64',
};

function generateEncoder(cs: CompiledStruct): StructEncoder {
  const flexible = cs.flexible;
  const subEncoders: StructEncoder[] = [];
  const elemSteps: Step[] = [];
  const paths: string[] = [];
  const lines: string[] = ['let x;'];
  for (const s of cs.wire) {
    const path = paths.push(s.path) - 1;
    const onNull = s.nullable
      ? flexible
        ? 'w.unsignedVarint(0);'
        : `w.${s.kind === Kind.String ? 'int16' : 'int32'}(-1);`
      : `throw E(P[${path}]);`;
    lines.push(`x = v[${JSON.stringify(s.key)}];`);
    const numberWriter = NUMBER_WRITERS[s.kind];
    if (numberWriter !== undefined) {
      lines.push(`w.${numberWriter}(x === undefined ? ${literal(s.def)} : x);`);
      continue;
    }
    switch (s.kind) {
      case Kind.Bool:
        lines.push(`w.bool(x === undefined ? ${literal(s.def)} : x);`);
        break;
      case Kind.Uuid:
        lines.push(`w.uuid(x === undefined ? ${literal(s.def)} : x);`);
        break;
      case Kind.String:
        lines.push(`if (x === undefined) x = ${literal(s.def)};`);
        lines.push(`if (x === null) { ${onNull} } else w.${flexible ? 'compactString' : 'string'}(x);`);
        break;
      case Kind.Bytes:
      case Kind.Records:
        lines.push(`if (x === undefined) x = ${s.def === null ? 'null' : 'EB'};`);
        lines.push(
          `if (x === null) { ${onNull} } else { ${flexible ? 'w.unsignedVarint(x.length + 1);' : 'w.int32(x.length);'} ` +
            `w.${s.kind === Kind.Records ? 'rawRef' : 'raw'}(x); }`,
        );
        break;
      case Kind.Array: {
        const elem = s.elem!;
        let writeElement: string;
        if (elem.kind === Kind.Struct) writeElement = `S[${subEncoders.push(elem.sub!.encode) - 1}](w, x[i] ?? O);`;
        else if (elem.kind === Kind.Int32) writeElement = 'w.int32(x[i]);';
        else writeElement = `WV(w, ES[${elemSteps.push(elem) - 1}], x[i], ${flexible});`;
        lines.push(`if (x === undefined) x = ${s.def === null ? 'null' : 'EA'};`);
        lines.push(
          `if (x === null) { ${onNull} } else { ${flexible ? 'w.unsignedVarint(x.length + 1);' : 'w.int32(x.length);'} ` +
            `for (let i = 0; i < x.length; i++) ${writeElement} }`,
        );
        break;
      }
      case Kind.Struct:
        lines.push(`S[${subEncoders.push(s.sub!.encode) - 1}](w, x ?? O);`);
        break;
      default:
        assert.fail(`${s.path}: no encoder for kind ${s.kind}`);
    }
  }
  if (flexible) lines.push(cs.tagged.length === 0 ? 'w.emptyTaggedFields();' : 'WT(w, CS, v);');
  const factory = new Function(
    'S',
    'ES',
    'P',
    'E',
    'EB',
    'EA',
    'O',
    'WV',
    'WT',
    'CS',
    `return function encodeStruct(w, v) {\n${lines.join('\n')}\n};`,
  );
  const nullError = (path: string): EncodeError => new EncodeError(`${path}: null in a non-nullable field`);
  return factory(
    subEncoders,
    elemSteps,
    paths,
    nullError,
    EMPTY_BUFFER,
    EMPTY_ARRAY,
    EMPTY_OBJECT,
    writeValue,
    writeTaggedSection,
    cs,
  ) as StructEncoder;
}

const NUMBER_READERS: Partial<Record<Kind, string>> = {
  [Kind.Bool]: 'r.bool()',
  [Kind.Int8]: 'r.int8()',
  [Kind.Int16]: 'r.int16()',
  [Kind.Int32]: 'r.int32()',
  [Kind.Int64]: 'r.int64()',
  [Kind.Uint16]: 'r.uint16()',
  [Kind.Uint32]: 'r.uint32()',
  [Kind.Float64]: 'r.float64()',
  [Kind.Uuid]: 'r.uuid()',
};

function generateDecoder(cs: CompiledStruct): StructDecoder {
  const flexible = cs.flexible;
  const subDecoders: StructDecoder[] = [];
  const steps: Step[] = [];
  const props: string[] = [];
  for (const s of cs.steps) {
    let expr: string;
    if (s.mode !== Mode.Wire) {
      if (s.def === EMPTY_ARRAY_MARK) expr = '[]';
      else if (s.def === STRUCT_MARK || s.def === EMPTY_BUFFER) expr = `DF(ST[${steps.push(s) - 1}])`;
      else expr = literal(s.def);
    } else if (NUMBER_READERS[s.kind] !== undefined) {
      expr = NUMBER_READERS[s.kind]!;
    } else if (s.kind === Kind.String) {
      expr = flexible
        ? s.nullable
          ? 'r.compactNullableString()'
          : 'r.compactString()'
        : s.nullable
          ? 'r.nullableString()'
          : 'r.string()';
    } else if (s.kind === Kind.Bytes || s.kind === Kind.Records) {
      expr = flexible
        ? s.nullable
          ? 'r.compactNullableBytes()'
          : 'r.compactBytes()'
        : s.nullable
          ? 'r.nullableBytes()'
          : 'r.bytes()';
    } else if (s.kind === Kind.Array) {
      expr = `RV(r, ST[${steps.push(s) - 1}], ${flexible})`;
    } else if (s.kind === Kind.Struct) {
      expr = `D[${subDecoders.push(s.sub!.decode) - 1}](r)`;
    } else {
      assert.fail(`${s.path}: no decoder for kind ${s.kind}`);
    }
    props.push(`${JSON.stringify(s.key)}: ${expr}`);
  }
  const body = `const o = {\n${props.join(',\n')}\n};\n${flexible ? 'RT(r, CS, o);\n' : ''}return o;`;
  const factory = new Function('D', 'ST', 'DF', 'RV', 'RT', 'CS', `return function decodeStruct(r) {\n${body}\n};`);
  return factory(subDecoders, steps, defaultOf, readValue, readTaggedSection, cs) as StructDecoder;
}
