/**
 * The cluster's Prometheus metrics (GET /metrics), on prom-client with a registry per admin server, so
 * two servers in one process (tests) never share a series. Names follow Kafka's JMX metrics and
 * Redpanda's `/metrics`, in Prometheus's style (snake case, `_total` counters, seconds):
 *
 * | metric | type | labels | Kafka counterpart |
 * | --- | --- | --- | --- |
 * | `skiff_brokers` | gauge | state | `ActiveBrokerCount`, `FencedBrokerCount` |
 * | `skiff_partitions` | gauge | — | `GlobalPartitionCount` |
 * | `skiff_under_replicated_partitions` | gauge | — | `UnderReplicatedPartitions` |
 * | `skiff_offline_partitions` | gauge | — | `OfflinePartitionsCount` |
 * | `skiff_partition_leader_epoch` | gauge | topic, partition | — |
 * | `skiff_partition_log_end_offset` | gauge | topic, partition, broker | `Log.LogEndOffset` |
 * | `skiff_partition_fsynced_offset` | gauge | topic, partition, broker | — (Redpanda's flushed offset) |
 * | `skiff_partition_high_watermark` | gauge | topic, partition, broker | — (Kafka has it only per leader) |
 * | `skiff_isr_shrinks_total` | counter | — | `IsrShrinksPerSec` |
 * | `skiff_isr_expands_total` | counter | — | `IsrExpandsPerSec` |
 * | `skiff_leader_elections_total` | counter | — | `LeaderElectionRateAndTimeMs` (its count) |
 * | `skiff_requests_total` | counter | api, broker | `RequestsPerSec` |
 * | `skiff_request_duration_seconds` | histogram | api, broker | `TotalTimeMs` |
 * | `skiff_request_errors_total` | counter | api, error, broker | `ErrorsPerSec` (non-NONE errors only) |
 *
 * Gauges are read from the {@link ClusterView} at scrape time ({@link AdminMetrics.scrape}); an offset
 * the view reports as -1 (unknown) has no series. Counters count what {@link AdminMetrics.observeMetadata}
 * and {@link AdminMetrics.recordRequest} were given since the server started.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MetadataImage, PartitionState } from '../controller/metadata-records';
import type { RequestDoneInfo } from '../network/dispatcher';
import { errorName } from '../protocol/error-codes';
import type { BrokerRunState, ClusterObserver, ClusterView } from './cluster-view';

/** Upper bounds of `skiff_request_duration_seconds`, 0.5 ms to 10 s (a Fetch long poll waits up to its max_wait_ms). */
export const REQUEST_DURATION_BUCKETS_SECONDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

const BROKER_STATES: readonly BrokerRunState[] = ['running', 'fenced', 'stopped'];

/** What one partition looked like in the last observed image, keyed by topic id and partition. */
interface PartitionSnapshot {
  leaderEpoch: number;
  isr: readonly number[];
}

/** The admin server's metrics: a registry of its own, gauges filled from a view, counters fed by the cluster. */
export class AdminMetrics implements ClusterObserver {
  /** The registry every metric below is registered in (and only there). */
  readonly registry = new Registry();
  private readonly brokersGauge: Gauge<'state'>;
  private readonly partitionsGauge: Gauge;
  private readonly underReplicated: Gauge;
  private readonly offline: Gauge;
  private readonly leaderEpoch: Gauge<'topic' | 'partition'>;
  private readonly logEndOffset: Gauge<'topic' | 'partition' | 'broker'>;
  private readonly fsyncedOffset: Gauge<'topic' | 'partition' | 'broker'>;
  private readonly highWatermark: Gauge<'topic' | 'partition' | 'broker'>;
  private readonly isrShrinks: Counter;
  private readonly isrExpands: Counter;
  private readonly leaderElections: Counter;
  private readonly requests: Counter<'api' | 'broker'>;
  private readonly requestDuration: Histogram<'api' | 'broker'>;
  private readonly requestErrors: Counter<'api' | 'error' | 'broker'>;
  /** The last image observed: its offset and its partitions. Null before the first (the baseline). */
  private last: { offset: number; partitions: Map<string, PartitionSnapshot> } | null = null;

