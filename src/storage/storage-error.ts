/**
 * Storage errors as operating errors (STYLE.md habit 3): a full disk (ENOSPC), an I/O error (EIO) or
 * another errno from a file-system call is something the disk did, not a broken invariant, so the
 * broker answers Kafka's KAFKA_STORAGE_ERROR (56) for the partition and keeps serving, where Kafka
 * marks the log dir offline (LogDirFailureChannel) and Redpanda refuses the write. An
 * `AssertionError` (a programmer error) is never one of these and still crashes the actor.
 */

/** An errno-carrying error from node:fs or the memory file system (`code` such as `ENOSPC`). */
export function isIoError(error: unknown): error is NodeJS.ErrnoException {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    /^E[A-Z0-9]+$/.test((error as NodeJS.ErrnoException).code!) &&
    error.name !== 'AssertionError'
  );
}

/**
 * A log operation failed on the disk (Kafka's KafkaStorageException). `code` is the underlying
 * errno (`ENOSPC`, `EIO`, ..., as on node:fs errors, so callers match either alike); `cause` the
 * file-system error. What state the log is left in is the
 * throwing method's contract (an append leaves no partial batch; a failed fsync leaves the log
 * refusing writes until {@link Log.reestablishDurablePrefix} succeeds).
 */
export class KafkaStorageError extends Error {
  readonly code: string;

  constructor(message: string, cause: NodeJS.ErrnoException) {
    super(`${message}: ${cause.message}`, { cause });
    this.name = 'KafkaStorageError';
    this.code = cause.code ?? 'EIO';
  }
}

/** Wraps an I/O error in a {@link KafkaStorageError} (`what` names the operation); rethrows anything else unchanged. */
export function asStorageError(error: unknown, what: string): KafkaStorageError {
  if (error instanceof KafkaStorageError) return error;
  if (isIoError(error)) return new KafkaStorageError(what, error);
  throw error;
}
