/**
 * Registers the client commands on the `skiff` commander program: `topic` (create, list,
 * describe, delete, alter-config), `group` (list, describe, reset-offsets, delete), `produce`,
 * `consume`, `perf` (produce, consume) and `mirror`. Each takes
 * `--brokers HOST:PORT[,HOST:PORT...]` (default SKIFF_BROKERS, else 127.0.0.1:9092). Also
 * `cluster` (status, crash, start: cluster-command.ts), which speaks to the admin HTTP API instead,
 * with `--admin HOST:PORT`.
 *
 * Parsing stays side-effect free (as args.ts): an action only hands a {@link ClientCommandRun}
 * to `setRun`; main.ts runs it against the process.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { COMPRESSION_NAMES, type CompressionName } from '../protocol/record-batch/compression';
import type { KafkaClient } from '../client/client';
import { parseKeyValue, resolveBrokers, withClient, type CliIo, type ClientCommandRun } from './client-io';
import { registerClusterCommands } from './cluster-command';
import { consumeCommand, type StartPosition } from './consume-command';
import { COMMIT_MODES, DEFAULT_AUTO_COMMIT_INTERVAL_MS, type CommitMode, type GroupArgs } from './group-session';
import { registerMirrorCommand } from './mirror-command';
import { perfConsume, perfProduce } from './perf-command';
import { produceCommand } from './produce-command';
import {
  groupDelete,
  groupDescribe,
  groupList,
  groupResetOffsets,
  parseTopicScope,
  type ResetSpec,
  type TopicScope,
} from './group-command';
import { DEFAULT_RECORD_FORMAT } from './record-format';
import { topicAlterConfig, topicCreate, topicDelete, topicDescribe, topicList } from './topic-command';

interface BrokersOption {
  brokers?: string;
}

/** Adds every client command to `program`; `setRun` receives the command to run. */
export function registerClientCommands(program: Command, setRun: (run: ClientCommandRun) => void): void {
  const run = (brokers: string | undefined, fn: (client: KafkaClient, io: CliIo) => Promise<number>): void => {
    setRun((io) => withClient(resolveBrokers(brokers, io.env), io, (client) => fn(client, io)));
  };
  registerMirrorCommand(program, run);
  registerClusterCommands(program, setRun);

  const topic = program.command('topic').description('create, list, describe, delete and configure topics');
  withBrokers(topic.command('create'))
    .description('create topics')
    .argument('<names...>', 'topic names')
    .option('-p, --partitions <n>', 'partitions (-1: the broker default num.partitions)', parseIntArg, -1)
    .option('-r, --replicas <n>', 'replication factor (-1: the broker default)', parseIntArg, -1)
    .option('-c, --config <key=value>', 'topic config (repeatable)', collectKeyValue, [])
    .action(
      (names: string[], o: BrokersOption & { partitions: number; replicas: number; config: Array<[string, string]> }) =>
        run(o.brokers, (client, io) =>
          topicCreate(
            client,
            { names, partitions: o.partitions, replicationFactor: o.replicas, configs: o.config },
            io,
          ),
        ),
    );
  withBrokers(topic.command('list'))
    .description('list topics')
    .action((o: BrokersOption) => run(o.brokers, (client, io) => topicList(client, io)));
  withBrokers(topic.command('describe'))
    .description('show a topic: configs and partitions (leader, epoch, replicas, ISR, offsets)')
    .argument('<name>', 'topic name')
    .action((name: string, o: BrokersOption) => run(o.brokers, (client, io) => topicDescribe(client, name, io)));
  withBrokers(topic.command('delete'))
    .description('delete topics')
    .argument('<names...>', 'topic names')
    .action((names: string[], o: BrokersOption) => run(o.brokers, (client, io) => topicDelete(client, names, io)));
  withBrokers(topic.command('alter-config'))
    .description('set or delete topic configs (IncrementalAlterConfigs)')
    .argument('<name>', 'topic name')
    .option('--set <key=value>', 'set a config (repeatable)', collectKeyValue, [])
    .option('--delete <key>', 'remove a config, back to its default (repeatable)', collectString, [])
    .action((name: string, o: BrokersOption & { set: Array<[string, string]>; delete: string[] }) =>
      run(o.brokers, (client, io) => topicAlterConfig(client, { name, set: o.set, delete: o.delete }, io)),
    );

  const group = program.command('group').description('list, describe, reset the offsets of and delete consumer groups');
  withBrokers(group.command('list'))
    .description('list consumer groups (ListGroups on every broker)')
    .action((o: BrokersOption) => run(o.brokers, (client, io) => groupList(client, io)));
  withBrokers(group.command('describe'))
    .description('show a group: state, members and assignments, committed offset, log-end offset and lag per partition')
    .argument('<group>', 'group id')
    .action((groupId: string, o: BrokersOption) => run(o.brokers, (client, io) => groupDescribe(client, groupId, io)));
  withBrokers(group.command('reset-offsets'))
    .description('plan (dry run) or, with --execute, commit new offsets for an inactive (Empty) group')
    .argument('<group>', 'group id')
    .option('--topic <topic[:p,...]>', 'topic, optionally with partitions (repeatable)', collectTopicScope, [])
    .option('--all-topics', 'every topic the group has committed offsets for')
    .option('--to-earliest', 'reset to the log start offset')
    .option('--to-latest', 'reset to the log end offset')
    .option('--to-offset <n>', 'reset to offset n (clamped into [log start, log end])', parseIntArg)
    .option(
      '--to-datetime <iso>',
      'reset to the first offset at or after this time (ISO 8601, or ms since the epoch)',
      parseTimestamp,
    )
    .option('--dry-run', 'only print the plan (the default)')
    .option('--execute', 'commit the new offsets')
    .action(function (
      this: Command,
      groupId: string,
      o: BrokersOption & {
        topic: TopicScope[];
        allTopics?: boolean;
        toEarliest?: boolean;
        toLatest?: boolean;
        toOffset?: number;
        toDatetime?: number;
        dryRun?: boolean;
        execute?: boolean;
      },
    ) {
      const specs: ResetSpec[] = [];
      if (o.toEarliest === true) specs.push({ kind: 'earliest' });
      if (o.toLatest === true) specs.push({ kind: 'latest' });
      if (o.toOffset !== undefined) specs.push({ kind: 'offset', offset: o.toOffset });
      if (o.toDatetime !== undefined) specs.push({ kind: 'datetime', timestampMs: o.toDatetime });
      if (specs.length !== 1)
        this.error('error: give exactly one of --to-earliest, --to-latest, --to-offset and --to-datetime');
      if (o.topic.length > 0 === (o.allTopics === true)) this.error('error: give --topic (repeatable) or --all-topics');
      if (o.dryRun === true && o.execute === true) this.error('error: give at most one of --dry-run and --execute');
      run(o.brokers, (client, io) =>
        groupResetOffsets(
          client,
          {
            group: groupId,
            topics: o.topic,
            allTopics: o.allTopics === true,
            spec: specs[0]!,
            execute: o.execute === true,
          },
          io,
        ),
      );
    });
  withBrokers(group.command('delete'))
    .description('delete consumer groups (only groups without members)')
    .argument('<groups...>', 'group ids')
    .action((groupIds: string[], o: BrokersOption) =>
      run(o.brokers, (client, io) => groupDelete(client, groupIds, io)),
    );

  withBrokers(program.command('produce'))
    .description('produce stdin lines as records')
    .argument('<topic>', 'topic name')
    .option('-k, --key-separator <sep>', 'the bytes before the first <sep> of a line are its key')
    .option(
      '-p, --partition <n>',
      'produce to this partition (default: murmur2 of the key, sticky without)',
      parseIntArg,
    )
    .option('-H, --header <key=value>', 'add a header to every record (repeatable)', collectKeyValue, [])
    .option('-Z, --null-empty', 'send an empty key or value as null (kcat -Z): `key|` with -k "|" is a tombstone')
    .addOption(compressionOption())
    .addOption(acksOption())
    .option('--linger-ms <ms>', 'how long a batch waits for more records', parseIntArg, 0)
    .option('--batch-size <bytes>', 'batch size in bytes', parseIntArg, 16_384)
    .addOption(deliveryTimeoutOption())
    .action(
      (
        topicName: string,
        o: BrokersOption & {
          keySeparator?: string;
          partition?: number;
          header: Array<[string, string]>;
          nullEmpty?: boolean;
          compression: CompressionName;
          acks: string;
          lingerMs: number;
          batchSize: number;
          deliveryTimeoutMs: number;
        },
      ) =>
        run(o.brokers, (client, io) =>
          produceCommand(
            client,
            {
              topic: topicName,
              keySeparator: o.keySeparator ?? null,
              partition: o.partition ?? null,
              headers: o.header,
              compression: o.compression,
              acks: Number(o.acks) as -1 | 0 | 1,
              lingerMs: o.lingerMs,
              batchSizeBytes: o.batchSize,
              nullEmpty: o.nullEmpty === true,
              deliveryTimeoutMs: o.deliveryTimeoutMs,
            },
            io,
          ),
        ),
    );

  const consume = withBrokers(program.command('consume'))
    .description('print records of a topic (all partitions unless -p; with --group, those the group assigns)')
    .argument('<topic>', 'topic name')
    .option('--from-beginning', 'start at the earliest offset')
    .option('-o, --offset <n>', 'start at this offset', parseIntArg)
    .option(
      '--timestamp <t>',
      'start at the first record at or after t (ms since the epoch, or an ISO 8601 date)',
      parseTimestamp,
    )
    .option('-p, --partition <n>', 'consume only this partition', parseIntArg)
    .option('-n, --count <n>', 'exit after n records', parseIntArg)
    .option('-e, --exit-at-end', 'exit once every partition is read to its end')
    .option(
      '-f, --format <fmt>',
      'output per record: %v value, %k key, %p partition, %o offset, %t timestamp, %T topic, %h headers, \\n',
      DEFAULT_RECORD_FORMAT,
    );
  withGroupOptions(consume).action(function (
    this: Command,
    topicName: string,
    o: BrokersOption & {
      fromBeginning?: boolean;
      offset?: number;
      timestamp?: number;
      partition?: number;
      count?: number;
      exitAtEnd?: boolean;
      format: string;
    } & GroupOptions,
  ) {
    const starts = [o.fromBeginning === true, o.offset !== undefined, o.timestamp !== undefined].filter(Boolean).length;
    if (starts > 1) this.error('error: give at most one of --from-beginning, --offset and --timestamp');
    const group = groupArgs(this, o);
    if (group !== null && (o.partition !== undefined || o.offset !== undefined || o.timestamp !== undefined))
      this.error(
        'error: --group takes partitions and offsets from the group: drop --partition, --offset and --timestamp',
      );
    const start: StartPosition =
      o.fromBeginning === true
        ? { kind: 'beginning' }
        : o.offset !== undefined
          ? { kind: 'offset', offset: o.offset }
          : o.timestamp !== undefined
            ? { kind: 'timestamp', timestamp: o.timestamp }
            : { kind: 'end' };
    run(o.brokers, (client, io) =>
      consumeCommand(
        client,
        {
          topic: topicName,
          start,
          partition: o.partition ?? null,
          count: o.count ?? null,
          exitAtEnd: o.exitAtEnd === true,
          format: o.format,
          group,
        },
        io,
      ),
    );
  });

  const perf = program.command('perf').description('bounded produce and consume throughput runs');
  withBrokers(perf.command('produce'))
    .description('produce --records records of --record-size bytes; report throughput and latency')
    .requiredOption('--topic <name>', 'topic (created when missing)')
    .requiredOption('--records <n>', 'records to send', parseIntArg)
    .requiredOption('--record-size <bytes>', 'value size in bytes', parseIntArg)
    .addOption(acksOption())
    .option(
      '--partitions <n>',
      'partitions when the topic is created (default 1; a warning when it exists with others)',
      parseIntArg,
    )
    .addOption(compressionOption())
    .option('--batch-size <bytes>', 'batch size in bytes', parseIntArg, 16_384)
    .option('--linger-ms <ms>', 'how long a batch waits for more records', parseIntArg, 5)
    .addOption(deliveryTimeoutOption())
    .action(
      (
        o: BrokersOption & {
          topic: string;
          records: number;
          recordSize: number;
          acks: string;
          partitions?: number;
          compression: CompressionName;
          batchSize: number;
          lingerMs: number;
          deliveryTimeoutMs: number;
        },
      ) =>
        run(o.brokers, (client, io) =>
          perfProduce(
            client,
            {
              topic: o.topic,
              records: o.records,
              recordSizeBytes: o.recordSize,
              acks: Number(o.acks) as -1 | 0 | 1,
              partitions: o.partitions ?? null,
              compression: o.compression,
              batchSizeBytes: o.batchSize,
              lingerMs: o.lingerMs,
              deliveryTimeoutMs: o.deliveryTimeoutMs,
            },
            io,
          ),
        ),
    );
  const perfConsumeCommand = withBrokers(perf.command('consume'))
    .description("consume --records records from the beginning (or the group's commits); report throughput")
    .requiredOption('--topic <name>', 'topic')
    .requiredOption('--records <n>', 'records to read', parseIntArg)
    .option('--timeout-ms <ms>', 'give up after this long without a new record', parseIntArg, 10_000);
  withGroupOptions(perfConsumeCommand).action(function (
    this: Command,
    o: BrokersOption & { topic: string; records: number; timeoutMs: number } & GroupOptions,
  ) {
    const group = groupArgs(this, o);
    run(o.brokers, (client, io) =>
      perfConsume(client, { topic: o.topic, records: o.records, timeoutMs: o.timeoutMs, group }, io),
    );
  });
}

