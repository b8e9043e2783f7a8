/**
 * The controller actor (src/controller/controller-actor.ts) under the simulation runtime, on a
 * MemoryFileSystem with three registered brokers: every message of its `receive` switch with the
 * error codes Kafka gives for the bad inputs it handles, and restarts (a crash restarted by the
 * runtime, a power loss, a torn metadata log) that replay the metadata log into the same image; a
 * change torn anywhere replays whole or not at all, and a log corrupt before committed changes fails
 * the controller start.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import type { SimRuntime } from '../../../src/runtime/sim-runtime';
import type { Endpoint } from '../../../src/runtime/runtime';
import { actorRef } from '../../../src/runtime/actor';
import type { MessageMap } from '../../../src/runtime/actor';
import type {
  ControllerMessages,
  AlterTopicConfigsCommand,
  CreatePartitionsCommand,
  CreateTopicResult,
  CreateTopicsCommand,
} from '../../../src/controller/messages';
import type { MetadataImage, TopicState } from '../../../src/controller/metadata-records';
import { ZERO_UUID } from '../../../src/controller/uuid';
import { recordingLogger } from '../storage/helpers';
import {
  ask,
  bootController,
  brokerListener,
  CONTROLLER,
  controllerArgs,
  METADATA_LOG,
  powerCycle,
  registerBrokers,
} from '../../helpers/sim-harness';

const UUID = /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/;

type Topic = CreateTopicsCommand['topics'][number];

function topic(name: string, numPartitions = 1, replicationFactor = 1, configs: Record<string, string> = {}): Topic {
  return { name, numPartitions, replicationFactor, configs };
}

/** A controller client: one method per message kind, each driving the simulation until the reply. */
function client(sim: SimRuntime, net: Endpoint) {
  const call = <K extends keyof ControllerMessages & string>(type: K, body: ControllerMessages[K]['body']) =>
    ask(sim, net, CONTROLLER, type, body);
  return {
    metadata: () => call('controller.get-metadata', {}),
    createTopics: (topics: Topic[], validateOnly = false) => call('controller.create-topics', { topics, validateOnly }),
    deleteTopics: (topics: { name: string | null; topicId: string | null }[]) =>
      call('controller.delete-topics', { topics }),
    alterConfigs: (resources: AlterTopicConfigsCommand['resources'], incremental: boolean, validateOnly = false) =>
      call('controller.alter-topic-configs', {
        resources,
        incremental,
        validateOnly,
      }),
    createPartitions: (topics: CreatePartitionsCommand['topics'], validateOnly = false) =>
      call('controller.create-partitions', { topics, validateOnly }),
    initProducerId: () => call('controller.init-producer-id', {}),
  };
}

/** Boots the controller on `fs` and registers brokers `register` (all three by default; none for a restart). */
async function bootClient(
  seed: number,
  fs = new MemoryFileSystem(),
  args = controllerArgs(),
  register: readonly number[] = args.nodeIds,
) {
  const { sim, net } = await bootController(seed, fs, args);
  const epochs = await registerBrokers(sim, net, register);
  return { sim, net, fs, epochs, controller: client(sim, net) };
}

/**
 * A restarted controller's image: the one before, with the controller epoch one higher and one more
 * frame (the controller-epoch record every start commits).
 */
function assertReplayed(after: MetadataImage, before: MetadataImage, message?: string): void {
  assert.deepEqual(
    { ...after, offset: before.offset, controllerEpoch: before.controllerEpoch },
    before,
    message ?? 'the same image',
  );
  assert.equal(after.controllerEpoch, before.controllerEpoch + 1, 'the controller epoch goes up by one');
  assert.equal(after.offset, before.offset + 1, 'one frame more: the controller epoch');
}

/** Checks a partition of an automatic assignment: distinct replicas, ISR = replicas, leader = first, epochs 0. */
function assertFreshPartition(p: TopicState['partitions'][number], index: number, replicationFactor: number): void {
  assert.equal(p.partition, index);
  assert.equal(p.replicas.length, replicationFactor);
  assert.equal(new Set(p.replicas).size, replicationFactor, 'distinct replicas');
  assert.ok(p.replicas.every((id) => [0, 1, 2].includes(id)));
  assert.deepEqual(p.isr, p.replicas);
  assert.equal(p.leader, p.replicas[0]);
  assert.equal(p.leaderEpoch, 0);
  assert.equal(p.partitionEpoch, 0);
}

function topicNamed(image: MetadataImage, name: string): TopicState | undefined {
  return image.topics.find((t) => t.name === name);
}

