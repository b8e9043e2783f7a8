/**
 * The follower fetcher's shape, measured (issue 11 item 4; src/replica/README.md "Follower fetching"):
 * a real three-broker cluster in this process (broker.ts startCluster, ThreadRuntime, direct worker
 * channels), RF=3 topics (min.insync.replicas=2, write.caching=false: Skiff's default) of 1, 16 and
 * 128 partitions, each loaded with the same bytes: `BENCH_BATCHES` acks=all Produce requests of one
 * 16 KiB batch (16 records of 1 KiB), partitions in turn, 32 in flight, from a load worker thread
 * (bench/replication-load.ts), after a warm-up of a tenth as many.
 *
 * Per partition count it reports: replication throughput (MB/s acknowledged), envelopes per second
 * between workers (counted in the workers by bench/replication-probe.ts, preloaded with `-r`, plus
 * the hub's forwards from ThreadRuntime.hubStats), follower fetch requests (`replica.fetch` sent by
 * workers) and `replica.follower-flushed` notes per acknowledged batch, the main thread's event-loop
 * utilisation and its share of the process's CPU time (per-thread CPU from /proc/thread-self/stat:
 * the workers' event-loop utilisation counts time their loops are awake but not computing, so it is
 * no CPU measure), and the runtime workers' CPU time per MB and per follower fetch. Run with
 * `npm run bench:replication` (env: BENCH_BATCHES, default 2000; BENCH_IO_THREADS, num.io.threads,
 * default 8; BENCH_PARTITIONS, default "1,16,128"; BENCH_WRITE_CACHING, default false).
 * The machine is shared and noisy: quote the ratios of one run, never lone figures across runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BroadcastChannel, Worker } from 'node:worker_threads';
import { startCluster } from '../src/broker';
import { KafkaClient } from '../src/client';
import { buildBrokerConfig } from '../src/config/broker-config';
import { createLogger } from '../src/runtime/logger';
import { ThreadRuntime } from '../src/runtime/thread-runtime';
import type { LoadJob, LoadResult } from './replication-load';
import { PROBE_CHANNEL, threadCpuMs, type ProbeReport } from './replication-probe';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 2000);
const IO_THREADS = Number(process.env.BENCH_IO_THREADS ?? 8);
const PARTITION_COUNTS = (process.env.BENCH_PARTITIONS ?? '1,16,128').split(',').map(Number);
const WRITE_CACHING = process.env.BENCH_WRITE_CACHING === 'true';
const IN_FLIGHT = 32;
const RECORD_BYTES = 1024;
const RECORDS_PER_BATCH = 16;

/** Every runtime worker's probe report, by worker name (waits `waitMs` for the answers). */
async function probe(waitMs = 300): Promise<Map<string, ProbeReport>> {
  const channel = new BroadcastChannel(PROBE_CHANNEL);
  const reports = new Map<string, ProbeReport>();
  channel.onmessage = (event: unknown) => {
    const report = (event as { data: ProbeReport }).data;
    reports.set(report.worker, report);
  };
  channel.postMessage('report');
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  channel.close();
  return reports;
}

/** Sums of the probe counters over every worker. */
interface ProbeTotals {
  activeMs: number;
  cpuMs: number;
  byKey: Map<string, { count: number; bytes: number }>;
}

function totals(reports: Map<string, ProbeReport>): ProbeTotals {
  const byKey = new Map<string, { count: number; bytes: number }>();
  let activeMs = 0;
  let cpuMs = 0;
  for (const r of reports.values()) {
    activeMs += r.activeMs;
    cpuMs += r.cpuMs;
    for (const [key, v] of Object.entries(r.envelopes)) {
      const e = byKey.get(key) ?? { count: 0, bytes: 0 };
      e.count += v.count;
      e.bytes += v.bytes;
      byKey.set(key, e);
    }
  }
  return { activeMs, cpuMs, byKey };
}

/** `after - before`, key by key (a worker that appeared in between counts from zero). */
function delta(before: ProbeTotals, after: ProbeTotals): ProbeTotals {
  const byKey = new Map<string, { count: number; bytes: number }>();
  for (const [key, v] of after.byKey) {
    const b = before.byKey.get(key) ?? { count: 0, bytes: 0 };
    byKey.set(key, { count: v.count - b.count, bytes: v.bytes - b.bytes });
  }
  return { activeMs: after.activeMs - before.activeMs, cpuMs: after.cpuMs - before.cpuMs, byKey };
}

const countOf = (t: ProbeTotals, predicate: (key: string) => boolean): number =>
  [...t.byKey].filter(([k]) => predicate(k)).reduce((sum, [, v]) => sum + v.count, 0);
