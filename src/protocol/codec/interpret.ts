/**
 * The generic, step-at-a-time reader and writer of compiled structs: what the generated code
 * (generate.ts) calls for array elements other than int32 and structs, for tagged-field sections,
 * and for values inside a tagged field. Whole structs are always read and written by their
 * generated `decode`/`encode`.
 *
 * Wire rules (protocol guide "Protocol Primitive Types"; KIP-482): non-flexible versions use
 * STRING/NULLABLE_STRING (int16 length), BYTES/NULLABLE_BYTES/RECORDS and ARRAY (int32 length);
 * flexible ones the COMPACT_* forms (uvarint N+1, 0 = null). A tagged field is written only when it
 * differs from its default, in ascending tag order; on reading, known tags are decoded and unknown
 * ones skipped.
 */
import assert from 'node:assert/strict';
import { ProtocolError } from '../primitives';
import { Reader } from '../reader';
import { Writer } from '../writer';
import { defaultOf, Kind } from './compile';
import type { CompiledStruct, Rec, Step } from './compile';

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

/** The `Writer` method of each fixed-width number kind (generated encoders call them by name). */
export const NUMBER_WRITERS: Partial<
  Record<Kind, 'int8' | 'int16' | 'int32' | 'int64' | 'uint16' | 'uint32' | 'float64'>
> = {
  [Kind.Int8]: 'int8',
  [Kind.Int16]: 'int16',
  [Kind.Int32]: 'int32',
  [Kind.Int64]: 'int64',
  [Kind.Uint16]: 'uint16',
  [Kind.Uint32]: 'uint32',
  [Kind.Float64]: 'float64',
};

/** Shared stand-in for a null or missing struct value: every field takes its default. */
export const EMPTY_OBJECT: Rec = Object.freeze({}) as Rec;

/**
 * Reads a TAGGED_FIELDS section into `out`: each known tag of `cs` through a Reader bounded to the
 * field's bytes, unknown tags skipped. Throws ProtocolError on a count or size beyond the input.
 */
export function readTaggedSection(r: Reader, cs: CompiledStruct, out: Rec): void {
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

/**
 * Reads one value of step `s` (in `flexible` encodings or not). Throws ProtocolError on malformed
 * input, including a null where `s` is not nullable.
 */
export function readValue(r: Reader, s: Step, flexible: boolean): unknown {
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
      return s.saturating === true ? r.int64Saturating() : r.int64();
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
        for (let i = 0; i < n; i++) out[i] = sub.decode(r);
      } else {
        for (let i = 0; i < n; i++) out[i] = readValue(r, elem, flexible);
      }
      return out;
    }
    case Kind.Struct:
      return s.sub!.decode(r);
  }
}

/**
 * Writes the non-default tagged fields of `v` as a TAGGED_FIELDS section, in ascending tag order
 * (each value through its own Writer, as its size precedes it).
 */
export function writeTaggedSection(w: Writer, cs: CompiledStruct, v: Rec): void {
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
      const o = x as Rec;
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

/**
 * Writes `x` as a value of step `s` (its default when undefined). Throws EncodeError on a null
 * where `s` is not nullable, RangeError on a number or string the wire type cannot hold.
 */
export function writeValue(w: Writer, s: Step, x: unknown, flexible: boolean): void {
  if (x === undefined) x = defaultOf(s);
  const numberWriter = NUMBER_WRITERS[s.kind];
  if (numberWriter !== undefined) {
    w[numberWriter](x as number);
    return;
  }
  switch (s.kind) {
    case Kind.Bool:
      w.bool(x as boolean);
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
        for (let i = 0; i < a.length; i++) sub.encode(w, (a[i] ?? EMPTY_OBJECT) as Rec);
      } else {
        for (let i = 0; i < a.length; i++) writeValue(w, elem, a[i], flexible);
      }
      return;
    }
    case Kind.Struct:
      s.sub!.encode(w, (x ?? EMPTY_OBJECT) as Rec);
      return;
    default:
      assert.fail(`${s.path}: no writer for kind ${s.kind}`);
  }
}
