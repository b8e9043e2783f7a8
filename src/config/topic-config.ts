/**
 * Topic-level configs with Kafka's names (Kafka's LogConfig / TopicConfig), plus Redpanda's
 * `write.caching`. A topic's effective value is its override, else the broker default named in
 * `brokerKey`. Honoured: segment.bytes, segment.ms, segment.index.bytes, index.interval.bytes,
 * max.message.bytes, flush.messages, flush.ms, write.caching, retention.*, cleanup.policy, the
 * compaction configs (delete.retention.ms, min.cleanable.dirty.ratio, min/max.compaction.lag.ms),
 * message.timestamp.*, min.insync.replicas, compression.type and the compression levels (gzip and
 * zstd; lz4 has one level here), max.decompressed.message.bytes (each record of a compressed
 * produced batch, src/protocol/record-batch/validate.ts); the others are accepted, validated and
 * stored.
 */

type Kind = 'long' | 'int' | 'boolean' | 'string' | 'policy' | 'timestamp-type' | 'double';

/**
 * `min`/`max` bound int and long values (inclusive); `orEqual` is one more value accepted outside
 * them (compression.gzip.level's -1, Deflater's default level).
 */
interface TopicConfigDef {
  kind: Kind;
  brokerKey: string | null;
  min?: number;
  max?: number;
  orEqual?: number;
}

/**
 * Why `n` is outside [min, max] (either may be absent) and not `orEqual`, in Kafka's words
 * (ConfigDef.Range, and the gzip level's validator), or null when it is accepted.
 */
export function rangeReason(
  n: number | bigint,
  bounds: { min?: number; max?: number; orEqual?: number },
): string | null {
  const { min, max, orEqual } = bounds;
  if (orEqual !== undefined && BigInt(n) === BigInt(orEqual)) return null;
  const below = min !== undefined && BigInt(n) < BigInt(min);
  const above = max !== undefined && BigInt(n) > BigInt(max);
  if (!below && !above) return null;
  if (orEqual !== undefined) return `Value must be between ${min} and ${max} or equal to ${orEqual}`;
  return below ? `Value must be at least ${min}` : `Value must be no more than ${max}`;
}

/** Known topic configs: name -> type and the broker config that supplies its default. */
export const TOPIC_CONFIGS: Record<string, TopicConfigDef> = {
  'cleanup.policy': { kind: 'policy', brokerKey: 'log.cleanup.policy' },
  'compression.type': { kind: 'string', brokerKey: 'compression.type' },
  // Levels used when a batch is rewritten into the topic's compression.type (KIP-390).
  'compression.gzip.level': { kind: 'int', brokerKey: 'compression.gzip.level', min: 1, max: 9, orEqual: -1 },
  'compression.lz4.level': { kind: 'int', brokerKey: 'compression.lz4.level', min: 1, max: 17 },
  'compression.zstd.level': { kind: 'int', brokerKey: 'compression.zstd.level', min: -131072, max: 22 },
  'delete.retention.ms': { kind: 'long', brokerKey: 'log.cleaner.delete.retention.ms', min: 0 },
  'file.delete.delay.ms': { kind: 'long', brokerKey: 'log.segment.delete.delay.ms', min: 0 },
  'flush.messages': { kind: 'long', brokerKey: 'log.flush.interval.messages', min: 1 },
  'flush.ms': { kind: 'long', brokerKey: 'log.flush.interval.ms', min: 0 },
  'index.interval.bytes': { kind: 'int', brokerKey: 'log.index.interval.bytes', min: 0 },
  'max.compaction.lag.ms': { kind: 'long', brokerKey: 'log.cleaner.max.compaction.lag.ms', min: 1 },
  'max.decompressed.message.bytes': {
    kind: 'int',
    brokerKey: 'max.decompressed.message.bytes',
    min: 1,
    max: 2147483639,
  },
  'max.message.bytes': { kind: 'int', brokerKey: 'message.max.bytes', min: 0 },
  'message.timestamp.after.max.ms': { kind: 'long', brokerKey: 'log.message.timestamp.after.max.ms', min: 0 },
  'message.timestamp.before.max.ms': { kind: 'long', brokerKey: 'log.message.timestamp.before.max.ms', min: 0 },
  'message.timestamp.type': { kind: 'timestamp-type', brokerKey: 'log.message.timestamp.type' },
  'min.cleanable.dirty.ratio': { kind: 'double', brokerKey: 'log.cleaner.min.cleanable.ratio' },
  'min.compaction.lag.ms': { kind: 'long', brokerKey: 'log.cleaner.min.compaction.lag.ms', min: 0 },
  'min.insync.replicas': { kind: 'int', brokerKey: 'min.insync.replicas', min: 1 },
  preallocate: { kind: 'boolean', brokerKey: 'log.preallocate' },
  'retention.bytes': { kind: 'long', brokerKey: 'log.retention.bytes' },
  'retention.ms': { kind: 'long', brokerKey: 'log.retention.ms', min: -1 },
  'segment.bytes': { kind: 'int', brokerKey: 'log.segment.bytes', min: 14 },
  'segment.index.bytes': { kind: 'int', brokerKey: 'log.index.size.max.bytes', min: 4 },
  'segment.jitter.ms': { kind: 'long', brokerKey: 'log.roll.jitter.ms', min: 0 },
  'segment.ms': { kind: 'long', brokerKey: 'log.roll.ms', min: 1 },
  'unclean.leader.election.enable': { kind: 'boolean', brokerKey: 'unclean.leader.election.enable' },
  'write.caching': { kind: 'boolean', brokerKey: 'write.caching.default' },
};

