/**
 * Apache Kafka (the real broker, KRaft combined broker+controller) as a test fixture, and Kafka's
 * own CLI tool classes, from the jars `scripts/kafka-fixture.sh fetch` caches in .cache/kafka/.
 *
 *   const kafka = await startKafka();                  // ~10-20 s: format a temp dir, start, wait until it serves
 *   const r = await kafka.runTool('org.apache.kafka.tools.TopicCommand', ['--list']);  // --bootstrap-server is NOT added
 *   await kafka.kill9(); await kafka.restart();        // crash it (SIGKILL), start it again on the same dir and ports
 *   await kafka.stop();                                // SIGTERM its own PID, then removes the temp dir
 *
 * `runKafkaTool` runs a tool class without a Kafka broker (e.g. against Skiff). Every tool run has a
 * timeout (default 60 s) after which its JVM is SIGKILLed. When the test process exits, brokers
 * still running are SIGKILLed and their temp dirs removed (SKIFF_TEST_KEEP_DATA=1 keeps the dirs).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { killAndRemoveOnExit } from './exit-on-signal';
import { canConnect } from './wire-client';
import { packageRoot } from '../../src/verify/real/client-process';

/** What a tool run printed and how it ended. */
export interface ToolResult {
  /** Exit code, null when the process died by a signal (e.g. our timeout's SIGKILL). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

/** Options of a tool run. */
export interface ToolOptions {
  /** Written to the tool's stdin, which is then closed (default: stdin closed at once). */
  input?: string | Buffer;
  /** SIGKILL the tool after this long; default 60 000 ms. */
  timeoutMs?: number;
  /** Extra environment variables. */
  env?: Record<string, string>;
}

/** Options of {@link startKafka}. */
export interface KafkaStartOptions {
  /** Give up (and kill the broker) when it does not serve within this long; default 90 000 ms. */
  startTimeoutMs?: number;
  /** Extra server.properties lines. */
  overrides?: Record<string, string>;
}

/** A running Kafka broker. */
export interface KafkaFixture {
  /** `127.0.0.1:<port>` of the PLAINTEXT listener. */
  bootstrap: string;
  port: number;
  /** The temp folder: server.properties, data/ (log.dirs), server.log. */
  dir: string;
  clusterId: string;
  /** The broker's JVM. */
  pid: number;
  /** SIGKILL: a crash with no shutdown at all; `dir` stays (see {@link restart}). */
  kill9(): Promise<void>;
  /**
   * Starts the broker again on the same dir, ports and data after {@link kill9} (`kafka-fixture.sh
   * rerun`); resolves once it serves again. `bootstrap` stays valid.
   */
  restart(startTimeoutMs?: number): Promise<void>;
  /** SIGTERM (SIGKILL after 30 s), then removes `dir`. Idempotent. */
  stop(): Promise<void>;
  /** Runs a Kafka tool class (args as given: add `--bootstrap-server`, bootstrap yourself). */
  runTool(cls: string, args: readonly string[], opts?: ToolOptions): Promise<ToolResult>;
  /** The broker's server.log so far (for failure messages). */
  logs(): string;
}

const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
const DEFAULT_START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;
const RUN_LINE = /^kafka-fixture: dir=(\S+) bootstrap=(\S+):(\d+)\r?$/m;

const liveBrokers = new Set<ChildProcess>();
const liveTools = new Set<ChildProcess>();
const createdDirs = new Set<string>();
let libDirPromise: Promise<string> | null = null;

/** The nearest ancestor of this file holding package.json (works from test/ and dist/test/). */
export const repoRoot: () => string = packageRoot;

function fixtureScript(): string {
  return path.join(repoRoot(), 'scripts', 'kafka-fixture.sh');
}

/**
 * Makes sure Kafka's jars are cached (`kafka-fixture.sh fetch`: a no-op when they are, a Maven
 * download of ~100 MB otherwise) and resolves with the lib folder.
 */
export function ensureKafkaJars(): Promise<string> {
  libDirPromise ??= new Promise<string>((resolve, reject) => {
    execFile(
      'bash',
      [fixtureScript(), 'lib'],
      { cwd: repoRoot(), timeout: 15 * 60_000, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        if (err !== null) reject(new Error(`kafka-fixture.sh lib failed: ${err.message}\n${stderr}`));
        else resolve(stdout.trim().split('\n').pop()!);
      },
    );
  });
  libDirPromise.catch(() => {
    libDirPromise = null;
  });
  return libDirPromise;
}

/** The Kafka version the fixture script uses (KAFKA_VERSION or its default). */
export function kafkaVersion(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [fixtureScript(), 'version'], { cwd: repoRoot(), timeout: 10_000 }, (err, stdout) =>
      err !== null ? reject(err) : resolve(stdout.trim()),
    );
  });
}

