/**
 * A three-node Apache Kafka cluster (KRaft) on 127.0.0.1, from the jars `scripts/kafka-fixture.sh
 * fetch` caches in .cache/kafka/: node 0 is a combined broker+controller (the single voter of the
 * controller quorum), nodes 1 and 2 are brokers only. Three JVMs, each with a small heap (default
 * -Xmx384m), so it runs on a 2-core machine beside the test suite. Node ids 0..2 are Skiff's
 * `--nodes 3` ids, so results name the same brokers on both sides.
 *
 *   const kafka = await startKafkaCluster();       // ~15-30 s: format three dirs, start, wait until all serve
 *   await kafka.stopNode(2);                       // SIGTERM: a clean (controlled) shutdown of broker 2
 *   await kafka.kill9Node(1);                      // SIGKILL: a crash; the controller fences it after broker.session.timeout.ms
 *   await kafka.startNode(1);                      // the same dir, ports and data again
 *   await kafka.stop();                            // every JVM, then the temp dir
 *
 * Stopping node 0 takes the controller quorum with it: scenarios stop or crash brokers 1 and 2.
 * When the test process exits, JVMs still running are SIGKILLed and the temp dir removed
 * (SKIFF_TEST_KEEP_DATA=1 keeps it).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { killAndRemoveOnExit } from './exit-on-signal';
import { canConnect } from './wire-client';
import { ensureKafkaJars } from './kafka-fixture';

/** Options of {@link startKafkaCluster}. */
export interface KafkaClusterOptions {
  /** Give up (and kill every JVM) when the cluster does not serve within this long; default 150 000 ms. */
  startTimeoutMs?: number;
  /** The JVM heap flag of each node; default `-Xmx384m`. */
  heap?: string;
  /** Extra server.properties lines for every node. */
  overrides?: Record<string, string>;
}

/** One node of the cluster. */
export interface KafkaClusterNode {
  nodeId: number;
  /** The PLAINTEXT port on 127.0.0.1. */
  port: number;
  /** Whether its JVM runs. */
  readonly running: boolean;
  /** The JVM's pid while it runs, else -1. */
  readonly pid: number;
}

/** A running three-node cluster. */
export interface KafkaCluster {
  /** Every node's `127.0.0.1:<port>`, comma-separated. */
  bootstrap: string;
  clusterId: string;
  nodes: readonly KafkaClusterNode[];
  /** `127.0.0.1:<port>` of one node. */
  address(nodeId: number): string;
  /** SIGTERM and wait for the JVM to exit (a controlled shutdown: leadership moves away first). */
  stopNode(nodeId: number): Promise<void>;
  /** SIGKILL: the JVM dies with no shutdown at all. Resolves once it has exited. */
  kill9Node(nodeId: number): Promise<void>;
  /** Starts a stopped node on its dir, ports and data; resolves once it serves again. */
  startNode(nodeId: number, startTimeoutMs?: number): Promise<void>;
  /** Stops every node (SIGTERM, SIGKILL after 30 s), then removes the temp dir. Idempotent. */
  stop(): Promise<void>;
  /** One node's server.log so far. */
  logs(nodeId: number): string;
}

const NODE_COUNT = 3;
const CONTROLLER_NODE = 0;
const DEFAULT_START_TIMEOUT_MS = 150_000;
const STOP_TIMEOUT_MS = 30_000;
const STARTED_LINE = 'Kafka Server started';

const liveJvms = new Set<ChildProcess>();
const createdDirs = new Set<string>();

interface NodeState {
  nodeId: number;
  port: number;
  dir: string;
  proc: ChildProcess | null;
  exited: Promise<void>;
  output: string;
}

/**
 * Formats three KRaft nodes (one cluster id) in a new temp dir and starts them; resolves once every
 * node logged "Kafka Server started" (a broker logs it once the controller unfenced it) and its port
 * accepts. Rejects, after killing every JVM and removing the dir, on an exit or the start timeout.
 */
