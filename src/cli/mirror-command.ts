/**
 * `skiff mirror --to HOST:PORT [--brokers SRC] [--topics REGEX] [--groups REGEX] [--follow]`: copies
 * topics and consumer groups' committed offsets from the source cluster (Skiff, or any Kafka-
 * compatible cluster) into another Kafka-compatible cluster, for moving off Skiff without touching
 * client code. MirrorMaker 2 (connect-mirror) does this between Kafka clusters; this is a small,
 * single-process version on Skiff's own client (src/client/).
 *
 * What is copied:
 * - Topics whose name matches `--topics` (the whole name; default every topic), never Kafka's internal
 *   ones (__consumer_offsets, __transaction_state, ...). A missing target topic is created with the
 *   source's partition count, the target's default replication factor and the source's config
 *   overrides (DescribeConfigs source DYNAMIC_TOPIC_CONFIG), except the keys MirrorMaker 2's
 *   DefaultConfigPropertyFilter leaves out (cluster-specific ones, and message.timestamp.type: the
 *   copy keeps the source's timestamps) and any the target refuses (each is tried on its own with
 *   CreateTopics validateOnly; the refused ones are named in the output). An existing target topic
 *   must have the same partition count; its configs are left as they are.
 * - Records, partition to partition, in source offset order, with keys, values (tombstones too),
 *   headers and timestamps (written as CreateTime, so LogAppendTime values survive as they were).
 *   Control batches of transactions are not copied. Writes are uncompressed Produce requests with
 *   acks=all, one in flight per partition, each awaited before the next (no retries): the target's
 *   acknowledged base offset then gives every record's target offset exactly, and after a failure
 *   the target holds an in-order prefix of the source.
 * - Committed offsets of consumer groups whose id matches `--groups` (default all) and that are
 *   Empty on the source (a live group keeps moving its offsets: it is skipped and the output says
 *   so). A committed source offset C becomes the target offset of the first copied record whose
 *   source offset is >= C, or the target partition's log-end offset when C is past every copied
 *   record. Source and target offsets differ where the source has compaction gaps, control batches
 *   or a log start moved by retention or DeleteRecords. Offsets are committed as an admin
 *   (OffsetCommit generation -1), only into a target group that is Empty or unknown (a live target
 *   group is never touched), and never backwards: a target offset already ahead of the translated
 *   one is kept, as MirrorMaker 2's checkpoint sync does, so consumers that moved to the target and
 *   committed there are not rewound by a later run. Every group partition gets one output line per
 *   run (committed now, already there, kept, or not committed and why), and a group with nothing to
 *   mirror says so, so a final run shows every group's position (README's migration step 4).
 *
 * Where the mapping lives (choice): in the target's records themselves. Every copied record
 * carries the header `skiff.mirror.source.offset` (mirror-offset-map.ts) with its source offset.
 * A run first reads each target partition once, rebuilds the mapping from those headers and
 * resumes the copy after the highest source offset found, so a re-run or a run after a crash never
 * duplicates a record and never needs a side file: the mapping is written in the same batch as the
 * data, so the two cannot disagree, whatever was interrupted. The costs: target consumers see one
 * extra header per record, and a run starts by reading the target's copy. A target partition that
 * holds records without the header (not written by `skiff mirror`) is refused.
 *
 * With `--follow` it keeps copying new records (and new matching topics) and re-translates group
 * offsets every `--group-interval-ms`, until SIGINT or SIGTERM; it then finishes the writes in
 * flight, mirrors group offsets once more and exits 0. Without it, it copies up to the source's
 * high watermarks as they were at the start, mirrors group offsets (copying further first where a
 * committed offset is past what was copied) and exits: 0 when everything was mirrored, 1 when a
 * topic was refused, a commit failed or the run was interrupted.
 */
import { Command, InvalidArgumentError } from 'commander';
import { EARLIEST_TIMESTAMP, KafkaClient, LATEST_TIMESTAMP, type TopicMetadata } from '../client/client';
import { buildBatch } from '../client/batch';
import { Consumer, type ConsumedRecord } from '../client/consumer';
import { KafkaError, throwIfError } from '../client/errors';
import {
  commitGroupOffsets,
  describeGroup,
  fetchGroupOffsets,
  listGroups,
  type OffsetToCommit,
} from '../client/group-admin';
import { ApiKey } from '../protocol/api-keys';
import { ErrorCode, errorName } from '../protocol/error-codes';
import type { BuildRecord } from '../protocol/record-batch/builder';
import { EXIT_FAILURE, formatTable, startProgress, type CliIo } from './client-io';
import { decodeSourceOffset, encodeSourceOffset, MirrorOffsetMap, SOURCE_OFFSET_HEADER } from './mirror-offset-map';
import { describeTopicConfigs } from './topic-command';

