/**
 * `skiff consume TOPIC`: prints records of every partition (or `--partition N`) by assignment, no
 * consumer group, like kcat -C. Start: `--from-beginning` (earliest), `--offset N` (absolute),
 * `--timestamp T` (the first record at or after T ms since the epoch, ListOffsets), else the end
 * (only new records). Stops after `--count N` records, or with `--exit-at-end` once every partition
 * has reached the high watermark it had at start; otherwise polls until Ctrl-C (exit 0).
 * Records are printed with `--format` (record-format.ts); progress goes to stderr every 5 s.
 *
 * With `--group G` it consumes as a member of consumer group G instead (group-session.ts): the
 * group assigns the partitions (range assignor), each starts at the group's committed offset, else
 * at the earliest offset with `--from-beginning` and the end otherwise (auto.offset.reset), and
 * `--commit` picks when offsets are committed. At the end one line on stderr says what was
 * committed, per partition. `--partition`, `--offset` and `--timestamp` do not go with `--group`
 * (the group decides partitions and offsets, as with kafka-console-consumer).
 */
import type { KafkaClient } from '../client/client';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '../client/client';
import { Consumer } from '../client/consumer';
import { ErrorCode } from '../protocol/error-codes';
import { KafkaError } from '../client/errors';
import { startProgress, type CliIo } from './client-io';
import { GroupSession, groupSessionPorts, type GroupArgs } from './group-session';
import { compileRecordFormat } from './record-format';

/** Where `skiff consume` starts in each partition. */
export type StartPosition =
  | { kind: 'end' }
  | { kind: 'beginning' }
  | { kind: 'offset'; offset: number }
  | { kind: 'timestamp'; timestamp: number };

/** Arguments of `skiff consume`. */
export interface ConsumeArgs {
  topic: string;
  start: StartPosition;
  partition: number | null;
  count: number | null;
  exitAtEnd: boolean;
  format: string;
  /** `--group`: consume as a member of this group, null for plain assignment. */
  group: GroupArgs | null;
}

/** Runs `skiff consume`; resolves 0 when done or interrupted, throws on broker errors. */
export async function consumeCommand(client: KafkaClient, args: ConsumeArgs, io: CliIo): Promise<number> {
  if (args.group !== null) return consumeInGroup(client, args, args.group, io);
  const format = compileRecordFormat(args.format);
  const md = await client.topicMetadata(args.topic);
  const partitions = args.partition === null ? md.partitions.map((p) => p.partition) : [args.partition];
  for (const p of partitions) {
    if (!md.partitions.some((x) => x.partition === p))
      throw new KafkaError(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        `${args.topic}/${p} (the topic has ${md.partitions.length} partitions)`,
      );
  }
  const offsets = await startOffsets(client, args, partitions);
  const consumer = new Consumer(client, { maxWaitMs: args.exitAtEnd ? 100 : 500, onWarning: (line) => io.err(line) });
  consumer.assign(partitions.map((partition) => ({ topic: args.topic, partition, offset: offsets.get(partition)! })));
  if (args.exitAtEnd) await consumer.refreshEndOffsets();

  let interrupted = false;
  io.onInterrupt(() => (interrupted = true));
  let printed = 0;
  const progress = startProgress(() => io.err(`consumed ${printed} records`));
  try {
    while (!interrupted && (args.count === null || printed < args.count) && !(args.exitAtEnd && consumer.allAtEnd())) {
      const records = await consumer.poll();
      const chunks: Buffer[] = [];
      for (const r of records) {
        if (args.count !== null && printed >= args.count) break;
        chunks.push(format(r));
        printed++;
      }
      if (chunks.length > 0) await io.out(Buffer.concat(chunks));
    }
  } finally {
    progress.stop();
  }
  return 0;
}

/** `skiff consume --group`: see the module comment. */
async function consumeInGroup(client: KafkaClient, args: ConsumeArgs, group: GroupArgs, io: CliIo): Promise<number> {
  const format = compileRecordFormat(args.format);
  if (args.start.kind === 'offset' || args.start.kind === 'timestamp' || args.partition !== null)
    throw new RangeError(
      '--group takes its partitions and offsets from the group: drop --partition, --offset and --timestamp',
    );
  await client.topicMetadata(args.topic); // a clear UNKNOWN_TOPIC_OR_PARTITION before joining
  const session = new GroupSession(
    groupSessionPorts(client, group.groupId, [args.topic], args.exitAtEnd ? 100 : 500, (line) => io.err(line)),
    {
      mode: group.commit,
      autoCommitIntervalMs: group.autoCommitIntervalMs,
      reset: args.start.kind === 'beginning' ? 'earliest' : 'latest',
      exitAtEnd: args.exitAtEnd,
    },
  );
  let interrupted = false;
  io.onInterrupt(() => (interrupted = true));
  let printed = 0;
  const progress = startProgress(() => io.err(`consumed ${printed} records`));
  try {
    await session.start();
    while (!interrupted && (args.count === null || printed < args.count) && !(args.exitAtEnd && session.allAtEnd())) {
      const records = await session.poll();
      const chunks: Buffer[] = [];
      for (const r of records) {
        if (args.count !== null && printed >= args.count) break;
        if (group.commit === 'record') {
          // Printed before it is committed: at least once, even per record.
          await io.out(format(r));
        } else {
          chunks.push(format(r));
        }
        printed++;
        await session.processed(r);
      }
      if (chunks.length > 0) await io.out(Buffer.concat(chunks));
      await session.endOfPoll();
    }
  } finally {
    progress.stop();
    await session.close();
  }
  io.err(session.summary(group.groupId));
  return 0;
}

/** The first offset to fetch per partition for the start position. */
async function startOffsets(
  client: KafkaClient,
  args: ConsumeArgs,
  partitions: number[],
): Promise<Map<number, number>> {
  const start = args.start;
  if (start.kind === 'offset') {
    // Check the offset against each partition's log now: a clear message beats a later OFFSET_OUT_OF_RANGE.
    const earliest = await client.listOffsets(
      args.topic,
      partitions.map((partition) => ({ partition, timestamp: EARLIEST_TIMESTAMP })),
    );
    const latest = await client.listOffsets(
      args.topic,
      partitions.map((partition) => ({ partition, timestamp: LATEST_TIMESTAMP })),
    );
    for (const p of partitions) {
      const [first, end] = [earliest.get(p)!.offset, latest.get(p)!.offset];
      if (start.offset < first || start.offset > end) {
        throw new KafkaError(
          ErrorCode.OFFSET_OUT_OF_RANGE,
          `${args.topic}/${p}: offset ${start.offset} is outside the log [${first}, ${end}]`,
        );
      }
    }
    return new Map(partitions.map((p) => [p, start.offset]));
  }
  const timestamp =
    start.kind === 'beginning' ? EARLIEST_TIMESTAMP : start.kind === 'end' ? LATEST_TIMESTAMP : start.timestamp;
  const found = await client.listOffsets(
    args.topic,
    partitions.map((partition) => ({ partition, timestamp })),
  );
  const out = new Map<number, number>();
  let latest: Map<number, { offset: number }> | null = null;
  for (const p of partitions) {
    let offset = found.get(p)!.offset;
    if (offset < 0) {
      // No record at or after the timestamp: start at the end, as Kafka's offsetsForTimes users do.
      latest ??= await client.listOffsets(
        args.topic,
        partitions.map((partition) => ({ partition, timestamp: LATEST_TIMESTAMP })),
      );
      offset = latest.get(p)!.offset;
    }
    out.set(p, offset);
  }
  return out;
}
