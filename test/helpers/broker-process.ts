/**
 * Runs a real Skiff broker as a child process (`node bin/skiff.js start --port 0 ...`) for suites
 * that drive real clients (kcat, kafkajs, the Python clients) or crash the broker.
 *
 * Stop every broker you start (e.g. in `after`): a running child keeps the test file alive until
 * scripts/run-tests.js's --test-force-exit ends it. When the test process exits, every broker
 * still running is SIGKILLed and every data dir this helper created is removed (set
 * SKIFF_TEST_KEEP_DATA=1 to keep them for a post-mortem).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { killAndRemoveOnExit } from './exit-on-signal';
import { packageRoot } from '../../src/verify/real/client-process';

/** Options for {@link startBrokerProcess}. */
export interface BrokerProcessOptions {
  /** Data directory (log.dirs); default: a new temporary directory. Reuse one to test restarts. */
  dataDir?: string;
  /** Extra config, passed as `--override key=value` (log.dirs and listeners come from the flags). */
  overrides?: Record<string, string>;
  /** How long to wait for the `skiff listening on` line; default 20 s. */
  startTimeoutMs?: number;
  /**
   * More `skiff start` arguments, e.g. `['--nodes', '3']`: with several brokers `port` is the first
   * listening line's (broker 0), which clients use as their bootstrap.
   */
  extraArgs?: readonly string[];
  /**
   * Root of the Skiff build to run (its bin/skiff.js and dist/); default this repository. The
   * benchmark harness starts an older build this way (bench/compare.ts --skiff-before).
   */
  root?: string;
  /** Environment variables set for the broker on top of this process's (e.g. SKIFF_LOG_LEVEL). */
  env?: NodeJS.ProcessEnv;
}

/** A running broker process. */
export interface BrokerProcess {
  /** The client port on 127.0.0.1. */
  port: number;
  dataDir: string;
  proc: ChildProcess;
  /**
   * Sends `signal` (default SIGTERM) and resolves with the exit code (null if the process died by
   * a signal). Rejects, after a SIGKILL, if the broker has not exited within 30 s.
   */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL: a crash with no shutdown at all. Resolves once the process has exited. */
  kill9(): Promise<void>;
  /** Everything the broker wrote to stdout and stderr so far. */
  logs(): string;
}

const STOP_TIMEOUT_MS = 30_000;
const LISTENING_LINE = /^skiff listening on (\S+):(\d+)\r?\n/m; // whole line: chunks may split it

const liveProcesses = new Set<ChildProcess>();
const createdDirs = new Set<string>();

/**
 * Starts `bin/skiff.js start --port 0 --data-dir <dir>` with the overrides and resolves once it
 * prints `skiff listening on 127.0.0.1:<port>`. Rejects (with the broker's output) if it exits or
 * stays silent past the start timeout; the process is killed in that case.
 */
export async function startBrokerProcess(opts: BrokerProcessOptions = {}): Promise<BrokerProcess> {
  installExitHook();
  const root = opts.root ?? repoRoot();
  const dataDir = opts.dataDir ?? makeTempDataDir();
  const args = [path.join(root, 'bin', 'skiff.js'), 'start', '--port', '0', '--data-dir', dataDir];
  for (const [key, value] of Object.entries(opts.overrides ?? {})) args.push('--override', `${key}=${value}`);
  args.push(...(opts.extraArgs ?? []));

  const proc = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env },
  });
  liveProcesses.add(proc);
  let output = '';
  let stdout = '';
  proc.stdout?.setEncoding('utf8');
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<ChildExit>((resolve) => {
    proc.once('exit', (code, signal) => {
      liveProcesses.delete(proc);
      resolve({ code, signal });
    });
  });
  const logs = (): string => output;

  const port = await new Promise<number>((resolve, reject) => {
    let settled = false;
    const fail = (reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`skiff broker ${reason}\n--- broker output ---\n${output}`));
    };
    const timer = setTimeout(
      () => fail(`printed no listening line within ${opts.startTimeoutMs ?? 20_000} ms`),
      opts.startTimeoutMs ?? 20_000,
    );
    proc.stdout?.on('data', (chunk: string) => {
      output += chunk;
      stdout += chunk;
      const match = LISTENING_LINE.exec(stdout);
      if (match !== null && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(Number(match[2]));
      }
    });
    void exited.then(({ code, signal }) => fail(`exited during start (code ${code}, signal ${signal})`));
    proc.once('error', (err) => fail(`could not be spawned: ${err.message}`));
  });

  return {
    port,
    dataDir,
    proc,
    logs,
    stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
      return stopChild(proc, exited, signal, 'skiff broker', () => `\n--- broker output ---\n${output}`);
    },
    async kill9(): Promise<void> {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** How a child process ended: its exit code, or the signal that ended it. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Sends `signal` to `proc` and resolves with its exit code once `exited` resolves (at once when it has
 * exited already). When it still runs after 30 s, SIGKILLs it, waits for it and rejects with
 * "`what` did not exit within 30000 ms of `signal`" followed by `detail()`.
 */
export async function stopChild(
  proc: ChildProcess,
  exited: Promise<ChildExit>,
  signal: NodeJS.Signals,
  what: string,
  detail: () => string = () => '',
): Promise<number | null> {
  if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
  proc.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS);
  });
  const result = await Promise.race([exited, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') {
    proc.kill('SIGKILL');
    await exited;
    throw new Error(`${what} did not exit within ${STOP_TIMEOUT_MS} ms of ${signal}${detail()}`);
  }
  return result.code;
}

function makeTempDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-test-'));
  createdDirs.add(dir);
  return dir;
}

/** On exit: SIGKILL brokers left running, remove the data dirs created here. */
function installExitHook(): void {
  killAndRemoveOnExit(liveProcesses, createdDirs);
}

/** The nearest ancestor of this file holding package.json (works from test/ and dist/test/). */
const repoRoot: () => string = packageRoot;
