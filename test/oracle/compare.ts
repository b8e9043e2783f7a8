/**
 * Deep comparison of two scenario results (Kafka's and Skiff's) into leaf differences, and the
 * split of those into tolerated (an allowlist entry matches and its check passes) and not.
 */
import type { Json } from './context';

/** One leaf where the two results differ. `undefined` = absent on that side. */
export interface Difference {
  /** e.g. `created[0].error`, `apis.Produce.maxVersion`. */
  path: string;
  kafka: Json | undefined;
  skiff: Json | undefined;
}

/** Facts about the two brokers that allowlist checks may use. */
export interface PairFacts {
  kafka: { nodeId: number; port: number; clusterId: string };
  skiff: { nodeId: number; port: number; clusterId: string };
}

/** A tolerated difference: which scenario and path, why, and (optionally) a check of the values. */
export interface AllowlistEntry {
  /** Short unique name, shown in the test output. */
  id: string;
  /** Scenario name or pattern; omitted = every scenario. */
  scenario?: string | RegExp;
  /** Matched against the difference's path. */
  path: RegExp;
  /** Why the difference is acceptable (or: what is still to do). */
  reason: string;
  /** Further condition on the two values; the difference is tolerated only when it returns true. */
  check?: (kafka: Json | undefined, skiff: Json | undefined, facts: PairFacts, diff: Difference) => boolean;
}

/** Leaf differences between `kafka` and `skiff`, in path order. */
export function diffJson(kafka: Json | undefined, skiff: Json | undefined, path = ''): Difference[] {
  if (kafka === skiff) return [];
  if (Array.isArray(kafka) && Array.isArray(skiff)) {
    const out: Difference[] = [];
    if (kafka.length !== skiff.length) out.push({ path: `${path}.length`, kafka: kafka.length, skiff: skiff.length });
    for (let i = 0; i < Math.max(kafka.length, skiff.length); i++)
      out.push(...diffJson(kafka[i], skiff[i], `${path}[${i}]`));
    return out;
  }
  if (isObject(kafka) && isObject(skiff)) {
    const out: Difference[] = [];
    const keys = [...new Set([...Object.keys(kafka), ...Object.keys(skiff)])].sort();
    for (const key of keys) out.push(...diffJson(kafka[key], skiff[key], path === '' ? key : `${path}.${key}`));
    return out;
  }
  return [{ path: path === '' ? '(root)' : path, kafka, skiff }];
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Splits `diffs` into tolerated ones (with the entry that tolerates each) and the rest. */
export function applyAllowlist(
  scenario: string,
  diffs: readonly Difference[],
  allowlist: readonly AllowlistEntry[],
  facts: PairFacts,
): { tolerated: Array<{ diff: Difference; entry: AllowlistEntry }>; failing: Difference[] } {
  const tolerated: Array<{ diff: Difference; entry: AllowlistEntry }> = [];
  const failing: Difference[] = [];
  for (const diff of diffs) {
    const entry = allowlist.find(
      (e) =>
        scenarioMatches(e, scenario) &&
        e.path.test(diff.path) &&
        (e.check === undefined || e.check(diff.kafka, diff.skiff, facts, diff)),
    );
    if (entry !== undefined) tolerated.push({ diff, entry });
    else failing.push(diff);
  }
  return { tolerated, failing };
}

function scenarioMatches(entry: AllowlistEntry, scenario: string): boolean {
  if (entry.scenario === undefined) return true;
  return typeof entry.scenario === 'string' ? entry.scenario === scenario : entry.scenario.test(scenario);
}

/** One line per difference, for failure messages. */
export function formatDiffs(diffs: readonly Difference[]): string {
  return diffs.map((d) => `  ${d.path}: kafka ${show(d.kafka)}, skiff ${show(d.skiff)}`).join('\n');
}

function show(v: Json | undefined): string {
  if (v === undefined) return '(absent)';
  const s = JSON.stringify(v);
  return s.length > 300 ? `${s.slice(0, 300)}...` : s;
}
