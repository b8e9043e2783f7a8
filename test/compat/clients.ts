/**
 * Drives the real clients for the compat suites: kcat as a child process, the Python clients
 * through the scripts in test/compat/python/ (by default under /usr/bin/python3, where the Debian
 * packages import; pass `python: PYPI_PYTHON` for the PyPI releases in the project's virtual
 * environment), each with a hard timeout. Every helper fails with the client's own output so a
 * broker bug is described by what the client saw.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readRecordFile, writeRecordFile, type RecordHeader, type TestRecord } from './record-file';
import { packageRoot } from '../../src/verify/real/client-process';

/** The nearest ancestor of this file holding package.json (works from test/ and dist/test/). */
export const repoRoot: () => string = packageRoot;

/** Debian's interpreter, where python3-kafka (2.0.2) and python3-confluent-kafka (1.7.0) import. */
export const PYTHON = '/usr/bin/python3';
/**
 * The virtual environment's interpreter, where the PyPI releases import: confluent-kafka with the
 * librdkafka its wheel bundles, kafka-python 3.x and its codecs (python-snappy/cramjam, lz4,
 * zstandard). scripts/install-peers.sh (install_python_venv) makes it; SKIFF_PYPI_PYTHON overrides.
 */
export const PYPI_PYTHON = process.env.SKIFF_PYPI_PYTHON ?? path.join(repoRoot(), '.cache', 'venv', 'bin', 'python');
export const PYTHON_SCRIPTS_DIR = path.join(repoRoot(), 'test', 'compat', 'python');

/** Result of a finished child process. */
export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
  elapsedMs: number;
}

/** Runs `cmd args`, feeding `stdin`; SIGKILLs it after `timeoutMs`. Never rejects on exit status. */
export function runProcess(
  cmd: string,
  args: readonly string[],
  opts: { timeoutMs: number; stdin?: Buffer | string; cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<ProcessResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    let timedOut = false;
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c: string) => {
      err += c;
      if (err.length > 1 << 20) err = err.slice(-(1 << 19)); // keep the tail of a chatty debug log
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: err, timedOut, elapsedMs: Date.now() - started });
    });
    child.stdin.on('error', () => undefined); // a client that exits early closes its stdin
    child.stdin.end(opts.stdin ?? '');
  });
}

function describe(what: string, r: ProcessResult): string {
  const status = r.timedOut
    ? `timed out after ${r.elapsedMs} ms`
    : `exited with code ${r.code}${r.signal ? ` (signal ${r.signal})` : ''}`;
  const tail = r.stderr.length > 6000 ? `...${r.stderr.slice(-6000)}` : r.stderr;
  return `${what} ${status}\n--- stderr ---\n${tail}\n--- stdout (first 2000 bytes) ---\n${r.stdout.subarray(0, 2000).toString('utf8')}`;
}

/** Runs a Python client script with `python` (default Debian's); resolves with its last stdout line parsed as JSON. */
export async function runPythonScript<T = Record<string, unknown>>(
  script: string,
  args: readonly string[],
  timeoutMs: number,
  python: string = PYTHON,
): Promise<T> {
  const r = await runProcess(python, [path.join(PYTHON_SCRIPTS_DIR, script), ...args], {
    timeoutMs,
    cwd: PYTHON_SCRIPTS_DIR,
  });
  if (r.code !== 0 || r.timedOut) throw new Error(describe(`${python} ${script} ${args.join(' ')}`, r));
  const lines = r.stdout.toString('utf8').trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}

/** A fresh temporary directory for record files; remove it with `fs.rmSync(dir, {recursive})`. */
export function makeTempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `skiff-${prefix}-`));
}

/** Options for {@link kcatProduce}. */
export interface KcatProduceOptions {
  bootstrap: string;
  topic: string;
  /** Message bytes, one message per `\n`-separated line (kcat -l); kcat itself skips empty lines. */
  input: Buffer;
  /** Split each line into key and value at the first occurrence of this delimiter (-K). */
  keyDelimiter?: string;
  /** -Z: an empty key or value becomes null. */
  emptyAsNull?: boolean;
  /** -H name=value for every message; a null value is `-H name` (a null header value). */
  headers?: RecordHeader[];
  partition?: number;
  timeoutMs: number;
  /** Extra -X properties. */
  config?: Record<string, string>;
}