/**
 * Runs a Kafka tool class (`java -cp '<lib>/*' <cls> <args>` through `kafka-fixture.sh tool`, which
 * execs java: the child's PID is the JVM's). Resolves with its exit and output; never rejects for
 * a non-zero exit or a timeout (see `timedOut`).
 */
export async function runKafkaTool(cls: string, args: readonly string[], opts: ToolOptions = {}): Promise<ToolResult> {
  await ensureKafkaJars();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const started = Date.now();
  // Its own process group (detached), so a timeout or the exit hook kills the JVM even when the
  // script has not exec'd it (the run that records the class-data archive waits for java).
  const child = spawn('bash', [fixtureScript(), 'tool', cls, ...args], {
    cwd: repoRoot(),
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...(opts.env ?? {}) },
    detached: true,
  });
  installExitHook();
  liveTools.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (c: string) => (stdout += c));
  child.stderr.on('data', (c: string) => (stderr += c));
  child.stdin.on('error', () => undefined); // the tool may exit before reading all input
  if (opts.input !== undefined) child.stdin.end(opts.input);
  else child.stdin.end();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, timeoutMs);
  return new Promise<ToolResult>((resolve) => {
    child.once('error', (err) => {
      stderr += `\nspawn failed: ${err.message}`;
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      liveTools.delete(child);
      resolve({ code, signal, stdout, stderr, timedOut, durationMs: Date.now() - started });
    });
  });
}

/** One-line summary of a tool run for assertion messages. */
export function describeToolRun(cls: string, args: readonly string[], r: ToolResult): string {
  const how = r.timedOut
    ? `timed out after ${r.durationMs} ms`
    : `exited ${r.code ?? r.signal} after ${r.durationMs} ms`;
  return `${cls} ${args.join(' ')}: ${how}\n--- stdout ---\n${r.stdout.slice(-4000)}\n--- stderr ---\n${r.stderr.slice(-4000)}`;
}

/**
 * Formats a KRaft combined broker+controller in a temp folder, starts it on two free loopback
 * ports and resolves once it serves (it logged "Kafka Server started", i.e. it is unfenced, and
 * its port accepts). Rejects, after killing it, when it exits or the start timeout passes.
 */
export async function startKafka(opts: KafkaStartOptions = {}): Promise<KafkaFixture> {
  installExitHook();
  await ensureKafkaJars();
  const startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const extra = Object.entries(opts.overrides ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
  let run = await launchBroker(['run'], { KAFKA_FIXTURE_EXTRA_PROPS: extra }, startTimeoutMs, null);
  const runDir = run.dir;
  const clusterId = fs.readFileSync(path.join(runDir, 'cluster-id'), 'utf8').trim();
  const serverLog = (): string => readServerLog(runDir);
  const removeDir = (): void => {
    if (process.env.SKIFF_TEST_KEEP_DATA !== '1') fs.rmSync(runDir, { recursive: true, force: true });
  };
  let stopping: Promise<void> | null = null;

  return {
    bootstrap: `${run.host}:${run.port}`,
    port: run.port,
    dir: runDir,
    clusterId,
    get pid(): number {
      return run.proc.pid!;
    },
    logs: serverLog,
    runTool: (cls, args, toolOpts) => runKafkaTool(cls, args, toolOpts),
    async kill9(): Promise<void> {
      if (run.state.exit !== null) return;
      run.proc.kill('SIGKILL');
      await run.exited;
    },
    async restart(restartTimeoutMs = startTimeoutMs): Promise<void> {
      if (stopping !== null) throw new Error('Kafka fixture: restart after stop()');
      if (run.state.exit === null) throw new Error('Kafka fixture: restart while the broker runs (kill9() first)');
      run = await launchBroker(['rerun', runDir], {}, restartTimeoutMs, runDir);
    },
    stop(): Promise<void> {
      stopping ??= (async () => {
        if (run.state.exit === null) {
          run.proc.kill('SIGTERM');
          let timer: NodeJS.Timeout | undefined;
          const timedOut = new Promise<'timeout'>(
            (resolve) => (timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS)),
          );
          const result = await Promise.race([run.exited, timedOut]);
          clearTimeout(timer);
          if (result === 'timeout') {
            run.proc.kill('SIGKILL');
            await run.exited;
          }
        }
        removeDir();
        createdDirs.delete(runDir);
      })();
      return stopping;
    },
  };
}

