/**
 * Idempotent-producer state snapshots (Kafka's ProducerStateManager snapshot files): `<offset>.snapshot`
 * in the partition directory, named by the 20-digit offset the state is valid at (every batch below
 * it counted, none at or above). Written when a segment rolls (named by the new segment's base
 * offset; fsynced with the log's next flush, as Kafka's roll takes its snapshot unsynced and flushes
 * it with the segment) and on a clean shutdown (named by the LEO; temp file + fsync + rename +
 * directory fsync); deleted with their segment by retention, and above the new LEO by a truncation. On start
 * the newest snapshot at or below the LEO is loaded and the log after it replayed from batch headers
 * (the replica's producer-state.ts does that), so a restart still knows each producer's last batches.
 *
 * Our own format, with Kafka's fields (ProducerStateManager's PRODUCER_SNAPSHOT_VERSION 1 schema:
 * ProducerId, ProducerEpoch, LastSequence, LastOffset, OffsetDelta, Timestamp, CoordinatorEpoch,
 * CurrentTxnFirstOffset) widened to keep every retained batch (Kafka keeps only the last one in the
 * file, so after a restart it recognises a retry of the last batch only; we keep up to five, as in
 * memory). Big-endian:
 *
 * ```
 *  0  int16   version (1)
 *  2  uint32  CRC-32C of bytes [6, end)
 *  6  int32   producer count
 *     per producer:
 *       int64 producerId   int16 producerEpoch   int32 coordinatorEpoch (-1: no transactions)
 *       int64 lastTimestampMs (the last batch's maxTimestamp)   int16 batch count (>= 1)
 *       per batch, oldest first:
 *         int32 firstSeq   int32 lastSeq   int64 baseOffset   int32 lastOffsetDelta   int64 maxTimestampMs
 * ```
 *
 * A file that does not parse or whose CRC does not match is an operating error (a torn or damaged
 * disk): the reader says why, the caller deletes it and falls back to an older snapshot or the log.
 */
import { posix } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import type { FileSystem } from '../io/file-system';

/** The file name suffix (Kafka's LogFileUtils.PRODUCER_SNAPSHOT_FILE_SUFFIX). */
export const SNAPSHOT_FILE_SUFFIX = '.snapshot';
/** The format version this module writes and reads. */
export const PRODUCER_SNAPSHOT_VERSION = 1;
/** Kafka's RecordBatch.NO_PARTITION_LEADER_EPOCH-like sentinel for "no transaction coordinator". */
export const NO_COORDINATOR_EPOCH = -1;

const HEADER_BYTES = 2 + 4 + 4;
const PRODUCER_BYTES = 8 + 2 + 4 + 8 + 2;
const BATCH_BYTES = 4 + 4 + 8 + 4 + 8;

/** One retained batch of a producer: its sequence range, offsets and max timestamp (ms, as stored). */
export interface ProducerBatchMetadata {
  firstSeq: number;
  lastSeq: number;
  baseOffset: number;
  /** lastOffset - baseOffset (the batch's lastOffsetDelta). */
  lastOffsetDelta: number;
  maxTimestampMs: number;
}

/** One producer's state as snapshotted (Kafka's ProducerStateEntry). */
export interface ProducerSnapshotEntry {
  producerId: number;
  producerEpoch: number;
  /** The transaction coordinator's epoch; always {@link NO_COORDINATOR_EPOCH} (no transactions). */
  coordinatorEpoch: number;
  /** The last batch's maxTimestamp (ms since the epoch): Kafka's lastTimestamp, for producer id expiration. */
  lastTimestampMs: number;
  /** Retained batches, oldest first (at least one). */
  batches: ProducerBatchMetadata[];
}

/** What a log asks of the producer state it snapshots: its entries as of the LEO. */
export interface ProducerStateSource {
  snapshotEntries(): ProducerSnapshotEntry[];
}

/** `<offset, 20 digits>.snapshot`. */
export function snapshotFileName(offset: number): string {
  return `${String(offset).padStart(20, '0')}${SNAPSHOT_FILE_SUFFIX}`;
}

/** The offset a snapshot file name stands for, or null when `name` is not one. */
export function parseSnapshotFileName(name: string): number | null {
  const m = /^(\d{20})\.snapshot$/.exec(name);
  if (m === null) return null;
  const offset = Number(m[1]);
  return Number.isSafeInteger(offset) ? offset : null;
}

/** Offsets of the snapshot files in `dir`, ascending. */
export function listSnapshotOffsets(fs: FileSystem, dir: string): number[] {
  const offsets: number[] = [];
  for (const name of fs.readdir(dir)) {
    const offset = parseSnapshotFileName(name);
    if (offset !== null) offsets.push(offset);
  }
  return offsets.sort((a, b) => a - b);
}

/** Encodes `entries` in the format of the module doc. */
export function encodeProducerSnapshot(entries: readonly ProducerSnapshotEntry[]): Buffer {
  let size = HEADER_BYTES;
  for (const e of entries) size += PRODUCER_BYTES + BATCH_BYTES * e.batches.length;
  const buf = Buffer.alloc(size);
  buf.writeInt16BE(PRODUCER_SNAPSHOT_VERSION, 0);
  buf.writeInt32BE(entries.length, 6);
  let at = HEADER_BYTES;
  for (const e of entries) {
    if (e.batches.length === 0 || e.batches.length > 0x7fff)
      throw new RangeError(`producer ${e.producerId}: ${e.batches.length} batches`);
    buf.writeBigInt64BE(BigInt(e.producerId), at);
    buf.writeInt16BE(e.producerEpoch, at + 8);
    buf.writeInt32BE(e.coordinatorEpoch, at + 10);
    buf.writeBigInt64BE(BigInt(e.lastTimestampMs), at + 14);
    buf.writeInt16BE(e.batches.length, at + 22);
    at += PRODUCER_BYTES;
    for (const b of e.batches) {
      buf.writeInt32BE(b.firstSeq, at);
      buf.writeInt32BE(b.lastSeq, at + 4);
      buf.writeBigInt64BE(BigInt(b.baseOffset), at + 8);
      buf.writeInt32BE(b.lastOffsetDelta, at + 16);
      buf.writeBigInt64BE(BigInt(b.maxTimestampMs), at + 20);
      at += BATCH_BYTES;
    }
  }
  buf.writeUInt32BE(crc32c(buf.subarray(6)) >>> 0, 2);
  return buf;
}