/** `kcat -P -l <file>`: produces every line of `input`; fails on any delivery error. */
export async function kcatProduce(o: KcatProduceOptions): Promise<void> {
  const dir = makeTempDir('kcat');
  try {
    const file = path.join(dir, 'input.txt');
    fs.writeFileSync(file, o.input);
    const args = ['-b', o.bootstrap, '-P', '-t', o.topic, '-X', 'linger.ms=5'];
    if (o.partition !== undefined) args.push('-p', String(o.partition));
    if (o.keyDelimiter !== undefined) args.push('-K', o.keyDelimiter);
    if (o.emptyAsNull) args.push('-Z');
    for (const [name, value] of o.headers ?? [])
      args.push('-H', value === null ? name : `${name}=${value.toString('utf8')}`);
    for (const [k, v] of Object.entries(o.config ?? {})) args.push('-X', `${k}=${v}`);
    args.push('-l', file);
    const r = await runProcess('kcat', args, { timeoutMs: o.timeoutMs });
    if (r.code !== 0 || r.timedOut || /Delivery failed|ERROR/.test(r.stderr))
      throw new Error(describe(`kcat ${args.join(' ')}`, r));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The -f format kcat consumes with: lengths first, so keys and values are recovered exactly. */
const KCAT_FORMAT = '%p %o %K %S %k%s\\n';

/**
 * `kcat -C -o beginning -e -p <partition>`: every record of one partition, with exact key and
 * value bytes (null = length -1) and offsets. kcat's -f output cannot carry header bytes exactly,
 * so headers come back empty: check headers with another consumer.
 */
export async function kcatConsume(o: {
  bootstrap: string;
  topic: string;
  partition: number;
  timeoutMs: number;
  offset?: number;
}): Promise<TestRecord[]> {
  const args = [
    '-b',
    o.bootstrap,
    '-C',
    '-t',
    o.topic,
    '-p',
    String(o.partition),
    '-o',
    o.offset === undefined ? 'beginning' : String(o.offset),
    '-e',
    '-f',
    KCAT_FORMAT,
  ];
  const r = await runProcess('kcat', args, { timeoutMs: o.timeoutMs });
  if (r.code !== 0 || r.timedOut || /ERROR/.test(r.stderr)) throw new Error(describe(`kcat ${args.join(' ')}`, r));
  return parseKcatOutput(r.stdout);
}

/** Parses output written with {@link KCAT_FORMAT}. */
export function parseKcatOutput(buf: Buffer): TestRecord[] {
  const records: TestRecord[] = [];
  let pos = 0;
  const number = (): number => {
    const space = buf.indexOf(0x20, pos);
    if (space < 0) throw new Error(`kcat output: no field separator after byte ${pos}`);
    const text = buf.toString('latin1', pos, space);
    if (!/^-?\d+$/.test(text)) throw new Error(`kcat output: bad number ${JSON.stringify(text)} at byte ${pos}`);
    pos = space + 1;
    return Number(text);
  };
  const take = (len: number): Buffer | null => {
    if (len < 0) return null;
    if (pos + len > buf.length) throw new Error(`kcat output truncated at byte ${pos}`);
    const b = buf.subarray(pos, pos + len);
    pos += len;
    return b;
  };
  while (pos < buf.length) {
    const partition = number();
    const offset = number();
    const keyLen = number();
    const valueLen = number();
    const key = take(keyLen);
    const value = take(valueLen);
    if (buf[pos] !== 0x0a)
      throw new Error(`kcat output: record at offset ${offset} not followed by a newline (byte ${pos})`);
    pos += 1;
    records.push({ partition, offset, key, value, headers: [] });
  }
  return records;
}

/** Creates a topic with kafkajs's admin client (CreateTopics), waiting for its leaders. */
export async function createTopic(bootstrap: string, topic: string, numPartitions: number): Promise<void> {
  const { Kafka, logLevel } = await import('kafkajs');
  const admin = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } }).admin();
  await admin.connect();
  try {
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions, replicationFactor: 1 }],
      waitForLeaders: true,
      timeout: 10_000,
    });
    if (!created) throw new Error(`createTopics: topic ${topic} already exists`);
  } finally {
    await admin.disconnect();
  }
}

/** The two Python clients, by script prefix. */
export type PythonClient = 'kafka-python' | 'confluent-kafka';

const SCRIPT_PREFIX: Record<PythonClient, string> = { 'kafka-python': 'kafka_python', 'confluent-kafka': 'confluent' };

