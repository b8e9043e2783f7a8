/**
 * `skiff start --nodes N --port 0 --fault-injection --admin-port 0` as a child process, for suites
 * that compare a Skiff cluster with a real Kafka cluster (test/oracle) or benchmark one (bench/):
 * every broker's port from its `skiff listening on` line, the admin API's from its
 * `skiff admin API on` line, and the admin API's crash / start of one broker.
 *
 *   const skiff = await startSkiffCluster({ nodes: 3, overrides: { 'min.insync.replicas': '2' } });
 *   await skiff.crash(1);            // POST /v1/brokers/1/crash: its workers die, its listener closes
 *   await skiff.start(1);            // POST /v1/brokers/1/start: recovers its logs, registers again
 *   await skiff.stop();              // SIGTERM, then the data dir is removed
 *
 * When the test process exits, a cluster still running is SIGKILLed and its data dir removed
 * (SKIFF_TEST_KEEP_DATA=1 keeps it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BrokerInfo, PartitionInfo } from '../../src/admin/cluster-view';
import { exitOnSignal } from './exit-on-signal';
import { repoRoot } from './kafka-fixture';

/** Options of {@link startSkiffCluster}. */
export interface SkiffClusterOptions {
  /** `--nodes`; default 3. */
  nodes?: number;
  /** `--override key=value` for every broker. */
  overrides?: Record<string, string>;
  /** How long to wait for every listening line and the admin line; default 60 s. */
  startTimeoutMs?: number;
}

/** A running `skiff start --nodes N` process. */
export interface SkiffCluster {
  /** Every broker's `127.0.0.1:<port>`, comma-separated, node id order. */
  bootstrap: string;
  /** Client ports by node id. */
  ports: readonly number[];
  /** The admin API's `http://127.0.0.1:<port>`. */
  adminUrl: string;
  dataDir: string;
  proc: ChildProcess;
  /** `127.0.0.1:<port>` of one broker. */
  address(nodeId: number): string;
  /** POST /v1/brokers/{id}/crash; resolves with the broker's info once it is stopped (rejects on a non-200). */
  crash(nodeId: number): Promise<BrokerInfo>;
  /** POST /v1/brokers/{id}/start; resolves once it listens again (rejects on a non-200). */
  start(nodeId: number): Promise<BrokerInfo>;
  /** GET /v1/brokers. */
  brokers(): Promise<BrokerInfo[]>;
  /** GET /v1/partitions. */
  partitions(): Promise<PartitionInfo[]>;
  /** SIGTERM, wait (SIGKILL after 30 s), remove the data dir. Idempotent. */
  stop(): Promise<void>;
  /** Everything the process printed so far. */
  logs(): string;
}

const STOP_TIMEOUT_MS = 30_000;
const LISTENING_LINE = /^skiff listening on (\S+):(\d+)\r?$/gm;
const ADMIN_LINE = /^skiff admin API on (http:\/\/127\.0\.0\.1:\d+)\r?$/m;

const liveProcesses = new Set<ChildProcess>();
const createdDirs = new Set<string>();
let exitHookInstalled = false;

/**
 * Starts the cluster in a new temp data dir and resolves once it printed one listening line per
 * broker and the admin line. Rejects, after a SIGKILL, when it exits or stays silent past the timeout.
 */
