/**
 * Skiff's broker configuration, with Kafka's key names (Kafka's `KafkaConfig` / `ServerLogConfigs`,
 * defaults from Kafka 3.8, see shared/reference/kafka-facts.md §4) plus Redpanda's
 * `write.caching.default`.
 *
 * Input is a key → string map: a parsed `server.properties` ({@link parseProperties}) with CLI
 * overrides applied. {@link buildBrokerConfig} checks every key and value and returns a typed
 * {@link BrokerConfig}:
 * - a key in {@link BROKER_CONFIG_DEFS} is validated (type and range) and used;
 * - a key in {@link IGNORED_BROKER_CONFIG_KEYS} (common Kafka `server.properties` keys Skiff has no
 *   use for) is accepted with a warning, so a Kafka config file works unchanged;
 * - any other key is an error naming the nearest known key.
 * All problems are collected and thrown together as one {@link ConfigError}.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { nearestKey } from './nearest-key';
import { rangeReason } from './topic-config';

export { parseProperties, PropertiesSyntaxError } from './properties';

/** How a config value is parsed. `long` values beyond 2^53-1 (Kafka's Long.MAX "never") clamp to it. */
export type BrokerConfigType = 'int' | 'long' | 'double' | 'boolean' | 'list' | 'listeners' | 'string';

/** One known broker config: the source of validation, README's table and DescribeConfigs docs. */
export interface BrokerConfigDef {
  readonly key: string;
  readonly type: BrokerConfigType;
  /** The default as written in a properties file; null = unset (the doc says what that means). */
  readonly defaultValue: string | null;
  /** Smallest accepted value (int, long and double only). */
  readonly min?: number;
  /** Largest accepted value (int, long and double). */
  readonly max?: number;
  /** One more accepted value outside [min, max] (int and long only). */
  readonly orEqual?: number;
  /** Accepted values (string only; a comma list for log.cleanup.policy). */
  readonly oneOf?: readonly string[];
  /** One line of documentation. */
  readonly doc: string;
}

/** Kafka's Long.MAX_VALUE as a properties-file string: "no limit" for counts and intervals. */
export const LONG_MAX_STRING = '9223372036854775807';

