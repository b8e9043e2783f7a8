/**
 * The controller's metadata state: what replaying the metadata log builds, record by record, and the
 * {@link MetadataImage} published from it. Only {@link MetadataState.apply} changes it, so a restart
 * that replays the same records builds the same state (KRaft's `MetadataDelta` applied to an image).
 */
import assert from 'node:assert/strict';
import type { BrokerState, MetadataImage, MetadataRecord, PartitionState, TopicState } from './metadata-records';

export class MetadataState {
  clusterId = '';
  nextProducerId = 0;
  /** Frames applied: the metadata offset of the image (and of the next frame, the next broker epoch). */
  offset = 0;
  controllerEpoch = 0;
  /** Registered brokers by node id, fenced ones included. */
  readonly brokers = new Map<number, BrokerState>();
  readonly topicsById = new Map<string, TopicState>();
  readonly topicIdsByName = new Map<string, string>();

  /** Applies one record. A record that contradicts the state is a programmer error (assert). */
  apply(record: MetadataRecord): void {
    switch (record.type) {
      case 'cluster':
        this.clusterId = record.clusterId;
        return;
      case 'topic':
        assert.ok(!this.topicIdsByName.has(record.name), `topic ${record.name} applied twice`);
        this.topicsById.set(record.topicId, {
          name: record.name,
          topicId: record.topicId,
          configs: record.configs,
          partitions: [],
        });
        this.topicIdsByName.set(record.name, record.topicId);
        return;
      case 'topic-configs': {
        const topic = this.topicsById.get(record.topicId);
        assert.ok(topic, `config record for unknown topic id ${record.topicId}`);
        topic.configs = record.configs;
        return;
      }
      case 'partition': {
        const topic = this.topicsById.get(record.topicId);
        assert.ok(topic, `partition record for unknown topic id ${record.topicId}`);
        const state: PartitionState = {
          partition: record.partition,
          replicas: record.replicas,
          isr: record.isr,
          leader: record.leader,
          leaderEpoch: record.leaderEpoch,
          partitionEpoch: record.partitionEpoch ?? 0,
        };
        const previous = topic.partitions[record.partition];
        if (previous) {
          assert.ok(record.leaderEpoch >= previous.leaderEpoch, 'leader epochs only grow');
          if (record.leader !== previous.leader)
            assert.ok(record.leaderEpoch > previous.leaderEpoch, 'a new leader has a new leader epoch');
          if (record.partitionEpoch !== undefined)
            assert.ok(record.partitionEpoch > previous.partitionEpoch, 'partition epochs only grow');
        } else assert.equal(record.partition, topic.partitions.length, 'partitions are created densely');
        assert.ok(state.leader === -1 || state.isr.includes(state.leader), 'the leader is in the ISR');
        topic.partitions[record.partition] = state;
        return;
      }
      case 'remove-topic': {
        const topic = this.topicsById.get(record.topicId);
        assert.ok(topic, `remove of unknown topic id ${record.topicId}`);
        this.topicsById.delete(record.topicId);
        this.topicIdsByName.delete(topic.name);
        return;
      }
      case 'producer-ids':
        assert.ok(record.nextProducerId > this.nextProducerId, 'producer ids only grow');
        this.nextProducerId = record.nextProducerId;
        return;
      case 'register-broker': {
        const previous = this.brokers.get(record.brokerId);
        if (previous) assert.ok(record.brokerEpoch > previous.brokerEpoch, 'broker epochs only grow');
        this.brokers.set(record.brokerId, {
          nodeId: record.brokerId,
          host: record.host,
          port: record.port,
          brokerEpoch: record.brokerEpoch,
          fenced: false,
        });
        return;
      }
      case 'fence-broker': {
        const broker = this.brokers.get(record.brokerId);
        assert.ok(broker, `fence of unregistered broker ${record.brokerId}`);
        assert.equal(record.brokerEpoch, broker.brokerEpoch, 'a fence names the current registration');
        this.brokers.set(record.brokerId, { ...broker, fenced: true });
        return;
      }
      case 'replica-offline': {
        const broker = this.brokers.get(record.brokerId);
        assert.ok(broker, `replica-offline of unregistered broker ${record.brokerId}`);
        assert.equal(record.brokerEpoch, broker.brokerEpoch, 'a replica-offline names the current registration');
        if (this.isReplicaOffline(record.brokerId, record.topicId, record.partition)) return;
        const offlineReplicas = [
          ...(broker.offlineReplicas ?? []),
          { topicId: record.topicId, partition: record.partition },
        ];
        this.brokers.set(record.brokerId, { ...broker, offlineReplicas });
        return;
      }
      case 'controller-epoch':
        assert.ok(record.controllerEpoch > this.controllerEpoch, 'controller epochs only grow');
        this.controllerEpoch = record.controllerEpoch;
        return;
    }
  }

  /** The whole published image (brokers by node id, topics in creation order). */
  image(controllerId: number): MetadataImage {
    return {
      clusterId: this.clusterId,
      controllerId,
      offset: this.offset,
      controllerEpoch: this.controllerEpoch,
      brokers: [...this.brokers.values()].sort((a, b) => a.nodeId - b.nodeId),
      topics: [...this.topicsById.values()],
    };
  }

  isRegistered(brokerId: number): boolean {
    return this.brokers.has(brokerId);
  }

  /** Registered and unfenced: may lead, be in an ISR, and get new replicas. */
  isActive(brokerId: number): boolean {
    const broker = this.brokers.get(brokerId);
    return broker !== undefined && !broker.fenced;
  }

  /** Broker `brokerId`'s replica of the partition failed on its disk during its current registration. */
  isReplicaOffline(brokerId: number, topicId: string, partition: number): boolean {
    const offline = this.brokers.get(brokerId)?.offlineReplicas ?? [];
    return offline.some((r) => r.topicId === topicId && r.partition === partition);
  }

  /** Active, and its replica of the partition is not offline: may lead it and be in its ISR. */
  isEligibleReplica(brokerId: number, topicId: string, partition: number): boolean {
    return this.isActive(brokerId) && !this.isReplicaOffline(brokerId, topicId, partition);
  }

  /** Node ids of the active brokers, ascending. */
  activeBrokerIds(): number[] {
    return [...this.brokers.values()]
      .filter((b) => !b.fenced)
      .map((b) => b.nodeId)
      .sort((a, b) => a - b);
  }

  topicByName(name: string): TopicState | undefined {
    const topicId = this.topicIdsByName.get(name);
    return topicId === undefined ? undefined : this.topicsById.get(topicId);
  }

  /** Whether `brokerId` leads any partition. */
  leadsAny(brokerId: number): boolean {
    for (const topic of this.topicsById.values()) if (topic.partitions.some((p) => p.leader === brokerId)) return true;
    return false;
  }
}
