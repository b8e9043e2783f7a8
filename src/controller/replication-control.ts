/**
 * The controller's replication decisions, as functions from the {@link MetadataState} to the records
 * of one change (and the reply): a broker leaving (fenced, crashed, shut down), a broker becoming
 * active, AlterPartition (KIP-497), ElectLeaders (KIP-460) and the leader imbalance check. They read
 * the state and never change it; the actor commits their records as one frame, then applies them.
 * KRaft's `ReplicationControlManager` (handleBrokerFenced, handleBrokerUnfenced, alterPartition,
 * electLeaders) and the classic controller's `checkAndTriggerAutoLeaderRebalance`.
 */
import { ErrorCode } from '../protocol/error-codes';
import type { AlterPartitionCommand, AlterPartitionResult, ReplicaOfflineCommand } from './messages';
import type { MetadataRecord, TopicState } from './metadata-records';
import type { MetadataState } from './metadata-state';
import { changePartition, NO_LEADER, partitionRecord } from './partition-change';
import type { Election, PartitionChange } from './partition-change';

/** The topic config that allows an out-of-ISR leader, with the broker's default under it. */
export function uncleanElectionEnabled(topic: TopicState, brokerDefault: boolean): boolean {
  const override = topic.configs['unclean.leader.election.enable'];
  return override === undefined ? brokerDefault : override.trim().toLowerCase() === 'true';
}

function onlineElection(topic: TopicState, uncleanDefault: boolean): Election {
  return uncleanElectionEnabled(topic, uncleanDefault) ? 'unclean' : 'online';
}

/** A partition change with where it happened, for the controller's log line. */
export interface Elected {
  topic: string;
  partition: number;
  leader: number;
  leaderEpoch: number;
  unclean: boolean;
}

/** The log entry of `change` to partition `partition` of `topic`. */
function electedOf(topic: TopicState, partition: number, change: PartitionChange): Elected {
  return {
    topic: topic.name,
    partition,
    leader: change.state.leader,
    leaderEpoch: change.state.leaderEpoch,
    unclean: change.unclean,
  };
}

/** Records of one decision, and the leader changes among them (for logging). */
export interface Decision {
  records: MetadataRecord[];
  elected: Elected[];
}

/**
 * `brokerId` leaves: it leaves every ISR (the last member stays, with no leader), and every partition
 * it led gets the first acceptable ISR member in assignment order, or an unclean leader where the
 * topic allows it, or no leader. The fence record (when the broker is registered and unfenced) is
 * the caller's. `handleBrokerFenced`.
 */
export function brokerRemoval(state: MetadataState, brokerId: number, uncleanDefault: boolean): Decision {
  const decision: Decision = { records: [], elected: [] };
  for (const topic of state.topicsById.values()) {
    for (const partition of topic.partitions) {
      if (partition.leader !== brokerId && !partition.isr.includes(brokerId)) continue;
      const change = changePartition(partition, {
        targetIsr: partition.isr.filter((id) => id !== brokerId),
        election: onlineElection(topic, uncleanDefault),
        isAcceptableLeader: (id) => id !== brokerId && state.isEligibleReplica(id, topic.topicId, partition.partition),
      });
      if (change === null) continue;
      decision.records.push(partitionRecord(topic.topicId, change.state));
      if (change.state.leader !== partition.leader)
        decision.elected.push(electedOf(topic, partition.partition, change));
    }
  }
  return decision;
}

/**
 * Broker `command.brokerId`'s replica of one partition failed on its disk (KIP-112's offline log dir):
 * it leaves the ISR (Kafka's last-member rule: a last member stays, with no leader) and, if it led,
 * the first eligible ISR member in assignment order leads with a bumped leader epoch (or an unclean
 * leader where the topic allows it). The `replica-offline` record, first in the same frame, keeps it
 * out of leadership and the ISR until the broker registers again. STALE_BROKER_EPOCH (not the
 * sender's current registration), UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST (not assigned there);
 * a replica already offline is NONE with no records (the report is retried).
 */