/** The broker configs Skiff knows, in README order. */
export const BROKER_CONFIG_DEFS: readonly BrokerConfigDef[] = [
  {
    key: 'node.id',
    type: 'int',
    defaultValue: '0',
    min: 0,
    doc: "This broker's id (`broker.id` is accepted as an alias).",
  },
  {
    key: 'broker.id',
    type: 'int',
    defaultValue: null,
    min: 0,
    doc: "Alias of node.id (Kafka's ZooKeeper-mode name); must equal node.id if both are set.",
  },
  {
    key: 'listeners',
    type: 'listeners',
    defaultValue: 'PLAINTEXT://127.0.0.1:9092',
    doc: 'Where to accept clients: one `PLAINTEXT://host:port`; port 0 picks a free port; an empty host or 0.0.0.0 binds every interface.',
  },
  {
    key: 'advertised.listeners',
    type: 'listeners',
    defaultValue: null,
    doc: 'The address returned to clients in Metadata; unset = listeners (a wildcard host is advertised as 127.0.0.1); port 0 = the bound port.',
  },
  {
    key: 'log.dirs',
    type: 'list',
    defaultValue: './data',
    doc: 'Comma-separated directories for partition logs, relative to the working directory.',
  },
  { key: 'log.dir', type: 'list', defaultValue: null, doc: 'Used when log.dirs is not set (as in Kafka).' },
  {
    key: 'num.partitions',
    type: 'int',
    defaultValue: '1',
    min: 1,
    doc: 'Partitions of an auto-created topic, and of CreateTopics with -1.',
  },
  {
    key: 'default.replication.factor',
    type: 'int',
    defaultValue: '1',
    min: 1,
    doc: 'Replication factor of an auto-created topic, and of CreateTopics with -1.',
  },
  {
    key: 'auto.create.topics.enable',
    type: 'boolean',
    defaultValue: 'true',
    doc: 'Create a topic when a Metadata request that allows it names an unknown topic.',
  },
  {
    key: 'log.segment.bytes',
    type: 'int',
    defaultValue: '1073741824',
    min: 14,
    doc: 'Roll to a new segment once the active one reaches this size (topic: segment.bytes).',
  },
  {
    key: 'log.index.interval.bytes',
    type: 'int',
    defaultValue: '4096',
    min: 0,
    doc: 'Bytes of log between offset-index entries (topic: index.interval.bytes).',
  },
  {
    key: 'message.max.bytes',
    type: 'int',
    defaultValue: '1048588',
    min: 0,
    doc: 'Largest record batch accepted (topic: max.message.bytes).',
  },
  {
    key: 'socket.request.max.bytes',
    type: 'int',
    defaultValue: '104857600',
    min: 1,
    doc: 'Largest request frame accepted; a larger one closes the connection.',
  },
  {
    key: 'log.flush.interval.messages',
    type: 'long',
    defaultValue: LONG_MAX_STRING,
    min: 1,
    doc: 'fsync once this many messages are unflushed; 1 = fsync before every ack (topic: flush.messages).',
  },
  {
    key: 'log.flush.interval.ms',
    type: 'long',
    defaultValue: null,
    min: 0,
    doc: 'fsync at least this often in ms; unset = no time-based flush (topic: flush.ms).',
  },
  {
    key: 'num.io.threads',
    type: 'int',
    defaultValue: '8',
    min: 1,
    doc: "Worker threads in this broker's actor pool (replicas beyond it share threads).",
  },
  {
    key: 'write.caching.default',
    type: 'boolean',
    defaultValue: 'false',
    doc: "Redpanda's default for topic write.caching: false = acks=all waits for fsync on the ISR; true = page cache (Kafka's behaviour).",
  },
  {
    key: 'replica.high.watermark.checkpoint.interval.ms',
    type: 'long',
    defaultValue: '5000',
    min: 1,
    doc: 'How often high watermarks are written to replication-offset-checkpoint.',
  },
  {
    key: 'log.flush.offset.checkpoint.interval.ms',
    type: 'int',
    defaultValue: '60000',
    min: 1,
    doc: 'How often recovery points are written to recovery-point-offset-checkpoint.',
  },
  {
    key: 'log.retention.hours',
    type: 'int',
    defaultValue: '168',
    min: -1,
    doc: 'Delete segments older than this (lowest precedence of the three retention keys; topic: retention.ms).',
  },
  {
    key: 'log.retention.minutes',
    type: 'int',
    defaultValue: null,
    min: -1,
    doc: 'As log.retention.hours, in minutes; wins over hours.',
  },
  {
    key: 'log.retention.ms',
    type: 'long',
    defaultValue: null,
    min: -1,
    doc: 'As log.retention.hours, in ms; wins over minutes and hours; -1 = keep forever.',
  },
  {
    key: 'log.retention.bytes',
    type: 'long',
    defaultValue: '-1',
    min: -1,
    doc: 'Delete the oldest segments while a partition is larger than this; -1 = no limit (topic: retention.bytes).',
  },
  {
    key: 'log.retention.check.interval.ms',
    type: 'long',
    defaultValue: '300000',
    min: 1,
    doc: 'How often retention runs.',
  },
  {
    key: 'log.roll.hours',
    type: 'int',
    defaultValue: '168',
    min: 1,
    doc: 'Roll the active segment once its first batch is this old (topic: segment.ms).',
  },
  { key: 'log.roll.ms', type: 'long', defaultValue: null, min: 1, doc: 'As log.roll.hours, in ms; wins over hours.' },
  {
    key: 'log.index.size.max.bytes',
    type: 'int',
    defaultValue: '10485760',
    min: 4,
    doc: 'Largest offset index per segment; a full index rolls the segment (topic: segment.index.bytes).',
  },
  {
    key: 'log.cleanup.policy',
    type: 'string',
    defaultValue: 'delete',
    oneOf: ['delete', 'compact'],
    doc: 'delete (retention) and/or compact, comma-separated (topic: cleanup.policy).',
  },
  {
    key: 'log.cleaner.enable',
    type: 'boolean',
    defaultValue: 'true',
    doc: 'Run the log cleaner for topics with cleanup.policy=compact.',
  },
  {
    key: 'log.cleaner.backoff.ms',
    type: 'long',
    defaultValue: '15000',
    min: 0,
    doc: 'How often each compacted partition checks whether it has enough to clean.',
  },
  {
    key: 'log.cleaner.delete.retention.ms',
    type: 'long',
    defaultValue: '86400000',
    min: 0,
    doc: 'How long a tombstone stays after its first cleaning (topic: delete.retention.ms; KIP-534 delete horizon).',
  },
  {
    key: 'log.cleaner.min.cleanable.ratio',
    type: 'double',
    defaultValue: '0.5',
    min: 0,
    max: 1,
    doc: 'Clean a partition once dirty bytes / cleanable bytes exceeds this (topic: min.cleanable.dirty.ratio).',
  },
  {
    key: 'log.cleaner.min.compaction.lag.ms',
    type: 'long',
    defaultValue: '0',
    min: 0,
    doc: 'A record stays uncompacted at least this long (KIP-58; topic: min.compaction.lag.ms).',
  },
  {
    key: 'log.cleaner.max.compaction.lag.ms',
    type: 'long',
    defaultValue: LONG_MAX_STRING,
    min: 1,
    doc: 'A dirty record is compacted within this long whatever the dirty ratio (KIP-354; topic: max.compaction.lag.ms).',
  },
  {
    key: 'log.message.timestamp.type',
    type: 'string',
    defaultValue: 'CreateTime',
    oneOf: ['CreateTime', 'LogAppendTime'],
    doc: "Producer timestamps, or the broker's append time (topic: message.timestamp.type).",
  },
  {
    key: 'log.message.timestamp.before.max.ms',
    type: 'long',
    defaultValue: LONG_MAX_STRING,
    min: 0,
    doc: 'Reject CreateTime batches older than this (topic: message.timestamp.before.max.ms).',
  },
  {
    key: 'log.message.timestamp.after.max.ms',
    type: 'long',
    defaultValue: '3600000',
    min: 0,
    doc: 'Reject CreateTime batches further in the future than this (Kafka 4 default, KIP-1030; topic: message.timestamp.after.max.ms).',
  },
  {
    key: 'min.insync.replicas',
    type: 'int',
    defaultValue: '1',
    min: 1,
    doc: 'acks=all needs at least this many in-sync replicas (topic: min.insync.replicas).',
  },
  {
    key: 'unclean.leader.election.enable',
    type: 'boolean',
    defaultValue: 'false',
    doc: 'Allow an out-of-sync replica to become leader (topic: unclean.leader.election.enable).',
  },
  {
    key: 'replica.lag.time.max.ms',
    type: 'long',
    defaultValue: '30000',
    min: 0,
    doc: "A follower that has not caught up to the leader's log end offset for this long leaves the ISR.",
  },
  {
    key: 'replica.fetch.max.bytes',
    type: 'int',
    defaultValue: '1048576',
    min: 0,
    doc: 'Bytes a follower asks for per partition in one fetch (at least one batch is returned).',
  },
  {
    key: 'replica.fetch.wait.max.ms',
    type: 'int',
    defaultValue: '500',
    min: 0,
    doc: "How long a follower's fetch waits at the leader for new bytes.",
  },
  {
    key: 'replica.fetch.min.bytes',
    type: 'int',
    defaultValue: '1',
    min: 1,
    doc: "Bytes a follower's fetch waits for at the leader.",
  },
  {
    key: 'replica.fetch.backoff.ms',
    type: 'int',
    defaultValue: '1000',
    min: 0,
    doc: 'How long a follower waits after a failed fetch before the next.',
  },
  {
    key: 'replica.fetch.response.max.bytes',
    type: 'int',
    defaultValue: '10485760',
    min: 0,
    doc: 'Bytes in one follower fetch response over all its partitions.',
  },
  {
    key: 'auto.leader.rebalance.enable',
    type: 'boolean',
    defaultValue: 'true',
    doc: 'Move leadership back to the preferred replica (the first assigned) when the imbalance passes leader.imbalance.per.broker.percentage.',
  },
  {
    key: 'leader.imbalance.check.interval.seconds',
    type: 'long',
    defaultValue: '300',
    min: 1,
    doc: 'How often the controller checks the leader imbalance.',
  },
  {
    key: 'leader.imbalance.per.broker.percentage',
    type: 'int',
    defaultValue: '10',
    min: 0,
    doc: 'Leader imbalance per broker, in percent, above which a preferred election runs.',
  },
  {
    key: 'broker.heartbeat.interval.ms',
    type: 'int',
    defaultValue: '2000',
    min: 1,
    doc: 'How often a broker heartbeats to the controller.',
  },
  {
    key: 'broker.session.timeout.ms',
    type: 'int',
    defaultValue: '9000',
    min: 1,
    doc: 'A broker without a heartbeat for this long is fenced: it leaves every ISR and its partitions get new leaders.',
  },
  {
    key: 'controlled.shutdown.enable',
    type: 'boolean',
    defaultValue: 'true',
    doc: 'On a clean stop, move leadership off a broker before it shuts down.',
  },
  {
    key: 'compression.type',
    type: 'string',
    defaultValue: 'producer',
    oneOf: ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'],
    doc: '`producer` stores batches as sent; another codec makes the leader rewrite batches of other codecs into it (topic: compression.type).',
  },
  {
    key: 'compression.gzip.level',
    type: 'int',
    defaultValue: '-1',
    min: 1,
    max: 9,
    orEqual: -1,
    doc: "gzip level (KIP-390) when a batch is rewritten into compression.type=gzip; -1 = zlib's default (topic: compression.gzip.level).",
  },
  {
    key: 'compression.lz4.level',
    type: 'int',
    defaultValue: '9',
    min: 1,
    max: 17,
    doc: "lz4 level, validated; Skiff's lz4 frame encoder has one level (topic: compression.lz4.level).",
  },
  {
    key: 'compression.zstd.level',
    type: 'int',
    defaultValue: '3',
    min: -131072,
    max: 22,
    doc: 'zstd level when a batch is rewritten into compression.type=zstd (topic: compression.zstd.level).',
  },
  {
    key: 'max.decompressed.message.bytes',
    type: 'int',
    defaultValue: '2147483639',
    min: 1,
    max: 2147483639,
    doc: 'Largest record body, in bytes, a compressed produced batch may hold once decompressed; larger ones are refused with INVALID_RECORD (topic: max.decompressed.message.bytes).',
  },
  {
    key: 'max.connections',
    type: 'int',
    defaultValue: '2147483647',
    min: 0,
    doc: 'Client connections accepted at once; more are closed on accept.',
  },
  {
    key: 'connections.max.idle.ms',
    type: 'long',
    defaultValue: '600000',
    min: -1,
    doc: 'Close connections idle this long; -1 = never.',
  },
  {
    key: 'offsets.topic.num.partitions',
    type: 'int',
    defaultValue: '50',
    min: 1,
    doc: 'Partitions of __consumer_offsets, created at the first FindCoordinator for a group; a group lives on partition abs(hashCode(group)) % this.',
  },
  {
    key: 'offsets.topic.replication.factor',
    type: 'int',
    defaultValue: '3',
    min: 1,
    doc: 'Replication factor of __consumer_offsets, capped by the number of brokers (so 1 on one broker).',
  },
  {
    key: 'offsets.topic.segment.bytes',
    type: 'int',
    defaultValue: '104857600',
    min: 14,
    doc: 'segment.bytes of __consumer_offsets.',
  },
  {
    key: 'offsets.retention.minutes',
    type: 'int',
    defaultValue: '10080',
    min: 1,
    doc: 'Committed offsets of a group that has been empty this long are deleted (KIP-211).',
  },
  {
    key: 'offsets.retention.check.interval.ms',
    type: 'long',
    defaultValue: '600000',
    min: 1,
    doc: 'How often expired offsets are looked for.',
  },
  {
    key: 'offset.metadata.max.bytes',
    type: 'int',
    defaultValue: '4096',
    min: 0,
    doc: 'Largest metadata string of a committed offset; larger gets OFFSET_METADATA_TOO_LARGE.',
  },
  {
    key: 'group.initial.rebalance.delay.ms',
    type: 'int',
    defaultValue: '3000',
    min: 0,
    doc: 'How long an empty group waits for more members before its first rebalance completes.',
  },
  {
    key: 'group.min.session.timeout.ms',
    type: 'int',
    defaultValue: '6000',
    min: 0,
    doc: 'Smallest session.timeout.ms a member may ask for (else INVALID_SESSION_TIMEOUT).',
  },
  {
    key: 'group.max.session.timeout.ms',
    type: 'int',
    defaultValue: '1800000',
    min: 0,
    doc: 'Largest session.timeout.ms a member may ask for (else INVALID_SESSION_TIMEOUT).',
  },
  {
    key: 'group.max.size',
    type: 'int',
    defaultValue: '2147483647',
    min: 1,
    doc: 'Members a classic group may hold; one more gets GROUP_MAX_SIZE_REACHED.',
  },
];