/** Arguments of `skiff mirror`. */
export interface MirrorArgs {
  /** Target bootstrap broker(s), `host:port[,host:port...]`. */
  to: string;
  /** Topics to copy (matched against the whole name), null for every non-internal topic. */
  topics: RegExp | null;
  /** Groups whose offsets to copy (whole id), null for every group. */
  groups: RegExp | null;
  /** Keep copying until SIGINT / SIGTERM. */
  follow: boolean;
  /** With follow: how often group offsets are re-translated and new topics looked for (ms). */
  groupIntervalMs: number;
}

/** Registers a listener for a termination signal and returns a function that removes it. */
export type OnTerminate = (listener: () => void) => () => void;

/** Kafka's internal topics: never copied as topics (group offsets are mirrored by translation). */
const INTERNAL_TOPICS: ReadonlySet<string> = new Set([
  '__consumer_offsets',
  '__transaction_state',
  '__share_group_state',
]);

/**
 * Topic config overrides not copied, after MirrorMaker 2's DefaultConfigPropertyFilter
 * (`config.properties.exclude` default), with the reason printed.
 */
const EXCLUDED_CONFIGS: ReadonlyMap<string, string> = new Map([
  ['follower.replication.throttled.replicas', 'it names brokers of the source cluster'],
  ['leader.replication.throttled.replicas', 'it names brokers of the source cluster'],
  ['min.insync.replicas', 'it depends on the target cluster size; set it on the target'],
  ['unclean.leader.election.enable', 'it is a choice for the target cluster; set it on the target'],
  ['message.timestamp.difference.max.ms', 'old records would be refused by the target'],
  [
    'message.timestamp.type',
    'the copy keeps the source timestamps (LogAppendTime would rewrite them); set it on the target after the move',
  ],
]);

/** Records and (uncompressed) bytes per Produce batch: well under Kafka's default 1 MiB message.max.bytes. */
const BATCH_MAX_RECORDS = 500;
const BATCH_MAX_BYTES = 512 * 1024;
/** The Produce request's timeoutMs; the client waits this plus a margin. */
const PRODUCE_TIMEOUT_MS = 30_000;
/** How long a newly created target topic may take to have leaders for every partition. */
const TOPIC_READY_TIMEOUT_MS = 30_000;
/** Fetch wait of the copying consumer in a bounded pass and while following. */
const PASS_MAX_WAIT_MS = 100;
const FOLLOW_MAX_WAIT_MS = 500;
/**
 * Polls in a row that fetch nothing and move no position before a partition whose position is below
 * its high watermark is taken as caught up (the records in between are gone: a compaction gap at the
 * tail), so a bounded pass cannot spin forever.
 */
const EMPTY_POLLS_BEFORE_SKIP = 3;

/**
 * Errors with which a broker refuses a request without acting on it (for Produce: nothing was
 * appended), so that it may be sent again once metadata is fresh: a new target topic's partitions
 * answer NOT_LEADER_OR_FOLLOWER for a moment after Metadata already names their leader.
 */
const NOT_ACTED_ON: ReadonlySet<number> = new Set([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
]);
const RETRIES = 40;
const RETRY_BACKOFF_MS = 250;

/** A topic or group that is not mirrored, with the reason (printed; the run exits 1). */
class MirrorRefusal extends Error {}

/** The copy state of one partition. */
interface PartitionCopy {
  topic: string;
  partition: number;
  /** Source offset -> target offset of every copied record still on the target (and those of this run). */
  map: MirrorOffsetMap;
  /** The next source offset to copy: every source record below it is on the target (or gone from the source). */
  position: number;
  /** The target partition's log-end offset. */
  targetEnd: number;
  /** The target partition's leader (node id). */
  targetLeader: number;
  /** Records copied by this run. */
  copied: number;
}

const partitionKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `attempt` until it does not reject with a KafkaError in {@link NOT_ACTED_ON}, calling
 * `refresh` (new metadata) before each retry; bounded by {@link RETRIES}.
 */
async function retryNotActedOn<T>(attempt: () => Promise<T>, refresh: () => Promise<void>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof KafkaError) || !NOT_ACTED_ON.has(err.code) || i >= RETRIES) throw err;
    }
    await sleep(RETRY_BACKOFF_MS);
    await refresh();
  }
}

/** `SIGTERM` on the real process. */
export const processOnTerminate: OnTerminate = (listener) => {
  process.once('SIGTERM', listener);
  return () => process.off('SIGTERM', listener);
};

/**
 * `skiff mirror`: connects to the target, then copies as the module docstring says. Resolves with
 * the exit code; connection failures and Kafka errors outside a single topic or group reject (the
 * caller reports them, exit 1).
 */
