/**
 * `skiff perf produce` and `skiff perf consume`: bounded throughput runs in the style of Kafka's
 * ProducerPerformance and ConsumerPerformance tools.
 *
 * perf produce sends `--records` values of `--record-size` bytes (random capital letters, made
 * once, as ProducerPerformance does), keyless, creating the topic with `--partitions` when it does
 * not exist. Latency is per batch, from writing its Produce request to the response (to the write
 * for acks=0), counted once for each record of the batch. Every ~5 s a progress line goes to stderr:
 * ```
 * 51234 records sent, 10240.5 records/sec (10.00 MB/sec), 3.2 ms avg latency, 15.0 ms max latency.
 * ```
 * and at the end one line to stdout (counting the acknowledged records; when some failed, a
 * `skiff: N records failed ...` line follows on stderr and the exit code is 1):
 * ```
 * 100000 records sent, 12345.6 records/sec (12.06 MB/sec), 3.10 ms avg latency, 20.00 ms max latency, 2.90 ms 50th, 9.80 ms 99th, 15.10 ms 99.9th.
 * ```
 * perf consume reads `--records` records from the earliest offsets of every partition and prints
 * ```
 * 100000 records received, 250000.0 records/sec (24.41 MB/sec), 9.77 MB in 400 ms.
 * ```
 * (MB = 2^20 bytes, as Kafka's tools; consumed bytes are key + value bytes.) The rate covers the
 * span from the first fetch to the arrival of the last record counted: neither the wait for more
 * records that ends a short run (`--timeout-ms`) nor, with `--group`, the join is in it.
 * With `--group G` it reads as a member of group G (group-session.ts: the group's committed offsets,
 * else the earliest, and `--commit` as for `skiff consume`), and a second line says what was committed.
 */
import { performance } from 'node:perf_hooks';
import type { KafkaClient } from '../client/client';
import { EARLIEST_TIMESTAMP } from '../client/client';
import { Consumer, type ConsumedRecord } from '../client/consumer';
import { KafkaError } from '../client/errors';
import { Producer, type BatchReport } from '../client/producer';
import { ErrorCode } from '../protocol/error-codes';
import type { CompressionName } from '../protocol/record-batch/compression';
import { EXIT_FAILURE, startProgress, type CliIo } from './client-io';
import { GroupSession, groupSessionPorts, type GroupArgs } from './group-session';

const MB = 1024 * 1024;

/** Arguments of `skiff perf produce`. */
export interface PerfProduceArgs {
  topic: string;
  records: number;
  recordSizeBytes: number;
  acks: -1 | 0 | 1;
  /** `--partitions`: the count when the topic is created (null: 1); a warning when it exists with another. */
  partitions: number | null;
  compression: CompressionName;
  batchSizeBytes: number;
  lingerMs: number;
  /** delivery.timeout.ms: how long a record is retried before it fails. */
  deliveryTimeoutMs: number;
}

/** Arguments of `skiff perf consume`. */
export interface PerfConsumeArgs {
  topic: string;
  records: number;
  /** Give up when no record arrives for this long. */
  timeoutMs: number;
  /** `--group`: read as a member of this group, null for every partition from the earliest offset. */
  group: GroupArgs | null;
}

/**
 * Latencies of records, kept as (latency, record count) pairs (one per batch), with weighted
 * percentiles.
 */
export class LatencyStats {
  private readonly samples: Array<[latencyMs: number, count: number]> = [];
  /** Records counted. */
  count = 0;
  private sumMs = 0;
  /** Largest latency seen, ms. */
  maxMs = 0;

  /** Counts `count` records that each took `latencyMs`. */
  record(latencyMs: number, count: number): void {
    this.samples.push([latencyMs, count]);
    this.count += count;
    this.sumMs += latencyMs * count;
    if (latencyMs > this.maxMs) this.maxMs = latencyMs;
  }

  /** Mean latency per record, ms (0 when empty). */
  get avgMs(): number {
    return this.count === 0 ? 0 : this.sumMs / this.count;
  }

  /** The latency below or at which a fraction `q` (0..1) of records fall, ms (0 when empty). */
  percentile(q: number): number {
    if (this.count === 0) return 0;
    const sorted = [...this.samples].sort((a, b) => a[0] - b[0]);
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (const [latency, n] of sorted) {
      seen += n;
      if (seen >= rank) return latency;
    }
    return sorted[sorted.length - 1]![0];
  }
}

