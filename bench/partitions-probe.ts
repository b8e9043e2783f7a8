/**
 * Probe of issue 13 item 4 ("cheap partitions") on one broker, Skiff or Kafka: start-up time, the first
 * consumer group's join time on a fresh broker (kafkajs: connect → GROUP_JOIN), the time and broker CPU
 * to create a topic of N partitions (CreateTopics until every leader is known), RSS afterwards, and
 * ProducerPerformance 1 KiB acks=1 over 10 partitions and over the N. A developer's probe for finding
 * where partition start-up goes; bench/compare-partitions.ts is the harness section.
 *
 * Usage: node dist/bench/partitions-probe.js [--kafka] [--partitions 1000] [--records 200000] [--delay 3000]
 *   [--no-produce] (--delay: group.initial.rebalance.delay.ms on either broker; numberArg wants it > 0, so 1 for none)
 */
import { Kafka, logLevel } from 'kafkajs';
import { cpuTimeMs, rssMiB } from './proc-cpu';
import { createTopic, initKafkaTools, numberArg, producePerformance } from './perf-tools';
import { startBrokerProcess } from '../test/helpers/broker-process';
import { startKafka } from '../test/helpers/kafka-fixture';

async function main(): Promise<void> {
  const useKafka = process.argv.includes('--kafka');
  const partitions = numberArg('--partitions', 1000);
  const records = numberArg('--records', 200_000);
  // Kafka's defaults (the fixture lowers both for tests): 50 __consumer_offsets partitions, a 3 s delay.
  const delayMs = numberArg('--delay', 3000);
  const groupProps = {
    'group.initial.rebalance.delay.ms': String(delayMs),
    'offsets.topic.num.partitions': '50',
  };
  const label = useKafka ? 'kafka' : 'skiff';
  const t0 = performance.now();
  let pid: number;
  let bootstrap: string;
  let stop: () => Promise<unknown>;
  if (useKafka) {
    const k = await startKafka({ overrides: groupProps });
    pid = k.pid;
    bootstrap = k.bootstrap;
    stop = () => k.stop();
  } else {
    const b = await startBrokerProcess({ overrides: groupProps });
    pid = b.proc.pid!;
    bootstrap = `127.0.0.1:${b.port}`;
    stop = () => b.stop();
  }
  const startMs = performance.now() - t0;
  const out: Record<string, number> = { startMs, startCpuMs: cpuTimeMs(pid), startRssMiB: rssMiB(pid) };
  try {
    const kafka = new Kafka({ brokers: [bootstrap], clientId: 'probe', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'join-t', numPartitions: 1 }], waitForLeaders: true });

    // First group join on the fresh broker.
    const cpuJoin0 = cpuTimeMs(pid);
    const consumer = kafka.consumer({ groupId: 'probe-group', sessionTimeout: 30_000 });
    const tJoin = performance.now();
    const joined = new Promise<number>((resolve) =>
      consumer.on(consumer.events.GROUP_JOIN, () => resolve(performance.now() - tJoin)),
    );
    await consumer.connect();
    await consumer.subscribe({ topic: 'join-t' });
    await consumer.run({ eachMessage: async () => undefined });
    out.firstJoinMs = await joined;
    out.firstJoinCpuMs = cpuTimeMs(pid) - cpuJoin0;
    await consumer.disconnect();

    // N partitions of one topic.
    const cpuCreate0 = cpuTimeMs(pid);
    const tCreate = performance.now();
    await admin.createTopics({
      topics: [{ topic: 'many', numPartitions: partitions }],
      waitForLeaders: true,
      timeout: 120_000,
    });
    out.createMs = performance.now() - tCreate;
    out.createCpuMs = cpuTimeMs(pid) - cpuCreate0;
    out.cpuPerPartitionMs = out.createCpuMs / partitions;
    // Past the replicas' first checkpoint tick (5 s), so the idle figure is steady state.
    await new Promise((r) => setTimeout(r, 6000));
    out.rssAfterCreateMiB = rssMiB(pid);
    out.idleCpuMsPerSec = await (async () => {
      const c0 = cpuTimeMs(pid);
      await new Promise((r) => setTimeout(r, 10_000));
      return (cpuTimeMs(pid) - c0) / 10;
    })();
    await admin.disconnect();

    if (!process.argv.includes('--no-produce')) {
      await initKafkaTools();
      const target = { label, bootstrap };
      await createTopic(target, 'ten', { partitions: 10 });
      for (const [name, topic] of [
        ['produce10', 'ten'],
        ['produceN', 'many'],
        ['produce10b', 'ten'],
        ['produceNb', 'many'],
      ] as const) {
        const r = await producePerformance(target, topic, { acks: '1', records, recordSize: 1024 });
        out[`${name}MBps`] = r.mbPerSec;
      }
      out.rssAfterProduceMiB = rssMiB(pid);
    }
  } finally {
    // A broker that does not stop in time is a figure too (1,000 partitions made the final checkpoints
    // time out before the log-dir actor coalesced them).
    const tStop = performance.now();
    out.stopOk = await stop().then(
      () => 1,
      () => 0,
    );
    out.stopMs = performance.now() - tStop;
    console.log(
      JSON.stringify({ broker: label, partitions, delayMs, ...out }, (_k, v: unknown) =>
        typeof v === 'number' ? Math.round(v * 10) / 10 : v,
      ),
    );
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