export async function mirrorCommand(
  source: KafkaClient,
  args: MirrorArgs,
  io: CliIo,
  onTerminate: OnTerminate = processOnTerminate,
): Promise<number> {
  const target = await KafkaClient.connect({ brokers: args.to, clientId: 'skiff-mirror' });
  const mirror = new Mirror(source, target, args, io);
  io.onInterrupt(() => mirror.stop());
  const unsubscribe = onTerminate(() => mirror.stop());
  try {
    return await mirror.run();
  } finally {
    unsubscribe();
    target.close();
  }
}

class Mirror {
  private readonly partitions = new Map<string, PartitionCopy>();
  /** Topics already set up or refused (by name). */
  private readonly topicsSeen = new Set<string>();
  private readonly consumer: Consumer;
  /** The last note printed per key, so that --follow does not repeat itself every pass. */
  private readonly notes = new Map<string, string>();
  private stopped = false;
  private failed = false;
  private stopWaiter: (() => void) | null = null;

  constructor(
    private readonly source: KafkaClient,
    private readonly target: KafkaClient,
    private readonly args: MirrorArgs,
    private readonly io: CliIo,
  ) {
    this.consumer = new Consumer(source, { maxWaitMs: args.follow ? FOLLOW_MAX_WAIT_MS : PASS_MAX_WAIT_MS });
  }

  stop(): void {
    this.stopped = true;
    this.stopWaiter?.();
  }

  async run(): Promise<number> {
    await this.io.out(`mirror: ${this.source.bootstrapConnection.address} -> ${this.args.to}\n`);
    const progress = startProgress(() => this.io.err(`mirror: ${this.totalCopied()} records copied`));
    try {
      await this.discoverTopics();
      await this.copyPass();
      if (this.stopped && !this.args.follow) {
        await this.printSummary();
        await this.io.out('mirror: interrupted before the copy was complete; group offsets not mirrored\n');
        return EXIT_FAILURE;
      }
      await this.mirrorGroups();
      if (this.args.follow) {
        await this.io.out('mirror: caught up; following new records (SIGINT or SIGTERM to stop)\n');
        let nextGroupsAtMs = Date.now() + this.args.groupIntervalMs;
        while (!this.stopped) {
          if (this.partitions.size > 0) await this.pollOnce();
          else await this.sleepUnlessStopped(FOLLOW_MAX_WAIT_MS);
          if (!this.stopped && Date.now() >= nextGroupsAtMs) {
            await this.discoverTopics();
            await this.mirrorGroups();
            nextGroupsAtMs = Date.now() + this.args.groupIntervalMs;
          }
        }
        // The last writes are acknowledged (pollOnce awaits them): mirror group offsets once more.
        await this.mirrorGroups();
        await this.io.out('mirror: stopped\n');
      }
      await this.printSummary();
      return this.failed ? EXIT_FAILURE : 0;
    } finally {
      progress.stop();
    }
  }

  private totalCopied(): number {
    let n = 0;
    for (const c of this.partitions.values()) n += c.copied;
    return n;
  }

  private async sleepUnlessStopped(ms: number): Promise<void> {
    await Promise.race([sleep(ms), new Promise<void>((resolve) => (this.stopWaiter = resolve))]);
    this.stopWaiter = null;
  }

  /**
   * Prints `line` unless `state` (default the line itself) was the last one noted for `key`: a
   * partition whose translated offset was just committed is not reported again as already there by
   * the next pass of --follow.
   */
  private async note(key: string, line: string, state: string = line): Promise<void> {
    if (this.notes.get(key) === state) return;
    this.notes.set(key, state);
    await this.io.out(`${line}\n`);
  }

  // ---- topics ---------------------------------------------------------------------------------

  /** Sets up every matching source topic not seen yet: the target topic, the mapping, the resume offsets. */
  private async discoverTopics(): Promise<void> {
    const md = await this.source.metadata(null);
    for (const t of [...md.topics].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (this.stopped) return;
      if (t.errorCode !== ErrorCode.NONE || t.isInternal || INTERNAL_TOPICS.has(t.name)) continue;
      if (this.args.topics !== null && !this.args.topics.test(t.name)) continue;
      if (this.topicsSeen.has(t.name)) continue;
      this.topicsSeen.add(t.name);
      try {
        await this.setUpTopic(t);
      } catch (err) {
        if (!(err instanceof MirrorRefusal) && !(err instanceof KafkaError)) throw err;
        this.failed = true;
        await this.io.out(`topic ${t.name}: not mirrored: ${err.message}\n`);
      }
    }
  }

