/**
 * The error codes of a response, as the admin API's `skiff_request_errors_total` counts them
 * (Kafka's AbstractResponse.errorCounts, behind its ErrorsPerSec metric).
 */

/**
 * Counts the non-zero `errorCode` fields anywhere in a response body (record bytes are not walked).
 * Top-level and nested error codes alike, as Kafka's per-API errorCounts add them up.
 */
export function responseErrorCounts(response: unknown): Map<number, number> {
  const counts = new Map<number, number>();
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return;
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    const fields = value as Record<string, unknown>;
    for (const key in fields) {
      const field = fields[key];
      if (key === 'errorCode') {
        if (typeof field === 'number' && field !== 0) counts.set(field, (counts.get(field) ?? 0) + 1);
      } else if (field !== null && typeof field === 'object') walk(field);
    }
  };
  walk(response);
  return counts;
}
