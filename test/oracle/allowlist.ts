/**
 * Differences between Apache Kafka and Skiff that the differential suite tolerates, each with the
 * reason. A difference that no entry matches (scenario, path, and the entry's check on the two
 * values) fails its scenario. Two kinds:
 *
 * - `deployment`: a fact of running two different brokers (ids, ports, paths, timing, free text,
 *   features out of Skiff's scope). These stay.
 * - `gap`: Skiff behaves differently from Kafka and should not. Each check pins the exact
 *   behaviour seen, so a different divergence still fails; delete the entry when Skiff is fixed
 *   (an entry that tolerated nothing is reported as unused by differential.test.ts).
 */
import type { AllowlistEntry } from './compare';
import type { Json } from './context';

/** Paths whose leaf holds a broker node id. */
const NODE_ID_PATH = /(^|\.)(nodeId|brokerId|controllerId|leader|leaderId)$|\.(replicas|isr)\[\d+\]$/;

const is =
  (expectedKafka: Json | undefined, expectedSkiff: Json | undefined) =>
  (kafka: Json | undefined, skiff: Json | undefined): boolean =>
    JSON.stringify(kafka) === JSON.stringify(expectedKafka) && JSON.stringify(skiff) === JSON.stringify(expectedSkiff);

export const ALLOWLIST: readonly (AllowlistEntry & { kind: 'deployment' | 'gap' })[] = [
  // ---- deployment facts ----
  {
    id: 'cluster-id',
    kind: 'deployment',
    path: /(^|\.)clusterId$/,
    reason:
      'Each cluster has its own random id (Kafka: chosen when the fixture formats its storage; Skiff: generated on first start).',
    check: (kafka, skiff, facts) => kafka === facts.kafka.clusterId && skiff === facts.skiff.clusterId,
  },
  {
    id: 'node-ids',
    kind: 'deployment',
    path: NODE_ID_PATH,
    reason:
      'The Kafka fixture runs as node.id=1 (KRaft combined mode), Skiff with its default node.id=0: each side must name its own node.',
    check: (kafka, skiff, facts) => kafka === facts.kafka.nodeId && skiff === facts.skiff.nodeId,
  },
  {
    id: 'ports',
    kind: 'deployment',
    path: /(^|\.)port$/,
    reason: 'Each broker listens on its own free loopback port.',
    check: (kafka, skiff, facts) => kafka === facts.kafka.port && skiff === facts.skiff.port,
  },
  {
    id: 'log-dir-paths',
    kind: 'deployment',
    scenario: 'describe-log-dirs',
    path: /^results\[\d+\]\.logDir$/,
    reason: "Each broker's log.dirs is its own temp folder.",
    check: (kafka, skiff) =>
      typeof kafka === 'string' && typeof skiff === 'string' && kafka.startsWith('/') && skiff.startsWith('/'),
  },
  {
    id: 'error-messages',
    kind: 'deployment',
    path: /(^|\.)errorMessage$/,
    reason:
      'Error messages are free text and the codes beside them are compared; Skiff may explain an error Kafka leaves without a message, but must not drop a message Kafka gives.',
    check: (kafka, skiff) => kafka === null || typeof skiff === 'string',
  },
  {
    id: 'auto-create-first-answer',
    kind: 'deployment',
    scenario: 'unknown-topic',
    path: /^autoCreate\[0\]\.error$/,
    reason:
      "Timing: Kafka creates an auto-created topic asynchronously through its controller, so the Metadata that triggers it answers UNKNOWN_TOPIC_OR_PARTITION or LEADER_NOT_AVAILABLE; Skiff creates it before answering. The topic's state once created is compared.",
    check: (kafka, skiff) =>
      ['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NONE'].includes(kafka as string) &&
      ['LEADER_NOT_AVAILABLE', 'NONE'].includes(skiff as string),
  },
  {
    id: 'min-insync-replicas-source',
    kind: 'deployment',
    scenario: 'topic-configs',
    path: /\.configs\.min\.insync\.replicas\.source$/,
    reason:
      "Kafka 4.x's storage format writes min.insync.replicas=1 as a cluster-wide dynamic default (KIP-966, eligible leader replicas), so Kafka reports source DYNAMIC_DEFAULT_BROKER_CONFIG (3); Skiff reports DEFAULT_CONFIG (5). The values are compared.",
    check: is(3, 5),
  },
  {
    id: 'topic-configs-out-of-scope',
    kind: 'deployment',
    scenario: 'topic-configs',
    path: /^allNames\.(remote\.[a-z.]+|local\.retention\.(bytes|ms)|(leader|follower)\.replication\.throttled\.replicas|errors\.deadletterqueue\.group\.enable)$/,
    reason:
      'Topic configs of features outside a single-host broker: tiered storage (remote.*, local.retention.*), replication throttling, and the dead-letter queue of Kafka Streams/share groups.',
    check: is(true, undefined),
  },
  {
    id: 'write-caching',
    kind: 'deployment',
    scenario: 'topic-configs',
    path: /^allNames\.write\.caching$/,
    reason: "Skiff's own topic config (Redpanda's write.caching), documented in README.md.",
    check: is(undefined, true),
  },
  {
    id: 'old-api-versions',
    kind: 'deployment',
    scenario: 'api-versions',
    path: /^apis\.\w+\.minVersion$/,
    reason:
      'Kafka 4.0 removed old request versions (KIP-896); Skiff still serves them for older clients. Skiff may start lower, never higher.',
    check: (kafka, skiff) => typeof kafka === 'number' && typeof skiff === 'number' && skiff <= kafka,
  },
  {
    id: 'max-decompressed-record-index',
    kind: 'deployment',
    scenario: 'max-decompressed',
    path: /^(gzip|zstd)\.recordErrors(\.length|\[0\])$/,
    reason:
      'Skiff names the record over max.decompressed.message.bytes in RecordErrors, as for its other record faults (docs/design-notes.md, rows Record validation); Kafka throws InvalidRecordException from its record iterator and answers without RecordErrors (and without an error message). Error codes and offsets are compared.',
    check: (kafka, skiff, _facts, diff) =>
      diff.path.endsWith('.length')
        ? kafka === 0 && skiff === 1
        : kafka === undefined && (skiff as { batchIndex?: number } | undefined)?.batchIndex === 1,
  },

  // ---- gaps: Skiff differs from Kafka (remove the entry once fixed) ----
];
