/**
 * Kafka's small checkpoint files, byte-compatible with Kafka's readers and writers:
 *
 * ```
 * recovery-point-offset-checkpoint,      leader-epoch-checkpoint      partition.metadata
 * replication-offset-checkpoint,         (per partition dir)          (per partition dir)
 * log-start-offset-checkpoint (per log dir)
 *   0                      <- version      0                          version: 0
 *   2                      <- entry count  2                          topic_id: <22-char base64url>
 *   orders 0 1200          <- topic partition offset
 *   orders 1 977              0 0          <- epoch startOffset
 *                             3 950
 * ```
 * and `meta.properties` (java properties: version=1, node.id, cluster.id, directory.id).
 *
 * Sources: Kafka's CheckpointFile / OffsetCheckpointFile, LeaderEpochCheckpointFile,
 * PartitionMetadataFile, MetaProperties. Writes go through `FileSystem.writeFileAtomic` (tmp + fsync +
 * rename + fsync dir). Reads treat the file as a hint: a missing file reads as empty/null silently,
 * a corrupt one as empty/null with a warning; reads never throw (write errors do).
 */
import type { Logger } from '../io/logger';
import type { FileSystem } from '../io/file-system';

/** Per-log-dir checkpoint of recovery points (offset below which each log is fsynced). */
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint';
/** Per-log-dir checkpoint of high watermarks. */
export const REPLICATION_OFFSET_CHECKPOINT_FILE = 'replication-offset-checkpoint';
/** Per-log-dir checkpoint of log start offsets. */
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint';
/** Per-partition leader-epoch cache checkpoint. */
export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint';
/** Per-partition topic ID file. */
export const PARTITION_METADATA_FILE = 'partition.metadata';
/** Per-log-dir identity file. */
export const META_PROPERTIES_FILE = 'meta.properties';

/** One line of an offset checkpoint: an offset (logical, not bytes) for a topic partition. */
export interface TopicPartitionOffset {
  topic: string;
  partition: number;
  offset: number;
}

/** One leader-epoch cache entry: `epoch` began at offset `startOffset`. */
export interface EpochEntry {
  epoch: number;
  startOffset: number;
}

/** Contents of `partition.metadata` (version 0). */
export interface PartitionMetadata {
  /** Kafka Uuid string: 16 bytes as base64url without padding (22 chars). */
  topicId: string;
}

/** Contents of `meta.properties` (version 1, KRaft-style). */
export interface MetaProperties {
  version: 1;
  nodeId: number;
  clusterId: string;
  /** Kafka Uuid string of this log dir (KIP-858), when known. */
  directoryId?: string;
}

const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;
const DECIMAL = /^-?\d+$/;
const UUID_STRING = /^[A-Za-z0-9_-]{22}$/;

