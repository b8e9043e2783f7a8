/**
 * Idempotent-producer state of one partition (KIP-98, Kafka's ProducerStateManager): per producer id
 * the current epoch and the last five appended batches' sequence ranges, so a retried batch is
 * recognised as a duplicate (answered with its original offset and max timestamp, as Kafka's
 * BatchMetadata does) and a gap is refused.
 *
 * Leaders and followers build it alike from every batch they append (a follower from the leader's
 * batches, unchanged), so a new leader answers a retry of a batch its predecessor appended as a
 * duplicate. It survives restarts through the log's `<offset>.snapshot` files (storage's
 * producer-state-snapshot.ts: one per segment roll and one on a clean shutdown): {@link rebuildProducerState}
 * loads the newest snapshot at or below the LEO and replays the batch headers after it (Kafka's
 * UnifiedLog.rebuildProducerState), on start and after every truncation.
 *
 * Errors returned (Kafka's): INVALID_PRODUCER_EPOCH for an epoch older than the producer's current
 * one, OUT_OF_ORDER_SEQUENCE_NUMBER for a sequence that does not follow the last one. An unknown
 * producer id (new, or whose batches retention deleted) is accepted at any sequence, as Kafka does
 * since KIP-360.
 */
import assert from 'node:assert/strict';
import * as L from '../protocol/record-batch/layout';
import { ErrorCode } from '../protocol/error-codes';
import { NO_SEQUENCE } from '../protocol/sentinels';
import type { BatchHeader, Log } from '../storage/log';
import {
  NO_COORDINATOR_EPOCH,
  type ProducerBatchMetadata,
  type ProducerSnapshotEntry,
  type ProducerStateSource,
} from '../storage/producer-state-snapshot';

/** Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN. */
export const BATCHES_TO_RETAIN = 5;

/** An appended batch: its sequence range, offsets, and max timestamp (ms, as stored: after LogAppendTime stamping). */
type BatchMetadata = ProducerBatchMetadata;
interface ProducerEntry {
  epoch: number;
  batches: BatchMetadata[];
}

export type SequenceCheck =
  | { kind: 'append' }
  | { kind: 'duplicate'; baseOffset: number; maxTimestampMs: number }
  | { kind: 'error'; errorCode: number; errorMessage: string };

/** The next sequence after `seq` (sequences wrap from Int32.MAX to 0). */
function nextSeq(seq: number): number {
  return seq === 0x7fffffff ? 0 : seq + 1;
}

/** The last sequence of a batch of `lastOffsetDelta + 1` records from `firstSeq` (wrapping past Int32.MAX; NO_SEQUENCE stays). */
export function lastSequenceOf(firstSeq: number, lastOffsetDelta: number): number {
  return firstSeq < 0 ? NO_SEQUENCE : (firstSeq + lastOffsetDelta) % 0x80000000;
}

/** The per-producer table (module doc). Written by its replica actor only. */
export class ProducerStateTable implements ProducerStateSource {
  private readonly producers = new Map<number, ProducerEntry>();

  /** Checks a batch from `producerId` (>= 0) before append. */
  check(producerId: number, epoch: number, firstSeq: number, lastSeq: number): SequenceCheck {
    const entry = this.producers.get(producerId);
    if (!entry) return { kind: 'append' };
    if (epoch < entry.epoch) {
      return {
        kind: 'error',
        errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
        errorMessage: `Epoch ${epoch} of producer ${producerId} is older than the current epoch ${entry.epoch}`,
      };
    }
    if (epoch > entry.epoch) {
      return firstSeq === 0
        ? { kind: 'append' }
        : {
            kind: 'error',
            errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            errorMessage: `A new epoch ${epoch} of producer ${producerId} must start at sequence 0, got ${firstSeq}`,
          };
    }
    const duplicate = entry.batches.find((b) => b.firstSeq === firstSeq && b.lastSeq === lastSeq);
    if (duplicate)
      return { kind: 'duplicate', baseOffset: duplicate.baseOffset, maxTimestampMs: duplicate.maxTimestampMs };
    const last = entry.batches[entry.batches.length - 1];
    if (last && firstSeq !== nextSeq(last.lastSeq)) {
      return {
        kind: 'error',
        errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
        errorMessage: `Out of order sequence number for producer ${producerId}: ${firstSeq} (incoming seq. number), ${last.lastSeq} (current end sequence number)`,
      };
    }
    return { kind: 'append' };
  }

