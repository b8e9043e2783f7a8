/**
 * Runs a real Skiff cluster as one child process (`node bin/skiff.js start --nodes N --port 0 --data-dir
 * <dir> --fault-injection`) for suites that drive real clients and Kafka's tools against several brokers,
 * and drives it through the admin HTTP API: GET /v1/brokers, GET /v1/partitions, POST
 * /v1/brokers/{id}/crash|start (and /stop when the cluster has it).
 *
 *   const cluster = await startClusterProcess();               // 3 brokers, admin API with fault injection
 *   cluster.bootstrap                                          // "127.0.0.1:p0,127.0.0.1:p1,127.0.0.1:p2"
 *   await cluster.crash(0); await cluster.start(0);            // a hard crash of broker 0, then its restart
 *   await cluster.waitForPartitions((ps) => ..., 'ISR full');  // bounded polling of /v1/partitions
 *   cluster.segmentBytes(1, 'topic', 0)                        // node-1's segment files of topic-0, concatenated
 *
 * Stop every cluster you start (e.g. in `after`). When the test process exits, a cluster still running is
 * SIGKILLed and every data dir created here is removed (SKIFF_TEST_KEEP_DATA=1 keeps them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exitOnSignal } from './exit-on-signal';

/** Options for {@link startClusterProcess}. */
export interface ClusterProcessOptions {
  /** Brokers (`--nodes`); default 3. */
  nodes?: number;
  /** Data directory (brokers use `<dir>/node-<i>`); default: a new temporary directory. */
  dataDir?: string;
  /** Extra config for every broker, passed as `--override key=value`. */
  overrides?: Record<string, string>;
  /** How long to wait for every listening line and the admin line; default 30 s. */
  startTimeoutMs?: number;
}

/** A broker as GET /v1/brokers shows it. */
export interface AdminBroker {
  id: number;
  host: string;
  port: number;
  state: 'running' | 'fenced' | 'stopped';
  brokerEpoch: number;
}

/** One replica's offsets as GET /v1/partitions shows them (-1 when unknown). */
export interface AdminReplica {
  brokerId: number;
  logEndOffset: number;
  fsyncedOffset: number;
  highWatermark: number;
}

/** One partition as GET /v1/partitions shows it. */
export interface AdminPartition {
  topic: string;
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
  perReplica: AdminReplica[];
}

