/**
 * Idempotent producers of real clients across a hard crash of the partition leader's broker (issue 11
 * item 6): a real `skiff start --nodes 3 --port 0 --fault-injection` process (test/helpers/cluster-process.ts),
 * a topic with RF=3 and min.insync.replicas=2, and per client (kafkajs; librdkafka through confluent-kafka
 * in the Python venv of test/compat; Apache Kafka's Java client, `SkiffJavaClient produce` as
 * test/compat/java-client.ts compiles it) an idempotent acks=all producer sending N keyed records while the
 * test crashes the leader's broker through the admin API (POST /v1/brokers/{id}/crash) and starts it again.
 * Then every replica's HW is N and everything is consumed: no key appears twice (no duplicate) and every
 * acknowledged record is there, at the offset it was acknowledged with (no loss). About 50 s in all.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { makeTempDir, PYPI_PYTHON, repoRoot, runProcess } from '../compat/clients';
import {
  compileJavaClient,
  describeJavaRun,
  javaArgs,
  JAVA_LOG_LINE,
  readJavaAcks,
  resolveJavaLib,
} from '../compat/java-client';
import { record, writeRecordFile } from '../compat/record-file';
import { startClusterProcess, type AdminPartition, type ClusterProcess } from '../helpers/cluster-process';

/** Records per client: a few thousand, well under a minute each. */
const RECORDS = 3000;

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

