/**
 * Cross-worker envelopes, hub against direct MessageChannels (thread-runtime.ts, module comment): two
 * ThreadRuntimes side by side in one process, the same actors on two workers of two brokers, one with
 * `directChannels: false` (every envelope forwarded by the main thread), one with direct channels.
 * Tasks: 100 sequential request/reply round trips, and 256 one-way 16 KiB envelopes followed by one
 * request that confirms they all arrived. Also the main thread's event-loop utilisation while each
 * runtime streams, and the one-way throughput while the main thread is kept busy, since the main
 * thread is every broker's network thread. Run:
 * `npm run build && node dist/bench/runtime-channels.js` (BENCH_TIME_MS per task, default 1500).
 * The machine is shared and noisy: compare the ratios of one run, never lone timings across runs.
 */
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Bench } from 'tinybench';
import { actorRef } from '../src/runtime/actor';
import { createLogger } from '../src/runtime/logger';
import { registerActorKind } from '../src/runtime/registry';
import type { Endpoint } from '../src/runtime/runtime';
import { ThreadRuntime } from '../src/runtime/thread-runtime';
import { formatBenchTable, opsPerSecond } from './table';

type TinybenchStats = { latency?: { mean?: number }; mean?: number };
type DriverMessages = Record<string, { body: unknown; reply: unknown }>;

const ROUND_TRIPS = 100;
const BLAST_COUNT = 256;
const BLAST_BYTES = 16_384;

const actorsModule = path.join(__dirname, 'channel-actors');
registerActorKind('bench-pinger', { module: actorsModule, export: 'createBenchPingerActor' });
registerActorKind('bench-ponger', { module: actorsModule, export: 'createBenchPongerActor' });

interface Side {
  name: 'hub' | 'direct';
  runtime: ThreadRuntime;
  driver: Endpoint;
}

async function makeSide(name: Side['name']): Promise<Side> {
  const runtime = new ThreadRuntime({
    brokers: [
      { brokerId: 0, numIoThreads: 1 },
      { brokerId: 1, numIoThreads: 1 },
    ],
    logger: createLogger({ level: 'warn', fd: 2 }),
    workerLogFd: 2,
    directChannels: name === 'direct',
  });
  await runtime.spawn('pinger', 'bench-pinger', null, { pool: 'broker', brokerId: 0 });
  await runtime.spawn('ponger', 'bench-ponger', null, { pool: 'broker', brokerId: 1 });
  return { name, runtime, driver: runtime.endpoint(`driver-${name}`) };
}

const pinger = actorRef<DriverMessages>('pinger');

function rounds(side: Side): Promise<unknown> {
  return side.driver.request(pinger, 'rounds', { to: 'ponger', n: ROUND_TRIPS }, 60_000);
}

function blast(side: Side): Promise<unknown> {
  return side.driver.request(pinger, 'blast', { to: 'ponger', n: BLAST_COUNT, bytes: BLAST_BYTES }, 60_000);
}

/** The main thread's event-loop utilisation (0..1) over `iterations` blasts of one side. */
async function mainThreadUtilisation(side: Side, iterations: number): Promise<number> {
  const before = performance.eventLoopUtilization();
  for (let i = 0; i < iterations; i++) await blast(side);
  return performance.eventLoopUtilization(before).utilization;
}

/**
 * MB/s of `iterations` blasts of one side while the main thread is kept busy (it spins `spinMs` per
 * event-loop turn, as a loaded network thread would), so envelopes through the hub wait behind it.
 */
async function busyMainThroughput(side: Side, iterations: number, spinMs: number): Promise<number> {
  let spinning = true;
  const spin = (): void => {
    if (!spinning) return;
    const untilMs = performance.now() + spinMs;
    while (performance.now() < untilMs);
    setImmediate(spin);
  };
  setImmediate(spin);
  const startedMs = performance.now();
  for (let i = 0; i < iterations; i++) await blast(side);
  const elapsedMs = performance.now() - startedMs;
  spinning = false;
  return (iterations * BLAST_COUNT * BLAST_BYTES) / 1e6 / (elapsedMs / 1000);
}

async function main(): Promise<void> {
  const sides = [await makeSide('hub'), await makeSide('direct')];
  for (const side of sides) {
    await rounds(side); // warm: the direct side's routes are handed out
    await blast(side);
  }
  const timeMs = Number(process.env.BENCH_TIME_MS ?? 1500);
  const bench = new Bench({ time: timeMs, warmupTime: 200 });
  for (const side of sides) {
    bench.add(`${side.name}: ${ROUND_TRIPS} request/reply round trips between two workers`, () => rounds(side));
    bench.add(`${side.name}: ${BLAST_COUNT} one-way 16 KiB envelopes between two workers`, () => blast(side));
  }
  await bench.run();
  const meanMs = (name: string): number => {
    const task = bench.tasks.find((t) => t.name === name);
    const r = task?.result as TinybenchStats | undefined;
    return r?.latency?.mean ?? r?.mean ?? NaN;
  };
  for (const line of formatBenchTable(bench.tasks.map((t) => ({ name: t.name, meanMs: meanMs(t.name) })))) {
    console.log(line);
  }
  const perSide = (side: Side['name']) => {
    const roundTripUs =
      (meanMs(`${side}: ${ROUND_TRIPS} request/reply round trips between two workers`) * 1000) / ROUND_TRIPS;
    const blastMs = meanMs(`${side}: ${BLAST_COUNT} one-way 16 KiB envelopes between two workers`);
    const mbPerS = (BLAST_COUNT * BLAST_BYTES) / 1e6 / (blastMs / 1000);
    return { roundTripUs, mbPerS, blastOps: opsPerSecond(blastMs) };
  };
  const hub = perSide('hub');
  const direct = perSide('direct');
  const utilisation: Record<string, number> = {};
  for (const side of sides) utilisation[side.name] = await mainThreadUtilisation(side, 40);
  const busy: Record<string, number> = {};
  for (const side of sides) busy[side.name] = await busyMainThroughput(side, 10, 2);
  console.log(`round trip: hub ${hub.roundTripUs.toFixed(1)} µs, direct ${direct.roundTripUs.toFixed(1)} µs`);
  console.log(`one-way 16 KiB: hub ${hub.mbPerS.toFixed(0)} MB/s, direct ${direct.mbPerS.toFixed(0)} MB/s`);
  console.log(`ratio ${(hub.roundTripUs / direct.roundTripUs).toFixed(2)}  round-trip time hub / direct`);
  console.log(`ratio ${(direct.mbPerS / hub.mbPerS).toFixed(2)}  one-way 16 KiB throughput direct / hub`);
  console.log(
    `main-thread event-loop utilisation while streaming: hub ${(utilisation.hub! * 100).toFixed(0)}%, ` +
      `direct ${(utilisation.direct! * 100).toFixed(0)}%`,
  );
  console.log(
    `one-way 16 KiB with the main thread busy (2 ms spins): hub ${busy.hub!.toFixed(0)} MB/s, ` +
      `direct ${busy.direct!.toFixed(0)} MB/s; ratio ${(busy.direct! / busy.hub!).toFixed(2)} direct / hub`,
  );
  console.log(
    `hub stats: hub side ${JSON.stringify(sides[0]!.runtime.hubStats())}, direct side ${JSON.stringify(sides[1]!.runtime.hubStats())}`,
  );
  await Promise.all(sides.map((side) => side.runtime.shutdown()));
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