interface GroupOptions {
  group?: string;
  commit?: CommitMode;
  autoCommitIntervalMs?: number;
}

/** `--group`, `--commit` and `--auto-commit-interval-ms` (consume and perf consume). */
function withGroupOptions(command: Command): Command {
  return command
    .option('-g, --group <id>', 'consume as a member of this consumer group (range assignor)')
    .addOption(
      new Option('--commit <mode>', 'with --group: when to commit offsets').choices(COMMIT_MODES).default('auto'),
    )
    .option(
      '--auto-commit-interval-ms <ms>',
      `with --commit auto: ms between commits (auto.commit.interval.ms, default ${DEFAULT_AUTO_COMMIT_INTERVAL_MS})`,
      parseIntArg,
    );
}

/** The group arguments, null without --group; a usage error for group options without it. */
function groupArgs(command: Command, o: GroupOptions): GroupArgs | null {
  if (o.group === undefined) {
    if (command.getOptionValueSource('commit') === 'cli' || o.autoCommitIntervalMs !== undefined)
      command.error('error: --commit and --auto-commit-interval-ms need --group');
    return null;
  }
  if (o.autoCommitIntervalMs !== undefined && o.commit !== 'auto')
    command.error('error: --auto-commit-interval-ms goes with --commit auto');
  if (o.autoCommitIntervalMs !== undefined && !(o.autoCommitIntervalMs > 0))
    command.error('error: --auto-commit-interval-ms must be positive');
  return {
    groupId: o.group,
    commit: o.commit ?? 'auto',
    autoCommitIntervalMs: o.autoCommitIntervalMs ?? DEFAULT_AUTO_COMMIT_INTERVAL_MS,
  };
}

