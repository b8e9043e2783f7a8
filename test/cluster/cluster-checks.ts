/**
 * What the cluster suites share: a confluent-kafka producer run (python/cluster_producer.py) that can be
 * watched while it runs, reading partitions back with Skiff's client, and reading the replicas' segment
 * files: the byte prefix below a high watermark (from the batch headers) and the records a log holds.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { KafkaClient, decodeBatches } from '../../src/client';
import * as L from '../../src/protocol/record-batch/layout';
import { repoRoot, PYPI_PYTHON } from '../compat/clients';
import type { ClusterProcess } from '../helpers/cluster-process';

/** The producer script; the PyPI confluent-kafka (bundled librdkafka 2.x) runs it. */
const PRODUCER_SCRIPT = path.join(repoRoot(), 'test', 'cluster', 'python', 'cluster_producer.py');

/** The value the producer gives record `i` (cluster_producer.py's value_of). */
export const valueOf = (i: number): string => `v-${String(i).padStart(7, '0')}`;
/** The index of a value written by {@link valueOf}, or -1. */
export const indexOf = (value: string): number => (/^v-\d{7}$/.test(value) ? Number(value.slice(2)) : -1);

/** Options of {@link startProducer} (cluster_producer.py's flags). */
export interface ProducerRunOptions {
  bootstrap: string;
  topic: string;
  count: number;
  acks: -1 | 0 | 1;
  idempotent?: boolean;
  /** Records per second (0: as fast as it can). */
  rate?: number;
  retries?: number;
  /** The whole run's budget in seconds (message.timeout.ms too unless messageTimeoutMs is given). */
  timeoutS: number;
  messageTimeoutMs?: number;
  partition?: number;
}

/** What a producer run reported: one delivery report per record. */
export interface ProducerResult {
  /** [index, partition, offset] per acknowledged record. */
  acks: Array<[number, number, number]>;
  /** [index, librdkafka's error name] per failed record. */
  errors: Array<[number, string]>;
  sent: number;
}

/** A running producer. */
export interface ProducerRun {
  /** Resolves once at least `n` delivery reports (acks or errors) are in; rejects when the run ends first. */
  reported(n: number): Promise<void>;
  /** Resolves with the final report; rejects when the script fails or exceeds its budget by 30 s. */
  done: Promise<ProducerResult>;
}

/** Starts cluster_producer.py; see {@link ProducerRun}. */
export function startProducer(o: ProducerRunOptions): ProducerRun {
  const args = [PRODUCER_SCRIPT, '--bootstrap', o.bootstrap, '--topic', o.topic, '--count', String(o.count)];
  args.push('--acks', String(o.acks), '--timeout', String(o.timeoutS), '--rate', String(o.rate ?? 0));
  if (o.idempotent === true) args.push('--idempotent');
  if (o.retries !== undefined) args.push('--retries', String(o.retries));
  if (o.messageTimeoutMs !== undefined) args.push('--message-timeout-ms', String(o.messageTimeoutMs));
  if (o.partition !== undefined) args.push('--partition', String(o.partition));
  const child = spawn(PYPI_PYTHON, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let reportedCount = 0;
  let waiters: Array<{ n: number; resolve: () => void }> = [];
  let stdout = '';
  let stderr = '';
  let final: ProducerResult | undefined;
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c: string) => {
    stderr = (stderr + c).slice(-20_000);
  });
  child.stdout.on('data', (c: string) => {
    stdout += c;
    let newline: number;
    while ((newline = stdout.indexOf('\n')) >= 0) {
      const line = stdout.slice(0, newline);
      stdout = stdout.slice(newline + 1);
      const msg = JSON.parse(line) as { progress?: { acked: number; failed: number } } & Partial<ProducerResult>;
      if (msg.progress !== undefined) reportedCount = msg.progress.acked + msg.progress.failed;
      else if (msg.acks !== undefined) final = msg as ProducerResult;
      waiters = waiters.filter((w) => (reportedCount >= w.n ? (w.resolve(), false) : true));
    }
  });
  const done = new Promise<ProducerResult>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), (o.timeoutS + 30) * 1000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && final !== undefined) resolve(final);
      else reject(new Error(`cluster_producer.py ${args.slice(1).join(' ')}: exit ${code ?? signal}\n${stderr}`));
    });
  });
  done.catch(() => undefined); // observed through reported() or by the caller
  return {
    done,
    reported: (n) =>
      new Promise<void>((resolve, reject) => {
        if (reportedCount >= n) return resolve();
        waiters.push({ n, resolve });
        done.then(
          () => reject(new Error(`the producer ended after ${reportedCount} reports, before ${n}`)),
          (err: unknown) => reject(err as Error),
        );
      }),
  };
}

/** Creates `name` with RF = 3 and waits (bounded) until /v1/partitions shows every partition with a full ISR. */
export async function createReplicatedTopic(
  cluster: ClusterProcess,
  name: string,
  partitions: number,
  configs: Record<string, string> = {},
): Promise<void> {
  const client = await KafkaClient.connect({ brokers: cluster.bootstrap });
  try {
    const [r] = await client.createTopics([{ name, numPartitions: partitions, replicationFactor: 3, configs }]);
    assert.equal(r?.errorCode, 0, `create ${name}: ${r?.errorMessage}`);
  } finally {
    client.close();
  }
  await cluster.waitForPartitions(
    (ps) => ps.filter((p) => p.topic === name && p.leader >= 0 && p.isr.length === 3).length === partitions,
    `${name}: ${partitions} partitions with a leader and a full ISR`,
  );
}

/**
 * The prefix of a log (its segment files concatenated) holding exactly the batches below `highWatermark`,
 * found by walking the batch headers (baseOffset at 0, batchLength at 8, lastOffsetDelta at 23). Fails if
 * the batches do not end exactly at `highWatermark - 1` (the HW always falls on a batch boundary) or a
 * header runs past the bytes.
 */
export function prefixBelow(log: Buffer, highWatermark: number): Buffer {
  let position = 0;
  let nextOffset = 0;
  while (nextOffset < highWatermark) {
    assert.ok(
      position + L.RECORD_BATCH_OVERHEAD <= log.length,
      `log ends at byte ${position}, before HW ${highWatermark}`,
    );
    const baseOffset = Number(log.readBigInt64BE(position + L.BASE_OFFSET));
    const batchLength = log.readInt32BE(position + L.BATCH_LENGTH);
    const lastOffset = baseOffset + log.readInt32BE(position + L.LAST_OFFSET_DELTA);
    assert.ok(baseOffset >= nextOffset, `batch at byte ${position} starts at ${baseOffset}, below ${nextOffset}`);
    assert.ok(lastOffset < highWatermark, `batch ${baseOffset}-${lastOffset} straddles HW ${highWatermark}`);
    position += L.LOG_OVERHEAD + batchLength;
    assert.ok(position <= log.length, `batch at ${baseOffset} runs past the end of the log`);
    nextOffset = lastOffset + 1;
  }
  return log.subarray(0, position);
}

/** One record of a log: its offset and key and value as UTF-8 (null stays null). */
export interface LogRecord {
  offset: number;
  key: string | null;
  value: string | null;
}

/** Every record of a log's bytes (segment files concatenated), control batches left out. */
export function logRecords(log: Buffer): LogRecord[] {
  const out: LogRecord[] = [];
  for (const batch of decodeBatches(log)) {
    if ((batch.attributes & L.CONTROL_FLAG_MASK) !== 0) continue;
    for (const r of batch.records)
      out.push({ offset: r.offset, key: r.key?.toString('utf8') ?? null, value: r.value?.toString('utf8') ?? null });
  }
  return out;
}
