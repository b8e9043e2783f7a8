/**
 * A batching producer, shaped like Kafka's Java producer but much smaller (no transactions):
 *
 * - `send` picks the partition (explicit, else {@link Partitioner}: murmur2 of the key, sticky for
 *   keyless records) and appends the record to that partition's open batch.
 * - A batch closes when it reaches `batchSizeBytes` (uncompressed estimate), when it is older than
 *   `lingerMs`, or on `flush`; closing builds and compresses it (src/client/batch.ts).
 * - Per broker, up to `maxInFlight` Produce requests are outstanding on one connection; each
 *   carries at most one batch per partition and at most `maxRequestBytes`. Kafka answers a
 *   connection's requests in order, so a partition's batches are appended in send order.
 * - Retries (Kafka's Sender): a batch that fails with a retriable error (a lost connection to a
 *   crashed broker, NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, a fenced epoch, REQUEST_TIMED_OUT,
 *   NOT_ENOUGH_REPLICAS, ...) pauses its partition; after a backoff (retry.backoff.ms 100 growing to
 *   1 s) the metadata is refreshed and the partition's failed and queued batches go, oldest first, to
 *   its leader then. A batch fails for good only with a non-retriable error or once
 *   `deliveryTimeoutMs` (delivery.timeout.ms, 120 s) has passed since it was opened.
 * - Idempotence (enable.idempotence, on by default with acks=-1 as in Kafka 3+, when the broker
 *   has InitProducerId): one producer id and epoch, a sequence per partition written into each
 *   batch, so a batch resent after a lost response is answered as a duplicate with its first
 *   offset (KIP-98): every record is written once, in order.
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
import { Backoff, isRetriable } from './retry';
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
  /** delivery.timeout.ms: how long a record may take, retries included, before it fails (120 000). */
  deliveryTimeoutMs?: number;
  /**
   * retries: how many times a batch is sent again after a retriable error before it fails with that
   * error (default: no limit but the delivery timeout, Kafka's Integer.MAX_VALUE). 0 reports the
   * broker's first answer, e.g. NOT_ENOUGH_REPLICAS.
   */
  retries?: number;
  /** enable.idempotence (true with acks=-1 when the broker supports InitProducerId, else false). */
  idempotence?: boolean;
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
  /** Order of closing, producer-wide: a partition's batches are (re)sent in this order. */
  closeOrder: number;
  /** Sends so far. */
  attempts: number;
}

