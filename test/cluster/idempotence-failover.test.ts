/**
 * Idempotent producers of real clients across a hard crash of the partition leader's broker: a real
 * `skiff start --nodes 3 --port 0 --fault-injection` process, a topic with RF=3 and
 * min.insync.replicas=2, and per client (kafkajs; librdkafka through confluent-kafka in the Python
 * venv of test/compat) an idempotent acks=all producer sending N keyed records while the test crashes
 * the leader's broker through the admin API (POST /v1/brokers/{id}/crash) and starts it again. Then
 * everything is consumed: no key appears twice (no duplicate) and every acknowledged record is there,
 * at the offset it was acknowledged with (no loss).
 */
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { PYPI_PYTHON, repoRoot, runProcess } from '../compat/clients';

/** Records per client: a few thousand, well under a minute each. */
const RECORDS = 3000;
const START_TIMEOUT_MS = 30_000;

interface PartitionInfo {
  topic: string;
  partition: number;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  perReplica: Array<{ brokerId: number; logEndOffset: number; highWatermark: number }>;
}

/** A running three-broker cluster process. */
interface ClusterProcess {
  ports: number[];
  adminUrl: string;
  proc: ChildProcess;
  logs(): string;
}

async function startCluster(dataDir: string): Promise<ClusterProcess> {
  const args = [
    path.join(repoRoot(), 'bin', 'skiff.js'),
    'start',
    '--nodes',
    '3',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--fault-injection',
  ];
  const proc = spawn(process.execPath, args, { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (c: string) => {
    output = (output + c).slice(-(1 << 20));
  });
  const result = await new Promise<{ ports: number[]; adminUrl: string }>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`cluster did not start within ${START_TIMEOUT_MS} ms\n${output}`));
    }, START_TIMEOUT_MS);
    proc.stdout?.setEncoding('utf8');
    proc.stdout?.on('data', (c: string) => {
      stdout += c;
      output += c;
      const ports = [...stdout.matchAll(/^skiff listening on 127\.0\.0\.1:(\d+)\r?$/gm)].map((m) => Number(m[1]));
      const admin = /^skiff admin API on (http:\/\/127\.0\.0\.1:\d+)\r?$/m.exec(stdout);
      if (ports.length === 3 && admin !== null) {
        clearTimeout(timer);
        resolve({ ports, adminUrl: admin[1]! });
      }
    });
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`cluster exited during start (code ${code}, signal ${signal})\n${output}`));
    });
  });
  return { ...result, proc, logs: () => output };
}

async function admin<T>(cluster: ClusterProcess, method: 'GET' | 'POST', route: string): Promise<T> {
  const response = await fetch(`${cluster.adminUrl}${route}`, { method });
  const body = await response.text();
  assert.ok(response.ok, `${method} ${route}: ${response.status} ${body}`);
  return JSON.parse(body) as T;
}

async function partitionOf(cluster: ClusterProcess, topic: string): Promise<PartitionInfo> {
  const all = await admin<PartitionInfo[]>(cluster, 'GET', '/v1/partitions');
  const p = all.find((x) => x.topic === topic && x.partition === 0);
  assert.ok(p, `partition ${topic}-0 is listed`);
  return p;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until it holds, failing after `timeoutMs`. */
async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * While a producer runs: once the leader's log holds a tenth of the records, crashes the leader's
 * broker, starts it again after a second, and waits until it is back in the ISR. Returns the crashed id.
 */
async function crashLeaderDuring(
  cluster: ClusterProcess,
  topic: string,
  stillProducing: () => boolean,
): Promise<number> {
  await waitFor('a tenth of the records in the leader log', 60_000, async () => {
    const p = await partitionOf(cluster, topic);
    const leader = p.perReplica.find((r) => r.brokerId === p.leader);
    return leader !== undefined && leader.logEndOffset >= RECORDS / 10;
  });
  const before = await partitionOf(cluster, topic);
  assert.ok(stillProducing(), 'the crash lands while the producer is still sending');
  await admin(cluster, 'POST', `/v1/brokers/${before.leader}/crash`);
  await waitFor('a new leader', 20_000, async () => {
    const p = await partitionOf(cluster, topic);
    return p.leader >= 0 && p.leader !== before.leader;
  });
  await sleep(1000);
  await admin(cluster, 'POST', `/v1/brokers/${before.leader}/start`);
  await waitFor('the crashed broker back in the ISR', 60_000, async () =>
    (await partitionOf(cluster, topic)).isr.includes(before.leader),
  );
  return before.leader;
}

/** Reads `topic`-0 from the beginning up to its HW with a kafkajs consumer: [key, offset] pairs in order. */
async function consumeAll(kafka: Kafka, topic: string, highWatermark: number): Promise<Array<[string, number]>> {
  const consumer = kafka.consumer({ groupId: `verify-${topic}`, sessionTimeout: 10_000 });
  const seen: Array<[string, number]> = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let last = -1;
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        seen.push([message.key?.toString() ?? '', Number(message.offset)]);
        last = Number(message.offset);
      },
    });
    await waitFor(`consuming ${topic} up to offset ${highWatermark}`, 60_000, async () => last >= highWatermark - 1);
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

