/**
 * The controller actor: the single writer of cluster metadata (DESIGN.md "Controller actor").
 * Every change is appended to the metadata log (fsynced) and only then applied, so a restart (the
 * supervisor re-spawns it) replays the log into the same state.
 *
 * Its messages (`controller.get-metadata`, `controller.create-topics`, `controller.delete-topics`,
 * `controller.alter-topic-configs`, `controller.create-partitions`, `controller.init-producer-id`)
 * are declared with their bodies and replies in messages.ts.
 */
import assert from 'node:assert/strict';
import type { Actor, ActorContext, Envelope, EnvelopeOf } from '../runtime/actor';
import type {
  AlterConfigResult,
  AlterTopicConfigsCommand,
  ControllerMessages,
  CreatePartitionsCommand,
  CreatePartitionsResult,
  CreateTopicResult,
  CreateTopicsCommand,
  DeleteTopicResult,
} from './messages';
import { ErrorCode } from '../protocol/error-codes';
import { MetadataLog } from './metadata-log';
import type { MetadataImage, MetadataRecord, PartitionState, TopicState } from './metadata-records';
import { topicNameInvalidReason } from './topic-names';
import { randomUuid } from './uuid';
import { validateTopicConfigs } from '../config/topic-config';

/** Spawn arguments of the controller. */
export interface ControllerArgs {
  /** Directory of the metadata log (under the first log dir). */
  metadataDir: string;
  /** Registered brokers with their advertised listener. */
  brokers: { nodeId: number; host: string; port: number }[];
  /** Broker defaults for CreateTopics with -1 and for auto-creation. */
  numPartitions: number;
  defaultReplicationFactor: number;
}

/** Upper bound on partitions per CreateTopics topic (a guard against absurd requests). */
const MAX_PARTITIONS_PER_TOPIC = 10_000;

export class ControllerActor implements Actor<ControllerMessages> {
  private log!: MetadataLog;
  private clusterId = '';
  private nextProducerId = 0;
  private readonly topicsById = new Map<string, TopicState>();
  private readonly topicIdsByName = new Map<string, string>();

  constructor(private readonly args: ControllerArgs) {}

  start(ctx: ActorContext): void {
    const { log, records } = MetadataLog.open(ctx.fs, this.args.metadataDir, ctx.log);
    this.log = log;
    for (const record of records) this.apply(record);
    if (this.clusterId === '') this.commit([{ type: 'cluster', clusterId: randomUuid(ctx.random) }]);
    ctx.log.info(
      { clusterId: this.clusterId, topics: this.topicsById.size, records: records.length },
      'controller started from metadata log',
    );
  }

  receive(envelope: EnvelopeOf<ControllerMessages>, ctx: ActorContext): void {
    // The runtime delivers any kind sent to this id: `unknown` keeps a handle for the default branch.
    const unknown: Envelope = envelope;
    switch (envelope.type) {
      case 'controller.get-metadata':
        ctx.reply(envelope, this.image());
        return;
      case 'controller.create-topics':
        ctx.reply(envelope, { results: this.createTopics(envelope.body, ctx), image: this.image() });
        return;
      case 'controller.delete-topics':
        ctx.reply(envelope, { results: envelope.body.topics.map((t) => this.deleteTopic(t)), image: this.image() });
        return;
      case 'controller.alter-topic-configs':
        ctx.reply(envelope, { results: this.alterTopicConfigs(envelope.body), image: this.image() });
        return;
      case 'controller.create-partitions':
        ctx.reply(envelope, { results: this.createPartitions(envelope.body), image: this.image() });
        return;
      case 'controller.init-producer-id': {
        const producerId = this.nextProducerId;
        this.commit([{ type: 'producer-ids', nextProducerId: producerId + 1 }]);
        ctx.reply(envelope, { producerId, producerEpoch: 0 });
        return;
      }
      default:
        ctx.log.warn({ type: unknown.type, from: unknown.from }, 'controller ignores unknown message type');
    }
  }

  stop(): void {
    this.log.close();
  }

  /** Appends records durably, then applies them (one writer; apply never fails after append). */
  private commit(records: MetadataRecord[]): void {
    this.log.append(records);
    for (const record of records) this.apply(record);
  }

