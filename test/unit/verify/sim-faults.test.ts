/**
 * The pieces of the simulation's faults (src/verify/sim-faults.ts) on their own: the runtime's
 * `reorder` decision, scheduled events and per-broker wall clocks, the memory disk's sync scheduler
 * and added fault hooks, and SimFaults' rules: which messages a partition cuts (by placement and by id,
 * endpoints never), what a slow follower delays, chaos draws and counts, a full disk, fsync schedules.
 */
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import {
  REORDER_MAX_HOLD_MS,
  SimRuntime,
  SUPERVISOR_MAX_RESTARTS,
  SUPERVISOR_RESTART_WINDOW_MS,
} from '../../../src/runtime/sim-runtime';
import type { FaultDecision } from '../../../src/runtime/sim-runtime';
import type { Envelope } from '../../../src/runtime/actor';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import type { Random } from '../../../src/io/random';
import { brokerOfActorId, SimFaults } from '../../../src/verify/sim-faults';
import { registerTestKinds } from '../runtime/fixtures/register';
import { ref } from '../runtime/fixtures/test-actors';
import { registerClockProbe } from './fixtures/clock-probe';

registerTestKinds();
registerClockProbe();

const broker0 = { pool: 'broker', brokerId: 0 } as const;
const broker1 = { pool: 'broker', brokerId: 1 } as const;

/** A Random that counts its draws and answers `value` to `next` and 0 to `int`. */
function fixedRandom(value: number): Random & { draws: number } {
  const random = {
    draws: 0,
    bytes16: () => assert.fail('no bytes drawn'),
    next: () => {
      random.draws++;
      return value;
    },
    int: () => {
      random.draws++;
      return 0;
    },
  };
  return random;
}

function envelope(from: string, to: string, type = 'x', isReply = false): Envelope {
  return { from, to, type, body: null, ...(isReply ? { isReply: true } : {}) };
}

/** A SimFaults over a fresh runtime and disk; broker b's log dir is `/data/node-<b>` (three brokers). */
function makeFaults(seed = 1): { sim: SimRuntime; fs: MemoryFileSystem; faults: SimFaults } {
  const fs = new MemoryFileSystem();
  const sim = new SimRuntime({ seed, fs });
  const faults = new SimFaults(sim, fs, (b) => (b >= 0 && b < 3 ? [`/data/node-${b}`] : []));
  return { sim, fs, faults };
}