  private async setUpTopic(source: TopicMetadata): Promise<void> {
    const name = source.name;
    const found = (await this.target.metadata([name])).topics.find((t) => t.name === name);
    if (found === undefined || found.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
      await this.createTargetTopic(source);
    } else {
      throwIfError(found.errorCode, `target topic ${name}`);
      if (found.partitions.length !== source.partitions.length)
        throw new MirrorRefusal(
          `the target topic has ${found.partitions.length} partitions, the source ${source.partitions.length}; ` +
            'records are copied partition to partition, so the counts must match',
        );
      await this.io.out(`topic ${name}: exists on the target with ${found.partitions.length} partitions\n`);
    }
    let target = await this.waitForLeaders(name, source.partitions.length);
    const all = source.partitions.map((p) => p.partition);
    const refreshTarget = async (): Promise<void> => {
      target = await this.waitForLeaders(name, source.partitions.length);
    };
    const sourceStarts = await this.source.listOffsets(
      name,
      all.map((partition) => ({ partition, timestamp: EARLIEST_TIMESTAMP })),
      source,
    );
    const targetStarts = await retryNotActedOn(
      () =>
        this.target.listOffsets(
          name,
          all.map((partition) => ({ partition, timestamp: EARLIEST_TIMESTAMP })),
          target,
        ),
      refreshTarget,
    );
    const targetEnds = await retryNotActedOn(
      () =>
        this.target.listOffsets(
          name,
          all.map((partition) => ({ partition, timestamp: LATEST_TIMESTAMP })),
          target,
        ),
      refreshTarget,
    );
    const maps = await this.readTargetMapping(target, targetStarts, targetEnds);
    const copies: PartitionCopy[] = [];
    for (const p of target.partitions) {
      const map = maps.get(p.partition) ?? new MirrorOffsetMap();
      const targetEnd = targetEnds.get(p.partition)?.offset ?? 0;
      const sourceStart = sourceStarts.get(p.partition)?.offset ?? 0;
      const where = `topic ${name} partition ${p.partition}`;
      if (map.lastSourceOffset < 0 && targetEnd > (targetStarts.get(p.partition)?.offset ?? 0))
        throw new MirrorRefusal(`${where}: the target holds records but none carries ${SOURCE_OFFSET_HEADER}`);
      if (map.lastSourceOffset < 0 && targetEnd > 0)
        throw new MirrorRefusal(
          `${where}: the target's log-end offset is ${targetEnd} but it holds no record to resume from ` +
            '(removed by retention?); delete the target topic to copy it again',
        );
      const resumeFrom = map.lastSourceOffset + 1;
      if (map.lastSourceOffset >= 0) {
        await this.io.out(
          `${where}: resuming after source offset ${map.lastSourceOffset} (target log-end offset ${targetEnd})\n`,
        );
        if (sourceStart > resumeFrom)
          await this.io.out(
            `${where}: source offsets ${resumeFrom}-${sourceStart - 1} were removed from the source ` +
              '(retention or DeleteRecords) before they were copied\n',
          );
      }
      copies.push({
        topic: name,
        partition: p.partition,
        map,
        position: Math.max(resumeFrom, sourceStart),
        targetEnd,
        targetLeader: p.leader,
        copied: 0,
      });
    }
    for (const c of copies) this.partitions.set(partitionKey(c.topic, c.partition), c);
    this.consumer.assign(copies.map((c) => ({ topic: c.topic, partition: c.partition, offset: c.position })));
  }