export async function startKafkaCluster(opts: KafkaClusterOptions = {}): Promise<KafkaCluster> {
  installExitHook();
  const libDir = await ensureKafkaJars();
  const versionDir = path.dirname(libDir);
  const startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const heap = opts.heap ?? '-Xmx384m';
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-kafka3-'));
  createdDirs.add(root);
  const removeRoot = (): void => {
    createdDirs.delete(root);
    if (process.env.SKIFF_TEST_KEEP_DATA !== '1') fs.rmSync(root, { recursive: true, force: true });
  };
  const ports = await freePorts(NODE_COUNT + 1);
  const controllerPort = ports[NODE_COUNT]!;
  const clusterId = randomClusterId();
  const nodes: NodeState[] = [];
  for (let nodeId = 0; nodeId < NODE_COUNT; nodeId++) {
    const dir = path.join(root, `node-${nodeId}`);
    fs.mkdirSync(dir);
    fs.writeFileSync(
      path.join(dir, 'server.properties'),
      serverProperties(nodeId, ports[nodeId]!, controllerPort, dir, opts.overrides ?? {}),
    );
    nodes.push({ nodeId, port: ports[nodeId]!, dir, proc: null, exited: Promise.resolve(), output: '' });
  }

  const javaArgs = (node: NodeState): string[] => [
    heap,
    '-Xms128m',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-Djava.awt.headless=true',
    `-Dkafka.logs.dir=${node.dir}`,
    `-Dlog4j2.configurationFile=${path.join(versionDir, 'log4j2-server.properties')}`,
    '-cp',
    `${libDir}/*`,
    'kafka.Kafka',
    path.join(node.dir, 'server.properties'),
  ];

  const launch = async (node: NodeState, timeoutMs: number): Promise<void> => {
    const logBefore = readLog(node.dir).length;
    const proc = spawn('java', javaArgs(node), { stdio: ['ignore', 'pipe', 'pipe'] });
    liveJvms.add(proc);
    node.proc = proc;
    node.output = '';
    proc.stdout.setEncoding('utf8').on('data', (c: string) => (node.output += c));
    proc.stderr.setEncoding('utf8').on('data', (c: string) => (node.output += c));
    const state: { exit: string | null } = { exit: null };
    node.exited = new Promise<void>((resolve) => {
      proc.once('exit', (code, signal) => {
        liveJvms.delete(proc);
        if (node.proc === proc) node.proc = null;
        state.exit = `code ${code}, signal ${signal}`;
        resolve();
      });
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (state.exit !== null)
        throw new Error(`Kafka node ${node.nodeId} exited during start (${state.exit})${tail(node, logBefore)}`);
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        await node.exited;
        throw new Error(`Kafka node ${node.nodeId} did not serve within ${timeoutMs} ms${tail(node, logBefore)}`);
      }
      if (readLog(node.dir).slice(logBefore).includes(STARTED_LINE) && (await canConnect('127.0.0.1', node.port)))
        return;
      await sleep(250);
    }
  };

  const killAll = async (signal: NodeJS.Signals): Promise<void> => {
    await Promise.all(
      nodes.map(async (n) => {
        n.proc?.kill(signal);
        await n.exited;
      }),
    );
  };

  try {
    await Promise.all(nodes.map((n) => format(libDir, versionDir, n.dir, clusterId)));
    // The controller first: brokers register with it, and a broker that cannot reach it for long retries noisily.
    await launch(nodes[CONTROLLER_NODE]!, startTimeoutMs);
    await Promise.all(nodes.filter((n) => n.nodeId !== CONTROLLER_NODE).map((n) => launch(n, startTimeoutMs)));
  } catch (error) {
    await killAll('SIGKILL');
    removeRoot();
    throw error;
  }

  const nodeOf = (nodeId: number): NodeState => {
    const n = nodes[nodeId];
    if (n === undefined) throw new RangeError(`no Kafka node ${nodeId} (0..${NODE_COUNT - 1})`);
    return n;
  };
  const stopJvm = async (node: NodeState, signal: NodeJS.Signals): Promise<void> => {
    const proc = node.proc;
    if (proc === null) return;
    proc.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS)),
    );
    const result = await Promise.race([node.exited.then(() => 'exited' as const), timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      proc.kill('SIGKILL');
      await node.exited;
    }
  };
  let stopping: Promise<void> | null = null;

  return {
    bootstrap: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    clusterId,
    nodes: nodes.map((n) => ({
      nodeId: n.nodeId,
      port: n.port,
      get running(): boolean {
        return n.proc !== null;
      },
      get pid(): number {
        return n.proc?.pid ?? -1;
      },
    })),
    address: (nodeId) => `127.0.0.1:${nodeOf(nodeId).port}`,
    stopNode: (nodeId) => stopJvm(nodeOf(nodeId), 'SIGTERM'),
    kill9Node: async (nodeId) => {
      const node = nodeOf(nodeId);
      node.proc?.kill('SIGKILL');
      await node.exited;
    },
    startNode: async (nodeId, timeoutMs = startTimeoutMs) => {
      const node = nodeOf(nodeId);
      if (stopping !== null) throw new Error('Kafka cluster: startNode after stop()');
      if (node.proc !== null) throw new Error(`Kafka node ${nodeId} is running`);
      await launch(node, timeoutMs);
    },
    stop: () => {
      // Brokers first, the controller last, so the brokers' controlled shutdowns can reach it.
      stopping ??= (async () => {
        await Promise.all(nodes.filter((n) => n.nodeId !== CONTROLLER_NODE).map((n) => stopJvm(n, 'SIGTERM')));
        await stopJvm(nodeOf(CONTROLLER_NODE), 'SIGTERM');
        removeRoot();
      })();
      return stopping;
    },
    logs: (nodeId) => readLog(nodeOf(nodeId).dir),
  };
}

