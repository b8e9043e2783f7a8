/**
 * The steps the two differential suites share (differential.test.ts: one broker on each side;
 * cluster.long.test.ts: three nodes on each side): start Apache Kafka and Skiff side by side, run one
 * scenario on both with the same client code, write the two results, and assert that every
 * difference between them is one the allowlist tolerates (each tolerated one printed as a test
 * diagnostic).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { applyAllowlist, diffJson, formatDiffs, type AllowlistEntry, type PairFacts } from './compare';
import type { Json } from './context';

/**
 * Awaits both starts together. Each side that did start is handed to `started` first (so the
 * suite's `after` stops it), then the first failure, Kafka's before Skiff's, is rethrown.
 */
export async function startSideBySide<K, S>(
  kafka: Promise<K>,
  skiff: Promise<S>,
  started: (kafka: K | undefined, skiff: S | undefined) => void,
): Promise<[K, S]> {
  const [k, s] = await Promise.allSettled([kafka, skiff]);
  started(k.status === 'fulfilled' ? k.value : undefined, s.status === 'fulfilled' ? s.value : undefined);
  if (k.status === 'rejected') throw k.reason;
  if (s.status === 'rejected') throw s.reason;
  return [k.value, s.value];
}

/** How one suite runs a scenario on a side and judges the difference. */
export interface DifferentialRun<T extends { name: string }, C extends { close(): void }> {
  targets: { kafka: T; skiff: T };
  /** A scenario context on one side; closed after the scenario. */
  open(target: T): Promise<C>;
  /** SKIFF_ORACLE_OUT: where `<outStem>.{kafka,skiff}.json` go, if set. */
  outDir: string | undefined;
  outStem: string;
  allowlist: readonly AllowlistEntry[];
  facts: PairFacts;
  /** Collects the ids of the allowlist entries that tolerated something (for the unused-entry report). */
  usedEntries: Set<string>;
}

/**
 * Runs `scenario` on both sides at once (a failure names the side), writes the results when
 * `outDir` is set, and fails the test with every difference no allowlist entry tolerates.
 */
export async function runDifferential<T extends { name: string }, C extends { close(): void }>(
  t: TestContext,
  scenario: { name: string; run(ctx: C): Promise<Json> },
  o: DifferentialRun<T, C>,
): Promise<void> {
  const runOn = async (target: T): Promise<Json> => {
    const ctx = await o.open(target);
    try {
      return await scenario.run(ctx);
    } catch (e) {
      throw new Error(`scenario ${scenario.name} failed on ${target.name}: ${(e as Error).stack ?? e}`, {
        cause: e,
      });
    } finally {
      ctx.close();
    }
  };
  const [onKafka, onSkiff] = await Promise.all([runOn(o.targets.kafka), runOn(o.targets.skiff)]);
  if (o.outDir !== undefined) {
    fs.writeFileSync(path.join(o.outDir, `${o.outStem}.kafka.json`), JSON.stringify(onKafka, null, 2));
    fs.writeFileSync(path.join(o.outDir, `${o.outStem}.skiff.json`), JSON.stringify(onSkiff, null, 2));
  }
  const { tolerated, failing } = applyAllowlist(scenario.name, diffJson(onKafka, onSkiff), o.allowlist, o.facts);
  for (const { entry } of tolerated) o.usedEntries.add(entry.id);
  for (const { diff, entry } of tolerated)
    t.diagnostic(
      `tolerated (${entry.id}) ${diff.path}: kafka ${JSON.stringify(diff.kafka)}, skiff ${JSON.stringify(diff.skiff)}`,
    );
  assert.equal(
    failing.length,
    0,
    `${scenario.name}: ${failing.length} difference(s) between Kafka and Skiff that no allowlist entry tolerates:\n${formatDiffs(failing)}`,
  );
}
