/**
 * Errors the client raises. Kafka error codes from a response become {@link KafkaError} (with
 * Kafka's name, e.g. `TOPIC_ALREADY_EXISTS`); transport failures {@link ConnectionError}; an API
 * that this build or the broker cannot speak {@link UnsupportedApiError}.
 */
import { apiKeyName } from '../protocol/api-keys';
import { ErrorCode, errorName } from '../protocol/error-codes';

/** A Kafka error code returned by the broker, with the context it was returned for. */
export class KafkaError extends Error {
  /** Kafka's name for `code`, e.g. `UNKNOWN_TOPIC_OR_PARTITION`. */
  readonly errorName: string;

  constructor(
    readonly code: number,
    context: string,
    readonly brokerMessage: string | null = null,
  ) {
    super(`${context}: ${errorName(code)}${brokerMessage ? ` (${brokerMessage})` : ''}`);
    this.name = 'KafkaError';
    this.errorName = errorName(code);
  }

  /** Whether a retry after a metadata refresh may succeed (leadership moved, topic still being created). */
  get retriable(): boolean {
    return RETRIABLE.has(this.code);
  }
}

const RETRIABLE = new Set<number>([
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.NOT_CONTROLLER,
]);

/** The connection to a broker failed, closed or timed out; pending requests fail with this. */
export class ConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/**
 * An API this client cannot use: either Skiff's protocol layer has no schema table for it yet, or
 * the broker does not advertise it (or no version both sides speak).
 */
export class UnsupportedApiError extends Error {
  constructor(
    readonly apiKey: number,
    readonly reason: 'no-schema' | 'not-advertised' | 'no-common-version',
    detail = '',
  ) {
    const name = apiKeyName(apiKey);
    const why =
      reason === 'no-schema'
        ? `this build of Skiff has no ${name} schema (src/protocol/schema) yet`
        : reason === 'not-advertised'
          ? `the broker does not support ${name} (not in its ApiVersions)`
          : `no ${name} version is supported by both this client and the broker${detail ? ` (${detail})` : ''}`;
    super(why);
    this.name = 'UnsupportedApiError';
  }
}

/** Throws {@link KafkaError} when `code` is not NONE. */
export function throwIfError(code: number, context: string, brokerMessage: string | null = null): void {
  if (code !== ErrorCode.NONE) throw new KafkaError(code, context, brokerMessage);
}
