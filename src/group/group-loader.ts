/**
 * Loading of a coordinator's groups: once the partition's HW has reached the start of the leader's
 * epoch ({@link awaitLeaderHighWatermark}), its partition of `__consumer_offsets` is read from the
 * log start to the high watermark and each record replayed in log order (the latest record per key wins; a null
 * value deletes), giving the groups with their members, generation and committed offsets. The loader
 * owns the groups it builds until it hands them over; rebalance.ts owns them from then on (and starts
 * their members' sessions).
 *
 * Kafka counterpart: `GroupMetadataManager.loadGroupsAndOffsets` / `doLoadGroupsAndOffsets` (classic
 * coordinator), the load half of the new coordinator's `CoordinatorLoaderImpl` plus the `replay`
 * methods of `GroupMetadataManager` and `OffsetMetadataManager`.
 */
import assert from 'node:assert/strict';
import type { ActorContext, ActorRef } from '../runtime/actor';
import { ErrorCode } from '../protocol/error-codes';
import { decodeBatch } from '../protocol/record-batch/decode';
import { batchSizeAt } from '../protocol/record-batch/view';
import * as L from '../protocol/record-batch/layout';
import { ClassicGroup, offsetKey } from './classic-group';
import { decodeGroupMetadataValue, decodeOffsetCommitValue, decodeOffsetsKey, OFFSETS_TOPIC } from './offsets-records';
import type { PartitionLeaderMessages } from './messages';

/** Bytes asked for per fetch while loading. */
const LOAD_FETCH_MAX_BYTES = 4 * 1024 * 1024;
/** How long one fetch from the replica may take (ms). */
const LOAD_FETCH_TIMEOUT_MS = 60_000;

/** Where to load from. */
export interface GroupLoadSource {
  /** The __consumer_offsets partition. */
  partition: number;
  /** The partition's leader replica. */
  replicaActor: ActorRef<PartitionLeaderMessages>;
}

/** How long one `replica.await-leader-hw` may wait at the replica before the loader asks again (ms). */
const LEADER_HW_WAIT_MS = 5_000;
/** Slack over that wait for the reply to arrive (ms). */
const LEADER_HW_REQUEST_SLACK_MS = 5_000;

/**
 * The outcome of {@link awaitLeaderHighWatermark}: `ready` with the offsets the replica answered, or
 * `not-leader` (the replica does not lead, or is not reachable: this coordinator's partition moved or
 * its replica is restarting).
 */
export type LeaderHighWatermarkWait =
  | { kind: 'ready'; leaderEpoch: number; leaderEpochStartOffset: number; highWatermark: number }
  | { kind: 'not-leader'; errorCode: number };

/**
 * Waits until the partition's leader replica has an HW at or past the start offset of its leader
 * epoch (its LEO when it became leader). A new leader's HW can lag its LEO (followers learn the HW a
 * fetch round after the leader), and every commit the previous leader acknowledged lies below that
 * LEO, so loading to the HW before then would miss acknowledged commits. Asks again every
 * {@link LEADER_HW_WAIT_MS} while the replica answers REQUEST_TIMED_OUT and `stillWanted()` holds.
 *
 * Kafka counterpart: the new group coordinator's runtime loads a partition and exposes its state only
 * once the HW covers it (CoordinatorRuntime's `lastCommittedOffset`).
 */
