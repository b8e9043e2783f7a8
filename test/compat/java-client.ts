/**
 * Apache Kafka's Java client for the suites that drive it: finds the kafka-clients 4.x jars
 * ($SKIFF_JAVA_LIB, else `bash scripts/kafka-fixture.sh lib`, which fetches them into
 * .cache/kafka/<version>/lib), compiles test/java/SkiffJavaClient.java once per (source, kafka-clients
 * jar) into .cache/java-classes/<hash>, and builds the `java` command line that runs it.
 *
 *   const lib = await resolveJavaLib();
 *   const classes = await compileJavaClient(lib);
 *   await runProcess('java', [...javaArgs(lib, classes, { timeoutMs }), 'produce', '--bootstrap', b, ...], ...);
 *
 * Used by test/compat/java-clients.test.ts and test/cluster/idempotence-failover.test.ts.
 */
import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot, runProcess, type ProcessResult } from './clients';

const ROOT = repoRoot();
const JAVA_DIR = path.join(ROOT, 'test', 'java');
const JAVA_SOURCE = path.join(JAVA_DIR, 'SkiffJavaClient.java');
/** test/java/log4j2.properties: the client's own log lines, WARN and up, on stderr. */
export const JAVA_LOG_CONFIG = path.join(JAVA_DIR, 'log4j2.properties');
const CLASSES_CACHE = path.join(ROOT, '.cache', 'java-classes');
export const JAVA_MAIN_CLASS = 'SkiffJavaClient';

/** A log4j2 line as test/java/log4j2.properties formats it. */
export const JAVA_LOG_LINE = /^\[\d\d:\d\d:\d\d\.\d{3}\] (WARN|ERROR|FATAL) /;

/** The folder holding kafka-clients-4.*.jar and its dependencies. */
export async function resolveJavaLib(): Promise<string> {
  const hasClients = (dir: string): boolean =>
    fs.existsSync(dir) && fs.readdirSync(dir).some((f) => /^kafka-clients-4\.[\d.]+\.jar$/.test(f));
  const fromEnv = process.env.SKIFF_JAVA_LIB;
  if (fromEnv !== undefined && fromEnv !== '') {
    assert.ok(hasClients(fromEnv), `SKIFF_JAVA_LIB=${fromEnv} holds no kafka-clients-4.x jar`);
    return fromEnv;
  }
  const r = await runProcess('bash', [path.join(ROOT, 'scripts', 'kafka-fixture.sh'), 'lib'], {
    timeoutMs: 240_000,
    cwd: ROOT,
  });
  const dir = r.stdout.toString('utf8').trim().split('\n').pop() ?? '';
  if (r.code !== 0 || r.timedOut || !hasClients(dir)) {
    throw new Error(describeJavaRun('bash scripts/kafka-fixture.sh lib (the kafka-clients 4.x jars)', r));
  }
  return dir;
}

/**
 * The jars SkiffJavaClient needs at run time: kafka-clients, its codecs (zstd-jni, lz4-java,
 * snappy-java) and logging (slf4j, log4j2), not the whole broker and tools classpath.
 */
export function javaRuntimeClasspath(lib: string): string[] {
  const jars = fs
    .readdirSync(lib)
    .filter((f) => /^(kafka-clients-|zstd-jni-|lz4-java-|snappy-java-|slf4j-|log4j-(api|core|slf4j)).*\.jar$/.test(f))
    .sort();
  return jars.map((f) => path.join(lib, f));
}

/** Compiles SkiffJavaClient.java once per (source, kafka-clients jar); returns the classes folder. */
export async function compileJavaClient(lib: string): Promise<string> {
  const jar = fs.readdirSync(lib).find((f) => /^kafka-clients-4\.[\d.]+\.jar$/.test(f));
  assert.ok(jar !== undefined, `no kafka-clients-4.x jar in ${lib}`);
  const hash = crypto
    .createHash('sha256')
    .update(fs.readFileSync(JAVA_SOURCE))
    .update(`\0${jar}`)
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(CLASSES_CACHE, hash);
  if (fs.existsSync(path.join(dir, `${JAVA_MAIN_CLASS}.class`))) return dir;
  fs.mkdirSync(CLASSES_CACHE, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(CLASSES_CACHE, 'tmp-'));
  // C1 only and the serial GC: javac is a short run (about 3x faster on two busy cores).
  const r = await runProcess(
    'javac',
    [
      '-J-XX:TieredStopAtLevel=1',
      '-J-XX:+UseSerialGC',
      '-encoding',
      'UTF-8',
      '-d',
      tmp,
      '-cp',
      path.join(lib, jar),
      JAVA_SOURCE,
    ],
    { timeoutMs: 120_000 },
  );
  if (r.code !== 0 || r.timedOut) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new Error(describeJavaRun('javac SkiffJavaClient.java', r));
  }
  try {
    fs.renameSync(tmp, dir);
  } catch {
    fs.rmSync(tmp, { recursive: true, force: true }); // a concurrent run got there first
  }
  return dir;
}

/** Options of {@link javaArgs}. */
export interface JavaArgsOptions {
  /** Passed as -Dskiff.timeoutMs (SkiffJavaClient's per-call timeout). */
  timeoutMs: number;
  /** -Xmx; default 768m. */
  maxHeap?: string;
  /** Keep C2 (bulk runs: codecs and serializers); default false, C1 only for a faster start. */
  bulk?: boolean;
}

/** The `java` arguments up to and including the main class; append SkiffJavaClient's commands. */
export function javaArgs(lib: string, classes: string, opts: JavaArgsOptions): string[] {
  return [
    '-XX:+UseSerialGC',
    `-Xmx${opts.maxHeap ?? '768m'}`,
    ...(opts.bulk ? [] : ['-XX:TieredStopAtLevel=1']),
    `-Dlog4j2.configurationFile=${JAVA_LOG_CONFIG}`,
    // If the classpath binds slf4j-simple instead of log4j2: the same level, on stderr.
    '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
    '-Dorg.slf4j.simpleLogger.logFile=System.err',
    `-Dskiff.timeoutMs=${opts.timeoutMs}`,
    '-cp',
    [...javaRuntimeClasspath(lib), classes].join(path.delimiter),
    JAVA_MAIN_CLASS,
  ];
}

/** A SkiffJavaClient .acks file: (partition, offset) per input record, -1/-1 for a failed send. */
export function readJavaAcks(file: string): Array<[number, number]> {
  const buf = fs.readFileSync(file);
  const acks: Array<[number, number]> = [];
  for (let pos = 0; pos + 12 <= buf.length; pos += 12)
    acks.push([buf.readInt32BE(pos), Number(buf.readBigInt64BE(pos + 4))]);
  return acks;
}

/** A failed run for an error message: its status, the tail of stderr and the head of stdout. */
export function describeJavaRun(what: string, r: ProcessResult): string {
  const status = r.timedOut
    ? `timed out after ${r.elapsedMs} ms`
    : `exited with code ${r.code}${r.signal ? ` (signal ${r.signal})` : ''}`;
  const err = r.stderr.length > 8000 ? `...${r.stderr.slice(-8000)}` : r.stderr;
  return `${what} ${status}\n--- stderr ---\n${err}\n--- stdout (first 3000 bytes) ---\n${r.stdout.subarray(0, 3000).toString('utf8')}`;
}