/** The checks of the module doc over what the producer acknowledged and what the log holds. */
function assertExactlyOnce(
  label: string,
  acked: ReadonlyMap<string, number>,
  consumed: ReadonlyArray<[string, number]>,
): void {
  const byKey = new Map<string, number>();
  const duplicates: string[] = [];
  for (const [key, offset] of consumed) {
    if (byKey.has(key)) duplicates.push(`${key}@${byKey.get(key)},${offset}`);
    else byKey.set(key, offset);
  }
  assert.deepEqual(duplicates.slice(0, 10), [], `${label}: no record is in the log twice`);
  const lost: string[] = [];
  const moved: string[] = [];
  for (const [key, offset] of acked) {
    const at = byKey.get(key);
    if (at === undefined) lost.push(key);
    else if (at !== offset) moved.push(`${key}: acked at ${offset}, found at ${at}`);
  }
  assert.deepEqual(lost.slice(0, 10), [], `${label}: no acknowledged record is lost`);
  assert.deepEqual(moved.slice(0, 10), [], `${label}: each acknowledged record is at its acknowledged offset`);
  for (const [key] of consumed) assert.match(key, /^k\d+$/, `${label}: only the producer's records`);
}

const PYTHON_PRODUCER = `
import json, sys, time
from confluent_kafka import Producer
bootstrap, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = Producer({'bootstrap.servers': bootstrap, 'enable.idempotence': True, 'acks': 'all',
              'linger.ms': 2, 'batch.num.messages': 20, 'message.timeout.ms': 120000,
              'retry.backoff.ms': 100, 'socket.timeout.ms': 10000})
acked, errors = {}, []
def done(err, msg):
    if err is not None: errors.append(str(err))
    else: acked[msg.key().decode()] = msg.offset()
for i in range(n):
    while True:
        try:
            p.produce(topic, key=('k%d' % i).encode(), value=('v%d' % i).encode(), partition=0, on_delivery=done)
            break
        except BufferError:
            p.poll(0.05)
    if i % 20 == 19:
        p.poll(0)
        time.sleep(0.01)
left = p.flush(120)
print(json.dumps({'acked': acked, 'errors': errors[:5], 'errorCount': len(errors), 'unflushed': left}))
`;