const bytesOf = (t: ProbeTotals, predicate: (key: string) => boolean): number =>
  [...t.byKey].filter(([k]) => predicate(k)).reduce((sum, [, v]) => sum + v.bytes, 0);

function runLoad(job: LoadJob): Promise<{ result: LoadResult }> {
  return new Promise((resolve, reject) => {
    // No probe in the load worker (execArgv: []).
    const worker = new Worker(path.join(__dirname, 'replication-load.js'), { workerData: job, execArgv: [] });
    worker.once('message', (m: { ok?: LoadResult; error?: string }) => {
      void worker.terminate();
      if (m.ok !== undefined) resolve({ result: m.ok });
      else reject(new Error(m.error));
    });
    worker.once('error', reject);
  });
}

async function waitInSync(client: KafkaClient, topic: string, partitions: number): Promise<number[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const t = (await client.metadata([topic])).topics.find((x) => x.name === topic);
    if (
      t !== undefined &&
      t.errorCode === 0 &&
      t.partitions.length === partitions &&
      t.partitions.every((p) => p.leader >= 0 && p.isr.length === 3)
    )
      return t.partitions.map((p) => p.leader);
    if (Date.now() > deadline) throw new Error(`${topic} not in sync within 60 s: ${JSON.stringify(t)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Row {
  partitions: number;
  mbPerS: number;
  ackedBatches: number;
  workerEnvelopesPerS: number;
  fetchesPerBatch: number;
  flushedPerBatch: number;
  emptyFetchShare: number;
  mainElu: number;
  mainShare: number;
  workerShare: number;
  coresBusy: number;
  workerMsPerMb: number;
  workerUsPerFetch: number;
  fetchReplyBytesPerRecordByte: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skiff-bench-replication-'));
  const logger = createLogger({ level: process.env.SKIFF_LOG_LEVEL ?? 'warn', fd: 2 });
  const config = buildBrokerConfig(
    new Map([
      ['listeners', 'PLAINTEXT://127.0.0.1:0'],
      ['log.dirs', dir],
      ['num.io.threads', String(IO_THREADS)],
    ]),
  );
  const runtime = new ThreadRuntime({
    brokers: [0, 1, 2].map((brokerId) => ({ brokerId, numIoThreads: IO_THREADS })),
    logger,
    workerLogFd: 2,
  });
  const cluster = await startCluster(config, logger, { nodes: 3, runtime });
  const bootstrap = `127.0.0.1:${cluster.brokers()[0]!.port}`;
  const client = await KafkaClient.connect({ brokers: bootstrap, clientId: 'bench-replication-admin' });
  const rows: Row[] = [];
  try {
    if ((await probe()).size === 0)
      throw new Error(
        'no worker answered the probe: run with `node -r ./dist/bench/replication-probe.js` (npm run bench:replication)',
      );
    console.log(
      `bench/replication: 3 brokers, num.io.threads=${IO_THREADS}, RF=3, min.insync.replicas=2, write.caching=${WRITE_CACHING}, ` +
        `${BATCHES} acks=all batches of ${RECORDS_PER_BATCH} x ${RECORD_BYTES} B per run, ${IN_FLIGHT} in flight, ${os.cpus().length} cores`,
    );
    for (const partitions of PARTITION_COUNTS) {
      const topic = `replication-${partitions}`;
      const [created] = await client.createTopics([
        {
          name: topic,
          numPartitions: partitions,
          replicationFactor: 3,
          configs: { 'min.insync.replicas': '2', 'write.caching': String(WRITE_CACHING) },
        },
      ]);
      if (created === undefined || created.errorCode !== 0)
        throw new Error(`creating ${topic}: ${JSON.stringify(created)}`);
      const leaders = await waitInSync(client, topic, partitions);
      const job = (batches: number): LoadJob => ({
        bootstrap,
        topic,
        leaders,
        batches,
        inFlight: IN_FLIGHT,
        recordBytes: RECORD_BYTES,
        recordsPerBatch: RECORDS_PER_BATCH,
      });
      await runLoad(job(Math.max(IN_FLIGHT, Math.round(BATCHES / 10))));
      const before = totals(await probe());
      const hubBefore = runtime.hubStats();
      const eluBefore = performance.eventLoopUtilization();
      const cpuBefore = process.cpuUsage();
      const mainCpuBefore = threadCpuMs();
      const wallBefore = performance.now();
      const { result } = await runLoad(job(BATCHES));
      const wallMs = performance.now() - wallBefore;
      const cpu = process.cpuUsage(cpuBefore);
      const mainCpuMs = threadCpuMs() - mainCpuBefore;
      const processCpuMs = (cpu.user + cpu.system) / 1000;
      const mainElu = performance.eventLoopUtilization(eluBefore);
      const hubAfter = runtime.hubStats();
      // The probe's own wait is idle time of every thread, outside the window above.
      const d = delta(before, totals(await probe()));
      if (result.acked !== BATCHES) throw new Error(`${topic}: ${result.acked} of ${BATCHES} batches acked`);
      const forwarded = hubAfter.forwarded - hubBefore.forwarded;
      const betweenWorkers = countOf(d, (k) => k.startsWith('direct ')) + forwarded;
      const fetches = countOf(d, (k) => k.endsWith(' replica.fetch'));
      const flushed = countOf(d, (k) => k.endsWith(' replica.follower-flushed'));
      // Replies over direct channels between broker workers: the follower fetch replies (and little else).
      const directReplies = countOf(d, (k) => k === 'direct reply');
      const directReplyBytes = bytesOf(d, (k) => k === 'direct reply');
      const emptyish = Math.max(0, directReplies - Math.round(directReplyBytes / (RECORDS_PER_BATCH * RECORD_BYTES)));
      const mb = result.bytes / 1e6;
      rows.push({
        partitions,
        mbPerS: mb / (result.elapsedMs / 1000),
        ackedBatches: result.acked,
        workerEnvelopesPerS: betweenWorkers / (wallMs / 1000),
        fetchesPerBatch: fetches / result.acked,
        flushedPerBatch: flushed / result.acked,
        emptyFetchShare: directReplies === 0 ? 0 : Math.min(1, emptyish / directReplies),
        mainElu: mainElu.utilization,
        mainShare: mainCpuMs / processCpuMs,
        workerShare: d.cpuMs / processCpuMs,
        coresBusy: processCpuMs / wallMs,
        workerMsPerMb: d.cpuMs / mb,
        workerUsPerFetch: fetches === 0 ? NaN : (d.cpuMs * 1000) / fetches,
        fetchReplyBytesPerRecordByte: directReplyBytes / (result.bytes * 2),
      });
      const r = rows[rows.length - 1]!;
      console.log(
        `${partitions} partition(s): ${r.mbPerS.toFixed(1)} MB/s acked; ${r.workerEnvelopesPerS.toFixed(0)} envelopes/s between workers ` +
          `(${forwarded} through the hub); ${fetches} follower fetches = ${r.fetchesPerBatch.toFixed(2)} per acked batch, ` +
          `${r.flushedPerBatch.toFixed(2)} follower-flushed notes per batch; main thread ELU ${(r.mainElu * 100).toFixed(0)}%, ` +
          `main thread ${(r.mainShare * 100).toFixed(0)}% of the process CPU, runtime workers ${(r.workerShare * 100).toFixed(0)}%; ` +
          `${r.coresBusy.toFixed(2)} cores busy; workers ${r.workerMsPerMb.toFixed(1)} CPU ms per MB, ${r.workerUsPerFetch.toFixed(0)} CPU us per follower fetch; ` +
          `fetch reply bytes / (2 x acked bytes) ${r.fetchReplyBytesPerRecordByte.toFixed(3)}`,
      );
      if (process.env.BENCH_VERBOSE === '1')
        for (const [k, v] of [...d.byKey].sort((a, b) => b[1].count - a[1].count))
          if (v.count > 0) console.log(`  ${k}: ${v.count} (${(v.bytes / 1e6).toFixed(1)} MB)`);
    }
    const first = rows[0]!;
    console.log(
      '\n| partitions | MB/s acked | vs first | envelopes/s between workers | fetches per acked batch | main ELU | main CPU share | cores busy | worker CPU ms/MB | vs first | worker CPU us/fetch |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows)
      console.log(
        `| ${r.partitions} | ${r.mbPerS.toFixed(1)} | ${(r.mbPerS / first.mbPerS).toFixed(2)} | ${r.workerEnvelopesPerS.toFixed(0)} | ` +
          `${r.fetchesPerBatch.toFixed(2)} | ${(r.mainElu * 100).toFixed(0)}% | ${(r.mainShare * 100).toFixed(0)}% | ${r.coresBusy.toFixed(2)} | ` +
          `${r.workerMsPerMb.toFixed(1)} | ${(r.workerMsPerMb / first.workerMsPerMb).toFixed(2)} | ${r.workerUsPerFetch.toFixed(0)} |`,
      );
  } finally {
    client.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
