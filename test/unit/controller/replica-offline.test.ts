/**
 * The controller's decision for a replica that failed on its disk (replication-control.ts
 * replicaOffline, KIP-112): out of the ISR and leadership in one change, kept out (AlterPartition:
 * INELIGIBLE_REPLICA, no election picks it) until its broker registers again; the last-member rule.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MetadataState } from '../../../src/controller/metadata-state';
import type { MetadataRecord } from '../../../src/controller/metadata-records';
import { alterPartition, brokerRemoval, replicaOffline } from '../../../src/controller/replication-control';
import { ErrorCode } from '../../../src/protocol/error-codes';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

function stateWith(isr: number[], leader: number): MetadataState {
  const state = new MetadataState();
  const records: MetadataRecord[] = [
    ...[0, 1, 2].map((id): MetadataRecord => ({
      type: 'register-broker',
      brokerId: id,
      brokerEpoch: 10 + id,
      host: 'h',
      port: 9092 + id,
    })),
    { type: 'topic', name: 't', topicId: TOPIC_ID, configs: {} },
    {
      type: 'partition',
      topicId: TOPIC_ID,
      partition: 0,
      replicas: [0, 1, 2],
      isr,
      leader,
      leaderEpoch: 5,
      partitionEpoch: 7,
    },
  ];
  for (const r of records) state.apply(r);
  return state;
}

function commit(state: MetadataState, records: MetadataRecord[]): void {
  for (const r of records) state.apply(r);
}

describe('controller: a replica offline on its disk', () => {
  test('its leader leaves the ISR and the first live ISR member leads with epoch+1, in one change; it stays out until it registers again', () => {
    const state = stateWith([0, 1, 2], 0);
    const { errorCode, decision } = replicaOffline(
      state,
      { brokerId: 0, brokerEpoch: 10, topicId: TOPIC_ID, partition: 0 },
      false,
    );
    assert.equal(errorCode, ErrorCode.NONE);
    assert.deepEqual(
      decision.records.map((r) => r.type),
      ['replica-offline', 'partition'],
    );
    commit(state, decision.records);
    const p = state.topicsById.get(TOPIC_ID)!.partitions[0]!;
    assert.deepEqual(
      { leader: p.leader, leaderEpoch: p.leaderEpoch, isr: p.isr, partitionEpoch: p.partitionEpoch },
      { leader: 1, leaderEpoch: 6, isr: [1, 2], partitionEpoch: 8 },
    );
    assert.ok(state.isReplicaOffline(0, TOPIC_ID, 0));

    const again = replicaOffline(state, { brokerId: 0, brokerEpoch: 10, topicId: TOPIC_ID, partition: 0 }, false);
    assert.equal(again.errorCode, ErrorCode.NONE, 'a repeated report is answered NONE');
    assert.equal(again.decision.records.length, 0, 'and changes nothing');

    const expand = {
      brokerId: 1,
      brokerEpoch: 11,
      topicId: TOPIC_ID,
      partition: 0,
      leaderEpoch: 6,
      partitionEpoch: 8,
      newIsr: [0, 1, 2],
    };
    assert.equal(alterPartition(state, expand).result.errorCode, ErrorCode.INELIGIBLE_REPLICA);

    // Broker 1 (the new leader) goes down: broker 2 leads, never the offline replica.
    const removal = brokerRemoval(state, 1, false);
    commit(state, removal.records);
    assert.equal(state.topicsById.get(TOPIC_ID)!.partitions[0]!.leader, 2);

    commit(state, [{ type: 'register-broker', brokerId: 0, brokerEpoch: 20, host: 'h', port: 9092 }]);
    assert.ok(!state.isReplicaOffline(0, TOPIC_ID, 0), 'a new registration (a restart) clears it');
    const p2 = state.topicsById.get(TOPIC_ID)!.partitions[0]!;
    const rejoin = {
      brokerId: 2,
      brokerEpoch: 12,
      topicId: TOPIC_ID,
      partition: 0,
      leaderEpoch: p2.leaderEpoch,
      partitionEpoch: p2.partitionEpoch,
      newIsr: [0, 2],
    };
    assert.equal(alterPartition(state, rejoin).result.errorCode, ErrorCode.NONE);
  });

  test('a follower leaves the ISR without an election; the last ISR member stays in it with no leader; a stale broker epoch is refused', () => {
    const follower = stateWith([0, 1, 2], 0);
    const f = replicaOffline(follower, { brokerId: 2, brokerEpoch: 12, topicId: TOPIC_ID, partition: 0 }, false);
    commit(follower, f.decision.records);
    const p = follower.topicsById.get(TOPIC_ID)!.partitions[0]!;
    assert.deepEqual(
      { leader: p.leader, leaderEpoch: p.leaderEpoch, isr: p.isr },
      { leader: 0, leaderEpoch: 5, isr: [0, 1] },
    );
    assert.equal(f.decision.elected.length, 0);

    const last = stateWith([0], 0);
    const l = replicaOffline(last, { brokerId: 0, brokerEpoch: 10, topicId: TOPIC_ID, partition: 0 }, false);
    commit(last, l.decision.records);
    const q = last.topicsById.get(TOPIC_ID)!.partitions[0]!;
    assert.deepEqual(
      { leader: q.leader, leaderEpoch: q.leaderEpoch, isr: q.isr },
      { leader: -1, leaderEpoch: 6, isr: [0] },
    );

    const stale = replicaOffline(
      stateWith([0, 1, 2], 0),
      { brokerId: 0, brokerEpoch: 9, topicId: TOPIC_ID, partition: 0 },
      false,
    );
    assert.equal(stale.errorCode, ErrorCode.STALE_BROKER_EPOCH);
    assert.equal(stale.decision.records.length, 0);
  });
});
