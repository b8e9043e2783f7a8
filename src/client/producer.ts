/**
 * A batching producer, shaped like Kafka's Java producer but much smaller (no retries, no
 * idempotence, no transactions):
 *
 * - `send` picks the partition (explicit, else {@link Partitioner}: murmur2 of the key, sticky for
 *   keyless records) and appends the record to that partition's open batch.
 * - A batch closes when it reaches `batchSizeBytes` (uncompressed estimate), when it is older than
 *   `lingerMs`, or on `flush`; closing builds and compresses it (src/client/batch.ts).
 * - Per broker, up to `maxInFlight` Produce requests are outstanding on one connection; each
 *   carries at most one batch per partition and at most `maxRequestBytes`. Kafka answers a
 *   connection's requests in order, and without retries nothing is resent, so a partition's
 *   records are appended in send order.
 * - `acks` 0 requests have no response: their records resolve with offset -1 once written.
 * - When more than `bufferBytes` are waiting, `send` resolves only once enough have been acked.
 *
 * With lingerMs 0 a batch goes out as soon as its broker has a free in-flight slot, so batches grow
 * by themselves while the pipeline is full (as in Kafka's RecordAccumulator).
 */
import { performance } from 'node:perf_hooks';
import { ApiKey } from '../protocol/api-keys';
import type { BuildRecord, RecordHeader } from '../protocol/record-batch/builder';
import { codecFromName, type CompressionCodecId, type CompressionName } from '../protocol/record-batch/compression';
import { buildBatch } from './batch';
import type { KafkaClient, TopicMetadata } from './client';
import { KafkaError } from './errors';
import { Partitioner, type NullKeyStrategy } from './partitioner';
import { ErrorCode } from '../protocol/error-codes';

/** Producer settings; defaults in parentheses follow Kafka's producer configs. */
export interface ProducerOptions {
  /** -1 (all ISR, default), 1 (leader) or 0 (no response). */
  acks?: -1 | 0 | 1;
  /** Codec id or name (none). */
  compression?: CompressionCodecId | CompressionName;
  /** batch.size: close a batch at this many (uncompressed) bytes (16384). */
  batchSizeBytes?: number;
  /** linger.ms: how long an open batch may wait for more records (0). */
  lingerMs?: number;
  /** max.in.flight.requests.per.connection (5). */
  maxInFlight?: number;
  /** max.request.size: bytes of batches in one Produce request (1 MiB). */
  maxRequestBytes?: number;
  /** buffer.memory: bytes waiting or in flight before `send` waits (32 MiB). */
  bufferBytes?: number;
  /** The Produce request's timeoutMs, and the client-side wait for its response (30 000). */
  requestTimeoutMs?: number;
  /** How keyless records are spread (sticky). */
  nullKeyStrategy?: NullKeyStrategy;
  /** Called once per batch when its response (or failure) arrives: for latency statistics. */
  onBatchComplete?: (report: BatchReport) => void;
}

/** A record to produce. `timestamp` defaults to the time of `send` (CreateTime). */
export interface ProducerRecord {
  topic: string;
  /** Explicit partition; otherwise the partitioner picks. */
  partition?: number;
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: RecordHeader[];
  timestamp?: number;
}

/** Where a record was written. offset is -1 with acks=0. */
export interface RecordMetadata {
  topic: string;
  partition: number;
  offset: number;
  /** The record's CreateTime, or the broker's LogAppendTime when the topic uses it. */
  timestamp: number;
}

/** Callback of one record: an error, or where it was written. */
export type SendCallback = (err: Error | null, metadata: RecordMetadata | null) => void;

/** What {@link ProducerOptions.onBatchComplete} reports. */
export interface BatchReport {
  topic: string;
  partition: number;
  recordCount: number;
  /** Uncompressed estimate of the records' bytes (keys, values, headers and per-record overhead). */
  uncompressedBytes: number;
  /** Bytes of the batch on the wire (compressed). */
  batchBytes: number;
  /** From writing the request to its response (to the write, for acks=0), in ms. */
  latencyMs: number;
  error: Error | null;
}

interface OpenBatch {
  topic: string;
  partition: number;
  leader: number;
  records: BuildRecord[];
  callbacks: Array<SendCallback | undefined>;
  estimatedBytes: number;
  createdAtMs: number;
}

