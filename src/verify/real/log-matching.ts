/**
 * Log matching from what Skiff's logs hold after a real run: each replica's segment files of a
 * partition, concatenated, cut at the batch boundary of the high watermark (walking the v2 batch
 * headers), must be byte-identical across the replicas (DESIGN.md "Invariants": log matching below the
 * HW). Reads `<dataDir>/node-<id>/<topic>-<partition>/*.log`, the layout of `skiff start --nodes N`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as L from '../../protocol/record-batch/layout';
import type { CheckTally } from './checks';

/**
 * The prefix of `log` (segment files concatenated) holding exactly the batches below `highWatermark`,
 * or a reason string when the batches do not end exactly at `highWatermark - 1` or a header runs past
 * the bytes. Offsets come from each header: baseOffset at 0, batchLength at 8, lastOffsetDelta at 23.
 */
export function prefixBelow(log: Buffer, highWatermark: number): Buffer | string {
  let position = 0;
  let nextOffset = 0;
  while (nextOffset < highWatermark) {
    if (position + L.RECORD_BATCH_OVERHEAD > log.length)
      return `the log ends at byte ${position}, below HW ${highWatermark}`;
    const baseOffset = Number(log.readBigInt64BE(position + L.BASE_OFFSET));
    const batchLength = log.readInt32BE(position + L.BATCH_LENGTH);
    const lastOffset = baseOffset + log.readInt32BE(position + L.LAST_OFFSET_DELTA);
    if (baseOffset < nextOffset)
      return `the batch at byte ${position} starts at offset ${baseOffset}, below ${nextOffset}`;
    if (lastOffset >= highWatermark) return `batch ${baseOffset}-${lastOffset} straddles HW ${highWatermark}`;
    position += L.LOG_OVERHEAD + batchLength;
    if (position > log.length) return `the batch at offset ${baseOffset} runs past the end of the log`;
    nextOffset = lastOffset + 1;
  }
  return log.subarray(0, position);
}

/** Broker `brokerId`'s segment files of `topic-partition` under `dataDir`, in base-offset order, concatenated. */
export function segmentBytes(dataDir: string, brokerId: number, topic: string, partition: number): Buffer {
  const dir = path.join(dataDir, `node-${brokerId}`, `${topic}-${partition}`);
  const logs = fs
    .readdirSync(dir)
    .filter((f) => /^\d{20}\.log$/.test(f))
    .sort();
  return Buffer.concat(logs.map((f) => fs.readFileSync(path.join(dir, f))));
}

/**
 * One `log-matching` check of a partition: every replica's log (`logs`, broker id → bytes) cut below
 * `highWatermark` equals the first replica's. A violation names the partition, the HW and the first
 * differing byte.
 */
export function checkLogMatching(
  topic: string,
  partition: number,
  logs: ReadonlyMap<number, Buffer>,
  highWatermark: number,
  tally: CheckTally,
): void {
  tally.checks['log-matching'] = (tally.checks['log-matching'] ?? 0) + 1;
  let reference: { brokerId: number; prefix: Buffer } | null = null;
  for (const [brokerId, log] of logs) {
    const prefix = prefixBelow(log, highWatermark);
    const fail = (why: string): void => {
      tally.violations.push({
        invariant: 'log-matching',
        message: `${topic}-${partition} HW ${highWatermark}: ${why}`,
      });
    };
    if (typeof prefix === 'string') return fail(`broker ${brokerId}: ${prefix}`);
    if (reference === null) {
      reference = { brokerId, prefix };
      continue;
    }
    if (!prefix.equals(reference.prefix)) {
      let at = 0;
      while (at < prefix.length && at < reference.prefix.length && prefix[at] === reference.prefix[at]) at++;
      return fail(
        `brokers ${reference.brokerId} and ${brokerId} differ below the HW from byte ${at} ` +
          `(${reference.prefix.length} and ${prefix.length} bytes)`,
      );
    }
  }
}
