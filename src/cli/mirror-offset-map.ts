/**
 * The source-to-target offset mapping of one mirrored partition (`skiff mirror`), and the header
 * that carries it inside the target's records.
 *
 * Every record `skiff mirror` writes carries {@link SOURCE_OFFSET_HEADER}: its offset on the
 * source, as decimal ASCII. The mapping is therefore part of the target's log itself, written in the
 * same batch (atomically) as the record it describes, and a later run rebuilds it by reading the
 * target: there is no side file or side topic that could disagree with the data after a crash.
 *
 * Source offsets are not dense (compaction removes records, control batches of transactions are
 * not copied, and retention or DeleteRecords moves the log start) while the target assigns dense
 * offsets, so the mapping is kept as runs: a run maps `count` consecutive source offsets to
 * `count` consecutive target offsets. An uncompacted log is one run; a compacted one has a run per
 * stretch without gaps.
 */
import { strict as assert } from 'node:assert';

/** Header key of the source offset on every record `skiff mirror` writes (decimal ASCII value). */
export const SOURCE_OFFSET_HEADER = 'skiff.mirror.source.offset';

/** Encodes a source offset as the value of {@link SOURCE_OFFSET_HEADER}. */
export function encodeSourceOffset(offset: number): Buffer {
  return Buffer.from(String(offset), 'ascii');
}

/** Decodes a {@link SOURCE_OFFSET_HEADER} value; null when it is not a non-negative decimal integer. */
export function decodeSourceOffset(value: Buffer | null): number | null {
  if (value === null) return null;
  const text = value.toString('ascii');
  if (!/^\d{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

/** `count` consecutive source offsets from `sourceOffset` were written at `targetOffset` onwards. */
interface Run {
  sourceOffset: number;
  targetOffset: number;
  count: number;
}

/** Where the records of one partition went: source offset -> target offset, in copy order. */
export class MirrorOffsetMap {
  private readonly runs: Run[] = [];

  /** The highest source offset recorded, -1 before the first. */
  get lastSourceOffset(): number {
    const last = this.runs[this.runs.length - 1];
    return last === undefined ? -1 : last.sourceOffset + last.count - 1;
  }

  /** The highest target offset recorded, -1 before the first. */
  get lastTargetOffset(): number {
    const last = this.runs[this.runs.length - 1];
    return last === undefined ? -1 : last.targetOffset + last.count - 1;
  }

  /** How many runs the mapping holds (one per stretch of source offsets without a gap). */
  get runCount(): number {
    return this.runs.length;
  }

  /**
   * Records that the record at `sourceOffset` was written at `targetOffset`. Both must be above
   * every offset recorded so far (records are copied in order, per partition); throws
   * AssertionError otherwise.
   */
  record(sourceOffset: number, targetOffset: number): void {
    assert.ok(sourceOffset > this.lastSourceOffset, `source offset ${sourceOffset} after ${this.lastSourceOffset}`);
    assert.ok(targetOffset > this.lastTargetOffset, `target offset ${targetOffset} after ${this.lastTargetOffset}`);
    const last = this.runs[this.runs.length - 1];
    if (
      last !== undefined &&
      last.sourceOffset + last.count === sourceOffset &&
      last.targetOffset + last.count === targetOffset
    ) {
      last.count++;
    } else {
      this.runs.push({ sourceOffset, targetOffset, count: 1 });
    }
  }

  /**
   * The target offset for a committed source offset `committed` (the next record to read): the
   * target offset of the first recorded record whose source offset is at least `committed`, or
   * `targetEnd` (the target's log-end offset) when none is. Only meaningful once every source
   * record below `committed` has been copied.
   */
  translate(committed: number, targetEnd: number): number {
    // First run whose last source offset is >= committed.
    let lo = 0;
    let hi = this.runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const run = this.runs[mid]!;
      if (run.sourceOffset + run.count - 1 < committed) lo = mid + 1;
      else hi = mid;
    }
    const run = this.runs[lo];
    if (run === undefined) return targetEnd;
    if (committed <= run.sourceOffset) return run.targetOffset;
    return run.targetOffset + (committed - run.sourceOffset);
  }
}
