/**
 * Idempotent-producer state of one partition (KIP-98, Kafka's ProducerStateManager): per producer id
 * the current epoch and the last five appended batches' sequence ranges, so a retried batch is
 * recognised as a duplicate (answered with its original offset and max timestamp, as Kafka's
 * BatchMetadata does) and a gap is refused.
 *
 * Errors returned (Kafka's): INVALID_PRODUCER_EPOCH for an epoch older than the producer's current
 * one, OUT_OF_ORDER_SEQUENCE_NUMBER for a sequence that does not follow the last one. An unknown
 * producer id (new, or state lost in a restart: it is kept in memory only) is accepted at any
 * sequence, as Kafka does since KIP-360.
 */
import { ErrorCode } from '../protocol/error-codes';

/** Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN. */
export const BATCHES_TO_RETAIN = 5;

/** An appended batch: its sequence range, base offset, and max timestamp (ms, as stored: after LogAppendTime stamping). */
interface BatchMetadata {
  firstSeq: number;
  lastSeq: number;
  baseOffset: number;
  maxTimestampMs: number;
}
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

export class ProducerStateTable {
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

  /** Records an appended batch (after {@link check} said append); `maxTimestampMs` is the batch's stored maxTimestamp. */
  update(
    producerId: number,
    epoch: number,
    firstSeq: number,
    lastSeq: number,
    baseOffset: number,
    maxTimestampMs: number,
  ): void {
    let entry = this.producers.get(producerId);
    if (!entry || entry.epoch !== epoch) {
      entry = { epoch, batches: [] };
      this.producers.set(producerId, entry);
    }
    entry.batches.push({ firstSeq, lastSeq, baseOffset, maxTimestampMs });
    if (entry.batches.length > BATCHES_TO_RETAIN) entry.batches.shift();
  }

  /**
   * The log was cut back to `logEndOffset` (Kafka's UnifiedLog.truncateTo -> rebuildProducerState):
   * forgets the batches at or past it and the producers left with none, keeps the rest, so a retry
   * of a kept batch is still answered as a duplicate.
   */
  truncateTo(logEndOffset: number): void {
    for (const [producerId, entry] of this.producers) {
      entry.batches = entry.batches.filter((b) => b.baseOffset < logEndOffset);
      if (entry.batches.length === 0) this.producers.delete(producerId);
    }
  }

  /** Forgets everything. */
  clear(): void {
    this.producers.clear();
  }
}