interface ClosedBatch extends OpenBatch {
  bytes: Buffer;
}

/** Bytes a record adds beyond its key, value and headers (varints, attributes: an upper bound). */
const RECORD_OVERHEAD_BYTES = 21;

/** A producer on a {@link KafkaClient}. Call `flush` (or `close`) before closing the client. */
export class Producer {
  private readonly acks: -1 | 0 | 1;
  private readonly compression: CompressionCodecId;
  private readonly batchSizeBytes: number;
  private readonly lingerMs: number;
  private readonly maxInFlight: number;
  private readonly maxRequestBytes: number;
  private readonly bufferBytes: number;
  private readonly requestTimeoutMs: number;
  private readonly partitioner: Partitioner;
  private readonly topics = new Map<string, TopicMetadata>();
  private readonly loadingTopics = new Map<string, Promise<TopicMetadata>>();
  private readonly open = new Map<string, OpenBatch>();
  private readonly ready = new Map<number, ClosedBatch[]>();
  private readonly inFlight = new Map<number, number>();
  private bufferedBytes = 0;
  private flushing = 0;
  private drainScheduled = false;
  private lingerTimer: NodeJS.Timeout | null = null;
  private spaceWaiters: Array<() => void> = [];
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly client: KafkaClient,
    private readonly options: ProducerOptions = {},
  ) {
    this.acks = options.acks ?? -1;
    const compression = options.compression ?? 0;
    this.compression = typeof compression === 'string' ? codecFromName(compression) : compression;
    this.batchSizeBytes = options.batchSizeBytes ?? 16_384;
    this.lingerMs = options.lingerMs ?? 0;
    this.maxInFlight = options.maxInFlight ?? 5;
    this.maxRequestBytes = options.maxRequestBytes ?? 1024 * 1024;
    this.bufferBytes = options.bufferBytes ?? 32 * 1024 * 1024;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.partitioner = new Partitioner(options.nullKeyStrategy ?? 'sticky');
    if (![-1, 0, 1].includes(this.acks)) throw new RangeError(`acks must be -1, 0 or 1, got ${this.acks}`);
    if (!(this.batchSizeBytes > 0) || !(this.maxInFlight >= 1) || !(this.lingerMs >= 0))
      throw new RangeError('batchSizeBytes and maxInFlight must be positive, lingerMs >= 0');
  }

  /**
   * Queues `record`; `callback` runs once it is acknowledged or fails. Resolves once queued (later
   * when the buffer is full). Rejects, without calling `callback`, when the topic's metadata
   * cannot be had (e.g. KafkaError UNKNOWN_TOPIC_OR_PARTITION) or the partition does not exist.
   */
  async send(record: ProducerRecord, callback?: SendCallback): Promise<void> {
    const md = this.topics.get(record.topic) ?? (await this.loadTopic(record.topic));
    const numPartitions = md.partitions.length;
    const key = typeof record.key === 'string' ? Buffer.from(record.key, 'utf8') : (record.key ?? null);
    const value = typeof record.value === 'string' ? Buffer.from(record.value, 'utf8') : record.value;
    const partition = record.partition ?? this.partitioner.partition(key, numPartitions);
    const pm = md.partitions[partition];
    if (!(partition >= 0) || pm === undefined || pm.partition !== partition) {
      throw new KafkaError(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        `${record.topic}/${partition} (the topic has ${numPartitions} partitions)`,
      );
    }
    let size = RECORD_OVERHEAD_BYTES + (key?.length ?? 0) + (value?.length ?? 0);
    for (const h of record.headers ?? []) size += 10 + Buffer.byteLength(h.key) + (h.value?.length ?? 0);

    const batchKey = `${record.topic}\u0000${partition}`;
    let batch = this.open.get(batchKey);
    if (batch !== undefined && batch.estimatedBytes + size > this.batchSizeBytes) {
      this.closeBatch(batchKey, batch, numPartitions);
      batch = undefined;
    }
    if (batch === undefined) {
      batch = {
        topic: record.topic,
        partition,
        leader: pm.leader,
        records: [],
        callbacks: [],
        estimatedBytes: 0,
        createdAtMs: performance.now(),
      };
      this.open.set(batchKey, batch);
    }
    batch.records.push({ key, value, headers: record.headers, timestamp: record.timestamp ?? Date.now() });
    batch.callbacks.push(callback);
    batch.estimatedBytes += size;
    this.bufferedBytes += size;
    if (batch.estimatedBytes >= this.batchSizeBytes) this.closeBatch(batchKey, batch, numPartitions);
    this.scheduleDrain();
    if (this.bufferedBytes > this.bufferBytes) await new Promise<void>((resolve) => this.spaceWaiters.push(resolve));
  }

  /** Sends `record` and resolves with where it was written (rejects on its error). */
  produce(record: ProducerRecord): Promise<RecordMetadata> {
    return new Promise((resolve, reject) => {
      this.send(record, (err, md) => (err ? reject(err) : resolve(md!))).catch(reject);
    });
  }

  /** Closes every open batch now and resolves once every queued record is acked or has failed. */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      this.drain();
      while (!this.idle()) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    } finally {
      this.flushing--;
    }
  }

  /** Flushes; the client stays open (its owner closes it). */
  async close(): Promise<void> {
    await this.flush();
    if (this.lingerTimer !== null) clearTimeout(this.lingerTimer);
  }

  private idle(): boolean {
    if (this.open.size > 0) return false;
    for (const list of this.ready.values()) if (list.length > 0) return false;
    for (const n of this.inFlight.values()) if (n > 0) return false;
    return true;
  }

  private async loadTopic(topic: string): Promise<TopicMetadata> {
    let loading = this.loadingTopics.get(topic);
    if (loading === undefined) {
      loading = this.client.topicMetadata(topic);
      this.loadingTopics.set(topic, loading);
      loading
        .then(
          (md) => this.topics.set(topic, md),
          () => undefined,
        )
        .finally(() => this.loadingTopics.delete(topic));
    }
    const md = await loading;
    this.topics.set(topic, md);
    return md;
  }

  private closeBatch(batchKey: string, batch: OpenBatch, numPartitions: number): void {
    this.open.delete(batchKey);
    const bytes = buildBatch(batch.records, { compression: this.compression });
    const list = this.ready.get(batch.leader) ?? [];
    list.push({ ...batch, bytes });
    this.ready.set(batch.leader, list);
    this.partitioner.onBatchClosed(batch.partition, numPartitions);
  }

  private scheduleDrain(): void {
    let anyReady = false;
    for (const list of this.ready.values()) if (list.length > 0) anyReady = true;
    if (!this.drainScheduled && (this.lingerMs === 0 || anyReady)) {
      this.drainScheduled = true;
      setImmediate(() => {
        this.drainScheduled = false;
        this.drain();
      });
    }
    if (this.lingerMs > 0 && this.lingerTimer === null && this.open.size > 0) {
      // Due batches that are still open wait for a free in-flight slot (complete() drains again);
      // the timer is for the next batch that is not due yet.
      const now = performance.now();
      let dueAtMs = Infinity;
      for (const b of this.open.values())
        if (b.createdAtMs + this.lingerMs > now) dueAtMs = Math.min(dueAtMs, b.createdAtMs + this.lingerMs);
      if (dueAtMs === Infinity) return;
      const delayMs = dueAtMs - now;
      this.lingerTimer = setTimeout(() => {
        this.lingerTimer = null;
        this.drain();
        this.scheduleDrain();
      }, Math.ceil(delayMs));
    }
  }

  /** Sends what may be sent: closed batches, and due open batches of brokers with a free slot. */
  private drain(): void {
    const now = performance.now();
    const leaders = new Set<number>([...this.ready.keys()]);
    for (const b of this.open.values()) leaders.add(b.leader);
    for (const leader of leaders) {
      while ((this.inFlight.get(leader) ?? 0) < this.maxInFlight) {
        let list = this.ready.get(leader) ?? [];
        if (list.length === 0) {
          for (const [batchKey, b] of this.open) {
            if (b.leader === leader && (this.flushing > 0 || now - b.createdAtMs >= this.lingerMs - 1)) {
              this.closeBatch(batchKey, b, this.topics.get(b.topic)?.partitions.length ?? 1);
            }
          }
          list = this.ready.get(leader) ?? [];
        }
        if (list.length === 0) break;
        const request: ClosedBatch[] = [];
        const partitions = new Set<string>();
        let bytes = 0;
        for (let i = 0; i < list.length;) {
          const b = list[i]!;
          const key = `${b.topic}\u0000${b.partition}`;
          if (partitions.has(key) || (request.length > 0 && bytes + b.bytes.length > this.maxRequestBytes)) {
            i++;
            continue;
          }
          partitions.add(key);
          bytes += b.bytes.length;
          request.push(b);
          list.splice(i, 1);
        }
        this.sendRequest(leader, request);
      }
    }
  }

  private sendRequest(leader: number, batches: ClosedBatch[]): void {
    this.inFlight.set(leader, (this.inFlight.get(leader) ?? 0) + 1);
    const byTopic = new Map<string, ClosedBatch[]>();
    for (const b of batches) {
      const list = byTopic.get(b.topic) ?? [];
      list.push(b);
      byTopic.set(b.topic, list);
    }
    const body = {
      transactionalId: null,
      acks: this.acks,
      timeoutMs: this.requestTimeoutMs,
      topicData: [...byTopic].map(([name, list]) => ({
        name,
        partitionData: list.map((b) => ({ index: b.partition, records: b.bytes })),
      })),
    };
    const startedAtMs = performance.now();
    const run = async (): Promise<Record<string, unknown> | null> => {
      const connection = await this.client.connection(leader);
      const version = connection.versionFor(ApiKey.Produce, 3);
      return connection.send(ApiKey.Produce, version, body, {
        expectResponse: this.acks !== 0,
        timeoutMs: this.requestTimeoutMs + 5000,
      });
    };
    run().then(
      (response) => this.complete(leader, batches, response, performance.now() - startedAtMs, null),
      (err: Error) => this.complete(leader, batches, null, performance.now() - startedAtMs, err),
    );
  }

  private complete(
    leader: number,
    batches: ClosedBatch[],
    response: Record<string, unknown> | null,
    latencyMs: number,
    requestError: Error | null,
  ): void {
    this.inFlight.set(leader, (this.inFlight.get(leader) ?? 1) - 1);
    const results = new Map<string, Record<string, unknown>>();
    if (response !== null) {
      for (const t of response.responses as Array<{
        name: string;
        partitionResponses: Array<Record<string, unknown>>;
      }>) {
        for (const p of t.partitionResponses) results.set(`${t.name}\u0000${p.index as number}`, p);
      }
    }
    for (const b of batches) {
      let error = requestError;
      let baseOffset = -1;
      let logAppendTimeMs = -1;
      if (error === null && this.acks !== 0) {
        const p = results.get(`${b.topic}\u0000${b.partition}`);
        if (p === undefined) {
          error = new KafkaError(
            ErrorCode.UNKNOWN_SERVER_ERROR,
            `Produce ${b.topic}/${b.partition}`,
            'no result for the partition in the response',
          );
        } else if ((p.errorCode as number) !== ErrorCode.NONE) {
          error = new KafkaError(
            p.errorCode as number,
            `Produce ${b.topic}/${b.partition}`,
            (p.errorMessage as string | null) ?? null,
          );
        } else {
          baseOffset = p.baseOffset as number;
          logAppendTimeMs = (p.logAppendTimeMs as number | undefined) ?? -1;
        }
      }
      for (let i = 0; i < b.callbacks.length; i++) {
        const cb = b.callbacks[i];
        if (cb === undefined) continue;
        if (error !== null) cb(error, null);
        else
          cb(null, {
            topic: b.topic,
            partition: b.partition,
            offset: baseOffset < 0 ? -1 : baseOffset + i,
            timestamp: logAppendTimeMs >= 0 ? logAppendTimeMs : b.records[i]!.timestamp!,
          });
      }
      this.bufferedBytes -= b.estimatedBytes;
      this.options.onBatchComplete?.({
        topic: b.topic,
        partition: b.partition,
        recordCount: b.records.length,
        uncompressedBytes: b.estimatedBytes,
        batchBytes: b.bytes.length,
        latencyMs,
        error,
      });
    }
    if (this.bufferedBytes <= this.bufferBytes) for (const w of this.spaceWaiters.splice(0)) w();
    this.drain();
    if (this.idle()) for (const w of this.idleWaiters.splice(0)) w();
  }
}
