/**
 * Kafka's own message definitions, read at test time from the kafka-clients jar
 * (`common/message/*.json` inside it; the jar comes from Maven Central through
 * scripts/fetch-kafka-clients-jar.sh and is never committed, nor is anything extracted from it).
 *
 * - `readJarEntries`: a minimal zip reader (central directory + stored/deflated entries), so the
 *   test needs nothing but Node.
 * - `parseMessageJson`: Kafka's JSON with its `//` comments stripped (outside strings only).
 * - `effectiveFields`: one struct at one version as the wire sees it, for both our tables and
 *   Kafka's definitions, so the two can be compared field by field (schema-conformance.test.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { inRange, parseVersions } from '../../src/protocol/schema/dsl';
import type { FieldSpec, MessageSpec } from '../../src/protocol/schema/dsl';

// ---- zip ----

/** The entries of a zip file whose names match `wanted`, decompressed. Throws on a malformed zip. */
export function readJarEntries(file: string, wanted: (name: string) => boolean): Map<string, Buffer> {
  const buf = fs.readFileSync(file);
  // End of central directory: signature 0x06054b50, within the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${file}: no zip end-of-central-directory record`);
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error(`${file}: bad central directory entry at ${p}`);
    const method = buf.readUInt16LE(p + 10);
    const compressedSize = buf.readUInt32LE(p + 20);
    const nameLength = buf.readUInt16LE(p + 28);
    const extraLength = buf.readUInt16LE(p + 30);
    const commentLength = buf.readUInt16LE(p + 32);
    const localOffset = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLength);
    p += 46 + nameLength + extraLength + commentLength;
    if (!wanted(name)) continue;
    if (buf.readUInt32LE(localOffset) !== 0x04034b50) throw new Error(`${file}: bad local header for ${name}`);
    const dataStart = localOffset + 30 + buf.readUInt16LE(localOffset + 26) + buf.readUInt16LE(localOffset + 28);
    const data = buf.subarray(dataStart, dataStart + compressedSize);
    if (method === 0) out.set(name, Buffer.from(data));
    else if (method === 8) out.set(name, zlib.inflateRawSync(data));
    else throw new Error(`${file}: ${name} uses zip method ${method}`);
  }
  return out;
}

// ---- Kafka's message JSON ----

/** A field as Kafka's JSON writes it (the keys the wire depends on, plus `about`). */
export interface KafkaField {
  readonly name: string;
  readonly type: string;
  readonly versions: string;
  readonly nullableVersions?: string;
  readonly taggedVersions?: string;
  readonly tag?: number;
  readonly flexibleVersions?: string;
  readonly default?: string | number | boolean;
  readonly fields?: readonly KafkaField[];
}

/** A message definition (`common/message/<Name>.json`). */
export interface KafkaMessage {
  readonly apiKey?: number;
  readonly type: string;
  readonly name: string;
  readonly validVersions: string;
  readonly flexibleVersions: string;
  readonly latestVersionUnstable?: boolean;
  readonly fields: readonly KafkaField[];
  readonly commonStructs?: readonly {
    readonly name: string;
    readonly versions: string;
    readonly fields: readonly KafkaField[];
  }[];
}

/** Removes `//` comments outside string literals (Kafka's JSON files carry license and version notes). */
export function stripJsonComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  return out;
}

export function parseMessageJson(text: string): KafkaMessage {
  return JSON.parse(stripJsonComments(text)) as KafkaMessage;
}

/** All message definitions in a kafka-clients jar, by message name (`FetchRequest`). */
export function loadKafkaMessages(jar: string): Map<string, KafkaMessage> {
  const entries = readJarEntries(jar, (n) => /^common\/message\/[A-Za-z0-9]+\.json$/.test(n));
  const out = new Map<string, KafkaMessage>();
  for (const [name, data] of entries) {
    const m = parseMessageJson(data.toString('utf8'));
    if (m.type !== 'request' && m.type !== 'response') continue;
    if (path.basename(name, '.json') !== m.name) throw new Error(`${name} defines ${m.name}`);
    out.set(m.name, m);
  }
  return out;
}

/**
 * Runs scripts/fetch-kafka-clients-jar.sh for `versions` (idempotent: a no-op when the jars are in
 * ~/.m2 or .cache/kafka) and returns version -> jar path.
 */
export function fetchKafkaClientsJars(versions: readonly string[]): Map<string, string> {
  const root = path.resolve(__dirname, '..', '..', '..');
  const script = path.join(root, 'scripts', 'fetch-kafka-clients-jar.sh');
  const stdout = execFileSync('bash', [script, ...versions], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 300_000,
  });
  const lines = stdout.trim().split('\n');
  if (lines.length !== versions.length)
    throw new Error(`fetch-kafka-clients-jar.sh printed ${lines.length} paths for ${versions.length} versions`);
  return new Map(versions.map((v, i) => [v, lines[i]!]));
}

