/**
 * The controller's metadata log: one file of framed msgpack records.
 *
 * ```
 * frame := length:uint32 (bytes of body) | crc:uint32 (CRC-32C of body) | body (msgpack MetadataRecord)
 * ```
 *
 * Each append is fsynced before the controller applies the record (metadata changes are rare, and a
 * record that took effect must survive a crash). Replay stops at the first torn or corrupt frame and
 * truncates the file there (the record was never applied: its append did not return).
 */
import { crc32c } from '@node-rs/crc32';
import { Packr } from 'msgpackr';
import type { FileHandle, FileSystem } from '../io/file-system';
import type { Logger } from '../io/logger';
import type { MetadataRecord } from './metadata-records';

const FRAME_HEADER_BYTES = 8;
const packr = new Packr({ useRecords: false });

export class MetadataLog {
  private constructor(
    private readonly file: FileHandle,
    private sizeBytes: number,
  ) {}

  /**
   * Opens (creating) `<dir>/metadata.log`, returns the log and every intact record in order.
   * A torn or corrupt tail is truncated and logged.
   */
  static open(fs: FileSystem, dir: string, logger: Logger): { log: MetadataLog; records: MetadataRecord[] } {
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
    while (position + FRAME_HEADER_BYTES <= size) {
      const length = bytes.readUInt32BE(position);
      const crc = bytes.readUInt32BE(position + 4);
      const end = position + FRAME_HEADER_BYTES + length;
      if (end > size) break;
      const body = bytes.subarray(position + FRAME_HEADER_BYTES, end);
      if (crc32c(body) >>> 0 !== crc) break;
      records.push(packr.unpack(body) as MetadataRecord);
      position = end;
    }
    if (position < size) {
      logger.warn(
        { path, validBytes: position, droppedBytes: size - position },
        'metadata log has a torn or corrupt tail; truncating',
      );
      file.truncate(position);
      file.sync();
    }
    return { log: new MetadataLog(file, position), records };
  }

  /** Appends records and fsyncs them; returns once they are durable. */
  append(records: MetadataRecord[]): void {
    const frames = records.map((record) => {
      const body = packr.pack(record);
      const frame = Buffer.alloc(FRAME_HEADER_BYTES + body.length);
      frame.writeUInt32BE(body.length, 0);
      frame.writeUInt32BE(crc32c(body) >>> 0, 4);
      body.copy(frame, FRAME_HEADER_BYTES);
      return frame;
    });
    const all = Buffer.concat(frames);
    this.file.write(all, this.sizeBytes);
    this.file.sync();
    this.sizeBytes += all.length;
  }

  close(): void {
    this.file.close();
  }
}