/** The error code and message of a failed create-topics result, with Kafka's -1 counts and no topic id. */
function failed(name: string, errorCode: number, errorMessage: string): CreateTopicResult {
  return { name, topicId: '', errorCode, errorMessage, numPartitions: -1, replicationFactor: -1 };
}

describe('controller actor: get-metadata', () => {
  test('a new controller publishes a fresh cluster id, itself as controller, the registered brokers, no topics', async () => {
    const { sim, epochs, controller } = await bootClient(1);
    const image = await controller.metadata();
    assert.match(image.clusterId, UUID);
    assert.equal(image.controllerId, 0, 'the first node id');
    assert.deepEqual(
      image.brokers,
      [0, 1, 2].map((nodeId) => ({
        nodeId,
        ...brokerListener(nodeId),
        brokerEpoch: epochs.get(nodeId),
        fenced: false,
      })),
    );
    assert.deepEqual(image.topics, []);
    assert.equal(image.controllerEpoch, 1, 'the first start');
    assert.equal(image.offset, 4, 'frames: cluster id and controller epoch, then three registrations');
    assert.deepEqual([...epochs.values()], [1, 2, 3], 'each broker epoch is the offset of its registration');
    await sim.shutdown();
  });

  test('the same seed gives the same cluster id and topic ids; another seed does not', async () => {
    async function run(seed: number): Promise<MetadataImage> {
      const { sim, controller } = await bootClient(seed);
      await controller.createTopics([topic('a', 2)]);
      const image = await controller.metadata();
      await sim.shutdown();
      return image;
    }
    assert.deepEqual(await run(5), await run(5));
    assert.notEqual((await run(5)).clusterId, (await run(6)).clusterId);
  });

  test('an unknown message type is logged and ignored (no reply, no state change)', async () => {
    const logger = recordingLogger();
    const { sim, net } = await bootController(2, new MemoryFileSystem(), controllerArgs(), { logger });
    const controller = client(sim, net);
    const before = await controller.metadata();
    net.send(actorRef<MessageMap>(CONTROLLER), 'no-such-message', {});
    await sim.settle();
    assert.ok(
      logger.lines.some(
        (l) =>
          l.level === 'warn' &&
          l.msg === 'controller ignores unknown message type' &&
          (l.fields as { type?: string }).type === 'no-such-message',
      ),
    );
    assert.deepEqual(await controller.metadata(), before);
    await sim.shutdown();
  });
});

