/**
 * Scenarios that only a cluster shows, run against a three-node Kafka and `skiff start --nodes 3`
 * by cluster.long.test.ts: Metadata of RF=3 topics, NOT_ENOUGH_REPLICAS below min.insync.replicas,
 * and the leader change after a clean shutdown of a leader's broker. Each returns JSON that must be
 * equal on both clusters except where cluster-allowlist.ts says why not.
 *
 * Rules: topics are named by the scenario; leadership is pinned by explicit assignments where a
 * scenario stops a broker (brokers 1 and 2 only: Kafka's node 0 holds the controller quorum); a
 * scenario restarts every broker it stopped and waits until its topics are fully in sync again, so
 * the next one starts from a whole cluster.
 */
import type { PartitionMetadata } from '../../src/client';
import { partitionJson, type ClusterContext } from './cluster-context';
import type { Json } from './context';

/** One cluster scenario. */
export interface ClusterScenario {
  name: string;
  about: string;
  run(ctx: ClusterContext): Promise<Json>;
}

const BROKERS = [0, 1, 2];

const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);

/**
 * The shape of an automatically assigned RF=3 topic with as many partitions as brokers: Kafka's
 * placer starts at a random broker and so may Skiff's, so the exact lists differ run to run; what
 * must hold is each partition on every broker once, led by its first (preferred) replica, fully in
 * sync, and one leader per broker (the even spread of Kafka's assignment).
 */
function autoAssignedShape(ps: readonly PartitionMetadata[]): Json {
  return {
    partitions: ps.length,
    everyPartitionOnEveryBrokerOnce: ps.every((p) => JSON.stringify(sorted(p.replicas)) === JSON.stringify(BROKERS)),
    ledByPreferredReplica: ps.every((p) => p.leader === p.replicas[0]),
    fullyInSync: ps.every((p) => JSON.stringify(sorted(p.isr)) === JSON.stringify(BROKERS)),
    leadersPerBroker: BROKERS.map((b) => ps.filter((p) => p.leader === b).length),
    leaderEpochs: ps.map((p) => p.leaderEpoch),
    errors: ps.map((p) => p.errorCode),
    offlineReplicas: ps.map((p) => p.offlineReplicas.length),
  };
}

/** Stops `nodeIds`, runs `body`, and always starts them again (in order) before returning. */
async function withBrokersDown<T>(ctx: ClusterContext, nodeIds: number[], body: () => Promise<T>): Promise<T> {
  const stopped: number[] = [];
  try {
    for (const id of nodeIds) {
      await ctx.target.shutDown(id);
      stopped.push(id);
    }
    return await body();
  } finally {
    for (const id of stopped) await ctx.target.start(id);
  }
}

