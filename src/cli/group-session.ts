/**
 * Consuming as a member of a consumer group, for `skiff consume --group` and `skiff perf consume
 * --group`: a {@link GroupMember} (src/client/group-member.ts) for the partitions, a fetcher per
 * generation for the records, and the commit mode the user picked.
 *
 * The commit modes are the choices every Kafka tutorial weighs. "Processed" means printed (consume)
 * or counted (perf consume); a commit is always the offset after the last processed record of a
 * partition, never past a record the command has not processed:
 *
 * | mode        | commits (synchronous OffsetCommit unless noted)                                     |
 * |-------------|-------------------------------------------------------------------------------------|
 * | `auto`      | every `--auto-commit-interval-ms` (auto.commit.interval.ms, 5000), checked after each poll as Kafka's consumer does, before a rebalance, and on exit |
 * | `record`    | after each record                                                                   |
 * | `partition` | after each poll, one commit per partition of that poll's records for it             |
 * | `batch`     | after each poll, one commit of all its records                                      |
 * | `none`      | never (the next run starts from the group's older commits, or the reset policy)     |
 *
 * Where the group has no committed offset for a partition, it starts at the reset policy
 * (auto.offset.reset: `earliest` with --from-beginning, else `latest`, as kafka-console-consumer).
 * The range assignor is eager: at each rebalance every partition is given up and the new
 * assignment starts from the committed offsets (so with `none` a rebalance starts over).
 * A commit refused because the generation ended (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION,
 * UNKNOWN_MEMBER_ID) is lost, as Kafka's CommitFailedException: the records after the last good
 * commit go to the partition's next owner again (at least once). It is reported on stderr.
 */
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, type KafkaClient } from '../client/client';
import { Consumer, type Assignment, type ConsumedRecord } from '../client/consumer';
import { KafkaError } from '../client/errors';
import type { GroupOffsets } from '../client/group-admin';
import { GroupMember, REJOIN_ERRORS, type GroupGeneration, type MemberOffset } from '../client/group-member';

/** `--commit`: when a group member commits its offsets (see the module comment). */
export type CommitMode = 'auto' | 'record' | 'partition' | 'batch' | 'none';
/** Every commit mode, for `--commit`'s choices. */
export const COMMIT_MODES: readonly CommitMode[] = ['auto', 'record', 'partition', 'batch', 'none'];
/** auto.commit.interval.ms's default (Kafka's). */
export const DEFAULT_AUTO_COMMIT_INTERVAL_MS = 5000;

/** auto.offset.reset: where a partition without a committed offset starts. */
export type OffsetReset = 'earliest' | 'latest';

/** The group part of `skiff consume` / `skiff perf consume` arguments. */
export interface GroupArgs {
  groupId: string;
  commit: CommitMode;
  autoCommitIntervalMs: number;
}

/** What the session needs of a group member (GroupMember; a fake in unit tests). */
export interface MemberPort {
  readonly needsRejoin: boolean;
  join(): Promise<GroupGeneration>;
  committed(partitions: ReadonlyMap<string, readonly number[]>): Promise<GroupOffsets>;
  commit(offsets: readonly MemberOffset[]): Promise<void>;
  close(): Promise<void>;
}

/** What the session needs of a fetcher of assigned partitions (Consumer; a fake in unit tests). */
export interface FetcherPort {
  poll(): Promise<ConsumedRecord[]>;
  allAtEnd(): boolean;
  refreshEndOffsets(): Promise<void>;
}

