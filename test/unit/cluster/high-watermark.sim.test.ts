/**
 * The high watermark at cluster level (DESIGN.md invariant 2): under a random workload of acks=all
 * and acks=1 produces, follower isolation, broker crashes and restarts, consumers (replica.fetch
 * without follower state, from whichever broker leads) never receive an offset at or above the HW of
 * the reply that carried it, and every record a consumer received is, at the end, in every ISR
 * member's log at the same offset (it was committed, so no clean election loses it).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { highWatermarkRun } from './scenarios';

const SEEDS = [31, 32, 33, 34, 35, 36];

describe('the high watermark bounds what consumers read (simulation, whole cluster)', () => {
  test('random workloads: no consumer gets an offset at or above its reply HW; what it got is in every ISR log', async () => {
    let read = 0;
    let elections = 0;
    for (const seed of SEEDS) {
      const run = await highWatermarkRun(seed);
      read += run.consumed;
      elections += run.leaderEpochs - 1;
    }
    assert.ok(read > 0, 'consumers received records');
    assert.ok(elections > 0, 'leaders changed under the workload');
  });
});
