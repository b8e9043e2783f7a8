/**
 * Micro-benchmarks of the produce and fetch hot paths (tinybench): request decoding and response
 * encoding, batch validation (header + CRC-32C), log append and read, offset-index lookups, and actor
 * envelope round trips. Run with `npm run bench`. The machine is shared and noisy, so compare tasks
 * of one run (the ratios printed at the end), never lone timings across runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Bench } from 'tinybench';
import { ApiKey, decodeRequest, encodeRequest, encodeResponse, encodeResponseChunks } from '../src/protocol';
import { buildRecordBatch } from '../src/protocol/record-batch/builder';
import { buildBatch } from '../src/client/batch';
import { filterSegmentBytes, latestOffsetsOf } from '../src/storage/compaction-filter';
import { validateProducedBatch } from '../src/replica/produce-validation';
import { Log } from '../src/storage/log';
import { NodeFileSystem } from '../src/io/node-file-system';
import { MemoryFileSystem } from '../src/io/memory-file-system';
import { OffsetIndex } from '../src/storage/offset-index';
import { decodeEnvelope, encodeEnvelopeForTransfer } from '../src/runtime/envelope';
import { createLogger } from '../src/runtime/logger';
import { formatBenchTable, opsPerSecond } from './table';

/** The fields read from a task's result: tinybench 6 (latency, ms) or older releases (mean in ms). */
type TinybenchStats = { latency?: { mean?: number }; mean?: number };

function batchOfBytes(recordBytes: number, records: number): Buffer {
  const value = Buffer.alloc(recordBytes, 0x61);
  return buildRecordBatch(Array.from({ length: records }, () => ({ key: null, value, headers: [] })));
}

const batch1k = batchOfBytes(100, 10);
const batch16k = batchOfBytes(1000, 16);
const batch256k = batchOfBytes(1000, 256);
const produceFrame16k = encodeRequest(ApiKey.Produce, 7, 1, 'bench', {
  transactionalId: null,
  acks: -1,
  timeoutMs: 30000,
  topicData: [{ name: 'bench', partitionData: [{ index: 0, records: batch16k }] }],
}).subarray(4);
const fetchResponse = (records: Buffer) => ({
  throttleTimeMs: 0,
  errorCode: 0,
  sessionId: 0,
  responses: [
    {
      topic: 'bench',
      partitions: [
        {
          partitionIndex: 0,
          errorCode: 0,
          highWatermark: 100,
          lastStableOffset: 100,
          logStartOffset: 0,
          abortedTransactions: null,
          preferredReadReplica: -1,
          records,
        },
      ],
    },
  ],
});

const logger = createLogger({ level: 'silent', fd: 2 });
const clock = { nowMs: () => Date.now(), monotonicMs: () => performance.now() };
const tmp = mkdtempSync(path.join(os.tmpdir(), 'skiff-bench-'));
const diskLog = Log.open({
  fs: new NodeFileSystem(),
  dir: path.join(tmp, 'disk-0'),
  config: { segmentBytes: 1 << 30, indexIntervalBytes: 4096 },
  recoveryPoint: 0,
  logger,
  clock,
});
const memLog = Log.open({
  fs: new MemoryFileSystem(),
  dir: '/mem/mem-0',
  config: { segmentBytes: 64 << 20, indexIntervalBytes: 4096 },
  recoveryPoint: 0,
  logger,
  clock,
});
for (let i = 0; i < 2000; i++) memLog.append(Buffer.from(batch16k), 0);
let readOffset = 0;
// An offset index of 100,000 entries (a 1 GiB segment at one entry per ~10 KiB).
const indexFs = new MemoryFileSystem();
indexFs.mkdirp('/idx');
const { index: offsetIndex } = OffsetIndex.open(indexFs, '/idx/00000000000000000000.index', 0, 0);
for (let i = 1; i <= 100_000; i++) offsetIndex.append(i * 10, i * 10_240, false);
let lookupTarget = 0;

/** A segment of ~1 MiB: 10,000 records of ~100 bytes in batches of 20, keys k0..k999 repeating. */
function compactionSegmentOf(codec: 0 | 3): Buffer {
  const parts: Buffer[] = [];
  for (let b = 0; b < 500; b++) {
    const records = Array.from({ length: 20 }, (_, i) => ({
      key: Buffer.from(`k${(b * 20 + i) % 1000}`),
      value: Buffer.alloc(90, 97 + (i % 26)),
      timestamp: 1_700_000_000_000 + b,
    }));
    parts.push(buildBatch(records, { baseOffset: b * 20, compression: codec }));
  }
  return Buffer.concat(parts);
}
const compactionSegment = compactionSegmentOf(0);
const compactionSegmentLz4 = compactionSegmentOf(3);