export async function awaitLeaderHighWatermark(
  source: GroupLoadSource,
  ctx: ActorContext,
  stillWanted: () => boolean,
): Promise<LeaderHighWatermarkWait> {
  for (;;) {
    let reply;
    try {
      reply = await ctx.request(
        source.replicaActor,
        'replica.await-leader-hw',
        { maxWaitMs: LEADER_HW_WAIT_MS },
        LEADER_HW_WAIT_MS + LEADER_HW_REQUEST_SLACK_MS,
      );
    } catch {
      return { kind: 'not-leader', errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    }
    if (reply.errorCode === ErrorCode.NONE) {
      assert.ok(
        reply.highWatermark >= reply.leaderEpochStartOffset,
        `${OFFSETS_TOPIC}-${source.partition}: HW ${reply.highWatermark} below the epoch start ${reply.leaderEpochStartOffset}`,
      );
      return {
        kind: 'ready',
        leaderEpoch: reply.leaderEpoch,
        leaderEpochStartOffset: reply.leaderEpochStartOffset,
        highWatermark: reply.highWatermark,
      };
    }
    if (reply.errorCode !== ErrorCode.REQUEST_TIMED_OUT || !stillWanted())
      return { kind: 'not-leader', errorCode: reply.errorCode };
    ctx.log.debug(
      {
        partition: source.partition,
        leaderEpoch: reply.leaderEpoch,
        leaderEpochStartOffset: reply.leaderEpochStartOffset,
        highWatermark: reply.highWatermark,
      },
      'group coordinator: the HW has not reached the leader epoch start yet',
    );
  }
}

/**
 * The replica stopped leading while {@link loadGroups} read it (NOT_LEADER_OR_FOLLOWER after the wait
 * for its HW said it led): the partition moved, which Kafka's coordinator meets by abandoning the load
 * (GroupMetadataManager's load stops when the partition is no longer led). The caller waits for it
 * to lead again instead of crashing.
 */
export class LeadershipMovedError extends Error {
  constructor(
    readonly partition: number,
    readonly errorCode: number,
  ) {
    super(`loading ${OFFSETS_TOPIC}-${partition}: the replica stopped leading (error ${errorCode})`);
  }
}

/** What a load produced. */
export interface LoadedGroups {
  /** groupId -> group; a group with members is Stable, one without is Empty. */
  groups: Map<string, ClassicGroup>;
  /** Records replayed (control batches excluded). */
  records: number;
  /** Monotonic ms the load took. */
  loadMs: number;
}

/**
 * Reads the partition from its log start to the HW and rebuilds every group (call it once
 * {@link awaitLeaderHighWatermark} is ready, so the HW covers what earlier leaders acknowledged). Rejects
 * with {@link LeadershipMovedError} when the replica answers NOT_LEADER_OR_FOLLOWER (it lost leadership
 * meanwhile), and with a plain Error on any other fetch error (the caller crashes, so the supervisor
 * restarts it and the load is retried); an undecodable key is logged and skipped.
 */
export async function loadGroups(source: GroupLoadSource, ctx: ActorContext): Promise<LoadedGroups> {
  const startedMs = ctx.clock.monotonicMs();
  const groups = new Map<string, ClassicGroup>();
  let fetchOffset = 0;
  let records = 0;
  for (;;) {
    const reply = await ctx.request(
      source.replicaActor,
      'replica.fetch',
      { fetchOffset, maxBytes: LOAD_FETCH_MAX_BYTES, minOneBatch: true },
      LOAD_FETCH_TIMEOUT_MS,
    );
    if (reply.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE && fetchOffset < reply.logStartOffset) {
      fetchOffset = reply.logStartOffset;
      continue;
    }
    if (reply.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER)
      throw new LeadershipMovedError(source.partition, reply.errorCode);
    // The replica could not serve the read (an operating error, not a broken invariant).
    if (reply.errorCode !== ErrorCode.NONE)
      throw new Error(
        `loading ${OFFSETS_TOPIC}-${source.partition}: fetch at offset ${fetchOffset} failed with error ${reply.errorCode}`,
      );
    const bytes = reply.records;
    if (!bytes || bytes.length === 0 || fetchOffset >= reply.highWatermark) break;
    let position = 0;
    while (position + L.RECORD_BATCH_OVERHEAD <= bytes.length) {
      const size = batchSizeAt(bytes, position);
      if (position + size > bytes.length) break;
      const batch = decodeBatch(bytes, position);
      position += size;
      fetchOffset = batch.baseOffset + batch.lastOffsetDelta + 1;
      if ((batch.attributes & L.CONTROL_FLAG_MASK) !== 0) continue;
      for (const record of batch.records) {
        if (record.offset >= reply.highWatermark) break;
        if (record.key)
          replay(groups, { key: record.key, value: record.value, offset: record.offset }, source.partition, ctx);
        records += 1;
      }
    }
    if (fetchOffset >= reply.highWatermark) break;
  }
  const nowMs = ctx.clock.nowMs();
  for (const group of groups.values()) {
    // Replay never moves a group's state: every group here is still the Empty it was created as.
    assert.ok(group.is('Empty'), `loading group ${group.groupId}: state ${group.state} before the load completed`);
    // A loaded generation with members is Stable; they must heartbeat within their session timeouts.
    if (group.members.size > 0) group.state = 'Stable';
    if (group.currentStateTimestampMs < 0) group.currentStateTimestampMs = nowMs;
  }
  return { groups, records, loadMs: ctx.clock.monotonicMs() - startedMs };
}

/** A keyed record of the partition; `offset` is its offset in the partition. */
interface OffsetsPartitionRecord {
  key: Buffer;
  value: Buffer | null;
  offset: number;
}

/** Applies one record of the partition to `groups`, in log order: the latest record per key wins; null deletes. */
function replay(
  groups: Map<string, ClassicGroup>,
  record: OffsetsPartitionRecord,
  partition: number,
  ctx: ActorContext,
): void {
  const { key, value, offset: recordOffset } = record;
  let decoded;
  try {
    decoded = decodeOffsetsKey(key);
  } catch (error) {
    ctx.log.warn({ partition, recordOffset, error: String(error) }, 'skipping an undecodable __consumer_offsets key');
    return;
  }
  if (decoded === null) return;
  const createGroup = (groupId: string, currentStateTimestampMs: number): ClassicGroup => {
    const group = new ClassicGroup(groupId, currentStateTimestampMs);
    groups.set(groupId, group);
    return group;
  };
  if (decoded.kind === 'offset') {
    const group = groups.get(decoded.group);
    if (value === null) {
      group?.offsets.delete(offsetKey(decoded.topic, decoded.partition));
      return;
    }
    const v = decodeOffsetCommitValue(value);
    // An offset of a group with no metadata record (yet): a simple group; its state time is set at the end.
    const target = group ?? createGroup(decoded.group, -1);
    target.offsets.set(offsetKey(decoded.topic, decoded.partition), {
      offset: v.offset,
      leaderEpoch: v.leaderEpoch,
      metadata: v.metadata,
      commitTimestampMs: v.commitTimestamp,
      recordOffset,
    });
    return;
  }
  if (value === null) {
    // Group tombstone: the group is gone; Kafka writes tombstones for its offsets first.
    groups.delete(decoded.group);
    return;
  }
  const v = decodeGroupMetadataValue(value);
  const group = groups.get(decoded.group) ?? createGroup(decoded.group, v.currentStateTimestamp);
  group.members.clear();
  group.staticMembers.clear();
  group.generationId = v.generation;
  group.protocolType = v.protocolType.length > 0 ? v.protocolType : null;
  group.protocolName = v.protocol;
  group.leaderId = v.leader;
  group.currentStateTimestampMs = v.currentStateTimestamp;
  for (const m of v.members) {
    group.members.set(m.memberId, {
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeout < 0 ? m.sessionTimeout : m.rebalanceTimeout,
      sessionTimeoutMs: m.sessionTimeout,
      protocolType: v.protocolType,
      protocols: [{ name: v.protocol ?? '', metadata: Buffer.from(m.subscription) }],
      assignment: Buffer.from(m.assignment),
      awaitingJoin: false,
      awaitingSync: false,
    });
    if (m.groupInstanceId !== null) group.staticMembers.set(m.groupInstanceId, m.memberId);
  }
}