describe('SimRuntime: reorder, scheduled events, per-broker wall clocks', () => {
  test('a reordered message joins its channel behind the next one: 0 1 3 2 4 5', async () => {
    const sim = new SimRuntime({ seed: 5 });
    await sim.spawn('sink', 'sink', null, broker0);
    await sim.spawn('p', 'producer', null, broker0);
    sim.setFaults((e): FaultDecision =>
      e.type === 'item' && (e.body as { i: number }).i === 2 ? 'reorder' : 'deliver',
    );
    const driver = sim.endpoint('driver');
    await sim.runUntil(driver.request(ref('p'), 'go', { to: 'sink', n: 6 }, 1000));
    await sim.settle();
    const seen = await sim.runUntil(driver.request(ref('sink'), 'dump', null, 1000));
    assert.deepEqual(seen, ['p:0', 'p:1', 'p:3', 'p:2', 'p:4', 'p:5']);
  });

  test('a reordered message that nothing overtakes joins after REORDER_MAX_HOLD_MS, not never', async () => {
    const sim = new SimRuntime({ seed: 6 });
    await sim.spawn('sink', 'sink', null, broker0);
    await sim.spawn('p', 'producer', null, broker0);
    sim.setFaults((e) => (e.type === 'item' ? 'reorder' : 'deliver'));
    const driver = sim.endpoint('driver');
    await sim.runUntil(driver.request(ref('p'), 'go', { to: 'sink', n: 1 }, 1000));
    await sim.advanceTime(REORDER_MAX_HOLD_MS - 1);
    assert.equal(await sim.runUntil(driver.request(ref('sink'), 'size', null, 10)), 0, 'still held');
    await sim.advanceTime(1);
    assert.deepEqual(await sim.runUntil(driver.request(ref('sink'), 'dump', null, 10)), ['p:0']);
  });

  test('schedule runs simulator code at its virtual due time', async () => {
    const sim = new SimRuntime({ seed: 7 });
    const fired: number[] = [];
    sim.schedule(250, () => fired.push(sim.elapsedMs));
    sim.schedule(0, () => fired.push(sim.elapsedMs));
    await sim.settle();
    assert.deepEqual(fired, [0]);
    await sim.advanceTime(300);
    assert.deepEqual(fired, [0, 250]);
  });

  test("jumpWallClock moves one broker's wall clock, cumulatively, forward and back; monotonic time stays", async () => {
    const sim = new SimRuntime({ seed: 8 });
    await sim.spawn('c0', 'clock-probe', null, broker0);
    await sim.spawn('c1', 'clock-probe', null, broker1);
    const driver = sim.endpoint('driver');
    type Reading = { nowMs: number; monotonicMs: number };
    const read = (id: string): Promise<Reading> => sim.runUntil(driver.request(ref(id), 'clock', null, 10));
    await sim.advanceTime(1_000);
    assert.equal(sim.jumpWallClock(0, 60_000), 60_000);
    assert.equal(sim.jumpWallClock(0, -3_600_000), -3_540_000);
    const before0 = await read('c0');
    const before1 = await read('c1');
    assert.equal(before0.nowMs, sim.clock.nowMs() - 3_540_000, 'broker 0: both jumps');
    assert.equal(before1.nowMs, sim.clock.nowMs(), 'broker 1 untouched');
    assert.equal(before0.monotonicMs, 1_000);
    assert.equal(before1.monotonicMs, 1_000);
    // An actor spawned on the broker later gets the moved clock too.
    await sim.spawn('c0b', 'clock-probe', null, broker0);
    assert.equal((await read('c0b')).nowMs, sim.clock.nowMs() - 3_540_000);
    await sim.advanceTime(500);
    assert.equal((await read('c0')).monotonicMs, 1_500, 'monotonic time moves on');
  });

  test('brokerOf: placement of live and crashed actors, -1 for the controller pool, undefined for endpoints', async () => {
    const sim = new SimRuntime({ seed: 9 });
    await sim.spawn('a', 'sink', null, broker1);
    await sim.spawn('c', 'sink', null, { pool: 'controller' });
    sim.endpoint('driver');
    assert.equal(sim.brokerOf('a'), 1);
    assert.equal(sim.brokerOf('c'), -1);
    assert.equal(sim.brokerOf('driver'), undefined);
    sim.crash('a');
    assert.equal(sim.brokerOf('a'), 1, 'a crashed actor keeps its placement');
  });
});

describe("SimRuntime onActorError 'restart': an uncaught error does what production's supervisor does", () => {
  test('the actor that threw is re-created with its args and fresh state, the onWorkerRestart handlers run', async () => {
    const sim = new SimRuntime({ seed: 12, onActorError: 'restart' });
    const restarts: string[][] = [];
    sim.onWorkerRestart((info) => restarts.push(info.actorIds));
    await sim.spawn('e', 'echo', { tag: 'x' }, broker0);
    const driver = sim.endpoint('driver');
    assert.equal(await sim.runUntil(driver.request(ref('e'), 'count', null, 100)), 1);
    driver.send(ref('e'), 'throw', null);
    await sim.settle();
    assert.deepEqual(restarts, [['e']]);
    const who = await sim.runUntil(driver.request(ref('e'), 'whoami', null, 100));
    assert.equal(who.tag, 'x', 'same args');
    assert.equal(who.received, 1, 'fresh state');
    assert.deepEqual(sim.supervised, [{ actorId: 'e', error: 'boom from receive', restarted: true }]);
  });

  test(`more than ${SUPERVISOR_MAX_RESTARTS} crashes within the window: the actor is given up (unknown-actor)`, async () => {
    const sim = new SimRuntime({ seed: 13, onActorError: 'restart' });
    await sim.spawn('e', 'echo', {}, broker0);
    const driver = sim.endpoint('driver');
    for (let i = 0; i <= SUPERVISOR_MAX_RESTARTS; i++) {
      driver.send(ref('e'), 'reject', null);
      await sim.settle();
    }
    assert.equal(sim.supervised.filter((x) => x.restarted).length, SUPERVISOR_MAX_RESTARTS);
    assert.equal(sim.supervised.at(-1)?.restarted, false);
    assert.equal(sim.actorIds().includes('e'), false);
    await assert.rejects(sim.runUntil(driver.request(ref('e'), 'count', null, 100)), /unknown-actor/);
  });

  test('crashes spread wider than the window are all restarted', async () => {
    const sim = new SimRuntime({ seed: 14, onActorError: 'restart' });
    await sim.spawn('e', 'echo', {}, broker0);
    const driver = sim.endpoint('driver');
    for (let i = 0; i < 2 * SUPERVISOR_MAX_RESTARTS; i++) {
      driver.send(ref('e'), 'throw', null);
      await sim.settle();
      await sim.advanceTime(SUPERVISOR_RESTART_WINDOW_MS / 2);
    }
    assert.equal(sim.supervised.length, 2 * SUPERVISOR_MAX_RESTARTS);
    assert.ok(sim.supervised.every((x) => x.restarted));
    assert.equal(await sim.runUntil(driver.request(ref('e'), 'count', null, 100)), 1);
  });

  test("by default ('fail') the driver throws the actor's error", async () => {
    const sim = new SimRuntime({ seed: 15 });
    await sim.spawn('e', 'echo', {}, broker0);
    sim.endpoint('driver').send(ref('e'), 'throw', null);
    await assert.rejects(sim.settle(), /boom from receive/);
  });
});

