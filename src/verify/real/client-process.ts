/**
 * The real clients of a real run as child processes: clients/verify_client.py under a Python with the
 * PyPI confluent-kafka (librdkafka), found relative to the installed package so `skiff verify
 * --bootstrap` works outside the repository's test tree. Each process prints one JSON object per line;
 * everything it printed before a SIGKILL is still read.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The nearest ancestor of this file holding package.json: the package root (from src/ and dist/src/). */
export function packageRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = parent;
  }
  return dir;
}

/** The librdkafka client script, shipped with the package's sources. */
export function clientScript(): string {
  return path.join(packageRoot(), 'src', 'verify', 'real', 'clients', 'verify_client.py');
}

/**
 * The Python that runs the script: SKIFF_VERIFY_PYTHON, else SKIFF_PYPI_PYTHON (the test suites'
 * variable), else the package's `.cache/venv` (scripts/install-peers.sh makes it), else `python3` on
 * the PATH (which then needs `pip install confluent-kafka`).
 */
export function pythonInterpreter(): string {
  const fromEnv = process.env.SKIFF_VERIFY_PYTHON ?? process.env.SKIFF_PYPI_PYTHON;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const venv = path.join(packageRoot(), '.cache', 'venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : 'python3';
}

/** A running client process. */
export interface ClientProcess {
  readonly name: string;
  readonly proc: ChildProcess;
  /** Resolves with the exit code (null when a signal ended it) once the process has exited and its output is read. */
  readonly exited: Promise<number | null>;
  /** The last ~20 KB of its stderr. */
  stderr(): string;
  /** Sends `signal` if it still runs. */
  kill(signal: NodeJS.Signals): void;
}

/** Spawns `python script args`, calling `onLine` with each stdout line parsed as JSON. */
export function spawnClient(
  name: string,
  args: readonly string[],
  onLine: (msg: Record<string, unknown>) => void,
): ClientProcess {
  const proc = spawn(pythonInterpreter(), [clientScript(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let running = true;
  proc.stdout.setEncoding('utf8');
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (c: string) => {
    stderr = (stderr + c).slice(-20_000);
  });
  proc.stdout.on('data', (c: string) => {
    stdout += c;
    let newline: number;
    while ((newline = stdout.indexOf('\n')) >= 0) {
      const line = stdout.slice(0, newline);
      stdout = stdout.slice(newline + 1);
      if (line.trim() === '') continue;
      onLine(JSON.parse(line) as Record<string, unknown>);
    }
  });
  const exited = new Promise<number | null>((resolve) => {
    proc.once('error', (err) => {
      stderr += `\nspawn failed: ${err.message}`;
      running = false;
      resolve(-1);
    });
    proc.once('close', (code) => {
      running = false;
      resolve(code);
    });
  });
  return {
    name,
    proc,
    exited,
    stderr: () => stderr,
    kill(signal) {
      if (running) proc.kill(signal);
    },
  };
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves with the exit code. */
export async function stopClient(client: ClientProcess, graceMs: number): Promise<number | null> {
  client.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      client.kill('SIGKILL');
      resolve();
    }, graceMs);
  });
  await Promise.race([client.exited, killed]);
  clearTimeout(timer);
  return client.exited;
}
