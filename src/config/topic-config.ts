/**
 * Topic-level configs with Kafka's names (Kafka's LogConfig / TopicConfig), plus Redpanda's
 * `write.caching`. A topic's effective value is its override, else the broker default named in
 * `brokerKey`. This issue honours segment.bytes, index.interval.bytes, max.message.bytes,
 * flush.messages, flush.ms and write.caching; the others are accepted, validated and stored.
 */

type Kind = 'long' | 'int' | 'boolean' | 'string' | 'policy' | 'timestamp-type' | 'double';

interface TopicConfigDef { kind: Kind; brokerKey: string | null; min?: number }

/** Known topic configs: name -> type and the broker config that supplies its default. */
export const TOPIC_CONFIGS: Record<string, TopicConfigDef> = {
  'cleanup.policy': { kind: 'policy', brokerKey: 'log.cleanup.policy' },
  'compression.type': { kind: 'string', brokerKey: 'compression.type' },
  'delete.retention.ms': { kind: 'long', brokerKey: 'log.cleaner.delete.retention.ms', min: 0 },
  'file.delete.delay.ms': { kind: 'long', brokerKey: 'log.segment.delete.delay.ms', min: 0 },
  'flush.messages': { kind: 'long', brokerKey: 'log.flush.interval.messages', min: 1 },
  'flush.ms': { kind: 'long', brokerKey: 'log.flush.interval.ms', min: 0 },
  'index.interval.bytes': { kind: 'int', brokerKey: 'log.index.interval.bytes', min: 0 },
  'max.compaction.lag.ms': { kind: 'long', brokerKey: 'log.cleaner.max.compaction.lag.ms', min: 1 },
  'max.message.bytes': { kind: 'int', brokerKey: 'message.max.bytes', min: 0 },
  'message.timestamp.after.max.ms': { kind: 'long', brokerKey: 'log.message.timestamp.after.max.ms', min: 0 },
  'message.timestamp.before.max.ms': { kind: 'long', brokerKey: 'log.message.timestamp.before.max.ms', min: 0 },
  'message.timestamp.type': { kind: 'timestamp-type', brokerKey: 'log.message.timestamp.type' },
  'min.cleanable.dirty.ratio': { kind: 'double', brokerKey: 'log.cleaner.min.cleanable.ratio' },
  'min.compaction.lag.ms': { kind: 'long', brokerKey: 'log.cleaner.min.compaction.lag.ms', min: 0 },
  'min.insync.replicas': { kind: 'int', brokerKey: 'min.insync.replicas', min: 1 },
  'preallocate': { kind: 'boolean', brokerKey: 'log.preallocate' },
  'retention.bytes': { kind: 'long', brokerKey: 'log.retention.bytes' },
  'retention.ms': { kind: 'long', brokerKey: 'log.retention.ms', min: -1 },
  'segment.bytes': { kind: 'int', brokerKey: 'log.segment.bytes', min: 14 },
  'segment.index.bytes': { kind: 'int', brokerKey: 'log.index.size.max.bytes', min: 4 },
  'segment.jitter.ms': { kind: 'long', brokerKey: 'log.roll.jitter.ms', min: 0 },
  'segment.ms': { kind: 'long', brokerKey: 'log.roll.ms', min: 1 },
  'unclean.leader.election.enable': { kind: 'boolean', brokerKey: 'unclean.leader.election.enable' },
  'write.caching': { kind: 'boolean', brokerKey: 'write.caching.default' },
};

/** Checks one value; returns a reason or null. */
export function topicConfigInvalidReason(name: string, value: string | null): string | null {
  const def = TOPIC_CONFIGS[name];
  if (!def) return `Unknown topic config name: ${name}`;
  if (value === null) return null;
  switch (def.kind) {
    case 'long':
    case 'int': {
      if (!/^-?\d+$/.test(value.trim())) return `Invalid value ${value} for configuration ${name}: Not a number of type ${def.kind.toUpperCase()}`;
      const n = Number(value.trim());
      if (def.kind === 'int' && (n > 2147483647 || n < -2147483648)) return `Invalid value ${value} for configuration ${name}: Not a number of type INT`;
      if (def.min !== undefined && n < def.min) return `Invalid value ${value} for configuration ${name}: Value must be at least ${def.min}`;
      return null;
    }
    case 'double':
      return Number.isFinite(Number(value)) ? null : `Invalid value ${value} for configuration ${name}: Not a number of type DOUBLE`;
    case 'boolean':
      return /^(true|false)$/i.test(value.trim()) ? null : `Invalid value ${value} for configuration ${name}: Expected value to be either true or false`;
    case 'policy': {
      const parts = value.split(',').map((p) => p.trim());
      return parts.every((p) => p === 'delete' || p === 'compact') ? null : `Invalid value ${value} for configuration ${name}: String must be one of: compact, delete`;
    }
    case 'timestamp-type':
      return value === 'CreateTime' || value === 'LogAppendTime' ? null : `Invalid value ${value} for configuration ${name}: String must be one of: CreateTime, LogAppendTime`;
    case 'string':
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
  indexIntervalBytes: number;
  maxMessageBytes: number;
  /** fsync before acknowledging once this many messages are unflushed (Long.MAX: never). */
  flushMessages: number;
  /** fsync at least this often in ms (null: no time-based flush). */
  flushMs: number | null;
  /** Redpanda's write.caching: true counts page-cache bytes toward the HW (Kafka's behaviour). */
  writeCaching: boolean;
}

/** Broker defaults the effective topic config falls back to. */
export interface BrokerLogDefaults {
  logSegmentBytes: number;
  logIndexIntervalBytes: number;
  messageMaxBytes: number;
  logFlushIntervalMessages: number;
  logFlushIntervalMs: number | null;
  writeCachingDefault: boolean;
}

/** Effective replica log config: topic overrides over broker defaults. */
export function effectiveLogConfig(overrides: Record<string, string>, defaults: BrokerLogDefaults): ReplicaLogConfig {
  const num = (key: string, fallback: number): number => (overrides[key] !== undefined ? Number(overrides[key]) : fallback);
  return {
    segmentBytes: num('segment.bytes', defaults.logSegmentBytes),
    indexIntervalBytes: num('index.interval.bytes', defaults.logIndexIntervalBytes),
    maxMessageBytes: num('max.message.bytes', defaults.messageMaxBytes),
    flushMessages: num('flush.messages', defaults.logFlushIntervalMessages),
    flushMs: overrides['flush.ms'] !== undefined ? Number(overrides['flush.ms']) : defaults.logFlushIntervalMs,
    writeCaching: overrides['write.caching'] !== undefined ? overrides['write.caching'].toLowerCase() === 'true' : defaults.writeCachingDefault,
  };
}