  /** CreateTopics on the target with the source's partition count and the copyable config overrides. */
  private async createTargetTopic(source: TopicMetadata): Promise<void> {
    const name = source.name;
    const described = await describeTopicConfigs(this.source, name);
    const configs: Record<string, string> = {};
    const lines: string[] = [];
    if (typeof described === 'string') {
      lines.push(`topic ${name}: configs not copied: ${described}`);
    } else {
      for (const c of described) {
        if (c.source !== 'DYNAMIC_TOPIC_CONFIG' || c.value === null) continue;
        const excluded = EXCLUDED_CONFIGS.get(c.name);
        if (c.isSensitive) lines.push(`topic ${name}: config ${c.name} not copied: it is sensitive`);
        else if (excluded !== undefined)
          lines.push(`topic ${name}: config ${c.name}=${c.value} not copied: ${excluded}`);
        else configs[c.name] = c.value;
      }
    }
    const newTopic = (cfg: Record<string, string>) => ({
      name,
      numPartitions: source.partitions.length,
      replicationFactor: -1,
      configs: cfg,
    });
    let [result] = await this.target.createTopics([newTopic(configs)]);
    if (
      result !== undefined &&
      (result.errorCode === ErrorCode.INVALID_CONFIG || result.errorCode === ErrorCode.POLICY_VIOLATION)
    ) {
      // Find the overrides the target refuses, one at a time, and create the topic without them.
      for (const [key, value] of Object.entries(configs)) {
        const [check] = await this.target.createTopics([newTopic({ [key]: value })], { validateOnly: true });
        if (check !== undefined && check.errorCode !== ErrorCode.NONE) {
          delete configs[key];
          lines.push(
            `topic ${name}: config ${key}=${value} not copied: the target refused it ` +
              `(${errorName(check.errorCode)}${check.errorMessage ? `: ${check.errorMessage}` : ''})`,
          );
        }
      }
      [result] = await this.target.createTopics([newTopic(configs)]);
    }
    if (result === undefined) throw new MirrorRefusal('CreateTopics on the target answered no result');
    if (result.errorCode !== ErrorCode.NONE && result.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS)
      throw new KafkaError(result.errorCode, `CreateTopics ${name} on the target`, result.errorMessage);
    const copied = Object.entries(configs).map(([k, v]) => `${k}=${v}`);
    await this.io.out(
      `topic ${name}: created on the target with ${source.partitions.length} partitions` +
        `${copied.length > 0 ? `, configs ${copied.join(', ')}` : ''}\n`,
    );
    for (const line of lines) await this.io.out(`${line}\n`);
  }

  /**
   * Target metadata of `name` once it has `partitions` partitions (0: any number) and each has a
   * leader (a new topic takes a moment); throws MirrorRefusal after {@link TOPIC_READY_TIMEOUT_MS}.
   */
  private async waitForLeaders(name: string, partitions: number): Promise<TopicMetadata> {
    const deadline = Date.now() + TOPIC_READY_TIMEOUT_MS;
    for (;;) {
      const t = (await this.target.metadata([name])).topics.find((x) => x.name === name);
      if (
        t !== undefined &&
        t.errorCode === ErrorCode.NONE &&
        (partitions === 0 || t.partitions.length === partitions) &&
        t.partitions.every((p) => p.leader >= 0)
      )
        return t;
      if (Date.now() > deadline)
        throw new MirrorRefusal(
          `the target topic has no leader for every partition after ${TOPIC_READY_TIMEOUT_MS} ms`,
        );
      await sleep(200);
    }
  }

  /**
   * Reads every target partition from its log start to its log-end offset and rebuilds the mapping
   * from the {@link SOURCE_OFFSET_HEADER} headers. Throws MirrorRefusal on a record without one, or
   * with source offsets out of order.
   */
  private async readTargetMapping(
    target: TopicMetadata,
    starts: ReadonlyMap<number, { offset: number }>,
    ends: ReadonlyMap<number, { offset: number }>,
  ): Promise<Map<number, MirrorOffsetMap>> {
    const maps = new Map<number, MirrorOffsetMap>();
    const pending = target.partitions
      .map((p) => ({ partition: p.partition, start: starts.get(p.partition)?.offset ?? 0 }))
      .filter((p) => p.start < (ends.get(p.partition)?.offset ?? 0));
    for (const p of target.partitions) maps.set(p.partition, new MirrorOffsetMap());
    if (pending.length === 0) return maps;
    const reader = new Consumer(this.target, { maxWaitMs: PASS_MAX_WAIT_MS });
    reader.assign(pending.map((p) => ({ topic: target.name, partition: p.partition, offset: p.start })));
    const endOf = (partition: number): number => ends.get(partition)?.offset ?? 0;
    let emptyPolls = 0;
    while (!this.stopped) {
      const open = reader.assignments().filter((s) => s.position < endOf(s.partition));
      if (open.length === 0) break;
      const before = open.map((s) => s.position);
      const records = await reader.poll();
      for (const r of records) {
        const map = maps.get(r.partition)!;
        const header = r.headers.find((h) => h.key === SOURCE_OFFSET_HEADER);
        const sourceOffset = header === undefined ? null : decodeSourceOffset(header.value);
        const where = `topic ${target.name} partition ${r.partition} offset ${r.offset} on the target`;
        if (sourceOffset === null)
          throw new MirrorRefusal(
            `${where} has no ${SOURCE_OFFSET_HEADER} header: the topic holds records skiff mirror did not ` +
              'write; mirror into a new topic',
          );
        if (sourceOffset <= map.lastSourceOffset)
          throw new MirrorRefusal(`${where} has source offset ${sourceOffset}, not after ${map.lastSourceOffset}`);
        map.record(sourceOffset, r.offset);
      }
      const moved = records.length > 0 || open.some((s, i) => s.position !== before[i]);
      emptyPolls = moved ? 0 : emptyPolls + 1;
      if (emptyPolls >= EMPTY_POLLS_BEFORE_SKIP) break; // nothing more to read below the end
    }
    return maps;
  }

