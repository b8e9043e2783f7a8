/**
 * The controller's replication part under the simulation runtime: broker registration, fencing on
 * broker-down and on a missed session (virtual time), controlled shutdown, AlterPartition and each of
 * its error codes (KIP-497), ElectLeaders (KIP-460), unclean election on and off, the leader
 * imbalance check, rack-unaware assignment balance and explicit assignments, metadata pushes in
 * offset order, and replays (a restart, a power loss tearing a fence, a log from before registration).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32c } from '@node-rs/crc32';
import { Packr } from 'msgpackr';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { actorRef } from '../../../src/runtime/actor';
import type {
  AlterPartitionCommand,
  ControllerMessages,
  MetadataListenerMessages,
} from '../../../src/controller/messages';
import type {
  MetadataImage,
  MetadataRecord,
  PartitionState,
  TopicState,
} from '../../../src/controller/metadata-records';
import type { ControllerArgs } from '../../../src/controller/controller-actor';
import {
  ask,
  bootController,
  brokerListener,
  CONTROLLER,
  controllerArgs,
  METADATA_DIR,
  METADATA_LOG,
  NET,
  registerBrokers,
} from '../../helpers/sim-harness';

type Topic = {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
  assignments?: number[][];
};

/** A booted controller with brokers 0, 1, 2 registered, and one method per message kind. */
async function cluster(seed: number, args: Partial<ControllerArgs> = {}, fs = new MemoryFileSystem()) {
  const { sim, net } = await bootController(seed, fs, controllerArgs(args));
  const epochs = await registerBrokers(sim, net, [0, 1, 2]);
  const call = <K extends keyof ControllerMessages & string>(type: K, body: ControllerMessages[K]['body']) =>
    ask(sim, net, CONTROLLER, type, body);
  const c = {
    sim,
    net,
    fs,
    epochs,
    call,
    metadata: () => call('controller.get-metadata', {}),
    create: (topics: Topic[]) => call('controller.create-topics', { topics, validateOnly: false }),
    down: (brokerId: number) => call('controller.broker-down', { brokerId, reason: 'test' }),
    heartbeat: (brokerId: number, wantShutDown = false) =>
      call('controller.broker-heartbeat', { brokerId, brokerEpoch: c.epochs.get(brokerId)!, wantShutDown }),
    register: async (brokerId: number) => {
      const reply = await call('controller.register-broker', { brokerId, ...brokerListener(brokerId) });
      assert.equal(reply.errorCode, ErrorCode.NONE);
      c.epochs.set(brokerId, reply.brokerEpoch);
      return reply;
    },
    elect: (electionType: number, partitions: { topic: string; partition: number }[] | null) =>
      call('controller.elect-leaders', { electionType, partitions }),
    partition: async (topic: string, partition = 0): Promise<PartitionState> =>
      topicOf(await c.metadata(), topic).partitions[partition]!,
  };
  return c;
}

function topicOf(image: MetadataImage, name: string): TopicState {
  const topic = image.topics.find((t) => t.name === name);
  assert.ok(topic, `topic ${name} exists`);
  return topic;
}

function manual(name: string, assignments: number[][], configs: Record<string, string> = {}): Topic {
  return { name, numPartitions: -1, replicationFactor: -1, configs, assignments };
}

function allPartitions(image: MetadataImage): PartitionState[] {
  return image.topics.flatMap((t) => t.partitions);
}