/**
 * Common Kafka `server.properties` keys that Skiff accepts and ignores, with a warning: KRaft and
 * ZooKeeper wiring, network tuning, internal-topic sizing, and features not built yet.
 */
export const IGNORED_BROKER_CONFIG_KEYS: readonly string[] = [
  'process.roles',
  'controller.quorum.voters',
  'controller.quorum.bootstrap.servers',
  'controller.listener.names',
  'listener.security.protocol.map',
  'inter.broker.listener.name',
  'security.inter.broker.protocol',
  'metadata.log.dir',
  'zookeeper.connect',
  'zookeeper.connection.timeout.ms',
  'zookeeper.session.timeout.ms',
  'num.network.threads',
  'num.recovery.threads.per.data.dir',
  'num.replica.fetchers',
  'queued.max.requests',
  'socket.send.buffer.bytes',
  'socket.receive.buffer.bytes',
  'transaction.state.log.replication.factor',
  'transaction.state.log.min.isr',
  'transaction.state.log.num.partitions',
  'log.cleaner.threads',
  'log.cleaner.dedupe.buffer.size',
  'log.segment.delete.delay.ms',
  'log.preallocate',
  'background.threads',
  'request.timeout.ms',
  'broker.rack',
  'sasl.enabled.mechanisms',
  'log.flush.scheduler.interval.ms',
  'delete.topic.enable',
  // Kafka 4.x keys (stock config/server.properties and common additions): share groups (KIP-932),
  // the new group coordinator (KIP-848), KRaft tuning. Skiff has none of these features yet.
  'share.coordinator.state.topic.replication.factor',
  'share.coordinator.state.topic.min.isr',
  'share.coordinator.state.topic.num.partitions',
  'share.coordinator.state.topic.segment.bytes',
  'group.coordinator.rebalance.protocols',
  'group.share.enable',
  'unstable.api.versions.enable',
  'transaction.state.log.segment.bytes',
  'metadata.log.segment.bytes',
  'controller.quorum.election.timeout.ms',
  'controller.quorum.fetch.timeout.ms',
];

