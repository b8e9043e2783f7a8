/**
 * The records of `__consumer_offsets`, in Kafka's key/value layout (field names as in Kafka's JSON), so Kafka's own tools
 * (`kafka-dump-log --offsets-decoder`) read Skiff's partitions and a group lands where Kafka puts it.
 *
 * Every key and value starts with an int16 version, then the struct at that version (written from
 * Kafka's OffsetCommitKey/Value and GroupMetadataKey/Value message JSON, group-coordinator 4.x):
 * ```
 * key   version 0|1  OffsetCommitKey     group string, topic string, partition int32
 * key   version 2    GroupMetadataKey    group string
 * value OffsetCommitValue   v0-4: offset int64, leaderEpoch int32 (v3+), metadata string,
 *                                 commitTimestamp int64, expireTimestamp int64 (v1 only), v4 flexible
 * value GroupMetadataValue  v0-4: protocolType, generation, protocol?, leader?, currentStateTimestamp
 *                                 (v2+), members[] {memberId, groupInstanceId? (v3+), clientId,
 *                                 clientHost, rebalanceTimeout (v1+), sessionTimeout, subscription,
 *                                 assignment}, v4 flexible
 * ```
 * A null value is a tombstone: the offset, or the whole group, was deleted. Other key versions
 * (Kafka's KIP-848 consumer-group and share-group records) are skipped when loading.
 */
import type { MessageSpec, MessageValue } from '../protocol/schema/dsl';
import { decodeMessage, encodeMessage } from '../protocol/codec';
import { Reader } from '../protocol/reader';

/** The internal topic holding committed offsets and group metadata. */
export const OFFSETS_TOPIC = '__consumer_offsets';

/** Versions Skiff writes: what Kafka 3.x/4.x write for classic groups. */
export const OFFSET_COMMIT_KEY_VERSION = 1;
export const GROUP_METADATA_KEY_VERSION = 2;
export const OFFSET_COMMIT_VALUE_VERSION = 3;
export const GROUP_METADATA_VALUE_VERSION = 3;

const OffsetCommitKey = {
  apiKey: 1,
  type: 'coordinator-key',
  name: 'OffsetCommitKey',
  validVersions: '0-1',
  flexibleVersions: 'none',
  fields: [
    { name: 'group', type: 'string', versions: '0+' },
    { name: 'topic', type: 'string', versions: '0+' },
    { name: 'partition', type: 'int32', versions: '0+' },
  ],
} as const satisfies MessageSpec;

const GroupMetadataKey = {
  apiKey: 2,
  type: 'coordinator-key',
  name: 'GroupMetadataKey',
  validVersions: '2',
  flexibleVersions: 'none',
  fields: [{ name: 'group', type: 'string', versions: '2' }],
} as const satisfies MessageSpec;

const OffsetCommitValue = {
  apiKey: 1,
  type: 'coordinator-value',
  name: 'OffsetCommitValue',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    { name: 'offset', type: 'int64', versions: '0+' },
    { name: 'leaderEpoch', type: 'int32', versions: '3+', default: -1 },
    { name: 'metadata', type: 'string', versions: '0+' },
    { name: 'commitTimestamp', type: 'int64', versions: '0+' },
    { name: 'expireTimestamp', type: 'int64', versions: '1', default: -1 },
    { name: 'topicId', type: 'uuid', versions: '4+', taggedVersions: '4+', tag: 0 },
  ],
} as const satisfies MessageSpec;

