/**
 * The controller on a disk that refuses its metadata-log appends (src/controller/metadata-log.ts,
 * controller-actor.ts `commit`): a full disk (MemoryFileSystem capacity, so the frame's write is cut
 * short) or a failed fsync (the fault hook). Every command is answered KAFKA_STORAGE_ERROR with the
 * image unchanged, the controller is never restarted, the log keeps no partial or unsynced frame (a
 * restart or a power loss replays the same image), and once the disk takes writes again the next
 * command succeeds. Fencing, registration and a start on a full disk are retried rather than lost.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { ErrorCode } from '../../../src/protocol/error-codes';
import type { SimRuntime } from '../../../src/runtime/sim-runtime';
import type { Endpoint } from '../../../src/runtime/runtime';
import type { ControllerMessages, CreateTopicsCommand } from '../../../src/controller/messages';
import type { MetadataImage } from '../../../src/controller/metadata-records';
import {
  ask,
  bootController,
  brokerListener,
  CONTROLLER,
  controllerArgs,
  METADATA_LOG,
  registerBrokers,
} from '../../helpers/sim-harness';

type Topic = CreateTopicsCommand['topics'][number];

function topic(name: string, numPartitions = 1, replicationFactor = 1): Topic {
  return { name, numPartitions, replicationFactor, configs: {} };
}

function call<K extends keyof ControllerMessages & string>(
  sim: SimRuntime,
  net: Endpoint,
  type: K,
  body: ControllerMessages[K]['body'],
): Promise<ControllerMessages[K]['reply']> {
  return ask(sim, net, CONTROLLER, type, body);
}

/** A controller with brokers 0-2 registered and topic `a` (3 partitions, RF 3); restarts counted. */
async function boot(seed: number, fs = new MemoryFileSystem()) {
  const { sim, net } = await bootController(seed, fs, controllerArgs());
  const epochs = await registerBrokers(sim, net, [0, 1, 2]);
  const created = await call(sim, net, 'controller.create-topics', { topics: [topic('a', 3, 3)], validateOnly: false });
  assert.equal(created.results[0]!.errorCode, ErrorCode.NONE);
  const restarts: string[][] = [];
  sim.onWorkerRestart(({ actorIds }) => restarts.push(actorIds));
  return { sim, net, fs, epochs, restarts };
}

/** Fills the disk: only `roomBytes` more bytes fit (less than any frame, so a write is cut short). */
function fillDisk(fs: MemoryFileSystem, roomBytes = 5): void {
  fs.capacityBytes = fs.usedBytes() + roomBytes;
}

const metadata = (sim: SimRuntime, net: Endpoint): Promise<MetadataImage> =>
  call(sim, net, 'controller.get-metadata', {});

/** The log is exactly as it was (`bytes`), all of it durable: no partial or unsynced frame is left. */
function assertLogUnchanged(fs: MemoryFileSystem, bytes: Buffer, message: string): void {
  assert.deepEqual(fs.readFile(METADATA_LOG), bytes, `${message}: the log is cut back to its size before`);
  assert.equal(fs.unsyncedBytes(METADATA_LOG), 0, `${message}: the cut is fsynced`);
}

