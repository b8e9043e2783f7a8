/**
 * Replica assignment: where a new partition's replicas go. The automatic layout is Kafka's classic
 * rack-unaware one (`AdminUtils.assignReplicasToBrokersRackUnaware`); explicit assignments of
 * CreateTopics and CreatePartitions are checked as KRaft's
 * `ReplicationControlManager.validateManualPartitionAssignment` checks them, with its messages.
 */
import assert from 'node:assert/strict';
import type { Random } from '../io/random';

/**
 * Assigns `replicationFactor` replicas to each of `partitionCount` partitions numbered from
 * `startPartition`, over `brokerIds` (the usable brokers; sorted here). The first replica (the
 * preferred leader) goes round-robin from a start index; each further replica follows it at a shift
 * that grows by one every full round of brokers, so both leaders and followers spread evenly.
 * `fixedStartIndex` >= 0 fixes the start index and the first shift (CreatePartitions continues the
 * topic's layout with it); otherwise both are drawn from `random`, as Kafka draws them.
 *
 * Requires 1 <= replicationFactor <= brokerIds.length. Returns one replica list per partition.
 */
export function assignReplicasRackUnaware(
  partitionCount: number,
  replicationFactor: number,
  brokerIds: readonly number[],
  random: Random,
  fixedStartIndex = -1,
  startPartition = 0,
): number[][] {
  const brokers = [...brokerIds].sort((a, b) => a - b);
  const n = brokers.length;
  assert.ok(
    replicationFactor >= 1 && replicationFactor <= n,
    `replication factor ${replicationFactor} over ${n} brokers`,
  );
  const startIndex = fixedStartIndex >= 0 ? fixedStartIndex : random.int(n);
  let nextReplicaShift = fixedStartIndex >= 0 ? fixedStartIndex : random.int(n);
  const assignments: number[][] = [];
  for (let i = 0; i < partitionCount; i++) {
    const partition = startPartition + i;
    if (partition > 0 && partition % n === 0) nextReplicaShift++;
    const firstReplicaIndex = (partition + startIndex) % n;
    const replicas = [brokers[firstReplicaIndex]!];
    for (let j = 0; j < replicationFactor - 1; j++) {
      // AdminUtils.replicaIndex: never 0 (the first replica) thanks to the 1 + ... % (n - 1).
      const shift = 1 + ((nextReplicaShift + j) % (n - 1));
      replicas.push(brokers[(firstReplicaIndex + shift) % n]!);
    }
    assignments.push(replicas);
  }
  return assignments;
}

/**
 * Why an explicit replica list is refused (INVALID_REPLICA_ASSIGNMENT), or null: empty, a broker
 * that is not registered, a broker twice, or (when `replicationFactor` is given) another length than
 * the other partitions'. Kafka's messages (`validateManualPartitionAssignment`).
 */
export function manualAssignmentInvalidReason(
  replicas: readonly number[],
  isRegistered: (brokerId: number) => boolean,
  replicationFactor: number | null,
): string | null {
  if (replicas.length === 0) return 'The manual partition assignment includes an empty replica list.';
  const sorted = [...replicas].sort((a, b) => a - b);
  let previous: number | null = null;
  for (const brokerId of sorted) {
    if (!isRegistered(brokerId))
      return `The manual partition assignment includes broker ${brokerId}, but no such broker is registered.`;
    if (brokerId === previous) return `The manual partition assignment includes the broker ${brokerId} more than once.`;
    previous = brokerId;
  }
  if (replicationFactor !== null && sorted.length !== replicationFactor)
    return (
      `The manual partition assignment includes a partition with ${sorted.length} replica(s), but this is not ` +
      `consistent with previous partitions, which have ${replicationFactor} replica(s).`
    );
  return null;
}