describe('controller: registration and broker-down', () => {
  test('broker-down fences at once: it leaves every ISR, its partitions get the first live ISR member, epochs bump', async () => {
    const c = await cluster(101);
    await c.create([
      manual('t', [
        [0, 1, 2],
        [1, 0, 2],
        [2, 1, 0],
      ]),
    ]);
    const before = await c.metadata();
    await c.down(0);
    const after = await c.metadata();
    assert.equal(after.offset, before.offset + 1, 'the whole fence is one frame');
    assert.deepEqual(after.brokers.find((b) => b.nodeId === 0)!.fenced, true);
    const [p0, p1, p2] = topicOf(after, 't').partitions;
    assert.deepEqual(p0, {
      partition: 0,
      replicas: [0, 1, 2],
      isr: [1, 2],
      leader: 1,
      leaderEpoch: 1,
      partitionEpoch: 1,
    });
    assert.deepEqual(p1, {
      partition: 1,
      replicas: [1, 0, 2],
      isr: [1, 2],
      leader: 1,
      leaderEpoch: 0,
      partitionEpoch: 1,
    });
    assert.deepEqual(p2, {
      partition: 2,
      replicas: [2, 1, 0],
      isr: [2, 1],
      leader: 2,
      leaderEpoch: 0,
      partitionEpoch: 1,
    });
    await c.down(0);
    assert.deepEqual(await c.metadata(), after, 'broker-down is idempotent: nothing written');
    await c.sim.shutdown();
  });

  test('the last ISR member stays in the ISR with no leader, and leads again (new epoch) when it registers', async () => {
    const c = await cluster(102);
    await c.create([manual('solo', [[1]])]);
    await c.down(1);
    assert.deepEqual(await c.partition('solo'), {
      partition: 0,
      replicas: [1],
      isr: [1],
      leader: -1,
      leaderEpoch: 1,
      partitionEpoch: 1,
    });
    const oldEpoch = c.epochs.get(1)!;
    const reply = await c.register(1);
    assert.ok(reply.brokerEpoch > oldEpoch, 'a new broker epoch, larger than any before');
    assert.deepEqual(await c.partition('solo'), {
      partition: 0,
      replicas: [1],
      isr: [1],
      leader: 1,
      leaderEpoch: 2,
      partitionEpoch: 2,
    });
    await c.sim.shutdown();
  });

  test('a node id outside the cluster cannot register (INVALID_REQUEST); a fenced broker leads nothing new', async () => {
    const c = await cluster(103);
    const bad = await c.call('controller.register-broker', { brokerId: 7, host: 'h', port: 1 });
    assert.equal(bad.errorCode, ErrorCode.INVALID_REQUEST);
    await c.down(2);
    await c.create([{ name: 'spread', numPartitions: 6, replicationFactor: 2, configs: {} }]);
    const spread = topicOf(await c.metadata(), 'spread');
    assert.ok(
      spread.partitions.every((p) => !p.replicas.includes(2)),
      'no replica on the fenced broker',
    );
    await c.sim.shutdown();
  });
});

describe('controller: heartbeats and sessions', () => {
  test('a broker without heartbeats is fenced after broker.session.timeout.ms of virtual time, not before', async () => {
    const c = await cluster(111, { brokerSessionTimeoutMs: 9000 });
    await c.create([manual('t', [[2, 0, 1]])]);
    // Brokers 0 and 1 heartbeat every 2 s (broker.heartbeat.interval.ms); broker 2 falls silent at 0.
    for (let t = 0; t < 9000; t += 1000) {
      if (t % 2000 === 0) for (const id of [0, 1]) assert.equal((await c.heartbeat(id)).errorCode, ErrorCode.NONE);
      await c.sim.advanceTime(1000);
    }
    assert.equal(c.sim.elapsedMs, 9000);
    assert.equal((await c.metadata()).brokers.find((b) => b.nodeId === 2)!.fenced, false, 'not at 9000 ms');
    assert.equal((await c.partition('t')).leader, 2);
    await c.sim.advanceTime(1);
    const image = await c.metadata();
    assert.deepEqual(
      image.brokers.map((b) => b.fenced),
      [false, false, true],
      'broker 2 fenced just after its session; 0 and 1 kept theirs',
    );
    assert.deepEqual(await c.partition('t'), {
      partition: 0,
      replicas: [2, 0, 1],
      isr: [0, 1],
      leader: 0,
      leaderEpoch: 1,
      partitionEpoch: 1,
    });
    const fenced = await c.heartbeat(2);
    assert.deepEqual(
      fenced,
      { errorCode: ErrorCode.NONE, fenced: true, shutdownReady: false, controllerEpoch: 1 },
      'it must register again',
    );
    await c.sim.shutdown();
  });

  test('a heartbeat with a wrong broker epoch, or from an unregistered broker: STALE_BROKER_EPOCH', async () => {
    const c = await cluster(112);
    const stale = await c.call('controller.broker-heartbeat', { brokerId: 0, brokerEpoch: c.epochs.get(0)! - 1 });
    assert.equal(stale.errorCode, ErrorCode.STALE_BROKER_EPOCH);
    const { sim, net } = await bootController(113, new MemoryFileSystem());
    const unknown = await ask(sim, net, CONTROLLER, 'controller.broker-heartbeat', { brokerId: 0, brokerEpoch: 1 });
    assert.equal(unknown.errorCode, ErrorCode.STALE_BROKER_EPOCH);
    await sim.shutdown();
    await c.sim.shutdown();
  });

  test('controlled shutdown (wantShutDown): leaderships move to live ISR members, the broker leaves the ISRs, shutdownReady', async () => {
    const c = await cluster(114);
    await c.create([
      manual('t', [
        [0, 1, 2],
        [1, 0, 2],
      ]),
      manual('only0', [[0]]),
    ]);
    const reply = await c.heartbeat(0, true);
    assert.deepEqual(reply, { errorCode: ErrorCode.NONE, fenced: true, shutdownReady: true, controllerEpoch: 1 });
    const image = await c.metadata();
    assert.deepEqual(
      topicOf(image, 't').partitions.map((p) => [p.leader, p.isr, p.leaderEpoch]),
      [
        [1, [1, 2], 1],
        [1, [1, 2], 0],
      ],
    );
    assert.deepEqual(topicOf(image, 'only0').partitions[0]!.leader, -1, 'no other ISR member: offline');
    assert.ok(
      allPartitions(image).every((p) => p.leader !== 0),
      'it leads nothing',
    );
    assert.deepEqual(await c.heartbeat(0, true), reply, 'asking again changes nothing');
    await c.sim.shutdown();
  });
});

