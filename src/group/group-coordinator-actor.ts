/**
 * The group coordinator actor for one partition of `__consumer_offsets` (DESIGN.md "Group
 * coordinator"): it owns every classic consumer group whose id hashes to that partition
 * (offsets-records.ts offsetsPartitionFor) and keeps their metadata and committed offsets as records
 * in the partition, written through the partition's leader replica with acks=all. It runs only beside
 * the leader replica: when this broker becomes the partition's leader its replica manager spawns it
 * (and stops it when leadership moves away), and it rebuilds its groups by reading the partition from
 * the log start to the high watermark, once that HW has reached the leader's LEO as of its new leader
 * epoch (a fresh leader's HW can lag: loading earlier would miss acknowledged commits). Until then
 * every request gets COORDINATOR_LOAD_IN_PROGRESS, or NOT_COORDINATOR while the replica says it does
 * not lead.
 *
 * This file is the mailbox: the loading gate, dispatch by message kind (messages.ts lists each kind
 * with its body and reply; `switch (envelope.type)` narrows the body) and the wiring of the parts it composes:
 * - group-loader.ts reads the partition at start;
 * - rebalance.ts owns the groups and runs JoinGroup, SyncGroup, Heartbeat and LeaveGroup;
 * - offset-store.ts owns the committed offsets: OffsetCommit, OffsetFetch, OffsetDelete, DeleteGroups,
 *   expiry and the offsets of deleted topics;
 * - partition-writer.ts appends their records to the partition.
 *
 * Kafka counterpart: `GroupCoordinatorShard` (one shard per __consumer_offsets partition, composing
 * GroupMetadataManager and OffsetMetadataManager) with the classic `GroupCoordinator`'s request entry
 * points.
 */
import type { Actor, ActorContext, ActorRef, Envelope, EnvelopeOf } from '../runtime/actor';
import { ErrorCode } from '../protocol/error-codes';
import { awaitLeaderHighWatermark, LeadershipMovedError, loadGroups, type LoadedGroups } from './group-loader';
import { OffsetStore, type OffsetStoreConfig } from './offset-store';
import { PartitionWriter } from './partition-writer';
import { Rebalancer, type RebalanceConfig } from './rebalance';
import type {
  CoordinatorErrorReply,
  DescribedGroup,
  GroupCoordinatorMessages,
  ListedGroup,
  ListRequest,
  PartitionLeaderMessages,
} from './messages';

/** How long a coordinator whose replica does not lead waits before it asks the replica again (ms). */
const NOT_LEADER_RETRY_MS = 500;

/** Broker settings a coordinator follows (Kafka's GroupCoordinatorConfig names, in ms). */
export interface GroupCoordinatorConfig extends RebalanceConfig, OffsetStoreConfig {}

/** Spawn arguments. */
export interface GroupCoordinatorArgs {
  /** The __consumer_offsets partition this coordinator owns. */
  partition: number;
  /** The partition's leader replica (where records are written and read). */
  replicaActor: ActorRef<PartitionLeaderMessages>;
  config: GroupCoordinatorConfig;
}

export class GroupCoordinatorActor implements Actor<GroupCoordinatorMessages> {
  private readonly rebalancer: Rebalancer;
  private readonly offsets: OffsetStore;
  private loaded = false;
  private stopped = false;
  /**
   * The replica said it does not lead (or could not be reached) before the load: requests get
   * NOT_COORDINATOR, so clients look the coordinator up again; the replica manager stops this actor
   * when the image moves leadership away, and the wait is retried meanwhile.
   */
  private notLeader = false;

  constructor(private readonly args: GroupCoordinatorArgs) {
    const writer = new PartitionWriter(args.replicaActor);
    this.rebalancer = new Rebalancer(args.config, writer);
    this.offsets = new OffsetStore(args.config, args.partition, writer, this.rebalancer);
  }

  start(ctx: ActorContext): void {
    void this.load(ctx).catch((error) => {
      // The partition could not be read: crash, so the supervisor restarts and loading is retried.
      ctx.log.error({ partition: this.args.partition, error: String(error) }, 'loading groups failed');
      throw error;
    });
  }

  stop(ctx: ActorContext): void {
    this.stopped = true;
    this.rebalancer.stop(ctx);
    this.offsets.stop(ctx);
  }

