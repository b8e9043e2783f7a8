/**
 * Kafka's wire sentinels: the negative values a field carries instead of a real offset, epoch,
 * timestamp or id. Names and values are Kafka's; each names the Java class it comes from, so a
 * reader can find it there. Schema tables keep their own `default: -1` (the field's default as the
 * message JSON declares it); code that tests for or answers a sentinel uses these names.
 */

// ListOffsets special timestamps (ListOffsetsRequest.java; ListOffsetsRequest.json `Timestamp`).
// Each is accepted from the version noted; a timestamp >= 0 asks for the first offset at or after it.

/** The high watermark (the last stable offset under read_committed). Since v0. */
export const LATEST_TIMESTAMP = -1;
/** The log start offset. Since v0. */
export const EARLIEST_TIMESTAMP = -2;
/** The record with the largest timestamp (KIP-734). Since v7. */
export const MAX_TIMESTAMP = -3;
/** The local log start offset: what is not only in remote storage (KIP-405). Since v8. */
export const EARLIEST_LOCAL_TIMESTAMP = -4;
/** The last offset uploaded to remote storage (KIP-1005). Since v9. */
export const LATEST_TIERED_TIMESTAMP = -5;
/** The first offset not yet uploaded to remote storage (KIP-1023). Since v11. */
export const EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6;

// "No value" answers.

/** ListOffsetsResponse.UNKNOWN_OFFSET: no offset matches (e.g. no record at or after the timestamp). */
export const UNKNOWN_OFFSET = -1;
/** ListOffsetsResponse.UNKNOWN_TIMESTAMP: the answer carries no timestamp. */
export const UNKNOWN_TIMESTAMP = -1;
/**
 * RecordBatch.NO_PARTITION_LEADER_EPOCH: no leader epoch. Answered as ListOffsetsResponse.UNKNOWN_EPOCH
 * and OffsetsForLeaderEpoch's UNDEFINED_EPOCH; sent as a request's `currentLeaderEpoch` it means "do
 * not fence" (KIP-320).
 */
export const NO_PARTITION_LEADER_EPOCH = -1;
/** EpochEndOffset.UNDEFINED_EPOCH_OFFSET: the leader cannot give an end offset for the epoch asked. */
export const UNDEFINED_EPOCH_OFFSET = -1;
/**
 * ProduceResponse.INVALID_OFFSET: the base offset of a refused batch, and the log start offset of the
 * errors Kafka answers without consulting the log.
 */
export const INVALID_OFFSET = -1;
/** FetchResponse.INVALID_HIGH_WATERMARK / INVALID_LAST_STABLE_OFFSET / INVALID_LOG_START_OFFSET (a partition error). */
export const INVALID_HIGH_WATERMARK = -1;
export const INVALID_LAST_STABLE_OFFSET = -1;
export const INVALID_LOG_START_OFFSET = -1;
/** DeleteRecordsResponse.INVALID_LOW_WATERMARK: the low watermark of a refused DeleteRecords. */
export const INVALID_LOW_WATERMARK = -1;

// Request-side sentinels.

/** DeleteRecordsRequest.HIGH_WATERMARK: "delete up to the high watermark" as the requested offset (KIP-107). */
export const DELETE_RECORDS_HIGH_WATERMARK = -1;
/** FetchRequest/ListOffsetsRequest.CONSUMER_REPLICA_ID: the request comes from a consumer, not a follower. */
export const CONSUMER_REPLICA_ID = -1;

// Record batch header fields (RecordBatch.java), v2.

/** RecordBatch.NO_PRODUCER_ID: a batch from a producer that is not idempotent. Ids >= 0 are real. */
export const NO_PRODUCER_ID = -1;
/** RecordBatch.NO_PRODUCER_EPOCH: the producer epoch of such a batch. */
export const NO_PRODUCER_EPOCH = -1;
/** RecordBatch.NO_SEQUENCE: a batch without sequence numbers. */
export const NO_SEQUENCE = -1;
/** RecordBatch.NO_TIMESTAMP: no timestamp (also `logAppendTimeMs` of a produce answer on CreateTime topics). */
export const NO_TIMESTAMP = -1;