export function replicaOffline(
  state: MetadataState,
  command: ReplicaOfflineCommand,
  uncleanDefault: boolean,
): { errorCode: number; reason: string | null; decision: Decision } {
  const decision: Decision = { records: [], elected: [] };
  const refuse = (errorCode: number, reason: string) => ({ errorCode, reason, decision });
  const { brokerId, brokerEpoch, topicId } = command;
  const broker = state.brokers.get(brokerId);
  if (broker === undefined || broker.brokerEpoch !== brokerEpoch)
    return refuse(ErrorCode.STALE_BROKER_EPOCH, `broker ${brokerId} is not registered with epoch ${brokerEpoch}`);
  const topic = state.topicsById.get(topicId);
  const partition = topic?.partitions[command.partition];
  if (topic === undefined || partition === undefined)
    return refuse(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown partition ${topicId}-${command.partition}`);
  if (!partition.replicas.includes(brokerId))
    return refuse(ErrorCode.INVALID_REQUEST, `${topic.name}-${partition.partition} is not assigned to ${brokerId}`);
  if (state.isReplicaOffline(brokerId, topicId, partition.partition))
    return { errorCode: ErrorCode.NONE, reason: null, decision };
  decision.records.push({ type: 'replica-offline', brokerId, brokerEpoch, topicId, partition: partition.partition });
  const change = changePartition(partition, {
    targetIsr: partition.isr.filter((id) => id !== brokerId),
    election: onlineElection(topic, uncleanDefault),
    isAcceptableLeader: (id) => id !== brokerId && state.isEligibleReplica(id, topicId, partition.partition),
  });
  if (change !== null) {
    decision.records.push(partitionRecord(topicId, change.state));
    if (change.state.leader !== partition.leader) decision.elected.push(electedOf(topic, partition.partition, change));
  }
  return { errorCode: ErrorCode.NONE, reason: null, decision };
}

/**
 * Elections for the partitions without a leader, counting `newlyActive` (a broker registering in the
 * same change) as active: an ISR member that is back leads again, and where the topic allows
 * unclean election, any live replica does. `onlyTopicId` limits it to one topic (its unclean config
 * was just enabled). `handleBrokerUnfenced`, `maybeElectUncleanLeaders`.
 */
export function leaderlessElections(
  state: MetadataState,
  newlyActive: number | null,
  uncleanDefault: boolean,
  onlyTopic: TopicState | null = null,
): Decision {
  const decision: Decision = { records: [], elected: [] };
  const topics = onlyTopic ? [onlyTopic] : [...state.topicsById.values()];
  for (const topic of topics) {
    for (const partition of topic.partitions) {
      if (partition.leader !== NO_LEADER) continue;
      const change = changePartition(partition, {
        election: onlineElection(topic, uncleanDefault),
        isAcceptableLeader: (id) =>
          id === newlyActive || state.isEligibleReplica(id, topic.topicId, partition.partition),
      });
      if (change === null || change.state.leader === NO_LEADER) continue;
      decision.records.push(partitionRecord(topic.topicId, change.state));
      decision.elected.push(electedOf(topic, partition.partition, change));
    }
  }
  return decision;
}

/**
 * AlterPartition of one partition, validated in Kafka's order (`validateAlterPartitionData`):
 * STALE_BROKER_EPOCH (not the sender's current registration); UNKNOWN_TOPIC_OR_PARTITION;
 * NOT_CONTROLLER for epochs newer than the controller's (Kafka's hint that the sender talks to an
 * old controller); FENCED_LEADER_EPOCH for an older leader epoch; INVALID_REQUEST when the sender
 * does not lead; INVALID_UPDATE_VERSION for an older partition epoch; INVALID_REQUEST for an ISR
 * with a duplicate or unassigned member or without the leader; INELIGIBLE_REPLICA for an ISR member
 * that is not registered or is fenced. Then the ISR is replaced (no record when it is the same).
 */
export function alterPartition(
  state: MetadataState,
  command: AlterPartitionCommand,
): { result: AlterPartitionResult; records: MetadataRecord[]; reason: string | null } {
  const topic = state.topicsById.get(command.topicId);
  const partition = topic?.partitions[command.partition];
  const refuse = (errorCode: number, reason: string, withState = true) => ({
    result: { errorCode, state: withState ? (partition ?? null) : null },
    records: [],
    reason,
  });
  const broker = state.brokers.get(command.brokerId);
  if (broker === undefined || broker.brokerEpoch !== command.brokerEpoch)
    return refuse(
      ErrorCode.STALE_BROKER_EPOCH,
      broker === undefined
        ? `No broker registration found for broker ${command.brokerId}`
        : `Expected broker epoch ${broker.brokerEpoch}, but got broker epoch ${command.brokerEpoch}`,
      false,
    );
  if (topic === undefined || partition === undefined)
    return refuse(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown partition ${command.topicId}-${command.partition}`);
  const where = `${topic.name}-${partition.partition}`;
  if (command.leaderEpoch > partition.leaderEpoch || command.partitionEpoch > partition.partitionEpoch)
    return refuse(ErrorCode.NOT_CONTROLLER, `${where}: epochs newer than the controller's`);
  if (command.leaderEpoch < partition.leaderEpoch)
    return refuse(ErrorCode.FENCED_LEADER_EPOCH, `${where}: the current leader epoch is ${partition.leaderEpoch}`);
  if (command.brokerId !== partition.leader)
    return refuse(ErrorCode.INVALID_REQUEST, `${where}: the current leader is ${partition.leader}`);
  if (command.partitionEpoch < partition.partitionEpoch)
    return refuse(
      ErrorCode.INVALID_UPDATE_VERSION,
      `${where}: the current partition epoch is ${partition.partitionEpoch}`,
    );
  const newIsr = command.newIsr;
  if (new Set(newIsr).size !== newIsr.length || newIsr.some((id) => !partition.replicas.includes(id)))
    return refuse(ErrorCode.INVALID_REQUEST, `${where}: invalid ISR ${JSON.stringify(newIsr)}`);
  if (!newIsr.includes(partition.leader))
    return refuse(ErrorCode.INVALID_REQUEST, `${where}: the ISR ${JSON.stringify(newIsr)} leaves out its leader`);
  const ineligible = newIsr.filter((id) => !state.isEligibleReplica(id, topic.topicId, partition.partition));
  if (ineligible.length > 0)
    return refuse(
      ErrorCode.INELIGIBLE_REPLICA,
      `${where}: ineligible replicas ${JSON.stringify(ineligible)} (fenced, not registered, or offline on the disk until a restart)`,
    );
  const change = changePartition(partition, {
    targetIsr: newIsr,
    election: 'online',
    isAcceptableLeader: (id) => state.isEligibleReplica(id, topic.topicId, partition.partition),
  });
  if (change === null) return { result: { errorCode: ErrorCode.NONE, state: partition }, records: [], reason: null };
  return {
    result: { errorCode: ErrorCode.NONE, state: change.state },
    records: [partitionRecord(topic.topicId, change.state)],
    reason: null,
  };
}