  receive(envelope: EnvelopeOf<GroupCoordinatorMessages>, ctx: ActorContext): void | Promise<void> {
    // The runtime delivers any kind sent to this id: `unknown` keeps a handle for the default branch.
    const unknown: Envelope = envelope;
    if (envelope.type === 'group.topics-deleted') {
      // Kept across loading: offsets of a deleted topic must not come back with the groups.
      this.offsets.addDeletedTopics(envelope.body.topics);
      ctx.reply(envelope, {});
      if (this.loaded) this.offsets.dropDeletedTopicOffsets(ctx);
      return;
    }
    if (!this.loaded) {
      const errorCode = this.notLeader ? ErrorCode.NOT_COORDINATOR : ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
      if (envelope.type === 'group.list') ctx.reply(envelope, { errorCode, groups: [] });
      else ctx.reply(unknown, { errorCode, loading: true } satisfies CoordinatorErrorReply);
      return;
    }
    switch (envelope.type) {
      case 'group.join':
        return this.rebalancer.join(envelope, envelope.body, ctx);
      case 'group.sync':
        return this.rebalancer.sync(envelope, envelope.body, ctx);
      case 'group.heartbeat':
        return ctx.reply(envelope, { errorCode: this.rebalancer.heartbeat(envelope.body.request, ctx) });
      case 'group.leave':
        return ctx.reply(envelope, this.rebalancer.leave(envelope.body.request, ctx));
      case 'group.commit':
        return this.offsets.commit(envelope, envelope.body.request, envelope.body.version, ctx);
      case 'group.fetch-offsets':
        return ctx.reply(envelope, this.offsets.fetch(envelope.body.request));
      case 'group.list':
        return ctx.reply(envelope, { errorCode: ErrorCode.NONE, groups: this.list(envelope.body) });
      case 'group.describe':
        return ctx.reply(
          envelope,
          envelope.body.request.groupIds.map((id) => this.describe(id)),
        );
      case 'group.delete-groups':
        return this.offsets.deleteGroups(envelope, envelope.body.request.groupIds, ctx);
      case 'group.offset-delete':
        return this.offsets.offsetDelete(envelope, envelope.body.request, ctx);
      default:
        ctx.log.warn({ type: unknown.type }, 'group coordinator: unknown message');
        ctx.reply(unknown, { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR } satisfies CoordinatorErrorReply);
    }
  }

  /**
   * Waits until the partition's HW reached the start of the leader's epoch, then reads the partition
   * and hands the groups over (Kafka's loadGroupsAndOffsets, then onLoaded).
   */
  private async load(ctx: ActorContext): Promise<void> {
    const source = { partition: this.args.partition, replicaActor: this.args.replicaActor };
    let loaded: LoadedGroups | null = null;
    while (loaded === null) {
      const wait = await awaitLeaderHighWatermark(source, ctx, () => !this.stopped);
      if (this.stopped) return;
      if (wait.kind === 'ready') {
        this.notLeader = false;
        ctx.log.debug({ partition: this.args.partition, ...wait }, 'group coordinator: HW reached the epoch start');
        try {
          loaded = await loadGroups(source, ctx);
          continue; // loaded: the loop ends
        } catch (error) {
          // Leadership moved between the wait and the read: wait for it again, as when it does not lead.
          if (!(error instanceof LeadershipMovedError)) throw error;
          if (this.stopped) return;
          this.noteNotLeader(ctx, error.errorCode);
        }
      } else {
        this.noteNotLeader(ctx, wait.errorCode);
      }
      await new Promise<void>((resolve) => ctx.timers.setTimeout(resolve, NOT_LEADER_RETRY_MS));
      if (this.stopped) return;
    }
    const { groups, records, loadMs } = loaded;
    if (this.stopped) return;
    this.rebalancer.adoptLoadedGroups(groups, ctx);
    this.loaded = true;
    this.offsets.onLoaded(ctx);
    // One per __consumer_offsets partition, so at debug: the broker logs one line for the whole start.
    ctx.log.debug({ partition: this.args.partition, groups: groups.size, records, loadMs }, 'group coordinator loaded');
  }

  /** The replica does not lead: NOT_COORDINATOR until it does (logged once per spell). */
  private noteNotLeader(ctx: ActorContext, errorCode: number): void {
    if (!this.notLeader)
      ctx.log.info(
        { partition: this.args.partition, errorCode },
        'group coordinator: its replica does not lead; answering NOT_COORDINATOR until it does',
      );
    this.notLeader = true;
  }

  /** ListGroups: the groups in the filtered states (all of Skiff's groups are "classic"). */
  private list(body: ListRequest): ListedGroup[] {
    const states = new Set(body.statesFilter.map((s) => s.toLowerCase()));
    const types = new Set(body.typesFilter.map((s) => s.toLowerCase()));
    if (types.size > 0 && !types.has('classic')) return [];
    return [...this.rebalancer.groups.values()]
      .filter((g) => !g.is('Dead') && (states.size === 0 || states.has(g.state.toLowerCase())))
      .map((g) => g.asListedGroup());
  }

  /** DescribeGroups of one group; an unknown group is GROUP_ID_NOT_FOUND in state Dead, as in Kafka. */
  private describe(groupId: string): DescribedGroup {
    const group = this.rebalancer.groups.get(groupId);
    if (group && !group.is('Dead')) return group.asDescribedGroup();
    return {
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      groupId,
      groupState: 'Dead',
      protocolType: '',
      protocolData: '',
      members: [],
    };
  }
}

/** Actor factory registered as kind `group-coordinator` (src/runtime/registry.ts). */
export function createGroupCoordinatorActor(args: GroupCoordinatorArgs): Actor<GroupCoordinatorMessages> {
  return new GroupCoordinatorActor(args);
}
