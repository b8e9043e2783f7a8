/**
 * Record-level decoding of one stored v2 batch, compressed or not: for tools, clients, the
 * time-index searches and the compacted-topic key check. Never used on the produce or fetch hot
 * paths of ordinary topics (those move batches as bytes).
 */
import { ProtocolError } from '../primitives';
import { decodeRecordBatch, type DecodedBatch } from './builder';
import { decompress as defaultDecompress } from './compression';
import * as L from './layout';

/** Decompresses a records section written with `codec` (attributes bits 0-2). */
export type Decompress = (codec: number, data: Buffer) => Buffer;

/**
 * Decodes the v2 batch at `buf[position..]`, decompressing its records section first when the
 * batch is compressed. The result keeps the batch's real `attributes`, `batchLength`, `crc` and
 * `sizeBytes` (the compressed ones); record keys and values view the decompressed bytes.
 * Throws ProtocolError on a malformed batch, or the codec's error on undecodable compressed data.
 */
export function decodeBatch(buf: Buffer, position = 0, decompress: Decompress = defaultDecompress): DecodedBatch {
  if (buf.length - position < L.RECORD_BATCH_OVERHEAD)
    throw new ProtocolError(`record batch of ${buf.length - position} bytes is shorter than its header`);
  const magic = buf.readInt8(position + L.MAGIC);
  if (magic !== L.CURRENT_MAGIC) throw new ProtocolError(`unsupported magic ${magic}`);
  const attributes = buf.readInt16BE(position + L.ATTRIBUTES);
  const codec = attributes & L.COMPRESSION_CODEC_MASK;
  if (codec === 0) return decodeRecordBatch(buf, position);
  const sizeBytes = L.LOG_OVERHEAD + buf.readInt32BE(position + L.BATCH_LENGTH);
  if (sizeBytes < L.RECORD_BATCH_OVERHEAD || sizeBytes > buf.length - position)
    throw new ProtocolError(`bad batchLength at byte ${position}`);
  const records = decompress(codec, buf.subarray(position + L.RECORDS, position + sizeBytes));
  const plain = Buffer.allocUnsafe(L.RECORDS + records.length);
  buf.copy(plain, 0, position, position + L.RECORDS);
  records.copy(plain, L.RECORDS);
  plain.writeInt32BE(plain.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
  plain.writeInt16BE(attributes & ~L.COMPRESSION_CODEC_MASK, L.ATTRIBUTES);
  const decoded = decodeRecordBatch(plain, 0);
  return {
    ...decoded,
    attributes,
    batchLength: sizeBytes - L.LOG_OVERHEAD,
    crc: buf.readUInt32BE(position + L.CRC),
    sizeBytes,
  };
}
