/**
 * The faults a real run causes from outside, behind one interface whatever the driver: Skiff's admin
 * API (crash, stop and start of a broker; and, when the caller owns the `skiff start` process, its
 * SIGKILL and restart), the user's kill and start commands, or a test's callbacks (the Kafka fixture's
 * stop, kill -9 and start of a JVM).
 */
import { spawn } from 'node:child_process';
import type { BrokerInfo, PartitionInfo } from '../../admin/cluster-view';
import { KafkaClient } from '../../client';
import type { Random } from '../../io/random';
import type { FaultKind } from '../report';

/** How a real run causes faults: Skiff's admin API, the user's commands, a test's callbacks, or none. */
export type FaultDriver =
  | { kind: 'none' }
  /**
   * Skiff started with --fault-injection: crash, stop and start brokers through its admin API.
   * `restartProcess`, given by a caller that owns the `skiff start` process (a test), SIGKILLs the
   * whole process and starts it again on the same ports and data dir (counted as process-kill).
   */
  | { kind: 'skiff-admin'; adminUrl: string; restartProcess?: () => Promise<void> }
  /**
   * Shell commands; `{broker}` in them is replaced by the broker id to kill or start. `bounce` says
   * what the kill command does: 'hard' (default: a kill -9, counted as process-kill) or 'clean' (a
   * SIGTERM-like controlled shutdown, counted as broker-stop).
   */
  | { kind: 'commands'; killCommand: string; startCommand: string; brokers: number[]; bounce?: 'clean' | 'hard' }
  /** A caller's functions (a test fixture's): a clean stop (broker-stop), a hard kill (process-kill), a start. */
  | {
      kind: 'callbacks';
      brokers: number[];
      stop?: (broker: number) => Promise<void>;
      kill?: (broker: number) => Promise<void>;
      start: (broker: number) => Promise<void>;
    };

/** One driver's faults. */
export interface BrokerFaults {
  /** The fault kinds this driver can cause. */
  readonly kinds: readonly FaultKind[];
  /** Whether `kind` hits one broker (else the whole process: no target to pick). */
  targetsBroker(kind: FaultKind): boolean;
  /** The broker to hit: the leader of a random partition of `topics` when the driver can see leaders, else a random broker. */
  pickTarget(random: Random, topics: readonly string[]): Promise<number>;
  /** Causes `kind` on `broker` (for process-kill under skiff-admin: the whole process, killed and started again). */
  inject(kind: FaultKind, broker: number): Promise<void>;
  /** Undoes `kind` on `broker`: starts it again (a no-op when `inject` already did). */
  restore(kind: FaultKind, broker: number): Promise<void>;
}

/**
 * The faults of `driver`; a 'none' driver causes none. After the user's start command the broker is
 * waited for (bounded) until `bootstrap`'s Metadata lists it again, since a start command may return
 * before the broker serves (`systemctl start`, `docker start`).
 */
export function brokerFaults(driver: FaultDriver, bootstrap: string): BrokerFaults {
  switch (driver.kind) {
    case 'none':
      return {
        kinds: [],
        targetsBroker: () => false,
        pickTarget: () => Promise.reject(new Error('no fault driver')),
        inject: () => Promise.resolve(),
        restore: () => Promise.resolve(),
      };
    case 'skiff-admin':
      return skiffAdminFaults(driver);
    case 'commands':
      return callbackFaults(driver.brokers, {
        ...(driver.bounce === 'clean'
          ? { stop: (id) => shell(driver.killCommand, id) }
          : { kill: (id) => shell(driver.killCommand, id) }),
        start: async (id) => {
          await shell(driver.startCommand, id);
          await waitForBroker(bootstrap, id, BROKER_START_TIMEOUT_MS);
        },
      });
    case 'callbacks':
      return callbackFaults(driver.brokers, driver);
  }
}

/** How long a started broker may take to appear in Metadata again. */
const BROKER_START_TIMEOUT_MS = 180_000;

/**
 * A fault could not be caused or undone through its driver mid-run (the admin API unreachable or
 * answering an error): the run stops without a verdict on the guarantees (the CLI exits 2).
 */
export class FaultDriverError extends Error {
  override readonly name = 'FaultDriverError';
}

