/**
 * The differential suite: every scenario of scenarios.ts runs against Apache Kafka (the fixture,
 * test/helpers/kafka-fixture.ts) and against Skiff, with the same client code and the same
 * request versions; the two JSON results must be equal except for differences allowlist.ts
 * tolerates (each tolerated difference is printed as a test diagnostic).
 *
 * SKIFF_ORACLE_OUT=<dir> writes each scenario's two results to <dir>/<scenario>.{kafka,skiff}.json.
 */
import * as fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { KafkaClient } from '../../src/client';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { startKafka, type KafkaFixture } from '../helpers/kafka-fixture';
import { ALLOWLIST } from './allowlist';
import type { PairFacts } from './compare';
import { advertised, commonVersions, ScenarioContext, type Target, type VersionRanges } from './context';
import { SCENARIOS } from './scenarios';
import { runDifferential, startSideBySide } from './differential-run';

const START_TIMEOUT_MS = 150_000;
/**
 * The group settings scripts/kafka-fixture.sh gives Kafka, given to Skiff too so both brokers run
 * the same deployment: no initial rebalance delay (a first JoinGroup completes at once), and one
 * __consumer_offsets partition.
 */
const SKIFF_AS_FIXTURE = {
  'group.initial.rebalance.delay.ms': '0',
  'offsets.topic.num.partitions': '1',
  'offsets.topic.replication.factor': '1',
};
const SCENARIO_TIMEOUT_MS = 60_000;

async function describeBroker(
  bootstrap: string,
): Promise<{ ranges: VersionRanges; nodeId: number; port: number; clusterId: string }> {
  const client = await KafkaClient.connect({ brokers: bootstrap, clientId: 'skiff-oracle' });
  try {
    const md = await client.metadata([]);
    const broker = [...md.brokers.values()][0]!;
    return { ranges: advertised(client), nodeId: broker.nodeId, port: broker.port, clusterId: md.clusterId ?? '' };
  } finally {
    client.close();
  }
}

describe('differential: Apache Kafka (oracle) vs Skiff', () => {
  let kafka: KafkaFixture | undefined;
  let skiff: BrokerProcess | undefined;
  let targets: { kafka: Target; skiff: Target };
  let facts: PairFacts;
  let common: VersionRanges;
  let baseTimestamp: number;
  const outDir = process.env.SKIFF_ORACLE_OUT;
  const usedEntries = new Set<string>();

  before(
    async () => {
      const started = Date.now();
      const [k, s] = await startSideBySide(
        startKafka({ startTimeoutMs: 120_000 }),
        startBrokerProcess({ overrides: SKIFF_AS_FIXTURE }),
        (kf, sk) => {
          kafka = kf;
          skiff = sk;
        },
      );
      targets = {
        kafka: { name: 'kafka', bootstrap: k.bootstrap },
        skiff: { name: 'skiff', bootstrap: `127.0.0.1:${s.port}` },
      };
      const [dk, ds] = await Promise.all([
        describeBroker(targets.kafka.bootstrap),
        describeBroker(targets.skiff.bootstrap),
      ]);
      facts = {
        kafka: { nodeId: dk.nodeId, port: dk.port, clusterId: dk.clusterId },
        skiff: { nodeId: ds.nodeId, port: ds.port, clusterId: ds.clusterId },
      };
      common = commonVersions(dk.ranges, ds.ranges);
      baseTimestamp = Math.floor((Date.now() - 60_000) / 1000) * 1000;
      if (outDir !== undefined) fs.mkdirSync(outDir, { recursive: true });
      console.log(
        `# oracle: Kafka at ${targets.kafka.bootstrap}, Skiff at ${targets.skiff.bootstrap}, both serving after ${Date.now() - started} ms`,
      );
    },
    { timeout: START_TIMEOUT_MS },
  );

  after(async () => {
    await Promise.allSettled([kafka?.stop(), skiff?.stop()]);
    const unused = ALLOWLIST.filter((e) => !usedEntries.has(e.id)).map((e) => `${e.id} (${e.kind})`);
    if (unused.length > 0)
      console.log(
        `# oracle: allowlist entries that tolerated nothing in this run (remove fixed gaps): ${unused.join(', ')}`,
      );
  });

  for (const scenario of SCENARIOS) {
    test(`${scenario.name}: ${scenario.about}`, { timeout: SCENARIO_TIMEOUT_MS }, async (t) => {
      await runDifferential(t, scenario, {
        targets,
        open: (target) => ScenarioContext.open(target, common, baseTimestamp),
        outDir,
        outStem: scenario.name,
        allowlist: ALLOWLIST,
        facts,
        usedEntries,
      });
    });
  }
});