  // ---- records --------------------------------------------------------------------------------

  /** Copies until every partition has reached the source's high watermark as of the start of the pass. */
  private async copyPass(): Promise<void> {
    const ends = await this.sourceEnds();
    let emptyPolls = 0;
    while (!this.stopped) {
      const open = [...this.partitions.values()].filter(
        (c) => c.position < (ends.get(partitionKey(c.topic, c.partition)) ?? 0),
      );
      if (open.length === 0) return;
      const before = open.map((c) => c.position);
      const copied = await this.pollOnce();
      const moved = copied > 0 || open.some((c, i) => c.position !== before[i]);
      emptyPolls = moved ? 0 : emptyPolls + 1;
      if (emptyPolls >= EMPTY_POLLS_BEFORE_SKIP) {
        // Fetches at these positions return nothing although the high watermark is above them: the
        // records in between are gone (compacted). Nothing is left to copy below the high watermark.
        const states = new Map(this.consumer.assignments().map((s) => [partitionKey(s.topic, s.partition), s]));
        for (const c of open) {
          const hw = states.get(partitionKey(c.topic, c.partition))?.highWatermark ?? -1;
          if (hw > c.position) {
            c.position = hw;
            this.consumer.assign([{ topic: c.topic, partition: c.partition, offset: hw }]);
          }
        }
        emptyPolls = 0;
        if (open.every((c) => c.position >= (ends.get(partitionKey(c.topic, c.partition)) ?? 0))) return;
      }
    }
  }

  /** The source's high watermark of every partition being copied. */
  private async sourceEnds(): Promise<Map<string, number>> {
    const byTopic = new Map<string, number[]>();
    for (const c of this.partitions.values()) byTopic.set(c.topic, [...(byTopic.get(c.topic) ?? []), c.partition]);
    const out = new Map<string, number>();
    for (const [topic, partitions] of byTopic) {
      const ends = await this.source.listOffsets(
        topic,
        partitions.map((partition) => ({ partition, timestamp: LATEST_TIMESTAMP })),
      );
      for (const [p, o] of ends) out.set(partitionKey(topic, p), o.offset);
    }
    return out;
  }

  /** One fetch from the source and the writes of what it returned; resolves with the records copied. */
  private async pollOnce(): Promise<number> {
    const records = await this.consumer.poll();
    const byPartition = new Map<string, ConsumedRecord[]>();
    for (const r of records) {
      const key = partitionKey(r.topic, r.partition);
      const list = byPartition.get(key);
      if (list === undefined) byPartition.set(key, [r]);
      else list.push(r);
    }
    await Promise.all(
      [...byPartition].map(([key, list]) => {
        const copy = this.partitions.get(key);
        if (copy === undefined) throw new Error(`fetched ${key} that is not being copied`);
        return this.writePartition(copy, list);
      }),
    );
    // Every record below the consumer's positions is now acknowledged by the target.
    for (const s of this.consumer.assignments()) {
      const copy = this.partitions.get(partitionKey(s.topic, s.partition));
      if (copy !== undefined && s.position > copy.position) copy.position = s.position;
    }
    return records.length;
  }

  /** Writes `records` (one partition's, in offset order) to the target, one Produce at a time. */
  private async writePartition(copy: PartitionCopy, records: readonly ConsumedRecord[]): Promise<void> {
    let i = 0;
    while (i < records.length) {
      const chunk: ConsumedRecord[] = [];
      let bytes = 0;
      while (i < records.length && chunk.length < BATCH_MAX_RECORDS) {
        const r = records[i]!;
        const size = 64 + (r.key?.length ?? 0) + (r.value?.length ?? 0);
        if (chunk.length > 0 && bytes + size > BATCH_MAX_BYTES) break;
        chunk.push(r);
        bytes += size;
        i++;
      }
      await this.produce(copy, chunk);
    }
  }

  private async produce(copy: PartitionCopy, chunk: readonly ConsumedRecord[]): Promise<void> {
    const build: BuildRecord[] = chunk.map((r) => ({
      key: r.key,
      value: r.value,
      timestamp: r.timestamp,
      headers: [
        ...r.headers.filter((h) => h.key !== SOURCE_OFFSET_HEADER),
        { key: SOURCE_OFFSET_HEADER, value: encodeSourceOffset(r.offset) },
      ],
    }));
    const batch = buildBatch(build);
    const baseOffset = await retryNotActedOn(
      () => this.produceOnce(copy, batch),
      async () => {
        const t = await this.waitForLeaders(copy.topic, 0);
        copy.targetLeader = t.partitions[copy.partition]?.leader ?? copy.targetLeader;
      },
    );
    chunk.forEach((r, j) => copy.map.record(r.offset, baseOffset + j));
    copy.targetEnd = Math.max(copy.targetEnd, baseOffset + chunk.length);
    copy.copied += chunk.length;
  }

