/**
 * An assignment-based consumer: the caller assigns partitions and start offsets (no consumer
 * group, no committed offsets) and calls `poll` repeatedly. Each poll sends one Fetch per leader
 * for all of its assigned partitions (Fetch v4+, full requests without a fetch session, KIP-227)
 * and returns the decoded records, compressed batches included.
 *
 * Positions advance past every fetched batch (control batches of transactions included, which are
 * not returned). A compressed batch may start before the position asked for: its earlier records
 * are skipped (protocol guide, Fetch). A partition is "at end" when its position has reached the
 * high watermark the broker last reported.
 */
import { ApiKey } from '../protocol/api-keys';
import { ErrorCode } from '../protocol/error-codes';
import type { RecordHeader } from '../protocol/record-batch/builder';
import * as L from '../protocol/record-batch/layout';
import { decodeBatches } from './batch';
import { LATEST_TIMESTAMP, type KafkaClient, type TopicMetadata } from './client';
import { KafkaError } from './errors';
import { Backoff, isRetriable } from './retry';

/** Consumer settings (Kafka's consumer config names in parentheses). */
export interface ConsumerOptions {
  /** fetch.max.wait.ms (500). */
  maxWaitMs?: number;
  /** fetch.min.bytes (1). */
  minBytes?: number;
  /** fetch.max.bytes (50 MiB). */
  maxBytes?: number;
  /** max.partition.fetch.bytes (1 MiB). */
  partitionMaxBytes?: number;
  /** 0 read_uncommitted (default), 1 read_committed. */
  isolationLevel?: 0 | 1;
  /**
   * Called once per outage (the first retriable failure after a good fetch: a crashed leader's
   * broker, a leadership move) with a line for stderr; the consumer keeps polling regardless.
   */
  onWarning?: (line: string) => void;
}

/** One assigned partition and the offset to start from. */
export interface Assignment {
  topic: string;
  partition: number;
  offset: number;
}

/** A consumed record. Key, value and header values view the fetched (or decompressed) bytes. */
export interface ConsumedRecord {
  topic: string;
  partition: number;
  offset: number;
  /** ms since the epoch: CreateTime, or LogAppendTime when the batch says so. */
  timestamp: number;
  timestampType: 'CreateTime' | 'LogAppendTime';
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** The fetch state of one assigned partition. */
export interface PartitionState {
  topic: string;
  partition: number;
  /** Next offset to fetch. */
  position: number;
  /** Last high watermark reported by the broker, -1 before the first. */
  highWatermark: number;
  logStartOffset: number;
}

/** A consumer of explicitly assigned partitions on a {@link KafkaClient}. */
export class Consumer {
  private readonly states = new Map<string, PartitionState>();
  private readonly topics = new Map<string, TopicMetadata>();
  private metadataStale = true;
  private readonly maxWaitMs: number;
  private readonly minBytes: number;
  private readonly maxBytes: number;
  private readonly partitionMaxBytes: number;
  private readonly isolationLevel: 0 | 1;
  private readonly onWarning: (line: string) => void;
  /** Waits between polls while a leader is unreachable or moved; reset by a clean poll. */
  private readonly backoff = new Backoff();
  /** Whether the current outage was reported already. */
  private inOutage = false;

  constructor(
    private readonly client: KafkaClient,
    options: ConsumerOptions = {},
  ) {
    this.maxWaitMs = options.maxWaitMs ?? 500;
    this.minBytes = options.minBytes ?? 1;
    this.maxBytes = options.maxBytes ?? 50 * 1024 * 1024;
    this.partitionMaxBytes = options.partitionMaxBytes ?? 1024 * 1024;
    this.isolationLevel = options.isolationLevel ?? 0;
    this.onWarning = options.onWarning ?? (() => undefined);
  }

