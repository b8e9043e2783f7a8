/**
 * The `skiff` CLI's clients ride through a broker crash as Kafka's clients do, against
 * `skiff start --nodes 3 --port 0 --fault-injection` (src/client/retry.ts, producer.ts, consumer.ts,
 * group-member.ts):
 * - `skiff produce --acks -1` of 2,000 keyed lines piped slowly while the leader of partition 0's broker
 *   is crashed and started: exit 0, one summary of 2,000 acknowledged, and the log holds each line
 *   exactly once (the producer is idempotent with acks=-1, so a batch resent after a lost response is
 *   answered as a duplicate);
 * - `skiff consume --group` across a crash of its coordinator's broker: reads every record, prints its
 *   `group G: committed ...` line with the end offsets, exit 0 at `-n N`;
 * - with a broker down, plain `skiff consume` reads everything and `skiff topic describe` of a topic
 *   whose only replica is on it shows LEADER `none` and `-` offsets (kafka-topics' `Leader: none`).
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { KafkaClient } from '../../src/client/client';
import { findGroupCoordinator } from '../../src/client/group-admin';
import { Producer } from '../../src/client/producer';
import { startClusterProcess, type ClusterProcess } from '../helpers/cluster-process';
import { readAll } from '../helpers/consume-all';
import { runCommand, SKIFF_BIN, type RunResult } from '../helpers/run-command';
import { createReplicatedTopic } from './cluster-checks';

const LINES = 2_000;

/** Runs `skiff args` with stdin written by `feed` (then closed); SIGKILLed after `timeoutMs`. */
function skiffFed(
  args: string[],
  feed: (write: (s: string) => Promise<void>) => Promise<void>,
  timeoutMs: number,
): Promise<RunResult> {
  const child = spawn(process.execPath, [SKIFF_BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const exited = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  const write = (s: string): Promise<void> =>
    new Promise((resolve, reject) => child.stdin.write(s, (err) => (err ? reject(err) : resolve())));
  return feed(write)
    .finally(() => child.stdin.end())
    .then(() => exited);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Produces `count` values `prefix-i` to `topic` with Skiff's client (acks=-1, retries). */
async function produceValues(bootstrap: string, topic: string, prefix: string, count: number): Promise<void> {
  const client = await KafkaClient.connect({ brokers: bootstrap });
  try {
    const producer = new Producer(client, { acks: -1 });
    await Promise.all(
      Array.from({ length: count }, (_, i) => producer.produce({ topic, key: `k${i}`, value: `${prefix}-${i}` })),
    );
    await producer.close();
  } finally {
    client.close();
  }
}

describe('the skiff CLI across broker crashes (--nodes 3)', { timeout: 300_000 }, () => {
  let cluster: ClusterProcess;

  before(async () => {
    cluster = await startClusterProcess({ overrides: { 'min.insync.replicas': '2' } });
  });
  after(async () => {
    await cluster?.stop();
  });

  test('skiff produce --acks -1 of 2,000 slow lines across a crash and start of the leader: all acknowledged, each once', async () => {
    await createReplicatedTopic(cluster, 'orders', 3);
    const leader = (await cluster.partition('orders', 0)).leader;
    assert.ok(leader >= 0);
    let crashed = false;
    const run = await skiffFed(
      ['produce', 'orders', '-k', ':', '--acks', '-1', '--brokers', cluster.bootstrap],
      async (write) => {
        for (let chunk = 0; chunk < 40; chunk++) {
          let text = '';
          for (let i = chunk * 50; i < (chunk + 1) * 50; i++) text += `key-${i % 97}:line-${i}\n`;
          await write(text);
          await sleep(75);
          if (chunk === 10) {
            await cluster.crash(leader);
            crashed = true;
          }
          if (chunk === 25) await cluster.start(leader);
        }
      },
      180_000,
    );
    assert.ok(crashed);
    assert.equal(run.code, 0, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    assert.match(run.stdout, new RegExp(`^produced ${LINES} records to orders: partition 0 offsets `, 'm'));
    assert.doesNotMatch(run.stdout, /failed/);
    assert.doesNotMatch(run.stderr, /records failed/);

    await cluster.waitForInSync('orders', 60_000);
    const records = await readAll(cluster.bootstrap, 'orders', [0, 1, 2]);
    const seen = new Map<string, number>();
    for (const r of records) {
      const value = r.value?.toString('utf8') ?? '';
      seen.set(value, (seen.get(value) ?? 0) + 1);
    }
    const missing = Array.from({ length: LINES }, (_, i) => `line-${i}`).filter((v) => !seen.has(v));
    const twice = [...seen].filter(([, n]) => n > 1).map(([v]) => v);
    assert.deepEqual(missing, [], 'every line is in the log');
    assert.deepEqual(twice, [], 'no line is in the log twice (idempotent producer)');
    assert.equal(records.length, LINES);
  });

  test('skiff consume --group across a crash of its coordinator: everything read, committed line printed, exit 0', async () => {
    const topic = 'orders-g';
    const group = 'g2';
    await createReplicatedTopic(cluster, topic, 3);
    await produceValues(cluster.bootstrap, topic, 'before', 300);
    const client = await KafkaClient.connect({ brokers: cluster.bootstrap });
    let coordinator: number;
    try {
      coordinator = await findGroupCoordinator(client, group);
    } finally {
      client.close();
    }
    const child = spawn(
      process.execPath,
      [SKIFF_BIN, 'consume', topic, '--group', group, '--from-beginning', '-n', '600', '--brokers', cluster.bootstrap],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      for (let i = 0; i < 600 && stdout.split('\n').length - 1 < 300; i++) await sleep(100);
      assert.equal(stdout.split('\n').length - 1, 300, `the first 300 were read before the crash: ${stderr}`);
      await cluster.crash(coordinator);
      await produceValues(cluster.bootstrap, topic, 'after', 300);
      const code = await exited;
      assert.equal(code, 0, `stderr: ${stderr}`);
    } finally {
      clearTimeout(timer);
      child.kill('SIGKILL');
      await cluster.start(coordinator);
    }
    const values = stdout.split('\n').filter((l) => l !== '');
    assert.equal(values.length, 600);
    const distinct = new Set(values);
    for (let i = 0; i < 300; i++) {
      assert.ok(distinct.has(`before-${i}`), `before-${i}`);
      assert.ok(distinct.has(`after-${i}`), `after-${i}`);
    }
    const line = /^group g2: committed (.+) \(--commit auto, \d+ commits?\)$/m.exec(stderr);
    assert.ok(line, `the committed line: ${stderr}`);
    const committed = new Map(
      line[1]!.split(' ').map((pair) => {
        const [tp, offset] = pair.split('=');
        return [tp!, Number(offset)];
      }),
    );
    assert.deepEqual([...committed.keys()].sort(), [`${topic}/0`, `${topic}/1`, `${topic}/2`]);
    assert.equal(
      [...committed.values()].reduce((a, b) => a + b, 0),
      600,
      'the commits are at the end of every partition',
    );
  });

  test('with a broker down: plain skiff consume reads everything, topic describe shows a leaderless partition as none', async () => {
    const client = await KafkaClient.connect({ brokers: cluster.bootstrap });
    let down: number;
    try {
      const [r] = await client.createTopics([{ name: 'lonely', numPartitions: 1, replicationFactor: 1 }]);
      assert.equal(r?.errorCode, 0, r?.errorMessage ?? '');
      await cluster.waitForPartitions(
        (ps) => ps.some((p) => p.topic === 'lonely' && p.leader >= 0),
        'lonely has a leader',
      );
      down = (await cluster.partition('lonely', 0)).leader;
    } finally {
      client.close();
    }
    await cluster.crash(down);
    try {
      await cluster.waitForPartitions(
        (ps) => ps.some((p) => p.topic === 'lonely' && p.leader < 0),
        'lonely has no leader',
      );
      const consumed = await runCommand(
        process.execPath,
        [SKIFF_BIN, 'consume', 'orders', '--from-beginning', '-n', String(LINES), '--brokers', cluster.bootstrap],
        '',
        { timeoutMs: 60_000 },
      );
      assert.equal(consumed.code, 0, consumed.stderr);
      assert.equal(consumed.stdout.split('\n').filter((l) => l.startsWith('line-')).length, LINES);

      const described = await runCommand(
        process.execPath,
        [SKIFF_BIN, 'topic', 'describe', 'lonely', '--brokers', cluster.bootstrap],
        '',
        { timeoutMs: 60_000 },
      );
      assert.equal(described.code, 0, described.stderr);
      const row = described.stdout.split('\n').find((l) => /^0\s/.test(l));
      assert.ok(row, described.stdout);
      assert.deepEqual(row.trim().split(/\s+/).slice(0, 2), ['0', 'none'], row);
      assert.deepEqual(row.trim().split(/\s+/).slice(-3), ['-', '-', '-'], row);
    } finally {
      await cluster.start(down);
    }
  });
});
