/**
 * The controller's metadata log: one file of framed msgpack bodies, one frame per append.
 *
 * ```
 * frame := length:uint32 (bytes of body) | crc:uint32 (CRC-32C of body) | body
 * body  := msgpack MetadataRecord[]   (one append: the records of one change, in order)
 *        | msgpack MetadataRecord     (logs written before appends were batched: one record a frame)
 * ```
 *
 * Each append is fsynced before the controller applies its records (metadata changes are rare, and a
 * change that took effect must survive a crash). A change is atomic: a create-topics (topic record,
 * its partition records, its configs) is one frame, so a power loss before the fsync completed keeps
 * all of it or none of it, never a topic with part of its partitions. This is KRaft's rule: the
 * QuorumController hands an atomic `ControllerResult` (a create-topics is one) to
 * `RaftClient.scheduleAtomicAppend`, which writes it as one record batch under one CRC.
 *
 * Replay reads an array body as one change and an object body as a one-record change, so a log
 * written by an earlier version still loads unchanged (and new appends follow it in the new framing).
 *
 * Corruption, by where it is:
 * - The last frame torn or corrupt (no valid frame after it): that append never returned, so its
 *   change was never applied or answered. Replay drops the whole change and nothing before it, and
 *   truncates the file there (fsynced, logged). Kafka's log recovery does the same with an invalid
 *   batch at the end of a segment (`LogSegment.recover` truncates at the first invalid batch).
 * - A corrupt frame followed by at least one valid frame: not a torn tail but damage to changes that
 *   were committed and answered. `open` throws (the controller, and so the broker, fails to start)
 *   naming the file, the byte position and the fix. Kafka's `LogSegment.recover` would truncate here
 *   too, but a KRaft voter can afford that: the committed suffix it drops is fetched again from the
 *   quorum's leader. Skiff's controller is the only copy, so truncating would silently lose committed
 *   metadata; it follows instead the QuorumController's rule that a metadata log it cannot read is a
 *   fatal fault (KAFKA-15968: a `CorruptRecordException` from the log is fatal; KAFKA-14275: a record
 *   that fails to load terminates the controller process).
 *
 * An append the disk refuses (ENOSPC on the write, EIO, a failed fsync) throws a
 * {@link KafkaStorageError} and leaves no frame behind: the file is cut back to its size before the
 * append (a short write may have stored part of the frame; after a failed fsync the bytes past the
 * last good fsync are treated as never written) and that cut is fsynced, as Log.append undoes a
 * refused batch (src/storage/log-segment.ts). The change was not applied, so the controller answers
 * it with an error and the next append simply tries again. When even the cut fails, the log
 * remembers that its tail is dirty and the next append cuts it first (and fails if it still cannot).
 */
import { crc32c } from '@node-rs/crc32';
import { Packr } from 'msgpackr';
import type { FileHandle, FileSystem } from '../io/file-system';
import type { Logger } from '../io/logger';
import type { MetadataRecord } from './metadata-records';
import { asStorageError } from '../storage/storage-error';

const FRAME_HEADER_BYTES = 8;
const packr = new Packr({ useRecords: false });

/** The records of one intact frame and the byte position just past it. */
interface Frame {
  records: MetadataRecord[];
  endPosition: number;
}

/**
 * The frame starting at byte `position` of `bytes`, or undefined when there is none: too short for
 * its header or its body, a zero length (never written: an append holds at least one record, and a
 * zero-filled tail must not read as frames), a CRC-32C mismatch, or a body that is neither an array
 * of records nor one record.
 */
function readFrame(bytes: Buffer, position: number): Frame | undefined {
  if (position + FRAME_HEADER_BYTES > bytes.length) return undefined;
  const length = bytes.readUInt32BE(position);
  const crc = bytes.readUInt32BE(position + 4);
  const endPosition = position + FRAME_HEADER_BYTES + length;
  if (length === 0 || endPosition > bytes.length) return undefined;
  const body = bytes.subarray(position + FRAME_HEADER_BYTES, endPosition);
  if (crc32c(body) >>> 0 !== crc) return undefined;
  let decoded: unknown;
  try {
    decoded = packr.unpack(body);
  } catch {
    return undefined;
  }
  if (Array.isArray(decoded)) return { records: decoded as MetadataRecord[], endPosition };
  if (typeof decoded === 'object' && decoded !== null) return { records: [decoded as MetadataRecord], endPosition };
  return undefined;
}

/**
 * The byte position of the first intact frame starting after `position`, or undefined. Every byte is
 * a candidate: a corrupt length field leaves no way to know where the next frame starts.
 */
