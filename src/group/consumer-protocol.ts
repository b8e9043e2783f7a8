/**
 * The embedded consumer protocol (protocol type "consumer"): the bytes members put in JoinGroup
 * metadata and SyncGroup assignments. The broker treats them as opaque; it reads them only for
 * OffsetDelete (GROUP_SUBSCRIBED_TO_TOPIC) and tools. Layouts from Kafka's
 * ConsumerProtocolSubscription.json / ConsumerProtocolAssignment.json:
 * ```
 * subscription  int16 version, topics [string], userData nullable bytes, (v1+) ownedPartitions, ...
 * assignment    int16 version, assignedPartitions [{topic string, partitions [int32]}], userData bytes
 * ```
 */
import { Reader } from '../protocol/primitives';

/** Topics of a ConsumerProtocolSubscription, or null when the bytes do not parse. */
export function subscribedTopics(metadata: Buffer): string[] | null {
  try {
    const r = new Reader(metadata);
    r.int16();
    const n = r.arrayLength();
    const topics: string[] = [];
    for (let i = 0; i < n; i++) topics.push(r.string());
    return topics;
  } catch {
    return null;
  }
}

/** Partitions of a ConsumerProtocolAssignment, or null when the bytes do not parse (empty = none). */
export function assignedPartitions(assignment: Buffer): { topic: string; partitions: number[] }[] | null {
  if (assignment.length === 0) return [];
  try {
    const r = new Reader(assignment);
    r.int16();
    const n = r.arrayLength();
    const out: { topic: string; partitions: number[] }[] = [];
    for (let i = 0; i < n; i++) {
      const topic = r.string();
      const count = r.arrayLength();
      const partitions: number[] = [];
      for (let j = 0; j < count; j++) partitions.push(r.int32());
      out.push({ topic, partitions });
    }
    return out;
  } catch {
    return null;
  }
}