function parseNonNegativeInt(text: string): number | null {
  if (!DECIMAL.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** Encodes 16 bytes as a Kafka Uuid string (base64url, no padding, 22 chars). */
export function uuidToString(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new RangeError(`uuid needs 16 bytes, got ${bytes.length}`);
  return Buffer.from(bytes).toString('base64url');
}

/** Decodes a Kafka Uuid string to its 16 bytes, or null if it is not one. */
export function uuidFromString(text: string): Buffer | null {
  if (!UUID_STRING.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.length === 16 && bytes.toString('base64url') === text ? bytes : null;
}

/** Splits a checkpoint body into lines: `\n` (or `\r\n`) separated, one optional trailing newline. */
function lines(text: string): string[] {
  const out = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out;
}

/**
 * Parses Kafka's CheckpointFile shape: version line "0", count line, then exactly `count` entry
 * lines of whitespace-separated fields. Returns the field arrays, or a reason string.
 */
function parseVersionedLines(text: string, fieldsPerLine: number): string[][] | string {
  const all = lines(text);
  if (all.length < 2) return `too short: ${all.length} lines`;
  if (all[0]!.trim() !== '0') return `unsupported version '${all[0]}'`;
  const count = parseNonNegativeInt(all[1]!.trim());
  if (count === null) return `bad entry count '${all[1]}'`;
  if (all.length - 2 !== count) return `expected ${count} entries, found ${all.length - 2}`;
  const out: string[][] = [];
  for (let i = 2; i < all.length; i++) {
    const fields = all[i]!.trim().split(/\s+/);
    if (fields.length !== fieldsPerLine) return `line ${i + 1}: expected ${fieldsPerLine} fields, got '${all[i]}'`;
    out.push(fields);
  }
  return out;
}

/** Reads a whole file as UTF-8, or returns null (missing) or a reason (other read error). */
function readText(fs: FileSystem, path: string): string | null | { error: string } {
  try {
    return fs.readFile(path).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return { error: `read failed: ${(err as Error).message}` };
  }
}

function loadHint<T>(fs: FileSystem, path: string, empty: T, parse: (text: string) => T | string, logger?: Logger): T {
  const text = readText(fs, path);
  if (text === null) return empty;
  const parsed = typeof text === 'string' ? parse(text) : text.error;
  if (typeof parsed === 'string') {
    logger?.warn({ path, reason: parsed }, 'ignoring corrupt checkpoint file');
    return empty;
  }
  return parsed;
}

// ---- offset checkpoints ------------------------------------------------------------------------

/** Formats entries as Kafka's OffsetCheckpointFile text (version 0). */
export function formatOffsetCheckpoint(entries: readonly TopicPartitionOffset[]): string {
  let text = `0\n${entries.length}\n`;
  for (const e of entries) text += `${e.topic} ${e.partition} ${e.offset}\n`;
  return text;
}

/** Parses OffsetCheckpointFile text; returns the entries or a reason string. */
export function parseOffsetCheckpoint(text: string): TopicPartitionOffset[] | string {
  const rows = parseVersionedLines(text, 3);
  if (typeof rows === 'string') return rows;
  const out: TopicPartitionOffset[] = [];
  for (const [topic, partitionText, offsetText] of rows) {
    const partition = parseNonNegativeInt(partitionText!);
    const offset = parseNonNegativeInt(offsetText!);
    if (!TOPIC_NAME.test(topic!) || partition === null || offset === null) {
      return `bad entry '${topic} ${partitionText} ${offsetText}'`;
    }
    out.push({ topic: topic!, partition, offset });
  }
  return out;
}

/**
 * Atomically writes an offset checkpoint (recovery-point-offset-checkpoint,
 * replication-offset-checkpoint, log-start-offset-checkpoint). Throws on I/O errors.
 */
export function writeOffsetCheckpoint(fs: FileSystem, path: string, entries: readonly TopicPartitionOffset[]): void {
  for (const e of entries) {
    if (
      !TOPIC_NAME.test(e.topic) ||
      !Number.isSafeInteger(e.partition) ||
      e.partition < 0 ||
      !Number.isSafeInteger(e.offset) ||
      e.offset < 0
    ) {
      throw new RangeError(`bad checkpoint entry ${JSON.stringify(e)}`);
    }
  }
  fs.writeFileAtomic(path, Buffer.from(formatOffsetCheckpoint(entries), 'utf8'));
}

/** Reads an offset checkpoint; [] when missing or corrupt (warned via `logger`). Never throws. */
export function readOffsetCheckpoint(fs: FileSystem, path: string, logger?: Logger): TopicPartitionOffset[] {
  return loadHint(fs, path, [], parseOffsetCheckpoint, logger);
}

/**
 * The shape {@link writeOffsetCheckpoint} (and Kafka's writer) produces: version 0, a count, `topic partition offset`
 * lines, single spaces, no leading zeros (so a partition's line is found by its exact text).
 */
const CANONICAL_OFFSET_CHECKPOINT = /^0\n(\d+)\n(?:[a-zA-Z0-9._-]{1,249} (?:0|[1-9]\d*) (?:0|[1-9]\d*)\n)*$/;

/**
 * The offset of one partition in an offset checkpoint, or undefined when the file is missing,
 * corrupt (warned via `logger`) or has no entry for it: the same answer as
 * `readOffsetCheckpoint(...).find(...)`, without building every entry. Each of a log dir's replicas
 * reads its own entry when it starts, so with N partitions a full parse per replica costs N^2 line
 * parses (1,000 partitions: about 5 s of start-up); a file in the canonical shape (what Skiff and
 * Kafka write) is checked with one regular expression and searched with indexOf instead, anything
 * else goes through the full parser. Never throws.
 */
export function readOffsetCheckpointEntry(
  fs: FileSystem,
  path: string,
  topic: string,
  partition: number,
  logger?: Logger,
): number | undefined {
  const text = readText(fs, path);
  if (text === null) return undefined;
  if (typeof text === 'string') {
    const m = CANONICAL_OFFSET_CHECKPOINT.exec(text);
    if (m !== null && countNewlines(text) - 2 === Number(m[1])) {
      const key = `\n${topic} ${partition} `;
      const at = text.indexOf(key);
      if (at < 0) return undefined;
      const start = at + key.length;
      const offset = parseNonNegativeInt(text.slice(start, text.indexOf('\n', start)));
      if (offset !== null) return offset;
    }
  }
  return readOffsetCheckpoint(fs, path, logger).find((e) => e.topic === topic && e.partition === partition)?.offset;
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

// ---- leader-epoch-checkpoint -------------------------------------------------------------------

/** Formats Kafka's LeaderEpochCheckpointFile text (version 0). */
export function formatLeaderEpochCheckpoint(entries: readonly EpochEntry[]): string {
  let text = `0\n${entries.length}\n`;
  for (const e of entries) text += `${e.epoch} ${e.startOffset}\n`;
  return text;
}

/**
 * Parses LeaderEpochCheckpointFile text; returns entries or a reason. Entries must have strictly
 * increasing epochs and non-decreasing start offsets (what the leader-epoch cache maintains).
 */
export function parseLeaderEpochCheckpoint(text: string): EpochEntry[] | string {
  const rows = parseVersionedLines(text, 2);
  if (typeof rows === 'string') return rows;
  const out: EpochEntry[] = [];
  for (const [epochText, startText] of rows) {
    const epoch = parseNonNegativeInt(epochText!);
    const startOffset = parseNonNegativeInt(startText!);
    if (epoch === null || startOffset === null) return `bad entry '${epochText} ${startText}'`;
    const prev = out[out.length - 1];
    if (prev !== undefined && (epoch <= prev.epoch || startOffset < prev.startOffset)) {
      return `entries out of order at epoch ${epoch}`;
    }
    out.push({ epoch, startOffset });
  }
  return out;
}

/**
 * Atomically writes a leader-epoch-checkpoint; with `sync: false` the write is whole or absent after
 * a crash but not yet durable ({@link writeFileUnsynced}). Throws on I/O errors or out-of-order entries.
 */
export function writeLeaderEpochCheckpoint(
  fs: FileSystem,
  path: string,
  entries: readonly EpochEntry[],
  options: { sync?: boolean } = {},
): void {
  const text = formatLeaderEpochCheckpoint(entries);
  const check = parseLeaderEpochCheckpoint(text);
  if (typeof check === 'string') throw new RangeError(`bad leader epoch entries: ${check}`);
  writeFile(fs, path, Buffer.from(text, 'utf8'), options.sync ?? true);
}

/** Reads a leader-epoch-checkpoint; [] when missing or corrupt (warned). Never throws. */
export function readLeaderEpochCheckpoint(fs: FileSystem, path: string, logger?: Logger): EpochEntry[] {
  return loadHint(fs, path, [], parseLeaderEpochCheckpoint, logger);
}

// ---- partition.metadata ------------------------------------------------------------------------

/** Formats Kafka's PartitionMetadataFile text. */
export function formatPartitionMetadata(meta: PartitionMetadata): string {
  return `version: 0\ntopic_id: ${meta.topicId}\n`;
}

/** Parses PartitionMetadataFile text ("version: 0", "topic_id: <uuid>"); metadata or a reason. */
export function parsePartitionMetadata(text: string): PartitionMetadata | string {
  const all = lines(text);
  if (all.length !== 2) return `expected 2 lines, found ${all.length}`;
  const version = /^version:\s*(\S+)\s*$/.exec(all[0]!);
  if (version === null || version[1] !== '0') return `bad version line '${all[0]}'`;
  const topicId = /^topic_id:\s*(\S+)\s*$/.exec(all[1]!);
  if (topicId === null || uuidFromString(topicId[1]!) === null) return `bad topic_id line '${all[1]}'`;
  return { topicId: topicId[1]! };
}

/**
 * Atomically writes `partition.metadata`; with `sync: false` not yet durable ({@link writeFileUnsynced}),
 * as Kafka's PartitionMetadataFile.record, whose fsync runs later (maybeFlush on a scheduler task).
 * Throws on I/O errors or a malformed topic ID.
 */
export function writePartitionMetadata(
  fs: FileSystem,
  path: string,
  meta: PartitionMetadata,
  options: { sync?: boolean } = {},
): void {
  if (uuidFromString(meta.topicId) === null) throw new RangeError(`bad topic id '${meta.topicId}'`);
  writeFile(fs, path, Buffer.from(formatPartitionMetadata(meta), 'utf8'), options.sync ?? true);
}

function writeFile(fs: FileSystem, path: string, data: Uint8Array, sync: boolean): void {
  if (sync) fs.writeFileAtomic(path, data);
  else writeFileUnsynced(fs, path, data);
}

/**
 * `path.tmp` written and renamed over `path`, with no fsync: after a crash `path` holds its previous
 * contents, the new ones, or (a power loss before the kernel wrote them back) is missing or empty,
 * which every reader here takes as "no file" ({@link loadHint}). {@link syncFiles} makes it durable.
 * Throws node:fs errors; the temp file is removed on a failed write.
 */
export function writeFileUnsynced(fs: FileSystem, path: string, data: Uint8Array): void {
  const tmp = `${path}.tmp`;
  const handle = fs.open(tmp, 'rw');
  try {
    handle.truncate(0);
    handle.write(data, 0);
  } catch (error) {
    handle.close();
    fs.unlink(tmp);
    throw error;
  }
  handle.close();
  fs.rename(tmp, path);
}

/**
 * fsyncs each of `names` in `dir` that exists, then `dir` itself: what {@link writeFileUnsynced} left
 * pending becomes durable (the same fsyncs writeFileAtomic runs, one directory sync for all). Throws on I/O errors.
 */
export function syncFiles(fs: FileSystem, dir: string, names: readonly string[]): void {
  for (const name of names) {
    const path = `${dir}/${name}`;
    if (!fs.exists(path)) continue;
    const handle = fs.open(path, 'r');
    try {
      handle.sync();
    } finally {
      handle.close();
    }
  }
  fs.syncDir(dir);
}

/** Reads `partition.metadata`; null when missing or corrupt (warned). Never throws. */
export function readPartitionMetadata(fs: FileSystem, path: string, logger?: Logger): PartitionMetadata | null {
  return loadHint<PartitionMetadata | null>(fs, path, null, parsePartitionMetadata, logger);
}

// ---- meta.properties ---------------------------------------------------------------------------

/**
 * Formats `meta.properties` as java properties. Java's `Properties.store` would add a date comment;
 * we write a fixed comment instead (actors have no wall clock here) — Kafka ignores comments.
 */
export function formatMetaProperties(props: MetaProperties): string {
  let text = `#\n#Written by Skiff\nversion=${props.version}\nnode.id=${props.nodeId}\ncluster.id=${props.clusterId}\n`;
  if (props.directoryId !== undefined) text += `directory.id=${props.directoryId}\n`;
  return text;
}

/**
 * Parses `meta.properties`: `key=value` or `key:value` lines, `#`/`!` comments (java properties
 * without escapes or continuation lines, which Kafka's values never need). Requires version=1, a
 * non-negative node.id and a non-empty cluster.id; returns the properties or a reason.
 */
export function parseMetaProperties(text: string): MetaProperties | string {
  const map = new Map<string, string>();
  for (const raw of lines(text)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const sep = line.search(/[=:]/);
    if (sep <= 0) return `bad line '${raw}'`;
    map.set(line.slice(0, sep).trim(), line.slice(sep + 1).trim());
  }
  if (map.get('version') !== '1') return `unsupported version '${map.get('version')}'`;
  const nodeId = parseNonNegativeInt(map.get('node.id') ?? '');
  if (nodeId === null) return `bad node.id '${map.get('node.id')}'`;
  const clusterId = map.get('cluster.id') ?? '';
  if (clusterId === '') return 'missing cluster.id';
  const directoryId = map.get('directory.id');
  if (directoryId !== undefined && uuidFromString(directoryId) === null) return `bad directory.id '${directoryId}'`;
  return directoryId === undefined ? { version: 1, nodeId, clusterId } : { version: 1, nodeId, clusterId, directoryId };
}

/** Atomically writes `meta.properties`. Throws on I/O errors. */
export function writeMetaProperties(fs: FileSystem, path: string, props: MetaProperties): void {
  const check = parseMetaProperties(formatMetaProperties(props));
  if (typeof check === 'string') throw new RangeError(`bad meta.properties: ${check}`);
  fs.writeFileAtomic(path, Buffer.from(formatMetaProperties(props), 'utf8'));
}

/** Reads `meta.properties`; null when missing or corrupt (warned). Never throws. */
export function readMetaProperties(fs: FileSystem, path: string, logger?: Logger): MetaProperties | null {
  return loadHint<MetaProperties | null>(fs, path, null, parseMetaProperties, logger);
}
