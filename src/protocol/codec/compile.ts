/**
 * Compiling a message table (schema/) at one version: each struct becomes a flat list of steps
 * (field key, wire kind, nullability at that version, default, nested compiled struct), checked
 * for consistency on the way. No encoding or decoding happens here: generate.ts turns a compiled
 * struct into its encoder and decoder, interpret.ts holds the generic per-step reader and writer.
 *
 * Defaults follow dsl.ts: a field absent at a version decodes to its table default, else to the
 * zero of its type (null where the field is nullable in every version it has).
 */
import assert from 'node:assert/strict';
import { ZERO_UUID } from '../primitives';
import type { Reader } from '../reader';
import type { Writer } from '../writer';
import { fieldKey, inRange, parseVersions } from '../schema/dsl';
import type { FieldDefault, FieldSpec } from '../schema/dsl';

/** The wire type of a step (a table type with its array element or struct fields stripped). */
export const enum Kind {
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
export const enum Mode {
  /** In the fixed part of the struct, in table order. */
  Wire,
  /** In the struct's tagged-field section. */
  Tagged,
  /** Not on the wire at this version: decodes to its default. */
  Absent,
}

/** The default of a non-nullable bytes or records field (shared: decoded values are never written to). */
export const EMPTY_BUFFER = Buffer.alloc(0);

/** One field of one struct at one version. */
export interface Step {
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
  /** An int64 decoded with Reader.int64Saturating (FieldSpec `saturating`). */
  readonly saturating?: boolean;
}

/** A decoded struct (or message body): field key -> value. */
export type Rec = Record<string, unknown>;
/** Appends the struct `v` to `w`. */
export type StructEncoder = (w: Writer, v: Rec) => void;
/** Reads one struct from `r`, advancing it. */
export type StructDecoder = (r: Reader) => Rec;

/** A struct (or message body) compiled for one version. */
export interface CompiledStruct {
  readonly flexible: boolean;
  /** All fields of the table, in table order. */
  readonly steps: readonly Step[];
  /** Fields in the fixed part, in wire order. */
  readonly wire: readonly Step[];
  /** Tagged fields at this version, ascending tag. */
  readonly tagged: readonly Step[];
  readonly byTag: ReadonlyMap<number, Step>;
  /** Generated encoder for this struct at this version (generate.ts; a throwing stub until then). */
  encode: StructEncoder;
  /** Generated decoder for this struct at this version (generate.ts; a throwing stub until then). */
  decode: StructDecoder;
}

/**
 * Compiles `fields` (a message body or a nested struct) at `version`, nested structs first.
 * `path` names the struct in assertion messages. The result's `encode`/`decode` are stubs until
 * generate.ts `generateCodecs` fills them. Throws AssertionError on a malformed table (duplicate
 * field or tag, a tag outside flexible versions, an unknown type, a default of the wrong type).
 */
export function compileStruct(
  fields: readonly FieldSpec[],
  version: number,
  flexible: boolean,
  path: string,
): CompiledStruct {
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
  return { flexible, steps, wire, tagged, byTag, encode: unreachableEncoder, decode: unreachableDecoder };
}

function unreachableEncoder(): void {
  throw new Error('struct encoder used before generation');
}

function unreachableDecoder(): Rec {
  throw new Error('struct decoder used before generation');
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
  assert.ok(f.saturating !== true || kind === Kind.Int64, `${path}: saturating on a ${f.type} field`);
  const saturating = f.saturating === true;
  return { key: fieldKey(f.name), path, mode, kind, nullable, tag: f.tag ?? -1, def, elem, sub, saturating };
}

/** Marks a default that must be built fresh per use (mutable values). */
export const EMPTY_ARRAY_MARK = Symbol('[]');
export const STRUCT_MARK = Symbol('{}');

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
export function defaultOf(s: Step): unknown {
  const d = s.def;
  if (d === EMPTY_ARRAY_MARK) return [];
  if (d === STRUCT_MARK) return defaultStruct(s.sub!);
  return d;
}

/** A struct with every field at its default (fresh arrays and nested structs). */
export function defaultStruct(cs: CompiledStruct): Rec {
  const out: Rec = {};
  for (const s of cs.steps) out[s.key] = defaultOf(s);
  return out;
}
