/**
 * What record-level produce validation costs (issue 13 item 3), per codec, for 100 B and 1 KiB
 * records in 16 KiB batches (the Java producer's default batch.size): MB/s of record bytes
 * validated, and the produce path's check before (header + CRC-32C only) and after (header +
 * records, decompressing). Also the round trip of handing one batch to a piscina thread, which is
 * what moving validation off the replica's worker would add per batch. Run after a build:
 * `node dist/bench/validation.js` (BENCH_TIME_MS sets the time per task, default 400). The machine
 * is shared and noisy: compare the rows of one run, never lone timings across runs.
 */
import * as path from 'node:path';
import { Piscina } from 'piscina';
import { Bench } from 'tinybench';
import { buildBatch } from '../src/client/batch';
import { COMPRESSION_NAMES, decompress, type CompressionCodecId } from '../src/protocol/record-batch/compression';
import * as L from '../src/protocol/record-batch/layout';
import { maxDecompressedBytesFor, validateBatchRecords } from '../src/protocol/record-batch/validate';
import { validateBatchHeader, validateProducedBatch } from '../src/replica/produce-validation';

const MAX_MESSAGE_BYTES = 1024 * 1024 + 12;
const LIMIT = maxDecompressedBytesFor(MAX_MESSAGE_BYTES);
const BATCH_BYTES = 16 * 1024;

/** Deterministic record values of random capital letters (as ProducerPerformance's payloads). */
function values(recordBytes: number, count: number): Buffer[] {
  let seed = 12345;
  return Array.from({ length: count }, () => {
    const v = Buffer.allocUnsafe(recordBytes);
    for (let i = 0; i < recordBytes; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      v[i] = 65 + ((seed >>> 16) % 26);
    }
    return v;
  });
}

/** One row of the table this prints. */
export interface ValidationRow {
  codec: string;
  recordBytes: number;
  task: string;
  /** Record (value) bytes per second through the task, in MB/s (10^6 bytes). */
  mbPerSec: number;
  /** Mean time per batch, µs. */
  usPerBatch: number;
}

type Stats = { latency?: { mean?: number }; mean?: number };
const meanMs = (r: Stats | undefined): number => r?.latency?.mean ?? r?.mean ?? NaN;

/** Runs the benchmark and returns its rows (also printed). */
export async function runValidationBench(timeMs = Number(process.env.BENCH_TIME_MS ?? 400)): Promise<ValidationRow[]> {
  const bench = new Bench({ time: timeMs, warmupTime: 100 });
  const payloadBytes = new Map<string, number>();
  const pool = new Piscina({ filename: path.join(__dirname, 'validation-worker.js'), minThreads: 1, maxThreads: 1 });
  for (const recordBytes of [100, 1024]) {
    const count = Math.floor(BATCH_BYTES / recordBytes);
    const records = values(recordBytes, count).map((value) => ({ key: null, value, timestamp: 1_750_000_000_000 }));
    for (const codec of [0, 1, 2, 3, 4] as CompressionCodecId[]) {
      const batch = buildBatch(records, { compression: codec });
      const name = COMPRESSION_NAMES[codec]!;
      const key = (task: string) => `${name} ${recordBytes} B: ${task}`;
      const add = (task: string, fn: () => unknown) => {
        payloadBytes.set(key(task), count * recordBytes);
        bench.add(key(task), fn);
      };
      if (validateProducedBatch(batch, MAX_MESSAGE_BYTES) !== null) throw new Error(`${key('')} batch refused`);
      add('before: header + CRC', () => validateBatchHeader(batch, MAX_MESSAGE_BYTES));
      add('after: header + CRC + records', () => validateProducedBatch(batch, MAX_MESSAGE_BYTES));
      add('records only', () => validateBatchRecords(batch, LIMIT));
      if (codec !== 0) add('decompress only', () => decompress(codec, batch.subarray(L.RECORDS)));
      if (recordBytes === 1024 || codec === 0) {
        bench.add(key('piscina hop (validate on the pool)'), async () => {
          await pool.run({ batch, limit: LIMIT });
        });
        payloadBytes.set(key('piscina hop (validate on the pool)'), count * recordBytes);
      }
    }
  }
  await bench.run();
  await pool.destroy();
  const rows: ValidationRow[] = bench.tasks.map((t) => {
    const ms = meanMs(t.result as Stats | undefined);
    const at = t.name.indexOf(': ');
    const head = t.name.slice(0, at);
    const task = t.name.slice(at + 2);
    const [codec, recordBytes] = head.split(' ');
    return {
      codec: codec!,
      recordBytes: Number(recordBytes),
      task,
      mbPerSec: payloadBytes.get(t.name)! / 1e6 / (ms / 1000),
      usPerBatch: ms * 1000,
    };
  });
  console.log('record validation of 16 KiB batches (machine shared: compare rows of one run)');
  console.log(
    `${'codec'.padEnd(7)}${'record'.padStart(7)}  ${'task'.padEnd(36)}${'MB/s'.padStart(9)}${'µs/batch'.padStart(10)}`,
  );
  for (const r of rows)
    console.log(
      `${r.codec.padEnd(7)}${`${r.recordBytes} B`.padStart(7)}  ${r.task.padEnd(36)}${r.mbPerSec.toFixed(0).padStart(9)}${r.usPerBatch.toFixed(1).padStart(10)}`,
    );
  return rows;
}

if (require.main === module) {
  runValidationBench().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
