/**
 * Committed offsets of a coordinator's groups: OffsetCommit, OffsetFetch, OffsetDelete, DeleteGroups
 * (the group's offsets and its metadata go together), the tombstoning of offsets of deleted topics,
 * and offset expiry (offsets.retention.minutes, KIP-211). `OffsetStore` is the only writer of the
 * groups' `offsets` maps once they are loaded, and owns the set of deleted topics still to tombstone
 * and the expiry timer. Groups themselves are looked up, created and removed through rebalance.ts.
 *
 * Kafka counterpart: `OffsetMetadataManager` (group-coordinator: commitOffset, fetchOffsets,
 * deleteOffsets, deleteAllOffsets, cleanupExpiredOffsets, onPartitionsDeleted), with
 * `ClassicGroup.validateOffsetCommit` and the shard's deleteGroups.
 */
import assert from 'node:assert/strict';
import type { ActorContext } from '../runtime/actor';
import type { TimerHandle } from '../io/clock';
import { ErrorCode } from '../protocol/error-codes';
import { decodeConsumerSubscription } from '../protocol/consumer-protocol';
import { type ClassicGroup, type CommittedOffset, offsetKey } from './classic-group';
import { groupMetadataKey, offsetCommitKey, offsetCommitValue } from './offsets-records';
import type { CoordinatorWriteError, OffsetsRecord, PartitionWriter } from './partition-writer';
import { memberError, type Rebalancer } from './rebalance';
import type {
  CommitRequest,
  CommitResult,
  DeletedGroup,
  FetchOffsetsRequest,
  FetchOffsetsResult,
  GroupEnvelope,
  OffsetDeleteRequest,
  OffsetDeleteResult,
} from './messages';

/** Broker settings the offset store follows (Kafka's names, in ms and bytes). */
export interface OffsetStoreConfig {
  /** offset.metadata.max.bytes */
  offsetMetadataMaxBytes: number;
  /** offsets.retention.minutes, in ms */
  offsetsRetentionMs: number;
  /** offsets.retention.check.interval.ms */
  offsetsRetentionCheckIntervalMs: number;
}

/** Keeps the committed offsets of one coordinator's groups (see the file header). */
export class OffsetStore {
  /** Topics deleted from the cluster whose committed offsets still have to be tombstoned. */
  private readonly deletedTopics = new Set<string>();
  private expiryTimer: TimerHandle | null = null;

  /** `partition`: the __consumer_offsets partition (for log lines). */
  constructor(
    private readonly config: OffsetStoreConfig,
    private readonly partition: number,
    private readonly writer: PartitionWriter,
    private readonly rebalancer: Rebalancer,
  ) {}

  /** The groups are loaded: offsets of topics deleted meanwhile go, and the expiry checks start. */
  onLoaded(ctx: ActorContext): void {
    if (this.deletedTopics.size > 0) this.dropDeletedTopicOffsets(ctx);
    this.expiryTimer = ctx.timers.setTimeout(
      () => this.expireOffsets(ctx),
      this.config.offsetsRetentionCheckIntervalMs,
    );
  }

  stop(ctx: ActorContext): void {
    if (this.expiryTimer) ctx.timers.clearTimeout(this.expiryTimer);
  }

  // ---- OffsetCommit and OffsetFetch ----------------------------------------------------------