  /** Adds (or moves) assignments; each starts fetching at its offset. */
  assign(assignments: readonly Assignment[]): void {
    for (const a of assignments) {
      this.states.set(stateKey(a.topic, a.partition), {
        topic: a.topic,
        partition: a.partition,
        position: a.offset,
        highWatermark: -1,
        logStartOffset: -1,
      });
    }
    this.metadataStale = true;
  }

  /** The state of every assigned partition. */
  assignments(): PartitionState[] {
    return [...this.states.values()];
  }

  /** Whether every assigned partition's position has reached its last known high watermark. */
  allAtEnd(): boolean {
    for (const s of this.states.values()) if (s.highWatermark < 0 || s.position < s.highWatermark) return false;
    return true;
  }

  /**
   * Sets each partition's known high watermark from ListOffsets (latest), e.g. before an exit-at-end
   * run. Retriable errors are retried (ListOffsets for up to default.api.timeout.ms).
   */
  async refreshEndOffsets(): Promise<void> {
    await this.withRetries(() => this.refreshMetadata());
    const byTopic = new Map<string, PartitionState[]>();
    for (const s of this.states.values()) byTopic.set(s.topic, [...(byTopic.get(s.topic) ?? []), s]);
    for (const [topic, list] of byTopic) {
      const offsets = await this.client.listOffsets(
        topic,
        list.map((s) => ({ partition: s.partition, timestamp: LATEST_TIMESTAMP })),
      );
      for (const s of list) s.highWatermark = offsets.get(s.partition)!.offset;
    }
  }

