/**
 * Checks a client's Produce partition payload before append, without decoding records
 * (Kafka's ProduceRequest.validateRecords and LogValidator.validateBatch, header-level only, as
 * Redpanda does). Returns a Kafka error code and message, or null when the batch may be appended.
 */
import { ErrorCode } from '../protocol/error-codes';
import * as L from '../protocol/record-batch/layout';
import { checkBatch } from '../protocol/record-batch/view';
import { decodeBatch } from '../protocol/record-batch/decode';

export interface BatchRejection { errorCode: number; errorMessage: string }

/**
 * @param records the partition's `records` bytes from the Produce request (null when absent)
 * @param maxMessageBytes the topic's max.message.bytes (bytes of one batch, log overhead included)
 */
export function validateProducedBatch(records: Buffer | null, maxMessageBytes: number): BatchRejection | null {
  if (records === null || records.length === 0) {
    return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'Produce request has no record batch for this partition' };
  }
  if (records.length < L.RECORD_BATCH_OVERHEAD) {
    return { errorCode: ErrorCode.CORRUPT_MESSAGE, errorMessage: `Record batch of ${records.length} bytes is shorter than its header` };
  }
  const magic = records.readInt8(L.MAGIC);
  if (magic !== L.CURRENT_MAGIC) {
    return { errorCode: ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, errorMessage: `Produce requests with version 3+ must use record batch magic 2, got ${magic}` };
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
    return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'Produce requests with version 3+ must contain exactly one record batch per partition' };
  }
  if (records.readBigInt64BE(L.BASE_OFFSET) !== 0n) {
    return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'The baseOffset of a produced record batch must be 0' };
  }
  const count = records.readInt32BE(L.RECORDS_COUNT);
  const lastOffsetDelta = records.readInt32BE(L.LAST_OFFSET_DELTA);
  if (count <= 0 || lastOffsetDelta !== count - 1) {
    return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: `Record batch has recordsCount ${count} and lastOffsetDelta ${lastOffsetDelta}` };
  }
  const attributes = records.readInt16BE(L.ATTRIBUTES);
  if (attributes & L.CONTROL_FLAG_MASK) {
    return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'Clients may not write control batches' };
  }
  if ((attributes & L.COMPRESSION_CODEC_MASK) > 4) {
    return { errorCode: ErrorCode.CORRUPT_MESSAGE, errorMessage: `Unknown compression codec ${attributes & L.COMPRESSION_CODEC_MASK}` };
  }
  const producerId = records.readBigInt64BE(L.PRODUCER_ID);
  if (producerId >= 0n && records.readInt32BE(L.BASE_SEQUENCE) < 0) {
    return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'Idempotent record batch has a negative base sequence' };
  }
  return null;
}

/**
 * CreateTime bounds (KIP-937 / Kafka 4's message.timestamp.before.max.ms and after.max.ms): a batch
 * whose first record (baseTimestamp) or latest record (maxTimestamp) lies more than `beforeMaxMs`
 * before `nowMs` or more than `afterMaxMs` after it is refused with INVALID_TIMESTAMP. Checked on
 * the header only (no record decoding, as Redpanda does), so a record between the two that is
 * older than both is not seen. Returns a reason, or null.
 */
export function createTimeOutOfBounds(batch: Buffer, nowMs: number, beforeMaxMs: number, afterMaxMs: number): string | null {
  for (const timestamp of [Number(batch.readBigInt64BE(L.BASE_TIMESTAMP)), Number(batch.readBigInt64BE(L.MAX_TIMESTAMP))]) {
    if (timestamp < 0) continue;
    if (nowMs - timestamp > beforeMaxMs) {
      return `Timestamp ${timestamp} of a record is out of range: more than message.timestamp.before.max.ms=${beforeMaxMs} before the broker time ${nowMs}`;
    }
    if (timestamp - nowMs > afterMaxMs) {
      return `Timestamp ${timestamp} of a record is out of range: more than message.timestamp.after.max.ms=${afterMaxMs} after the broker time ${nowMs}`;
    }
  }
  return null;
}

/**
 * Compacted topics need a key on every record (Kafka's LogValidator: "Compacted topic cannot accept
 * message without key"). The one produce-path check that reads records: it decodes (and
 * decompresses) the batch, so it runs only for topics with cleanup.policy containing compact.
 * Returns a rejection or null.
 */
export function keylessRecordRejection(batch: Buffer, topicPartition: string): BatchRejection | null {
  let records;
  try {
    records = decodeBatch(batch).records;
  } catch (error) {
    return { errorCode: ErrorCode.CORRUPT_MESSAGE, errorMessage: `Record batch is corrupt: ${(error as Error).message}` };
  }
  if (records.some((r) => r.key === null)) {
    return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: `Compacted topic cannot accept message without key in topic partition ${topicPartition}.` };
  }
  return null;
}