/** The final line of perf produce (see the module comment). */
export function produceSummaryLine(
  records: number,
  elapsedMs: number,
  recordSizeBytes: number,
  stats: LatencyStats,
): string {
  const perSec = (records * 1000) / Math.max(elapsedMs, 1e-3);
  return (
    `${records} records sent, ${perSec.toFixed(1)} records/sec (${((perSec * recordSizeBytes) / MB).toFixed(2)} MB/sec), ` +
    `${stats.avgMs.toFixed(2)} ms avg latency, ${stats.maxMs.toFixed(2)} ms max latency, ` +
    `${stats.percentile(0.5).toFixed(2)} ms 50th, ${stats.percentile(0.99).toFixed(2)} ms 99th, ${stats.percentile(0.999).toFixed(2)} ms 99.9th.`
  );
}

/**
 * Runs `skiff perf produce`. Prints the totals of the acknowledged records on stdout in any case;
 * when any record failed, then one line on stderr and exit 1.
 */
export async function perfProduce(client: KafkaClient, args: PerfProduceArgs, io: CliIo): Promise<number> {
  if (!(args.records > 0) || !(args.recordSizeBytes >= 0))
    throw new RangeError('--records must be positive and --record-size not negative');
  await ensureTopic(client, args.topic, args.partitions, io);
  const payload = Buffer.allocUnsafe(args.recordSizeBytes);
  for (let i = 0; i < payload.length; i++) payload[i] = 65 + Math.floor(Math.random() * 26);

  const total = new LatencyStats();
  let window = new LatencyStats();
  let windowStartMs = performance.now();
  let firstError: Error | null = null;
  let failed = 0;
  const onBatchComplete = (report: BatchReport): void => {
    if (report.error !== null) {
      failed += report.recordCount;
      firstError ??= report.error;
      return;
    }
    total.record(report.latencyMs, report.recordCount);
    window.record(report.latencyMs, report.recordCount);
  };
  const producer = new Producer(client, {
    acks: args.acks,
    compression: args.compression,
    batchSizeBytes: args.batchSizeBytes,
    lingerMs: args.lingerMs,
    deliveryTimeoutMs: args.deliveryTimeoutMs,
    onBatchComplete,
  });
  const progress = startProgress(() => {
    const now = performance.now();
    const perSec = (window.count * 1000) / (now - windowStartMs);
    io.err(
      `${window.count} records sent, ${perSec.toFixed(1)} records/sec (${((perSec * args.recordSizeBytes) / MB).toFixed(2)} MB/sec), ` +
        `${window.avgMs.toFixed(1)} ms avg latency, ${window.maxMs.toFixed(1)} ms max latency.`,
    );
    window = new LatencyStats();
    windowStartMs = now;
  });
  const startMs = performance.now();
  try {
    for (let i = 0; i < args.records && firstError === null; i++) {
      await producer.send({ topic: args.topic, key: null, value: payload });
    }
    await producer.flush();
  } finally {
    progress.stop();
  }
  const elapsedMs = performance.now() - startMs;
  // The totals count what the broker acknowledged, also when some records failed (a full disk):
  // what did get written is worth knowing, and scripts parse this line either way.
  await io.out(produceSummaryLine(total.count, elapsedMs, args.recordSizeBytes, total) + '\n');
  if (firstError !== null) {
    io.err(
      `skiff: ${failed} records failed (the totals above count the ${total.count} acknowledged): ${(firstError as Error).message}`,
    );
    return EXIT_FAILURE;
  }
  return 0;
}

/** The final line of perf consume (see the module comment). */
export function consumeSummaryLine(records: number, bytes: number, elapsedMs: number): string {
  const seconds = Math.max(elapsedMs, 1e-3) / 1000;
  return `${records} records received, ${(records / seconds).toFixed(1)} records/sec (${(bytes / MB / seconds).toFixed(2)} MB/sec), ${(bytes / MB).toFixed(2)} MB in ${Math.round(elapsedMs)} ms.`;
}