/**
 * Kafka's compression.type values (topic and broker), in the order its error message lists them:
 * `producer` keeps each batch's own codec; any other value makes the leader rewrite a batch with
 * another codec into this one on produce (`uncompressed`: none).
 */
export const COMPRESSION_TYPES: readonly string[] = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'];

/** Checks one value; returns a reason or null. */
export function topicConfigInvalidReason(name: string, value: string | null): string | null {
  const def = TOPIC_CONFIGS[name];
  if (!def) return `Unknown topic config name: ${name}`;
  if (value === null) return null;
  switch (def.kind) {
    case 'long':
    case 'int': {
      if (!/^-?\d+$/.test(value.trim()))
        return `Invalid value ${value} for configuration ${name}: Not a number of type ${def.kind.toUpperCase()}`;
      const n = Number(value.trim());
      if (def.kind === 'int' && (n > 2147483647 || n < -2147483648))
        return `Invalid value ${value} for configuration ${name}: Not a number of type INT`;
      const outside = rangeReason(BigInt(value.trim()), def);
      return outside === null ? null : `Invalid value ${value} for configuration ${name}: ${outside}`;
    }
    case 'double': {
      const n = value.trim() === '' ? Number.NaN : Number(value);
      if (!Number.isFinite(n)) return `Invalid value ${value} for configuration ${name}: Not a number of type DOUBLE`;
      // min.cleanable.dirty.ratio, the only double: Kafka's between(0, 1).
      if (n < 0) return `Invalid value ${value} for configuration ${name}: Value must be at least 0`;
      return n > 1 ? `Invalid value ${value} for configuration ${name}: Value must be no more than 1` : null;
    }
    case 'boolean':
      return /^(true|false)$/i.test(value.trim())
        ? null
        : `Invalid value ${value} for configuration ${name}: Expected value to be either true or false`;
    case 'policy': {
      const parts = value.split(',').map((p) => p.trim());
      return parts.every((p) => p === 'delete' || p === 'compact')
        ? null
        : `Invalid value ${value} for configuration ${name}: String must be one of: compact, delete`;
    }
    case 'timestamp-type':
      return value === 'CreateTime' || value === 'LogAppendTime'
        ? null
        : `Invalid value ${value} for configuration ${name}: String must be one of: CreateTime, LogAppendTime`;
    case 'string':
      if (name === 'compression.type' && !COMPRESSION_TYPES.includes(value)) {
        return `Invalid value ${value} for configuration ${name}: String must be one of: ${COMPRESSION_TYPES.join(', ')}`;
      }
      return null;
  }
}

/** Validates a set of overrides; returns the first reason or null. */
export function validateTopicConfigs(configs: Record<string, string>): string | null {
  for (const [name, value] of Object.entries(configs)) {
    const reason = topicConfigInvalidReason(name, value);
    if (reason) return reason;
  }
  return null;
}

