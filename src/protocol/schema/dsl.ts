/**
 * The schema DSL: one table per Kafka API, written from Kafka's message JSON
 * (`clients/src/main/resources/common/message/*.json` and its README) with the same vocabulary:
 * `validVersions`, `flexibleVersions`, and per field `versions`, `nullableVersions`,
 * `taggedVersions` + `tag`, `default`, nested `fields`.
 *
 * Names are written as in Kafka's JSON (`PartitionIndex`); decoded objects use them with the first
 * letter lowercased (`partitionIndex`), both at runtime (`fieldKey`) and in the types derived here
 * (`MessageValue`). Adding an API or a version is adding or editing a table: the codec compiles
 * the tables, nothing is written per version.
 *
 * Version strings follow Kafka: "3+" (3 and later), "0-7" (inclusive), "5" (only 5), "none".
 */

/** Primitive field types (Kafka's JSON type names). */
export type PrimitiveType =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint16'
  | 'uint32'
  | 'float64'
  | 'string'
  | 'bytes'
  | 'records'
  | 'uuid';

/** Field default, as the JS value it decodes to (JSON's "-1" is written -1, "null" is null). */
export type FieldDefault = number | boolean | string | null;

/**
 * One field of a message or struct.
 * - `type`: a PrimitiveType, `[]<PrimitiveType>`, `[]<StructName>` (with `fields`) or `<StructName>`
 *   (a single nested struct, with `fields`).
 * - `versions`: versions in which the field is on the wire (or in the tag section when tagged).
 * - `nullableVersions`: versions in which null is encodable.
 * - `taggedVersions` + `tag`: versions in which the field is a tagged field (KIP-482).
 * - `default`: value when absent at a version or omitted when encoding. Without one: 0, false,
 *   '' for strings, [] for arrays, an empty Buffer for bytes, the zero UUID, a default-filled
 *   struct; but null for a string/bytes/records field that is nullable in every version it exists.
 *   (Kafka's rule differs there: "" and empty bytes unless "null" is written. It only shows on the
 *   wire for tagged fields, and test/conformance checks every default that can show.) An int64
 *   default beyond 2^53 (Fetch v18's HighWatermark, Long.MAX_VALUE) is only ever compared, so it
 *   may be given on a tagged field, where the default is never written.
 */
export interface FieldSpec {
  readonly name: string;
  readonly type: string;
  readonly versions: string;
  readonly nullableVersions?: string;
  readonly taggedVersions?: string;
  readonly tag?: number;
  readonly default?: FieldDefault;
  readonly ignorable?: boolean;
  /**
   * Skiff's, not Kafka's (int64 fields only): a value beyond ±(2^53 - 1) decodes as
   * ±Number.MAX_SAFE_INTEGER instead of failing the request (Reader.int64Saturating). Only for
   * fields that are compared with offsets or timestamps and never stored, where any value that
   * large gets the answer Kafka gives it (Fetch's FetchOffset: OFFSET_OUT_OF_RANGE).
   */
  readonly saturating?: boolean;
  readonly about?: string;
  readonly fields?: readonly FieldSpec[];
}

/** A request or response message table: Kafka's message JSON with our field tables. */
export interface MessageSpec {
  readonly apiKey: number;
  /** Kafka's JSON types: API messages, and the records of __consumer_offsets (coordinator-key/value). */
  readonly type: 'request' | 'response' | 'coordinator-key' | 'coordinator-value';
  readonly name: string;
  readonly validVersions: string;
  readonly flexibleVersions: string;
  readonly fields: readonly FieldSpec[];
}

/** Inclusive version range; `max` is Infinity for "N+", and min > max for "none". */
export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

/** Parses a Kafka version string ("0+", "3-7", "5", "none"). Throws Error on a malformed one. */
export function parseVersions(s: string): VersionRange {
  if (s === 'none') return { min: 1, max: 0 };
  let m = /^(\d+)\+$/.exec(s);
  if (m) return { min: Number(m[1]), max: Infinity };
  m = /^(\d+)-(\d+)$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number(m[2]) };
  m = /^(\d+)$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number(m[1]) };
  throw new Error(`malformed version range ${JSON.stringify(s)}`);
}

/** Whether `version` lies in `range`. */
export function inRange(range: VersionRange, version: number): boolean {
  return version >= range.min && version <= range.max;
}

/** The decoded-object key for a Kafka JSON field name: first letter lowercased. */
export function fieldKey(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

// ---- Types of decoded values, derived from a table written `as const satisfies MessageSpec`. ----

type ScalarValue<T> = T extends 'bool'
  ? boolean
  : T extends 'int8' | 'int16' | 'int32' | 'int64' | 'uint16' | 'uint32' | 'float64'
    ? number
    : T extends 'string' | 'uuid'
      ? string
      : T extends 'bytes' | 'records'
        ? Buffer
        : never;

type OrNull<F, V> = F extends { readonly nullableVersions: string } ? V | null : V;

/** JS type of one field's decoded value. */
export type FieldValue<F> = F extends { readonly fields: infer S extends readonly FieldSpec[]; readonly type: infer T }
  ? T extends `[]${string}`
    ? OrNull<F, StructValue<S>[]>
    : StructValue<S>
  : F extends { readonly type: `[]${infer E}` }
    ? OrNull<F, ScalarValue<E>[]>
    : F extends { readonly type: infer T }
      ? OrNull<F, ScalarValue<T>>
      : never;

/** Decoded struct: every field of the table present, keyed by its lowerCamelCase name. */
export type StructValue<S extends readonly FieldSpec[]> = {
  -readonly [F in S[number] as Uncapitalize<F['name']>]: FieldValue<F>;
};

/** Decoded message body for a table, e.g. `MessageValue<typeof FetchRequest>`. */
export type MessageValue<M extends MessageSpec> = StructValue<M['fields']>;

/** Deep-partial input accepted by the encoder: omitted fields take their defaults. */
export type EncodeInput<T> = T extends Buffer
  ? T
  : T extends (infer E)[]
    ? EncodeInput<E>[]
    : T extends object
      ? { [K in keyof T]?: EncodeInput<T[K]> }
      : T;