export const CLUSTER_SCENARIOS: ClusterScenario[] = [
  {
    name: 'metadata-rf3',
    about: 'RF=3 topics: brokers, explicit and automatic assignments, leaders, ISR; RF and assignment errors',
    async run(ctx) {
      const explicit = [
        [1, 2, 0],
        [2, 0, 1],
        [0, 1, 2],
        [2, 1, 0],
      ];
      await ctx.createTopicsOrThrow([
        { name: 'md-explicit', assignments: explicit },
        { name: 'md-auto', partitions: 3, replicationFactor: 3 },
      ]);
      const explicitPs = await ctx.waitFullyReplicated('md-explicit');
      const autoPs = await ctx.waitFullyReplicated('md-auto');
      const errors = await ctx.createTopics([
        { name: 'md-rf4', partitions: 1, replicationFactor: 4 },
        { name: 'md-dup-broker', assignments: [[0, 0, 1]] },
        { name: 'md-unknown-broker', assignments: [[0, 1, 7]] },
        {
          name: 'md-uneven-rf',
          assignments: [
            [0, 1, 2],
            [1, 2],
          ],
        },
      ]);
      const md = await ctx.client.metadata([]);
      return {
        brokers: [...md.brokers.values()]
          .sort((a, b) => a.nodeId - b.nodeId)
          .map((b) => ({
            id: b.nodeId,
            host: b.host,
            portIsItsOwn: `${b.host}:${b.port}` === ctx.target.address(b.nodeId),
          })),
        controllerId: md.controllerId,
        explicit: explicitPs.map(partitionJson),
        auto: autoAssignedShape(autoPs),
        errors,
      };
    },
  },
  {
    name: 'not-enough-replicas',
    about:
      'RF=3, min.insync.replicas=2: two brokers down gives NOT_ENOUGH_REPLICAS for acks=all, acks=1 still appends; one back and acks=all succeeds',
    async run(ctx) {
      const topic = 'ner';
      await ctx.createTopicsOrThrow([
        { name: topic, assignments: [[0, 1, 2]], configs: { 'min.insync.replicas': '2' } },
      ]);
      await ctx.waitFullyReplicated(topic);
      const before = await ctx.produce(topic, 0, ['a0'], -1);
      const stopped: Record<string, Json> = {};
      await withBrokersDown(ctx, [2], () =>
        withBrokersDown(ctx, [1], async () => {
          const [p] = await ctx.waitFor(topic, 'an ISR of the leader alone', (ps) => ps[0]!.isr.length === 1);
          stopped.metadata = partitionJson(p!);
          stopped.liveBrokers = await ctx.brokerIds();
          stopped.acksAll = await ctx.produce(topic, 0, ['lost-b0'], -1);
          stopped.acksOne = await ctx.produce(topic, 0, ['b1'], 1);
          stopped.acksAllAgain = await ctx.produce(topic, 0, ['lost-b2'], -1);
        }).then(async () => {
          // Broker 1 is back (withBrokersDown started it), broker 2 still down.
          const [back] = await ctx.waitFor(topic, 'broker 1 back in the ISR', (ps) => ps[0]!.isr.includes(1));
          stopped.oneBack = partitionJson(back!);
          // Kafka's leader can refuse with NOT_ENOUGH_REPLICAS for a moment after Metadata shows the
          // ISR grown (seen under load): a refused batch is not appended, so try again, boundedly.
          let withTwo = await ctx.produce(topic, 0, ['c0'], -1);
          for (let attempt = 1; withTwo.error === 'NOT_ENOUGH_REPLICAS' && attempt <= 50; attempt++) {
            await new Promise((resolve) => setTimeout(resolve, 200));
            withTwo = await ctx.produce(topic, 0, ['c0'], -1);
          }
          stopped.acksAllWithTwo = withTwo;
        }),
      );
      const [whole] = await ctx.waitFullyReplicated(topic);
      return {
        before,
        ...stopped,
        whole: partitionJson(whole!),
        log: await ctx.readAll(topic, 0),
      };
    },
  },
  {
    name: 'leader-change-on-shutdown',
    about:
      "RF=3, min.insync.replicas=2: the leader's broker shuts down, the next ISR member leads, no acknowledged record is lost; the old leader rejoins as follower",
    async run(ctx) {
      const topic = 'lc';
      await ctx.createTopicsOrThrow([
        { name: topic, assignments: [[1, 2, 0]], configs: { 'min.insync.replicas': '2' } },
      ]);
      const [initial] = await ctx.waitFullyReplicated(topic);
      const acked = await ctx.produce(topic, 0, ['r0', 'r1', 'r2'], -1);
      const result: Record<string, Json> = { initial: partitionJson(initial!), acked };
      await withBrokersDown(ctx, [1], async () => {
        const [moved] = await ctx.waitFor(
          topic,
          'a leader other than broker 1 with broker 1 out of the ISR',
          (ps) => ps[0]!.leader >= 0 && ps[0]!.leader !== 1 && !ps[0]!.isr.includes(1),
        );
        result.afterShutdown = partitionJson(moved!);
        result.liveBrokers = await ctx.brokerIds();
        result.produceOnNewLeader = await ctx.produce(topic, 0, ['r3'], -1);
        result.readOnNewLeader = await ctx.readAll(topic, 0);
      });
      const [rejoined] = await ctx.waitFullyReplicated(topic);
      result.rejoined = partitionJson(rejoined!);
      // The old leader is a follower now: it refuses produce and consumer fetches (Kafka's NOT_LEADER_OR_FOLLOWER).
      result.produceOnOldLeader = await ctx.produce(topic, 0, ['x'], -1, 1);
      result.fetchOnOldLeader = (await ctx.readAll(topic, 0, 1)).error;
      return result;
    },
  },
];
