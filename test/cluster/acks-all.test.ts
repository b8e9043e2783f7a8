/**
 * acks=all against a real three-broker Skiff (`skiff start --nodes 3 --fault-injection`), RF = 3,
 * min.insync.replicas = 2, with real clients (confluent-kafka from PyPI, librdkafka 2.x) and Skiff's own
 * client for exact error codes. Brokers are crashed and started through the admin HTTP API (issue 11,
 * "Tests that must exist and pass").
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { KafkaClient, KafkaError, Producer } from '../../src/client';
import { ErrorCode } from '../../src/protocol/error-codes';
import { readAll } from '../helpers/consume-all';
import { startClusterProcess, table, type ClusterProcess } from '../helpers/cluster-process';
import { createReplicatedTopic, indexOf, prefixBelow, startProducer, valueOf } from './cluster-checks';

const TEST_TIMEOUT_MS = 180_000;

describe('acks=all on a 3-broker cluster, RF=3, min.insync.replicas=2', () => {
  let cluster: ClusterProcess;

  before(async () => {
    cluster = await startClusterProcess();
  });
  after(async () => {
    await cluster?.stop();
  });

  test(
    "an idempotent acks=all producer (confluent-kafka) sends 50,000 keyed records while the leader's broker is crashed and started: every acked record is read exactly once at its acked offset, and the three replicas' logs are byte-identical below the HW",
    { timeout: TEST_TIMEOUT_MS },
    async (t) => {
      const topic = 'acks-all-failover';
      const partitions = 3;
      const count = 50_000;
      await createReplicatedTopic(cluster, topic, partitions, { 'min.insync.replicas': '2' });
      const producer = startProducer({
        bootstrap: cluster.bootstrap,
        topic,
        count,
        acks: -1,
        idempotent: true,
        rate: 8_000,
        timeoutS: 120,
      });
      await producer.reported(10_000);
      const victim = (await cluster.partition(topic, 0)).leader;
      await cluster.crash(victim);
      await cluster.waitForPartitions(
        (ps) => ps.filter((p) => p.topic === topic).every((p) => p.leader !== victim && !p.isr.includes(victim)),
        `broker ${victim} out of every ISR of ${topic} and leading none`,
      );
      const leaderAfterCrash = (await cluster.partition(topic, 0)).leader;
      await producer.reported(25_000);
      await cluster.start(victim);
      const result = await producer.done;
      t.diagnostic(`crashed broker ${victim} (leader of ${topic}-0; then ${leaderAfterCrash}) at >= 10,000 reports`);

      assert.deepEqual(result.errors, [], 'no delivery failed');
      assert.equal(result.acks.length, count, 'every record acked');
      const inSync = await cluster.waitForInSync(topic);

      const stored = await readAll(cluster.bootstrap, topic, [0, 1, 2]);
      const at = new Map(stored.map((r) => [`${r.partition}/${r.offset}`, r]));
      const timesStored = new Map<string, number>();
      for (const r of stored) {
        const v = r.value?.toString('utf8') ?? 'null';
        timesStored.set(v, (timesStored.get(v) ?? 0) + 1);
      }
      for (const [index, partition, offset] of result.acks) {
        const r = at.get(`${partition}/${offset}`);
        assert.equal(r?.value?.toString('utf8'), valueOf(index), `record ${index} at its acked ${partition}/${offset}`);
        assert.equal(r?.key?.toString('utf8'), `k-${index % 1000}`, `key of record ${index}`);
        assert.equal(timesStored.get(valueOf(index)), 1, `record ${index} stored exactly once`);
      }
      assert.equal(stored.length, count, 'nothing stored but the acked records');
      assert.ok(
        stored.every((r) => indexOf(r.value?.toString('utf8') ?? '') >= 0),
        'every stored value is one the producer sent',
      );

      for (const p of inSync) {
        const hw = p.perReplica.find((r) => r.brokerId === p.leader)!.highWatermark;
        const prefixes = p.replicas.map((id) => prefixBelow(cluster.segmentBytes(id, topic, p.partition), hw));
        t.diagnostic(`${topic}-${p.partition}: HW ${hw}, ${prefixes[0]!.length} bytes below it on each replica`);
        assert.ok(hw > 0, `${topic}-${p.partition} holds records`);
        for (let i = 1; i < prefixes.length; i++)
          assert.ok(
            prefixes[i]!.equals(prefixes[0]!),
            `${topic}-${p.partition}: node-${p.replicas[i]}'s log differs from node-${p.replicas[0]}'s below HW ${hw}` +
              ` (${prefixes[i]!.length} vs ${prefixes[0]!.length} bytes)`,
          );
      }
    },
  );

  test(
    'with two of three brokers down acks=all gets NOT_ENOUGH_REPLICAS (Skiff client: the Produce error code; confluent-kafka with retries=0: its delivery report), and succeeds once one broker returns',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const topic = 'acks-all-not-enough';
      await createReplicatedTopic(cluster, topic, 1, { 'min.insync.replicas': '2' });
      const leader = (await cluster.partition(topic, 0)).leader;
      const others = [0, 1, 2].filter((id) => id !== leader);
      for (const id of others) await cluster.crash(id);
      await cluster.waitForPartitions(
        (ps) => ps.some((p) => p.topic === topic && p.leader === leader && p.isr.join() === String(leader)),
        `${topic}-0: ISR shrunk to the leader ${leader} alone`,
      );

      const client = await KafkaClient.connect({ brokers: `127.0.0.1:${cluster.ports[leader]}` });
      try {
        const sendOne = async (acks: -1 | 1, value: string): Promise<Error | null> => {
          const producer = new Producer(client, { acks, requestTimeoutMs: 10_000, retries: 0 });
          let outcome: Error | null | undefined;
          await producer.send({ topic, partition: 0, key: 'k', value }, (err) => (outcome = err));
          await producer.flush();
          assert.notEqual(outcome, undefined, 'the send was answered');
          return outcome ?? null;
        };
        const refused = await sendOne(-1, 'refused');
        assert.ok(refused instanceof KafkaError, `acks=all with ISR [${leader}] failed with a KafkaError: ${refused}`);
        assert.equal(refused.code, ErrorCode.NOT_ENOUGH_REPLICAS, refused.message);
        assert.equal(await sendOne(1, 'acks-1-while-isr-is-1'), null, 'acks=1 needs the leader only');

        const viaLibrdkafka = await startProducer({
          bootstrap: `127.0.0.1:${cluster.ports[leader]}`,
          topic,
          count: 1,
          acks: -1,
          retries: 0,
          partition: 0,
          timeoutS: 30,
        }).done;
        assert.deepEqual(viaLibrdkafka.acks, []);
        assert.deepEqual(viaLibrdkafka.errors, [[0, 'NOT_ENOUGH_REPLICAS']]);

        const returning = others[0]!;
        await cluster.start(returning);
        await cluster.waitForPartitions(
          (ps) => ps.some((p) => p.topic === topic && p.isr.length === 2 && p.isr.includes(returning)),
          `${topic}-0: broker ${returning} back in the ISR`,
        );
        assert.equal(await sendOne(-1, 'accepted'), null, `acks=all with ISR of 2 succeeds`);
        const afterReturn = await startProducer({
          bootstrap: cluster.bootstrap,
          topic,
          count: 100,
          acks: -1,
          idempotent: true,
          partition: 0,
          timeoutS: 30,
        }).done;
        assert.deepEqual(afterReturn.errors, []);
        assert.equal(afterReturn.acks.length, 100);

        await cluster.start(others[1]!);
        const [p] = await cluster.waitForInSync(topic);
        const values = (await readAll(cluster.bootstrap, topic, [0])).map((r) => r.value?.toString('utf8'));
        assert.deepEqual(
          values,
          ['acks-1-while-isr-is-1', 'accepted', ...Array.from({ length: 100 }, (_, i) => valueOf(i))],
          `the refused records are not in the log; the others are, in order\n${table([p!])}`,
        );
      } finally {
        client.close();
      }
    },
  );
});
