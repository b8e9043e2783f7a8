/**
 * Code generation. Each compiled struct (compile.ts) gets a straight-line encoder and decoder
 * built with `new Function` from our own tables (never from input): constant property names keep
 * V8's inline caches monomorphic, and simple fields cost one Writer/Reader call. Arrays, nested
 * structs and tagged sections call back into the generic helpers of interpret.ts.
 */
import assert from 'node:assert/strict';
import { EMPTY_ARRAY_MARK, EMPTY_BUFFER, Kind, Mode, STRUCT_MARK, defaultOf } from './compile';
import type { CompiledStruct, Step, StructDecoder, StructEncoder } from './compile';
import {
  EMPTY_OBJECT,
  EncodeError,
  NUMBER_WRITERS,
  readTaggedSection,
  readValue,
  writeTaggedSection,
  writeValue,
} from './interpret';

/**
 * Fills `cs.encode` and `cs.decode` (and those of every struct nested in it, first: a parent's
 * generated code holds its children's functions). Throws AssertionError on a kind with no codec.
 */
export function generateCodecs(cs: CompiledStruct): void {
  for (const s of cs.steps) if (s.sub !== null) generateCodecs(s.sub);
  cs.encode = generateEncoder(cs);
  cs.decode = generateDecoder(cs);
}

const EMPTY_ARRAY: readonly unknown[] = Object.freeze([]);

function literal(v: unknown): string {
  assert.ok(v === null || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string', 'literal default');
  return JSON.stringify(v);
}

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
    } else if (s.saturating === true) {
      expr = 'r.int64Saturating()';
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
