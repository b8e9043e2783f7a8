/**
 * Compressed record batches for the client: builds a v2 batch whose records section is compressed
 * with one of Kafka's codecs, and decodes record sets whose batches may be compressed.
 *
 * builder.ts builds uncompressed batches only; here the records section
 * (bytes [61, end) of an uncompressed batch, layout.ts) is compressed as a whole and put back
 * behind the same header, with the codec in attributes bits 0-2, batchLength and the CRC-32C fixed
 * (DefaultRecordBatch / MemoryRecordsBuilder do the same in Kafka's Java client):
 * ```
 * [ 61-byte header | records... ]  ->  [ 61-byte header (codec, length, crc) | compress(records...) ]
 * ```
 */
import { buildRecordBatch, type BuildBatchOptions, type BuildRecord } from '../protocol/record-batch/builder';
import type { CompressionCodecId } from '../protocol/record-batch/compression';
import { compressBuiltBatch } from '../protocol/record-batch/recompress';

/** Options of {@link buildBatch}: builder.ts's, plus the codec (default 0, none). */
export interface BuildCompressedBatchOptions extends BuildBatchOptions {
  compression?: CompressionCodecId;
}

/**
 * Builds one v2 batch of `records` (at least one), compressed with `options.compression`, with a
 * valid CRC-32C. Returns a new Buffer of exactly the batch's size. Throws RangeError on an empty
 * record list or an unknown codec.
 */
export function buildBatch(records: readonly BuildRecord[], options: BuildCompressedBatchOptions = {}): Buffer {
  const plain = buildRecordBatch(records, options);
  const codec = options.compression ?? 0;
  if (codec === 0) return plain;
  return compressBatch(plain, codec);
}

/**
 * Rewrites the uncompressed v2 batch `plain` with its records section compressed by `codec`.
 * Returns a new Buffer; `plain` is left as it is.
 */
export function compressBatch(plain: Buffer, codec: CompressionCodecId): Buffer {
  return compressBuiltBatch(plain, codec);
}

/** Decoding, compressed or not: decode.ts (one batch walker for the broker, tools and the client). */
export { decodeBatch, decodeBatches } from '../protocol/record-batch/decode';