  /**
   * Records an appended batch (after {@link check} said append); `maxTimestampMs` is the batch's stored
   * maxTimestamp, `lastOffsetDelta` its lastOffsetDelta (default: the sequence range's length - 1).
   */
  update(
    producerId: number,
    epoch: number,
    firstSeq: number,
    lastSeq: number,
    baseOffset: number,
    maxTimestampMs: number,
    lastOffsetDelta: number = firstSeq < 0 ? 0 : (lastSeq - firstSeq + 0x80000000) % 0x80000000,
  ): void {
    let entry = this.producers.get(producerId);
    if (!entry || entry.epoch !== epoch) {
      entry = { epoch, batches: [] };
      this.producers.set(producerId, entry);
    }
    const last = entry.batches[entry.batches.length - 1];
    // Offsets only grow: a batch recorded twice (a replay overlapping its snapshot) is a programmer error.
    assert.ok(
      last === undefined || baseOffset > last.baseOffset,
      `producer ${producerId}: batch at ${baseOffset} after one at ${last?.baseOffset}`,
    );
    entry.batches.push({ firstSeq, lastSeq, baseOffset, lastOffsetDelta, maxTimestampMs });
    if (entry.batches.length > BATCHES_TO_RETAIN) entry.batches.shift();
  }

  /** Records an appended (or replayed) batch from its bytes (offsets written); ignores batches of no producer id. */
  updateFromBatch(batch: Buffer): void {
    const producerId = Number(batch.readBigInt64BE(L.PRODUCER_ID));
    if (producerId < 0) return;
    const firstSeq = batch.readInt32BE(L.BASE_SEQUENCE);
    const delta = batch.readInt32BE(L.LAST_OFFSET_DELTA);
    this.update(
      producerId,
      batch.readInt16BE(L.PRODUCER_EPOCH),
      firstSeq,
      lastSequenceOf(firstSeq, delta),
      Number(batch.readBigInt64BE(L.BASE_OFFSET)),
      Number(batch.readBigInt64BE(L.MAX_TIMESTAMP)),
      delta,
    );
  }

  /** Records a batch seen by a header scan of the log (the replay after a snapshot). */
  updateFromHeader(h: BatchHeader): void {
    if (h.producerId < 0) return;
    const delta = h.lastOffset - h.baseOffset;
    this.update(
      h.producerId,
      h.producerEpoch,
      h.baseSequence,
      lastSequenceOf(h.baseSequence, delta),
      h.baseOffset,
      h.maxTimestampMs,
      delta,
    );
  }

  /** The state as snapshot entries (producer-state-snapshot.ts), in producer id order, batches oldest first. */
  snapshotEntries(): ProducerSnapshotEntry[] {
    const entries: ProducerSnapshotEntry[] = [];
    for (const [producerId, entry] of [...this.producers].sort((a, b) => a[0] - b[0])) {
      const last = entry.batches[entry.batches.length - 1];
      if (last === undefined) continue;
      entries.push({
        producerId,
        producerEpoch: entry.epoch,
        coordinatorEpoch: NO_COORDINATOR_EPOCH,
        lastTimestampMs: last.maxTimestampMs,
        batches: entry.batches.map((b) => ({ ...b })),
      });
    }
    return entries;
  }

  /** Replaces the state with snapshot entries (the newest {@link BATCHES_TO_RETAIN} batches of each). */
  loadEntries(entries: readonly ProducerSnapshotEntry[]): void {
    this.producers.clear();
    for (const e of entries) {
      if (e.batches.length === 0) continue;
      this.producers.set(e.producerId, {
        epoch: e.producerEpoch,
        batches: e.batches.slice(-BATCHES_TO_RETAIN).map((b) => ({ ...b })),
      });
    }
  }

  /** Producers known (tests, describe). */
  get size(): number {
    return this.producers.size;
  }

  /** Forgets everything. */
  clear(): void {
    this.producers.clear();
  }
}

/** What {@link rebuildProducerState} did: the snapshot it started from (-1: none, the whole log replayed) and the batches replayed. */
export interface ProducerStateRebuild {
  snapshotOffset: number;
  replayedBatches: number;
}

/**
 * Kafka's UnifiedLog.rebuildProducerState (on start, and after a truncation): `table` becomes the
 * newest usable snapshot at or below the log's LEO (the log deletes those above it and damaged
 * ones) plus every batch after it, from batch headers only (producer id, epoch, base sequence,
 * lastOffsetDelta, maxTimestamp). Without a snapshot the whole log is replayed. A snapshot below
 * the log start offset is still a valid start: the batches between are gone, as in Kafka.
 */
export function rebuildProducerState(table: ProducerStateTable, log: Log): ProducerStateRebuild {
  const snapshot = log.loadProducerSnapshot();
  if (snapshot === null) table.clear();
  else table.loadEntries(snapshot.entries);
  let replayedBatches = 0;
  log.forEachBatchHeader(snapshot?.offset ?? 0, (h) => {
    if (h.producerId >= 0) {
      table.updateFromHeader(h);
      replayedBatches++;
    }
  });
  return { snapshotOffset: snapshot?.offset ?? -1, replayedBatches };
}