async function main(): Promise<void> {
  const bench = new Bench({ time: Number(process.env.BENCH_TIME_MS ?? 400), warmupTime: 100 });
  bench
    .add('protocol: decode Produce v7 request (16 KiB batch)', () => {
      decodeRequest(produceFrame16k);
    })
    .add('protocol: encode Fetch v11 response (16 KiB records, one buffer)', () => {
      encodeResponse(ApiKey.Fetch, 11, 1, fetchResponse(batch16k));
    })
    .add('protocol: encode Fetch v11 response (256 KiB records, one buffer)', () => {
      encodeResponse(ApiKey.Fetch, 11, 1, fetchResponse(batch256k));
    })
    .add('protocol: encode Fetch v11 response (256 KiB records, chunks)', () => {
      encodeResponseChunks(ApiKey.Fetch, 11, 1, fetchResponse(batch256k));
    })
    .add('batch: validate 1 KiB batch (header + CRC-32C)', () => {
      validateProducedBatch(batch1k, 1 << 20);
    })
    .add('batch: validate 16 KiB batch (header + CRC-32C)', () => {
      validateProducedBatch(batch16k, 1 << 20);
    })
    .add('batch: validate 256 KiB batch (header + CRC-32C)', () => {
      validateProducedBatch(batch256k, 1 << 20);
    })
    .add('log: append 16 KiB batch (node fs, page cache)', () => {
      diskLog.append(batch16k, 0);
    })
    .add('log: append 16 KiB batch (memory fs)', () => {
      memLog.append(batch16k, 0);
    })
    .add('log: read 64 KiB from a random offset (memory fs)', () => {
      readOffset = (readOffset + 7919) % 30000;
      memLog.read(readOffset, 65536, memLog.logEndOffset, true);
    })
    .add('index: offset lookup in 100,000 entries', () => {
      lookupTarget = (lookupTarget + 7919) % 1_000_000;
      offsetIndex.lookup(lookupTarget);
    })
    .add('compaction: offset map + filter of a 1 MiB segment (1000 keys, 10 versions each)', () => {
      const map = latestOffsetsOf(compactionSegment, 0, Number.MAX_SAFE_INTEGER);
      filterSegmentBytes(compactionSegment, { offsetMap: map, nowMs: 0, deleteRetentionMs: 0 });
    })
    .add('compaction: offset map + filter of a 1 MiB lz4 segment', () => {
      const map = latestOffsetsOf(compactionSegmentLz4, 0, Number.MAX_SAFE_INTEGER);
      filterSegmentBytes(compactionSegmentLz4, { offsetMap: map, nowMs: 0, deleteRetentionMs: 0 });
    })
    .add('envelope: round trip with 16 KiB batch', () => {
      decodeEnvelope(
        encodeEnvelopeForTransfer({
          to: 'replica/0/x/0',
          from: 'net/0',
          type: 'produce',
          corr: 1,
          body: { records: batch16k, acks: -1, timeoutMs: 30000 },
        }),
      );
    })
    .add('envelope: round trip with 256 KiB batch', () => {
      decodeEnvelope(
        encodeEnvelopeForTransfer({
          to: 'replica/0/x/0',
          from: 'net/0',
          type: 'produce',
          corr: 1,
          body: { records: batch256k, acks: -1, timeoutMs: 30000 },
        }),
      );
    });
  await bench.run();
  const meanMsOfTask = (task: { result?: unknown } | undefined): number => {
    const r = task?.result as TinybenchStats | undefined;
    return r?.latency?.mean ?? r?.mean ?? NaN;
  };
  const taskNamed = (prefix: string) => {
    const task = bench.tasks.find((t) => t.name.startsWith(prefix));
    if (task === undefined) throw new Error(`no bench task starts with ${JSON.stringify(prefix)}`);
    return task;
  };
  for (const line of formatBenchTable(bench.tasks.map((task) => ({ name: task.name, meanMs: meanMsOfTask(task) }))))
    console.log(line);
  // Ratios of ops/s from the same means as the table, each task named in full.
  const ratio = (a: string, b: string) => {
    const [ta, tb] = [taskNamed(a), taskNamed(b)];
    const value = opsPerSecond(meanMsOfTask(ta)) / opsPerSecond(meanMsOfTask(tb));
    console.log(`ratio ${value.toFixed(2)}  ${ta.name}  /  ${tb.name}`);
  };
  ratio('batch: validate 1 KiB', 'batch: validate 256 KiB');
  ratio(
    'protocol: encode Fetch v11 response (256 KiB records, chunks)',
    'protocol: encode Fetch v11 response (256 KiB records, one buffer)',
  );
  ratio('envelope: round trip with 16 KiB', 'envelope: round trip with 256 KiB');
  ratio('log: append 16 KiB batch (memory fs)', 'log: append 16 KiB batch (node fs');
  diskLog.close();
  rmSync(tmp, { recursive: true, force: true });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