/**
 * KRaft keys that describe how a node joins a Kafka cluster. They get one warning together (see
 * {@link clusterWarning}) rather than one "Ignoring" line each.
 */
export const CLUSTER_CONFIG_KEYS: readonly string[] = [
  'process.roles',
  'controller.quorum.voters',
  'controller.quorum.bootstrap.servers',
];

/** A listener address. `host` may be a wildcard (0.0.0.0, ::) in `listeners`, never in advertised ones. */
export interface ListenerAddress {
  host: string;
  /** 0 in `listeners` = pick a free port; 0 in `advertisedListeners` = the port actually bound. */
  port: number;
}

/** Where an effective value came from, with Kafka's DescribeConfigs ConfigSource names. */
export type ConfigSource = 'STATIC_BROKER_CONFIG' | 'DEFAULT_CONFIG';

/** The validated broker configuration. Units are last in the names; see {@link BROKER_CONFIG_DEFS}. */
export interface BrokerConfig {
  readonly nodeId: number;
  /** Exactly one PLAINTEXT listener today (an array to keep Kafka's shape). */
  readonly listeners: ListenerAddress[];
  readonly advertisedListeners: ListenerAddress[];
  /** As configured (relative paths resolve against the working directory); at least one, no duplicates. */
  readonly logDirs: string[];
  readonly numPartitions: number;
  readonly defaultReplicationFactor: number;
  readonly autoCreateTopicsEnable: boolean;
  readonly logSegmentBytes: number;
  readonly logIndexIntervalBytes: number;
  readonly messageMaxBytes: number;
  readonly socketRequestMaxBytes: number;
  /** Number.MAX_SAFE_INTEGER stands for Kafka's Long.MAX (never force an fsync by count). */
  readonly logFlushIntervalMessages: number;
  /** null = no time-based fsync. */
  readonly logFlushIntervalMs: number | null;
  readonly numIoThreads: number;
  readonly writeCachingDefault: boolean;
  readonly replicaHighWatermarkCheckpointIntervalMs: number;
  readonly logFlushOffsetCheckpointIntervalMs: number;
  /** log.retention.ms, else minutes, else hours (Kafka's precedence); -1 = forever. */
  readonly logRetentionMs: number;
  /** -1 = no size limit. */
  readonly logRetentionBytes: number;
  readonly logRetentionCheckIntervalMs: number;
  /** log.roll.ms, else log.roll.hours. */
  readonly logRollMs: number;
  readonly logIndexSizeMaxBytes: number;
  readonly logCleanupPolicy: string;
  readonly logCleanerEnable: boolean;
  readonly logCleanerBackoffMs: number;
  readonly logCleanerDeleteRetentionMs: number;
  /** 0..1. */
  readonly logCleanerMinCleanableRatio: number;
  readonly logCleanerMinCompactionLagMs: number;
  /** Number.MAX_SAFE_INTEGER stands for Kafka's Long.MAX (no deadline). */
  readonly logCleanerMaxCompactionLagMs: number;
  readonly logMessageTimestampType: 'CreateTime' | 'LogAppendTime';
  readonly logMessageTimestampBeforeMaxMs: number;
  readonly logMessageTimestampAfterMaxMs: number;
  readonly minInsyncReplicas: number;
  readonly uncleanLeaderElectionEnable: boolean;
  /** replica.lag.time.max.ms */
  readonly replicaLagTimeMaxMs: number;
  /** replica.fetch.max.bytes */
  readonly replicaFetchMaxBytes: number;
  /** replica.fetch.wait.max.ms */
  readonly replicaFetchWaitMaxMs: number;
  /** replica.fetch.min.bytes */
  readonly replicaFetchMinBytes: number;
  /** replica.fetch.backoff.ms */
  readonly replicaFetchBackoffMs: number;
  /** replica.fetch.response.max.bytes */
  readonly replicaFetchResponseMaxBytes: number;
  /** auto.leader.rebalance.enable */
  readonly autoLeaderRebalanceEnable: boolean;
  /** leader.imbalance.check.interval.seconds */
  readonly leaderImbalanceCheckIntervalSeconds: number;
  /** leader.imbalance.per.broker.percentage */
  readonly leaderImbalancePerBrokerPercentage: number;
  /** broker.heartbeat.interval.ms */
  readonly brokerHeartbeatIntervalMs: number;
  /** broker.session.timeout.ms */
  readonly brokerSessionTimeoutMs: number;
  /** controlled.shutdown.enable */
  readonly controlledShutdownEnable: boolean;
  readonly compressionType: string;
  readonly compressionGzipLevel: number;
  readonly compressionLz4Level: number;
  readonly compressionZstdLevel: number;
  readonly maxDecompressedMessageBytes: number;
  readonly maxConnections: number;
  /** -1 = never close idle connections. */
  readonly connectionsMaxIdleMs: number;
  readonly offsetsTopicNumPartitions: number;
  readonly offsetsTopicReplicationFactor: number;
  readonly offsetsTopicSegmentBytes: number;
  readonly offsetsRetentionMinutes: number;
  readonly offsetsRetentionCheckIntervalMs: number;
  readonly offsetMetadataMaxBytes: number;
  readonly groupInitialRebalanceDelayMs: number;
  readonly groupMinSessionTimeoutMs: number;
  readonly groupMaxSessionTimeoutMs: number;
  readonly groupMaxSize: number;
  /** Effective value of every known key that has one (unset nullable keys are absent), as strings. */
  readonly values: Map<string, string>;
  /** Whether each key in `values` was set (STATIC_BROKER_CONFIG) or defaulted (DEFAULT_CONFIG). */
  readonly sources: Map<string, ConfigSource>;
  /** Accepted but ignored keys and similar notes, for the caller to log. */
  readonly warnings: string[];
}