  /** One Produce of `batch` (acks=all) to the partition's target leader; resolves with its base offset. */
  private async produceOnce(copy: PartitionCopy, batch: Buffer): Promise<number> {
    const where = `Produce ${copy.topic}/${copy.partition} to the target`;
    const connection = await this.target.connection(copy.targetLeader);
    const body = (await connection.send(
      ApiKey.Produce,
      connection.versionFor(ApiKey.Produce, 3),
      {
        transactionalId: null,
        acks: -1,
        timeoutMs: PRODUCE_TIMEOUT_MS,
        topicData: [{ name: copy.topic, partitionData: [{ index: copy.partition, records: batch }] }],
      },
      { timeoutMs: PRODUCE_TIMEOUT_MS + 5000 },
    ))!;
    const topic = (body.responses as Array<{ partitionResponses: Array<Record<string, unknown>> }>)[0];
    const p = topic?.partitionResponses[0];
    if (p === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, where, 'no result for the partition');
    throwIfError(p.errorCode as number, where, (p.errorMessage as string | null | undefined) ?? null);
    return p.baseOffset as number;
  }

  // ---- groups ---------------------------------------------------------------------------------

  /** Translates and commits the offsets of every matching group that is Empty on the source. */
  private async mirrorGroups(): Promise<void> {
    const plans: Array<{
      groupId: string;
      entries: Array<{ copy: PartitionCopy; offset: number; metadata: string | null }>;
    }> = [];
    for (const g of await listGroups(this.source)) {
      if (this.args.groups !== null && !this.args.groups.test(g.groupId)) continue;
      if (g.protocolType !== 'consumer' && g.protocolType !== '') continue;
      const described = await describeGroup(this.source, g.groupId);
      if (described.state !== 'Empty') {
        await this.note(
          `group ${g.groupId}`,
          `group ${g.groupId}: not mirrored: it is ${described.state} on the source (a live group keeps moving ` +
            'its offsets: stop its consumers, then mirror again)',
        );
        continue;
      }
      const committed = await fetchGroupOffsets(this.source, g.groupId, null);
      const entries: Array<{ copy: PartitionCopy; offset: number; metadata: string | null }> = [];
      let anyCommitted = false;
      for (const [topic, partitions] of committed)
        for (const [partition, o] of partitions) {
          if (o.offset < 0 || o.errorCode !== ErrorCode.NONE) continue;
          anyCommitted = true;
          const copy = this.partitions.get(partitionKey(topic, partition));
          if (copy !== undefined) entries.push({ copy, offset: o.offset, metadata: o.metadata });
        }
      if (entries.length > 0) plans.push({ groupId: g.groupId, entries });
      else
        await this.note(
          `group ${g.groupId}`,
          `group ${g.groupId}: nothing to mirror: ` +
            (anyCommitted ? 'no committed offsets on a mirrored topic' : 'no committed offsets on the source'),
        );
    }
    // A committed offset past what was copied: copy up to the current high watermarks first. After
    // a whole pass, a committed offset still past the copy is past the source's end (the offsets
    // were fetched before the pass); after an interrupted one it is left for the next run.
    let caughtUp = true;
    if (plans.some((p) => p.entries.some((e) => e.offset > e.copy.position))) {
      await this.copyPass();
      caughtUp = !this.stopped;
    }
    for (const plan of plans) await this.commitTranslated(plan.groupId, plan.entries, caughtUp);
  }

