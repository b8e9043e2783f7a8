/**
 * What the chaos suites share: `skiff start --nodes 3 --fault-injection` on fixed ports (so the
 * clients find it again after the whole process is SIGKILLed and restarted on the same data dir), and
 * `runRealVerify` against it with the skiff-admin fault driver and that restart as process-kill.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FaultKind, VerifyReport } from '../../src/verify/report';
import { runRealVerify } from '../../src/verify/real/run';
import { startClusterProcess, type ClusterProcess } from '../helpers/cluster-process';

/** Whether 127.0.0.1:`port` can be listened on now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `count` consecutive free ports (a random base in 20000-44999; at most 100 tries). */
export async function consecutiveFreePorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 25_000);
    let free = true;
    for (let i = 0; i < count && free; i++) free = await portFree(base + i);
    if (free) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

/** Options of {@link runChaos}. */
export interface ChaosOptions {
  durationS: number;
  seed: number;
  faultKinds: FaultKind[];
  /** Default both: librdkafka and the Java client. */
  clients?: Array<'librdkafka' | 'java'>;
}

/** A chaos run's report, the process restarts it made and its wall time. */
export interface ChaosResult {
  report: VerifyReport;
  progress: string[];
  elapsedMs: number;
}

/**
 * Starts a three-broker Skiff process on fixed ports and a data dir of its own, runs the real-client
 * workload against it for `durationS` with faults through the admin API (process-kill: SIGKILL of the
 * whole process, then a start on the same ports and dir), stops it and removes the dir.
 */
export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const started = Date.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-chaos-'));
  const port = await consecutiveFreePorts(4);
  const start = (): Promise<ClusterProcess> => startClusterProcess({ dataDir, port, adminPort: port + 3 });
  let cluster = await start();
  const progress: string[] = [];
  try {
    const report = await runRealVerify(
      {
        bootstrap: cluster.bootstrap,
        durationS: o.durationS,
        clients: o.clients ?? ['librdkafka', 'java'],
        faults: {
          kind: 'skiff-admin',
          adminUrl: cluster.adminUrl,
          async restartProcess() {
            const proc = cluster.proc;
            const exited = new Promise<void>((resolve) => {
              if (proc.exitCode !== null || proc.signalCode !== null) resolve();
              else proc.once('exit', () => resolve());
            });
            proc.kill('SIGKILL');
            await exited;
            cluster = await start();
          },
        },
        faultKinds: o.faultKinds,
        seed: o.seed,
        topicPrefix: `chaos-${o.seed}`,
        replicationFactor: 3,
        dataDir,
      },
      { progress: (line) => progress.push(line) },
    );
    return { report, progress, elapsedMs: Date.now() - started };
  } catch (err) {
    throw new Error(
      `${(err as Error).stack}\n--- progress ---\n${progress.join('\n')}\n--- skiff ---\n${cluster.logs().slice(-8000)}`,
      { cause: err },
    );
  } finally {
    await cluster.stop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
