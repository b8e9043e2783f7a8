/**
 * The consumer side of the verification model (src/verify/consumer-model.ts): hand-written
 * schedules where each commit strategy's cost shows (commit-before loses what it polled when it
 * crashes before processing, commit-after processes again what it processed before a crash, auto-commit
 * does either), committed offsets served back through a crash of their coordinator, and a campaign
 * that counts all three strategies without a violation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootCluster } from '../../helpers/cluster-harness';
import { Checker } from '../../../src/verify/checker';
import { MAIN_TOPIC, World, finishRun, setUpWorld, type ModelState } from '../../../src/verify/model';
import {
  AUTO_COMMIT_INTERVAL_MS,
  ConsumerCrashCommand,
  PollCommand,
  ProcessCommand,
  type ConsumerStrategy,
} from '../../../src/verify/consumer-model';
import { runCampaign } from '../../../src/verify/campaign';
import type { StrategyCounts } from '../../../src/verify/report';
import { CONSUMER_STRATEGIES } from '../../../src/verify/report';
import { ErrorCode } from '../../../src/protocol/error-codes';

/** A world as the campaign builds it (three brokers, the model's topics, one __consumer_offsets partition). */
async function withWorld(seed: number, body: (model: ModelState, world: World) => Promise<void>): Promise<void> {
  const cluster = await bootCluster(seed, {
    properties: {
      'replica.lag.time.max.ms': '3000',
      'broker.session.timeout.ms': '6000',
      'offsets.topic.num.partitions': '1',
    },
  });
  try {
    const world = new World(cluster, new Checker(), 3);
    const model = await setUpWorld(world);
    await body(model, world);
  } finally {
    await cluster.sim.shutdown();
  }
}

/** Produces `values` with acks=all to the main topic's partition 0; asserts each is acknowledged. */
async function produceAll(world: World, values: string[]): Promise<void> {
  for (const v of values) assert.ok((await world.produce('acks=all', MAIN_TOPIC, 0, v)) >= 0, `${v} acknowledged`);
}

function countsOf(all: StrategyCounts[], strategy: ConsumerStrategy): StrategyCounts {
  const c = all.find((s) => s.strategy === strategy);
  assert.ok(c, `${strategy} is counted`);
  return c;
}

const poll = (s: ConsumerStrategy) => new PollCommand(MAIN_TOPIC, s);
const processPolled = (s: ConsumerStrategy) => new ProcessCommand(MAIN_TOPIC, s);
const crash = (s: ConsumerStrategy) => new ConsumerCrashCommand(MAIN_TOPIC, s);

test('commit-before-processing: a crash after the poll committed and before processing loses the polled records, the commit surviving a crash of its coordinator', async () => {
  await withWorld(11, async (model, world) => {
    await produceAll(world, ['a', 'b', 'c']);
    await poll('commit-before-processing').run(model, world);
    // The group's coordinator (the leader of the one __consumer_offsets partition) crashes: the commit
    // must be served back by the next leader's coordinator.
    const offsets = await world.cluster.partition('__consumer_offsets', 0);
    await world.cluster.crashBroker(offsets.leader);
    model.up[offsets.leader] = false;
    await crash('commit-before-processing').run(model, world);
    await produceAll(world, ['d']);
    const before = world.checker.checks['committed-offsets-durable'] ?? 0;
    await poll('commit-before-processing').run(model, world);
    // The restart fetched both partitions' committed offsets from the new coordinator: 3 and none.
    assert.equal((world.checker.checks['committed-offsets-durable'] ?? 0) - before, 2);
    await processPolled('commit-before-processing').run(model, world);

    const counts = await finishRun(model, world);
    assert.deepEqual(countsOf(counts, 'commit-before-processing'), {
      strategy: 'commit-before-processing',
      records: 4,
      lost: 3,
      duplicated: 0,
    });
    // The consumers that did nothing read everything once at the end.
    assert.deepEqual(countsOf(counts, 'commit-after-processing'), {
      strategy: 'commit-after-processing',
      records: 4,
      lost: 0,
      duplicated: 0,
    });
    assert.ok((world.checker.checks['dense-offsets'] ?? 0) > 0);
  });
});

test('commit-after-processing: a crash after processing and before the next commit processes the records again, losing none', async () => {
  await withWorld(12, async (model, world) => {
    await produceAll(world, ['a', 'b', 'c']);
    await poll('commit-after-processing').run(model, world);
    await processPolled('commit-after-processing').run(model, world);
    await crash('commit-after-processing').run(model, world);
    // The next incarnation starts from the log start (nothing was committed) and commits as it goes.
    await poll('commit-after-processing').run(model, world);
    await processPolled('commit-after-processing').run(model, world);
    await produceAll(world, ['d']);
    await poll('commit-after-processing').run(model, world);
    const coordinator = await world.client.findCoordinator(world.anyBroker(), 'verify-commit-after-processing');
    assert.equal(coordinator.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      await world.client.offsetFetch(coordinator.nodeId, 'verify-commit-after-processing', MAIN_TOPIC, 0),
      { errorCode: ErrorCode.NONE, offset: 3 },
      'the poll after processing committed what the second incarnation processed',
    );
    await crash('commit-after-processing').run(model, world);

    const counts = await finishRun(model, world);
    assert.deepEqual(countsOf(counts, 'commit-after-processing'), {
      strategy: 'commit-after-processing',
      records: 4,
      lost: 0,
      duplicated: 3,
    });
  });
});

