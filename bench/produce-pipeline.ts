/**
 * Produce throughput and latency end to end, two builds compared in one run (same machine state):
 * for each build (a repository root with a compiled dist/), interleaved over several rounds,
 * 1. wire: an in-process broker (test/helpers/in-process-broker) and 2000 sequential Produce
 *    requests of one 16 KiB batch (16 records of 1000 bytes) with acks=1 and acks=-1
 *    (test/helpers/wire-client), after 100 warm-up requests;
 * 2. perf: `bin/skiff.js start --port 0 --data-dir <tmp>` and `bin/skiff.js perf produce --records
 *    100000 --record-size 1024` with acks=1 and acks=-1.
 * Prints the median of each measure per build and the median over rounds of the ratio after/before
 * (the two builds of a round run back to back, in alternating order).
 *
 *   node dist/bench/produce-pipeline.js [--before <root>] [--after <root>] [--rounds <n>] [--wire-only]
 *
 * `--before` defaults to the root in $SKIFF_BENCH_BEFORE, `--after` to this repository. To get a
 * "before" root: copy the tree before the change (src, test, bench, bin, package.json,
 * tsconfig.json, node_modules symlinked) and `npx tsc -p tsconfig.json` there.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const REQUESTS = 2000;
const WARMUP = 100;
const RECORDS_PER_BATCH = 16;
const RECORD_BYTES = 1000;

interface Measure {
  recordsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}
type Results = Record<string, Measure>;

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/** Child mode: in-process broker from `root`, sequential produce requests; prints one JSON line. */
async function wireChild(root: string): Promise<void> {
  /* eslint-disable @typescript-eslint/no-require-imports -- child mode loads the built tree from a root known only at run time */
  const { startTestBroker, removeDir } = require(path.join(root, 'dist/test/helpers/in-process-broker.js'));
  const { WireClient } = require(path.join(root, 'dist/test/helpers/wire-client.js'));
  const { buildRecordBatch } = require(path.join(root, 'dist/src/protocol/record-batch/builder.js'));
  const { ApiKey } = require(path.join(root, 'dist/src/protocol/index.js'));
  const broker = await startTestBroker();
  const client = await WireClient.connect(broker.port);
  const value = Buffer.alloc(RECORD_BYTES, 0x61);
  const results: Results = {};
  try {
    for (const acks of [1, -1]) {
      const topic = `bench-acks${acks}`;
      const created = await client.request(ApiKey.CreateTopics, 5, {
        topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      if (created.body.topics[0].errorCode !== 0)
        throw new Error(`CreateTopics ${topic}: error ${created.body.topics[0].errorCode}`);
      const latencies: number[] = [];
      let startedAt = 0;
      for (let i = 0; i < WARMUP + REQUESTS; i++) {
        if (i === WARMUP) startedAt = performance.now();
        const records = buildRecordBatch(
          Array.from({ length: RECORDS_PER_BATCH }, () => ({ key: null, value, headers: [] })),
        );
        const t0 = performance.now();
        const res = await client.request(ApiKey.Produce, 7, {
          transactionalId: null,
          acks,
          timeoutMs: 30_000,
          topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
        });
        const code = res.body.responses[0].partitionResponses[0].errorCode;
        if (code !== 0) throw new Error(`produce acks=${acks}: error ${code}`);
        if (i >= WARMUP) latencies.push(performance.now() - t0);
      }
      const elapsedS = (performance.now() - startedAt) / 1000;
      latencies.sort((a, b) => a - b);
      results[`wire acks=${acks}`] = {
        recordsPerSec: (REQUESTS * RECORDS_PER_BATCH) / elapsedS,
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
      };
    }
  } finally {
    client.close?.();
    await broker.stop();
    removeDir(broker.dataDir);
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

function runWire(root: string): Results {
  const child = spawnSync(process.execPath, [__filename, '--wire-child', root], {
    encoding: 'utf8',
    env: { ...process.env, SKIFF_LOG_LEVEL: 'warn' },
    maxBuffer: 1 << 24,
  });
  if (child.status !== 0) throw new Error(`wire child failed (${child.status}): ${child.stderr}`);
  const line = child.stdout.trim().split('\n').pop()!;
  return JSON.parse(line) as Results;
}

/** Starts `bin/skiff.js start` from `root` on a free port; resolves with its port and a stop function. */
function startBrokerProcess(root: string, dataDir: string): Promise<{ port: number; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    [path.join(root, 'bin/skiff.js'), 'start', '--port', '0', '--data-dir', dataDir],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, SKIFF_LOG_LEVEL: 'warn' },
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('broker did not start in 30 s')), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /skiff listening on [^\s:]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          port: Number(m[1]),
          stop: async () => {
            child.kill('SIGTERM'); // the child we started, by its handle
            await exited;
          },
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`broker exited early (${code})`)));
  });
}