  constructor() {
    const registers = [this.registry];
    this.brokersGauge = new Gauge({
      name: 'skiff_brokers',
      help: 'Brokers of the cluster by state (running, fenced, stopped)',
      labelNames: ['state'],
      registers,
    });
    this.partitionsGauge = new Gauge({ name: 'skiff_partitions', help: 'Partitions of every topic', registers });
    this.underReplicated = new Gauge({
      name: 'skiff_under_replicated_partitions',
      help: 'Partitions with a leader whose ISR is smaller than their replica set',
      registers,
    });
    this.offline = new Gauge({
      name: 'skiff_offline_partitions',
      help: 'Partitions without a leader (every ISR member is down)',
      registers,
    });
    this.leaderEpoch = new Gauge({
      name: 'skiff_partition_leader_epoch',
      help: "A partition's current leader epoch",
      labelNames: ['topic', 'partition'],
      registers,
    });
    const replicaLabels = ['topic', 'partition', 'broker'] as const;
    this.logEndOffset = new Gauge({
      name: 'skiff_partition_log_end_offset',
      help: "A replica's log-end offset (the offset the next batch gets)",
      labelNames: replicaLabels,
      registers,
    });
    this.fsyncedOffset = new Gauge({
      name: 'skiff_partition_fsynced_offset',
      help: 'How far a replica has fsynced its log (exclusive offset)',
      labelNames: replicaLabels,
      registers,
    });
    this.highWatermark = new Gauge({
      name: 'skiff_partition_high_watermark',
      help: 'The high watermark as a replica knows it',
      labelNames: replicaLabels,
      registers,
    });
    this.isrShrinks = new Counter({
      name: 'skiff_isr_shrinks_total',
      help: 'Replicas removed from an ISR, over every partition',
      registers,
    });
    this.isrExpands = new Counter({
      name: 'skiff_isr_expands_total',
      help: 'Replicas added to an ISR, over every partition',
      registers,
    });
    this.leaderElections = new Counter({
      name: 'skiff_leader_elections_total',
      help: 'Leader epoch bumps of existing partitions (each starts a new leadership)',
      registers,
    });
    this.requests = new Counter({
      name: 'skiff_requests_total',
      help: 'Kafka requests served, by API and broker',
      labelNames: ['api', 'broker'],
      registers,
    });
    this.requestErrors = new Counter({
      name: 'skiff_request_errors_total',
      help: "Error codes in the responses served (one per errorCode field: a Produce refused on two partitions counts 2), by API, Kafka's error name and broker",
      labelNames: ['api', 'error', 'broker'],
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'skiff_request_duration_seconds',
      help: 'Time from a request decoded to its response encoded, by API and broker',
      labelNames: ['api', 'broker'],
      buckets: REQUEST_DURATION_BUCKETS_SECONDS,
      registers,
    });
  }

  /**
   * Counts what changed since the last image: each replica that left an ISR is a shrink, each that
   * joined one an expand, each leader epoch step of a partition an election (a step of more than one,
   * when images were coalesced, counts every step). Counting replicas rather than AlterPartition calls
   * gives Kafka's counts when each change moves one replica (a lagging follower, a fenced broker) and
   * stays right when several changes arrive in one image. The first image is the baseline and counts
   * nothing; a partition first seen (a new topic) counts nothing; an image not newer than the last
   * (`offset`) is ignored, as a metadata cache ignores it.
   */
  observeMetadata(image: MetadataImage): void {
    if (this.last !== null && image.offset <= this.last.offset) return;
    const partitions = new Map<string, PartitionSnapshot>();
    for (const topic of image.topics) {
      for (const p of topic.partitions) {
        const key = `${topic.topicId}/${p.partition}`;
        partitions.set(key, { leaderEpoch: p.leaderEpoch, isr: [...p.isr] });
        const before = this.last?.partitions.get(key);
        if (before !== undefined) this.countChanges(before, p);
      }
    }
    this.last = { offset: image.offset, partitions };
  }

  private countChanges(before: PartitionSnapshot, after: PartitionState): void {
    const removed = before.isr.filter((id) => !after.isr.includes(id)).length;
    const added = after.isr.filter((id) => !before.isr.includes(id)).length;
    if (removed > 0) this.isrShrinks.inc(removed);
    if (added > 0) this.isrExpands.inc(added);
    if (after.leaderEpoch > before.leaderEpoch) this.leaderElections.inc(after.leaderEpoch - before.leaderEpoch);
  }

  /** Counts one served request and its duration (ms, converted to seconds). */
  recordRequest(info: RequestDoneInfo): void {
    const labels = { api: info.apiName, broker: String(info.brokerId) };
    this.requests.inc(labels);
    this.requestDuration.observe(labels, Math.max(0, info.durationMs) / 1000);
    if (info.errorCounts !== undefined)
      for (const [code, count] of info.errorCounts)
        this.requestErrors.inc({ ...labels, error: errorName(code) }, count);
  }

  /**
   * Reads brokers and partitions from `view`, sets every gauge from them (series of partitions or
   * replicas that are gone disappear), and renders the registry in Prometheus's text format. Rejects
   * when the view does.
   */
  async scrape(view: ClusterView): Promise<{ contentType: string; text: string }> {
    const [brokers, partitions] = await Promise.all([view.brokers(), view.partitions()]);
    for (const state of BROKER_STATES)
      this.brokersGauge.set({ state }, brokers.filter((b) => b.state === state).length);
    this.partitionsGauge.set(partitions.length);
    this.underReplicated.set(partitions.filter((p) => p.leader !== -1 && p.isr.length < p.replicas.length).length);
    this.offline.set(partitions.filter((p) => p.leader === -1).length);
    for (const gauge of [this.leaderEpoch, this.logEndOffset, this.fsyncedOffset, this.highWatermark]) gauge.reset();
    for (const p of partitions) {
      const partition = String(p.partition);
      this.leaderEpoch.set({ topic: p.topic, partition }, p.leaderEpoch);
      for (const r of p.perReplica) {
        const labels = { topic: p.topic, partition, broker: String(r.brokerId) };
        if (r.logEndOffset >= 0) this.logEndOffset.set(labels, r.logEndOffset);
        if (r.fsyncedOffset >= 0) this.fsyncedOffset.set(labels, r.fsyncedOffset);
        if (r.highWatermark >= 0) this.highWatermark.set(labels, r.highWatermark);
      }
    }
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
