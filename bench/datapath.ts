/**
 * Data-path A/B runs (issue 13 item 2): Skiff builds side by side, alternating, under the fixed
 * load (ProducerPerformance at `--rate` records/s of `--record-size` bytes, acks=1 and acks=all) and a
 * consume of what was produced (bench/compare-consumer.java, assign mode, no group join). Per build and
 * phase: the broker's own CPU time per MB (/proc, all threads), p50/p99 produce latency and consume
 * throughput. With `--prof DIR` each broker runs under `node --cpu-prof` (worker threads included) and
 * the profiles are summarised per thread: idle share and top self-time functions.
 *
 *   node dist/bench/datapath.js --roots /tmp/dp-base,/work/wt-datapath [--rounds 2] [--records 100000]
 *        [--rate 20000] [--record-size 1024] [--phases acks1,acksall,consume] [--prof /tmp/prof]
 *
 * Each root is a checkout with its own dist/ (built); the first is the baseline the ratios divide by.
 * The machine is shared: read ratios within one run, never lone timings.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { initKafkaTools, runJava, PRODUCER_PERFORMANCE, median, numberArg } from './perf-tools';
import { cpuTimeMs } from './proc-cpu';
import { repoRoot } from '../test/helpers/kafka-fixture';

function stringArg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
}

const ROOTS = stringArg('--roots', repoRoot()).split(',');
const ROUNDS = Math.round(numberArg('--rounds', 2));
const RECORDS = Math.round(numberArg('--records', 100_000));
const RATE = Math.round(numberArg('--rate', 20_000));
const RECORD_SIZE = Math.round(numberArg('--record-size', 1024));
const PHASES = stringArg('--phases', 'acks1,acksall,consume').split(',');
const PROF_DIR = stringArg('--prof', '');

interface Broker {
  proc: ChildProcess;
  port: number;
  dataDir: string;
  profDir: string;
}

async function startBroker(root: string, label: string): Promise<Broker> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-datapath-'));
  const profDir = PROF_DIR === '' ? '' : fs.mkdtempSync(path.join(PROF_DIR, `${label}-`));
  const nodeArgs = profDir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`];
  const proc = spawn(
    process.execPath,
    [...nodeArgs, path.join(root, 'bin', 'skiff.js'), 'start', '--port', '0', '--data-dir', dataDir],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SKIFF_LOG_LEVEL: 'warn' } },
  );
  let out = '';
  proc.stderr?.setEncoding('utf8').on('data', (c: string) => (out += c));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker silent:\n${out}`)), 30_000);
    proc.stdout?.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = /skiff listening on \S+:(\d+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.once('exit', () => reject(new Error(`broker exited:\n${out}`)));
  });
  return { proc, port, dataDir, profDir };
}

async function stopBroker(b: Broker): Promise<void> {
  const exited = new Promise((r) => b.proc.once('exit', r));
  b.proc.kill('SIGTERM');
  await exited;
  fs.rmSync(b.dataDir, { recursive: true, force: true });
}

async function runCli(root: string, args: string[]): Promise<void> {
  const child = spawn(process.execPath, [path.join(root, 'bin', 'skiff.js'), ...args], { stdio: 'pipe' });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`skiff ${args.join(' ')} failed: ${out}`);
}

const PRODUCER_LINE =
  /(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th/;

interface PhaseResult {
  cpuMsPerMb: number;
  p50Ms?: number;
  p99Ms?: number;
  p999Ms?: number;
  mbPerSec: number;
}

async function produce(b: Broker, topic: string, acks: string): Promise<PhaseResult> {
  const before = cpuTimeMs(b.proc.pid!);
  const r = await runJava(PRODUCER_PERFORMANCE, [
    '--topic',
    topic,
    '--num-records',
    String(RECORDS),
    '--record-size',
    String(RECORD_SIZE),
    '--throughput',
    String(RATE),
    '--producer-props',
    `bootstrap.servers=127.0.0.1:${b.port}`,
    `acks=${acks}`,
    'linger.ms=0',
  ]);
  const cpuMs = cpuTimeMs(b.proc.pid!) - before;
  const m = PRODUCER_LINE.exec(r.stdout);
  if (r.code !== 0 || m === null || Number(m[1]) !== RECORDS)
    throw new Error(`producer failed:\n${r.stdout}\n${r.stderr}`);
  const mb = (RECORDS * RECORD_SIZE) / 1e6;
  return {
    cpuMsPerMb: cpuMs / mb,
    p50Ms: Number(m[6]),
    p99Ms: Number(m[8]),
    p999Ms: Number(m[9]),
    mbPerSec: Number(m[3]),
  };
}

async function consume(b: Broker, topic: string, records: number): Promise<PhaseResult> {
  const before = cpuTimeMs(b.proc.pid!);
  const source = path.join(repoRoot(), 'bench', 'compare-consumer.java');
  const r = await runJava(source, [`127.0.0.1:${b.port}`, topic, String(records), '10000']);
  const cpuMs = cpuTimeMs(b.proc.pid!) - before;
  const lines = r.stdout.split('\n');
  const h = lines.findIndex((l) => l.startsWith('start.time, end.time'));
  const f = (lines[h + 1] ?? '').split(', ').map((s) => s.trim());
  if (r.code !== 0 || h < 0 || Number(f[4]) !== records) throw new Error(`consumer failed:\n${r.stdout}\n${r.stderr}`);
  // Consumed MB as the consumer counts it (key + value bytes).
  return { cpuMsPerMb: cpuMs / Number(f[2]), mbPerSec: Number(f[3]) };
}

// ---- CPU profile summary ----

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** One thread's profile: total ms, idle share, and the top self-time functions. */
function summariseProfile(file: string, top = 12): string {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const byFn = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    total += us;
    const name = n.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') idle += us;
    const key = `${name} ${path.basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  const busy = total - idle;
  const rows = [...byFn]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(
      ([k, us]) =>
        `    ${((100 * us) / Math.max(1, busy)).toFixed(1).padStart(5)}% ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`,
    );
  return [
    `  ${path.basename(file)}: ${(total / 1000).toFixed(0)} ms sampled, idle ${((100 * idle) / Math.max(1, total)).toFixed(1)}%, busy ${(busy / 1000).toFixed(0)} ms (top self time, % of busy):`,
    ...rows,
  ].join('\n');
}

async function main(): Promise<void> {
  const only = stringArg('--summarise', '');
  if (only !== '') {
    for (const f of fs.readdirSync(only).sort()) console.log(summariseProfile(path.join(only, f), 25));
    return;
  }
  await initKafkaTools();
  if (PROF_DIR !== '') fs.mkdirSync(PROF_DIR, { recursive: true });
  const results = new Map<string, PhaseResult[]>();
  const add = (root: number, phase: string, r: PhaseResult): void => {
    const k = `${root}|${phase}`;
    results.set(k, [...(results.get(k) ?? []), r]);
  };
  console.log(
    `bench/datapath: ${ROUNDS} round(s); ${RECORDS} x ${RECORD_SIZE} B at ${RATE}/s; phases ${PHASES.join(',')}; roots: ${ROOTS.join(' | ')}`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ROOTS.map((_, i) => i) : ROOTS.map((_, i) => i).reverse();
    for (const i of order) {
      const root = ROOTS[i]!;
      const b = await startBroker(root, `r${round}-b${i}`);
      const bootstrap = `127.0.0.1:${b.port}`;
      try {
        await runCli(root, ['topic', 'create', '--brokers', bootstrap, '-p', '1', 'dp1', 'dpall']);
        let produced = 0;
        for (const phase of PHASES) {
          let r: PhaseResult;
          if (phase === 'acks1') r = await produce(b, 'dp1', '1');
          else if (phase === 'acksall') r = await produce(b, 'dpall', 'all');
          else r = await consume(b, 'dp1', produced);
          if (phase === 'acks1') produced = RECORDS;
          add(i, phase, r);
          console.log(`round ${round} root ${i} ${phase}: ${JSON.stringify(r)}`);
        }
      } finally {
        await stopBroker(b);
      }
      if (b.profDir !== '') {
        for (const f of fs.readdirSync(b.profDir).sort()) console.log(summariseProfile(path.join(b.profDir, f)));
      }
    }
  }
  console.log('\nmedians (ratio to root 0):');
  for (const phase of PHASES) {
    for (let i = 0; i < ROOTS.length; i++) {
      const rs = results.get(`${i}|${phase}`) ?? [];
      const base = results.get(`0|${phase}`) ?? [];
      const m = (f: (r: PhaseResult) => number | undefined, rr: PhaseResult[]): number =>
        median(rr.map((r) => f(r) ?? NaN));
      const cpu = m((r) => r.cpuMsPerMb, rs);
      const p99 = m((r) => r.p99Ms, rs);
      const thr = m((r) => r.mbPerSec, rs);
      console.log(
        `${phase.padEnd(8)} root ${i}: cpu ${cpu.toFixed(1)} ms/MB (${(cpu / m((r) => r.cpuMsPerMb, base)).toFixed(2)}x)` +
          (phase === 'consume'
            ? `, ${thr.toFixed(1)} MB/s (${(thr / m((r) => r.mbPerSec, base)).toFixed(2)}x)`
            : `, p50 ${m((r) => r.p50Ms, rs)} ms, p99 ${p99} ms (${(p99 / m((r) => r.p99Ms, base)).toFixed(2)}x)`),
      );
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
