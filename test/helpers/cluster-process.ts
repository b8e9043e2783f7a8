/**
 * Runs a real Skiff cluster as one child process (`node bin/skiff.js start --nodes N --port 0 --admin-port 0
 * --data-dir <dir> --fault-injection`) for suites that drive real clients and Kafka's tools against several
 * brokers (test/cluster), compare it with a real Kafka cluster (test/oracle/cluster.long.test.ts) or
 * benchmark it (bench/compare-cluster.ts), and drives it through the admin HTTP API: GET /v1/brokers,
 * GET /v1/partitions, POST /v1/brokers/{id}/crash|start|stop.
 *
 *   const cluster = await startClusterProcess();               // 3 brokers, admin API with fault injection
 *   cluster.bootstrap                                          // "127.0.0.1:p0,127.0.0.1:p1,127.0.0.1:p2"
 *   await cluster.crash(0); await cluster.start(0);            // a hard crash of broker 0, then its restart
 *   await cluster.stopBroker(1); await cluster.start(1);       // a controlled shutdown of broker 1, then its restart
 *   await cluster.waitForPartitions((ps) => ..., 'ISR full');  // bounded polling of /v1/partitions
 *   cluster.segmentBytes(1, 'topic', 0)                        // node-1's segment files of topic-0, concatenated
 *   await cluster.stop();                                      // SIGTERM, then the temp data dir is removed
 *
 * Stop every cluster you start (e.g. in `after`). When the test process exits, a cluster still running is
 * SIGKILLed and every data dir created here is removed (SKIFF_TEST_KEEP_DATA=1 keeps them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BrokerInfo, PartitionInfo, ReplicaProgress } from '../../src/admin/cluster-view';
import { stopChild, type ChildExit } from './broker-process';
import { killAndRemoveOnExit } from './exit-on-signal';
import { repoRoot } from './kafka-fixture';

/** Options for {@link startClusterProcess}. */
export interface ClusterProcessOptions {
  /** Brokers (`--nodes`); default 3. */
  nodes?: number;
  /** Data directory (brokers use `<dir>/node-<i>`); default: a new temporary directory. */
  dataDir?: string;
  /** Extra config for every broker, passed as `--override key=value`. */
  overrides?: Record<string, string>;
  /**
   * The first broker's client port (`--port`; broker i listens on port + i) and the admin API's port,
   * for a test that restarts the whole process and wants its clients to find it again; default 0 (any).
   */
  port?: number;
  adminPort?: number;
  /** How long to wait for every listening line and the admin line; default 60 s. */
  startTimeoutMs?: number;
}

/** A broker as GET /v1/brokers shows it. */
export type AdminBroker = BrokerInfo;

/** One replica's offsets as GET /v1/partitions shows them (-1 when unknown). */
export type AdminReplica = ReplicaProgress;

/** One partition as GET /v1/partitions shows it. */
export type AdminPartition = PartitionInfo;

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
  /** `127.0.0.1:<port>` of broker `id`; throws a RangeError for an id the cluster does not have. */
  address(id: number): string;
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
   * POST /v1/brokers/{id}/stop: a controlled shutdown (the controller moves the broker's leaderships to
   * other ISR members and fences it, then its listener closes); resolves once the broker is stopped.
   */
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
  /**
   * SIGTERM, then resolves with the exit code and removes the data dir when it was created here (not an
   * `opts.dataDir`; SKIFF_TEST_KEEP_DATA=1 keeps it); SIGKILLs after 30 s and rejects. Later calls return
   * the first call's promise.
   */
  stop(): Promise<number | null>;
  /** The process's output so far (the last ~4 MiB). */
  logs(): string;
}

const LOG_TAIL_CHARS = 4 << 20;
const LISTENING_LINE = /^skiff listening on (\S+):(\d+)\r?$/gm;
const ADMIN_LINE = /^skiff admin API on (http:\/\/127\.0\.0\.1:\d+)\r?$/m;

const liveProcesses = new Set<ChildProcess>();
const createdDirs = new Set<string>();

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
  const args = [
    path.join(root, 'bin', 'skiff.js'),
    'start',
    '--nodes',
    String(nodes),
    '--port',
    String(opts.port ?? 0),
  ];
  args.push('--admin-port', String(opts.adminPort ?? 0), '--data-dir', dataDir, '--fault-injection');
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
  const exited = new Promise<ChildExit>((resolve) => {
    proc.once('exit', (code, signal) => {
      liveProcesses.delete(proc);
      resolve({ code, signal });
    });
  });

  const startTimeoutMs = opts.startTimeoutMs ?? 60_000;
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

  /** One admin API call: the parsed JSON body of a 200; rejects with the status and body otherwise. */
  const ok = async <T>(method: 'GET' | 'POST', route: string): Promise<T> => {
    const res = await fetch(`${adminUrl}${route}`, { method, signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} ${route}: HTTP ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };

  // The listening lines are printed in node-id order; the admin API is the authority, so check it.
  const brokers = await ok<AdminBroker[]>('GET', '/v1/brokers');
  const ports = brokers.map((b) => b.port);
  if (brokers.length !== nodes || !brokers.every((b, i) => b.id === i) || new Set(ports).size !== nodes)
    throw new Error(`GET /v1/brokers does not list nodes 0..${nodes - 1}: ${JSON.stringify(brokers)}`);
  if ([...ports].sort().join() !== [...listening].sort().join())
    throw new Error(`listening lines ${listening} differ from /v1/brokers ports ${ports}`);

  let stopping: Promise<number | null> | undefined;
  const partitions = (): Promise<AdminPartition[]> => ok<AdminPartition[]>('GET', '/v1/partitions');
  const cluster: ClusterProcess = {
    ports,
    bootstrap: ports.map((p) => `127.0.0.1:${p}`).join(','),
    adminUrl,
    dataDir,
    proc,
    address(id) {
      const port = ports[id];
      if (port === undefined) throw new RangeError(`no Skiff broker ${id} (0..${nodes - 1})`);
      return `127.0.0.1:${port}`;
    },
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
    stop() {
      stopping ??= (async () => {
        try {
          return await stopChild(proc, exited, 'SIGTERM', 'skiff cluster');
        } finally {
          removeCreatedDir(dataDir);
        }
      })();
      return stopping;
    },
    logs: () => output,
  };
  return cluster;
}

/** Removes `dir` now when this module created it (unless SKIFF_TEST_KEEP_DATA=1), rather than at exit. */
function removeCreatedDir(dir: string): void {
  if (!createdDirs.delete(dir) || process.env.SKIFF_TEST_KEEP_DATA === '1') return;
  fs.rmSync(dir, { recursive: true, force: true });
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
  killAndRemoveOnExit(liveProcesses, createdDirs);
}
