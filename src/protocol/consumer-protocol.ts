/**
 * The classic consumer protocol's opaque bytes (protocol type `consumer`): the member metadata a
 * consumer sends in JoinGroup (ConsumerProtocolSubscription) and the assignment its leader hands
 * out in SyncGroup (ConsumerProtocolAssignment), as DescribeGroups returns them.
 *
 * Written from Kafka's ConsumerProtocolSubscription.json and ConsumerProtocolAssignment.json
 * (non-flexible, versions 0-3): a leading int16 version, then
 *
 *   Assignment:   [Topic string, Partitions []int32] array, UserData nullable bytes
 *   Subscription: Topics []string, UserData nullable bytes, OwnedPartitions (v1+, as above),
 *                 GenerationId int32 (v2+), RackId nullable string (v3+)
 *
 * Decoding is lenient past the fields a version defines (a newer client may append fields, as
 * Kafka's own parser allows), and strict about truncation: a short buffer throws ProtocolError (reader.ts).
 */
import { Reader } from './reader';

/** A decoded ConsumerProtocolAssignment: assigned partitions per topic (sorted), and user data. */
export interface ConsumerAssignment {
  version: number;
  /** topic -> partitions, topics and partitions in ascending order. */
  partitions: Map<string, number[]>;
  userData: Buffer | null;
}

/** A decoded ConsumerProtocolSubscription. */
export interface ConsumerSubscription {
  version: number;
  topics: string[];
  userData: Buffer | null;
  /** v1+: partitions the member owned before this rebalance (cooperative protocols). */
  ownedPartitions: Map<string, number[]>;
  /** v2+, else -1. */
  generationId: number;
  /** v3+, else null. */
  rackId: string | null;
}

/** A bounded array of `item`s (a null array reads as empty); the count is checked against the bytes left. */
function array<T>(r: Reader, item: () => T): T[] {
  const n = r.arrayLength();
  if (n < 0) return [];
  return Array.from({ length: n }, item);
}

function topicPartitions(r: Reader): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const [topic, partitions] of array(r, () => [r.string(), array(r, () => r.int32())] as const)) {
    out.set(
      topic,
      [...(out.get(topic) ?? []), ...partitions].sort((a, b) => a - b),
    );
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Decodes ConsumerProtocolAssignment bytes (a SyncGroup assignment / DescribeGroups
 * MemberAssignment). Empty bytes (a member not yet assigned) decode to no partitions.
 * Throws ProtocolError on truncated bytes.
 */
export function decodeConsumerAssignment(bytes: Buffer): ConsumerAssignment {
  if (bytes.length === 0) return { version: 0, partitions: new Map(), userData: null };
  const r = new Reader(bytes);
  const version = r.int16();
  const partitions = topicPartitions(r);
  const userData = r.remaining() > 0 ? r.nullableBytes() : null;
  return { version, partitions, userData };
}

/**
 * Decodes ConsumerProtocolSubscription bytes (JoinGroup / DescribeGroups MemberMetadata).
 * Throws ProtocolError on truncated bytes.
 */
export function decodeConsumerSubscription(bytes: Buffer): ConsumerSubscription {
  const r = new Reader(bytes);
  const version = r.int16();
  const topics = array(r, () => r.string());
  const userData = r.remaining() > 0 ? r.nullableBytes() : null;
  const ownedPartitions = version >= 1 && r.remaining() > 0 ? topicPartitions(r) : new Map<string, number[]>();
  const generationId = version >= 2 && r.remaining() > 0 ? r.int32() : -1;
  const rackId = version >= 3 && r.remaining() > 0 ? r.nullableString() : null;
  return { version, topics, userData, ownedPartitions, generationId, rackId };
}

/**
 * Encodes a ConsumerProtocolAssignment at `version` (default 0; the layout is the same for 0-3).
 * For tests and tools that act as a group leader.
 */
export function encodeConsumerAssignment(
  partitions: ReadonlyMap<string, readonly number[]>,
  userData: Buffer | null = null,
  version = 0,
): Buffer {
  const parts: Buffer[] = [int16(version), int32(partitions.size)];
  for (const [topic, list] of partitions) {
    parts.push(str(topic), int32(list.length), ...list.map(int32));
  }
  parts.push(userData === null ? int32(-1) : Buffer.concat([int32(userData.length), userData]));
  return Buffer.concat(parts);
}

/** Encodes a ConsumerProtocolSubscription v0 (topics and user data). */
export function encodeConsumerSubscription(topics: readonly string[], userData: Buffer | null = null): Buffer {
  return Buffer.concat([
    int16(0),
    int32(topics.length),
    ...topics.map(str),
    userData === null ? int32(-1) : Buffer.concat([int32(userData.length), userData]),
  ]);
}

/** `topic:0,1,2 other:3`: an assignment in one line, for tables. */
export function formatAssignment(partitions: ReadonlyMap<string, readonly number[]>): string {
  if (partitions.size === 0) return '-';
  return [...partitions].map(([topic, list]) => `${topic}:${list.join(',')}`).join(' ');
}

function int16(v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(v);
  return b;
}
function int32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(v);
  return b;
}
function str(s: string): Buffer {
  const body = Buffer.from(s, 'utf8');
  return Buffer.concat([int16(body.length), body]);
}