describe('MemoryFileSystem: a sync scheduler decides when an asynchronous fsync completes, and whether it fails', () => {
  test('completes when the scheduler says so, covering only the writes before the call', async () => {
    const fs = new MemoryFileSystem();
    const completions: Array<(code: string | null) => void> = [];
    fs.setSyncScheduler((path, complete) => {
      assert.equal(path, '/f');
      completions.push(complete);
    });
    const handle = fs.open('/f', 'rw');
    fs.syncDir('/');
    handle.write(Buffer.from('abc'), 0);
    let done = false;
    const synced = handle.syncAsync!().then(() => (done = true));
    handle.write(Buffer.from('def'), 3);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(done, false, 'not before the scheduler completes it');
    assert.equal(completions.length, 1);
    completions[0]!(null);
    await synced;
    assert.equal(fs.unsyncedBytes('/f'), 3, 'the write after the call is still pending');
    fs.crash({ kind: 'lose-unsynced' });
    assert.equal(fs.readFile('/f').toString(), 'abc');
  });

  test('an errno from the scheduler fails it and makes nothing durable; a crash first fails it with EIO', async () => {
    const fs = new MemoryFileSystem();
    const completions: Array<(code: string | null) => void> = [];
    fs.setSyncScheduler((_path, complete) => completions.push(complete));
    const handle = fs.open('/f', 'rw');
    fs.syncDir('/');
    handle.write(Buffer.from('abc'), 0);
    const failed = handle.syncAsync!();
    completions[0]!('EIO');
    await assert.rejects(failed, { code: 'EIO' });
    assert.equal(fs.unsyncedBytes('/f'), 3);

    const interrupted = handle.syncAsync!();
    fs.crash({ kind: 'lose-unsynced' });
    await assert.rejects(interrupted, { code: 'EIO' });
    completions[1]!(null); // the scheduler's event comes after the crash: nothing happens
    assert.equal(fs.readFile('/f').length, 0, 'nothing became durable');
  });

  test('without a scheduler (null) syncs complete on a microtask again', async () => {
    const fs = new MemoryFileSystem();
    fs.setSyncScheduler(() => assert.fail('not scheduled'));
    fs.setSyncScheduler(null);
    const handle = fs.open('/f', 'rw');
    handle.write(Buffer.from('abc'), 0);
    await handle.syncAsync!();
    assert.equal(fs.unsyncedBytes('/f'), 0);
  });

  test('addFault hooks are asked after `fault`, and their remover removes them', () => {
    const fs = new MemoryFileSystem();
    const handle = fs.open('/f', 'rw');
    const remove = fs.addFault((op) => (op.syscall === 'write' ? 'ENOSPC' : null));
    assert.throws(() => handle.write(Buffer.from('a'), 0), { code: 'ENOSPC' });
    fs.fault = (op) => (op.syscall === 'write' ? 'EIO' : null);
    assert.throws(() => handle.write(Buffer.from('a'), 0), { code: 'EIO' }, 'fault decides first');
    fs.fault = null;
    remove();
    handle.write(Buffer.from('a'), 0);
    assert.equal(fs.readFile('/f').toString(), 'a');
  });
});