/**
 * Invalid configuration: unknown keys, bad values, inconsistent settings. `problems` holds one
 * message per problem; `message` joins them with newlines.
 */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

const DEFS_BY_KEY: ReadonlyMap<string, BrokerConfigDef> = new Map(BROKER_CONFIG_DEFS.map((def) => [def.key, def]));
const IGNORED_KEYS: ReadonlySet<string> = new Set(IGNORED_BROKER_CONFIG_KEYS);
const CLUSTER_KEYS: ReadonlySet<string> = new Set(CLUSTER_CONFIG_KEYS);
const ALL_KEYS: readonly string[] = [...DEFS_BY_KEY.keys(), ...IGNORED_BROKER_CONFIG_KEYS];

const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(['0.0.0.0', '::']);

/**
 * Validates `props` (key → raw value; values are trimmed, as Kafka does) against the known keys
 * and builds the typed config. Throws {@link ConfigError} listing every problem found.
 */
export function buildBrokerConfig(props: Map<string, string>): BrokerConfig {
  const problems: string[] = [];
  const warnings: string[] = [];
  const explicit = new Map<string, string>();
  for (const [key, rawValue] of props) {
    const value = rawValue.trim();
    if (DEFS_BY_KEY.has(key)) {
      explicit.set(key, value);
    } else if (CLUSTER_KEYS.has(key)) {
      // One warning for all of them, below.
    } else if (IGNORED_KEYS.has(key)) {
      warnings.push(`Ignoring ${key}=${value}: a Kafka broker setting that Skiff does not use`);
    } else {
      problems.push(`Unknown configuration "${key}" (nearest known key: ${nearestKey(key, ALL_KEYS)})`);
    }
  }

  const reader = new ValueReader(explicit, problems);
  const nodeId = resolveNodeId(reader, explicit, warnings, problems);
  const cluster = clusterWarning(props, nodeId);
  if (cluster !== null) warnings.push(cluster);
  const controllerNames = listenerNameSet(props.get('controller.listener.names'));
  const listeners = parseListeners('listeners', reader.raw('listeners') ?? '', controllerNames, warnings, problems);
  const advertisedRaw = explicit.get('advertised.listeners');
  const advertisedListeners =
    advertisedRaw === undefined
      ? listeners.map((l) => ({ host: isWildcardHost(l.host) ? '127.0.0.1' : l.host, port: l.port }))
      : parseListeners('advertised.listeners', advertisedRaw, controllerNames, warnings, problems);
  const logDirs = resolveLogDirs(explicit, warnings, problems);

  const config: BrokerConfig = {
    nodeId,
    listeners,
    advertisedListeners,
    logDirs,
    numPartitions: reader.int('num.partitions'),
    defaultReplicationFactor: reader.int('default.replication.factor'),
    autoCreateTopicsEnable: reader.boolean('auto.create.topics.enable'),
    logSegmentBytes: reader.int('log.segment.bytes'),
    logIndexIntervalBytes: reader.int('log.index.interval.bytes'),
    messageMaxBytes: reader.int('message.max.bytes'),
    socketRequestMaxBytes: reader.int('socket.request.max.bytes'),
    logFlushIntervalMessages: reader.long('log.flush.interval.messages') ?? Number.MAX_SAFE_INTEGER,
    logFlushIntervalMs: reader.long('log.flush.interval.ms'),
    numIoThreads: reader.int('num.io.threads'),
    writeCachingDefault: reader.boolean('write.caching.default'),
    replicaHighWatermarkCheckpointIntervalMs: reader.long('replica.high.watermark.checkpoint.interval.ms') ?? 5000,
    logFlushOffsetCheckpointIntervalMs: reader.int('log.flush.offset.checkpoint.interval.ms'),
    logRetentionMs: retentionMs(reader),
    logRetentionBytes: reader.long('log.retention.bytes') ?? -1,
    logRetentionCheckIntervalMs: reader.long('log.retention.check.interval.ms') ?? 300000,
    logRollMs: reader.long('log.roll.ms') ?? reader.int('log.roll.hours') * 3_600_000,
    logIndexSizeMaxBytes: reader.int('log.index.size.max.bytes'),
    logCleanupPolicy: reader.string('log.cleanup.policy'),
    logCleanerEnable: reader.boolean('log.cleaner.enable'),
    logCleanerBackoffMs: reader.long('log.cleaner.backoff.ms') ?? 15000,
    logCleanerDeleteRetentionMs: reader.long('log.cleaner.delete.retention.ms') ?? 86400000,
    logCleanerMinCleanableRatio: reader.double('log.cleaner.min.cleanable.ratio'),
    logCleanerMinCompactionLagMs: reader.long('log.cleaner.min.compaction.lag.ms') ?? 0,
    logCleanerMaxCompactionLagMs: reader.long('log.cleaner.max.compaction.lag.ms') ?? Number.MAX_SAFE_INTEGER,
    logMessageTimestampType: reader.string('log.message.timestamp.type') as 'CreateTime' | 'LogAppendTime',
    logMessageTimestampBeforeMaxMs: reader.long('log.message.timestamp.before.max.ms') ?? Number.MAX_SAFE_INTEGER,
    logMessageTimestampAfterMaxMs: reader.long('log.message.timestamp.after.max.ms') ?? 3600000,
    minInsyncReplicas: reader.int('min.insync.replicas'),
    uncleanLeaderElectionEnable: reader.boolean('unclean.leader.election.enable'),
    replicaLagTimeMaxMs: reader.long('replica.lag.time.max.ms') ?? 30000,
    replicaFetchMaxBytes: reader.int('replica.fetch.max.bytes'),
    replicaFetchWaitMaxMs: reader.int('replica.fetch.wait.max.ms'),
    replicaFetchMinBytes: reader.int('replica.fetch.min.bytes'),
    replicaFetchBackoffMs: reader.int('replica.fetch.backoff.ms'),
    replicaFetchResponseMaxBytes: reader.int('replica.fetch.response.max.bytes'),
    autoLeaderRebalanceEnable: reader.boolean('auto.leader.rebalance.enable'),
    leaderImbalanceCheckIntervalSeconds: reader.long('leader.imbalance.check.interval.seconds') ?? 300,
    leaderImbalancePerBrokerPercentage: reader.int('leader.imbalance.per.broker.percentage'),
    brokerHeartbeatIntervalMs: reader.int('broker.heartbeat.interval.ms'),
    brokerSessionTimeoutMs: reader.int('broker.session.timeout.ms'),
    controlledShutdownEnable: reader.boolean('controlled.shutdown.enable'),
    compressionType: reader.string('compression.type'),
    compressionGzipLevel: reader.int('compression.gzip.level'),
    compressionLz4Level: reader.int('compression.lz4.level'),
    compressionZstdLevel: reader.int('compression.zstd.level'),
    maxDecompressedMessageBytes: reader.int('max.decompressed.message.bytes'),
    maxConnections: reader.int('max.connections'),
    connectionsMaxIdleMs: reader.long('connections.max.idle.ms') ?? 600000,
    offsetsTopicNumPartitions: reader.int('offsets.topic.num.partitions'),
    offsetsTopicReplicationFactor: reader.int('offsets.topic.replication.factor'),
    offsetsTopicSegmentBytes: reader.int('offsets.topic.segment.bytes'),
    offsetsRetentionMinutes: reader.int('offsets.retention.minutes'),
    offsetsRetentionCheckIntervalMs: reader.long('offsets.retention.check.interval.ms') ?? 600000,
    offsetMetadataMaxBytes: reader.int('offset.metadata.max.bytes'),
    groupInitialRebalanceDelayMs: reader.int('group.initial.rebalance.delay.ms'),
    groupMinSessionTimeoutMs: reader.int('group.min.session.timeout.ms'),
    groupMaxSessionTimeoutMs: reader.int('group.max.session.timeout.ms'),
    groupMaxSize: reader.int('group.max.size'),
    values: new Map(),
    sources: new Map(),
    warnings,
  };
  if (problems.length > 0) throw new ConfigError(problems);

  fillEffectiveValues(config, explicit);
  return config;
}

