/**
 * "Did you mean" support for config keys: Levenshtein edit distance and the nearest candidate.
 */

import { strict as assert } from 'node:assert';

/** The Levenshtein distance (insertions, deletions, substitutions, each cost 1) between `a` and `b`. */
export function levenshteinDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = cell(previous, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(cell(previous, j) + 1, cell(current, j - 1) + 1, substitution);
    }
    previous = current;
  }
  return cell(previous, b.length);
}

/** `row[j]` of the edit-distance table; the loop bounds keep `j` inside the row. */
function cell(row: readonly number[], j: number): number {
  const distance = row[j];
  assert(distance !== undefined, `edit-distance row of ${row.length} has no column ${j}`);
  return distance;
}

/**
 * The candidate nearest to `key` by Levenshtein distance; ties go to the earlier candidate.
 * `candidates` must not be empty.
 */
export function nearestKey(key: string, candidates: Iterable<string>): string {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = levenshteinDistance(key, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined) throw new Error('nearestKey: no candidates');
  return best;
}