describe('SimFaults: the rules', () => {
  test('brokerOfActorId reads the id formats of replicas, managers, log dirs, coordinators and the controller', () => {
    assert.equal(brokerOfActorId('replica/2/abc/0'), 2);
    assert.equal(brokerOfActorId('replica-manager/1'), 1);
    assert.equal(brokerOfActorId('log-dir/0/1'), 0);
    assert.equal(brokerOfActorId('group-coordinator/2/17'), 2);
    assert.equal(brokerOfActorId('controller'), -1);
    assert.equal(brokerOfActorId('test'), undefined);
    assert.equal(brokerOfActorId('net/1'), 1, "the broker's network layer");
    assert.equal(brokerOfActorId('replica-managers/1'), undefined);
    assert.equal(brokerOfActorId('network/1'), undefined);
  });

  test('a one-way partition drops a-to-b only; both ways drops both; endpoints and other pairs pass; heal removes it', () => {
    const { faults } = makeFaults();
    const random = fixedRandom(0);
    const oneWay = faults.partition(1, 0, 'a-to-b');
    assert.equal(faults.decide(envelope('replica/1/t/0', 'replica/0/t/0', 'replica.fetch'), random), 'drop');
    assert.equal(faults.decide(envelope('replica/0/t/0', 'replica/1/t/0', 'reply', true), random), 'deliver');
    assert.equal(faults.decide(envelope('replica/1/t/0', 'replica/2/t/0'), random), 'deliver');
    assert.equal(faults.decide(envelope('replica/1/t/0', 'test'), random), 'deliver', 'endpoints are never cut');
    assert.equal(faults.remove(oneWay), true);
    assert.equal(faults.decide(envelope('replica/1/t/0', 'replica/0/t/0'), random), 'deliver');

    faults.partition(2, -1, 'both');
    assert.equal(faults.decide(envelope('replica-manager/2', 'controller', 'controller.heartbeat'), random), 'drop');
    assert.equal(faults.decide(envelope('controller', 'replica-manager/2', 'metadata.update'), random), 'drop');
    assert.equal(faults.decide(envelope('controller', 'net/2', 'metadata.update'), random), 'drop');
    assert.equal(faults.decide(envelope('test', 'controller'), random), 'deliver', 'the test endpoint is nobody');
    assert.equal(faults.decide(envelope('replica-manager/1', 'controller'), random), 'deliver');
    faults.healAll();
    assert.equal(faults.decide(envelope('replica-manager/2', 'controller'), random), 'deliver');
    assert.equal(random.draws, 0, 'partitions draw nothing');
    assert.deepEqual(faults.counts(), { 'network-partition': 2 });
  });

  test('the placement in the runtime decides the broker before the id', async () => {
    const { sim, faults } = makeFaults();
    await sim.spawn('odd-name', 'sink', null, broker1);
    faults.partition(1, 0, 'a-to-b');
    assert.equal(faults.decide(envelope('odd-name', 'replica/0/t/0'), fixedRandom(0)), 'drop');
  });

  test("a slow follower delays its replicas' fetch requests to other brokers, nothing else", () => {
    const { faults } = makeFaults();
    faults.slowFollower(1, 15_000);
    const random = fixedRandom(0);
    assert.deepEqual(faults.decide(envelope('replica/1/t/0', 'replica/0/t/0', 'replica.fetch'), random), {
      delayMs: 15_000,
    });
    assert.equal(faults.decide(envelope('replica/0/t/0', 'replica/1/t/0', 'replica.fetch'), random), 'deliver');
    assert.equal(faults.decide(envelope('replica/1/t/0', 'replica/0/t/0', 'reply', true), random), 'deliver');
    assert.equal(
      faults.decide(envelope('group-coordinator/1/0', 'replica/0/t/0', 'replica.fetch'), random),
      'deliver',
      "a coordinator's read is not a follower fetch",
    );
    assert.deepEqual(faults.counts(), { 'slow-follower': 1 });
  });

  test('chaos draws once per message it may touch, decides by the bands drop|duplicate|delay|reorder, counts each', () => {
    const { faults } = makeFaults();
    faults.chaos({ drop: 0.1, duplicate: 0.1, delay: 0.1, reorder: 0.1, maxDelayMs: 50 });
    const cases: Array<[number, FaultDecision]> = [
      [0.05, 'drop'],
      [0.15, 'duplicate'],
      [0.25, { delayMs: 1 }],
      [0.35, 'reorder'],
      [0.5, 'deliver'],
    ];
    for (const [u, expected] of cases)
      assert.deepEqual(faults.decide(envelope('replica/1/t/0', 'replica/0/t/0'), fixedRandom(u)), expected, `u=${u}`);
    const untouched = fixedRandom(0);
    assert.equal(faults.decide(envelope('test', 'replica/0/t/0'), untouched), 'deliver');
    assert.equal(untouched.draws, 0, 'the test endpoint is outside the default filter: no draw');
    assert.deepEqual(faults.counts(), {
      'message-drop': 1,
      'message-duplicate': 1,
      'message-delay': 1,
      'message-reorder': 1,
    });
    assert.throws(() => faults.chaos({ drop: 0.6, delay: 0.6 }), /sum to at most 1/);
  });

  test('replica-to-replica chaos leaves controller traffic alone; the user hook decides what the rules deliver', () => {
    const { faults } = makeFaults();
    faults.chaos({ drop: 1, filter: 'replica-to-replica' });
    faults.setUserHook((e) => (e.type === 'mine' ? 'duplicate' : 'deliver'));
    assert.equal(faults.decide(envelope('replica/1/t/0', 'replica/0/t/0'), fixedRandom(0.5)), 'drop');
    assert.equal(faults.decide(envelope('replica-manager/1', 'controller'), fixedRandom(0.5)), 'deliver');
    assert.equal(faults.decide(envelope('replica-manager/1', 'controller', 'mine'), fixedRandom(0.5)), 'duplicate');
  });

  test("a full disk fails writes and fsyncs under that broker's log dirs with ENOSPC, until freed", async () => {
    const { fs, faults } = makeFaults();
    fs.mkdirp('/data/node-0/t-0');
    fs.mkdirp('/data/node-1/t-0');
    fs.mkdirp('/data/__skiff_metadata');
    const mine = fs.open('/data/node-0/t-0/0.log', 'rw');
    const other = fs.open('/data/node-1/t-0/0.log', 'rw');
    const metadata = fs.open('/data/__skiff_metadata/0.log', 'rw');
    faults.diskFull(0, true);
    faults.diskFull(0, true); // already full: not counted again
    assert.throws(() => mine.write(Buffer.from('a'), 0), { code: 'ENOSPC' });
    assert.throws(() => mine.sync(), { code: 'ENOSPC' });
    await assert.rejects(mine.syncAsync!(), { code: 'ENOSPC' });
    other.write(Buffer.from('b'), 0);
    metadata.write(Buffer.from('c'), 0);
    faults.diskFull(0, false);
    mine.write(Buffer.from('a'), 0);
    mine.sync();
    assert.deepEqual(faults.counts(), { 'disk-full': 1 });
  });

  test("an fsync schedule completes a broker's fsyncs after a seeded delay (some failing), others at once", async () => {
    const { sim, fs, faults } = makeFaults(11);
    fs.mkdirp('/data/node-1');
    fs.mkdirp('/data/__skiff_metadata');
    faults.fsyncSchedule({ maxDelayMs: 100, failProbability: 0.3, brokers: [1] });
    const metadata = fs.open('/data/__skiff_metadata/0.log', 'rw');
    metadata.write(Buffer.from('m'), 0);
    await metadata.syncAsync!();
    assert.equal(fs.unsyncedBytes('/data/__skiff_metadata/0.log'), 0, 'not under a scheduled broker: at once');

    const handle = fs.open('/data/node-1/0.log', 'rw');
    const outcomes: Array<{ atMs: number; ok: boolean }> = [];
    for (let i = 0; i < 40; i++) {
      handle.write(Buffer.from([i]), i);
      handle.syncAsync!().then(
        () => outcomes.push({ atMs: sim.elapsedMs, ok: true }),
        () => outcomes.push({ atMs: sim.elapsedMs, ok: false }),
      );
    }
    await sim.advanceTime(100);
    assert.equal(outcomes.length, 40, 'every fsync completed within maxDelayMs');
    const counts = faults.counts();
    assert.equal(outcomes.filter((o) => !o.ok).length, counts['fsync-failure']);
    assert.ok((counts['fsync-failure'] ?? 0) > 0 && (counts['fsync-failure'] ?? 0) < 40, JSON.stringify(counts));
    assert.ok((counts['fsync-delay'] ?? 0) > 20, JSON.stringify(counts));
    assert.ok(new Set(outcomes.map((o) => o.atMs)).size > 10, 'completions spread over virtual time');
    faults.healAll();
    handle.write(Buffer.from('z'), 40);
    await handle.syncAsync!();
    assert.equal(fs.unsyncedBytes('/data/node-1/0.log'), 0, 'back to a microtask');
  });

  test('jumpClock moves the broker clock and counts; record adds to the counts', async () => {
    const { sim, faults } = makeFaults();
    await sim.spawn('c', 'clock-probe', null, broker1);
    faults.jumpClock(1, -5_000);
    faults.record('broker-crash');
    faults.record('broker-crash');
    const driver = sim.endpoint('driver');
    const reading = await sim.runUntil(driver.request(ref('c'), 'clock', null, 10) as Promise<{ nowMs: number }>);
    assert.equal(reading.nowMs, sim.clock.nowMs() - 5_000);
    assert.deepEqual(faults.counts(), { 'clock-jump': 1, 'broker-crash': 2 });
  });
});
