/**
 * Test helpers: values generated from a schema table at one version, with the default rules
 * restated independently of codec/ (dsl.ts documents them), and a seeded PRNG.
 */
import { inRange, parseVersions, fieldKey } from '../../../src/protocol/schema/dsl';
import type { FieldSpec, MessageSpec } from '../../../src/protocol/schema/dsl';
import { ZERO_UUID } from '../../../src/protocol/primitives';

/** mulberry32: small deterministic PRNG, returns [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function nullableEverywhere(f: FieldSpec): boolean {
  if (f.nullableVersions === undefined) return false;
  const n = parseVersions(f.nullableVersions);
  const v = parseVersions(f.versions);
  return n.min <= v.min && n.max >= v.max;
}

/** The default a field decodes to when absent (dsl.ts rules, restated). */
export function expectedDefault(f: FieldSpec, version: number): unknown {
  if (f.default !== undefined) return f.default;
  if (f.type.startsWith('[]')) return [];
  if (f.fields !== undefined) return structDefaults(f.fields, version);
  switch (f.type) {
    case 'bool':
      return false;
    case 'string':
      return nullableEverywhere(f) ? null : '';
    case 'bytes':
    case 'records':
      return nullableEverywhere(f) ? null : Buffer.alloc(0);
    case 'uuid':
      return ZERO_UUID;
    default:
      return 0;
  }
}

function structDefaults(fields: readonly FieldSpec[], version: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[fieldKey(f.name)] = expectedDefault(f, version);
  return out;
}

/**
 * How to fill fields present at the version:
 * - 'full': non-default, non-null values everywhere (arrays of two elements);
 * - 'nulls': null where nullable at this version, else empty arrays/strings/buffers and zeros.
 */
export type Variant = 'full' | 'nulls';

function scalar(type: string, next: () => number, avoid: unknown): unknown {
  const n = 1 + Math.floor(next() * 100);
  switch (type) {
    case 'bool':
      return avoid === true ? false : true;
    case 'int8':
      return 100 - (n % 20);
    case 'int16':
      return 30000 - n;
    case 'int32':
      return 2_000_000_000 - n * 7;
    case 'int64':
      return 2 ** 45 + n * 1001;
    case 'uint16':
      return 65535 - n;
    case 'uint32':
      return 4_000_000_000 + n;
    case 'float64':
      return n + 0.25;
    case 'string':
      return `s${n}-é✓`;
    case 'uuid': {
      const b = Buffer.alloc(16);
      for (let i = 0; i < 16; i++) b[i] = Math.floor(next() * 256);
      b[0] = b[0]! | 1;
      return b.toString('base64url');
    }
    case 'bytes':
    case 'records':
      return Buffer.from(Array.from({ length: 5 + (n % 7) }, (_, i) => (i * 31 + n) & 0xff));
    default:
      throw new Error(`no generator for ${type}`);
  }
}

function emptyScalar(type: string): unknown {
  switch (type) {
    case 'bool':
      return false;
    case 'string':
      return '';
    case 'uuid':
      return ZERO_UUID;
    case 'bytes':
    case 'records':
      return Buffer.alloc(0);
    default:
      return 0;
  }
}

function fieldValue(f: FieldSpec, version: number, variant: Variant, next: () => number): unknown {
  const nullable = f.nullableVersions !== undefined && inRange(parseVersions(f.nullableVersions), version);
  if (variant === 'nulls' && nullable) return null;
  if (f.type.startsWith('[]')) {
    if (variant === 'nulls') return [];
    const elem = f.type.slice(2);
    return [0, 1].map(() =>
      f.fields !== undefined ? generateStruct(f.fields, version, variant, next) : scalar(elem, next, undefined),
    );
  }
  if (f.fields !== undefined) return generateStruct(f.fields, version, variant, next);
  return variant === 'nulls' ? emptyScalar(f.type) : scalar(f.type, next, f.default);
}

/** A struct value: generated for fields present at `version`, defaults for the others. */
export function generateStruct(
  fields: readonly FieldSpec[],
  version: number,
  variant: Variant,
  next: () => number,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    out[fieldKey(f.name)] = inRange(parseVersions(f.versions), version)
      ? fieldValue(f, version, variant, next)
      : expectedDefault(f, version);
  }
  return out;
}

/** A message body value for `spec` at `version`. */
export function generateMessage(
  spec: MessageSpec,
  version: number,
  variant: Variant,
  seed: number,
): Record<string, unknown> {
  return generateStruct(spec.fields, version, variant, prng(seed));
}
