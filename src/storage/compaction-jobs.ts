/**
 * Log compaction's CPU jobs (registered in src/runtime/cpu-jobs.ts): thin wrappers over the pure
 * functions of compaction-filter.ts that accept what structured clone delivers (Uint8Array for
 * Buffer). Run on a piscina worker in production and inline in the simulation.
 */
import { asBuffer } from '../runtime/cpu-jobs';
import { filterSegmentBytes, latestOffsetsOf, type FilterResult, type OffsetMap } from './compaction-filter';

/** Input of the `compaction-offset-map` job: dirty segments' bytes, oldest first, and the dirty range. */
export interface OffsetMapJobInput {
  segments: Uint8Array[];
  /** First dirty offset (inclusive). */
  fromOffset: number;
  /** End of the cleanable range (exclusive). */
  toOffsetExclusive: number;
}

/** key -> latest offset over the dirty range of the given segments. */
export function offsetMapJob(input: OffsetMapJobInput): OffsetMap {
  const map: OffsetMap = new Map();
  for (const bytes of input.segments)
    latestOffsetsOf(asBuffer(bytes), input.fromOffset, input.toOffsetExclusive, undefined, map);
  return map;
}

/** Input of the `compaction-filter` job: one group's concatenated segment bytes and the filter options. */
export interface FilterJobInput {
  bytes: Uint8Array;
  offsetMap: OffsetMap;
  nowMs: number;
  deleteRetentionMs: number;
  /** Producer id -> last offset of its last batch (kept empty when cleaned out); see FilterOptions. */
  producerLastOffsets?: Map<number, number>;
}

/** The group's cleaned bytes and stats (filterSegmentBytes). */
export function filterJob(input: FilterJobInput): FilterResult {
  return filterSegmentBytes(asBuffer(input.bytes), {
    offsetMap: input.offsetMap,
    nowMs: input.nowMs,
    deleteRetentionMs: input.deleteRetentionMs,
    ...(input.producerLastOffsets !== undefined ? { producerLastOffsets: input.producerLastOffsets } : {}),
  });
}