/** Polls `bootstrap`'s Metadata every 500 ms until it lists broker `id`; rejects after `timeoutMs`. */
export async function waitForBroker(bootstrap: string, id: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const listed = await KafkaClient.connect({ brokers: bootstrap }).then(
      (client) => {
        const found = client.knownBrokers.has(id);
        client.close();
        return found;
      },
      () => false,
    );
    if (listed) return;
    if (Date.now() > deadline)
      throw new Error(`broker ${id} is not in ${bootstrap}'s Metadata ${timeoutMs} ms after its start`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function pick<T>(random: Random, xs: readonly T[]): T {
  const x = xs[random.int(xs.length)];
  if (x === undefined) throw new Error('pick from an empty list');
  return x;
}

function skiffAdminFaults(driver: Extract<FaultDriver, { kind: 'skiff-admin' }>): BrokerFaults {
  const call = async <T>(method: 'GET' | 'POST', route: string): Promise<T> => {
    const url = `${driver.adminUrl}${route}`;
    let status: number;
    let text: string;
    try {
      const res = await fetch(url, { method, signal: AbortSignal.timeout(60_000) });
      status = res.status;
      text = await res.text();
    } catch (err) {
      // fetch's own "fetch failed" says nothing: the cause (ECONNREFUSED, a timeout) does.
      const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : '';
      throw new FaultDriverError(`${method} ${url}: ${(err as Error).message}${cause !== '' ? ` (${cause})` : ''}`);
    }
    if (status !== 200) throw new FaultDriverError(`${method} ${url}: HTTP ${status} ${text}`);
    return JSON.parse(text) as T;
  };
  const kinds: FaultKind[] = ['broker-crash', 'broker-stop'];
  if (driver.restartProcess !== undefined) kinds.push('process-kill');
  return {
    kinds,
    targetsBroker: (kind) => kind !== 'process-kill',
    async pickTarget(random, topics) {
      const partitions = (await call<PartitionInfo[]>('GET', '/v1/partitions')).filter(
        (p) => topics.includes(p.topic) && p.leader >= 0,
      );
      if (partitions.length > 0) return pick(random, partitions).leader;
      const brokers = (await call<BrokerInfo[]>('GET', '/v1/brokers')).filter((b) => b.state === 'running');
      return pick(random, brokers).id;
    },
    async inject(kind, broker) {
      if (kind === 'process-kill') {
        if (driver.restartProcess === undefined) throw new Error('process-kill needs restartProcess');
        await driver.restartProcess();
      } else if (kind === 'broker-crash') await call('POST', `/v1/brokers/${broker}/crash`);
      else if (kind === 'broker-stop') await call('POST', `/v1/brokers/${broker}/stop`);
      else throw new Error(`the skiff-admin driver cannot cause ${kind}`);
    },
    async restore(kind, broker) {
      if (kind !== 'process-kill') await call('POST', `/v1/brokers/${broker}/start`);
    },
  };
}

interface Callbacks {
  stop?: (broker: number) => Promise<void>;
  kill?: (broker: number) => Promise<void>;
  start: (broker: number) => Promise<void>;
}

function callbackFaults(brokers: readonly number[], cb: Callbacks): BrokerFaults {
  if (brokers.length === 0) throw new Error('a fault driver needs at least one broker id to bounce');
  const kinds: FaultKind[] = [];
  if (cb.stop !== undefined) kinds.push('broker-stop');
  if (cb.kill !== undefined) kinds.push('process-kill');
  return {
    kinds,
    targetsBroker: () => true,
    pickTarget: (random) => Promise.resolve(pick(random, brokers)),
    async inject(kind, broker) {
      const f = kind === 'broker-stop' ? cb.stop : kind === 'process-kill' ? cb.kill : undefined;
      if (f === undefined) throw new Error(`this driver cannot cause ${kind}`);
      await f(broker);
    },
    restore: (_kind, broker) => cb.start(broker),
  };
}

/** Runs `command` under `sh -c` with `{broker}` replaced; rejects on a non-zero exit or after 180 s. */
export function shell(command: string, broker: number): Promise<void> {
  const line = command.replaceAll('{broker}', String(broker));
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', line], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c: string) => {
      stderr = (stderr + c).slice(-4000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`\`${line}\` exited with ${code ?? signal}: ${stderr.trim()}`));
    });
  });
}
