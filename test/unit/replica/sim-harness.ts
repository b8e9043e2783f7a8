/**
 * A harness for the replica actor under the deterministic simulation runtime: one log-dir actor and
 * one replica on a seeded SimRuntime with a MemoryFileSystem, plus the power-loss scenario the unit
 * test runs for a few seeds and the long campaign for hundreds.
 */
import assert from 'node:assert/strict';
import { SimRuntime } from '../../../src/runtime/sim-runtime';
import { MemoryFileSystem } from '../../../src/storage/memory-file-system';
import { buildRecordBatch, decodeRecordBatches } from '../../../src/protocol/record-batch/builder';
import { ErrorCode } from '../../../src/protocol/error-codes';
import type { ReplicaArgs, ProduceReply, FetchReply } from '../../../src/replica/replica-actor';
import type { LogDirArgs } from '../../../src/replica/log-dir-actor';
import type { Endpoint } from '../../../src/runtime/runtime';
import { effectiveLogConfig } from '../../../src/config/topic-config';
import { defaultBrokerConfig } from '../../../src/config/broker-config';

export const LOG_DIR = '/data';
export const REPLICA = 'replica/0/t/0';
export const LOG_DIR_ACTOR = 'log-dir/0/0';

export function replicaArgs(overrides: Partial<ReplicaArgs['config']> = {}): ReplicaArgs {
  return {
    topic: 't',
    topicId: 'AAAAAAAAAAAAAAAAAAAAAg',
    partition: 0,
    logDir: LOG_DIR,
    brokerId: 0,
    leaderEpoch: 0,
    config: {
      ...effectiveLogConfig({}, defaultBrokerConfig()),
      segmentBytes: 4096,
      indexIntervalBytes: 256,
      ...overrides,
    },
    logDirActor: LOG_DIR_ACTOR,
    checkpointIntervalMs: 5000,
    retentionCheckIntervalMs: 300_000,
    isr: [0],
  };
}

export async function boot(seed: number, fs: MemoryFileSystem, config: Partial<ReplicaArgs['config']> = {}) {
  const sim = new SimRuntime({ seed, fs, trace: true });
  const logDirArgs: LogDirArgs = {
    logDir: LOG_DIR,
    clusterId: 'AAAAAAAAAAAAAAAAAAAAAw',
    nodeId: 0,
    directoryId: 'AAAAAAAAAAAAAAAAAAAABA',
  };
  await sim.spawn(LOG_DIR_ACTOR, 'log-dir', logDirArgs, { pool: 'broker', brokerId: 0 });
  await sim.spawn(REPLICA, 'replica', replicaArgs(config), { pool: 'broker', brokerId: 0 });
  const net = sim.endpoint('net/0');
  return { sim, net };
}

/** Sends a request and drives the simulation until it is answered. */
export async function ask<T>(sim: SimRuntime, net: Endpoint, type: string, body: unknown): Promise<T> {
  const reply = net.request<T>(REPLICA, type, body, 60_000);
  await sim.settle();
  return reply;
}

export function batch(values: string[]): Buffer {
  return buildRecordBatch(values.map((v) => ({ key: null, value: Buffer.from(v), headers: [] })));
}

export async function readAll(sim: SimRuntime, net: Endpoint): Promise<string[]> {
  const fetched = await ask<FetchReply>(sim, net, 'fetch', { fetchOffset: 0, maxBytes: 1 << 20, minOneBatch: true });
  assert.equal(fetched.errorCode, ErrorCode.NONE);
  const batches = decodeRecordBatches(Buffer.from(fetched.records ?? Buffer.alloc(0)));
  let expected = 0;
  for (const b of batches) {
    assert.equal(b.baseOffset, expected, 'offsets are dense');
    expected += b.records.length;
  }
  return batches.flatMap((b) => b.records.map((r) => r.value!.toString()));
}

/**
 * Power loss under a mixed acks workload: `records` single-record batches, every third with acks=all,
 * the simulation advanced only a few steps between sends so acks=1 batches are often unsynced, then
 * the disk loses its unsynced bytes (or tears the last write) and both actors crash and restart.
 * Asserts the recovered log is a prefix of what was sent and holds every acknowledged acks=all batch
 * (DESIGN.md invariants 4 and 6). Returns how many records survived.
 */
export async function powerLossRun(seed: number, records = 30): Promise<number> {
  const fs = new MemoryFileSystem();
  const { sim, net } = await boot(seed, fs);
  const acked: string[] = [];
  const sent: string[] = [];
  for (let i = 0; i < records; i++) {
    const value = `r${i}`;
    sent.push(value);
    const acks = i % 3 === 0 ? -1 : 1;
    const pending = net.request<ProduceReply>(
      REPLICA,
      'produce',
      { records: batch([value]), acks, timeoutMs: 1000 },
      60_000,
    );
    for (let s = 0; s < 1 + ((i + seed) % 4); s++) sim.step();
    if (acks === -1) {
      await sim.settle();
      assert.equal((await pending).errorCode, ErrorCode.NONE);
      acked.push(value);
    } else pending.catch(() => undefined);
  }
  fs.crash({ kind: seed % 2 === 0 ? 'lose-unsynced' : 'torn-last-write' });
  sim.crash([REPLICA, LOG_DIR_ACTOR]);
  await sim.restart([LOG_DIR_ACTOR, REPLICA]);
  await sim.settle();
  const recovered = await readAll(sim, net);
  assert.deepEqual(recovered, sent.slice(0, recovered.length), `seed ${seed}: a prefix of what was appended`);
  for (const value of acked) assert.ok(recovered.includes(value), `seed ${seed}: acknowledged ${value} survives`);
  await sim.shutdown();
  return recovered.length;
}
