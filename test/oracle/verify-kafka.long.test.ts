/**
 * `skiff verify --bootstrap` against Apache Kafka (issue 12 item 7): the real-client workload and the
 * client-side checks against the three-node KRaft fixture (test/helpers/kafka-cluster.ts) while
 * brokers 1 and 2 are bounced cleanly (SIGTERM: a controlled shutdown) and hard (SIGKILL), through
 * the fixture's own functions as a callbacks driver (node 0 is the only controller voter, so it stays
 * up), with librdkafka and Java producers and group members. Kafka keeps its guarantees under these faults, so any violation here is a bug in the checker.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runRealVerify } from '../../src/verify/real/run';
import { formatCounts } from '../cluster/chaos-format';
import { startKafkaCluster, type KafkaCluster } from '../helpers/kafka-cluster';

describe('skiff verify --bootstrap against a three-node Kafka with clean and hard bounces', () => {
  let kafka: KafkaCluster | undefined;
  let startedMs = 0;
  before(
    async () => {
      startedMs = Date.now();
      kafka = await startKafkaCluster({ startTimeoutMs: 150_000 });
    },
    { timeout: 160_000 },
  );
  after(async () => {
    await kafka?.stop();
  });

  test('the checker reports no violation; both bounce kinds were caused', { timeout: 240_000 }, async (t) => {
    const cluster = kafka;
    assert.ok(cluster !== undefined, 'the Kafka fixture started');
    t.diagnostic(`Kafka fixture up after ${Date.now() - startedMs} ms`);
    const progress: string[] = [];
    const runStarted = Date.now();
    const report = await runRealVerify(
      {
        bootstrap: cluster.bootstrap,
        durationS: 25,
        clients: ['librdkafka', 'java'],
        faults: {
          kind: 'callbacks',
          brokers: [1, 2],
          stop: (id) => cluster.stopNode(id),
          kill: (id) => cluster.kill9Node(id),
          start: (id) => cluster.startNode(id),
        },
        faultKinds: ['broker-stop', 'process-kill'],
        seed: 7,
        topicPrefix: 'verify-kafka',
        replicationFactor: 3,
      },
      { progress: (line) => progress.push(line) },
    );
    t.diagnostic(`run ${Date.now() - runStarted} ms; ${formatCounts(report)}`);
    const context = `${JSON.stringify(report, null, 1)}\n${progress.join('\n')}`;
    assert.deepEqual(report.violations, [], context);
    assert.ok((report.faults['broker-stop'] ?? 0) > 0, context);
    assert.ok((report.faults['process-kill'] ?? 0) > 0, context);
    for (const strategy of ['acks=all', 'acks=all idempotent'] as const) {
      const s = report.strategies.find((x) => x.strategy === strategy);
      assert.ok(s !== undefined && s.records > 0, `${strategy} acknowledged records\n${context}`);
      assert.equal(s.lost, 0, context);
    }
    assert.ok((report.checks['acks-all-durable'] ?? 0) > 0, context);
    assert.ok((report.checks['committed-offsets-durable'] ?? 0) > 0, context);
    assert.equal(report.checks['log-matching'], undefined, 'no data dir: no log matching against Kafka');
  });
});
