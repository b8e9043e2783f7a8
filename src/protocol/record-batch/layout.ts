/**
 * Record batch v2 (magic 2) header layout, from the protocol guide "Record Batch" section and
 * DefaultRecordBatch. All integers big-endian. Byte positions are from the start of the batch.
 *
 * ```
 *  0  baseOffset            int64   written by the broker
 *  8  batchLength           int32   bytes after this field (batch = 12 + batchLength bytes)
 * 12  partitionLeaderEpoch  int32   written by the broker (outside the CRC)
 * 16  magic                 int8    = 2
 * 17  crc                   uint32  CRC-32C of bytes [21, end)
 * 21  attributes            int16   bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control
 * 23  lastOffsetDelta       int32
 * 27  baseTimestamp         int64
 * 35  maxTimestamp          int64
 * 43  producerId            int64
 * 51  producerEpoch         int16
 * 53  baseSequence          int32
 * 57  recordsCount          int32
 * 61  records...
 * ```
 */
import assert from 'node:assert/strict';

export const BASE_OFFSET = 0;
export const BATCH_LENGTH = 8;
export const PARTITION_LEADER_EPOCH = 12;
export const MAGIC = 16;
export const CRC = 17;
export const ATTRIBUTES = 21;
export const LAST_OFFSET_DELTA = 23;
export const BASE_TIMESTAMP = 27;
export const MAX_TIMESTAMP = 35;
export const PRODUCER_ID = 43;
export const PRODUCER_EPOCH = 51;
export const BASE_SEQUENCE = 53;
export const RECORDS_COUNT = 57;
export const RECORDS = 61;

/** Bytes before batchLength's payload: baseOffset + batchLength (Kafka's LOG_OVERHEAD). */
export const LOG_OVERHEAD = 12;
/** Size of the v2 batch header (Kafka's RECORD_BATCH_OVERHEAD). */
export const RECORD_BATCH_OVERHEAD = 61;
/** The only magic Skiff stores. */
export const CURRENT_MAGIC = 2;

/** attributes bits. */
export const COMPRESSION_CODEC_MASK = 0x07;
export const TIMESTAMP_TYPE_MASK = 0x08;
export const TRANSACTIONAL_FLAG_MASK = 0x10;
export const CONTROL_FLAG_MASK = 0x20;

// How the constants relate, checked once when the module loads (TigerBeetle's comptime asserts):
// each field starts where the one before it ends, so editing one offset cannot silently shift or
// overlap another, and the derived sizes agree with the diagram.
assert.equal(BATCH_LENGTH, BASE_OFFSET + 8, 'batchLength follows the int64 baseOffset');
assert.equal(LOG_OVERHEAD, BATCH_LENGTH + 4, 'LOG_OVERHEAD is baseOffset + batchLength');
assert.equal(PARTITION_LEADER_EPOCH, LOG_OVERHEAD, 'batchLength counts from partitionLeaderEpoch on');
assert.equal(MAGIC, PARTITION_LEADER_EPOCH + 4, 'magic follows the int32 partitionLeaderEpoch');
assert.equal(CRC, MAGIC + 1, 'crc follows the int8 magic');
assert.equal(ATTRIBUTES, CRC + 4, 'the CRC-32C covers everything after its own uint32, from attributes on');
assert.equal(LAST_OFFSET_DELTA, ATTRIBUTES + 2, 'lastOffsetDelta follows the int16 attributes');
assert.equal(BASE_TIMESTAMP, LAST_OFFSET_DELTA + 4, 'baseTimestamp follows the int32 lastOffsetDelta');
assert.equal(MAX_TIMESTAMP, BASE_TIMESTAMP + 8, 'maxTimestamp follows the int64 baseTimestamp');
assert.equal(PRODUCER_ID, MAX_TIMESTAMP + 8, 'producerId follows the int64 maxTimestamp');
assert.equal(PRODUCER_EPOCH, PRODUCER_ID + 8, 'producerEpoch follows the int64 producerId');
assert.equal(BASE_SEQUENCE, PRODUCER_EPOCH + 2, 'baseSequence follows the int16 producerEpoch');
assert.equal(RECORDS_COUNT, BASE_SEQUENCE + 4, 'recordsCount follows the int32 baseSequence');
assert.equal(RECORDS, RECORDS_COUNT + 4, 'records follow the int32 recordsCount');
assert.equal(RECORDS, RECORD_BATCH_OVERHEAD, 'the header ends where the records begin');
// Masks that share no bit add up to their union: codec (bits 0-2), timestamp type, transactional, control.
assert.equal(
  COMPRESSION_CODEC_MASK + TIMESTAMP_TYPE_MASK + TRANSACTIONAL_FLAG_MASK + CONTROL_FLAG_MASK,
  COMPRESSION_CODEC_MASK | TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK,
  'the attributes masks overlap',
);
