/**
 * The three-node differential suite: a three-node KRaft Kafka (test/helpers/kafka-cluster.ts: a
 * combined broker+controller and two brokers, -Xmx384m each) and `skiff start --nodes 3
 * --fault-injection` (test/helpers/cluster-process.ts) run every scenario of
 * cluster-scenarios.ts with the same client code; the two JSON results must be equal except for
 * differences cluster-allowlist.ts tolerates.
 *
 * A long test (`npm run test:long`, or `node scripts/run-tests.js --long oracle/cluster`): three
 * JVMs and a Skiff cluster beside the rest of the suite do not fit a 2-core CI budget, and broker
 * restarts take Kafka several seconds each.
 *
 * SKIFF_ORACLE_OUT=<dir> writes each scenario's two results to <dir>/cluster-<scenario>.{kafka,skiff}.json.
 */
import * as fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startKafkaCluster, type KafkaCluster } from '../helpers/kafka-cluster';
import { startClusterProcess, type ClusterProcess } from '../helpers/cluster-process';
import { CLUSTER_ALLOWLIST } from './cluster-allowlist';
import { ClusterContext, type ClusterTarget } from './cluster-context';
import { CLUSTER_SCENARIOS } from './cluster-scenarios';
import { runDifferential, startSideBySide } from './differential-run';

const START_TIMEOUT_MS = 180_000;
const SCENARIO_TIMEOUT_MS = 240_000;
/**
 * Skiff with the settings the Kafka cluster runs with (kafka-cluster.ts): no initial rebalance
 * delay, one __consumer_offsets partition with RF 3.
 */
const SKIFF_AS_KAFKA_CLUSTER = {
  'group.initial.rebalance.delay.ms': '0',
  'offsets.topic.num.partitions': '1',
  'offsets.topic.replication.factor': '3',
};

describe('differential, three nodes: Apache Kafka (oracle) vs skiff --nodes 3', () => {
  let kafka: KafkaCluster | undefined;
  let skiff: ClusterProcess | undefined;
  let targets: { kafka: ClusterTarget; skiff: ClusterTarget };
  let baseTimestamp: number;
  const outDir = process.env.SKIFF_ORACLE_OUT;
  const usedEntries = new Set<string>();

  before(
    async () => {
      const started = Date.now();
      const [kc, sc] = await startSideBySide(
        startKafkaCluster({ startTimeoutMs: 150_000 }),
        startClusterProcess({ overrides: SKIFF_AS_KAFKA_CLUSTER }),
        (kf, sk) => {
          kafka = kf;
          skiff = sk;
        },
      );
      targets = {
        kafka: {
          name: 'kafka',
          address: (id) => kc.address(id),
          shutDown: (id) => kc.stopNode(id),
          start: (id) => kc.startNode(id),
        },
        skiff: {
          name: 'skiff',
          address: (id) => sc.address(id),
          shutDown: (id) => sc.stopBroker(id),
          start: (id) => sc.start(id),
        },
      };
      baseTimestamp = Math.floor((Date.now() - 60_000) / 1000) * 1000;
      if (outDir !== undefined) fs.mkdirSync(outDir, { recursive: true });
      console.log(
        `# oracle (3 nodes): Kafka at ${kc.bootstrap}, Skiff at ${sc.bootstrap} (admin ${sc.adminUrl}), both serving after ${Date.now() - started} ms`,
      );
    },
    { timeout: START_TIMEOUT_MS },
  );

  after(async () => {
    await Promise.allSettled([kafka?.stop(), skiff?.stop()]);
    const unused = CLUSTER_ALLOWLIST.filter((e) => !usedEntries.has(e.id)).map((e) => `${e.id} (${e.kind})`);
    if (unused.length > 0)
      console.log(`# oracle (3 nodes): allowlist entries that tolerated nothing in this run: ${unused.join(', ')}`);
  });

  for (const scenario of CLUSTER_SCENARIOS) {
    test(`${scenario.name}: ${scenario.about}`, { timeout: SCENARIO_TIMEOUT_MS }, async (t) => {
      await runDifferential(t, scenario, {
        targets,
        open: (target) => ClusterContext.open(target, baseTimestamp),
        outDir,
        outStem: `cluster-${scenario.name}`,
        allowlist: CLUSTER_ALLOWLIST,
        // No facts the cluster entries use: ids are the same on both sides (0..2), ports are checked in the scenarios.
        facts: {
          kafka: { nodeId: -1, port: -1, clusterId: kafka!.clusterId },
          skiff: { nodeId: -1, port: -1, clusterId: '' },
        },
        usedEntries,
      });
    });
  }
});