/** Runs `skiff perf consume`. Exit 1 when fewer records arrive before the timeout. */
export async function perfConsume(client: KafkaClient, args: PerfConsumeArgs, io: CliIo): Promise<number> {
  if (!(args.records > 0)) throw new RangeError('--records must be positive');
  const md = await client.topicMetadata(args.topic);
  let source: {
    poll(): Promise<ConsumedRecord[]>;
    processed(r: ConsumedRecord): Promise<void>;
    endOfPoll(): Promise<void>;
  };
  let session: GroupSession | null = null;
  if (args.group === null) {
    const starts = await client.listOffsets(
      args.topic,
      md.partitions.map((p) => ({ partition: p.partition, timestamp: EARLIEST_TIMESTAMP })),
      md,
    );
    const consumer = new Consumer(client, { maxWaitMs: 100 });
    consumer.assign(
      md.partitions.map((p) => ({
        topic: args.topic,
        partition: p.partition,
        offset: starts.get(p.partition)!.offset,
      })),
    );
    source = { poll: () => consumer.poll(), processed: async () => undefined, endOfPoll: async () => undefined };
  } else {
    session = new GroupSession(
      groupSessionPorts(client, args.group.groupId, [args.topic], 100, (l) => io.err(l)),
      {
        mode: args.group.commit,
        autoCommitIntervalMs: args.group.autoCommitIntervalMs,
        reset: 'earliest',
      },
    );
    await session.start();
    source = session;
  }
  let records = 0;
  let bytes = 0;
  let windowRecords = 0;
  let windowBytes = 0;
  let windowStartMs = performance.now();
  const progress = startProgress(() => {
    const now = performance.now();
    io.err(consumeSummaryLine(windowRecords, windowBytes, now - windowStartMs));
    windowRecords = 0;
    windowBytes = 0;
    windowStartMs = now;
  });
  const startMs = performance.now();
  let lastRecordMs = startMs;
  try {
    while (records < args.records) {
      const batch = await source.poll();
      const now = performance.now();
      if (batch.length > 0) lastRecordMs = now;
      else if (now - lastRecordMs > args.timeoutMs) break;
      for (const r of batch) {
        if (records >= args.records) break;
        records++;
        const size = (r.key?.length ?? 0) + (r.value?.length ?? 0);
        bytes += size;
        windowRecords++;
        windowBytes += size;
        await source.processed(r);
      }
      await source.endOfPoll();
    }
  } finally {
    progress.stop();
    await session?.close();
  }
  // Up to the last record's arrival: the final wait for more is not reading.
  await io.out(consumeSummaryLine(records, bytes, lastRecordMs - startMs) + '\n');
  if (session !== null && args.group !== null) await io.out(session.summary(args.group.groupId) + '\n');
  if (records < args.records) {
    io.err(`skiff: only ${records} of ${args.records} records arrived (no new record for ${args.timeoutMs} ms)`);
    return EXIT_FAILURE;
  }
  return 0;
}

/**
 * Creates `topic` with `partitions` (null: 1; replication factor: the broker's default) unless it
 * exists. An existing topic with another partition count than `--partitions` asked is used as it is,
 * with a warning on stderr: records still go where a producer would send them (as kcat and
 * kafka-producer-perf-test, which never change a topic), but a benchmark of the wrong partition
 * count is not silent.
 */
async function ensureTopic(client: KafkaClient, topic: string, asked: number | null, io: CliIo): Promise<void> {
  const md = await client.metadata([topic]);
  const t = md.topics.find((x) => x.name === topic);
  if (t !== undefined && t.errorCode === ErrorCode.NONE) {
    if (asked !== null && asked !== t.partitions.length)
      io.err(
        `skiff: warning: topic ${topic} already exists with ${t.partitions.length} partitions; --partitions ${asked} applies only when the topic is created (delete it first to change the count)`,
      );
    return;
  }
  const partitions = asked ?? 1;
  const [result] = await client.createTopics([{ name: topic, numPartitions: partitions, replicationFactor: -1 }]);
  if (result!.errorCode !== ErrorCode.NONE && result!.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) {
    throw new KafkaError(result!.errorCode, `creating topic ${topic}`, result!.errorMessage);
  }
  io.err(`created topic ${topic} with ${partitions} partitions`);
  // The leader may take a moment to come up: wait until Metadata shows one for every partition.
  for (let attempt = 0; attempt < 50; attempt++) {
    const fresh = (await client.metadata([topic])).topics.find((x) => x.name === topic);
    if (
      fresh !== undefined &&
      fresh.errorCode === ErrorCode.NONE &&
      fresh.partitions.length > 0 &&
      fresh.partitions.every((p) => p.leader >= 0)
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
