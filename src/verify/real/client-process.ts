/**
 * The real clients of a real run as child processes: clients/verify_client.py under a Python with the
 * PyPI confluent-kafka (librdkafka) and clients/VerifyClient.java under a JDK with the kafka-clients
 * jars, both found relative to the installed package so `skiff verify --bootstrap` works outside the
 * repository's test tree. Each process prints one JSON object per line;
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

/** Which real client a process runs. */
export type ClientKind = 'librdkafka' | 'java';

/**
 * The folder holding kafka-clients-4.x.jar and its dependencies: SKIFF_JAVA_LIB, else the package's
 * `.cache/kafka/<version>/lib` (scripts/kafka-fixture.sh fetches it). Throws naming both when neither has it.
 */
export function javaLib(): string {
  const hasClients = (dir: string): boolean =>
    fs.existsSync(dir) && fs.readdirSync(dir).some((f) => /^kafka-clients-4\.[\d.]+\.jar$/.test(f));
  const fromEnv = process.env.SKIFF_JAVA_LIB;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!hasClients(fromEnv)) throw new Error(`SKIFF_JAVA_LIB=${fromEnv} holds no kafka-clients-4.x jar`);
    return fromEnv;
  }
  const cache = path.join(packageRoot(), '.cache', 'kafka');
  const versions = fs.existsSync(cache) ? fs.readdirSync(cache).sort().reverse() : [];
  for (const v of versions) if (hasClients(path.join(cache, v, 'lib'))) return path.join(cache, v, 'lib');
  throw new Error(
    `the Java client needs the kafka-clients 4.x jars: set SKIFF_JAVA_LIB or run scripts/kafka-fixture.sh fetch (${cache})`,
  );
}

/**
 * The command line of a client: `python verify_client.py` or `java ... VerifyClient.java` (the JDK's
 * single-file source launch, so nothing is compiled ahead), with the jars the Java client needs.
 */
export function clientCommand(kind: ClientKind): { command: string; args: string[] } {
  if (kind === 'librdkafka') return { command: pythonInterpreter(), args: [clientScript()] };
  const lib = javaLib();
  const jars = fs
    .readdirSync(lib)
    .filter((f) => /^(kafka-clients-|zstd-jni-|lz4-java-|snappy-java-|slf4j-|log4j-(api|core|slf4j)).*\.jar$/.test(f))
    .sort()
    .map((f) => path.join(lib, f));
  const clients = path.dirname(clientScript());
  return {
    command: process.env.SKIFF_VERIFY_JAVA ?? 'java',
    args: [
      '-XX:+UseSerialGC',
      '-Xmx192m',
      '-XX:TieredStopAtLevel=1',
      `-Dlog4j2.configurationFile=${path.join(clients, 'log4j2.properties')}`,
      '-cp',
      jars.join(path.delimiter),
      path.join(clients, 'VerifyClient.java'),
    ],
  };
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

/**
 * Spawns the `kind` client with `args`, calling `onLine` with each stdout line that is a JSON object
 * (any other line, e.g. a logger's, goes to the stderr tail).
 */
export function spawnClient(
  name: string,
  kind: ClientKind,
  args: readonly string[],
  onLine: (msg: Record<string, unknown>) => void,
): ClientProcess {
  const { command, args: prefix } = clientCommand(kind);
  const proc = spawn(command, [...prefix, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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
      if (!line.startsWith('{')) {
        if (line.trim() !== '') stderr = (stderr + line + '\n').slice(-20_000);
        continue;
      }
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

/**
 * Every client process one real run spawned, so that every exit path of the run (a failure, a
 * signal) can end them: a client left running would be re-parented to PID 1 and go on producing.
 */
export class ClientSet {
  private readonly live = new Set<ClientProcess>();
  private closed = false;

  /** {@link spawnClient}, tracked until it exits; throws once {@link stopAll} began. */
  spawn(
    name: string,
    kind: ClientKind,
    args: readonly string[],
    onLine: (msg: Record<string, unknown>) => void,
  ): ClientProcess {
    if (this.closed) throw new Error(`${name}: the run is ending, no client is started`);
    const client = spawnClient(name, kind, args, onLine);
    this.live.add(client);
    void client.exited.then(() => this.live.delete(client));
    return client;
  }

  /** How many tracked clients have not exited yet. */
  get size(): number {
    return this.live.size;
  }

  /** SIGKILLs every client now (a second signal while {@link stopAll} waits). */
  killAll(): void {
    for (const c of this.live) c.kill('SIGKILL');
  }

  /** Stops spawning, then SIGTERM to every client and SIGKILL to those still running after `graceMs`. */
  async stopAll(graceMs: number): Promise<void> {
    this.closed = true;
    await Promise.all([...this.live].map((c) => stopClient(c, graceMs)));
  }
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