test('auto-commit-5s: records processed before the interval are processed again after a crash, records polled before an auto-commit and not processed are lost', async () => {
  await withWorld(13, async (model, world) => {
    await produceAll(world, ['a', 'b', 'c']);
    await poll('auto-commit-5s').run(model, world);
    await processPolled('auto-commit-5s').run(model, world);
    await crash('auto-commit-5s').run(model, world);
    // Restarted from the log start: a, b, c come again and are processed twice.
    await poll('auto-commit-5s').run(model, world);
    await processPolled('auto-commit-5s').run(model, world);
    await produceAll(world, ['d', 'e']);
    await poll('auto-commit-5s').run(model, world);
    await world.cluster.advance(AUTO_COMMIT_INTERVAL_MS + 1_000);
    // This poll's auto-commit commits position 5 before d and e are processed; then the consumer dies.
    await poll('auto-commit-5s').run(model, world);
    await crash('auto-commit-5s').run(model, world);

    const counts = await finishRun(model, world);
    assert.deepEqual(countsOf(counts, 'auto-commit-5s'), {
      strategy: 'auto-commit-5s',
      records: 5,
      lost: 2,
      duplicated: 3,
    });
  });
});

test('a campaign of 50 runs counts every consumer strategy and breaks no invariant', async () => {
  const report = await runCampaign({ seed: 4242, runs: 50 });
  assert.equal(report.counterexample, null, JSON.stringify(report.counterexample, null, 2));
  assert.equal(report.runs, 50);
  for (const strategy of CONSUMER_STRATEGIES) {
    const c = report.strategies.find((s) => s.strategy === strategy);
    assert.ok(c && c.records > 0, `${strategy} had records to process`);
  }
  assert.equal(report.strategies.find((s) => s.strategy === 'commit-after-processing')!.lost, 0);
  assert.ok((report.checks['committed-offsets-durable'] ?? 0) > 0);
  assert.ok((report.checks['dense-offsets'] ?? 0) > 0);
  console.log(JSON.stringify(report.strategies.filter((s) => CONSUMER_STRATEGIES.includes(s.strategy as never))));
});

test('committed offsets of every strategy are served back after a torn power loss of the whole host (write.caching=false on __consumer_offsets)', async () => {
  await withWorld(14, async (model, world) => {
    await produceAll(world, ['a', 'b', 'c']);
    for (const s of CONSUMER_STRATEGIES) {
      await poll(s).run(model, world);
      await processPolled(s).run(model, world);
    }
    await world.cluster.advance(AUTO_COMMIT_INTERVAL_MS);
    // commit-after commits at its next poll, auto-commit once the interval has passed: each has committed 3 now.
    for (const s of CONSUMER_STRATEGIES) await poll(s).run(model, world);
    assert.equal(world.cluster.base.writeCachingDefault, false);
    await world.cluster.powerLoss({ kind: 'torn-last-write' });
    world.injected('power-loss');
    for (const s of CONSUMER_STRATEGIES) await crash(s).run(model, world);
    const before = world.checker.checks['committed-offsets-durable'] ?? 0;
    for (const s of CONSUMER_STRATEGIES) await poll(s).run(model, world);
    // Each restart fetched both partitions' committed offsets, and each was the acknowledged one.
    assert.equal((world.checker.checks['committed-offsets-durable'] ?? 0) - before, 2 * CONSUMER_STRATEGIES.length);

    const counts = await finishRun(model, world);
    for (const s of CONSUMER_STRATEGIES)
      assert.deepEqual(countsOf(counts, s), { strategy: s, records: 3, lost: 0, duplicated: 0 });
  });
});

test('an offset rewound behind a consumer by another client is reported as a committed-offsets-durable violation', async () => {
  await withWorld(15, async (model, world) => {
    await produceAll(world, ['a', 'b', 'c']);
    await poll('commit-before-processing').run(model, world);
    const group = 'verify-commit-before-processing';
    const coordinator = await world.client.findCoordinator(world.anyBroker(), group);
    assert.equal(await world.client.offsetCommit(coordinator.nodeId, group, MAIN_TOPIC, 0, 1), ErrorCode.NONE);
    await crash('commit-before-processing').run(model, world);
    await assert.rejects(poll('commit-before-processing').run(model, world), {
      name: 'InvariantViolation',
      message: `committed-offsets-durable: group ${group} ${MAIN_TOPIC}-0: OffsetFetch served 1, the last acknowledged commit is 3`,
    });
  });
});
