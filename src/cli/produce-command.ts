/**
 * `skiff produce TOPIC`: each stdin line becomes one record (like kcat -P and
 * kafka-console-producer). With `--key-separator SEP` the bytes before the first SEP are the key and
 * the rest the value (a line without SEP has a null key, as kcat -K). `--header k=v` adds headers
 * to every record. Records go to `--partition N`, else murmur2 of the key, else a sticky partition.
 * A `--partition` the topic does not have is refused before stdin is read (exit 1).
 *
 * `-Z` / `--null-empty` (kcat's `-Z`): an empty key or an empty value is sent as null, so
 * `key|` with `-k '|'` is a tombstone for `key` (a null value, which compaction deletes) and `|value`
 * has a null key. Without it an empty value is a zero-length value and an empty key a zero-length
 * key (kafka-console-producer has no way to send null; a line without the separator has a null key
 * either way, as kcat -K).
 *
 * Lines are split on `\n` only and kept as bytes (a `\r` stays in the value); a last line without
 * a newline still counts. At the end one summary goes to stdout: the records acknowledged, and per
 * partition the first and last offset; when some failed (after the producer's retries, bounded by
 * `--delivery-timeout-ms`), the same line says how many, and stderr gives the first error (exit 1).
 * Every line read is either acknowledged or failed by then. Progress goes to stderr every 5 s on long
 * inputs (acknowledged so far, and how many are still being sent or retried).
 */
import type { KafkaClient } from '../client/client';
import { KafkaError } from '../client/errors';
import { ErrorCode } from '../protocol/error-codes';
import { Producer, type RecordMetadata } from '../client/producer';
import type { RecordHeader } from '../protocol/record-batch/builder';
import type { CompressionName } from '../protocol/record-batch/compression';
import { EXIT_FAILURE, startProgress, type CliIo } from './client-io';

/** Arguments of `skiff produce`. */
export interface ProduceArgs {
  topic: string;
  keySeparator: string | null;
  partition: number | null;
  headers: Array<[string, string]>;
  compression: CompressionName;
  acks: -1 | 0 | 1;
  lingerMs: number;
  batchSizeBytes: number;
  /** kcat `-Z`: send an empty key or value as null. */
  nullEmpty: boolean;
  /** delivery.timeout.ms (default 120 000). */
  deliveryTimeoutMs?: number;
}

/** Per-partition outcome for the summary. */
interface PartitionSummary {
  records: number;
  firstOffset: number;
  lastOffset: number;
}

/**
 * Splits a byte stream into lines (without the `\n`), calling `onLine` for each; awaits it, so a
 * slow consumer of lines slows the reading.
 */
export async function forEachLine(
  input: NodeJS.ReadableStream,
  onLine: (line: Buffer) => Promise<void> | void,
): Promise<void> {
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    let data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (pending.length > 0) data = Buffer.concat([pending, data]);
    let start = 0;
    for (let nl = data.indexOf(0x0a, start); nl >= 0; nl = data.indexOf(0x0a, start)) {
      await onLine(data.subarray(start, nl));
      start = nl + 1;
    }
    pending = Buffer.from(data.subarray(start));
  }
  if (pending.length > 0) await onLine(pending);
}

/** Runs `skiff produce`; exit 1 when any record failed (the first error goes to stderr). */
export async function produceCommand(client: KafkaClient, args: ProduceArgs, io: CliIo): Promise<number> {
  const producer = new Producer(client, {
    acks: args.acks,
    compression: args.compression,
    lingerMs: args.lingerMs,
    batchSizeBytes: args.batchSizeBytes,
    deliveryTimeoutMs: args.deliveryTimeoutMs,
  });
  const headers: RecordHeader[] = args.headers.map(([key, value]) => ({ key, value: Buffer.from(value, 'utf8') }));
  const separator = args.keySeparator === null ? null : Buffer.from(args.keySeparator, 'utf8');
  if (separator !== null && separator.length === 0) throw new RangeError('--key-separator must not be empty');
  if (args.partition !== null) {
    const md = await client.topicMetadata(args.topic);
    if (!md.partitions.some((p) => p.partition === args.partition))
      throw new KafkaError(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        `${args.topic}/${args.partition} (--partition: the topic has partitions 0-${md.partitions.length - 1})`,
      );
  }
  const summary = new Map<number, PartitionSummary>();
  let sent = 0;
  let acked = 0;
  let failed = 0;
  let firstError: Error | null = null;
  const onAck = (err: Error | null, md: RecordMetadata | null): void => {
    if (err !== null) {
      failed++;
      firstError ??= err;
      return;
    }
    acked++;
    const s = summary.get(md!.partition) ?? { records: 0, firstOffset: Infinity, lastOffset: -1 };
    s.records++;
    s.firstOffset = Math.min(s.firstOffset, md!.offset);
    s.lastOffset = Math.max(s.lastOffset, md!.offset);
    summary.set(md!.partition, s);
  };
  const progress = startProgress(() =>
    io.err(`progress: ${acked} acknowledged, ${sent - acked - failed} in flight or retrying, ${failed} failed`),
  );
  try {
    await forEachLine(io.stdin, async (line) => {
      let key: Buffer | null = null;
      let value: Buffer | null = line;
      if (separator !== null) {
        const at = line.indexOf(separator);
        if (at >= 0) {
          key = line.subarray(0, at);
          value = line.subarray(at + separator.length);
        }
      }
      if (args.nullEmpty) {
        if (key !== null && key.length === 0) key = null;
        if (value.length === 0) value = null;
      }
      sent++;
      await producer.send({ topic: args.topic, partition: args.partition ?? undefined, key, value, headers }, onAck);
    });
    await producer.flush();
  } finally {
    progress.stop();
  }
  const parts = [...summary].sort((a, b) => a[0] - b[0]);
  const where =
    args.acks === 0
      ? `partitions ${parts.map(([p]) => p).join(', ') || '-'} (offsets unknown with acks=0)`
      : parts.map(([p, s]) => `partition ${p} offsets ${s.firstOffset}-${s.lastOffset}`).join(', ');
  const failures = failed > 0 ? ` (${failed} of ${sent} failed)` : '';
  await io.out(`produced ${acked} records to ${args.topic}${failures}${acked > 0 ? `: ${where}` : ''}\n`);
  if (firstError !== null) {
    io.err(`skiff: ${failed} of ${sent} records failed after retries: ${(firstError as Error).message}`);
    return EXIT_FAILURE;
  }
  return 0;
}