describe('controller on a full disk: a refused append answers KAFKA_STORAGE_ERROR and changes nothing', () => {
  test('create-topics on a full disk: KAFKA_STORAGE_ERROR, same image, no torn tail; space freed: it succeeds, no restart', async () => {
    const { sim, net, fs, restarts } = await boot(101);
    const before = await metadata(sim, net);
    const logBefore = Buffer.from(fs.readFile(METADATA_LOG));
    fillDisk(fs);
    const refused = await call(sim, net, 'controller.create-topics', {
      topics: [topic('newt', 3)],
      validateOnly: false,
    });
    assert.equal(refused.results.length, 1);
    assert.equal(refused.results[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.match(refused.results[0]!.errorMessage ?? '', /metadata log/);
    assert.equal(refused.results[0]!.topicId, '', 'no topic id handed out');
    assert.deepEqual(refused.image, before, 'the answer carries the unchanged image');
    assert.deepEqual(await metadata(sim, net), before, 'nothing applied');
    assertLogUnchanged(fs, logBefore, 'after the refused create-topics');
    // Again on the full disk: still refused, still nothing left behind (no frame grows out of retries).
    const again = await call(sim, net, 'controller.create-topics', { topics: [topic('newt', 3)], validateOnly: false });
    assert.equal(again.results[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assertLogUnchanged(fs, logBefore, 'after the second refusal');

    // A restart replays the same image: the log holds no torn frame.
    sim.crash(CONTROLLER);
    await sim.restart(CONTROLLER);
    const replayed = await metadata(sim, net);
    assert.deepEqual({ ...replayed, offset: before.offset, controllerEpoch: before.controllerEpoch }, before);
    restarts.length = 0;

    fs.capacityBytes = null;
    const created = await call(sim, net, 'controller.create-topics', {
      topics: [topic('newt', 3)],
      validateOnly: false,
    });
    assert.equal(created.results[0]!.errorCode, ErrorCode.NONE, 'space freed: the next create-topics succeeds');
    const newt = created.image.topics.find((t) => t.name === 'newt');
    assert.equal(newt?.partitions.length, 3);
    assert.deepEqual(restarts, [], 'the controller was never restarted by the supervisor');
    sim.crash(CONTROLLER);
    await sim.restart(CONTROLLER);
    const afterRestart = await metadata(sim, net);
    assert.deepEqual(
      afterRestart.topics.map((t) => [t.name, t.topicId, t.partitions.length]),
      created.image.topics.map((t) => [t.name, t.topicId, t.partitions.length]),
      'the topic created after the refusal replays',
    );
    await sim.shutdown();
  });

  test('every command on a full disk: KAFKA_STORAGE_ERROR, no state change; after space is freed each succeeds', async () => {
    const { sim, net, fs, epochs, restarts } = await boot(102);
    const before = await metadata(sim, net);
    const a = before.topics.find((t) => t.name === 'a')!;
    const p0 = a.partitions[0]!;
    const logBefore = Buffer.from(fs.readFile(METADATA_LOG));
    fillDisk(fs);

    const deleted = await call(sim, net, 'controller.delete-topics', { topics: [{ name: 'a', topicId: null }] });
    assert.equal(deleted.results[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'delete-topics');
    const altered = await call(sim, net, 'controller.alter-topic-configs', {
      resources: [{ topic: 'a', ops: [{ name: 'retention.ms', op: 'set', value: '5' }] }],
      incremental: true,
      validateOnly: false,
    });
    assert.equal(altered.results[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'alter-topic-configs');
    const grown = await call(sim, net, 'controller.create-partitions', {
      topics: [{ name: 'a', count: 5, assignments: null }],
      validateOnly: false,
    });
    assert.equal(grown.results[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'create-partitions');
    assert.deepEqual(
      await call(sim, net, 'controller.init-producer-id', {}),
      { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, producerId: -1, producerEpoch: -1 },
      'init-producer-id',
    );
    const registered = await call(sim, net, 'controller.register-broker', { brokerId: 1, ...brokerListener(1) });
    assert.deepEqual(registered, { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, brokerEpoch: -1 }, 'register-broker');
    const shrink = await call(sim, net, 'controller.alter-partition', {
      brokerId: p0.leader,
      brokerEpoch: epochs.get(p0.leader)!,
      topicId: a.topicId,
      partition: 0,
      leaderEpoch: p0.leaderEpoch,
      partitionEpoch: p0.partitionEpoch,
      newIsr: [p0.leader],
    });
    assert.deepEqual(shrink, { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, state: null }, 'alter-partition');
    const follower = p0.replicas.find((id) => id !== p0.leader)!;
    const offline = await call(sim, net, 'controller.replica-offline', {
      brokerId: follower,
      brokerEpoch: epochs.get(follower)!,
      topicId: a.topicId,
      partition: 0,
    });
    assert.equal(offline.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'replica-offline');
    const shutdown = await call(sim, net, 'controller.broker-heartbeat', {
      brokerId: 2,
      brokerEpoch: epochs.get(2)!,
      wantShutDown: true,
    });
    assert.equal(shutdown.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, 'controlled-shutdown heartbeat');
    assert.equal(shutdown.shutdownReady, false);
    assert.deepEqual(await call(sim, net, 'controller.broker-down', { brokerId: 1, reason: 'test' }), {});
    assert.deepEqual(await metadata(sim, net), before, 'no command changed the image');
    assertLogUnchanged(fs, logBefore, 'after every refused command');
    assert.deepEqual(restarts, [], 'the controller was never restarted');

    fs.capacityBytes = null;
    assert.equal(
      (await call(sim, net, 'controller.init-producer-id', {})).errorCode,
      ErrorCode.NONE,
      'init-producer-id after space is freed',
    );
    const down = await call(sim, net, 'controller.broker-down', { brokerId: 1, reason: 'test' });
    assert.deepEqual(down, {});
    assert.equal((await metadata(sim, net)).brokers.find((b) => b.nodeId === 1)?.fenced, true, 'broker-down fences');
    const reregistered = await call(sim, net, 'controller.register-broker', { brokerId: 1, ...brokerListener(1) });
    assert.equal(reregistered.errorCode, ErrorCode.NONE, 'register-broker after space is freed');
    const altered2 = await call(sim, net, 'controller.alter-topic-configs', {
      resources: [{ topic: 'a', ops: [{ name: 'retention.ms', op: 'set', value: '5' }] }],
      incremental: true,
      validateOnly: false,
    });
    assert.equal(altered2.results[0]!.errorCode, ErrorCode.NONE);
    const deleted2 = await call(sim, net, 'controller.delete-topics', { topics: [{ name: 'a', topicId: null }] });
    assert.equal(deleted2.results[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(deleted2.image.topics, [], 'the topic is gone');
    await sim.shutdown();
  });

  test('a failed fsync of the metadata log: KAFKA_STORAGE_ERROR, the unsynced frame cut back; a power loss after it replays the same image', async () => {
    const { sim, net, fs, restarts } = await boot(103);
    const before = await metadata(sim, net);
    const logBefore = Buffer.from(fs.readFile(METADATA_LOG));
    fs.fault = (op) => (op.syscall === 'fsync' && op.path === METADATA_LOG ? 'EIO' : null);
    const refused = await call(sim, net, 'controller.create-topics', { topics: [topic('b', 2)], validateOnly: false });
    assert.equal(refused.results[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.deepEqual(await metadata(sim, net), before, 'nothing applied');
    // The cut back could not be fsynced either (every fsync fails): the bytes are gone from the file.
    assert.deepEqual(fs.readFile(METADATA_LOG), logBefore, 'the frame whose fsync failed is cut from the file');
    // A power loss now (the torn write keeps part of what was never fsynced): the change replays as not made.
    sim.crash(CONTROLLER);
    fs.crash({ kind: 'torn-last-write' });
    fs.fault = null;
    await sim.restart(CONTROLLER);
    const replayed = await metadata(sim, net);
    assert.deepEqual({ ...replayed, offset: before.offset, controllerEpoch: before.controllerEpoch }, before);
    const created = await call(sim, net, 'controller.create-topics', { topics: [topic('b', 2)], validateOnly: false });
    assert.equal(created.results[0]!.errorCode, ErrorCode.NONE, 'fsync works again: the create succeeds');
    assert.deepEqual(restarts, [[CONTROLLER]], 'only the test restarted the controller');
    await sim.shutdown();
  });

  test('a failed fsync whose cut back works: the log file is exactly as before, all of it durable', async () => {
    const { sim, net, fs } = await boot(104);
    const logBefore = Buffer.from(fs.readFile(METADATA_LOG));
    let failures = 0;
    fs.fault = (op) => (op.syscall === 'fsync' && op.path === METADATA_LOG && failures++ === 0 ? 'EIO' : null);
    const refused = await call(sim, net, 'controller.init-producer-id', {});
    assert.equal(refused.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assertLogUnchanged(fs, logBefore, 'after the failed fsync');
    fs.crash({ kind: 'lose-unsynced' });
    assert.deepEqual(fs.readFile(METADATA_LOG), logBefore, 'a power loss keeps the same bytes');
    await sim.shutdown();
  });

  test('a cut back the disk refuses too: the next append cuts the tail first, and replay finds no torn frame', async () => {
    const { sim, net, fs } = await boot(105);
    const before = await metadata(sim, net);
    const logBefore = Buffer.from(fs.readFile(METADATA_LOG));
    fillDisk(fs);
    fs.fault = (op) => (op.syscall === 'ftruncate' && op.path === METADATA_LOG ? 'EIO' : null);
    const refused = await call(sim, net, 'controller.create-topics', { topics: [topic('c')], validateOnly: false });
    assert.equal(refused.results[0]!.errorCode, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.equal(fs.readFile(METADATA_LOG).length, logBefore.length + 5, 'the short write stays: the cut failed');
    fs.fault = null;
    fs.capacityBytes = null;
    const created = await call(sim, net, 'controller.create-topics', { topics: [topic('c')], validateOnly: false });
    assert.equal(created.results[0]!.errorCode, ErrorCode.NONE);
    sim.crash(CONTROLLER);
    await sim.restart(CONTROLLER);
    const replayed = await metadata(sim, net);
    assert.deepEqual(
      replayed.topics.map((t) => t.name).sort(),
      ['a', 'c'],
      'the change after the dirty tail replays: the partial frame was cut before it was written',
    );
    assert.equal(replayed.offset, before.offset + 2, 'one frame for c, one for the new controller epoch');
    await sim.shutdown();
  });
});

describe('controller on a full disk: fencing and starts are retried, not lost', () => {
  test('a session expiry whose fence the disk refuses: the broker stays unfenced, and is fenced once space is freed', async () => {
    const { sim, net, fs, restarts } = await boot(106);
    fillDisk(fs);
    // Brokers 0 and 1 heartbeat; broker 2 goes silent past the 9000 ms session timeout.
    for (let elapsedMs = 0; elapsedMs < 12_000; elapsedMs += 1_000) {
      for (const brokerId of [0, 1]) {
        const epoch = (await metadata(sim, net)).brokers.find((b) => b.nodeId === brokerId)!.brokerEpoch;
        await call(sim, net, 'controller.broker-heartbeat', { brokerId, brokerEpoch: epoch });
      }
      await sim.advanceTime(1_000);
    }
    const stillUnfenced = await metadata(sim, net);
    assert.equal(stillUnfenced.brokers.find((b) => b.nodeId === 2)?.fenced, false, 'the fence could not be written');
    fs.capacityBytes = null;
    await sim.advanceTime(2_000);
    const fenced = await metadata(sim, net);
    assert.equal(fenced.brokers.find((b) => b.nodeId === 2)?.fenced, true, 'the next session check fenced it');
    assert.equal(fenced.brokers.find((b) => b.nodeId === 0)?.fenced, false);
    assert.deepEqual(restarts, [], 'the controller was never restarted');
    await sim.shutdown();
  });

  test('a controller restarted on a full disk starts; its new controller epoch goes in with the first change after space is freed', async () => {
    const { sim, net, fs } = await boot(107);
    const before = await metadata(sim, net);
    const logBefore = Buffer.from(fs.readFile(METADATA_LOG));
    fillDisk(fs);
    sim.crash(CONTROLLER);
    await sim.restart(CONTROLLER);
    const started = await metadata(sim, net);
    assert.deepEqual(started, before, 'started, with the epoch of the log (the new one is not written yet)');
    assertLogUnchanged(fs, logBefore, 'after a start on a full disk');
    fs.capacityBytes = null;
    const created = await call(sim, net, 'controller.create-topics', { topics: [topic('d')], validateOnly: false });
    assert.equal(created.results[0]!.errorCode, ErrorCode.NONE);
    assert.equal(created.image.controllerEpoch, before.controllerEpoch + 1, 'the epoch went up with the change');
    assert.equal(created.image.offset, before.offset + 1, 'one frame: the epoch and the topic together');
    sim.crash(CONTROLLER);
    await sim.restart(CONTROLLER);
    const replayed = await metadata(sim, net);
    assert.equal(replayed.controllerEpoch, before.controllerEpoch + 2);
    assert.deepEqual(
      replayed.topics.map((t) => t.name),
      created.image.topics.map((t) => t.name),
    );
    await sim.shutdown();
  });
});