  private async commitTranslated(
    groupId: string,
    entries: ReadonlyArray<{ copy: PartitionCopy; offset: number; metadata: string | null }>,
    caughtUp: boolean,
  ): Promise<void> {
    const onTarget = await describeGroup(this.target, groupId);
    const unknown = onTarget.errorCode === ErrorCode.GROUP_ID_NOT_FOUND || onTarget.state === 'Dead';
    if (!unknown && onTarget.state !== 'Empty') {
      await this.note(
        `group ${groupId}`,
        `group ${groupId}: offsets not committed: it is ${onTarget.state} on the target with ` +
          `${onTarget.members.length} member(s); skiff mirror never overwrites a live group`,
      );
      return;
    }
    const topics = new Map<string, number[]>();
    for (const e of entries) topics.set(e.copy.topic, [...(topics.get(e.copy.topic) ?? []), e.copy.partition]);
    const current = await fetchGroupOffsets(this.target, groupId, topics);
    const toCommit: OffsetToCommit[] = [];
    const lines = new Map<string, string>();
    for (const e of entries) {
      const { topic, partition } = e.copy;
      const where = `group ${groupId} ${topic}/${partition}`;
      let translated: number;
      if (e.offset > e.copy.position && !caughtUp) {
        await this.note(
          `${where} past`,
          `${where}: not committed: source offset ${e.offset} is past what was copied (${e.copy.position}); mirror again`,
        );
        continue;
      } else if (e.offset > e.copy.position) {
        translated = e.copy.targetEnd;
        await this.note(`${where} past`, `${where}: committed offset ${e.offset} is past the source's end`);
      } else {
        translated = e.copy.map.translate(e.offset, e.copy.targetEnd);
      }
      const existing = current.get(topic)?.get(partition)?.offset ?? -1;
      const committedLine = `${where}: source offset ${e.offset} -> target offset ${translated}`;
      if (existing === translated) {
        await this.note(where, `${committedLine} (already there)`, committedLine);
        continue;
      }
      if (existing > translated) {
        await this.note(
          where,
          `${where}: target offset ${existing} kept: it is ahead of source offset ${e.offset} (target ${translated})`,
        );
        continue;
      }
      toCommit.push({ topic, partition, offset: translated, metadata: e.metadata });
      lines.set(partitionKey(topic, partition), committedLine);
    }
    if (toCommit.length === 0) return;
    for (const r of await commitGroupOffsets(this.target, groupId, toCommit)) {
      const line = lines.get(partitionKey(r.topic, r.partition)) ?? `group ${groupId} ${r.topic}/${r.partition}`;
      if (r.errorCode === ErrorCode.NONE) {
        this.notes.set(`group ${groupId} ${r.topic}/${r.partition}`, line);
        await this.io.out(`${line}\n`);
      } else {
        this.failed = true;
        await this.io.out(`${line}: not committed: ${errorName(r.errorCode)}\n`);
      }
    }
  }

  private async printSummary(): Promise<void> {
    const rows: Array<Array<string | number>> = [['TOPIC', 'PARTITION', 'COPIED', 'SOURCE-NEXT', 'TARGET-END']];
    const copies = [...this.partitions.values()].sort((a, b) =>
      a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
    );
    for (const c of copies) rows.push([c.topic, c.partition, c.copied, c.position, c.targetEnd]);
    await this.io.out(formatTable(rows).join('\n') + '\n');
    await this.io.out(`mirror: ${this.totalCopied()} records copied\n`);
  }
}

/** Commander parser of `--topics` / `--groups`: a regular expression matched against the whole name. */
export function parseNameRegex(text: string): RegExp {
  try {
    return new RegExp(`^(?:${text})$`);
  } catch (err) {
    throw new InvalidArgumentError(`Expected a regular expression (${(err as Error).message}).`);
  }
}

/**
 * Registers `skiff mirror` on `program`; `run` is client-commands.ts's runner (connects to
 * `--brokers`, the source, and reports failures).
 */
export function registerMirrorCommand(
  program: Command,
  run: (brokers: string | undefined, fn: (client: KafkaClient, io: CliIo) => Promise<number>) => void,
): void {
  program
    .command('mirror')
    .description('copy topics, records and group offsets (translated) into another Kafka-compatible cluster')
    .requiredOption('--to <host:port>', 'target bootstrap brokers, comma-separated')
    .option(
      '--brokers <host:port>',
      'source bootstrap brokers, comma-separated (default: $SKIFF_BROKERS or 127.0.0.1:9092)',
    )
    .option(
      '--topics <regex>',
      'topics to copy: a regular expression matching the whole name (default: all)',
      parseNameRegex,
    )
    .option(
      '--groups <regex>',
      'groups whose offsets to copy: a regular expression on the whole id (default: all)',
      parseNameRegex,
    )
    .option('--follow', 'keep copying new records and group offsets until SIGINT or SIGTERM')
    .option('--group-interval-ms <ms>', 'with --follow: how often group offsets are mirrored', parsePositiveInt, 5000)
    .action(
      (o: {
        to: string;
        brokers?: string;
        topics?: RegExp;
        groups?: RegExp;
        follow?: boolean;
        groupIntervalMs: number;
      }) =>
        run(o.brokers, (client, io) =>
          mirrorCommand(
            client,
            {
              to: o.to,
              topics: o.topics ?? null,
              groups: o.groups ?? null,
              follow: o.follow === true,
              groupIntervalMs: o.groupIntervalMs,
            },
            io,
          ),
        ),
    );
}

function parsePositiveInt(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) <= 0) throw new InvalidArgumentError('Expected a positive integer.');
  return Number(text);
}