function nextFramePosition(bytes: Buffer, position: number): number | undefined {
  for (let candidate = position + 1; candidate + FRAME_HEADER_BYTES < bytes.length; candidate++) {
    if (readFrame(bytes, candidate) !== undefined) return candidate;
  }
  return undefined;
}

export class MetadataLog {
  /**
   * A refused append could not be cut back: the file may hold bytes past {@link sizeBytes} (a partial
   * frame, or one whose fsync failed). The next append cuts them first.
   */
  private tailDirty = false;

  private constructor(
    private readonly file: FileHandle,
    private readonly path: string,
    private readonly logger: Logger,
    /** Bytes of intact, fsynced frames: where the next frame goes. */
    private sizeBytes: number,
  ) {}

  /**
   * Opens (creating) `<dir>/metadata.log`, returns the log, every record of every intact change in
   * order, and the number of intact frames (changes): the metadata offset the replayed image reflects.
   * A torn or corrupt last frame is truncated and logged. Throws an Error naming the file, the
   * byte position and the fix when a corrupt frame has an intact frame after it (see module doc).
   */
  static open(
    fs: FileSystem,
    dir: string,
    logger: Logger,
  ): { log: MetadataLog; records: MetadataRecord[]; frames: number } {
    fs.mkdirp(dir);
    const path = `${dir}/metadata.log`;
    const created = !fs.exists(path);
    const file = fs.open(path, 'rw');
    if (created) fs.syncDir(dir);
    const size = file.size();
    const bytes = Buffer.alloc(size);
    if (size > 0) file.read(bytes, 0, size, 0);
    const records: MetadataRecord[] = [];
    let position = 0;
    let frames = 0;
    for (let frame = readFrame(bytes, 0); frame !== undefined; frame = readFrame(bytes, position)) {
      records.push(...frame.records);
      position = frame.endPosition;
      frames++;
    }
    if (position < size) {
      const intactAfter = nextFramePosition(bytes, position);
      if (intactAfter !== undefined) {
        file.close();
        throw new Error(
          `metadata log ${path} is corrupt at byte position ${position}, and an intact frame follows at byte ` +
            `position ${intactAfter}: committed cluster metadata is damaged, not a torn last write, so the ` +
            `controller will not start. Restore ${path} from a backup, or remove it to start a fresh cluster ` +
            `metadata (a new cluster id, no topics)`,
        );
      }
      logger.warn(
        { path, validBytes: position, droppedBytes: size - position },
        'metadata log has a torn or corrupt tail; truncating',
      );
      file.truncate(position);
      file.sync();
    }
    return { log: new MetadataLog(file, path, logger, position), records, frames };
  }

  /**
   * Appends the records of one change as one frame and fsyncs it; returns once it is durable. After a
   * power loss the change replays whole or not at all. An empty change writes nothing.
   *
   * Throws a {@link KafkaStorageError} (`code` ENOSPC, EIO, ...) when the disk refuses the write or
   * the fsync: the file is then cut back to where the frame started (see module doc), so the change
   * is not in the log and a later append goes where this one would have. Anything other than an I/O
   * error (a programmer error) is rethrown unchanged.
   */
  append(records: MetadataRecord[]): void {
    if (records.length === 0) return;
    if (this.tailDirty) this.cutBack();
    const body = packr.pack(records);
    const frame = Buffer.alloc(FRAME_HEADER_BYTES + body.length);
    frame.writeUInt32BE(body.length, 0);
    frame.writeUInt32BE(crc32c(body) >>> 0, 4);
    body.copy(frame, FRAME_HEADER_BYTES);
    try {
      this.file.write(frame, this.sizeBytes);
      this.file.sync();
    } catch (error) {
      const storageError = asStorageError(error, `appending ${frame.length} bytes to metadata log ${this.path}`);
      this.tailDirty = true;
      try {
        this.cutBack();
      } catch (undoError) {
        this.logger.error(
          { path: this.path, validBytes: this.sizeBytes, error: storageError.message, undoError: String(undoError) },
          'could not cut a refused metadata log append back; the next append tries again',
        );
      }
      throw storageError;
    }
    this.sizeBytes += frame.length;
  }

  /**
   * Cuts the file back to {@link sizeBytes} and fsyncs the cut, clearing {@link tailDirty}. Throws a
   * {@link KafkaStorageError} when the disk refuses (the tail stays dirty).
   */
  private cutBack(): void {
    try {
      this.file.truncate(this.sizeBytes);
      this.file.sync();
    } catch (error) {
      throw asStorageError(error, `cutting metadata log ${this.path} back to ${this.sizeBytes} bytes`);
    }
    this.tailDirty = false;
  }

  close(): void {
    this.file.close();
  }
}
