/**
 * Placeholder for the partitions section of `npm run bench:compare` (issue 13 item 4: 1000
 * partitions, start-up, first group join), written on another branch; until it lands here the
 * section fails with 'not built' and compare.ts reports it as a failed section.
 */
import type { Figure } from './figures';

/** Options of {@link runPartitionsCompare}. */
export interface PartitionsCompareOptions {
  scale: number;
  rounds: number;
  /** Root of an older Skiff build, measured as the `before` variant. */
  skiffBefore?: string;
  /** CI size. */
  smoke?: boolean;
}

/** Throws: the section is not built on this branch yet. */
export function runPartitionsCompare(opts: PartitionsCompareOptions): Promise<Figure[]> {
  void opts;
  return Promise.reject(new Error('not built: bench/compare-partitions.ts is a placeholder'));
}