/** The configuration with every default: what `skiff start` with no file and no flags runs. */
export function defaultBrokerConfig(): BrokerConfig {
  return buildBrokerConfig(new Map());
}

/** Formats a listener as Kafka writes it: `PLAINTEXT://host:port`, IPv6 hosts in brackets. */
export function formatListener(listener: ListenerAddress): string {
  const host = listener.host.includes(':') ? `[${listener.host}]` : listener.host;
  return `PLAINTEXT://${host}:${listener.port}`;
}

/** Reads typed values of known keys (explicit or default), recording problems. */
class ValueReader {
  constructor(
    private readonly explicit: Map<string, string>,
    private readonly problems: string[],
  ) {}

  /** The explicit value, else the default (null if neither). */
  raw(key: string): string | null {
    return this.explicit.get(key) ?? definition(key).defaultValue;
  }

  int(key: string): number {
    return this.integer(key, INT_MIN, INT_MAX, 'INT') ?? Number(definition(key).defaultValue);
  }

  /** A finite double within the definition's min/max (Kafka's Type.DOUBLE with a Range validator). */
  double(key: string): number {
    const raw = this.raw(key) ?? '';
    const value = raw.trim() === '' ? Number.NaN : Number(raw);
    const def = definition(key);
    if (!Number.isFinite(value)) {
      this.problems.push(invalid(key, raw, 'Not a number of type DOUBLE'));
      return Number(def.defaultValue);
    }
    if ((def.min !== undefined && value < def.min) || (def.max !== undefined && value > def.max)) {
      this.problems.push(invalid(key, raw, `Value must be in the range [${def.min ?? '-inf'}, ${def.max ?? 'inf'}]`));
      return Number(def.defaultValue);
    }
    return value;
  }