  /** OffsetCommit (`version`: the request's): answered once the offsets are stored, or with the write's error. */
  commit(envelope: GroupEnvelope<'group.commit'>, r: CommitRequest, version: number, ctx: ActorContext): void {
    const everyPartition = (errorCode: number): CommitResult => ({
      topics: r.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
      })),
    });
    if (!r.groupId) return ctx.reply(envelope, everyPartition(ErrorCode.INVALID_GROUP_ID));
    let group = this.rebalancer.groups.get(r.groupId);
    // A commit naming a member or generation of a group that does not exist: Kafka's coordinator answers
    // ILLEGAL_GENERATION before OffsetCommit v9 and GROUP_ID_NOT_FOUND from v9 (KIP-848's versions).
    const asMember = r.generationId >= 0 || r.memberId !== '' || r.groupInstanceId !== null;
    const missingGroupError = !asMember
      ? ErrorCode.NONE
      : version >= 9
        ? ErrorCode.GROUP_ID_NOT_FOUND
        : ErrorCode.ILLEGAL_GENERATION;
    const error = group ? commitError(group, r) : missingGroupError;
    if (error !== ErrorCode.NONE) return ctx.reply(envelope, everyPartition(error));
    group ??= this.rebalancer.createGroup(r.groupId, ctx.clock.nowMs());
    const nowMs = ctx.clock.nowMs();
    const records: OffsetsRecord[] = [];
    const pending: { key: string; value: CommittedOffset }[] = [];
    const result: CommitResult = {
      topics: r.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const metadata = p.committedMetadata ?? '';
          if (Buffer.byteLength(metadata, 'utf8') > this.config.offsetMetadataMaxBytes)
            return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE };
          const value = {
            offset: p.committedOffset,
            leaderEpoch: p.committedLeaderEpoch,
            metadata,
            commitTimestamp: nowMs,
          };
          records.push({ key: offsetCommitKey(r.groupId, t.name, p.partitionIndex), value: offsetCommitValue(value) });
          pending.push({
            key: offsetKey(t.name, p.partitionIndex),
            value: {
              offset: value.offset,
              leaderEpoch: value.leaderEpoch,
              metadata,
              commitTimestampMs: nowMs,
              recordOffset: -1,
            },
          });
          return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE };
        }),
      })),
    };
    if (records.length === 0) return ctx.reply(envelope, result);
    assert.equal(pending.length, records.length, 'one pending offset per commit record');
    const target = group;
    this.writer.append(records, ctx).then(
      (baseOffset) => {
        assert.ok(Number.isSafeInteger(baseOffset) && baseOffset >= 0, `commit stored at offset ${baseOffset}`);
        pending.forEach((p, i) => target.offsets.set(p.key, { ...p.value, recordOffset: baseOffset + i }));
        ctx.reply(envelope, result);
      },
      (writeError: CoordinatorWriteError) => {
        for (const t of result.topics)
          for (const p of t.partitions) if (p.errorCode === ErrorCode.NONE) p.errorCode = writeError.errorCode;
        ctx.reply(envelope, result);
      },
    );
  }

  /** OffsetFetch: the group's committed offsets (-1 for a partition without one). */
  fetch(r: FetchOffsetsRequest): FetchOffsetsResult {
    const group = this.rebalancer.groups.get(r.groupId);
    if (r.topics === null) {
      const byTopic = new Map<string, FetchOffsetsResult['topics'][number]>();
      for (const [key, committed] of group?.offsets ?? []) {
        const [topic, partition] = key.split('\0') as [string, string];
        let entry = byTopic.get(topic);
        if (!entry) byTopic.set(topic, (entry = { name: topic, partitions: [] }));
        entry.partitions.push({
          partitionIndex: Number(partition),
          committedOffset: committed.offset,
          committedLeaderEpoch: committed.leaderEpoch,
          metadata: committed.metadata,
          errorCode: ErrorCode.NONE,
        });
      }
      for (const entry of byTopic.values()) entry.partitions.sort((a, b) => a.partitionIndex - b.partitionIndex);
      return { errorCode: ErrorCode.NONE, topics: [...byTopic.values()] };
    }
    return {
      errorCode: ErrorCode.NONE,
      topics: r.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => {
          const committed = group?.offsets.get(offsetKey(t.name, partitionIndex));
          return committed
            ? {
                partitionIndex,
                committedOffset: committed.offset,
                committedLeaderEpoch: committed.leaderEpoch,
                metadata: committed.metadata,
                errorCode: ErrorCode.NONE,
              }
            : {
                partitionIndex,
                committedOffset: -1,
                committedLeaderEpoch: -1,
                metadata: '',
                errorCode: ErrorCode.NONE,
              };
        }),
      })),
    };
  }

  // ---- deletes -------------------------------------------------------------------------------

  /** DeleteGroups: an Empty group's offsets and metadata are tombstoned, then the group is removed. */
  deleteGroups(envelope: GroupEnvelope<'group.delete-groups'>, groupIds: string[], ctx: ActorContext): void {
    const records: OffsetsRecord[] = [];
    const deleted: ClassicGroup[] = [];
    const results: DeletedGroup[] = groupIds.map((groupId) => {
      if (!groupId) return { groupId, errorCode: ErrorCode.INVALID_GROUP_ID };
      const group = this.rebalancer.groups.get(groupId);
      if (!group || group.is('Dead')) return { groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND };
      if (!group.is('Empty')) return { groupId, errorCode: ErrorCode.NON_EMPTY_GROUP };
      records.push(...tombstones(group, [...group.offsets.keys()]), {
        key: groupMetadataKey(groupId),
        value: null,
      });
      deleted.push(group);
      return { groupId, errorCode: ErrorCode.NONE };
    });
    if (records.length === 0) return ctx.reply(envelope, results);
    this.writer.append(records, ctx).then(
      () => {
        for (const group of deleted) this.rebalancer.removeGroup(group, ctx);
        ctx.reply(envelope, results);
      },
      (writeError: CoordinatorWriteError) => {
        ctx.reply(
          envelope,
          results.map((r) => (r.errorCode === ErrorCode.NONE ? { ...r, errorCode: writeError.errorCode } : r)),
        );
      },
    );
  }

  /**
   * OffsetDelete: the named offsets are tombstoned, except for topics the group's members subscribe
   * to (GROUP_SUBSCRIBED_TO_TOPIC); a non-Empty group must be a consumer group.
   */
  offsetDelete(envelope: GroupEnvelope<'group.offset-delete'>, body: OffsetDeleteRequest, ctx: ActorContext): void {
    const group = this.rebalancer.groups.get(body.groupId);
    const none: OffsetDeleteResult = { errorCode: ErrorCode.NONE, topics: [] };
    if (!body.groupId) return ctx.reply(envelope, { ...none, errorCode: ErrorCode.INVALID_GROUP_ID });
    if (!group || group.is('Dead')) return ctx.reply(envelope, { ...none, errorCode: ErrorCode.GROUP_ID_NOT_FOUND });
    if (!group.is('Empty') && group.protocolType !== 'consumer')
      return ctx.reply(envelope, { ...none, errorCode: ErrorCode.NON_EMPTY_GROUP });
    const keys: string[] = [];
    const topics = body.topics.map((t) => {
      const subscribed = !group.is('Empty') && group.isSubscribedTo(t.name, subscribedTopics);
      return {
        name: t.name,
        partitions: t.partitions.map((partitionIndex) => {
          if (subscribed) return { partitionIndex, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
          if (group.offsets.has(offsetKey(t.name, partitionIndex))) keys.push(offsetKey(t.name, partitionIndex));
          return { partitionIndex, errorCode: ErrorCode.NONE };
        }),
      };
    });
    if (keys.length === 0) return ctx.reply(envelope, { errorCode: ErrorCode.NONE, topics });
    this.writer.append(tombstones(group, keys), ctx).then(
      () => {
        for (const key of keys) group.offsets.delete(key);
        ctx.reply(envelope, { errorCode: ErrorCode.NONE, topics });
      },
      (writeError: CoordinatorWriteError) => ctx.reply(envelope, { errorCode: writeError.errorCode, topics: [] }),
    );
  }

  /** The broker deleted `topics`: remembered (also while loading) until their offsets are tombstoned. */
  addDeletedTopics(topics: readonly string[]): void {
    for (const topic of topics) this.deletedTopics.add(topic);
  }

  /**
   * Kafka's onPartitionsDeleted: the committed offsets of deleted topics are tombstoned, so a topic
   * created again under the same name starts from the consumers' reset policy, not a stale offset.
   * A failed write puts the topics back for the next expiry check.
   */
  dropDeletedTopicOffsets(ctx: ActorContext): void {
    const topics = new Set(this.deletedTopics);
    this.deletedTopics.clear();
    const doomed: { group: ClassicGroup; keys: string[] }[] = [];
    for (const group of this.rebalancer.groups.values()) {
      const keys = [...group.offsets.keys()].filter((key) => topics.has(key.slice(0, key.indexOf('\0'))));
      if (keys.length > 0) doomed.push({ group, keys });
    }
    if (doomed.length === 0) return;
    this.writer
      .append(
        doomed.flatMap(({ group, keys }) => tombstones(group, keys)),
        ctx,
      )
      .then(
        () => {
          for (const { group, keys } of doomed) for (const key of keys) group.offsets.delete(key);
          ctx.log.info(
            { partition: this.partition, topics: [...topics], groups: doomed.length },
            'removed the committed offsets of deleted topics',
          );
        },
        (error) => {
          ctx.log.warn(
            { topics: [...topics], error: String(error) },
            'removing offsets of deleted topics failed; retrying at the next expiry check',
          );
          for (const topic of topics) this.deletedTopics.add(topic);
        },
      );
  }

  // ---- expiry --------------------------------------------------------------------------------

  /**
   * offsets.retention.minutes (KIP-211): offsets of a group that has been Empty that long are
   * deleted; a simple (member-less, protocol-less) group's offsets expire one by one from their
   * commit time. A group left with neither members nor offsets is removed with a tombstone.
   */
  private expireOffsets(ctx: ActorContext): void {
    this.expiryTimer = ctx.timers.setTimeout(
      () => this.expireOffsets(ctx),
      this.config.offsetsRetentionCheckIntervalMs,
    );
    if (this.deletedTopics.size > 0) this.dropDeletedTopicOffsets(ctx);
    const nowMs = ctx.clock.nowMs();
    const retentionMs = this.config.offsetsRetentionMs;
    const records: OffsetsRecord[] = [];
    const expired: { group: ClassicGroup; keys: string[]; removeGroup: boolean }[] = [];
    for (const group of this.rebalancer.groups.values()) {
      if (!group.is('Empty')) continue;
      const keys =
        group.protocolType === null
          ? [...group.offsets.entries()].filter(([, o]) => o.commitTimestampMs + retentionMs <= nowMs).map(([k]) => k)
          : group.currentStateTimestampMs + retentionMs <= nowMs
            ? [...group.offsets.keys()]
            : [];
      const removeGroup = keys.length === group.offsets.size && group.pendingMembers.size === 0;
      if (
        keys.length === 0 &&
        !(removeGroup && group.generationId > 0 && group.currentStateTimestampMs + retentionMs <= nowMs)
      )
        continue;
      records.push(...tombstones(group, keys));
      if (removeGroup) records.push({ key: groupMetadataKey(group.groupId), value: null });
      expired.push({ group, keys, removeGroup });
    }
    if (records.length === 0) return;
    this.writer.append(records, ctx).then(
      () => {
        for (const { group, keys, removeGroup } of expired) {
          for (const key of keys) group.offsets.delete(key);
          if (removeGroup && group.is('Empty') && group.offsets.size === 0) this.rebalancer.removeGroup(group, ctx);
        }
        ctx.log.info(
          {
            partition: this.partition,
            groups: expired.length,
            offsets: expired.reduce((n, e) => n + e.keys.length, 0),
          },
          'expired committed offsets',
        );
      },
      (error) => ctx.log.warn({ error: String(error) }, 'expiring offsets failed'),
    );
  }
}

