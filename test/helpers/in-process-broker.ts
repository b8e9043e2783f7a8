/**
 * Starts a broker inside the test process (workers are real threads) on a free port with a fresh
 * temporary data dir. Logs are silenced unless SKIFF_LOG_LEVEL is set.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildBrokerConfig, type BrokerConfig } from '../../src/config/broker-config';
import {
  startBroker,
  startCluster,
  type ClusterOptions,
  type RunningBroker,
  type RunningCluster,
} from '../../src/broker';
import { createLogger } from '../../src/runtime/logger';
import { ThreadRuntime } from '../../src/runtime/thread-runtime';

export interface TestBroker {
  broker: RunningBroker;
  runtime: ThreadRuntime;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
  restart(): Promise<TestBroker>;
}

export async function startTestBroker(overrides: Record<string, string> = {}, dataDir?: string): Promise<TestBroker> {
  const dir = dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'skiff-test-'));
  process.env.SKIFF_LOG_LEVEL ??= 'warn';
  const props = new Map<string, string>([
    ['listeners', 'PLAINTEXT://127.0.0.1:0'],
    ['log.dirs', dir],
    ['num.io.threads', '2'],
    ...Object.entries(overrides),
  ]);
  const config = buildBrokerConfig(props);
  const logger = createLogger({ fd: 2 });
  const runtime = new ThreadRuntime({
    brokers: [{ brokerId: config.nodeId, numIoThreads: config.numIoThreads }],
    logger,
    workerLogFd: 2,
  });
  const broker = await startBroker(config, logger, { runtime });
  const handle: TestBroker = {
    broker,
    runtime,
    port: broker.boundPort,
    dataDir: dir,
    stop: () => broker.stop(),
    restart: async () => {
      await broker.stop();
      return startTestBroker(overrides, dir);
    },
  };
  return handle;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The config of an in-process test cluster on `dir`: free ports, one io thread per broker. */
export function testClusterConfig(dir: string): BrokerConfig {
  return buildBrokerConfig(
    new Map([
      ['listeners', 'PLAINTEXT://127.0.0.1:0'],
      ['log.dirs', dir],
      ['num.io.threads', '1'],
    ]),
  );
}

/**
 * Runs `body` against `nodes` brokers started in this process on a fresh temporary data dir (logs
 * silenced unless SKIFF_LOG_LEVEL is set), then stops them and removes the dir, also on failure.
 */
export async function withTestCluster(
  nodes: number,
  options: Omit<ClusterOptions, 'nodes'>,
  body: (cluster: RunningCluster) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skiff-cluster-'));
  process.env.SKIFF_LOG_LEVEL ??= 'warn';
  try {
    const cluster = await startCluster(testClusterConfig(dir), createLogger({ fd: 2 }), { ...options, nodes });
    try {
      await body(cluster);
    } finally {
      await cluster.stop();
    }
  } finally {
    removeDir(dir);
  }
}
