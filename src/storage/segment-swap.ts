/**
 * The file steps of replacing segments with a cleaned one, and their crash recovery (Kafka's
 * LogCleaner swap and LogLoader's handling of `.cleaned` / `.swap` files):
 *
 * ```
 *  1. write   <B>.log.cleaned        the group's retained batches; fsync
 *  2. rename  <B>.log.cleaned -> <B>.log.swap; fsync the directory   (the commit point)
 *  3. unlink  the group's other segments (<B2>.log, <B3>.log, ...) and <B>.index/.timeindex
 *     rename  <B>.log.swap -> <B>.log (replacing the old one); fsync the directory
 *  4. rebuild <B>.index and <B>.timeindex from the new .log; fsync them
 * ```
 *
 * A crash before 2 leaves the old segments (the `.cleaned` file is deleted on open). A crash at or
 * after 2 completes the swap on open ({@link recoverCleanerLeftovers}): segments whose base offset
 * lies in [B, last offset of the swap file] are deleted, the swap file becomes `<B>.log` and its
 * indexes are rebuilt by the usual recovery (they are missing). A member of the group whose records
 * were all removed may survive a crash in step 3 with its old bytes: still a valid log (older
 * versions of keys whose latest records lie later), cleaned again by the next pass.
 */
import { posix } from 'node:path';
import type { Logger } from '../io/logger';
import * as L from '../protocol/record-batch/layout';
import { checkBatch } from '../protocol/record-batch/view';
import type { FileSystem } from '../io/file-system';
import {
  INDEX_FILE_SUFFIX,
  LOG_FILE_SUFFIX,
  parseSegmentFileName,
  segmentFileName,
  TIME_INDEX_FILE_SUFFIX,
} from './log-segment';

/** Suffix of a cleaned segment being written (Kafka's CleanedFileSuffix). */
export const CLEANED_FILE_SUFFIX = '.cleaned';
/** Suffix of a cleaned segment ready to replace the old ones (Kafka's SwapFileSuffix). */
export const SWAP_FILE_SUFFIX = '.swap';

/** `<dir>/<B>.log` + `suffix`. */
export function cleanerFilePath(dir: string, baseOffset: number, suffix: string): string {
  return posix.join(dir, segmentFileName(baseOffset, LOG_FILE_SUFFIX) + suffix);
}

/**
 * Steps 1-2: writes `bytes` as `<B>.log.cleaned`, fsyncs it, renames it to `<B>.log.swap` and
 * fsyncs the directory. Returns the swap file's path. Throws on I/O errors (the caller's old
 * segments are untouched until then).
 */
export function writeSwapFile(fs: FileSystem, dir: string, baseOffset: number, bytes: Buffer): string {
  const cleaned = cleanerFilePath(dir, baseOffset, CLEANED_FILE_SUFFIX);
  const swap = cleanerFilePath(dir, baseOffset, SWAP_FILE_SUFFIX);
  if (fs.exists(cleaned)) fs.unlink(cleaned);
  const handle = fs.open(cleaned, 'rw');
  try {
    if (handle.size() > 0) handle.truncate(0);
    if (bytes.length > 0) handle.write(bytes, 0);
    handle.sync();
  } finally {
    handle.close();
  }
  fs.rename(cleaned, swap);
  fs.syncDir(dir);
  return swap;
}

/** Last offset of the whole valid batches at the start of `bytes`, or -1 if none. */
function lastOffsetOf(bytes: Buffer): number {
  let position = 0;
  let last = -1;
  for (;;) {
    const size = checkBatch(bytes, position, bytes.length - position);
    if (typeof size === 'string') return last;
    last = Number(bytes.readBigInt64BE(position + L.BASE_OFFSET)) + bytes.readInt32BE(position + L.LAST_OFFSET_DELTA);
    position += size;
  }
}

function unlinkIfExists(fs: FileSystem, path: string): void {
  if (fs.exists(path)) fs.unlink(path);
}

/**
 * The log loader's first pass (log-loader.ts, Kafka's LogLoader): deletes every `*.cleaned` file
 * and every `.index.swap`/`.timeindex.swap`, and completes each `<B>.log.swap` (module doc). Syncs
 * the directory when it changed anything. Returns the number of swaps completed.
 */
export function recoverCleanerLeftovers(fs: FileSystem, dir: string, logger: Logger): number {
  let changed = false;
  let completed = 0;
  const names = fs.readdir(dir);
  for (const name of names) {
    if (
      !name.endsWith(CLEANED_FILE_SUFFIX) &&
      !(name.endsWith(SWAP_FILE_SUFFIX) && !name.endsWith(LOG_FILE_SUFFIX + SWAP_FILE_SUFFIX))
    )
      continue;
    logger.info({ dir, file: name }, 'deleting an unfinished cleaner file');
    fs.unlink(posix.join(dir, name));
    changed = true;
  }
  const swaps = names
    .map((n) => /^(\d{20})\.log\.swap$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]));
  if (swaps.length > 0) {
    const bases = fs
      .readdir(dir)
      .map(parseSegmentFileName)
      .filter((p): p is { baseOffset: number; suffix: string } => p !== null && p.suffix === LOG_FILE_SUFFIX)
      .map((p) => p.baseOffset);
    for (const base of swaps) {
      const swap = cleanerFilePath(dir, base, SWAP_FILE_SUFFIX);
      const lastOffset = lastOffsetOf(fs.readFile(swap));
      const replaced = bases.filter((b) => b === base || (b > base && b <= lastOffset));
      for (const b of replaced) {
        if (b !== base) unlinkIfExists(fs, posix.join(dir, segmentFileName(b, LOG_FILE_SUFFIX)));
        unlinkIfExists(fs, posix.join(dir, segmentFileName(b, INDEX_FILE_SUFFIX)));
        unlinkIfExists(fs, posix.join(dir, segmentFileName(b, TIME_INDEX_FILE_SUFFIX)));
      }
      fs.rename(swap, posix.join(dir, segmentFileName(base, LOG_FILE_SUFFIX)));
      logger.warn(
        { dir, baseOffset: base, lastOffset, replacedSegments: replaced },
        'completed an interrupted segment swap of the log cleaner',
      );
      changed = true;
      completed++;
    }
  }
  if (changed) fs.syncDir(dir);
  return completed;
}