// ---- one struct at one version, normalised ----

/** A field as the wire sees it at one version. */
export interface WireField {
  readonly name: string;
  /** `int32`, `[]int32`, `struct`, `[]struct`. */
  readonly type: string;
  readonly nullable: boolean;
  /** Tag when tagged at this version, else null. */
  readonly tag: number | null;
  /** Field-level flexibleVersions override (Kafka only), e.g. "none". */
  readonly flexibleOverride: string | null;
  /** The default, normalised (number, boolean, string, null, '[]', '{}', '<empty bytes>'). */
  readonly default: unknown;
  /** Whether the default matters on the wire or to a handler at some valid version (see `defaultMatters`). */
  readonly defaultMatters: boolean;
  readonly fields: readonly WireField[] | null;
}

type AnyField = KafkaField | FieldSpec;

const PRIMITIVES = new Set([
  'bool',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint16',
  'uint32',
  'float64',
  'string',
  'bytes',
  'records',
  'uuid',
]);

function isStructType(f: AnyField, structs: ReadonlyMap<string, readonly AnyField[]>): readonly AnyField[] | null {
  if (f.fields !== undefined) return f.fields;
  const elem = f.type.startsWith('[]') ? f.type.slice(2) : f.type;
  if (PRIMITIVES.has(elem)) return null;
  const common = structs.get(elem);
  if (common === undefined) throw new Error(`${f.name}: struct type ${elem} has no fields`);
  return common;
}

/** Kafka's default for a field (MessageDataGenerator rules): strings "", bytes empty, records null, unless "null" is written. */
function kafkaDefault(f: KafkaField, structFields: boolean): unknown {
  const d = f.default;
  const isArray = f.type.startsWith('[]');
  if (isArray) return d === 'null' ? null : '[]';
  if (structFields) return '{}';
  switch (f.type) {
    case 'bool':
      return d === undefined ? false : d === true || d === 'true';
    case 'string':
      return d === undefined ? '' : d === 'null' ? null : String(d);
    case 'bytes':
      return d === 'null' ? null : '<empty bytes>';
    case 'records':
      return null;
    case 'uuid':
      return d === undefined || d === '' ? 'AAAAAAAAAAAAAAAAAAAAAA' : String(d);
    case 'float64':
      return d === undefined ? 0 : Number(d);
    default: {
      if (d === undefined || d === '') return 0;
      const s = String(d);
      return /^-?0x/i.test(s) ? (s.startsWith('-') ? -parseInt(s.slice(1), 16) : parseInt(s, 16)) : Number(s);
    }
  }
}

/** Our default (dsl.ts rules): null for a string/bytes/records field nullable in every version it exists. */
function ourDefault(f: FieldSpec, structFields: boolean): unknown {
  if (f.type.startsWith('[]')) return f.default === null ? null : '[]';
  if (structFields) return '{}';
  if (f.default !== undefined) return f.default;
  const v = parseVersions(f.versions);
  const n = f.nullableVersions === undefined ? null : parseVersions(f.nullableVersions);
  const nullableEverywhere = n !== null && n.min <= v.min && n.max >= v.max;
  switch (f.type) {
    case 'bool':
      return false;
    case 'string':
      return nullableEverywhere ? null : '';
    case 'bytes':
    case 'records':
      return nullableEverywhere ? null : '<empty bytes>';
    case 'uuid':
      return 'AAAAAAAAAAAAAAAAAAAAAA';
    default:
      return 0;
  }
}

/**
 * Whether a field's default is observable: it is tagged at some version (a tagged field equal to
 * its default is not written, and the reader takes its default), or it is a request field absent
 * at some valid version (the handler then sees the default, as Kafka's would), or it sits inside
 * such a struct. A response field's default at versions without it never reaches anyone.
 */
function defaultMatters(
  f: AnyField,
  valid: { min: number; max: number },
  parentMatters: boolean,
  isRequest: boolean,
): boolean {
  if (parentMatters || f.taggedVersions !== undefined) return true;
  if (!isRequest) return false;
  const v = parseVersions(f.versions);
  return v.min > valid.min || v.max < valid.max;
}

/**
 * The fields of `fields` present at `version`, in declaration order, normalised. `kafka` selects
 * Kafka's default rules; `valid` is the message's validVersions and `isRequest` its direction
 * (both for `defaultMatters`).
 */
