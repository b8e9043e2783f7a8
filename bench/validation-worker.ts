/**
 * The piscina worker of bench/validation.ts: validates one batch's records off the calling thread,
 * to measure what handing validation to the CPU pool costs (the hop) against doing it in place.
 */
import { validateBatchRecords } from '../src/protocol/record-batch/validate';

/** Validates `batch` (structured-cloned bytes); returns the error code, or 0 when valid. */
export default function validate(input: { batch: Uint8Array; limit: number }): number {
  const batch = Buffer.from(input.batch.buffer, input.batch.byteOffset, input.batch.byteLength);
  return validateBatchRecords(batch, input.limit)?.errorCode ?? 0;
}