  /**
   * Fetches once from every leader of an assigned partition (waiting up to maxWaitMs for data) and
   * returns the records, in offset order per partition. A leader that cannot be reached or is no
   * longer the leader (a lost connection, NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, a fenced
   * epoch, ...) is not an error: the metadata is refreshed, the poll waits a backoff (100 ms growing
   * to 1 s) and returns what the other leaders gave, and the next poll tries again, forever, as
   * Kafka's consumer does; `onWarning` hears of it once per outage. Rejects with KafkaError on a
   * partition error that a metadata refresh does not fix (e.g. OFFSET_OUT_OF_RANGE).
   */
  async poll(): Promise<ConsumedRecord[]> {
    if (this.states.size === 0) return [];
    if (this.metadataStale) {
      try {
        await this.refreshMetadata();
      } catch (error) {
        await this.onRetriable(error, 'metadata');
        return [];
      }
    }
    const byLeader = new Map<number, PartitionState[]>();
    let leaderless = false;
    for (const s of this.states.values()) {
      const leader = this.topics.get(s.topic)?.partitions[s.partition]?.leader ?? -1;
      if (leader < 0) {
        this.metadataStale = true;
        leaderless = true;
        continue;
      }
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), s]);
    }
    const failures: unknown[] = [];
    const results = await Promise.all(
      [...byLeader].map(([leader, list]) =>
        this.fetchFrom(leader, list).catch((error: unknown) => {
          if (!isRetriable(error)) throw error;
          this.metadataStale = true;
          failures.push(error);
          return [];
        }),
      ),
    );
    const firstFailure = failures[0];
    if (firstFailure !== undefined) await this.onRetriable(firstFailure, 'fetch');
    else if (leaderless || this.metadataStale)
      await this.onRetriable(new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, 'a partition has no leader'), 'fetch');
    else {
      this.backoff.reset();
      this.inOutage = false;
    }
    return results.flat();
  }

  /** A retriable failure: reported once per outage, then a backoff; a non-retriable one is thrown. */
  private async onRetriable(error: unknown, what: string): Promise<void> {
    if (!isRetriable(error)) throw error;
    this.metadataStale = true;
    if (!this.inOutage) {
      this.inOutage = true;
      this.onWarning(`skiff: ${what} failed (${(error as Error).message}); retrying until the leaders are back`);
    }
    await this.backoff.wait();
  }

  /** Runs `op` until it succeeds or fails with a non-retriable error, backing off in between. */
  private async withRetries(op: () => Promise<void>): Promise<void> {
    for (;;) {
      try {
        await op();
        return;
      } catch (error) {
        await this.onRetriable(error, 'metadata');
      }
    }
  }

  private async refreshMetadata(): Promise<void> {
    const names = [...new Set([...this.states.values()].map((s) => s.topic))];
    const md = await this.client.metadata(names);
    for (const t of md.topics) {
      if (t.errorCode === ErrorCode.NONE) this.topics.set(t.name, t);
      else if (t.errorCode !== ErrorCode.LEADER_NOT_AVAILABLE) throw new KafkaError(t.errorCode, `topic ${t.name}`);
    }
    this.metadataStale = false;
  }

  private async fetchFrom(leader: number, list: PartitionState[]): Promise<ConsumedRecord[]> {
    const connection = await this.client.connection(leader);
    const version = connection.versionFor(ApiKey.Fetch, 4);
    const byTopic = new Map<string, PartitionState[]>();
    for (const s of list) byTopic.set(s.topic, [...(byTopic.get(s.topic) ?? []), s]);
    const body = (await connection.send(
      ApiKey.Fetch,
      version,
      {
        replicaId: -1,
        maxWaitMs: this.maxWaitMs,
        minBytes: this.minBytes,
        maxBytes: this.maxBytes,
        isolationLevel: this.isolationLevel,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [...byTopic].map(([topic, states]) => ({
          topic,
          partitions: states.map((s) => ({
            partition: s.partition,
            currentLeaderEpoch: -1,
            fetchOffset: s.position,
            logStartOffset: -1,
            partitionMaxBytes: this.partitionMaxBytes,
          })),
        })),
        forgottenTopicsData: [],
        rackId: '',
      },
      { timeoutMs: this.maxWaitMs + 30_000 },
    ))!;
    const topLevelError = (body.errorCode as number | undefined) ?? 0;
    if (topLevelError !== ErrorCode.NONE) throw new KafkaError(topLevelError, `Fetch from broker ${leader}`);
    const out: ConsumedRecord[] = [];
    for (const t of body.responses as Array<{ topic: string; partitions: Array<Record<string, unknown>> }>) {
      for (const p of t.partitions) {
        const state = this.states.get(stateKey(t.topic, p.partitionIndex as number));
        if (state === undefined) continue;
        const errorCode = p.errorCode as number;
        if (errorCode !== ErrorCode.NONE) {
          const err = new KafkaError(errorCode, `Fetch ${t.topic}/${state.partition} at offset ${state.position}`);
          if (!err.retriable) throw err;
          this.metadataStale = true;
          continue;
        }
        state.highWatermark = p.highWatermark as number;
        state.logStartOffset = p.logStartOffset as number;
        const records = p.records as Buffer | null;
        if (records !== null && records.length > 0) this.decodeInto(state, records, out);
      }
    }
    return out;
  }

  private decodeInto(state: PartitionState, records: Buffer, out: ConsumedRecord[]): void {
    for (const batch of decodeBatches(records)) {
      const nextOffset = batch.baseOffset + batch.lastOffsetDelta + 1;
      if (nextOffset <= state.position) continue;
      if ((batch.attributes & L.CONTROL_FLAG_MASK) === 0) {
        const logAppendTime = (batch.attributes & L.TIMESTAMP_TYPE_MASK) !== 0;
        for (const r of batch.records) {
          if (r.offset < state.position) continue;
          out.push({
            topic: state.topic,
            partition: state.partition,
            offset: r.offset,
            timestamp: logAppendTime ? batch.maxTimestamp : r.timestamp,
            timestampType: logAppendTime ? 'LogAppendTime' : 'CreateTime',
            key: r.key,
            value: r.value,
            headers: r.headers,
          });
        }
      }
      state.position = nextOffset;
    }
  }
}

function stateKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}