function withBrokers(command: Command): Command {
  return command.option(
    '--brokers <host:port>',
    'bootstrap brokers, comma-separated (default: $SKIFF_BROKERS or 127.0.0.1:9092)',
  );
}

function compressionOption(): Option {
  return new Option('-z, --compression <codec>', 'compression codec').choices(COMPRESSION_NAMES).default('none');
}

/** `--delivery-timeout-ms` (delivery.timeout.ms): how long the producer retries a record. */
function deliveryTimeoutOption(): Option {
  return new Option(
    '--delivery-timeout-ms <ms>',
    'how long a record may take, retries across broker crashes and leader moves included, before it fails',
  )
    .argParser(parseIntArg)
    .default(120_000);
}

function acksOption(): Option {
  return new Option('--acks <n>', 'acks: -1 all in-sync replicas, 1 leader, 0 none')
    .choices(['-1', '0', '1'])
    .default('-1');
}

/** Commander parser for integer options (decimal, optionally negative). */
function parseIntArg(text: string): number {
  if (!/^-?\d+$/.test(text)) throw new InvalidArgumentError('Expected an integer.');
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('Integer out of range.');
  return n;
}

/** Commander parser for `--timestamp`: ms since the epoch, or a date Date.parse understands. */
function parseTimestamp(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new InvalidArgumentError('Expected ms since the epoch or an ISO 8601 date.');
  return ms;
}

function collectKeyValue(text: string, previous: Array<[string, string]>): Array<[string, string]> {
  try {
    return [...previous, parseKeyValue(text)];
  } catch {
    throw new InvalidArgumentError('Expected key=value.');
  }
}

function collectTopicScope(text: string, previous: TopicScope[]): TopicScope[] {
  try {
    return [...previous, parseTopicScope(text)];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function collectString(text: string, previous: string[]): string[] {
  return [...previous, text];
}
