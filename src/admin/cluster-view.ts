/**
 * What the admin HTTP API (admin-server.ts) needs of a running cluster: the brokers, the partitions with
 * each replica's progress, crashing and starting one broker, and a feed of metadata images and served
 * requests for the metrics. The cluster wiring implements it; the admin folder never reaches an actor
 * itself, so tests drive the whole API with a fake.
 *
 * Offsets follow Kafka's terms: a log-end offset (LEO) is the offset the next appended batch gets, the
 * fsynced offset is how far the replica's log is on disk (what counts toward the HW with
 * write.caching=false), and the high watermark (HW) is the first offset a consumer may not read yet.
 * An offset the cluster does not know (a replica on a stopped broker, a follower's HW before its first
 * fetch) is -1.
 */
import type { MetadataImage } from '../controller/metadata-records';
import type { RequestDoneInfo } from '../network/dispatcher';

/**
 * A broker's life as the admin API shows it: `running` (registered and serving), `fenced` (its process
 * runs but the controller fenced it: missed heartbeats, or registering again after a restart), `stopped`
 * (crashed or shut down: no listener, no worker threads).
 */
export type BrokerRunState = 'running' | 'fenced' | 'stopped';

/** One broker of the cluster (GET /v1/brokers lists these, by id). */
export interface BrokerInfo {
  /** node.id. */
  id: number;
  /** The advertised host. */
  host: string;
  /** The port it listens on (never 0; the port it listened on while stopped). */
  port: number;
  state: BrokerRunState;
  /** The broker epoch of its current (or last) registration with the controller; -1 before the first. */
  brokerEpoch: number;
}

/** One replica's progress, as its own broker reports it. Every offset is -1 when unknown. */
export interface ReplicaProgress {
  brokerId: number;
  logEndOffset: number;
  fsyncedOffset: number;
  /** The HW as this replica knows it (a follower learns it from its fetches, so it may trail the leader's). */
  highWatermark: number;
}

/** One partition (GET /v1/partitions lists these, by topic then partition). */
export interface PartitionInfo {
  topic: string;
  partition: number;
  /** The leader's node id, -1 when the partition has none (offline). */
  leader: number;
  leaderEpoch: number;
  /** Assigned replicas (AR) in preference order. */
  replicas: number[];
  /** In-sync replicas. */
  isr: number[];
  /** Assigned replicas whose broker is down (Metadata's offline_replicas). */
  offlineReplicas: number[];
  /** One entry per assigned replica, in `replicas` order. */
  perReplica: ReplicaProgress[];
}

/**
 * Receives what the metrics count between scrapes: every metadata image the controller publishes (in
 * publication order) and every request a broker's dispatcher served. Implemented by
 * `AdminMetrics` (admin-metrics.ts); the cluster calls it from its metadata push and from each
 * broker's `DispatcherOptions.onRequestDone`. Both calls are cheap and never throw.
 */
export interface ClusterObserver {
  observeMetadata(image: MetadataImage): void;
  recordRequest(info: RequestDoneInfo): void;
}

/**
 * The cluster as the admin API sees it. Reads may be asynchronous (a replica's offsets live on its
 * worker thread); each call returns a fresh snapshot, never a live object.
 */
export interface ClusterView {
  /** Every broker the cluster was started with, by id ascending. */
  brokers(): Promise<BrokerInfo[]>;
  /** Every partition of every topic (internal ones included), by topic name then partition. */
  partitions(): Promise<PartitionInfo[]>;
  /**
   * Crashes broker `id` as a killed process would: its worker threads terminate, its listener and
   * client connections close, its in-memory state is gone. Resolves once it is `stopped`. Rejects with
   * {@link UnknownBrokerError} or, when it is already stopped, {@link BrokerStateError}.
   */
  crashBroker(id: number): Promise<void>;
  /**
   * Starts a stopped broker `id` again: same port, logs recovered from disk, a new registration (broker
   * epoch). Resolves once it listens. Rejects with {@link UnknownBrokerError} or, when it is not stopped,
   * {@link BrokerStateError}.
   */
  startBroker(id: number): Promise<void>;
  /**
   * Stops broker `id` cleanly (Kafka's controlled shutdown): the controller first moves its
   * leaderships to other live ISR members and fences it, then its replicas flush and checkpoint and
   * its listener closes, so clients see at most NOT_LEADER_OR_FOLLOWER and retry on the new leaders.
   * Resolves once it is `stopped`; {@link startBroker} brings it back. Rejects with
   * {@link UnknownBrokerError} or, when it is already stopped, {@link BrokerStateError}.
   */
  stopBroker(id: number): Promise<void>;
  /** Whether `--fault-injection` was given: without it, the crash, start and stop endpoints answer 403. */
  readonly faultInjection: boolean;
  /**
   * Subscribes `observer` to the cluster's metadata images and served requests (the metrics' hook). The
   * cluster should hand it the current image at once, as the baseline later changes are counted
   * against. Returns the unsubscribe function; the admin server calls it on close.
   */
  watch(observer: ClusterObserver): () => void;
}

/** What the admin API can do to one broker (POST /v1/brokers/{id}/{action}). */
export type BrokerAction = 'crash' | 'start' | 'stop';

/** A broker id the cluster does not have (HTTP 404). */
export class UnknownBrokerError extends Error {
  constructor(readonly brokerId: number) {
    super(`unknown broker ${brokerId}`);
    this.name = 'UnknownBrokerError';
  }
}

/** A crash or stop of a broker already stopped, or a start of one that is not stopped (HTTP 409). */
export class BrokerStateError extends Error {
  constructor(
    readonly brokerId: number,
    readonly state: BrokerRunState,
    action: BrokerAction,
  ) {
    super(`cannot ${action} broker ${brokerId}: it is ${state}`);
    this.name = 'BrokerStateError';
  }
}