/** The session's collaborators. */
export interface SessionPorts {
  member: MemberPort;
  /** A fetcher for one generation's assignment, starting at the given offsets. */
  newFetcher(assignments: readonly Assignment[]): FetcherPort;
  /** The reset-policy offsets of partitions without a committed offset (ListOffsets). */
  resetOffsets(topic: string, partitions: readonly number[], reset: OffsetReset): Promise<Map<number, number>>;
  /** Monotonic ms. */
  nowMs(): number;
  /** A line on stderr. */
  warn(line: string): void;
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** One run of a group member: join, poll, mark records processed, commit by the mode, close. */
export class GroupSession {
  private fetcher: FetcherPort | null = null;
  /** Offset after the last processed record, per partition of the current generation. */
  private readonly processedOffsets = new Map<string, MemberOffset>();
  /** Partitions processed in the current poll (for `partition` and `batch`). */
  private readonly thisPoll = new Set<string>();
  /** The last offset committed per partition during this run (for the summary). */
  readonly committedOffsets = new Map<string, MemberOffset>();
  /** The group's committed offsets of the assigned partitions as of the last join (OffsetFetch). */
  private readonly groupOffsetsAtJoin = new Map<string, MemberOffset>();
  /** OffsetCommit requests that succeeded. */
  commits = 0;
  /** Rebalances after the first join. */
  rebalances = 0;
  private lastAutoCommitMs: number;

  constructor(
    private readonly ports: SessionPorts,
    private readonly options: {
      mode: CommitMode;
      autoCommitIntervalMs: number;
      reset: OffsetReset;
      exitAtEnd?: boolean;
    },
  ) {
    this.lastAutoCommitMs = ports.nowMs();
  }

  /** The current generation's partitions (empty before the first join). */
  assignment: Map<string, number[]> = new Map();

  /** Joins the group and sets up fetching of the assignment. */
  async start(): Promise<void> {
    await this.rejoin();
  }

  /** Whether every assigned partition is read to its end (for --exit-at-end); true with no partitions. */
  allAtEnd(): boolean {
    return this.fetcher?.allAtEnd() ?? false;
  }

  /**
   * One poll: rejoins first when the generation ended (committing what was processed first in
   * `auto` mode, as Kafka's onJoinPrepare), then fetches. Call {@link processed} for each record
   * handled and {@link endOfPoll} after the poll's records.
   */
  async poll(): Promise<ConsumedRecord[]> {
    if (this.ports.member.needsRejoin || this.fetcher === null) {
      if (this.options.mode === 'auto') await this.commitPending([...this.processedOffsets.keys()]);
      await this.rejoin();
      this.rebalances++;
    }
    this.thisPoll.clear();
    return this.fetcher!.poll();
  }

  /** Marks `record` processed; in `record` mode commits it (resolves once committed). */
  async processed(record: ConsumedRecord): Promise<void> {
    const k = key(record.topic, record.partition);
    this.processedOffsets.set(k, { topic: record.topic, partition: record.partition, offset: record.offset + 1 });
    this.thisPoll.add(k);
    if (this.options.mode === 'record') await this.commitPending([k]);
  }

  /** After a poll's records were processed: the `partition`, `batch` and `auto` commits. */
  async endOfPoll(): Promise<void> {
    const touched = [...this.thisPoll];
    this.thisPoll.clear();
    switch (this.options.mode) {
      case 'partition':
        for (const k of touched) await this.commitPending([k]);
        return;
      case 'batch':
        await this.commitPending(touched);
        return;
      case 'auto':
        if (this.ports.nowMs() - this.lastAutoCommitMs >= this.options.autoCommitIntervalMs) {
          this.lastAutoCommitMs = this.ports.nowMs();
          await this.commitPending([...this.processedOffsets.keys()]);
        }
        return;
      case 'record':
      case 'none':
        return;
    }
  }

  /** Ends the run: the final commit in `auto` mode (Kafka's consumer commits on close), then LeaveGroup. */
  async close(): Promise<void> {
    try {
      if (this.options.mode === 'auto' && !this.ports.member.needsRejoin)
        await this.commitPending([...this.processedOffsets.keys()]);
    } finally {
      await this.ports.member.close();
    }
  }

