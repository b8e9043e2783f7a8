/**
 * Checks a client's Produce partition payload before append: the batch header (Kafka's
 * ProduceRequest.validateRecords and LogValidator.validateBatch), then every record, decompressing
 * compressed batches with a bound (src/protocol/record-batch/validate.ts, as Kafka's record
 * iterators and LogValidator do). Returns a Kafka error code and message, or null when the batch
 * may be appended.
 */
import { ErrorCode } from '../protocol/error-codes';
import * as L from '../protocol/record-batch/layout';
import { checkBatch } from '../protocol/record-batch/view';
import { decodeBatch } from '../protocol/record-batch/decode';
import { codecFromName, type CompressionCodecId } from '../protocol/record-batch/compression';
import { recompressBatch } from '../protocol/record-batch/recompress';
import {
  DEFAULT_MAX_DECOMPRESSED_MESSAGE_BYTES,
  maxDecompressedBytesFor,
  validateBatchRecords,
} from '../protocol/record-batch/validate';

export interface BatchRejection {
  errorCode: number;
  errorMessage: string;
}

/**
 * The header checks, then the records' (validateBatchRecords). A malformed record is refused with
 * INVALID_RECORD and its index in `recordErrors` (Kafka's wording where Kafka has one), and so is a
 * record of a compressed batch longer than max.decompressed.message.bytes (Kafka's "Invalid record
 * size: N exceeds the configured maximum record size of M."); undecodable compressed data with
 * CORRUPT_MESSAGE, and data that would decompress past the section bound (64 x max.message.bytes,
 * at most 1 GiB: maxDecompressedBytesFor) with INVALID_RECORD, both without record errors. Header
 * faults carry no record errors either.
 * @param records the partition's `records` bytes from the Produce request (null when absent)
 * @param maxMessageBytes the topic's max.message.bytes (bytes of one batch, log overhead included)
 * @param maxDecompressedMessageBytes the topic's max.decompressed.message.bytes (bytes of one
 *   record's body once decompressed; Kafka's default, no bound, when omitted)
 */
export function validateProducedBatch(
  records: Buffer | null,
  maxMessageBytes: number,
  maxDecompressedMessageBytes = DEFAULT_MAX_DECOMPRESSED_MESSAGE_BYTES,
): RecordsRejection | null {
  const rejection = validateBatchHeader(records, maxMessageBytes);
  if (rejection !== null) return { ...rejection, recordErrors: [] };
  const fault = validateBatchRecords(records!, maxDecompressedBytesFor(maxMessageBytes), maxDecompressedMessageBytes);
  if (fault === null) return null;
  return {
    errorCode: fault.errorCode,
    errorMessage: fault.errorMessage,
    recordErrors:
      fault.batchIndex === null ? [] : [{ batchIndex: fault.batchIndex, batchIndexErrorMessage: fault.errorMessage }],
  };
}