/** ElectLeaders' election types (KIP-460). */
export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;

/** One partition's ElectLeaders result. */
export interface ElectionResult {
  topic: string;
  partition: number;
  errorCode: number;
  errorMessage: string | null;
}

/**
 * ElectLeaders: PREFERRED makes the first replica leader when it is active and in the ISR
 * (ELECTION_NOT_NEEDED if it already leads, PREFERRED_LEADER_NOT_AVAILABLE otherwise); UNCLEAN elects
 * only a partition without a leader, from the ISR if it can, else any live replica
 * (ELECTION_NOT_NEEDED when it has a leader, ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is live).
 * `partitions` null means every partition, and then the ELECTION_NOT_NEEDED ones are left out of the
 * results (Kafka's rule). Every election goes into the one change. `ReplicationControlManager.electLeaders`.
 */
export function electLeaders(
  state: MetadataState,
  electionType: number,
  partitions: { topic: string; partition: number }[] | null,
): { results: ElectionResult[]; decision: Decision } {
  const decision: Decision = { records: [], elected: [] };
  const electOne = (topicName: string, partitionId: number): ElectionResult => {
    const result = (errorCode: number, errorMessage: string | null = null): ElectionResult => ({
      topic: topicName,
      partition: partitionId,
      errorCode,
      errorMessage,
    });
    if (electionType !== ElectionType.PREFERRED && electionType !== ElectionType.UNCLEAN)
      return result(ErrorCode.INVALID_REQUEST, `Unknown election type ${electionType}`);
    const topic = state.topicByName(topicName);
    if (topic === undefined) return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `No such topic as ${topicName}`);
    const partition = topic.partitions[partitionId];
    if (partition === undefined)
      return result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `No such partition as ${topicName}-${partitionId}`);
    const preferred = electionType === ElectionType.PREFERRED;
    if (preferred ? partition.leader === partition.replicas[0] : partition.leader !== NO_LEADER)
      return result(ErrorCode.ELECTION_NOT_NEEDED);
    const change = changePartition(partition, {
      election: preferred ? 'preferred' : 'unclean',
      isAcceptableLeader: (id) => state.isEligibleReplica(id, topic.topicId, partitionId),
    });
    if (change === null || change.state.leader === partition.leader)
      return result(preferred ? ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE : ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE);
    decision.records.push(partitionRecord(topic.topicId, change.state));
    decision.elected.push(electedOf(topic, partitionId, change));
    return result(ErrorCode.NONE);
  };
  if (partitions !== null) return { results: partitions.map((p) => electOne(p.topic, p.partition)), decision };
  const results: ElectionResult[] = [];
  for (const topic of state.topicsById.values())
    for (const p of topic.partitions) {
      const r = electOne(topic.name, p.partition);
      if (r.errorCode !== ErrorCode.ELECTION_NOT_NEEDED) results.push(r);
    }
  return { results, decision };
}