  /** A long, clamped to Number.MAX_SAFE_INTEGER; null when unset (nullable keys) or invalid. */
  long(key: string): number | null {
    return this.integer(key, LONG_MIN, LONG_MAX, 'LONG');
  }

  /** A string checked against the definition's `oneOf` (each comma-separated part, for lists). */
  string(key: string): string {
    const raw = this.raw(key) ?? '';
    const allowed = definition(key).oneOf;
    if (allowed && !raw.split(',').every((part) => allowed.includes(part.trim()))) {
      this.problems.push(invalid(key, raw, `String must be one of: ${allowed.join(', ')}`));
      return definition(key).defaultValue ?? '';
    }
    return raw;
  }

  boolean(key: string): boolean {
    const raw = this.raw(key) ?? '';
    const lower = raw.toLowerCase();
    if (lower === 'true' || lower === 'false') return lower === 'true';
    this.problems.push(invalid(key, raw, 'Expected value to be either true or false'));
    return definition(key).defaultValue === 'true';
  }

  private integer(key: string, lowest: bigint, highest: bigint, typeName: string): number | null {
    const raw = this.raw(key);
    if (raw === null) return null;
    if (!/^[+-]?\d+$/.test(raw)) {
      this.problems.push(invalid(key, raw, `Not a number of type ${typeName}`));
      return null;
    }
    const value = BigInt(raw);
    if (value < lowest || value > highest) {
      this.problems.push(invalid(key, raw, `Not a number of type ${typeName}`));
      return null;
    }
    const outside = rangeReason(value, definition(key));
    if (outside !== null) {
      this.problems.push(invalid(key, raw, outside));
      return null;
    }
    return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
  }
}

/** Kafka's precedence: log.retention.ms, then .minutes, then .hours; any negative value = forever. */
function retentionMs(reader: ValueReader): number {
  const ms = reader.long('log.retention.ms');
  if (ms !== null) return ms < 0 ? -1 : ms;
  const minutes = reader.raw('log.retention.minutes') !== null ? reader.int('log.retention.minutes') : null;
  if (minutes !== null) return minutes < 0 ? -1 : minutes * 60_000;
  const hours = reader.int('log.retention.hours');
  return hours < 0 ? -1 : hours * 3_600_000;
}

function definition(key: string): BrokerConfigDef {
  const def = DEFS_BY_KEY.get(key);
  if (def === undefined) throw new Error(`not a known broker config: ${key}`);
  return def;
}

/** Kafka's wording: `Invalid value X for configuration K: reason`. */
function invalid(key: string, raw: string, reason: string): string {
  return `Invalid value ${raw} for configuration ${key}: ${reason}`;
}

/** node.id, with broker.id as its alias; both set and different is an error (as in Kafka). */
function resolveNodeId(
  reader: ValueReader,
  explicit: Map<string, string>,
  warnings: string[],
  problems: string[],
): number {
  const hasNodeId = explicit.has('node.id');
  const hasBrokerId = explicit.has('broker.id');
  if (!hasBrokerId) return reader.int('node.id');
  const brokerId = reader.int('broker.id');
  if (!hasNodeId) return brokerId;
  const nodeId = reader.int('node.id');
  if (brokerId !== nodeId) {
    problems.push(`broker.id (${brokerId}) and node.id (${nodeId}) are both set and differ; set only node.id`);
  } else {
    warnings.push('Ignoring broker.id: node.id is set');
  }
  return nodeId;
}

/**
 * The warning for KRaft cluster keys (process.roles, controller.quorum.voters,
 * controller.quorum.bootstrap.servers) in `props`, or null when none is set. A Skiff process is a
 * cluster of its own (one broker, or `--nodes N` with their own controller); when the keys name other nodes (another voter id, several
 * bootstrap servers, a broker-only or controller-only role) the warning says that no cluster is
 * joined.
 */
export function clusterWarning(props: ReadonlyMap<string, string>, nodeId: number): string | null {
  const present = CLUSTER_CONFIG_KEYS.filter((key) => props.has(key));
  if (present.length === 0) return null;
  const list = (key: string): string[] =>
    (props.get(key) ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
  const others: string[] = [];
  const roles = list('process.roles').map((role) => role.toLowerCase());
  if (props.has('process.roles') && !(roles.includes('broker') && roles.includes('controller')))
    others.push(
      `process.roles=${roles.join(',')} leaves the ${roles.includes('broker') ? 'controller' : 'broker'} role to other nodes`,
    );
  const voters = list('controller.quorum.voters');
  const otherVoters = voters.filter((voter) => voter.split('@')[0]?.trim() !== String(nodeId));
  if (otherVoters.length > 0) others.push(`controller.quorum.voters names ${otherVoters.join(', ')}`);
  const bootstrap = list('controller.quorum.bootstrap.servers');
  if (bootstrap.length > 1) others.push(`controller.quorum.bootstrap.servers lists ${bootstrap.length} controllers`);
  const keys = present.join(', ');
  if (others.length === 0)
    return `Ignoring ${keys}: KRaft wiring of a Kafka node; this Skiff process forms a cluster of its own (one node that is its own controller)`;
  return (
    `${keys} describe a Kafka cluster of several nodes (${others.join('; ')}): this Skiff process forms a ` +
    `cluster of its own and joins no other node; to run several brokers, start them in one process with ` +
    `\`skiff start --nodes N\``
  );
}

function listenerNameSet(raw: string | undefined): Set<string> {
  return new Set(
    (raw ?? '')
      .split(',')
      .map((name) => name.trim().toUpperCase())
      .filter((name) => name !== ''),
  );
}

function isWildcardHost(host: string): boolean {
  return WILDCARD_HOSTS.has(host);
}

const LISTENER_PATTERN = /^([A-Za-z0-9_-]+):\/\/(\[[^\]]*\]|[^:[\]/]*):([+-]?\d+)$/;

