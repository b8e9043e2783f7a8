/**
 * Replication of a compacted topic at cluster level (issue 11 item 4: followers accept the offset
 * gaps of a compacted leader): cleanup.policy=compact, the leader's cleaner runs below its HW, and a
 * follower whose broker starts only after the cleaning replicates the cleaned log, gaps included,
 * holding at each offset it keeps the leader's record; a leader change afterwards serves it on.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bootCluster } from '../../helpers/cluster-harness';
import type { ClusterSim } from '../../helpers/cluster-harness';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { decodeRecordBatches } from '../../../src/protocol/record-batch/decode';

const TOPIC = 'compacted';
const SEEDS = [61, 62, 63, 64];
const RECORDS = 30;

/** (offset, key, value) of every record in broker `b`'s log of TOPIC. */
function keyed(cluster: ClusterSim, b: number): { offset: number; key: string; value: string }[] {
  const out: { offset: number; key: string; value: string }[] = [];
  for (const batch of decodeRecordBatches(cluster.logBytes(b, TOPIC)))
    for (const [k, r] of batch.records.entries())
      out.push({ offset: batch.baseOffset + k, key: r.key!.toString(), value: r.value!.toString() });
  return out;
}

function hasGaps(log: { offset: number }[]): boolean {
  return log.some((r, i) => i > 0 && r.offset !== log[i - 1]!.offset + 1);
}

/** The last value of each key, as compaction must keep it. */
function latestByKey(log: { key: string; value: string }[]): Map<string, string> {
  return new Map(log.map((r) => [r.key, r.value]));
}

describe('a compacted topic replicates (simulation, whole cluster)', () => {
  for (const seed of SEEDS)
    test(`seed ${seed}: the leader's cleaner leaves offset gaps; a follower started after the cleaning replicates them`, async () => {
      const cluster = await bootCluster(seed, { properties: { 'log.cleaner.backoff.ms': '1000' } });
      await cluster.createTopic(TOPIC, 1, 3, {
        'cleanup.policy': 'compact',
        'segment.bytes': '300',
        'min.cleanable.dirty.ratio': '0.01',
        'min.compaction.lag.ms': '0',
        'min.insync.replicas': '2',
      });
      const start = await cluster.partition(TOPIC);
      const late = start.replicas.find((b) => b !== start.leader)!;
      // The late follower's broker is down while the log is written and cleaned.
      await cluster.crashBroker(late);
      const keys = Array.from({ length: RECORDS }, (_, i) => (i % 3 === 0 ? `k-${i}` : `hot-${i % 2}`));
      const values = keys.map((_, i) => `v${i}`);
      const replies = await cluster.produce(TOPIC, values, -1, { keys });
      assert.deepEqual(
        replies.map((r) => r.errorCode),
        values.map(() => ErrorCode.NONE),
      );
      const sent = keys.map((key, i) => ({ key, value: values[i]! }));
      const leaderId = (await cluster.partition(TOPIC)).leader;
      await cluster.waitFor('the leader cleaned its log', () => hasGaps(keyed(cluster, leaderId)));
      const cleaned = keyed(cluster, leaderId);
      assert.ok(cleaned.length < RECORDS, `the cleaner removed records (${cleaned.length} of ${RECORDS} left)`);
      assert.deepEqual(latestByKey(cleaned), latestByKey(sent), 'compaction kept the last value of every key');

      await cluster.startBroker(late);
      await cluster.waitFor('the late follower reaches the log end', async () => {
        const d = await cluster.ask(cluster.replica(late, start.topicId), 'replica.describe', {});
        return d.logEndOffset === RECORDS;
      });
      const follower = keyed(cluster, late);
      assert.ok(hasGaps(follower), 'the follower appended the offset gaps');
      const leaderNow = new Map(keyed(cluster, leaderId).map((r) => [r.offset, r]));
      const sentAt = (offset: number) => sent[offset]!;
      for (const r of follower) {
        // Its own cleaner may compact further: every record it keeps is the one sent at that offset.
        assert.deepEqual({ key: r.key, value: r.value }, sentAt(r.offset), `follower offset ${r.offset}`);
        if (leaderNow.has(r.offset)) assert.deepEqual(r, leaderNow.get(r.offset));
      }
      assert.deepEqual(latestByKey(follower), latestByKey(sent), 'the follower holds every key at its last value');
      await cluster.waitFor('the late follower rejoins the ISR', async () =>
        (await cluster.partition(TOPIC)).isr.includes(late),
      );
      // The leader goes: a follower leads the compacted log on, and the latest values are still all there.
      await cluster.crashBroker(leaderId);
      const next = await cluster.partition(TOPIC);
      assert.ok(next.leader >= 0 && next.leader !== leaderId);
      assert.equal((await cluster.produce(TOPIC, ['after'], -1, { keys: ['hot-0'] }))[0]!.errorCode, ErrorCode.NONE);
      await cluster.startBroker(leaderId);
      await cluster.waitFor('every replica reaches the new log end', async () => {
        for (const b of [0, 1, 2]) {
          const d = await cluster.ask(cluster.replica(b, start.topicId), 'replica.describe', {});
          if (d.logEndOffset !== RECORDS + 1) return false;
        }
        return true;
      });
      const expected = latestByKey([...sent, { key: 'hot-0', value: 'after' }]);
      for (const b of [0, 1, 2]) assert.deepEqual(latestByKey(keyed(cluster, b)), expected, `broker ${b}`);
      await cluster.assertOneLeaderPerEpoch();
      await cluster.sim.shutdown();
    });
});
