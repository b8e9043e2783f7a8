/**
 * Kafka wire primitives: their layouts, and what reader.ts (`Reader`) and writer.ts (`Writer`) share.
 *
 * Source: the protocol guide, "Protocol Primitive Types"; KIP-482 for the compact (flexible) forms
 * and tagged fields. All integers are big-endian; varints are little-endian base-128 groups.
 *
 * ```
 *  STRING            int16 N (-1 = null when nullable), N bytes UTF-8
 *  COMPACT_STRING    uvarint N+1 (0 = null when nullable), N bytes
 *  BYTES             int32 N (-1 = null when nullable), N bytes
 *  COMPACT_BYTES     uvarint N+1 (0 = null), N bytes
 *  ARRAY             int32 N (-1 = null), N elements
 *  COMPACT_ARRAY     uvarint N+1 (0 = null), N elements
 *  UUID              16 bytes; text form is base64url without padding (22 chars)
 *  TAGGED_FIELDS     uvarint count, then count × (uvarint tag, uvarint size, size bytes)
 * ```
 */

/**
 * Malformed or truncated client input. The network layer closes the connection on it (as Kafka
 * does); it never indicates a bug in Skiff.
 */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** 2^32, for splitting int64 values into two 32-bit halves. */
export const TWO_POW_32 = 4294967296;

/** The all-zero UUID in Kafka's string form (Uuid.ZERO_UUID.toString()). */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
