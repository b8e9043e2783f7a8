/**
 * The load generator of bench/replication.ts, on a worker thread of its own so that the main
 * thread's measured time is the brokers' network layer and the runtime's hub only. Sends `batches`
 * acks=all Produce requests (one record batch of `batchBytes` each, partitions in turn, each to its
 * leader) with `inFlight` outstanding, checks every partition answer is NONE, and posts a
 * {@link LoadResult}.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { KafkaClient } from '../src/client';
import { buildBatch } from '../src/client/batch';
import { ApiKey } from '../src/protocol/api-keys';
import { errorName } from '../src/protocol/error-codes';

/** What bench/replication.ts gives the load worker. */
export interface LoadJob {
  bootstrap: string;
  topic: string;
  /** Leader broker of each partition, by partition index. */
  leaders: number[];
  batches: number;
  inFlight: number;
  recordBytes: number;
  recordsPerBatch: number;
}

/** What it posts back. */
export interface LoadResult {
  acked: number;
  bytes: number;
  elapsedMs: number;
}

async function run(job: LoadJob): Promise<LoadResult> {
  const client = await KafkaClient.connect({
    brokers: job.bootstrap,
    clientId: 'bench-replication',
    requestTimeoutMs: 60_000,
  });
  try {
    await client.metadata([job.topic]);
    const value = Buffer.alloc(job.recordBytes, 0x61);
    const batch = buildBatch(
      Array.from({ length: job.recordsPerBatch }, () => ({ key: null, value, headers: [], timestamp: Date.now() })),
      { compression: 0, producerId: -1, producerEpoch: -1, baseSequence: -1 },
    );
    let next = 0;
    let acked = 0;
    const started = performance.now();
    const one = async (): Promise<void> => {
      while (next < job.batches) {
        const partition = next++ % job.leaders.length;
        const body = await client.request(
          ApiKey.Produce,
          9,
          {
            transactionalId: null,
            acks: -1,
            timeoutMs: 30_000,
            topicData: [{ name: job.topic, partitionData: [{ index: partition, records: batch }] }],
          },
          job.leaders[partition],
        );
        const p = (body.responses as Array<{ partitionResponses: Array<{ errorCode: number }> }>)[0]
          ?.partitionResponses[0];
        if (p === undefined || p.errorCode !== 0)
          throw new Error(
            `produce to ${job.topic}-${partition}: ${p === undefined ? 'no answer' : errorName(p.errorCode)}`,
          );
        acked++;
      }
    };
    await Promise.all(Array.from({ length: job.inFlight }, one));
    const elapsedMs = performance.now() - started;
    return { acked, bytes: acked * batch.length, elapsedMs };
  } finally {
    client.close();
  }
}

run(workerData as LoadJob).then(
  (result) => parentPort!.postMessage({ ok: result }),
  (error: unknown) => parentPort!.postMessage({ error: String(error) }),
);