  private apply(record: MetadataRecord): void {
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
        if (previous) assert.ok(record.leaderEpoch >= previous.leaderEpoch, 'leader epochs only grow');
        else assert.equal(record.partition, topic.partitions.length, 'partitions are created densely');
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
      case 'register-broker':
      case 'fence-broker':
      case 'controller-epoch':
        return; // not written yet: brokers are static until replication lands

    }
  }

  private image(): MetadataImage {
    return {
      clusterId: this.clusterId,
      controllerId: this.args.brokers[0]?.nodeId ?? 0,
      offset: 0,
      controllerEpoch: 0,
      brokers: this.args.brokers.map((b) => ({ ...b, brokerEpoch: 0, fenced: false })),
      topics: [...this.topicsById.values()],
    };
  }

  private createTopics(command: CreateTopicsCommand, ctx: ActorContext): CreateTopicResult[] {
    const seen = new Set<string>();
    return command.topics.map((request) => {
      const fail = (errorCode: number, errorMessage: string): CreateTopicResult => ({
        name: request.name,
        topicId: '',
        errorCode,
        errorMessage,
        numPartitions: -1,
        replicationFactor: -1,
      });
      const nameReason = topicNameInvalidReason(request.name);
      if (nameReason) return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, nameReason);
      if (seen.has(request.name))
        return fail(ErrorCode.INVALID_REQUEST, `Duplicate topic name ${request.name} in request`);
      seen.add(request.name);
      if (this.topicIdsByName.has(request.name))
        return fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${request.name}' already exists.`);
      // Kafka's Topic.hasCollision: '.' and '_' map to the same metric name, so such names collide.
      const unified = request.name.replaceAll('.', '_');
      const collision = [...this.topicIdsByName.keys()].find((name) => name.replaceAll('.', '_') === unified);
      if (collision)
        return fail(
          ErrorCode.INVALID_TOPIC_EXCEPTION,
          `Topic '${request.name}' collides with existing topic: ${collision}`,
        );
      const numPartitions = request.numPartitions === -1 ? this.args.numPartitions : request.numPartitions;
      if (numPartitions <= 0 || numPartitions > MAX_PARTITIONS_PER_TOPIC) {
        return fail(
          ErrorCode.INVALID_PARTITIONS,
          `Number of partitions must be larger than 0 and at most ${MAX_PARTITIONS_PER_TOPIC}.`,
        );
      }
      const replicationFactor =
        request.replicationFactor === -1 ? this.args.defaultReplicationFactor : request.replicationFactor;
      if (replicationFactor <= 0)
        return fail(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.');
      if (replicationFactor > this.args.brokers.length) {
        return fail(
          ErrorCode.INVALID_REPLICATION_FACTOR,
          `Unable to replicate the partition ${replicationFactor} time(s): The target replication factor of ${replicationFactor} cannot be reached because only ${this.args.brokers.length} broker(s) are registered.`,
        );
      }
      const configError = validateTopicConfigs(request.configs);
      if (configError) return fail(ErrorCode.INVALID_CONFIG, configError);
      const topicId = randomUuid(ctx.random);
      if (!command.validateOnly) {
        const records: MetadataRecord[] = [{ type: 'topic', name: request.name, topicId, configs: request.configs }];
        for (let partition = 0; partition < numPartitions; partition++) {
          const replicas = this.assignReplicas(partition, replicationFactor);
          records.push({
            type: 'partition',
            topicId,
            partition,
            replicas,
            isr: replicas,
            leader: replicas[0]!,
            leaderEpoch: 0,
          });
        }
        this.commit(records);
        ctx.log.info({ topic: request.name, topicId, numPartitions, replicationFactor }, 'created topic');
      }
      return {
        name: request.name,
        topicId,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        numPartitions,
        replicationFactor,
      };
    });
  }

  /** Round-robin replica assignment starting at a partition-dependent broker (Kafka's simple layout). */
  private assignReplicas(partition: number, replicationFactor: number): number[] {
    const nodeIds = this.args.brokers.map((b) => b.nodeId);
    const replicas: number[] = [];
    for (let i = 0; i < replicationFactor; i++) replicas.push(nodeIds[(partition + i) % nodeIds.length]!);
    return replicas;
  }

  private createPartitions(command: CreatePartitionsCommand): CreatePartitionsResult[] {
    const nodeIds = new Set(this.args.brokers.map((b) => b.nodeId));
    const seen = new Set<string>();
    return command.topics.map((request) => {
      const fail = (errorCode: number, errorMessage: string) => ({ name: request.name, errorCode, errorMessage });
      if (seen.has(request.name)) return fail(ErrorCode.INVALID_REQUEST, `Duplicate topic ${request.name} in request`);
      seen.add(request.name);
      const topicId = this.topicIdsByName.get(request.name);
      const topic = topicId ? this.topicsById.get(topicId) : undefined;
      if (!topic) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${request.name}' does not exist.`);
      const current = topic.partitions.length;
      if (request.count <= current) {
        return fail(
          ErrorCode.INVALID_PARTITIONS,
          `Topic currently has ${current} partitions, which is higher than the requested ${request.count}.`,
        );
      }
      if (request.count > MAX_PARTITIONS_PER_TOPIC)
        return fail(ErrorCode.INVALID_PARTITIONS, `At most ${MAX_PARTITIONS_PER_TOPIC} partitions per topic`);
      const replicationFactor = topic.partitions[0]?.replicas.length ?? 1;
      const added = request.count - current;
      if (request.assignments !== null) {
        if (request.assignments.length !== added) {
          return fail(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            `Increasing the number of partitions by ${added} but ${request.assignments.length} assignments provided.`,
          );
        }
        if (
          request.assignments.some(
            (a) => a.length !== replicationFactor || a.some((id) => !nodeIds.has(id)) || new Set(a).size !== a.length,
          )
        ) {
          return fail(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            `Replica assignments must name ${replicationFactor} distinct registered brokers`,
          );
        }
      }
      if (!command.validateOnly) {
        const records: MetadataRecord[] = [];
        for (let i = 0; i < added; i++) {
          const partition = current + i;
          const replicas = request.assignments?.[i] ?? this.assignReplicas(partition, replicationFactor);
          records.push({
            type: 'partition',
            topicId: topic.topicId,
            partition,
            replicas,
            isr: replicas,
            leader: replicas[0]!,
            leaderEpoch: 0,
          });
        }
        this.commit(records);
      }
      return { name: request.name, errorCode: ErrorCode.NONE, errorMessage: null };
    });
  }

  private alterTopicConfigs(command: AlterTopicConfigsCommand): AlterConfigResult[] {
    return command.resources.map((resource) => {
      const topicId = this.topicIdsByName.get(resource.topic);
      const topic = topicId ? this.topicsById.get(topicId) : undefined;
      if (!topic)
        return {
          topic: resource.topic,
          errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          errorMessage: `Topic ${resource.topic} does not exist`,
        };
      const next: Record<string, string> = command.incremental ? { ...topic.configs } : {};
      for (const { name, op, value } of resource.ops) {
        if (op === 'delete') {
          delete next[name];
          continue;
        }
        if (value === null)
          return {
            topic: resource.topic,
            errorCode: ErrorCode.INVALID_CONFIG,
            errorMessage: `Null value not supported for ${name}`,
          };
        if (op === 'set') next[name] = value;
        else {
          // APPEND / SUBTRACT apply to list configs only (cleanup.policy here), KIP-339.
          if (name !== 'cleanup.policy')
            return {
              topic: resource.topic,
              errorCode: ErrorCode.INVALID_CONFIG,
              errorMessage: `Config ${name} is not a list: ${op.toUpperCase()} is not allowed`,
            };
          const current = (next[name] ?? 'delete')
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean);
          const items = value
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean);
          const result =
            op === 'append'
              ? [...current, ...items.filter((i) => !current.includes(i))]
              : current.filter((c) => !items.includes(c));
          next[name] = result.join(',');
        }
      }
      const reason = validateTopicConfigs(next);
      if (reason) return { topic: resource.topic, errorCode: ErrorCode.INVALID_CONFIG, errorMessage: reason };
      if (!command.validateOnly) this.commit([{ type: 'topic-configs', topicId: topic.topicId, configs: next }]);
      return { topic: resource.topic, errorCode: ErrorCode.NONE, errorMessage: null };
    });
  }

  private deleteTopic(request: { name: string | null; topicId: string | null }): DeleteTopicResult {
    const topicId =
      request.topicId && request.topicId !== 'AAAAAAAAAAAAAAAAAAAAAA'
        ? request.topicId
        : request.name
          ? this.topicIdsByName.get(request.name)
          : undefined;
    const topic = topicId ? this.topicsById.get(topicId) : undefined;
    if (!topic) {
      const errorCode =
        request.topicId && request.topicId !== 'AAAAAAAAAAAAAAAAAAAAAA'
          ? ErrorCode.UNKNOWN_TOPIC_ID
          : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      return {
        name: request.name,
        topicId: request.topicId ?? 'AAAAAAAAAAAAAAAAAAAAAA',
        errorCode,
        errorMessage: 'This server does not host this topic-partition.',
      };
    }
    this.commit([{ type: 'remove-topic', topicId: topic.topicId }]);
    return { name: topic.name, topicId: topic.topicId, errorCode: ErrorCode.NONE, errorMessage: null };
  }
}

/** Actor factory registered as kind `controller` (src/runtime/registry.ts). */
export function createControllerActor(args: ControllerArgs): Actor {
  return new ControllerActor(args);
}