describe('controller actor: create-topics', () => {
  test('creates a topic with a random id, rack-unaware replicas, ISR = replicas, leader = first replica, epoch 0', async () => {
    const { sim, controller } = await bootClient(3);
    const { results, image } = await controller.createTopics([topic('orders', 3, 2, { 'cleanup.policy': 'compact' })]);
    assert.equal(results.length, 1);
    const [result] = results;
    assert.match(result!.topicId, UUID);
    assert.deepEqual(result, {
      name: 'orders',
      topicId: result!.topicId,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      numPartitions: 3,
      replicationFactor: 2,
    });
    const orders = topicNamed(image, 'orders')!;
    assert.deepEqual(
      { ...orders, partitions: [] },
      {
        name: 'orders',
        topicId: result!.topicId,
        configs: { 'cleanup.policy': 'compact' },
        partitions: [],
      },
    );
    assert.equal(orders.partitions.length, 3);
    orders.partitions.forEach((p, i) => assertFreshPartition(p, i, 2));
    assert.deepEqual(orders.partitions.map((p) => p.leader).sort(), [0, 1, 2], 'one leader per broker');
    assert.deepEqual(await controller.metadata(), image, 'the reply carries the published image');
    await sim.shutdown();
  });

  test('-1 partitions and -1 replication factor take the broker defaults', async () => {
    const { sim, controller } = await bootClient(
      4,
      new MemoryFileSystem(),
      controllerArgs({ numPartitions: 4, defaultReplicationFactor: 3 }),
    );
    const { results, image } = await controller.createTopics([topic('defaults', -1, -1)]);
    assert.equal(results[0]!.errorCode, ErrorCode.NONE);
    assert.equal(results[0]!.numPartitions, 4);
    assert.equal(results[0]!.replicationFactor, 3);
    const partitions = topicNamed(image, 'defaults')!.partitions;
    assert.equal(partitions.length, 4);
    partitions.forEach((p, i) => assertFreshPartition(p, i, 3));
    await sim.shutdown();
  });

  test('illegal names: INVALID_TOPIC_EXCEPTION with the Topic.validate reason; 249 characters is fine', async () => {
    const { sim, controller } = await bootClient(5);
    const { results, image } = await controller.createTopics([
      topic(''),
      topic('.'),
      topic('..'),
      topic('x'.repeat(250)),
      topic('bad name'),
      topic('y'.repeat(249)),
    ]);
    assert.deepEqual(
      results.map((r) => r.errorCode),
      [
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        ErrorCode.NONE,
      ],
    );
    assert.deepEqual(results[1], failed('.', ErrorCode.INVALID_TOPIC_EXCEPTION, 'Topic name cannot be "." or ".."'));
    assert.deepEqual(
      image.topics.map((t) => t.name),
      ['y'.repeat(249)],
    );
    await sim.shutdown();
  });

  test('an existing name: TOPIC_ALREADY_EXISTS, the topic unchanged', async () => {
    const { sim, controller } = await bootClient(6);
    const created = await controller.createTopics([topic('a', 2)]);
    const again = await controller.createTopics([topic('a', 5)]);
    assert.deepEqual(again.results, [failed('a', ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'a' already exists.")]);
    assert.deepEqual(again.image, created.image);
    await sim.shutdown();
  });

  test("a name that differs from an existing one only in '.' vs '_' collides (Kafka Topic.hasCollision)", async () => {
    const { sim, controller } = await bootClient(7);
    await controller.createTopics([topic('metrics.cpu')]);
    const { results, image } = await controller.createTopics([topic('metrics_cpu'), topic('metrics-cpu')]);
    assert.deepEqual(results[0], {
      ...failed(
        'metrics_cpu',
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        "Topic 'metrics_cpu' collides with existing topic: metrics.cpu",
      ),
    });
    assert.equal(results[1]!.errorCode, ErrorCode.NONE, "'-' is not a collision character");
    assert.deepEqual(image.topics.map((t) => t.name).sort(), ['metrics-cpu', 'metrics.cpu']);
    await sim.shutdown();
  });

  test('a name twice in one request: the first is created, the second gets INVALID_REQUEST', async () => {
    const { sim, controller } = await bootClient(8);
    const { results, image } = await controller.createTopics([topic('dup', 1), topic('dup', 2)]);
    assert.equal(results[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(results[1], failed('dup', ErrorCode.INVALID_REQUEST, 'Duplicate topic name dup in request'));
    assert.equal(topicNamed(image, 'dup')!.partitions.length, 1);
    await sim.shutdown();
  });

  test('partition counts 0, -2 and above 10000: INVALID_PARTITIONS', async () => {
    const { sim, controller } = await bootClient(9);
    const { results, image } = await controller.createTopics([topic('p0', 0), topic('pm2', -2), topic('pbig', 10_001)]);
    for (const result of results)
      assert.deepEqual(
        result,
        failed(
          result.name,
          ErrorCode.INVALID_PARTITIONS,
          'Number of partitions must be larger than 0 and at most 10000.',
        ),
      );
    assert.deepEqual(image.topics, []);
    await sim.shutdown();
  });

  test('replication factors 0, -2 and more than the registered brokers: INVALID_REPLICATION_FACTOR', async () => {
    const { sim, controller } = await bootClient(10);
    const { results, image } = await controller.createTopics([
      topic('r0', 1, 0),
      topic('rm2', 1, -2),
      topic('r4', 1, 4),
    ]);
    assert.deepEqual(
      results[0],
      failed('r0', ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.'),
    );
    assert.deepEqual(
      results[1],
      failed('rm2', ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.'),
    );
    assert.deepEqual(
      results[2],
      failed(
        'r4',
        ErrorCode.INVALID_REPLICATION_FACTOR,
        'Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because only 3 broker(s) are registered.',
      ),
    );
    assert.deepEqual(image.topics, []);
    await sim.shutdown();
  });

  test('unknown config names and bad values: INVALID_CONFIG', async () => {
    const { sim, controller } = await bootClient(11);
    const { results, image } = await controller.createTopics([
      topic('c1', 1, 1, { 'no.such.config': '1' }),
      topic('c2', 1, 1, { 'retention.ms': 'soon' }),
      topic('c3', 1, 1, { 'cleanup.policy': 'shred' }),
    ]);
    assert.deepEqual(results[0], failed('c1', ErrorCode.INVALID_CONFIG, 'Unknown topic config name: no.such.config'));
    assert.deepEqual(
      results.map((r) => r.errorCode),
      [ErrorCode.INVALID_CONFIG, ErrorCode.INVALID_CONFIG, ErrorCode.INVALID_CONFIG],
    );
    assert.deepEqual(image.topics, []);
    await sim.shutdown();
  });

  test('validateOnly answers as a create would but writes and publishes nothing', async () => {
    const { sim, fs, controller } = await bootClient(12);
    const logBytes = fs.readFile(METADATA_LOG).length;
    const { results, image } = await controller.createTopics([topic('v', 2, 2), topic('bad', 0)], true);
    assert.equal(results[0]!.errorCode, ErrorCode.NONE);
    assert.equal(results[0]!.numPartitions, 2);
    assert.equal(results[0]!.replicationFactor, 2);
    assert.equal(results[1]!.errorCode, ErrorCode.INVALID_PARTITIONS, 'validateOnly still validates');
    assert.deepEqual(image.topics, []);
    assert.equal(fs.readFile(METADATA_LOG).length, logBytes, 'nothing appended to the metadata log');
    assert.equal((await controller.createTopics([topic('v')])).results[0]!.errorCode, ErrorCode.NONE);
    await sim.shutdown();
  });
});

describe('controller actor: delete-topics', () => {
  test('by name and by topic id: NONE, the topic leaves the image, the name can be created again with a new id', async () => {
    const { sim, controller } = await bootClient(13);
    const created = await controller.createTopics([topic('a'), topic('b')]);
    const [a, b] = created.results;
    const { results, image } = await controller.deleteTopics([
      { name: 'a', topicId: null },
      { name: null, topicId: b!.topicId },
    ]);
    assert.deepEqual(results, [
      { name: 'a', topicId: a!.topicId, errorCode: ErrorCode.NONE, errorMessage: null },
      { name: 'b', topicId: b!.topicId, errorCode: ErrorCode.NONE, errorMessage: null },
    ]);
    assert.deepEqual(image.topics, []);
    const recreated = await controller.createTopics([topic('a')]);
    assert.equal(recreated.results[0]!.errorCode, ErrorCode.NONE);
    assert.notEqual(recreated.results[0]!.topicId, a!.topicId, 'a new topic id');
    await sim.shutdown();
  });

  test('the zero topic id means "by name"', async () => {
    const { sim, controller } = await bootClient(14);
    const created = await controller.createTopics([topic('z')]);
    const { results } = await controller.deleteTopics([{ name: 'z', topicId: ZERO_UUID }]);
    assert.deepEqual(results, [
      { name: 'z', topicId: created.results[0]!.topicId, errorCode: ErrorCode.NONE, errorMessage: null },
    ]);
    await sim.shutdown();
  });

  test('an unknown name: UNKNOWN_TOPIC_OR_PARTITION; an unknown topic id: UNKNOWN_TOPIC_ID', async () => {
    const { sim, controller } = await bootClient(15);
    await controller.createTopics([topic('kept')]);
    const before = await controller.metadata();
    const { results, image } = await controller.deleteTopics([
      { name: 'missing', topicId: null },
      { name: 'missing', topicId: ZERO_UUID },
      { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAg' },
      { name: 'kept', topicId: 'AAAAAAAAAAAAAAAAAAAAAg' },
    ]);
    const message = 'This server does not host this topic-partition.';
    assert.deepEqual(results, [
      { name: 'missing', topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: message },
      { name: 'missing', topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: message },
      { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAg', errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: message },
      {
        name: 'kept',
        topicId: 'AAAAAAAAAAAAAAAAAAAAAg',
        errorCode: ErrorCode.UNKNOWN_TOPIC_ID,
        errorMessage: message,
      },
    ]);
    assert.deepEqual(image, before, 'a topic id, when given, wins over the name');
    await sim.shutdown();
  });

  test('the same topic twice in one request: deleted once, then UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const { sim, controller } = await bootClient(16);
    await controller.createTopics([topic('twice')]);
    const { results } = await controller.deleteTopics([
      { name: 'twice', topicId: null },
      { name: 'twice', topicId: null },
    ]);
    assert.deepEqual(
      results.map((r) => r.errorCode),
      [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    );
    await sim.shutdown();
  });
});

describe('controller actor: alter-topic-configs', () => {
  test('incremental set and delete apply to the current overrides', async () => {
    const { sim, controller } = await bootClient(17);
    await controller.createTopics([topic('t', 1, 1, { 'retention.ms': '1000', 'segment.bytes': '1048576' })]);
    const { results, image } = await controller.alterConfigs(
      [
        {
          topic: 't',
          ops: [
            { name: 'retention.ms', op: 'set', value: '2000' },
            { name: 'segment.bytes', op: 'delete', value: null },
            { name: 'cleanup.policy', op: 'set', value: 'compact' },
          ],
        },
      ],
      true,
    );
    assert.deepEqual(results, [{ topic: 't', errorCode: ErrorCode.NONE, errorMessage: null }]);
    assert.deepEqual(topicNamed(image, 't')!.configs, { 'retention.ms': '2000', 'cleanup.policy': 'compact' });
    await sim.shutdown();
  });

  test('non-incremental (AlterConfigs) replaces the whole override set', async () => {
    const { sim, controller } = await bootClient(18);
    await controller.createTopics([topic('t', 1, 1, { 'retention.ms': '1000' })]);
    const { results, image } = await controller.alterConfigs(
      [{ topic: 't', ops: [{ name: 'segment.ms', op: 'set', value: '60000' }] }],
      false,
    );
    assert.equal(results[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(topicNamed(image, 't')!.configs, { 'segment.ms': '60000' });
    await sim.shutdown();
  });

  test('APPEND and SUBTRACT on cleanup.policy (a list; the default is delete), KIP-339', async () => {
    const { sim, controller } = await bootClient(19);
    await controller.createTopics([topic('t')]);
    const appended = await controller.alterConfigs(
      [{ topic: 't', ops: [{ name: 'cleanup.policy', op: 'append', value: 'compact' }] }],
      true,
    );
    assert.equal(appended.results[0]!.errorCode, ErrorCode.NONE);
    assert.equal(topicNamed(appended.image, 't')!.configs['cleanup.policy'], 'delete,compact');
    const twice = await controller.alterConfigs(
      [{ topic: 't', ops: [{ name: 'cleanup.policy', op: 'append', value: 'compact' }] }],
      true,
    );
    assert.equal(topicNamed(twice.image, 't')!.configs['cleanup.policy'], 'delete,compact', 'append adds no duplicate');
    const subtracted = await controller.alterConfigs(
      [{ topic: 't', ops: [{ name: 'cleanup.policy', op: 'subtract', value: 'delete' }] }],
      true,
    );
    assert.equal(topicNamed(subtracted.image, 't')!.configs['cleanup.policy'], 'compact');
    await sim.shutdown();
  });

  test('bad inputs: UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG for a null value, a non-list APPEND, a bad value or name', async () => {
    const { sim, controller } = await bootClient(20);
    await controller.createTopics([topic('t', 1, 1, { 'retention.ms': '1000' })]);
    const before = await controller.metadata();
    const { results, image } = await controller.alterConfigs(
      [
        { topic: 'missing', ops: [{ name: 'retention.ms', op: 'set', value: '1' }] },
        { topic: 't', ops: [{ name: 'retention.ms', op: 'set', value: null }] },
        { topic: 't', ops: [{ name: 'retention.ms', op: 'append', value: '5' }] },
        { topic: 't', ops: [{ name: 'retention.ms', op: 'set', value: 'soon' }] },
        { topic: 't', ops: [{ name: 'no.such.config', op: 'set', value: '1' }] },
      ],
      true,
    );
    assert.deepEqual(results.slice(0, 3), [
      {
        topic: 'missing',
        errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        errorMessage: 'Topic missing does not exist',
      },
      { topic: 't', errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Null value not supported for retention.ms' },
      {
        topic: 't',
        errorCode: ErrorCode.INVALID_CONFIG,
        errorMessage: 'Config retention.ms is not a list: APPEND is not allowed',
      },
    ]);
    assert.equal(results[3]!.errorCode, ErrorCode.INVALID_CONFIG);
    assert.deepEqual(results[4], {
      topic: 't',
      errorCode: ErrorCode.INVALID_CONFIG,
      errorMessage: 'Unknown topic config name: no.such.config',
    });
    assert.deepEqual(image, before, 'a refused change leaves the overrides as they were');
    await sim.shutdown();
  });

  test('validateOnly validates and changes nothing', async () => {
    const { sim, fs, controller } = await bootClient(21);
    await controller.createTopics([topic('t', 1, 1, { 'retention.ms': '1000' })]);
    const before = await controller.metadata();
    const logBytes = fs.readFile(METADATA_LOG).length;
    const { results, image } = await controller.alterConfigs(
      [
        { topic: 't', ops: [{ name: 'retention.ms', op: 'set', value: '5' }] },
        { topic: 't', ops: [{ name: 'retention.ms', op: 'set', value: 'x' }] },
      ],
      true,
      true,
    );
    assert.deepEqual(
      results.map((r) => r.errorCode),
      [ErrorCode.NONE, ErrorCode.INVALID_CONFIG],
    );
    assert.deepEqual(image, before);
    assert.equal(fs.readFile(METADATA_LOG).length, logBytes);
    await sim.shutdown();
  });
});

describe('controller actor: create-partitions', () => {
  test('raises the count with rack-unaware replicas of the topic replication factor, or the given assignments', async () => {
    const { sim, controller } = await bootClient(22);
    await controller.createTopics([topic('auto', 1, 2), topic('manual', 1, 2)]);
    const { results, image } = await controller.createPartitions([
      { name: 'auto', count: 3, assignments: null },
      {
        name: 'manual',
        count: 3,
        assignments: [
          [2, 1],
          [1, 0],
        ],
      },
    ]);
    assert.deepEqual(results, [
      { name: 'auto', errorCode: ErrorCode.NONE, errorMessage: null },
      { name: 'manual', errorCode: ErrorCode.NONE, errorMessage: null },
    ]);
    const auto = topicNamed(image, 'auto')!.partitions;
    auto.forEach((p, i) => assertFreshPartition(p, i, 2));
    assert.deepEqual(
      auto.map((p) => p.leader).sort(),
      [0, 1, 2],
      'the new partitions continue the layout: one leader per broker',
    );
    assert.deepEqual(topicNamed(image, 'manual')!.partitions.slice(1), [
      { partition: 1, replicas: [2, 1], isr: [2, 1], leader: 2, leaderEpoch: 0, partitionEpoch: 0 },
      { partition: 2, replicas: [1, 0], isr: [1, 0], leader: 1, leaderEpoch: 0, partitionEpoch: 0 },
    ]);
    await sim.shutdown();
  });

  test('bad inputs: INVALID_REQUEST, UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS, INVALID_REPLICA_ASSIGNMENT', async () => {
    const { sim, controller } = await bootClient(23);
    await controller.createTopics([topic('t', 2, 2), topic('d')]);
    const before = await controller.metadata();
    const { results, image } = await controller.createPartitions([
      { name: 'missing', count: 3, assignments: null },
      { name: 't', count: 2, assignments: null },
      { name: 't', count: 3, assignments: null },
      { name: 'd', count: 1, assignments: null },
    ]);
    assert.deepEqual(results, [
      {
        name: 'missing',
        errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        errorMessage: "The topic 'missing' does not exist.",
      },
      {
        name: 't',
        errorCode: ErrorCode.INVALID_PARTITIONS,
        errorMessage: 'Topic currently has 2 partitions, which is higher than the requested 2.',
      },
      { name: 't', errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic t in request' },
      {
        name: 'd',
        errorCode: ErrorCode.INVALID_PARTITIONS,
        errorMessage: 'Topic currently has 1 partitions, which is higher than the requested 1.',
      },
    ]);
    const assignment = await controller.createPartitions([{ name: 't', count: 10_001, assignments: null }]);
    assert.deepEqual(assignment.results, [
      { name: 't', errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: 'At most 10000 partitions per topic' },
    ]);
    const badAssignments: number[][][] = [
      [[0, 1]], // one assignment for two new partitions
      [[0], [1]], // wrong replication factor
      [
        [0, 7],
        [1, 2],
      ], // an unregistered broker
      [
        [1, 1],
        [1, 2],
      ], // a broker twice
    ];
    for (const assignments of badAssignments) {
      const reply = await controller.createPartitions([{ name: 't', count: 4, assignments }]);
      assert.equal(reply.results[0]!.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT, JSON.stringify(assignments));
    }
    assert.deepEqual(
      (await controller.createPartitions([{ name: 't', count: 4, assignments: [[0, 1]] }])).results[0]!.errorMessage,
      'Increasing the number of partitions by 2 but 1 assignments provided.',
    );
    assert.deepEqual(await controller.metadata(), before);
    assert.deepEqual(image, before);
    await sim.shutdown();
  });

  test('validateOnly validates and adds nothing', async () => {
    const { sim, fs, controller } = await bootClient(24);
    await controller.createTopics([topic('t')]);
    const before = await controller.metadata();
    const logBytes = fs.readFile(METADATA_LOG).length;
    const { results, image } = await controller.createPartitions([{ name: 't', count: 5, assignments: null }], true);
    assert.deepEqual(results, [{ name: 't', errorCode: ErrorCode.NONE, errorMessage: null }]);
    assert.deepEqual(image, before);
    assert.equal(fs.readFile(METADATA_LOG).length, logBytes);
    await sim.shutdown();
  });
});

describe('controller actor: init-producer-id', () => {
  test('hands out dense producer ids from 0 with epoch 0, each fsynced before the reply', async () => {
    const { sim, fs, controller } = await bootClient(25);
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const logBytes = fs.readFile(METADATA_LOG).length;
      ids.push(await controller.initProducerId());
      assert.ok(fs.readFile(METADATA_LOG).length > logBytes, 'a producer-ids record per id');
      assert.equal(fs.unsyncedBytes(METADATA_LOG), 0);
    }
    assert.deepEqual(ids, [
      { errorCode: ErrorCode.NONE, producerId: 0, producerEpoch: 0 },
      { errorCode: ErrorCode.NONE, producerId: 1, producerEpoch: 0 },
      { errorCode: ErrorCode.NONE, producerId: 2, producerEpoch: 0 },
    ]);
    await sim.shutdown();
  });
});

/** A workload touching every record type; returns the published image. */
async function workload(controller: ReturnType<typeof client>): Promise<MetadataImage> {
  assert.equal((await controller.createTopics([topic('a', 3, 2), topic('b', 1, 3), topic('c')])).results.length, 3);
  await controller.alterConfigs([{ topic: 'a', ops: [{ name: 'retention.ms', op: 'set', value: '60000' }] }], true);
  await controller.createPartitions([{ name: 'b', count: 2, assignments: null }]);
  await controller.deleteTopics([{ name: 'c', topicId: null }]);
  await controller.initProducerId();
  await controller.initProducerId();
  return controller.metadata();
}

describe('controller actor: restart from the metadata log', () => {
  test('a crash restarted by the runtime replays to the same image: same cluster id, topic ids, partitions, configs', async () => {
    const { sim, controller } = await bootClient(26);
    const before = await workload(controller);
    const restarts: string[][] = [];
    sim.onWorkerRestart(({ actorIds }) => restarts.push(actorIds));
    sim.crash(CONTROLLER);
    await sim.restart(CONTROLLER);
    assert.deepEqual(restarts, [[CONTROLLER]], 'the supervisor reported the restart');
    const after = await controller.metadata();
    assertReplayed(after, before);
    assert.deepEqual(
      after.topics.map((t) => [t.name, t.topicId]),
      before.topics.map((t) => [t.name, t.topicId]),
      'topic ids unchanged',
    );
    assert.ok(
      after.brokers.every((b) => !b.fenced),
      'the brokers stay registered and unfenced (their sessions start afresh)',
    );
    assert.equal(after.controllerId, before.controllerId);
    assert.deepEqual(
      await controller.initProducerId(),
      { errorCode: ErrorCode.NONE, producerId: 2, producerEpoch: 0 },
      'producer ids go on',
    );
    const created = await controller.createTopics([topic('a')]);
    assert.equal(created.results[0]!.errorCode, ErrorCode.TOPIC_ALREADY_EXISTS, 'the replayed names are known');
    await sim.shutdown();
  });

  test('a power loss (either crash kind) loses nothing: every change was fsynced before it was answered', async () => {
    for (const kind of ['lose-unsynced', 'torn-last-write'] as const) {
      const { sim, fs, controller } = await bootClient(27);
      const before = await workload(controller);
      await powerCycle(sim, fs, { kind }, [CONTROLLER]);
      assertReplayed(await controller.metadata(), before, kind);
      await sim.shutdown();
    }
  });

  test('restarting twice, and after a clean stop, gives the same image', async () => {
    const fs = new MemoryFileSystem();
    const first = await bootClient(28, fs);
    const before = await workload(first.controller);
    await first.sim.shutdown();
    const second = await bootClient(29, fs, controllerArgs(), []);
    const replayed = await second.controller.metadata();
    assertReplayed(replayed, before, 'a new runtime, another seed: the log decides');
    second.sim.crash(CONTROLLER);
    await second.sim.restart(CONTROLLER);
    second.sim.crash(CONTROLLER);
    await second.sim.restart(CONTROLLER);
    const twice = await second.controller.metadata();
    assert.deepEqual({ ...twice, offset: replayed.offset, controllerEpoch: replayed.controllerEpoch }, replayed);
    assert.equal(twice.controllerEpoch, before.controllerEpoch + 3, 'three starts after the first');
    await second.sim.shutdown();
  });

  test('a torn last record rolls the image back to before that change, and the controller goes on from there', async () => {
    const { sim, fs, controller } = await bootClient(30);
    await controller.createTopics([topic('a', 2)]);
    // A restart appends its controller-epoch frame: measure it, to find the truncation below.
    const beforeRestart = fs.readFile(METADATA_LOG).length;
    sim.crash(CONTROLLER);
    await sim.restart(CONTROLLER);
    const epochFrameBytes = fs.readFile(METADATA_LOG).length - beforeRestart;
    const beforeAlter = await controller.metadata();
    const logBytes = fs.readFile(METADATA_LOG).length;
    await controller.alterConfigs([{ topic: 'a', ops: [{ name: 'retention.ms', op: 'set', value: '5' }] }], true);
    sim.crash(CONTROLLER);
    const file = fs.open(METADATA_LOG, 'rw');
    file.truncate(logBytes + 5);
    file.sync();
    file.close();
    await sim.restart(CONTROLLER);
    assertReplayed(await controller.metadata(), beforeAlter, 'the image of the last complete record');
    assert.equal(
      fs.readFile(METADATA_LOG).length,
      logBytes + epochFrameBytes,
      'the torn frame was truncated (then the new controller epoch appended)',
    );
    const again = await controller.alterConfigs(
      [{ topic: 'a', ops: [{ name: 'retention.ms', op: 'set', value: '6' }] }],
      true,
    );
    assert.equal(topicNamed(again.image, 'a')!.configs['retention.ms'], '6');
    sim.crash(CONTROLLER);
    await sim.restart(CONTROLLER);
    assertReplayed(await controller.metadata(), again.image, 'the change after recovery replays');
    await sim.shutdown();
  });
});

describe('controller actor: a change is atomic in the metadata log', () => {
  test('a create-topics torn anywhere inside its append replays as no topic or the whole topic, never a part of it', async () => {
    const { sim, fs, controller } = await bootClient(31);
    const logBytes = fs.readFile(METADATA_LOG).length;
    await controller.createTopics([topic('a', 3)]);
    // The append wrote [topic, partition 0, partition 1, partition 2] in one write and one fsync; a power
    // loss before that fsync completed may keep any prefix of the write. Try every such prefix.
    const full = fs.readFile(METADATA_LOG);
    const partial: number[] = [];
    for (let cut = logBytes + 1; cut < full.length; cut++) {
      sim.crash(CONTROLLER);
      const file = fs.open(METADATA_LOG, 'rw');
      file.truncate(0);
      file.write(full.subarray(0, cut), 0);
      file.sync();
      file.close();
      await sim.restart(CONTROLLER);
      const replayed = topicNamed(await controller.metadata(), 'a');
      if (replayed !== undefined && replayed.partitions.length !== 3) partial.push(cut - logBytes);
    }
    assert.deepEqual(
      partial,
      [],
      `create-topics was never answered, yet topic a replays with part of its partitions when the append keeps these byte counts`,
    );
    await sim.shutdown();
  });
});

describe('controller actor: a corrupt metadata log', () => {
  test('a corrupt frame with committed frames after it fails the controller start with the file, the byte position and the fix', async () => {
    const { sim, fs, controller } = await bootClient(32);
    const clusterFrameBytes = fs.readFile(METADATA_LOG).length;
    await controller.createTopics([topic('a', 2)]);
    await controller.createTopics([topic('b')]);
    sim.crash(CONTROLLER);
    // A byte of the first create-topics' body rots at rest; the second create-topics is intact after it.
    fs.flipByte(METADATA_LOG, clusterFrameBytes + 8 + 3, 0x20);
    const damaged = Buffer.from(fs.readFile(METADATA_LOG));
    await assert.rejects(sim.restart(CONTROLLER), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.match(
        error.message,
        new RegExp(`^metadata log ${METADATA_LOG} is corrupt at byte position ${clusterFrameBytes},`),
      );
      assert.match(error.message, /Restore .* from a backup, or remove it to start a fresh cluster metadata/);
      return true;
    });
    assert.deepEqual(fs.readFile(METADATA_LOG), damaged, 'the log is left as it was, for a restore');
    assert.ok(!sim.actorIds().includes(CONTROLLER), 'the controller did not start');
    await sim.shutdown();
  });

  test('a corrupt last frame is a torn tail: the controller starts without that change', async () => {
    const first = await bootClient(34);
    await first.controller.createTopics([topic('a', 2)]);
    const beforeLast = await first.controller.metadata();
    const logBytes = first.fs.readFile(METADATA_LOG).length;
    await first.controller.createTopics([topic('b')]);
    await first.sim.shutdown();
    first.fs.flipByte(METADATA_LOG, first.fs.readFile(METADATA_LOG).length - 1, 0x20);
    const second = await bootClient(35, first.fs, controllerArgs(), []);
    assertReplayed(await second.controller.metadata(), beforeLast);
    const tail = first.fs.readFile(METADATA_LOG).subarray(logBytes);
    assert.equal(
      tail.length,
      8 + tail.readUInt32BE(0),
      'the corrupt last frame was truncated; one frame follows: the new controller epoch',
    );
    await second.sim.shutdown();
  });
});