/** The header-level checks of validateProducedBatch (what the produce path did before record validation). */
export function validateBatchHeader(records: Buffer | null, maxMessageBytes: number): BatchRejection | null {
  if (records === null || records.length === 0) {
    return {
      errorCode: ErrorCode.INVALID_RECORD,
      errorMessage: 'Produce request has no record batch for this partition',
    };
  }
  if (records.length < L.RECORD_BATCH_OVERHEAD) {
    return {
      errorCode: ErrorCode.CORRUPT_MESSAGE,
      errorMessage: `Record batch of ${records.length} bytes is shorter than its header`,
    };
  }
  const magic = records.readInt8(L.MAGIC);
  if (magic !== L.CURRENT_MAGIC) {
    // Kafka's ProduceRequest.validateRecords throws InvalidRecordException here: INVALID_RECORD.
    return {
      errorCode: ErrorCode.INVALID_RECORD,
      errorMessage: `Produce requests with version 3+ are only allowed to contain record batches with magic version 2, got ${magic}`,
    };
  }
  const declaredSize = L.LOG_OVERHEAD + records.readInt32BE(L.BATCH_LENGTH);
  if (declaredSize > maxMessageBytes || records.length > maxMessageBytes) {
    return {
      errorCode: ErrorCode.MESSAGE_TOO_LARGE,
      errorMessage: `The record batch is ${Math.max(declaredSize, records.length)} bytes, larger than max.message.bytes ${maxMessageBytes}`,
    };
  }
  const checked = checkBatch(records, 0, records.length);
  if (typeof checked === 'string') {
    return { errorCode: ErrorCode.CORRUPT_MESSAGE, errorMessage: `Record batch is corrupt: ${checked}` };
  }
  if (checked !== records.length) {
    return {
      errorCode: ErrorCode.INVALID_RECORD,
      errorMessage: 'Produce requests with version 3+ must contain exactly one record batch per partition',
    };
  }
  if (records.readBigInt64BE(L.BASE_OFFSET) !== 0n) {
    return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'The baseOffset of a produced record batch must be 0' };
  }
  const count = records.readInt32BE(L.RECORDS_COUNT);
  const lastOffsetDelta = records.readInt32BE(L.LAST_OFFSET_DELTA);
  if (count <= 0 || lastOffsetDelta !== count - 1) {
    return {
      errorCode: ErrorCode.INVALID_RECORD,
      errorMessage: `Record batch has recordsCount ${count} and lastOffsetDelta ${lastOffsetDelta}`,
    };
  }
  const attributes = records.readInt16BE(L.ATTRIBUTES);
  if (attributes & L.CONTROL_FLAG_MASK) {
    return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'Clients may not write control batches' };
  }
  if ((attributes & L.COMPRESSION_CODEC_MASK) > 4) {
    return {
      errorCode: ErrorCode.CORRUPT_MESSAGE,
      errorMessage: `Unknown compression codec ${attributes & L.COMPRESSION_CODEC_MASK}`,
    };
  }
  const producerId = records.readBigInt64BE(L.PRODUCER_ID);
  if (producerId >= 0n && records.readInt32BE(L.BASE_SEQUENCE) < 0) {
    return {
      errorCode: ErrorCode.INVALID_RECORD,
      errorMessage: 'Idempotent record batch has a negative base sequence',
    };
  }
  return null;
}

/**
 * One record a Produce partition refuses: its index in the batch (0-based) and why (Kafka's
 * RecordErrors in the Produce response, KIP-467: BatchIndex, BatchIndexErrorMessage).
 */
export interface RecordError {
  batchIndex: number;
  batchIndexErrorMessage: string | null;
}

/** A rejection that names the offending records (Kafka's RecordValidationException). */
export interface RecordsRejection extends BatchRejection {
  recordErrors: RecordError[];
}

/**
 * CreateTime bounds (KIP-937 / Kafka 4's message.timestamp.before.max.ms and after.max.ms): a batch
 * with a record more than `beforeMaxMs` before `nowMs` or more than `afterMaxMs` after it is refused
 * with INVALID_TIMESTAMP. The accepting path reads the header only (baseTimestamp = the first
 * record's, maxTimestamp = the latest; no record decoding, as Redpanda does), so a record between
 * the two that is older than both is not seen. Only a batch the header already refuses is decoded,
 * to name every offending record as Kafka's LogValidator does (record errors with batch index and
 * Kafka's wording; none when the batch cannot be decoded). Returns a rejection, or null.
 */
export function createTimeOutOfBounds(
  batch: Buffer,
  nowMs: number,
  beforeMaxMs: number,
  afterMaxMs: number,
): RecordsRejection | null {
  const outOfRange = (timestamp: number): boolean =>
    timestamp >= 0 && (nowMs - timestamp > beforeMaxMs || timestamp - nowMs > afterMaxMs);
  const headerTimestamps = [
    Number(batch.readBigInt64BE(L.BASE_TIMESTAMP)),
    Number(batch.readBigInt64BE(L.MAX_TIMESTAMP)),
  ];
  if (!headerTimestamps.some(outOfRange)) return null;
  const errorMessage = 'One or more records have been rejected due to invalid timestamp';
  let records;
  try {
    records = decodeBatch(batch).records;
  } catch {
    return { errorCode: ErrorCode.INVALID_TIMESTAMP, errorMessage, recordErrors: [] };
  }
  // Kafka's window, in its int64 arithmetic (a "never" bound, Long.MAX, wraps as it does there).
  const asLong = (ms: number): bigint => (ms >= Number.MAX_SAFE_INTEGER ? LONG_MAX : BigInt(ms));
  const window = `[${BigInt.asIntN(64, BigInt(nowMs) - asLong(beforeMaxMs))}, ${BigInt.asIntN(64, BigInt(nowMs) + asLong(afterMaxMs))}]`;
  const recordErrors: RecordError[] = [];
  records.forEach((r, batchIndex) => {
    if (outOfRange(r.timestamp)) {
      recordErrors.push({
        batchIndex,
        batchIndexErrorMessage: `Timestamp ${r.timestamp} of message with offset ${r.offset} is out of range. The timestamp should be within ${window}`,
      });
    }
  });
  return { errorCode: ErrorCode.INVALID_TIMESTAMP, errorMessage, recordErrors };
}