export async function startSkiffCluster(opts: SkiffClusterOptions = {}): Promise<SkiffCluster> {
  installExitHook();
  const nodes = opts.nodes ?? 3;
  const startTimeoutMs = opts.startTimeoutMs ?? 60_000;
  const root = repoRoot();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-cluster-'));
  createdDirs.add(dataDir);
  const args = [
    path.join(root, 'bin', 'skiff.js'),
    'start',
    '--nodes',
    String(nodes),
    '--port',
    '0',
    '--admin-port',
    '0',
    '--fault-injection',
    '--data-dir',
    dataDir,
  ];
  for (const [key, value] of Object.entries(opts.overrides ?? {})) args.push('--override', `${key}=${value}`);
  const proc = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  liveProcesses.add(proc);
  let output = '';
  let stdout = '';
  proc.stdout.setEncoding('utf8');
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (c: string) => (output += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      liveProcesses.delete(proc);
      resolve({ code, signal });
    });
  });
  const removeDir = (): void => {
    createdDirs.delete(dataDir);
    if (process.env.SKIFF_TEST_KEEP_DATA !== '1') fs.rmSync(dataDir, { recursive: true, force: true });
  };

  const { ports, adminUrl } = await new Promise<{ ports: number[]; adminUrl: string }>((resolve, reject) => {
    let settled = false;
    const fail = (reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      proc.kill('SIGKILL');
      void exited.then(removeDir);
      reject(new Error(`skiff --nodes ${nodes} ${reason}\n--- output ---\n${output.slice(-6000)}`));
    };
    const timer = setTimeout(() => fail(`did not print its lines within ${startTimeoutMs} ms`), startTimeoutMs);
    proc.stdout.on('data', (c: string) => {
      output += c;
      stdout += c;
      const found = [...stdout.matchAll(LISTENING_LINE)].map((m) => Number(m[2]));
      const admin = ADMIN_LINE.exec(stdout);
      if (found.length >= nodes && admin !== null && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve({ ports: found.slice(0, nodes), adminUrl: admin[1]! });
      }
    });
    void exited.then(({ code, signal }) => fail(`exited during start (code ${code}, signal ${signal})`));
    proc.once('error', (error) => fail(`could not be spawned: ${error.message}`));
  });

  let stopping: Promise<void> | null = null;
  const address = (nodeId: number): string => {
    const port = ports[nodeId];
    if (port === undefined) throw new RangeError(`no Skiff broker ${nodeId} (0..${nodes - 1})`);
    return `127.0.0.1:${port}`;
  };
  return {
    bootstrap: ports.map((p) => `127.0.0.1:${p}`).join(','),
    ports,
    adminUrl,
    dataDir,
    proc,
    address,
    crash: (nodeId) => adminCall<BrokerInfo>(adminUrl, 'POST', `/v1/brokers/${nodeId}/crash`),
    start: (nodeId) => adminCall<BrokerInfo>(adminUrl, 'POST', `/v1/brokers/${nodeId}/start`),
    brokers: () => adminCall<BrokerInfo[]>(adminUrl, 'GET', '/v1/brokers'),
    partitions: () => adminCall<PartitionInfo[]>(adminUrl, 'GET', '/v1/partitions'),
    logs: () => output,
    stop: () => {
      stopping ??= (async () => {
        if (proc.exitCode === null && proc.signalCode === null) {
          proc.kill('SIGTERM');
          let timer: NodeJS.Timeout | undefined;
          const timedOut = new Promise<'timeout'>(
            (resolve) => (timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS)),
          );
          const result = await Promise.race([exited, timedOut]);
          clearTimeout(timer);
          if (result === 'timeout') {
            proc.kill('SIGKILL');
            await exited;
          }
        }
        removeDir();
      })();
      return stopping;
    },
  };
}

/** One admin API call; resolves with the parsed JSON body of a 200, rejects with the status and body otherwise. */
function adminCall<T>(baseUrl: string, method: 'GET' | 'POST', route: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const req = http.request(`${baseUrl}${route}`, { method, timeout: 60_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`${method} ${route}: ${res.statusCode} ${body}`));
        else resolve(JSON.parse(body) as T);
      });
    });
    req.once('timeout', () => req.destroy(new Error(`${method} ${route}: no answer within 60 s`)));
    req.once('error', reject);
    req.end();
  });
}

/** On exit: SIGKILL clusters left running, remove their data dirs. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  exitOnSignal();
  process.on('exit', () => {
    for (const proc of liveProcesses) {
      try {
        proc.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
    if (process.env.SKIFF_TEST_KEEP_DATA === '1') return;
    for (const dir of createdDirs) fs.rmSync(dir, { recursive: true, force: true });
  });
}