/** Options of {@link pythonProduce}. */
export interface PythonProduceOptions {
  bootstrap: string;
  topic: string;
  records: readonly TestRecord[];
  acks?: -1 | 0 | 1;
  createPartitions?: number;
  timeoutMs: number;
  /** Interpreter: {@link PYTHON} (default, Debian's clients) or {@link PYPI_PYTHON}. */
  python?: string;
  /** compression.type / compression_type (default none). */
  compression?: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
  /** confluent-kafka's linger.ms (the script's default is 5); kafka-python always lingers 5 ms. */
  lingerMs?: number;
  /**
   * The idempotent producer (InitProducerId, then sequence-numbered batches): librdkafka
   * enable.idempotence=true, kafka-python enable_idempotence=True (2.1+ only; acks must be -1).
   * Otherwise idempotence is off, as in Debian's releases.
   */
  idempotent?: boolean;
  /** Client debug logging on stderr (confluent-kafka: these librdkafka `debug` contexts). */
  debug?: string;
}

/**
 * Produces `records` in order with a Python client; resolves with the (partition, offset) each
 * record was acknowledged at. `createPartitions` > 0 creates the topic first with the client's
 * admin API (CreateTopics); otherwise the topic must exist or be auto-created.
 */
export async function pythonProduce(client: PythonClient, o: PythonProduceOptions): Promise<Array<[number, number]>> {
  const dir = makeTempDir(client);
  try {
    const input = path.join(dir, 'input.krec');
    writeRecordFile(input, o.records);
    const args = [
      '--bootstrap',
      o.bootstrap,
      '--topic',
      o.topic,
      '--input',
      input,
      '--acks',
      String(o.acks ?? -1),
      '--create-partitions',
      String(o.createPartitions ?? 0),
      '--timeout',
      String(Math.max(1, o.timeoutMs / 1000 - 5)),
    ];
    if (o.compression !== undefined) args.push('--compression', o.compression);
    if (o.lingerMs !== undefined && client === 'confluent-kafka') args.push('--linger-ms', String(o.lingerMs));
    if (o.idempotent) args.push('--idempotent');
    if (o.debug !== undefined) args.push(...(client === 'confluent-kafka' ? ['--debug', o.debug] : ['--debug']));
    const result = await runPythonScript<{ produced: number; offsets: Array<[number, number]> }>(
      `${SCRIPT_PREFIX[client]}_produce.py`,
      args,
      o.timeoutMs,
      o.python,
    );
    return result.offsets;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Consumes `partitions` (default: all, from Metadata) of `topic` from the beginning with a Python
 * client (under `python`, default Debian's), without a consumer group, until the end of each partition.
 */
export async function pythonConsume(
  client: PythonClient,
  o: { bootstrap: string; topic: string; partitions?: number[]; timeoutMs: number; python?: string },
): Promise<TestRecord[]> {
  const dir = makeTempDir(client);
  try {
    const output = path.join(dir, 'output.krec');
    const args = [
      '--bootstrap',
      o.bootstrap,
      '--topic',
      o.topic,
      '--output',
      output,
      '--timeout',
      String(Math.max(1, o.timeoutMs / 1000 - 5)),
    ];
    if (o.partitions !== undefined) args.push('--partitions', o.partitions.join(','));
    await runPythonScript(`${SCRIPT_PREFIX[client]}_consume.py`, args, o.timeoutMs, o.python);
    return readRecordFile(output);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `fn`; on failure rethrows with the tail of the broker's log appended. */
export async function withBrokerLog<T>(broker: { logs(): string }, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const e = error as Error;
    const addition = `\n--- broker log (last 4000 chars) ---\n${broker.logs().slice(-4000)}`;
    e.message += addition;
    // The test runner prints the stack, which was built with the original message.
    if (e.stack !== undefined) e.stack += addition;
    throw e;
  }
}

/** What python/versions.py reports about the Python clients under one interpreter. */
export interface PythonClientVersions {
  python: string;
  confluentKafka: string;
  librdkafka: string;
  kafkaPython: string;
  /** kafka-python's codecs that import: gzip, snappy, lz4, zstd. */
  kafkaPythonCodecs: string[];
}

/**
 * The client versions importable under `python` (python/versions.py). Fails with a hint to run
 * scripts/install-peers.sh when the interpreter is missing or a client does not import.
 */
export async function pythonClientVersions(python: string): Promise<PythonClientVersions> {
  if (!fs.existsSync(python)) {
    throw new Error(
      `no Python interpreter at ${python}: run \`bash scripts/install-peers.sh\` (install_python_venv makes the virtual environment)`,
    );
  }
  try {
    return await runPythonScript<PythonClientVersions>('versions.py', [], 30_000, python);
  } catch (e) {
    (e as Error).message =
      `the Python clients do not import under ${python} (run \`bash scripts/install-peers.sh\`): ${(e as Error).message}`;
    throw e;
  }
}