/**
 * The leader imbalance check (auto.leader.rebalance.enable): for each broker, the share of the
 * partitions it is the preferred leader of (first replica) that another broker leads; above
 * `imbalancePercentage` percent, each of those partitions whose preferred leader is active and in
 * the ISR gets a preferred election. The classic controller's `checkAndTriggerAutoLeaderRebalance`.
 */
export function leaderImbalanceElections(state: MetadataState, imbalancePercentage: number): Decision {
  const decision: Decision = { records: [], elected: [] };
  const byPreferred = new Map<number, { total: number; notLed: { topic: TopicState; partition: number }[] }>();
  for (const topic of state.topicsById.values())
    for (const p of topic.partitions) {
      const preferred = p.replicas[0];
      if (preferred === undefined) continue;
      const entry = byPreferred.get(preferred) ?? { total: 0, notLed: [] };
      entry.total++;
      if (p.leader !== preferred) entry.notLed.push({ topic, partition: p.partition });
      byPreferred.set(preferred, entry);
    }
  for (const [preferred, entry] of [...byPreferred].sort(([a], [b]) => a - b)) {
    if ((entry.notLed.length * 100) / entry.total <= imbalancePercentage) continue;
    for (const { topic, partition: id } of entry.notLed) {
      const partition = topic.partitions[id]!;
      const change = changePartition(partition, {
        election: 'preferred',
        isAcceptableLeader: (broker) => state.isEligibleReplica(broker, topic.topicId, id),
      });
      if (change === null || change.state.leader !== preferred) continue;
      decision.records.push(partitionRecord(topic.topicId, change.state));
      decision.elected.push(electedOf(topic, id, change));
    }
  }
  return decision;
}
