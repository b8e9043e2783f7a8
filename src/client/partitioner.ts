/**
 * Choosing a partition for a produced record, as Kafka's Java producer does
 * (BuiltInPartitioner / the former DefaultPartitioner): a keyed record goes to
 * `toPositive(murmur2(keyBytes)) % numPartitions`, so the same key lands on the same partition as
 * with Java, librdkafka's `murmur2_random` and kafkajs's default partitioner; a record without a
 * key goes to a "sticky" partition (KIP-480) that changes only when a batch is closed, or round-robin.
 */

const MURMUR2_SEED = 0x9747b28c;
const MURMUR2_M = 0x5bd1e995;
const MURMUR2_R = 24;

/**
 * Kafka's 32-bit murmur2 hash of `data` (Utils.murmur2): MurmurHash2 with seed 0x9747b28c,
 * little-endian 4-byte words. Returns a signed int32, as Java's `int`.
 */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (MURMUR2_SEED ^ length) | 0;
  const words = length >>> 2;
  for (let i = 0; i < words; i++) {
    const at = i * 4;
    let k = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24);
    k = Math.imul(k, MURMUR2_M);
    k ^= k >>> MURMUR2_R;
    k = Math.imul(k, MURMUR2_M);
    h = Math.imul(h, MURMUR2_M) ^ k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest === 3) h ^= data[tail + 2]! << 16;
  if (rest >= 2) h ^= data[tail + 1]! << 8;
  if (rest >= 1) {
    h ^= data[tail]!;
    h = Math.imul(h, MURMUR2_M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, MURMUR2_M);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's Utils.toPositive: clears the sign bit (not Math.abs, so MIN_VALUE maps to 0). */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

/** The partition of a keyed record among `numPartitions`, as Kafka's BuiltInPartitioner.partitionForKey. */
export function partitionForKey(key: Uint8Array, numPartitions: number): number {
  if (!(numPartitions > 0)) throw new RangeError(`numPartitions must be positive, got ${numPartitions}`);
  return toPositive(murmur2(key)) % numPartitions;
}

/** How records without a key are spread: sticky (KIP-480, Kafka's default) or round-robin. */
export type NullKeyStrategy = 'sticky' | 'round-robin';

/**
 * Picks partitions for records of one topic. Keyed records use {@link partitionForKey}. Keyless
 * records use the strategy: `sticky` keeps one partition until {@link onBatchClosed} reports that
 * partition's batch closed, then moves to another (random, different when there are several);
 * `round-robin` moves on every record. `random` returns a float in [0, 1) (injected for tests).
 */
export class Partitioner {
  private sticky = -1;
  private next = 0;

  constructor(
    private readonly strategy: NullKeyStrategy = 'sticky',
    private readonly random: () => number = Math.random,
  ) {}

  /** The partition for a record with `key` (null: none) among `numPartitions`. */
  partition(key: Uint8Array | null, numPartitions: number): number {
    if (key !== null) return partitionForKey(key, numPartitions);
    if (this.strategy === 'round-robin') {
      const partition = this.next % numPartitions;
      this.next = (this.next + 1) % numPartitions;
      return partition;
    }
    if (this.sticky < 0 || this.sticky >= numPartitions) this.sticky = Math.floor(this.random() * numPartitions);
    return this.sticky;
  }

  /** Tells a sticky partitioner that `partition`'s batch closed: keyless records move elsewhere. */
  onBatchClosed(partition: number, numPartitions: number): void {
    if (this.strategy !== 'sticky' || partition !== this.sticky) return;
    if (numPartitions <= 1) return;
    let choice = Math.floor(this.random() * (numPartitions - 1));
    if (choice >= partition) choice += 1;
    this.sticky = choice;
  }
}