/**
 * One node's server.properties: node 0 is broker+controller and the only voter, the others are
 * brokers. Small thread counts and one-partition internal topics (the fixture's settings); internal
 * topics get RF 3 as a real three-node cluster would.
 */
function serverProperties(
  nodeId: number,
  port: number,
  controllerPort: number,
  dir: string,
  overrides: Record<string, string>,
): string {
  const isController = nodeId === CONTROLLER_NODE;
  const lines: Record<string, string> = {
    'process.roles': isController ? 'broker,controller' : 'broker',
    'node.id': String(nodeId),
    'controller.quorum.voters': `${CONTROLLER_NODE}@127.0.0.1:${controllerPort}`,
    listeners: isController
      ? `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`
      : `PLAINTEXT://127.0.0.1:${port}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': path.join(dir, 'data'),
    'num.partitions': '1',
    'default.replication.factor': '1',
    'auto.create.topics.enable': 'true',
    'offsets.topic.replication.factor': '3',
    'offsets.topic.num.partitions': '1',
    'group.initial.rebalance.delay.ms': '0',
    'transaction.state.log.replication.factor': '3',
    'transaction.state.log.min.isr': '2',
    'transaction.state.log.num.partitions': '1',
    'share.coordinator.state.topic.replication.factor': '3',
    'share.coordinator.state.topic.min.isr': '2',
    'num.network.threads': '2',
    'num.io.threads': '2',
    ...overrides,
  };
  return `${Object.entries(lines)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;
}

/** `kafka.tools.StorageTool format` of one node's dir with the shared cluster id. */
function format(libDir: string, versionDir: string, dir: string, clusterId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'java',
      [
        '-XX:TieredStopAtLevel=1',
        '-XX:+UseSerialGC',
        `-Dlog4j2.configurationFile=${path.join(versionDir, 'log4j2-tools.properties')}`,
        '-cp',
        `${libDir}/*`,
        'kafka.tools.StorageTool',
        'format',
        '--cluster-id',
        clusterId,
        '--config',
        path.join(dir, 'server.properties'),
      ],
      { timeout: 120_000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) =>
        error === null
          ? resolve()
          : reject(new Error(`StorageTool format ${dir} failed: ${error.message}\n${stdout}\n${stderr}`)),
    );
  });
}

/** Kafka's Uuid.randomUuid().toString(): 16 random bytes, base64url without padding, not starting with '-'. */
function randomClusterId(): string {
  for (;;) {
    const id = crypto.randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** `count` distinct free loopback ports (each held open until all are picked). */
async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      ports.push((server.address() as net.AddressInfo).port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

function readLog(dir: string): string {
  try {
    return fs.readFileSync(path.join(dir, 'server.log'), 'utf8');
  } catch {
    return '';
  }
}

function tail(node: NodeState, logBefore: number): string {
  const log = readLog(node.dir).slice(logBefore).split('\n').slice(-60).join('\n');
  return `\n--- output ---\n${node.output.slice(-3000)}\n--- server.log (tail) ---\n${log}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** On exit: SIGKILL JVMs left running, remove the temp dirs. */
function installExitHook(): void {
  killAndRemoveOnExit(liveJvms, createdDirs);
}