/** What a replica needs of its topic's effective configuration. Units in the names. */
export interface ReplicaLogConfig {
  segmentBytes: number;
  /** Roll the active segment once its first batch is this old (segment.ms). */
  segmentMs: number;
  /** Roll when the active segment's index would exceed this (segment.index.bytes). */
  segmentIndexBytes: number;
  indexIntervalBytes: number;
  maxMessageBytes: number;
  /** fsync before acknowledging once this many messages are unflushed (Long.MAX: never). */
  flushMessages: number;
  /** fsync at least this often in ms (null: no time-based flush). */
  flushMs: number | null;
  /** Redpanda's write.caching: true counts page-cache bytes toward the HW (Kafka's behaviour). */
  writeCaching: boolean;
  /** -1 = keep forever. */
  retentionMs: number;
  /** -1 = no size limit. */
  retentionBytes: number;
  /** Whether retention deletes segments (cleanup.policy contains delete). */
  deleteEnabled: boolean;
  /** Whether compaction is asked for (cleanup.policy contains compact): records need keys. */
  compactEnabled: boolean;
  /** log.cleaner.enable (broker): whether the cleaner runs at all. */
  cleanerEnable: boolean;
  /** log.cleaner.backoff.ms (broker): how often a compacted replica checks for cleaning, ms. */
  cleanerBackoffMs: number;
  /** delete.retention.ms: a tombstone lives this long after its first cleaning (KIP-534). */
  deleteRetentionMs: number;
  /** min.cleanable.dirty.ratio (0..1). */
  minCleanableDirtyRatio: number;
  /** min.compaction.lag.ms (KIP-58). */
  minCompactionLagMs: number;
  /** max.compaction.lag.ms (KIP-354; Number.MAX_SAFE_INTEGER = none). */
  maxCompactionLagMs: number;
  messageTimestampType: 'CreateTime' | 'LogAppendTime';
  messageTimestampBeforeMaxMs: number;
  messageTimestampAfterMaxMs: number;
  minInsyncReplicas: number;
  /** compression.type: one of COMPRESSION_TYPES. */
  compressionType: string;
  /** KIP-390 levels used when a batch is rewritten (compression.gzip/lz4/zstd.level). */
  compressionGzipLevel: number;
  compressionLz4Level: number;
  compressionZstdLevel: number;
  /**
   * max.decompressed.message.bytes: the largest record body, in bytes, a compressed produced batch
   * may hold once decompressed (Kafka 4.4's per-record bound; its default 2147483639 bounds nothing).
   */
  maxDecompressedMessageBytes: number;
}

/** The broker settings topic configs fall back to (a BrokerConfig satisfies it). */
export interface BrokerLogDefaults {
  logSegmentBytes: number;
  logRollMs: number;
  logIndexIntervalBytes: number;
  messageMaxBytes: number;
  logFlushIntervalMessages: number;
  logFlushIntervalMs: number | null;
  writeCachingDefault: boolean;
  logRetentionMs: number;
  logRetentionBytes: number;
  logCleanupPolicy: string;
  logMessageTimestampType: 'CreateTime' | 'LogAppendTime';
  logMessageTimestampBeforeMaxMs: number;
  logMessageTimestampAfterMaxMs: number;
  minInsyncReplicas: number;
  logIndexSizeMaxBytes: number;
  uncleanLeaderElectionEnable: boolean;
  compressionType: string;
  logCleanerEnable: boolean;
  logCleanerBackoffMs: number;
  logCleanerDeleteRetentionMs: number;
  logCleanerMinCleanableRatio: number;
  logCleanerMinCompactionLagMs: number;
  logCleanerMaxCompactionLagMs: number;
  compressionGzipLevel: number;
  compressionLz4Level: number;
  compressionZstdLevel: number;
  maxDecompressedMessageBytes: number;
}

/** Kafka's Long.MAX_VALUE as a string: what Kafka shows for "never". */
const LONG_MAX = '9223372036854775807';

/** Clamped "never" values (Number.MAX_SAFE_INTEGER) are shown as Kafka's Long.MAX. */
function longString(n: number): string {
  return n >= Number.MAX_SAFE_INTEGER ? LONG_MAX : String(n);
}

/**
 * The value every topic config takes when the topic does not override it, from the broker's
 * settings (Kafka's LogConfig defaults via the broker's log.* keys). Keys without a Skiff broker
 * setting get Kafka's default.
 */