/**
 * Decodes a snapshot file's bytes: the entries, or a reason string when the bytes are not a whole
 * snapshot of this version with a matching CRC-32C (every length checked before it is read).
 */
export function decodeProducerSnapshot(buf: Buffer): ProducerSnapshotEntry[] | string {
  if (buf.length < HEADER_BYTES) return `short snapshot: ${buf.length} bytes`;
  const version = buf.readInt16BE(0);
  if (version !== PRODUCER_SNAPSHOT_VERSION) return `unknown snapshot version ${version}`;
  const crc = buf.readUInt32BE(2);
  const actual = crc32c(buf.subarray(6)) >>> 0;
  if (crc !== actual) return `CRC-32C mismatch: stored ${crc}, computed ${actual}`;
  const count = buf.readInt32BE(6);
  if (count < 0) return `negative producer count ${count}`;
  const entries: ProducerSnapshotEntry[] = [];
  let at = HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (at + PRODUCER_BYTES > buf.length) return `producer ${i} past the end (${buf.length} bytes)`;
    const batchCount = buf.readInt16BE(at + 22);
    if (batchCount <= 0) return `producer ${i}: ${batchCount} batches`;
    const entry: ProducerSnapshotEntry = {
      producerId: Number(buf.readBigInt64BE(at)),
      producerEpoch: buf.readInt16BE(at + 8),
      coordinatorEpoch: buf.readInt32BE(at + 10),
      lastTimestampMs: Number(buf.readBigInt64BE(at + 14)),
      batches: [],
    };
    at += PRODUCER_BYTES;
    if (at + batchCount * BATCH_BYTES > buf.length) return `producer ${i}: batches past the end`;
    for (let k = 0; k < batchCount; k++) {
      entry.batches.push({
        firstSeq: buf.readInt32BE(at),
        lastSeq: buf.readInt32BE(at + 4),
        baseOffset: Number(buf.readBigInt64BE(at + 8)),
        lastOffsetDelta: buf.readInt32BE(at + 16),
        maxTimestampMs: Number(buf.readBigInt64BE(at + 20)),
      });
      at += BATCH_BYTES;
    }
    entries.push(entry);
  }
  if (at !== buf.length) return `${buf.length - at} trailing bytes`;
  return entries;
}

/** Writes `<dir>/<offset>.snapshot` durably (FileSystem.writeFileAtomic: temp file, fsync, rename, directory fsync). */
export function writeProducerSnapshot(
  fs: FileSystem,
  dir: string,
  offset: number,
  entries: readonly ProducerSnapshotEntry[],
): void {
  fs.writeFileAtomic(posix.join(dir, snapshotFileName(offset)), encodeProducerSnapshot(entries));
}

/**
 * Writes `<dir>/<offset>.snapshot` without an fsync (Kafka's takeSnapshot(sync = false) on a roll: the
 * file is fsynced by the log's next flush, {@link syncSnapshotFile}). A crash before that may leave it
 * missing, empty or torn, which its CRC-32C tells on load. Returns its path.
 */
export function writeProducerSnapshotUnsynced(
  fs: FileSystem,
  dir: string,
  offset: number,
  entries: readonly ProducerSnapshotEntry[],
): string {
  const path = posix.join(dir, snapshotFileName(offset));
  const data = encodeProducerSnapshot(entries);
  const handle = fs.open(path, 'rw');
  try {
    handle.truncate(0);
    handle.write(data, 0);
  } catch (error) {
    handle.close();
    try {
      fs.unlink(path);
    } catch {
      // A leftover is harmless: an empty or partial file fails its CRC-32C on load.
    }
    throw error;
  }
  handle.close();
  return path;
}

/** fsyncs a snapshot written by {@link writeProducerSnapshotUnsynced}; a file deleted meanwhile is skipped. */
export function syncSnapshotFile(fs: FileSystem, path: string): void {
  if (!fs.exists(path)) return;
  const handle = fs.open(path, 'rw');
  try {
    handle.sync();
  } finally {
    handle.close();
  }
}

/** Reads `<dir>/<offset>.snapshot`: its entries, or why it cannot be used. Throws on I/O errors. */
export function readProducerSnapshot(fs: FileSystem, dir: string, offset: number): ProducerSnapshotEntry[] | string {
  return decodeProducerSnapshot(fs.readFile(posix.join(dir, snapshotFileName(offset))));
}

/**
 * Deletes the snapshots whose offset satisfies `doomed`, then fsyncs the directory when one went: a
 * snapshot of a truncated suffix must not come back after a crash once the log has grown past it
 * again with other batches. Returns the offsets deleted.
 */
export function deleteSnapshots(fs: FileSystem, dir: string, doomed: (offset: number) => boolean): number[] {
  const deleted: number[] = [];
  for (const offset of listSnapshotOffsets(fs, dir)) {
    if (!doomed(offset)) continue;
    fs.unlink(posix.join(dir, snapshotFileName(offset)));
    deleted.push(offset);
  }
  if (deleted.length > 0) fs.syncDir(dir);
  return deleted;
}