/**
 * The characters Kafka accepts in a listener host: `[0-9a-zA-Z\-%._:]` in EndPoint's uriParseExp and
 * in Utils.getHost's HOST_PORT_PATTERN (SocketServerConfigs.listenerListToEndPoints rejects
 * anything else with "Unable to parse ... to a broker endpoint"). A DNS name, an IPv4 literal and
 * (in brackets) an IPv6 literal with an optional %zone all fit; a space, a comma or a slash do not.
 */
const LISTENER_HOST_PATTERN = /^[0-9A-Za-z\-%._:]*$/;

/**
 * Parses a Kafka listener list (`NAME://host:port,...`). Skiff serves only PLAINTEXT; listeners
 * named in `controller.listener.names` (a KRaft file's CONTROLLER://) are dropped with a warning.
 * An empty host means every interface (0.0.0.0), as in Kafka; advertised listeners must name a
 * routable host.
 */
function parseListeners(
  key: 'listeners' | 'advertised.listeners',
  raw: string,
  controllerNames: Set<string>,
  warnings: string[],
  problems: string[],
): ListenerAddress[] {
  const result: ListenerAddress[] = [];
  const problemsBefore = problems.length;
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const match = LISTENER_PATTERN.exec(entry);
    if (match === null) {
      problems.push(invalid(key, raw, `"${entry}" is not of the form PLAINTEXT://host:port`));
      continue;
    }
    const [, rawName, rawHost, rawPort] = match;
    assert(
      rawName !== undefined && rawHost !== undefined && rawPort !== undefined,
      'LISTENER_PATTERN has three groups, none optional',
    );
    const name = rawName.toUpperCase();
    const bracketed = rawHost.startsWith('[');
    const host = bracketed ? rawHost.slice(1, -1) : rawHost;
    const port = Number(rawPort);
    if (!LISTENER_HOST_PATTERN.test(host) || (bracketed && !host.includes(':'))) {
      problems.push(
        invalid(
          key,
          raw,
          `host "${host}" is not a host name or IP address (use letters, digits, '-', '.', '_'; an IPv6 address in brackets)`,
        ),
      );
      continue;
    }
    if (controllerNames.has(name)) {
      warnings.push(`Ignoring controller listener ${entry} in ${key}: Skiff has no separate controller listener`);
      continue;
    }
    if (name !== 'PLAINTEXT') {
      problems.push(invalid(key, raw, `listener ${name} is not supported: Skiff serves only PLAINTEXT`));
      continue;
    }
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      problems.push(invalid(key, raw, `port ${rawPort} is not in 0..65535`));
      continue;
    }
    if (result.length > 0) {
      problems.push(invalid(key, raw, 'Each listener must have a different name; PLAINTEXT appears more than once'));
      continue;
    }
    if (key === 'advertised.listeners' && (host === '' || isWildcardHost(host))) {
      problems.push(invalid(key, raw, `cannot advertise the non-routable address "${host}"; use a routable host`));
      continue;
    }
    result.push({ host: host === '' ? '0.0.0.0' : host, port });
  }
  if (result.length === 0 && problems.length === problemsBefore) {
    problems.push(invalid(key, raw, 'needs one PLAINTEXT://host:port listener'));
  }
  return result;
}

/** log.dirs, else log.dir, else the default; split on commas, blanks dropped, duplicates rejected. */
function resolveLogDirs(explicit: Map<string, string>, warnings: string[], problems: string[]): string[] {
  let key = 'log.dirs';
  let raw = explicit.get('log.dirs');
  if (raw === undefined && explicit.has('log.dir')) {
    key = 'log.dir';
    raw = explicit.get('log.dir');
  } else if (raw !== undefined && explicit.has('log.dir')) {
    warnings.push('Ignoring log.dir: log.dirs is set');
  }
  raw ??= definition('log.dirs').defaultValue ?? '';
  const dirs = raw
    .split(',')
    .map((dir) => dir.trim())
    .filter((dir) => dir !== '');
  if (dirs.length === 0) {
    problems.push(invalid(key, raw, 'needs at least one directory'));
  }
  const seen = new Set<string>();
  for (const dir of dirs) {
    const resolved = path.resolve(dir);
    if (seen.has(resolved)) problems.push(invalid(key, raw, `directory ${dir} is listed twice`));
    seen.add(resolved);
  }
  return dirs;
}

/** Fills `values` and `sources` with every effective setting, in table order, derived keys included. */
function fillEffectiveValues(config: BrokerConfig, explicit: Map<string, string>): void {
  const idExplicit = explicit.has('node.id') || explicit.has('broker.id');
  const listenersExplicit = explicit.has('listeners');
  const derived = new Map<string, [string, boolean]>([
    ['node.id', [String(config.nodeId), idExplicit]],
    ['broker.id', [String(config.nodeId), idExplicit]],
    ['listeners', [config.listeners.map(formatListener).join(','), listenersExplicit]],
    [
      'advertised.listeners',
      [
        config.advertisedListeners.map(formatListener).join(','),
        listenersExplicit || explicit.has('advertised.listeners'),
      ],
    ],
    ['log.dirs', [config.logDirs.join(','), explicit.has('log.dirs') || explicit.has('log.dir')]],
  ]);
  for (const def of BROKER_CONFIG_DEFS) {
    const [value, isExplicit] = derived.get(def.key) ?? [
      explicit.get(def.key) ?? def.defaultValue,
      explicit.has(def.key),
    ];
    if (value === null) continue;
    config.values.set(def.key, value);
    config.sources.set(def.key, isExplicit ? 'STATIC_BROKER_CONFIG' : 'DEFAULT_CONFIG');
  }
}