/**
 * Kafka's ClassicGroup.validateOffsetCommit: a commit without member and generation (admin tools,
 * consumers that assign partitions themselves) needs an Empty group; a member's commit needs its
 * current generation, and is asked to wait (REBALANCE_IN_PROGRESS) until the group's assignment is out.
 */
function commitError(group: ClassicGroup, r: CommitRequest): number {
  if (group.is('Dead')) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  if (r.generationId < 0 && group.is('Empty')) return ErrorCode.NONE;
  if (r.generationId >= 0 || r.memberId !== '' || r.groupInstanceId !== null) {
    const error = memberError(group, r.memberId, r.groupInstanceId);
    if (error !== ErrorCode.NONE) return error;
    if (r.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
  } else if (!group.is('Empty')) {
    return ErrorCode.UNKNOWN_MEMBER_ID;
  }
  if (group.is('CompletingRebalance')) return ErrorCode.REBALANCE_IN_PROGRESS;
  return ErrorCode.NONE;
}

/** Tombstones for the group's offsets under `offsetKeys` (offsetKey form). */
function tombstones(group: ClassicGroup, offsetKeys: string[]): OffsetsRecord[] {
  return offsetKeys.map((key) => {
    const [topic, partition] = key.split('\0') as [string, string];
    return { key: offsetCommitKey(group.groupId, topic, Number(partition)), value: null };
  });
}

/** Topics of a member's ConsumerProtocolSubscription, or null when its bytes do not parse. */
function subscribedTopics(metadata: Buffer): string[] | null {
  try {
    return decodeConsumerSubscription(metadata).topics;
  } catch {
    return null;
  }
}