async function runPerf(root: string): Promise<Results> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'skiff-perf-'));
  const broker = await startBrokerProcess(root, dataDir);
  const results: Results = {};
  try {
    for (const acks of ['1', '-1']) {
      const perf = spawnSync(
        process.execPath,
        [
          path.join(root, 'bin/skiff.js'),
          'perf',
          'produce',
          '--brokers',
          `127.0.0.1:${broker.port}`,
          '--topic',
          `perf-acks${acks}`,
          '--records',
          '100000',
          '--record-size',
          '1024',
          '--acks',
          acks,
        ],
        { encoding: 'utf8', maxBuffer: 1 << 24 },
      );
      if (perf.status !== 0) throw new Error(`perf produce failed (${perf.status}): ${perf.stderr}`);
      const last = perf.stdout.trim().split('\n').pop()!;
      const m = /records sent, ([\d.]+) records\/sec.*?([\d.]+) ms 50th, ([\d.]+) ms 99th/.exec(last);
      if (!m) throw new Error(`cannot parse perf output: ${last}`);
      results[`perf acks=${acks}`] = { recordsPerSec: Number(m[1]), p50Ms: Number(m[2]), p99Ms: Number(m[3]) };
    }
  } finally {
    await broker.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const before = argValue('--before') ?? process.env.SKIFF_BENCH_BEFORE;
  const after = argValue('--after') ?? path.join(__dirname, '..', '..');
  const rounds = Number(argValue('--rounds') ?? 3);
  const wireOnly = process.argv.includes('--wire-only');
  if (before === undefined) throw new Error('--before <root> (or SKIFF_BENCH_BEFORE) is required');
  const builds: Record<string, string> = { before, after };
  const samples: Record<string, Record<string, Measure[]>> = { before: {}, after: {} };
  for (let r = 0; r < rounds; r++) {
    // Alternate the order each round so drift in machine state hits both builds alike.
    const order = r % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    for (const name of order) {
      const results = { ...runWire(builds[name]!), ...(wireOnly ? {} : await runPerf(builds[name]!)) };
      for (const [key, m] of Object.entries(results)) (samples[name]![key] ??= []).push(m);
      process.stderr.write(`round ${r + 1} ${name}: ${JSON.stringify(results)}\n`);
    }
  }
  // Ratios are the median of the per-round ratios: both builds of a round ran back to back.
  const rows = Object.keys(samples.after!).map((key) => {
    const b = samples.before![key]!;
    const a = samples.after![key]!;
    const med = (xs: Measure[], f: keyof Measure) => median(xs.map((x) => x[f]));
    const ratio = (f: keyof Measure) => +median(a.map((x, i) => x[f] / b[i]![f])).toFixed(2);
    return {
      measure: key,
      'before rec/s': Math.round(med(b, 'recordsPerSec')),
      'after rec/s': Math.round(med(a, 'recordsPerSec')),
      'rec/s after/before': ratio('recordsPerSec'),
      'before p50 ms': +med(b, 'p50Ms').toFixed(2),
      'after p50 ms': +med(a, 'p50Ms').toFixed(2),
      'before p99 ms': +med(b, 'p99Ms').toFixed(2),
      'after p99 ms': +med(a, 'p99Ms').toFixed(2),
      'p99 after/before': ratio('p99Ms'),
    };
  });
  console.table(rows);
}

if (process.argv[2] === '--wire-child') {
  wireChild(process.argv[3]!).then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
} else {
  main().catch((error) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