describe('idempotent producers across a leader broker crash (real clients, --nodes 3)', () => {
  let cluster: ClusterProcess;
  let kafka: Kafka;
  let dataDir: string;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-idem-'));
    cluster = await startCluster(dataDir);
    kafka = new Kafka({
      clientId: 'idempotence-failover',
      brokers: cluster.ports.map((p) => `127.0.0.1:${p}`),
      logLevel: logLevel.NOTHING,
      retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 },
    });
  });

  after(async () => {
    if (cluster !== undefined && cluster.proc.exitCode === null) {
      const exited = new Promise((resolve) => cluster.proc.once('exit', resolve));
      cluster.proc.kill('SIGTERM');
      const timer = setTimeout(() => cluster.proc.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    if (dataDir !== undefined && process.env.SKIFF_TEST_KEEP_DATA !== '1')
      fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function createTopic(topic: string): Promise<void> {
    const a = kafka.admin();
    await a.connect();
    try {
      const created = await a.createTopics({
        waitForLeaders: true,
        topics: [
          {
            topic,
            numPartitions: 1,
            replicationFactor: 3,
            configEntries: [{ name: 'min.insync.replicas', value: '2' }],
          },
        ],
      });
      assert.equal(created, true, `${topic} created`);
    } finally {
      await a.disconnect();
    }
    await waitFor(`${topic} with three in-sync replicas`, 20_000, async () => {
      const p = await partitionOf(cluster, topic);
      return p.leader >= 0 && p.isr.length === 3;
    });
  }

  /** The leader's HW once every replica has caught up (so the consumer's target is final). */
  async function settledHighWatermark(topic: string): Promise<number> {
    let hw = -1;
    await waitFor(`${topic}: every replica at the same HW`, 30_000, async () => {
      const p = await partitionOf(cluster, topic);
      const hws = p.perReplica.map((r) => r.highWatermark);
      const leos = p.perReplica.map((r) => r.logEndOffset);
      hw = hws[0] ?? -1;
      return p.isr.length === 3 && hws.every((h) => h === hw) && leos.every((l) => l === hw);
    });
    return hw;
  }

  test('kafkajs (idempotent: true, acks=all): no duplicate and no lost acknowledged record', async () => {
    const topic = 'idem-kafkajs';
    await createTopic(topic);
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    await producer.connect();
    const acked = new Map<string, number>();
    const produced = (async () => {
      const chunk = 20;
      for (let i = 0; i < RECORDS; i += chunk) {
        const messages = Array.from({ length: Math.min(chunk, RECORDS - i) }, (_, k) => ({
          key: `k${i + k}`,
          value: `v${i + k}`,
          partition: 0,
        }));
        const [meta] = await producer.send({ topic, acks: -1, timeout: 30_000, messages });
        assert.ok(meta !== undefined && meta.errorCode === 0, `send at ${i}: ${JSON.stringify(meta)}`);
        const base = Number(meta.baseOffset);
        messages.forEach((m, k) => acked.set(m.key, base + k));
        await sleep(10); // spread the sends over a few seconds, so the crash lands among them
      }
    })();
    const crashed = await crashLeaderDuring(cluster, topic, () => acked.size < RECORDS);
    await produced;
    await producer.disconnect();
    assert.equal(acked.size, RECORDS, 'every send was acknowledged (kafkajs retries through the failover)');
    const hw = await settledHighWatermark(topic);
    assert.equal(hw, RECORDS, `the log holds exactly ${RECORDS} records (crashed broker ${crashed})`);
    assertExactlyOnce('kafkajs', acked, await consumeAll(kafka, topic, hw));
  });

  test('librdkafka (confluent-kafka, enable.idempotence, acks=all): no duplicate and no lost acknowledged record', async () => {
    assert.ok(fs.existsSync(PYPI_PYTHON), `the test/compat venv is there: ${PYPI_PYTHON}`);
    const topic = 'idem-librdkafka';
    await createTopic(topic);
    const bootstrap = cluster.ports.map((p) => `127.0.0.1:${p}`).join(',');
    const producing = runProcess(PYPI_PYTHON, ['-c', PYTHON_PRODUCER, bootstrap, topic, String(RECORDS)], {
      timeoutMs: 180_000,
    });
    let finished = false;
    void producing.then(() => (finished = true));
    const crashed = await crashLeaderDuring(cluster, topic, () => !finished);
    const result = await producing;
    assert.equal(result.code, 0, `python producer: ${result.stderr}`);
    const summary = JSON.parse(result.stdout.toString()) as {
      acked: Record<string, number>;
      errors: string[];
      errorCount: number;
      unflushed: number;
    };
    assert.equal(summary.unflushed, 0, 'every message was delivered or failed');
    assert.equal(summary.errorCount, 0, `no delivery failed: ${summary.errors.join('; ')}`);
    const acked = new Map(Object.entries(summary.acked));
    assert.equal(acked.size, RECORDS);
    const hw = await settledHighWatermark(topic);
    assert.equal(hw, RECORDS, `the log holds exactly ${RECORDS} records (crashed broker ${crashed})`);
    assertExactlyOnce('librdkafka', acked, await consumeAll(kafka, topic, hw));
  });
});