/** A broker JVM started by {@link launchBroker}. */
interface BrokerRun {
  proc: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  state: { exit: { code: number | null; signal: NodeJS.Signals | null } | null };
  dir: string;
  host: string;
  port: number;
}

function readServerLog(dir: string): string {
  try {
    return fs.readFileSync(path.join(dir, 'server.log'), 'utf8');
  } catch {
    return '';
  }
}

/**
 * Runs `kafka-fixture.sh <args>` (`run`, or `rerun DIR` on a dir a killed run left) and resolves
 * once the broker serves: its run line names the dir and port, and server.log gains a "Kafka
 * Server started" line after what it held before (a rerun appends to the old log). Kills the
 * JVM and rejects on exit or timeout (a fresh `run` dir is removed then; a rerun's dir is kept).
 */
async function launchBroker(
  args: string[],
  env: Record<string, string>,
  startTimeoutMs: number,
  knownDir: string | null,
): Promise<BrokerRun> {
  const logBefore = knownDir === null ? 0 : readServerLog(knownDir).length;
  const proc = spawn('bash', [fixtureScript(), ...args], {
    cwd: repoRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  liveBrokers.add(proc);
  let output = '';
  proc.stdout.setEncoding('utf8');
  proc.stderr.setEncoding('utf8');
  proc.stdout.on('data', (c: string) => (output += c));
  proc.stderr.on('data', (c: string) => (output += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      liveBrokers.delete(proc);
      resolve({ code, signal });
    });
  });
  const state: BrokerRun['state'] = { exit: null };
  void exited.then((info) => (state.exit = info));
  let dir: string | null = null;
  const fail = async (reason: string): Promise<never> => {
    proc.kill('SIGKILL');
    await exited;
    const tail = dir === null ? '' : readServerLog(dir).slice(logBefore).split('\n').slice(-60).join('\n');
    if (dir !== null && knownDir === null && process.env.SKIFF_TEST_KEEP_DATA !== '1')
      fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`Kafka fixture ${reason}\n--- fixture output ---\n${output}\n--- server.log (tail) ---\n${tail}`);
  };

  const deadline = Date.now() + startTimeoutMs;
  let port = 0;
  let host = '127.0.0.1';
  // Bounded poll: the run line, then "Kafka Server started" and an accepting port.
  for (;;) {
    const exit = state.exit;
    if (exit !== null) return fail(`exited during start (code ${exit.code}, signal ${exit.signal})`);
    if (Date.now() > deadline) return fail(`did not serve within ${startTimeoutMs} ms`);
    if (dir === null) {
      const m = RUN_LINE.exec(output);
      if (m !== null) {
        dir = m[1]!;
        host = m[2]!;
        port = Number(m[3]);
        createdDirs.add(dir);
      }
    } else if (readServerLog(dir).slice(logBefore).includes('Kafka Server started') && (await canConnect(host, port))) {
      break;
    }
    await sleep(250);
  }
  return { proc, exited, state, dir: dir!, host, port };
}

/** SIGKILLs the process group led by `child` (a detached spawn), or just the child. */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** On exit: SIGKILL brokers and tools left running, remove the brokers' temp dirs. */
function installExitHook(): void {
  killAndRemoveOnExit(liveBrokers, createdDirs, () => {
    for (const tool of liveTools) killGroup(tool);
  });
}
