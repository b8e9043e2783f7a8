/**
 * A batch rewritten with another codec, as Kafka's broker rewrites a produced batch whose codec
 * differs from the topic's `compression.type` (LogValidator: the records are rebuilt, not copied,
 * when the source and target codecs differ). Kept: every record (offset delta, timestamp, key,
 * value, headers), the producer id, epoch and base sequence, the transactional and timestamp-type
 * bits, baseOffset and partitionLeaderEpoch (the append overwrites both). The CRC-32C is new.
 *
 * ```
 * [ header | codec A records ]  --decode-->  records  --build-->  [ header' | codec B records ]
 * ```
 */
import { buildRecordBatch } from './builder';
import { compress, type CompressionCodecId } from './compression';
import { decodeBatch } from './decode';
import * as L from './layout';
import { writeCrc } from './view';

/**
 * Rewrites the uncompressed v2 batch `plain` with its records section compressed by `codec` at
 * `level` (see compression.ts `compress`). Returns a new Buffer; `plain` is left as it is.
 */
export function compressBuiltBatch(plain: Buffer, codec: CompressionCodecId, level?: number): Buffer {
  const compressed = compress(codec, plain.subarray(L.RECORDS), level);
  const batch = Buffer.allocUnsafe(L.RECORDS + compressed.length);
  plain.copy(batch, 0, 0, L.RECORDS);
  compressed.copy(batch, L.RECORDS);
  batch.writeInt32BE(batch.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
  batch.writeInt16BE((plain.readInt16BE(L.ATTRIBUTES) & ~L.COMPRESSION_CODEC_MASK) | codec, L.ATTRIBUTES);
  writeCrc(batch, 0, batch.length);
  return batch;
}

/**
 * The v2 batch `batch` (one whole batch, CRC already checked) with its records compressed by
 * `codec` (0: uncompressed) at `level`. Returns `batch` itself when it already uses `codec`.
 * Throws ProtocolError when the records cannot be decoded (a corrupt compressed section).
 */
export function recompressBatch(batch: Buffer, codec: CompressionCodecId, level?: number): Buffer {
  const attributes = batch.readInt16BE(L.ATTRIBUTES);
  if ((attributes & L.COMPRESSION_CODEC_MASK) === codec) return batch;
  const decoded = decodeBatch(batch);
  const plain = buildRecordBatch(
    decoded.records.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp })),
    {
      baseOffset: decoded.baseOffset,
      partitionLeaderEpoch: decoded.partitionLeaderEpoch,
      producerId: decoded.producerId,
      producerEpoch: decoded.producerEpoch,
      baseSequence: decoded.baseSequence,
      baseTimestamp: decoded.baseTimestamp,
      isTransactional: (attributes & L.TRANSACTIONAL_FLAG_MASK) !== 0,
      isControl: (attributes & L.CONTROL_FLAG_MASK) !== 0,
      logAppendTime: (attributes & L.TIMESTAMP_TYPE_MASK) !== 0,
    },
  );
  return codec === 0 ? plain : compressBuiltBatch(plain, codec, level);
}