const GroupMetadataValue = {
  apiKey: 2,
  type: 'coordinator-value',
  name: 'GroupMetadataValue',
  validVersions: '0-4',
  flexibleVersions: '4+',
  fields: [
    { name: 'protocolType', type: 'string', versions: '0+' },
    { name: 'generation', type: 'int32', versions: '0+' },
    { name: 'protocol', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'leader', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'currentStateTimestamp', type: 'int64', versions: '2+', default: -1 },
    {
      name: 'members',
      type: '[]MemberMetadata',
      versions: '0+',
      fields: [
        { name: 'memberId', type: 'string', versions: '0+' },
        { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
        { name: 'clientId', type: 'string', versions: '0+' },
        { name: 'clientHost', type: 'string', versions: '0+' },
        { name: 'rebalanceTimeout', type: 'int32', versions: '1+', default: -1 },
        { name: 'sessionTimeout', type: 'int32', versions: '0+' },
        { name: 'subscription', type: 'bytes', versions: '0+' },
        { name: 'assignment', type: 'bytes', versions: '0+' },
      ],
    },
  ],
} as const satisfies MessageSpec;

/** The layouts above, for the conformance test against Kafka's group-coordinator JSON. */
export const OFFSETS_RECORD_SPECS = {
  OffsetCommitKey,
  GroupMetadataKey,
  OffsetCommitValue,
  GroupMetadataValue,
} as const;

/** A committed offset as stored (OffsetCommitValue). Times in ms since the epoch. */
export type OffsetCommitValueData = MessageValue<typeof OffsetCommitValue>;
/** A group's metadata as stored (GroupMetadataValue). */
export type GroupMetadataValueData = MessageValue<typeof GroupMetadataValue>;
/** One member inside {@link GroupMetadataValueData}. */
export type StoredMember = GroupMetadataValueData['members'][number];

/** A decoded key: an offset commit of (group, topic, partition), or a group's metadata. */
export type OffsetsKey =
  { kind: 'offset'; group: string; topic: string; partition: number } | { kind: 'group'; group: string };

function prefixed(version: number, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(2 + body.length);
  out.writeInt16BE(version, 0);
  body.copy(out, 2);
  return out;
}

/** Key bytes of a committed offset (key version 1). */
export function offsetCommitKey(group: string, topic: string, partition: number): Buffer {
  return prefixed(
    OFFSET_COMMIT_KEY_VERSION,
    encodeMessage(OffsetCommitKey, OFFSET_COMMIT_KEY_VERSION, { group, topic, partition }),
  );
}

/** Key bytes of a group's metadata (key version 2). */
export function groupMetadataKey(group: string): Buffer {
  return prefixed(GROUP_METADATA_KEY_VERSION, encodeMessage(GroupMetadataKey, GROUP_METADATA_KEY_VERSION, { group }));
}

/** Value bytes of a committed offset (value version 3: with leader epoch, no expire timestamp). */
export function offsetCommitValue(value: {
  offset: number;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
}): Buffer {
  return prefixed(
    OFFSET_COMMIT_VALUE_VERSION,
    encodeMessage(OffsetCommitValue, OFFSET_COMMIT_VALUE_VERSION, { ...value, expireTimestamp: -1 }),
  );
}

/** Value bytes of a group's metadata (value version 3: with static member ids). */
export function groupMetadataValue(
  value: Omit<GroupMetadataValueData, 'members'> & { members: StoredMember[] },
): Buffer {
  return prefixed(GROUP_METADATA_VALUE_VERSION, encodeMessage(GroupMetadataValue, GROUP_METADATA_VALUE_VERSION, value));
}

/**
 * Decodes a key; null for key versions Skiff does not use (KIP-848 and share-group records).
 * Throws ProtocolError on a truncated key of a known version.
 */
export function decodeOffsetsKey(key: Buffer): OffsetsKey | null {
  const reader = new Reader(key);
  const version = reader.int16();
  if (version === 0 || version === 1) {
    const k = decodeMessage(OffsetCommitKey, version, reader);
    return { kind: 'offset', group: k.group, topic: k.topic, partition: k.partition };
  }
  if (version === 2) return { kind: 'group', group: decodeMessage(GroupMetadataKey, 2, reader).group };
  return null;
}

/** Decodes an OffsetCommitValue of any version 0-4. Throws ProtocolError on bad bytes. */
export function decodeOffsetCommitValue(value: Buffer): OffsetCommitValueData {
  const reader = new Reader(value);
  return decodeMessage(OffsetCommitValue, reader.int16(), reader);
}

/** Decodes a GroupMetadataValue of any version 0-4. Throws ProtocolError on bad bytes. */
export function decodeGroupMetadataValue(value: Buffer): GroupMetadataValueData {
  const reader = new Reader(value);
  return decodeMessage(GroupMetadataValue, reader.int16(), reader);
}

/**
 * Java's String.hashCode over UTF-16 code units, as a signed 32-bit int (Kafka's
 * `Utils.abs(groupId.hashCode) % offsets.topic.num.partitions` places a group).
 */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The `__consumer_offsets` partition of a group: Kafka's Utils.abs of the Java hash code (Math.abs,
 * with Integer.MIN_VALUE mapped to 0; not the sign-masking Utils.toPositive of the partitioner),
 * modulo the partition count.
 */
export function offsetsPartitionFor(groupId: string, numPartitions: number): number {
  const h = javaStringHashCode(groupId);
  return (h === -2147483648 ? 0 : Math.abs(h)) % numPartitions;
}