describe('controller: AlterPartition (KIP-497)', () => {
  test('each error code, and the partition epoch bumps of accepted changes', async () => {
    const c = await cluster(121);
    const created = await c.create([manual('t', [[0, 1, 2]])]);
    const topicId = created.results[0]!.topicId;
    const alter = (body: Partial<AlterPartitionCommand>) =>
      c.call('controller.alter-partition', {
        brokerId: 0,
        brokerEpoch: c.epochs.get(body.brokerId ?? 0)!,
        topicId,
        partition: 0,
        leaderEpoch: 0,
        partitionEpoch: 0,
        newIsr: [0, 1],
        ...body,
      });
    const shrunk = await alter({});
    assert.deepEqual(shrunk, {
      errorCode: ErrorCode.NONE,
      state: { partition: 0, replicas: [0, 1, 2], isr: [0, 1], leader: 0, leaderEpoch: 0, partitionEpoch: 1 },
    });
    const offset = (await c.metadata()).offset;
    assert.equal((await alter({})).errorCode, ErrorCode.INVALID_UPDATE_VERSION, 'the partition epoch moved on');
    assert.equal((await alter({ brokerEpoch: 999 })).errorCode, ErrorCode.STALE_BROKER_EPOCH);
    assert.equal((await alter({ topicId: 'AAAAAAAAAAAAAAAAAAAAAg' })).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await alter({ partition: 3 })).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(
      (await alter({ brokerId: 1, partitionEpoch: 1 })).errorCode,
      ErrorCode.INVALID_REQUEST,
      'not the leader (Kafka answers INVALID_REQUEST)',
    );
    assert.equal((await alter({ partitionEpoch: 1, newIsr: [1] })).errorCode, ErrorCode.INVALID_REQUEST, 'no leader');
    assert.equal((await alter({ partitionEpoch: 1, newIsr: [0, 0] })).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await alter({ partitionEpoch: 1, newIsr: [0, 5] })).errorCode, ErrorCode.INVALID_REQUEST);
    assert.equal((await alter({ partitionEpoch: 2 })).errorCode, ErrorCode.NOT_CONTROLLER, 'a newer epoch');
    assert.equal((await c.metadata()).offset, offset, 'refusals write nothing');
    // Broker 2 is fenced: the leader cannot add it back.
    await c.down(2);
    const ineligible = await alter({ partitionEpoch: 1, newIsr: [0, 1, 2] });
    assert.equal(ineligible.errorCode, ErrorCode.INELIGIBLE_REPLICA);
    assert.deepEqual(ineligible.state?.isr, [0, 1], 'the current state comes with the error');
    // Broker 0 goes down: 1 leads at epoch 1; an AlterPartition at the old leader epoch is fenced.
    await c.down(0);
    const now = await c.partition('t');
    assert.deepEqual([now.leader, now.leaderEpoch, now.partitionEpoch, now.isr], [1, 1, 2, [1]]);
    assert.equal(
      (await alter({ brokerId: 1, leaderEpoch: 0, partitionEpoch: 2, newIsr: [1] })).errorCode,
      ErrorCode.FENCED_LEADER_EPOCH,
    );
    await c.register(2);
    const expanded = await alter({ brokerId: 1, leaderEpoch: 1, partitionEpoch: 2, newIsr: [1, 2] });
    assert.deepEqual(expanded, {
      errorCode: ErrorCode.NONE,
      state: { partition: 0, replicas: [0, 1, 2], isr: [1, 2], leader: 1, leaderEpoch: 1, partitionEpoch: 3 },
    });
    await c.sim.shutdown();
  });
});