/** A running cluster process. */
export interface ClusterProcess {
  /** Client ports on 127.0.0.1, by node id. */
  ports: number[];
  /** Every broker, comma-separated, for `bootstrap.servers`. */
  bootstrap: string;
  /** `http://127.0.0.1:<port>` of the admin API. */
  adminUrl: string;
  dataDir: string;
  proc: ChildProcess;
  /** `<dataDir>/node-<id>`: broker `id`'s log dir. */
  nodeDir(id: number): string;
  brokers(): Promise<AdminBroker[]>;
  partitions(): Promise<AdminPartition[]>;
  /** One partition; rejects when /v1/partitions does not list it. */
  partition(topic: string, partition: number): Promise<AdminPartition>;
  /** POST /v1/brokers/{id}/crash: resolves once the broker is stopped. */
  crash(id: number): Promise<void>;
  /** POST /v1/brokers/{id}/start: resolves once the broker listens again. */
  start(id: number): Promise<void>;
  /**
   * Whether POST /v1/brokers/{id}/stop (a clean, controlled shutdown) exists: probed once against a broker
   * id the cluster does not have (404 "unknown broker" means the route exists, 404 without it or 405 not).
   */
  hasCleanStop(): Promise<boolean>;
  /** POST /v1/brokers/{id}/stop; rejects when the route does not exist (see {@link hasCleanStop}). */
  stopBroker(id: number): Promise<void>;
  /**
   * Polls /v1/partitions every 100 ms until `check` returns true, for at most `timeoutMs` (default 30 s);
   * rejects with `what` and the last partition table otherwise.
   */
  waitForPartitions(check: (ps: AdminPartition[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /**
   * Waits until every partition of `topic` has its full assignment in the ISR and every replica's LEO and HW
   * equal the leader's LEO (the cluster is quiet and caught up).
   */
  waitForInSync(topic: string, timeoutMs?: number): Promise<AdminPartition[]>;
  /** Broker `id`'s segment files (`*.log`) of `topic-partition`, in base-offset order, concatenated. */
  segmentBytes(id: number, topic: string, partition: number): Buffer;
  /** SIGTERM, then resolves with the exit code; SIGKILLs after 30 s and rejects. */
  stop(): Promise<number | null>;
  /** The process's output so far (the last ~4 MiB). */
  logs(): string;
}

const STOP_TIMEOUT_MS = 30_000;
const LOG_TAIL_CHARS = 4 << 20;
const LISTENING_LINE = /^skiff listening on (\S+):(\d+)\r?$/gm;
const ADMIN_LINE = /^skiff admin API on (http:\/\/127\.0\.0\.1:\d+)\r?$/m;

const liveProcesses = new Set<ChildProcess>();
const createdDirs = new Set<string>();
let exitHookInstalled = false;

/**
 * Starts `bin/skiff.js start --nodes N --port 0 --data-dir <dir> --fault-injection` and resolves once it has
 * printed N `skiff listening on` lines and the `skiff admin API on` line. Rejects with the output when it
 * exits or stays silent past the start timeout (it is killed then).
 */
export async function startClusterProcess(opts: ClusterProcessOptions = {}): Promise<ClusterProcess> {
  installExitHook();
  const nodes = opts.nodes ?? 3;
  const root = repoRoot();
  const dataDir = opts.dataDir ?? makeTempDataDir();
  const args = [path.join(root, 'bin', 'skiff.js'), 'start', '--nodes', String(nodes), '--port', '0'];
  args.push('--data-dir', dataDir, '--fault-injection');
  for (const [key, value] of Object.entries(opts.overrides ?? {})) args.push('--override', `${key}=${value}`);

  const proc = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  liveProcesses.add(proc);
  let output = '';
  const append = (chunk: string): void => {
    output += chunk;
    if (output.length > LOG_TAIL_CHARS * 2) output = output.slice(-LOG_TAIL_CHARS);
  };
  proc.stdout?.setEncoding('utf8');
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      liveProcesses.delete(proc);
      resolve({ code, signal });
    });
  });

  const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
  const { listening, adminUrl } = await new Promise<{ listening: number[]; adminUrl: string }>((resolve, reject) => {
    let settled = false;
    let stdout = '';
    const fail = (reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`skiff cluster ${reason}\n--- output ---\n${output.slice(-20_000)}`));
    };
    const timer = setTimeout(() => fail(`was not up within ${startTimeoutMs} ms`), startTimeoutMs);
    proc.stdout?.on('data', (chunk: string) => {
      append(chunk);
      if (settled) return;
      stdout += chunk;
      const ports = [...stdout.matchAll(LISTENING_LINE)].map((m) => Number(m[2]));
      const admin = ADMIN_LINE.exec(stdout);
      if (ports.length >= nodes && admin !== null) {
        settled = true;
        clearTimeout(timer);
        resolve({ listening: ports.slice(0, nodes), adminUrl: admin[1]! });
      }
    });
    void exited.then(({ code, signal }) => fail(`exited during start (code ${code}, signal ${signal})`));
    proc.once('error', (err) => fail(`could not be spawned: ${err.message}`));
  });

  const http = async <T>(method: 'GET' | 'POST', route: string): Promise<{ status: number; json: T }> => {
    const res = await fetch(`${adminUrl}${route}`, { method, signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = { error: text };
    }
    return { status: res.status, json: json as T };
  };
  const ok = async <T>(method: 'GET' | 'POST', route: string): Promise<T> => {
    const r = await http<T>(method, route);
    if (r.status !== 200) throw new Error(`${method} ${route}: HTTP ${r.status} ${JSON.stringify(r.json)}`);
    return r.json;
  };

  // The listening lines are printed in node-id order; the admin API is the authority, so check it.
  const brokers = await ok<AdminBroker[]>('GET', '/v1/brokers');
  const ports = brokers.map((b) => b.port);
  if (brokers.length !== nodes || !brokers.every((b, i) => b.id === i) || new Set(ports).size !== nodes)
    throw new Error(`GET /v1/brokers does not list nodes 0..${nodes - 1}: ${JSON.stringify(brokers)}`);
  if ([...ports].sort().join() !== [...listening].sort().join())
    throw new Error(`listening lines ${listening} differ from /v1/brokers ports ${ports}`);

  let cleanStop: Promise<boolean> | undefined;
  const partitions = (): Promise<AdminPartition[]> => ok<AdminPartition[]>('GET', '/v1/partitions');
  const cluster: ClusterProcess = {
    ports,
    bootstrap: ports.map((p) => `127.0.0.1:${p}`).join(','),
    adminUrl,
    dataDir,
    proc,
    nodeDir: (id) => path.join(dataDir, `node-${id}`),
    brokers: () => ok<AdminBroker[]>('GET', '/v1/brokers'),
    partitions,
    async partition(topic, partition) {
      const found = (await partitions()).find((p) => p.topic === topic && p.partition === partition);
      if (found === undefined) throw new Error(`/v1/partitions does not list ${topic}-${partition}`);
      return found;
    },
    async crash(id) {
      await ok('POST', `/v1/brokers/${id}/crash`);
    },
    async start(id) {
      await ok('POST', `/v1/brokers/${id}/start`);
    },
    hasCleanStop() {
      cleanStop ??= http<{ error?: string }>('POST', `/v1/brokers/${nodes + 1000}/stop`).then(
        (r) => r.status === 404 && /unknown broker/.test(r.json.error ?? ''),
      );
      return cleanStop;
    },
    async stopBroker(id) {
      await ok('POST', `/v1/brokers/${id}/stop`);
    },
    async waitForPartitions(check, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last: AdminPartition[] = [];
      while (Date.now() < deadline) {
        last = await partitions();
        if (check(last)) return;
        await sleep(100);
      }
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last /v1/partitions:\n${table(last)}`);
    },
    async waitForInSync(topic, timeoutMs = 60_000) {
      let result: AdminPartition[] = [];
      await cluster.waitForPartitions(
        (ps) => {
          result = ps.filter((p) => p.topic === topic);
          return result.length > 0 && result.every(inSync);
        },
        `every partition of ${topic} in sync (full ISR, every replica's LEO and HW at the leader's LEO)`,
        timeoutMs,
      );
      return result;
    },
    segmentBytes(id, topic, partition) {
      const dir = path.join(dataDir, `node-${id}`, `${topic}-${partition}`);
      const logs = fs
        .readdirSync(dir)
        .filter((f) => /^\d{20}\.log$/.test(f))
        .sort();
      return Buffer.concat(logs.map((f) => fs.readFileSync(path.join(dir, f))));
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS);
      });
      const result = await Promise.race([exited, timedOut]);
      clearTimeout(timer);
      if (result === 'timeout') {
        proc.kill('SIGKILL');
        await exited;
        throw new Error(`skiff cluster did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM`);
      }
      return result.code;
    },
    logs: () => output,
  };
  return cluster;
}

/** Full ISR, and every replica's LEO and HW equal to the leader's LEO. */
export function inSync(p: AdminPartition): boolean {
  const leader = p.perReplica.find((r) => r.brokerId === p.leader);
  if (p.leader < 0 || leader === undefined || p.isr.length !== p.replicas.length) return false;
  return p.perReplica.every((r) => r.logEndOffset === leader.logEndOffset && r.highWatermark === leader.logEndOffset);
}

/** A partition table for failure messages: one line per partition. */
export function table(ps: readonly AdminPartition[]): string {
  return ps
    .map(
      (p) =>
        `${p.topic}-${p.partition} leader=${p.leader} epoch=${p.leaderEpoch} replicas=${p.replicas} isr=${p.isr} ` +
        `offline=${p.offlineReplicas} ` +
        p.perReplica
          .map((r) => `[${r.brokerId} leo=${r.logEndOffset} fsync=${r.fsyncedOffset} hw=${r.highWatermark}]`)
          .join(' '),
    )
    .join('\n');
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function makeTempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-cluster-'));
  createdDirs.add(dir);
  return dir;
}

/** On exit: SIGKILL clusters left running, remove the data dirs created here. */
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

/** The nearest ancestor of this file holding package.json (works from test/ and dist/test/). */
function repoRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = parent;
  }
  return dir;
}
