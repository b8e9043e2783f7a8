/**
 * The franz-go load generator of the reference harness (bench/loadgen, Go): where its binary is,
 * building it when a source is newer (as scripts/install-peers.sh's install_loadgen does, with the
 * same Go caches under .cache/go and no network), and one produce, consume or create run parsed
 * from its JSON line.
 *
 * It is lighter than Kafka's Java ProducerPerformance (one Go process, no JIT warm-up), so at peak
 * the broker rather than the client is the bottleneck (issue 13, item 1).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../test/helpers/kafka-fixture';
import type { ProducerResult } from './perf-tools';

/**
 * One produce run: ProducerPerformance's figures (MB/s in MiB per second; per-record latency from
 * the send to the broker's answer, ms) and what was sent.
 */
export interface ProduceRun extends ProducerResult {
  records: number;
  /** Value bytes sent (records x record size). */
  bytes: number;
  seconds: number;
}

/** One consume run: records read from the start of the partitions (by assignment, no group). */
export interface ConsumeRun {
  records: number;
  /** Key + value bytes read. */
  bytes: number;
  seconds: number;
  recordsPerSec: number;
  mbPerSec: number;
}

/** Client settings given alike to every broker of a run. */
export interface ProduceSettings {
  acks: '1' | 'all';
  records: number;
  recordSize: number;
  /** Records per second; 0 or undefined: as fast as the broker takes them. */
  rate?: number;
  /** Producer linger (ms); default 0 (franz-go's). */
  lingerMs?: number;
  /** Max bytes of one record batch; default 1 MiB (franz-go's). */
  batchBytes?: number;
}

const GO_DIR = (): string => path.join(repoRoot(), '.cache', 'go');
const RUN_TIMEOUT_S = 180;

/** Path of the load generator binary (built by install-peers.sh or {@link ensureLoadgen}). */
export function loadgenPath(): string {
  return path.join(GO_DIR(), 'bin', 'skiff-loadgen');
}

function goEnv(): NodeJS.ProcessEnv {
  const go = GO_DIR();
  return {
    ...process.env,
    GOPATH: go,
    GOMODCACHE: path.join(go, 'pkg', 'mod'),
    GOCACHE: path.join(go, 'build'),
    GOFLAGS: '-modcacherw',
    GOTOOLCHAIN: 'local',
    GOTELEMETRY: 'off',
    // The modules are in .cache/go after install-peers.sh; a build here never reaches the network.
    GOPROXY: 'off',
  };
}

function run(
  file: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ stdout: string; stderr: string; error: Error | null }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 << 20 },
      (error, stdout, stderr) => resolve({ stdout, stderr, error }),
    );
  });
}

/**
 * Builds the load generator when its binary is missing or older than a source of bench/loadgen
 * (go build -mod=readonly, GOPROXY=off; safe when several processes do it at once); throws with Go's output when that fails, naming
 * `bash scripts/install-peers.sh` (which also downloads the pinned modules).
 */
export async function ensureLoadgen(): Promise<string> {
  const bin = loadgenPath();
  const src = path.join(repoRoot(), 'bench', 'loadgen');
  const sources = fs.readdirSync(src).filter((f) => f.endsWith('.go') || f === 'go.mod' || f === 'go.sum');
  const binTime = fs.existsSync(bin) ? fs.statSync(bin).mtimeMs : -1;
  if (binTime >= 0 && sources.every((f) => fs.statSync(path.join(src, f)).mtimeMs <= binTime)) return bin;
  const go = fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  // A temp name of this process's own: two harness runs at once (test:long's two smoke files) may
  // both rebuild, and each renames a complete binary over the other's.
  const tmp = `${bin}.tmp-${process.pid}`;
  const r = await run(go, ['build', '-mod=readonly', '-o', tmp, '.'], {
    cwd: src,
    env: goEnv(),
    timeoutMs: 300_000,
  });
  if (r.error !== null)
    throw new Error(
      `building bench/loadgen failed (run bash scripts/install-peers.sh first): ${r.error.message}\n${r.stderr}`,
    );
  fs.renameSync(tmp, bin);
  return bin;
}

async function loadgen<T>(mode: string, args: readonly string[]): Promise<T> {
  const r = await run(
    loadgenPath(),
    [mode, ...args, ...(mode === 'create' ? [] : ['-timeout-s', String(RUN_TIMEOUT_S)])],
    {
      timeoutMs: (RUN_TIMEOUT_S + 30) * 1000,
    },
  );
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.error !== null || !line.startsWith('{'))
    throw new Error(
      `loadgen ${mode} ${args.join(' ')} failed: ${r.error?.message ?? 'no JSON line'}\n${r.stderr.slice(-2000)}`,
    );
  return JSON.parse(line) as T;
}

/** One produce run to partition 0 of `topic`; rejects if a record is not acknowledged. */
export function loadgenProduce(bootstrap: string, topic: string, s: ProduceSettings): Promise<ProduceRun> {
  return loadgen<ProduceRun>('produce', [
    '-brokers',
    bootstrap,
    '-topic',
    topic,
    '-records',
    String(s.records),
    '-record-size',
    String(s.recordSize),
    '-acks',
    s.acks,
    '-rate',
    String(s.rate ?? 0),
    '-linger-ms',
    String(s.lingerMs ?? 0),
    '-batch-bytes',
    String(s.batchBytes ?? 1 << 20),
  ]);
}

/** Reads `records` records from the start of partitions 0..partitions-1 of `topic` by assignment. */
export function loadgenConsume(bootstrap: string, topic: string, records: number, partitions = 1): Promise<ConsumeRun> {
  return loadgen<ConsumeRun>('consume', [
    '-brokers',
    bootstrap,
    '-topic',
    topic,
    '-records',
    String(records),
    '-partitions',
    String(partitions),
  ]);
}

/** Creates `topic` by a CreateTopics request (rejects on any error code, e.g. TOPIC_ALREADY_EXISTS). */
export async function loadgenCreate(
  bootstrap: string,
  topic: string,
  layout: { partitions?: number; replicationFactor?: number; configs?: Record<string, string> } = {},
): Promise<void> {
  const configs = Object.entries(layout.configs ?? {}).map(([k, v]) => `${k}=${v}`);
  await loadgen('create', [
    '-brokers',
    bootstrap,
    '-topic',
    topic,
    '-partitions',
    String(layout.partitions ?? 1),
    '-rf',
    String(layout.replicationFactor ?? 1),
    ...(configs.length > 0 ? ['-config', configs.join(',')] : []),
  ]);
}