export function effectiveFields(
  fields: readonly AnyField[],
  version: number,
  kafka: boolean,
  valid: { min: number; max: number },
  isRequest: boolean,
  structs: ReadonlyMap<string, readonly AnyField[]> = new Map(),
  parentMatters = false,
): WireField[] {
  const out: WireField[] = [];
  for (const f of fields) {
    if (!inRange(parseVersions(f.versions), version)) continue;
    const sub = isStructType(f, structs);
    const isArray = f.type.startsWith('[]');
    const tagged = f.taggedVersions !== undefined && inRange(parseVersions(f.taggedVersions), version);
    const nullable = f.nullableVersions !== undefined && inRange(parseVersions(f.nullableVersions), version);
    const type = sub !== null ? (isArray ? '[]struct' : 'struct') : f.type;
    const flexibleOverride =
      'flexibleVersions' in f && typeof f.flexibleVersions === 'string' ? f.flexibleVersions : null;
    const matters = defaultMatters(f, valid, parentMatters, isRequest);
    out.push({
      name: f.name,
      type,
      nullable,
      tag: tagged ? (f.tag ?? -1) : null,
      flexibleOverride,
      default: kafka ? kafkaDefault(f as KafkaField, sub !== null) : ourDefault(f as FieldSpec, sub !== null),
      defaultMatters: matters,
      fields: sub === null ? null : effectiveFields(sub, version, kafka, valid, isRequest, structs, matters),
    });
  }
  return out;
}

/** Common structs of a Kafka message, by type name. */
export function commonStructs(m: KafkaMessage): Map<string, readonly KafkaField[]> {
  return new Map((m.commonStructs ?? []).map((s) => [s.name, s.fields]));
}

/**
 * Differences between our table and Kafka's definition at one version, as
 * `<Message> v<N> <Path>: <what>` lines (empty when they agree on the wire).
 */
export function compareAtVersion(ours: MessageSpec, theirs: KafkaMessage, version: number): string[] {
  const diffs: string[] = [];
  const where = `${ours.name} v${version}`;
  const ourFlex = inRange(parseVersions(ours.flexibleVersions), version);
  const theirFlex = inRange(parseVersions(theirs.flexibleVersions), version);
  if (ourFlex !== theirFlex) diffs.push(`${where} <message>: flexible ${ourFlex} vs Kafka ${theirFlex}`);
  const ourValid = parseVersions(ours.validVersions);
  const theirValid = parseVersions(theirs.validVersions);
  const isRequest = ours.type === 'request';
  if (theirs.type !== ours.type) diffs.push(`${where} <message>: a ${ours.type} vs Kafka ${theirs.type}`);
  const a = effectiveFields(ours.fields, version, false, ourValid, isRequest);
  const b = effectiveFields(theirs.fields, version, true, theirValid, isRequest, commonStructs(theirs));
  compareStructs(a, b, `${where} `, '', diffs);
  return diffs;
}

function compareStructs(
  ours: readonly WireField[],
  theirs: readonly WireField[],
  prefix: string,
  pathPrefix: string,
  diffs: string[],
): void {
  const at = pathPrefix === '' ? '<message>' : pathPrefix.slice(0, -1);
  const ourWire = ours.filter((f) => f.tag === null).map((f) => f.name);
  const theirWire = theirs.filter((f) => f.tag === null).map((f) => f.name);
  if (ourWire.join(',') !== theirWire.join(',')) {
    diffs.push(`${prefix}${at}: fields [${ourWire.join(', ')}] vs Kafka [${theirWire.join(', ')}]`);
  }
  const ourTagged = ours
    .filter((f) => f.tag !== null)
    .map((f) => `${f.tag}:${f.name}`)
    .sort();
  const theirTagged = theirs
    .filter((f) => f.tag !== null)
    .map((f) => `${f.tag}:${f.name}`)
    .sort();
  if (ourTagged.join(',') !== theirTagged.join(',')) {
    diffs.push(`${prefix}${at}: tagged fields [${ourTagged.join(', ')}] vs Kafka [${theirTagged.join(', ')}]`);
  }
  const byName = new Map(theirs.map((f) => [f.name, f]));
  for (const o of ours) {
    const t = byName.get(o.name);
    if (t === undefined) continue;
    const p = `${pathPrefix}${o.name}`;
    if (o.type !== t.type) diffs.push(`${prefix}${p}: type ${o.type} vs Kafka ${t.type}`);
    if (o.nullable !== t.nullable) diffs.push(`${prefix}${p}: nullable ${o.nullable} vs Kafka ${t.nullable}`);
    if (o.tag !== t.tag) diffs.push(`${prefix}${p}: tag ${o.tag} vs Kafka ${t.tag}`);
    if (o.flexibleOverride !== t.flexibleOverride)
      diffs.push(`${prefix}${p}: flexibleVersions override ${o.flexibleOverride} vs Kafka ${t.flexibleOverride}`);
    if ((o.defaultMatters || t.defaultMatters) && !Object.is(o.default, t.default) && o.default !== t.default) {
      diffs.push(`${prefix}${p}: default ${JSON.stringify(o.default)} vs Kafka ${JSON.stringify(t.default)}`);
    }
    if (o.fields !== null && t.fields !== null) compareStructs(o.fields, t.fields, prefix, `${p}.`, diffs);
  }
}