describe('controller: ElectLeaders and unclean election', () => {
  test('PREFERRED: back to the first replica; ELECTION_NOT_NEEDED; PREFERRED_LEADER_NOT_AVAILABLE; unknown partitions', async () => {
    const c = await cluster(131, { autoLeaderRebalanceEnable: false });
    await c.create([
      manual('t', [
        [0, 1],
        [1, 0],
      ]),
    ]);
    await c.down(0);
    assert.deepEqual((await c.elect(0, [{ topic: 't', partition: 0 }])).results, [
      { topic: 't', partition: 0, errorCode: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, errorMessage: null },
    ]);
    await c.register(0);
    // 0 is back but not yet in the ISR of t-0 (its leader would add it): still not available.
    assert.equal(
      (await c.elect(0, [{ topic: 't', partition: 0 }])).results[0]!.errorCode,
      ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
    );
    const p0 = await c.partition('t', 0);
    const expand = await c.call('controller.alter-partition', {
      brokerId: 1,
      brokerEpoch: c.epochs.get(1)!,
      topicId: topicOf(await c.metadata(), 't').topicId,
      partition: 0,
      leaderEpoch: p0.leaderEpoch,
      partitionEpoch: p0.partitionEpoch,
      newIsr: [1, 0],
    });
    assert.equal(expand.errorCode, ErrorCode.NONE);
    const { results } = await c.elect(0, [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
      { topic: 't', partition: 9 },
      { topic: 'nope', partition: 0 },
    ]);
    assert.deepEqual(results, [
      { topic: 't', partition: 0, errorCode: ErrorCode.NONE, errorMessage: null },
      { topic: 't', partition: 1, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: null },
      {
        topic: 't',
        partition: 9,
        errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        errorMessage: 'No such partition as t-9',
      },
      {
        topic: 'nope',
        partition: 0,
        errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        errorMessage: 'No such topic as nope',
      },
    ]);
    const after = await c.partition('t', 0);
    assert.deepEqual([after.leader, after.leaderEpoch], [0, p0.leaderEpoch + 1]);
    assert.deepEqual((await c.elect(0, null)).results, [], 'all partitions: the ones not needing it are left out');
    await c.sim.shutdown();
  });

  /** t-0 on [0, 1] with ISR shrunk to [0], then broker 0 down: only the out-of-ISR 1 is live. */
  async function onlyOutOfSyncLeft(seed: number, configs: Record<string, string>, args: Partial<ControllerArgs> = {}) {
    const c = await cluster(seed, args);
    const created = await c.create([manual('t', [[0, 1]], configs)]);
    const shrink = await c.call('controller.alter-partition', {
      brokerId: 0,
      brokerEpoch: c.epochs.get(0)!,
      topicId: created.results[0]!.topicId,
      partition: 0,
      leaderEpoch: 0,
      partitionEpoch: 0,
      newIsr: [0],
    });
    assert.equal(shrink.errorCode, ErrorCode.NONE);
    await c.down(0);
    return c;
  }

  test('unclean election off (the default): the partition stays offline; ElectLeaders UNCLEAN elects the live replica', async () => {
    const c = await onlyOutOfSyncLeft(132, {});
    assert.deepEqual(await c.partition('t'), {
      partition: 0,
      replicas: [0, 1],
      isr: [0],
      leader: -1,
      leaderEpoch: 1,
      partitionEpoch: 2,
    });
    const { results } = await c.elect(1, [{ topic: 't', partition: 0 }]);
    assert.deepEqual(results, [{ topic: 't', partition: 0, errorCode: ErrorCode.NONE, errorMessage: null }]);
    assert.deepEqual(await c.partition('t'), {
      partition: 0,
      replicas: [0, 1],
      isr: [1],
      leader: 1,
      leaderEpoch: 2,
      partitionEpoch: 3,
    });
    assert.equal(
      (await c.elect(1, [{ topic: 't', partition: 0 }])).results[0]!.errorCode,
      ErrorCode.ELECTION_NOT_NEEDED,
    );
    await c.sim.shutdown();
  });

  test('UNCLEAN with no live replica: ELIGIBLE_LEADERS_NOT_AVAILABLE', async () => {
    const c = await onlyOutOfSyncLeft(133, {});
    await c.down(1);
    assert.equal(
      (await c.elect(1, [{ topic: 't', partition: 0 }])).results[0]!.errorCode,
      ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
    );
    await c.sim.shutdown();
  });

  test('unclean.leader.election.enable on the topic (or as the broker default) elects the out-of-sync replica at once', async () => {
    for (const [configs, args] of [
      [{ 'unclean.leader.election.enable': 'true' }, {}],
      [{}, { uncleanLeaderElectionEnable: true }],
    ] as const) {
      const c = await onlyOutOfSyncLeft(134, configs, args);
      assert.deepEqual(await c.partition('t'), {
        partition: 0,
        replicas: [0, 1],
        isr: [1],
        leader: 1,
        leaderEpoch: 1,
        partitionEpoch: 2,
      });
      await c.sim.shutdown();
    }
    const c = await onlyOutOfSyncLeft(135, {});
    assert.equal((await c.partition('t')).leader, -1);
    const altered = await c.call('controller.alter-topic-configs', {
      resources: [{ topic: 't', ops: [{ name: 'unclean.leader.election.enable', op: 'set', value: 'true' }] }],
      incremental: true,
      validateOnly: false,
    });
    assert.equal(altered.results[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      [topicOf(altered.image, 't').partitions[0]!.leader, topicOf(altered.image, 't').partitions[0]!.isr],
      [1, [1]],
      'enabling it elects the leaderless partition',
    );
    await c.sim.shutdown();
  });

  test('auto.leader.rebalance.enable: the imbalance check moves leaderships back to their preferred replicas', async () => {
    // A session longer than the check interval: no heartbeats needed while time moves.
    const c = await cluster(136, {
      leaderImbalanceCheckIntervalSeconds: 300,
      leaderImbalancePerBrokerPercentage: 10,
      brokerSessionTimeoutMs: 3_600_000,
    });
    await c.create([{ name: 't', numPartitions: 6, replicationFactor: 2, configs: {} }]);
    await c.down(0);
    await c.register(0);
    const topicId = topicOf(await c.metadata(), 't').topicId;
    // The leaders add 0 back to their ISRs, as a caught-up follower.
    for (const p of topicOf(await c.metadata(), 't').partitions) {
      if (!p.replicas.includes(0) || p.isr.includes(0)) continue;
      const reply = await c.call('controller.alter-partition', {
        brokerId: p.leader,
        brokerEpoch: c.epochs.get(p.leader)!,
        topicId,
        partition: p.partition,
        leaderEpoch: p.leaderEpoch,
        partitionEpoch: p.partitionEpoch,
        newIsr: [...p.isr, 0],
      });
      assert.equal(reply.errorCode, ErrorCode.NONE);
    }
    const moved = topicOf(await c.metadata(), 't').partitions.filter((p) => p.replicas[0] === 0);
    assert.ok(moved.length > 0 && moved.every((p) => p.leader !== 0), 'the preferred leader 0 leads none of its own');
    await c.sim.advanceTime(299_000);
    assert.ok(
      topicOf(await c.metadata(), 't').partitions.some((p) => p.leader !== p.replicas[0]),
      'not before the check interval',
    );
    await c.sim.advanceTime(1000);
    const after = topicOf(await c.metadata(), 't').partitions;
    assert.ok(
      after.every((p) => p.leader === p.replicas[0]),
      `every partition led by its preferred replica: ${JSON.stringify(after)}`,
    );
    await c.sim.shutdown();
  });
});

describe('controller: replica assignment', () => {
  test('3 brokers, 30 partitions, RF 3: each broker leads 10 and holds 30', async () => {
    for (const seed of [141, 142, 143]) {
      const c = await cluster(seed);
      const { results } = await c.create([{ name: 'big', numPartitions: 30, replicationFactor: 3, configs: {} }]);
      assert.equal(results[0]!.errorCode, ErrorCode.NONE);
      const partitions = topicOf(await c.metadata(), 'big').partitions;
      for (const broker of [0, 1, 2]) {
        const leads = partitions.filter((p) => p.leader === broker).length;
        assert.ok(Math.abs(leads - 10) <= 1, `seed ${seed}: broker ${broker} leads ${leads}`);
        assert.equal(partitions.filter((p) => p.replicas.includes(broker)).length, 30);
      }
      await c.sim.shutdown();
    }
  });

  test('RF 2 over 3 brokers: every broker holds 20 of 30 replicas and followers are spread too', async () => {
    const c = await cluster(144);
    await c.create([{ name: 'rf2', numPartitions: 30, replicationFactor: 2, configs: {} }]);
    const partitions = topicOf(await c.metadata(), 'rf2').partitions;
    for (const broker of [0, 1, 2]) {
      assert.equal(partitions.filter((p) => p.replicas.includes(broker)).length, 20, `broker ${broker}`);
      assert.equal(partitions.filter((p) => p.replicas[1] === broker).length, 10, `broker ${broker} as follower`);
    }
    await c.sim.shutdown();
  });

  test('explicit CreateTopics assignments are honoured; the ISR is their live replicas, the leader the first of those', async () => {
    const c = await cluster(145);
    await c.down(1);
    const { results } = await c.create([
      manual('m', [
        [2, 0],
        [1, 2],
        [0, 1],
      ]),
    ]);
    assert.deepEqual(
      [results[0]!.errorCode, results[0]!.numPartitions, results[0]!.replicationFactor],
      [ErrorCode.NONE, 3, 2],
    );
    assert.deepEqual(
      topicOf(await c.metadata(), 'm').partitions.map((p) => [p.replicas, p.isr, p.leader]),
      [
        [[2, 0], [2, 0], 2],
        [[1, 2], [2], 2],
        [[0, 1], [0], 0],
      ],
    );
    await c.sim.shutdown();
  });

  test('refused explicit assignments: INVALID_REPLICA_ASSIGNMENT and INVALID_REQUEST with Kafka messages', async () => {
    const c = await cluster(146);
    await c.down(2);
    const cases: [Topic, number, string][] = [
      [
        manual('dup', [[0, 0]]),
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        'The manual partition assignment includes the broker 0 more than once.',
      ],
      [
        manual('unknown', [[0, 7]]),
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        'The manual partition assignment includes broker 7, but no such broker is registered.',
      ],
      [
        manual('empty', [[]]),
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        'The manual partition assignment includes an empty replica list.',
      ],
      [
        manual('uneven', [[0, 1], [0]]),
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        'The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s).',
      ],
      [
        manual('fenced', [[2]]),
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        'All brokers specified in the manual partition assignment for partition 0 are fenced or in controlled shutdown.',
      ],
      [
        { ...manual('rf', [[0]]), replicationFactor: 1 },
        ErrorCode.INVALID_REQUEST,
        'A manual partition assignment was specified, but replication factor was not set to -1.',
      ],
      [
        { ...manual('np', [[0]]), numPartitions: 1 },
        ErrorCode.INVALID_REQUEST,
        'A manual partition assignment was specified, but numPartitions was not set to -1.',
      ],
    ];
    for (const [topic, errorCode, errorMessage] of cases) {
      const { results } = await c.create([topic]);
      assert.deepEqual([results[0]!.errorCode, results[0]!.errorMessage], [errorCode, errorMessage], topic.name);
    }
    const rf3 = await c.create([{ name: 'rf3', numPartitions: 1, replicationFactor: 3, configs: {} }]);
    assert.deepEqual(
      [rf3.results[0]!.errorCode, rf3.results[0]!.errorMessage],
      [
        ErrorCode.INVALID_REPLICATION_FACTOR,
        'Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached because only 2 broker(s) are registered.',
      ],
      'RF above the unfenced brokers',
    );
    const parts = await c.call('controller.create-partitions', {
      topics: [{ name: 'nope', count: 2, assignments: null }],
      validateOnly: false,
    });
    assert.equal(parts.results[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.deepEqual((await c.metadata()).topics, []);
    await c.sim.shutdown();
  });

  test('CreatePartitions: explicit assignments are honoured, a fenced-only one refused', async () => {
    const c = await cluster(147);
    await c.create([manual('t', [[0, 1]])]);
    await c.down(2);
    const refused = await c.call('controller.create-partitions', {
      topics: [{ name: 't', count: 2, assignments: [[2, 2]] }],
      validateOnly: false,
    });
    assert.equal(refused.results[0]!.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    const ok = await c.call('controller.create-partitions', {
      topics: [
        {
          name: 't',
          count: 3,
          assignments: [
            [1, 2],
            [2, 0],
          ],
        },
      ],
      validateOnly: false,
    });
    assert.equal(ok.results[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      topicOf(ok.image, 't').partitions.map((p) => [p.replicas, p.isr, p.leader]),
      [
        [[0, 1], [0, 1], 0],
        [[1, 2], [1], 1],
        [[2, 0], [0], 0],
      ],
    );
    await c.sim.shutdown();
  });
});

describe('controller: metadata pushes', () => {
  test('subscribers get every committed image, in offset order, the last one equal to get-metadata', async () => {
    const c = await cluster(151);
    const received: MetadataImage[] = [];
    c.net.onMessage((envelope) => {
      if (envelope.type === 'metadata.update') received.push(envelope.body as MetadataImage);
    });
    const first = await c.call('controller.subscribe', { listener: actorRef<MetadataListenerMessages>(NET) });
    assert.deepEqual(first, await c.metadata(), 'the reply is the current image');
    await c.create([{ name: 't', numPartitions: 3, replicationFactor: 3, configs: {} }]);
    await c.down(1);
    await c.register(1);
    await c.call('controller.init-producer-id', {});
    await c.call('controller.get-metadata', {});
    assert.deepEqual(
      received.map((i) => i.offset),
      [first.offset + 1, first.offset + 2, first.offset + 3, first.offset + 4],
      'one push per committed change, none for a read',
    );
    assert.deepEqual(received.at(-1), await c.metadata());
    assert.ok(received.every((i) => i.controllerEpoch === first.controllerEpoch));
    await c.sim.shutdown();
  });
});

describe('controller: replay', () => {
  test('a restart replays registrations, fences and elections to the same image, with the controller epoch + 1', async () => {
    const c = await cluster(161);
    await c.create([{ name: 't', numPartitions: 6, replicationFactor: 3, configs: {} }]);
    await c.down(0);
    await c.heartbeat(1, true);
    await c.register(0);
    const before = await c.metadata();
    c.sim.crash(CONTROLLER);
    await c.sim.restart(CONTROLLER);
    const after = await c.metadata();
    assert.deepEqual({ ...after, offset: before.offset, controllerEpoch: before.controllerEpoch }, before);
    assert.equal(after.controllerEpoch, before.controllerEpoch + 1);
    assert.equal(after.offset, before.offset + 1);
    // The live brokers get a whole session from the restart before they could be fenced.
    await c.sim.advanceTime(8000);
    for (const id of [0, 2]) assert.equal((await c.heartbeat(id)).fenced, false);
    await c.sim.advanceTime(8000);
    assert.deepEqual(
      (await c.metadata()).brokers.map((b) => b.fenced),
      [false, true, false],
    );
    await c.sim.shutdown();
  });

  test('a power loss tearing a fence frame anywhere replays to one leader per partition, and the fence done again has larger epochs', async () => {
    const c = await cluster(162);
    await c.create([{ name: 't', numPartitions: 6, replicationFactor: 3, configs: {} }]);
    const before = await c.metadata();
    const logBytes = c.fs.readFile(METADATA_LOG).length;
    await c.down(0);
    const full = Buffer.from(c.fs.readFile(METADATA_LOG));
    for (let cut = logBytes + 1; cut < full.length; cut += 7) {
      c.sim.crash(CONTROLLER);
      const file = c.fs.open(METADATA_LOG, 'rw');
      file.truncate(0);
      file.write(full.subarray(0, cut), 0);
      file.sync();
      file.close();
      await c.sim.restart(CONTROLLER);
      const replayed = await c.metadata();
      assert.deepEqual(
        topicOf(replayed, 't').partitions,
        topicOf(before, 't').partitions,
        `cut ${cut - logBytes}: the torn fence is gone whole`,
      );
      await c.down(0);
      const refenced = topicOf(await c.metadata(), 't').partitions;
      for (const [i, p] of refenced.entries()) {
        const old = topicOf(before, 't').partitions[i]!;
        assert.notEqual(p.leader, 0, `cut ${cut - logBytes}: t-${i} has one live leader`);
        assert.ok(p.isr.includes(p.leader) && !p.isr.includes(0));
        if (old.leader === 0) assert.ok(p.leaderEpoch > old.leaderEpoch, 'a strictly larger leader epoch');
        assert.ok(p.partitionEpoch > old.partitionEpoch);
      }
    }
    await c.sim.shutdown();
  });

  test('a metadata log from before registration (no broker records, no partition epochs) still loads', async () => {
    const fs = new MemoryFileSystem();
    const packr = new Packr({ useRecords: false });
    const frame = (body: unknown): Buffer => {
      const bytes = packr.pack(body);
      const header = Buffer.alloc(8);
      header.writeUInt32BE(bytes.length, 0);
      header.writeUInt32BE(crc32c(bytes) >>> 0, 4);
      return Buffer.concat([header, bytes]);
    };
    const old: MetadataRecord[] = [
      { type: 'cluster', clusterId: 'AAAAAAAAAAAAAAAAAAAAAw' },
      { type: 'topic', name: 'legacy', topicId: 'AAAAAAAAAAAAAAAAAAAABQ', configs: {} },
      {
        type: 'partition',
        topicId: 'AAAAAAAAAAAAAAAAAAAABQ',
        partition: 0,
        replicas: [0],
        isr: [0],
        leader: 0,
        leaderEpoch: 0,
      },
    ];
    fs.mkdirp(METADATA_DIR);
    const file = fs.open(METADATA_LOG, 'rw');
    // One record a frame (the oldest framing), then a batched frame.
    file.write(Buffer.concat([frame(old[0]), frame(old[1]), frame([old[2]])]), 0);
    file.sync();
    file.close();
    const { sim, net } = await bootController(163, fs, controllerArgs({ nodeIds: [0] }));
    const image = await ask(sim, net, CONTROLLER, 'controller.get-metadata', {});
    assert.deepEqual(image, {
      clusterId: 'AAAAAAAAAAAAAAAAAAAAAw',
      controllerId: 0,
      offset: 4,
      controllerEpoch: 1,
      brokers: [],
      topics: [
        {
          name: 'legacy',
          topicId: 'AAAAAAAAAAAAAAAAAAAABQ',
          configs: {},
          partitions: [{ partition: 0, replicas: [0], isr: [0], leader: 0, leaderEpoch: 0, partitionEpoch: 0 }],
        },
      ],
    });
    await registerBrokers(sim, net, [0]);
    const registered = await ask(sim, net, CONTROLLER, 'controller.get-metadata', {});
    assert.deepEqual(registered.topics, image.topics, 'the broker that registers keeps its leaderships and epochs');
    assert.deepEqual(registered.brokers, [{ nodeId: 0, ...brokerListener(0), brokerEpoch: 4, fenced: false }]);
    await sim.shutdown();
  });
});