  /**
   * `committed cli-t/0=5 cli-t/1=3 (--commit batch, 4 commits)`: what this run committed, the
   * committed offset per partition (the next offset the group will read), or that it committed nothing
   * and what the group had committed already (as of joining: a Kafka user's next run starts there).
   */
  summary(groupId: string): string {
    const list = sortedOffsets(this.committedOffsets);
    const group = sortedOffsets(this.groupOffsetsAtJoin);
    const what =
      list.length > 0
        ? `committed ${formatOffsets(list)}`
        : group.length > 0
          ? `this run committed nothing; the group's committed offsets are unchanged: ${formatOffsets(group)}`
          : 'this run committed nothing; the group has no committed offsets for these partitions';
    return `group ${groupId}: ${what} (--commit ${this.options.mode}, ${this.commits} commit${this.commits === 1 ? '' : 's'})`;
  }

  private async commitPending(keys: readonly string[]): Promise<void> {
    const offsets: MemberOffset[] = [];
    for (const k of keys) {
      const o = this.processedOffsets.get(k);
      if (o !== undefined && this.committedOffsets.get(k)?.offset !== o.offset) offsets.push({ ...o });
    }
    if (offsets.length === 0) return;
    try {
      await this.ports.member.commit(offsets);
    } catch (err) {
      if (err instanceof KafkaError && REJOIN_ERRORS.has(err.code)) {
        this.ports.warn(
          `skiff: commit of ${offsets.map((o) => `${o.topic}/${o.partition}=${o.offset}`).join(' ')} lost to a rebalance (${err.errorName}); those records go to the partition's next owner again`,
        );
        return;
      }
      throw err;
    }
    this.commits++;
    for (const o of offsets) this.committedOffsets.set(key(o.topic, o.partition), o);
  }

  private async rejoin(): Promise<void> {
    const generation = await this.ports.member.join();
    this.assignment = generation.assignment;
    this.processedOffsets.clear();
    this.thisPoll.clear();
    const committed = await this.ports.member.committed(generation.assignment);
    this.groupOffsetsAtJoin.clear();
    for (const [topic, partitions] of committed)
      for (const [partition, c] of partitions)
        if (c.offset >= 0) this.groupOffsetsAtJoin.set(key(topic, partition), { topic, partition, offset: c.offset });
    const assignments: Assignment[] = [];
    for (const [topic, partitions] of generation.assignment) {
      const fromGroup = committed.get(topic);
      const missing = partitions.filter((p) => !((fromGroup?.get(p)?.offset ?? -1) >= 0));
      const reset = missing.length > 0 ? await this.ports.resetOffsets(topic, missing, this.options.reset) : new Map();
      for (const p of partitions) {
        const offset = fromGroup?.get(p)?.offset ?? -1;
        assignments.push({ topic, partition: p, offset: offset >= 0 ? offset : (reset.get(p) ?? 0) });
      }
    }
    this.fetcher = this.ports.newFetcher(assignments);
    if (this.options.exitAtEnd === true) await this.fetcher.refreshEndOffsets();
  }
}

/** The offsets of `offsets` by topic, then partition. */
function sortedOffsets(offsets: ReadonlyMap<string, MemberOffset>): MemberOffset[] {
  return [...offsets.values()].sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
  );
}

/** `t/0=5 t/1=3`. */
function formatOffsets(offsets: readonly MemberOffset[]): string {
  return offsets.map((o) => `${o.topic}/${o.partition}=${o.offset}`).join(' ');
}

/** The real ports: a {@link GroupMember} and a {@link Consumer} per generation on `client`. */
export function groupSessionPorts(
  client: KafkaClient,
  groupId: string,
  topics: readonly string[],
  maxWaitMs: number,
  warn: (line: string) => void,
): SessionPorts {
  return {
    member: new GroupMember(client, { groupId, topics, clientId: 'skiff-cli', onWarning: warn }),
    newFetcher: (assignments) => {
      const consumer = new Consumer(client, { maxWaitMs, onWarning: warn });
      consumer.assign(assignments);
      return consumer;
    },
    resetOffsets: async (topic, partitions, reset) => {
      const timestamp = reset === 'earliest' ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP;
      const found = await client.listOffsets(
        topic,
        partitions.map((partition) => ({ partition, timestamp })),
      );
      return new Map([...found].map(([p, o]) => [p, o.offset]));
    },
    nowMs: () => performance.now(),
    warn,
  };
}