/** `topic`-0 in a /v1/partitions answer. */
function partition0(ps: readonly AdminPartition[], topic: string): AdminPartition | undefined {
  return ps.find((p) => p.topic === topic && p.partition === 0);
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
  await cluster.waitForPartitions(
    (ps) => {
      const p = partition0(ps, topic);
      const leader = p?.perReplica.find((r) => r.brokerId === p.leader);
      return leader !== undefined && leader.logEndOffset >= RECORDS / 10;
    },
    'a tenth of the records in the leader log',
    60_000,
  );
  const before = await cluster.partition(topic, 0);
  assert.ok(stillProducing(), 'the crash lands while the producer is still sending');
  await cluster.crash(before.leader);
  await cluster.waitForPartitions(
    (ps) => {
      const p = partition0(ps, topic);
      return p !== undefined && p.leader >= 0 && p.leader !== before.leader;
    },
    'a new leader',
    20_000,
  );
  await sleep(1000);
  await cluster.start(before.leader);
  await cluster.waitForPartitions(
    (ps) => partition0(ps, topic)?.isr.includes(before.leader) === true,
    'the crashed broker back in the ISR',
    60_000,
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

/** The line `SkiffJavaClient produce` prints per topic (the fields read here). */
interface JavaProduceSummary {
  cmd: string;
  topic: string;
  errors: number;
  firstError: string | null;
  elapsedMs: number;
  recordRetryTotal: number;
}

describe('idempotent producers across a leader broker crash (real clients, --nodes 3)', () => {
  let cluster: ClusterProcess;
  let kafka: Kafka;

  before(async () => {
    cluster = await startClusterProcess();
    kafka = new Kafka({
      clientId: 'idempotence-failover',
      brokers: cluster.bootstrap.split(','),
      logLevel: logLevel.NOTHING,
      retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 },
    });
  });

  after(async () => {
    await cluster?.stop();
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
    await cluster.waitForPartitions(
      (ps) => {
        const p = partition0(ps, topic);
        return p !== undefined && p.leader >= 0 && p.isr.length === 3;
      },
      `${topic} with three in-sync replicas`,
      20_000,
    );
  }

  /**
   * The HW once every replica has caught up (full ISR, every replica's LEO and HW at the leader's LEO), so
   * the consumer's target is final; asserts it is `RECORDS` on every replica.
   */
  async function assertSettledHighWatermark(topic: string, crashed: number): Promise<number> {
    const [p] = await cluster.waitForInSync(topic, 30_000);
    assert.ok(p !== undefined, `${topic}-0 is listed`);
    assert.deepEqual(
      p.perReplica.map((r) => [r.brokerId, r.highWatermark]).sort((a, b) => a[0]! - b[0]!),
      [...p.replicas].sort((a, b) => a - b).map((id) => [id, RECORDS]),
      `every replica's log holds exactly ${RECORDS} records below its HW (crashed broker ${crashed})`,
    );
    return RECORDS;
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
    const hw = await assertSettledHighWatermark(topic, crashed);
    assertExactlyOnce('kafkajs', acked, await consumeAll(kafka, topic, hw));
  });

  test('librdkafka (confluent-kafka, enable.idempotence, acks=all): no duplicate and no lost acknowledged record', async () => {
    assert.ok(fs.existsSync(PYPI_PYTHON), `the test/compat venv is there: ${PYPI_PYTHON}`);
    const topic = 'idem-librdkafka';
    await createTopic(topic);
    const producing = runProcess(PYPI_PYTHON, ['-c', PYTHON_PRODUCER, cluster.bootstrap, topic, String(RECORDS)], {
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
    const hw = await assertSettledHighWatermark(topic, crashed);
    assertExactlyOnce('librdkafka', acked, await consumeAll(kafka, topic, hw));
  });

  test('Java kafka-clients (enable.idempotence=true, acks=all): no duplicate and no lost acknowledged record', async (t) => {
    const lib = await resolveJavaLib();
    const classes = await compileJavaClient(lib);
    const topic = 'idem-java';
    await createTopic(topic);
    const work = makeTempDir('idem-java');
    try {
      const input = path.join(work, 'input.krec');
      writeRecordFile(
        input,
        Array.from({ length: RECORDS }, (_, i) => ({ ...record(`k${i}`, `v${i}`), partition: 0 })),
      );
      const configs: Record<string, string> = {
        'enable.idempotence': 'true',
        acks: 'all',
        'max.in.flight.requests.per.connection': '5',
        'linger.ms': '2',
        'batch.size': '1024', // a few dozen records a batch: many batches in flight across the crash
        'delivery.timeout.ms': '120000',
        'request.timeout.ms': '10000',
        'retry.backoff.ms': '100',
      };
      const args = [
        ...javaArgs(lib, classes, { timeoutMs: 60_000, maxHeap: '256m' }),
        'produce',
        '--bootstrap',
        cluster.bootstrap,
        '--input',
        input,
        '--out-dir',
        work,
        '--target',
        `${topic}=none`,
        // 20 records every 20 ms: about three seconds of sending, so the crash lands among them.
        '--pace-every',
        '20',
        '--pace-ms',
        '20',
        ...Object.entries(configs).flatMap(([k, v]) => ['--config', `${k}=${v}`]),
      ];
      const producing = runProcess('java', args, { timeoutMs: 150_000, cwd: repoRoot() });
      let finished = false;
      void producing.then(() => (finished = true));
      const crashed = await crashLeaderDuring(cluster, topic, () => !finished);
      const r = await producing;
      if (r.code !== 0 || r.timedOut) assert.fail(describeJavaRun('java SkiffJavaClient produce', r));
      const summary = r.stdout
        .toString('utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as JavaProduceSummary)
        .find((l) => l.cmd === 'produce' && l.topic === topic);
      assert.ok(summary !== undefined, `no produce summary\n${describeJavaRun('java produce', r)}`);
      const warnings = r.stderr.split('\n').filter((l) => JAVA_LOG_LINE.test(l));
      assert.equal(summary.errors, 0, `no send failed: ${summary.firstError}\n${warnings.slice(-20).join('\n')}`);
      t.diagnostic(
        `crashed broker ${crashed}; Java producer ${summary.elapsedMs} ms, ${summary.recordRetryTotal} record retries, ` +
          `${warnings.length} client warnings`,
      );
      const acks = readJavaAcks(path.join(work, `${topic}.acks`));
      assert.equal(acks.length, RECORDS, 'one delivery report per record');
      const acked = new Map<string, number>();
      acks.forEach(([partition, offset], i) => {
        assert.equal(partition, 0, `record ${i}: acknowledged on partition 0`);
        assert.ok(offset >= 0, `record ${i}: acknowledged with an offset (${offset})`);
        acked.set(`k${i}`, offset);
      });
      const hw = await assertSettledHighWatermark(topic, crashed);
      assertExactlyOnce('java', acked, await consumeAll(kafka, topic, hw));
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
