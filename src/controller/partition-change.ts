/**
 * One partition's leader and ISR change: the new ISR, the leader election it needs, and the epoch
 * bumps. A pure function over a {@link PartitionState}, so every decision of the controller (a
 * fence, a registration, AlterPartition, ElectLeaders, the imbalance check) elects the same way.
 * KRaft's `PartitionChangeBuilder` without ELR (KIP-966) and without reassignment.
 */
import type { PartitionRecord, PartitionState } from './metadata-records';

/** No leader: every ISR member is down (LEADER_NOT_AVAILABLE to clients). */
export const NO_LEADER = -1;

/**
 * How to elect. `online`: keep the current leader if it is still a valid one, else the first valid
 * replica in assignment order. `preferred`: the first replica (the preferred leader) if valid, else
 * as `online`. `unclean`: as `online`, then, when no ISR member can lead, the first acceptable
 * replica in assignment order, with the ISR reset to it alone (acknowledged records may be lost).
 * A valid leader is in the target ISR and acceptable. `PartitionChangeBuilder.Election`.
 */
export type Election = 'online' | 'preferred' | 'unclean';

export interface PartitionChangeRequest {
  /**
   * The ISR the change aims for (default: the current one). An empty target leaves the ISR as it is,
   * so a partition never loses its last ISR member (Kafka without ELR): that member, once down,
   * stays in the ISR with no leader, and is the clean choice when it returns.
   */
  targetIsr?: readonly number[];
  election: Election;
  /** Whether a broker may lead: registered, unfenced and not the one being removed. */
  isAcceptableLeader: (brokerId: number) => boolean;
}

/** The partition after a change, and whether its new leader came from outside the ISR. */
export interface PartitionChange {
  state: PartitionState;
  unclean: boolean;
}

function sameMembers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => b[i] === id);
}

/**
 * The partition after `request`, or null when neither its leader nor its ISR changes. A new leader
 * (including none) bumps the leader epoch; any change bumps the partition epoch (KIP-497), so an
 * AlterPartition built on the old state is refused.
 */
export function changePartition(partition: PartitionState, request: PartitionChangeRequest): PartitionChange | null {
  const targetIsr = request.targetIsr ?? partition.isr;
  const valid = (brokerId: number): boolean => targetIsr.includes(brokerId) && request.isAcceptableLeader(brokerId);
  let leader: number;
  let unclean = false;
  const preferred = partition.replicas[0];
  if (request.election === 'preferred' && preferred !== undefined && valid(preferred)) leader = preferred;
  else if (partition.leader !== NO_LEADER && valid(partition.leader)) leader = partition.leader;
  else {
    leader = partition.replicas.find(valid) ?? NO_LEADER;
    if (leader === NO_LEADER && request.election === 'unclean') {
      leader = partition.replicas.find((id) => request.isAcceptableLeader(id)) ?? NO_LEADER;
      unclean = leader !== NO_LEADER;
    }
  }
  const isr = unclean ? [leader] : targetIsr.length > 0 ? [...targetIsr] : [...partition.isr];
  const leaderChanged = leader !== partition.leader;
  if (!leaderChanged && sameMembers(isr, partition.isr)) return null;
  return {
    state: {
      ...partition,
      isr,
      leader,
      leaderEpoch: leaderChanged ? partition.leaderEpoch + 1 : partition.leaderEpoch,
      partitionEpoch: partition.partitionEpoch + 1,
    },
    unclean,
  };
}

/** The metadata record that sets partition `state` of topic `topicId`. */
export function partitionRecord(topicId: string, state: PartitionState): PartitionRecord {
  return {
    type: 'partition',
    topicId,
    partition: state.partition,
    replicas: state.replicas,
    isr: state.isr,
    leader: state.leader,
    leaderEpoch: state.leaderEpoch,
    partitionEpoch: state.partitionEpoch,
  };
}