/** Kafka's Long.MAX_VALUE. */
const LONG_MAX = 9223372036854775807n;

/**
 * Compacted topics need a key on every record (Kafka's LogValidator: "Compacted topic cannot accept
 * message without key"). The one produce-path check that reads records: it decodes (and
 * decompresses) the batch, so it runs only for topics with cleanup.policy containing compact.
 * Returns a rejection naming every keyless record (INVALID_RECORD, record errors as Kafka's), a
 * CORRUPT_MESSAGE one when the batch cannot be decoded, or null.
 */
export function keylessRecordRejection(batch: Buffer, topicPartition: string): RecordsRejection | null {
  let records;
  try {
    records = decodeBatch(batch).records;
  } catch (error) {
    return {
      errorCode: ErrorCode.CORRUPT_MESSAGE,
      errorMessage: `Record batch is corrupt: ${(error as Error).message}`,
      recordErrors: [],
    };
  }
  const message = `Compacted topic cannot accept message without key in topic partition ${topicPartition}`;
  const recordErrors = records.flatMap((r, batchIndex): RecordError[] =>
    r.key === null ? [{ batchIndex, batchIndexErrorMessage: message }] : [],
  );
  if (recordErrors.length === 0) return null;
  // Kafka's summary of a RecordValidationException (the first three record errors).
  const shown = recordErrors
    .slice(0, 3)
    .map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.batchIndexErrorMessage}')`)
    .join(', ');
  return {
    errorCode: ErrorCode.INVALID_RECORD,
    errorMessage: `One or more records have been rejected due to ${recordErrors.length} record errors in total, and only showing the first three errors at most: [${shown}]`,
    recordErrors,
  };
}

/** What {@link toTopicCompression} needs of the topic's configuration. */
export interface TopicCompression {
  /** compression.type (topic-config.ts COMPRESSION_TYPES). */
  compressionType: string;
  compressionGzipLevel: number;
  compressionZstdLevel: number;
  /** max.message.bytes: the rewritten batch must fit too. */
  maxMessageBytes: number;
}

/**
 * The batch as the topic stores it: itself under compression.type=producer or when it already
 * uses the topic's codec, else rewritten with that codec (`uncompressed`: none) at the topic's
 * level (Kafka's LogValidator recompression; the one place Skiff's produce path re-encodes
 * records). Returns the batch to append, or a rejection: CORRUPT_MESSAGE when its records cannot
 * be decoded, MESSAGE_TOO_LARGE when the rewritten batch exceeds max.message.bytes.
 */
export function toTopicCompression(batch: Buffer, topic: TopicCompression): Buffer | BatchRejection {
  if (topic.compressionType === 'producer') return batch;
  const codec: CompressionCodecId = topic.compressionType === 'uncompressed' ? 0 : codecFromName(topic.compressionType);
  if ((batch.readInt16BE(L.ATTRIBUTES) & L.COMPRESSION_CODEC_MASK) === codec) return batch;
  const level =
    topic.compressionType === 'gzip'
      ? topic.compressionGzipLevel
      : topic.compressionType === 'zstd'
        ? topic.compressionZstdLevel
        : undefined;
  let rewritten: Buffer;
  try {
    rewritten = recompressBatch(batch, codec, level);
  } catch (error) {
    return {
      errorCode: ErrorCode.CORRUPT_MESSAGE,
      errorMessage: `Record batch is corrupt: ${(error as Error).message}`,
    };
  }
  if (rewritten.length > topic.maxMessageBytes) {
    return {
      errorCode: ErrorCode.MESSAGE_TOO_LARGE,
      errorMessage: `The record batch is ${rewritten.length} bytes once written as ${topic.compressionType}, larger than max.message.bytes ${topic.maxMessageBytes}`,
    };
  }
  return rewritten;
}