export function topicConfigDefaults(broker: BrokerLogDefaults): Record<string, string> {
  return {
    'cleanup.policy': broker.logCleanupPolicy,
    'compression.type': broker.compressionType,
    'delete.retention.ms': longString(broker.logCleanerDeleteRetentionMs),
    'compression.gzip.level': String(broker.compressionGzipLevel),
    'compression.lz4.level': String(broker.compressionLz4Level),
    'compression.zstd.level': String(broker.compressionZstdLevel),
    'max.decompressed.message.bytes': String(broker.maxDecompressedMessageBytes),
    'file.delete.delay.ms': '60000',
    'flush.messages': longString(broker.logFlushIntervalMessages),
    'flush.ms': broker.logFlushIntervalMs === null ? LONG_MAX : longString(broker.logFlushIntervalMs),
    'index.interval.bytes': String(broker.logIndexIntervalBytes),
    'max.compaction.lag.ms': longString(broker.logCleanerMaxCompactionLagMs),
    'max.message.bytes': String(broker.messageMaxBytes),
    'message.timestamp.after.max.ms': longString(broker.logMessageTimestampAfterMaxMs),
    'message.timestamp.before.max.ms': longString(broker.logMessageTimestampBeforeMaxMs),
    'message.timestamp.type': broker.logMessageTimestampType,
    'min.cleanable.dirty.ratio': String(broker.logCleanerMinCleanableRatio),
    'min.compaction.lag.ms': longString(broker.logCleanerMinCompactionLagMs),
    'min.insync.replicas': String(broker.minInsyncReplicas),
    preallocate: 'false',
    'retention.bytes': String(broker.logRetentionBytes),
    'retention.ms': String(broker.logRetentionMs),
    'segment.bytes': String(broker.logSegmentBytes),
    'segment.index.bytes': String(broker.logIndexSizeMaxBytes),
    'segment.jitter.ms': '0',
    'segment.ms': longString(broker.logRollMs),
    'unclean.leader.election.enable': String(broker.uncleanLeaderElectionEnable),
    'write.caching': String(broker.writeCachingDefault),
  };
}

/** Effective replica log config: topic overrides over broker defaults. */
export function effectiveLogConfig(overrides: Record<string, string>, broker: BrokerLogDefaults): ReplicaLogConfig {
  const merged = { ...topicConfigDefaults(broker), ...overrides };
  const num = (key: string): number => Math.min(Number(merged[key]), Number.MAX_SAFE_INTEGER);
  const policy = merged['cleanup.policy']!.split(',').map((p) => p.trim());
  const flushMs = num('flush.ms');
  return {
    segmentBytes: num('segment.bytes'),
    segmentMs: num('segment.ms'),
    segmentIndexBytes: num('segment.index.bytes'),
    indexIntervalBytes: num('index.interval.bytes'),
    maxMessageBytes: num('max.message.bytes'),
    flushMessages: num('flush.messages'),
    flushMs: flushMs >= Number.MAX_SAFE_INTEGER ? null : flushMs,
    writeCaching: merged['write.caching']!.toLowerCase() === 'true',
    retentionMs: num('retention.ms') < 0 ? -1 : num('retention.ms'),
    retentionBytes: num('retention.bytes') < 0 ? -1 : num('retention.bytes'),
    deleteEnabled: policy.includes('delete'),
    compactEnabled: policy.includes('compact'),
    cleanerEnable: broker.logCleanerEnable,
    cleanerBackoffMs: broker.logCleanerBackoffMs,
    deleteRetentionMs: num('delete.retention.ms'),
    minCleanableDirtyRatio: Number(merged['min.cleanable.dirty.ratio']),
    minCompactionLagMs: num('min.compaction.lag.ms'),
    maxCompactionLagMs: num('max.compaction.lag.ms'),
    messageTimestampType: merged['message.timestamp.type'] as 'CreateTime' | 'LogAppendTime',
    messageTimestampBeforeMaxMs: num('message.timestamp.before.max.ms'),
    messageTimestampAfterMaxMs: num('message.timestamp.after.max.ms'),
    minInsyncReplicas: num('min.insync.replicas'),
    compressionType: merged['compression.type']!,
    compressionGzipLevel: num('compression.gzip.level'),
    compressionLz4Level: num('compression.lz4.level'),
    compressionZstdLevel: num('compression.zstd.level'),
    maxDecompressedMessageBytes: num('max.decompressed.message.bytes'),
  };
}

/** Kafka's DescribeConfigs config types (ConfigType in DescribeConfigsResponse v3+). */
export const CONFIG_TYPE = {
  UNKNOWN: 0,
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
} as const;

/** The DescribeConfigs type of a topic config. */
export function topicConfigType(name: string): number {
  const kind = TOPIC_CONFIGS[name]?.kind;
  switch (kind) {
    case 'long':
      return CONFIG_TYPE.LONG;
    case 'int':
      return CONFIG_TYPE.INT;
    case 'boolean':
      return CONFIG_TYPE.BOOLEAN;
    case 'double':
      return CONFIG_TYPE.DOUBLE;
    case 'policy':
      return CONFIG_TYPE.LIST;
    case 'string':
    case 'timestamp-type':
      return CONFIG_TYPE.STRING;
    default:
      return CONFIG_TYPE.UNKNOWN;
  }
}