/** The idempotent producer's identity from InitProducerId. */
interface ProducerIdentity {
  producerId: number;
  producerEpoch: number;
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
  private readonly deliveryTimeoutMs: number;
  private readonly retries: number;
  private idempotence: boolean;
  private identity: ProducerIdentity | null = null;
  private identityLoading: Promise<void> | null = null;
  /** Next sequence per partition (idempotence). */
  private readonly nextSequence = new Map<string, number>();
  private closeCounter = 0;
  /** Produce requests in flight that carry a batch of the partition. */
  private readonly partitionInFlight = new Map<string, number>();
  /** Paused partitions: their failed batches, waiting to be resent after a metadata refresh. */
  private readonly retrying = new Map<string, ClosedBatch[]>();
  private readonly retryBackoff = new Backoff();
  private retryTimer: NodeJS.Timeout | null = null;
  private redelivering = false;

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
    this.deliveryTimeoutMs = options.deliveryTimeoutMs ?? 120_000;
    this.retries = options.retries ?? Number.MAX_SAFE_INTEGER;
    if (!(this.retries >= 0)) throw new RangeError('retries must be >= 0');
    this.idempotence = options.idempotence ?? this.acks === -1;
    if (this.idempotence && this.acks !== -1) throw new RangeError('idempotence needs acks=-1 (all)');
    if (!(this.deliveryTimeoutMs > 0)) throw new RangeError('deliveryTimeoutMs must be positive');
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
    if (this.idempotence && this.identity === null) await this.initProducerId();
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
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
  }

  /**
   * InitProducerId (no transactional id) once, for idempotence; turns idempotence off when the
   * broker does not advertise the API. Retriable errors (e.g. COORDINATOR_NOT_AVAILABLE while the
   * cluster starts, a crashed broker) are retried up to the delivery timeout.
   */
  private initProducerId(): Promise<void> {
    this.identityLoading ??= (async () => {
      if (!this.client.supports(ApiKey.InitProducerId)) {
        this.idempotence = false;
        return;
      }
      const backoff = new Backoff();
      const deadlineMs = performance.now() + this.deliveryTimeoutMs;
      for (;;) {
        let error: unknown;
        try {
          const body = await this.client.request(ApiKey.InitProducerId, null, {
            transactionalId: null,
            transactionTimeoutMs: 60_000,
            producerId: -1,
            producerEpoch: -1,
          });
          const code = body.errorCode as number;
          if (code === ErrorCode.NONE) {
            this.identity = { producerId: body.producerId as number, producerEpoch: body.producerEpoch as number };
            return;
          }
          error = new KafkaError(code, 'InitProducerId');
        } catch (e) {
          error = e;
        }
        const waitMs = backoff.next();
        if (!isRetriable(error) || performance.now() + waitMs > deadlineMs) throw error;
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    })();
    const loading = this.identityLoading;
    loading.catch(() => (this.identityLoading = null));
    return loading;
  }

  private idle(): boolean {
    if (this.open.size > 0 || this.retrying.size > 0) return false;
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
    let idempotent = {};
    if (this.identity !== null) {
      const baseSequence = this.nextSequence.get(batchKey) ?? 0;
      // Sequences wrap at 2^31 (Kafka's DefaultRecordBatch.incrementSequence).
      this.nextSequence.set(batchKey, (baseSequence + batch.records.length) % 2 ** 31);
      idempotent = { ...this.identity, baseSequence };
    }
    const bytes = buildBatch(batch.records, { compression: this.compression, ...idempotent });
    const list = this.ready.get(batch.leader) ?? [];
    list.push({ ...batch, bytes, closeOrder: this.closeCounter++, attempts: 0 });
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
            if (
              b.leader === leader &&
              !this.retrying.has(batchKey) &&
              (this.flushing > 0 || now - b.createdAtMs >= this.lingerMs - 1)
            ) {
              this.closeBatch(batchKey, b, this.topics.get(b.topic)?.partitions.length ?? 1);
            }
          }
          list = this.ready.get(leader) ?? [];
        }
        if (!list.some((b) => !this.retrying.has(`${b.topic}\u0000${b.partition}`))) break;
        const request: ClosedBatch[] = [];
        const partitions = new Set<string>();
        let bytes = 0;
        for (let i = 0; i < list.length;) {
          const b = list[i]!;
          const key = `${b.topic}\u0000${b.partition}`;
          if (
            partitions.has(key) ||
            this.retrying.has(key) ||
            (request.length > 0 && bytes + b.bytes.length > this.maxRequestBytes)
          ) {
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
    for (const b of batches) {
      const key = `${b.topic}\u0000${b.partition}`;
      this.partitionInFlight.set(key, (this.partitionInFlight.get(key) ?? 0) + 1);
      b.attempts++;
    }
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
    let retries = false;
    for (const b of batches) {
      const key = `${b.topic}\u0000${b.partition}`;
      this.partitionInFlight.set(key, (this.partitionInFlight.get(key) ?? 1) - 1);
      if (this.partitionInFlight.get(key) === 0) this.partitionInFlight.delete(key);
      let error = requestError;
      let baseOffset = -1;
      let logAppendTimeMs = -1;
      if (error === null && this.acks !== 0) {
        const p = results.get(key);
        if (p === undefined) {
          error = new KafkaError(
            ErrorCode.UNKNOWN_SERVER_ERROR,
            `Produce ${b.topic}/${b.partition}`,
            'no result for the partition in the response',
          );
        } else if ((p.errorCode as number) === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
          // Written by an earlier try whose response was lost; the broker no longer knows where (KIP-98).
        } else if ((p.errorCode as number) !== ErrorCode.NONE) {
          error = new KafkaError(
            p.errorCode as number,
            `Produce ${b.topic}/${b.partition} to broker ${leader}`,
            (p.errorMessage as string | null) ?? null,
          );
        } else {
          baseOffset = p.baseOffset as number;
          logAppendTimeMs = (p.logAppendTimeMs as number | undefined) ?? -1;
        }
      }
      if (error !== null && this.shouldRetry(b, error)) {
        const list = this.retrying.get(key) ?? [];
        list.push(b);
        this.retrying.set(key, list);
        retries = true;
        continue;
      }
      this.finish(b, error, baseOffset, logAppendTimeMs, latencyMs);
    }
    if (!retries && this.retrying.size === 0 && batches.length > 0) this.retryBackoff.reset();
    if (this.retrying.size > 0) this.scheduleRedelivery();
    if (this.bufferedBytes <= this.bufferBytes) for (const w of this.spaceWaiters.splice(0)) w();
    this.drain();
    if (this.idle()) for (const w of this.idleWaiters.splice(0)) w();
  }

  /**
   * Whether a failed batch goes back for another try: a retriable error before its delivery
   * timeout. OUT_OF_ORDER_SEQUENCE_NUMBER is retriable with idempotence: an earlier batch of the
   * partition failed with it in flight and is resent first.
   */
  private shouldRetry(b: ClosedBatch, error: Error): boolean {
    if (performance.now() - b.createdAtMs >= this.deliveryTimeoutMs) return false;
    if (b.attempts > this.retries) return false;
    if (isRetriable(error)) return true;
    return (
      this.identity !== null && error instanceof KafkaError && error.code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    );
  }

  /** The final outcome of a batch: its callbacks, its buffer space, its report. */
  private finish(
    b: ClosedBatch,
    error: Error | null,
    baseOffset: number,
    logAppendTimeMs: number,
    latencyMs: number,
  ): void {
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

  private scheduleRedelivery(): void {
    if (this.retryTimer !== null || this.redelivering) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.redeliver();
    }, this.retryBackoff.next());
  }

  /**
   * After a backoff: refreshes the metadata of the paused partitions' topics and sends each paused
   * partition whose requests have all come back to its leader now: its failed batches and the ones
   * queued behind them, in closing order. A partition still without a leader (or whose metadata
   * cannot be had) waits another backoff; a batch past its delivery timeout fails.
   */
  private async redeliver(): Promise<void> {
    this.redelivering = true;
    try {
      const topics = new Set([...this.retrying.values()].map((list) => list[0]!.topic));
      for (const topic of topics) {
        try {
          const md = await this.client.topicMetadata(topic);
          this.topics.set(topic, md);
        } catch (error) {
          if (!isRetriable(error)) this.failPaused(topic, error as Error);
        }
      }
      for (const [key, failed] of [...this.retrying]) {
        if ((this.partitionInFlight.get(key) ?? 0) > 0) continue; // the rest of it comes back first
        const head = failed[0]!;
        const leader = this.topics.get(head.topic)?.partitions[head.partition]?.leader ?? -1;
        const expired = failed.filter((b) => performance.now() - b.createdAtMs >= this.deliveryTimeoutMs);
        if (expired.length > 0 || leader < 0) {
          for (const b of expired) {
            failed.splice(failed.indexOf(b), 1);
            const why = leader < 0 ? 'the partition has no leader' : 'retries went on';
            this.finish(
              b,
              new KafkaError(
                ErrorCode.REQUEST_TIMED_OUT,
                `Produce ${b.topic}/${b.partition}`,
                `delivery timeout of ${this.deliveryTimeoutMs} ms passed (${why})`,
              ),
              -1,
              -1,
              0,
            );
          }
          if (failed.length === 0) this.retrying.delete(key);
          if (leader < 0) continue;
        }
        // Gather the partition's queued batches from every leader's queue and resend all in order.
        const queued: ClosedBatch[] = [];
        for (const list of this.ready.values()) {
          for (let i = list.length - 1; i >= 0; i--) {
            const b = list[i]!;
            if (`${b.topic}\u0000${b.partition}` === key) queued.push(...list.splice(i, 1));
          }
        }
        const all = [...failed, ...queued].sort((a, b) => a.closeOrder - b.closeOrder);
        for (const b of all) b.leader = leader;
        const target = this.ready.get(leader) ?? [];
        this.ready.set(leader, [...all, ...target]);
        const open = this.open.get(key);
        if (open !== undefined) open.leader = leader;
        this.retrying.delete(key);
      }
    } finally {
      this.redelivering = false;
    }
    if (this.retrying.size > 0) this.scheduleRedelivery();
    this.drain();
    if (this.bufferedBytes <= this.bufferBytes) for (const w of this.spaceWaiters.splice(0)) w();
    if (this.idle()) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Fails every paused batch of `topic` (its metadata gave a non-retriable error). */
  private failPaused(topic: string, error: Error): void {
    for (const [key, failed] of [...this.retrying]) {
      if (failed[0]!.topic !== topic) continue;
      this.retrying.delete(key);
      for (const b of failed) this.finish(b, error, -1, -1, 0);
    }
  }
}
