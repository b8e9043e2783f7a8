/**
 * ProducerStateTable and rebuildProducerState: the state a log's snapshots plus a replay of its batch
 * headers give back (Kafka's UnifiedLog.rebuildProducerState), after a truncation, a restart, a
 * damaged snapshot, and a follower append that rolls segments mid-way.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { fixedClock, recordingLogger } from '../storage/helpers';
import { Log } from '../../../src/storage/log';
import { decodeProducerSnapshot, snapshotFileName } from '../../../src/storage/producer-state-snapshot';
import { ProducerStateTable, rebuildProducerState } from '../../../src/replica/producer-state';

const DIR = '/data/t-0';
const clock = fixedClock();

/** A batch of `count` records from producer `producerId` (epoch `epoch`) starting at sequence `baseSequence`. */
function idempotentBatch(producerId: number, baseSequence: number, count = 1, epoch = 0): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({
    key: Buffer.from(`k${baseSequence + i}`),
    value: Buffer.from(`p${producerId}-s${baseSequence + i}`),
    headers: [],
    timestamp: 1_700_000_000_000 + baseSequence + i,
  }));
  return buildRecordBatch(records, { producerId, producerEpoch: epoch, baseSequence });
}

function openLog(fs: MemoryFileSystem, table: ProducerStateTable, segmentBytes = 1 << 20): Log {
  return Log.open({
    fs,
    dir: DIR,
    config: { segmentBytes, indexIntervalBytes: 4096 },
    recoveryPoint: 0,
    logger: recordingLogger(),
    clock,
    producerState: table,
  });
}

/** Appends as a leader does: append (the roll snapshot sees the state before it), then the table learns the batch. */
function leaderAppend(log: Log, table: ProducerStateTable, batch: Buffer): number {
  const { baseOffset } = log.append(batch, 0);
  table.updateFromBatch(batch);
  return baseOffset;
}

describe('rebuildProducerState', () => {
  it('after a truncation keeps dedup for the batches kept and forgets producers left with none', () => {
    const fs = new MemoryFileSystem();
    const table = new ProducerStateTable();
    const log = openLog(fs, table);
    leaderAppend(log, table, idempotentBatch(7, 0)); // offset 0
    leaderAppend(log, table, idempotentBatch(7, 1)); // offset 1
    leaderAppend(log, table, idempotentBatch(8, 0)); // offset 2
    log.truncateTo(1);
    rebuildProducerState(table, log);
    assert.deepEqual(table.check(7, 0, 0, 0), { kind: 'duplicate', baseOffset: 0, maxTimestampMs: 1_700_000_000_000 });
    assert.deepEqual(table.check(7, 0, 1, 1), { kind: 'append' }, 'the cut batch is appended again');
    assert.equal(table.check(7, 0, 2, 2).kind, 'error', 'the sequence still follows the kept batch');
    assert.deepEqual(table.check(8, 0, 5, 5), { kind: 'append' }, 'a producer with no batch left is unknown');
  });

  it('a truncation below a producer epoch bump brings back the older epoch (the in-memory filter could not)', () => {
    const fs = new MemoryFileSystem();
    const table = new ProducerStateTable();
    const log = openLog(fs, table);
    leaderAppend(log, table, idempotentBatch(7, 0, 1, 0)); // offset 0, epoch 0
    leaderAppend(log, table, idempotentBatch(7, 0, 1, 1)); // offset 1, epoch 1
    log.truncateTo(1);
    rebuildProducerState(table, log);
    assert.equal(table.check(7, 0, 1, 1).kind, 'append', 'epoch 0 goes on at sequence 1');
    assert.equal(table.check(7, 0, 0, 0).kind, 'duplicate');
  });

  it('a truncation deletes the snapshots above the new LEO and rebuilds from the one below', () => {
    const fs = new MemoryFileSystem();
    const table = new ProducerStateTable();
    const log = openLog(fs, table, 200); // about two batches per segment
    for (let seq = 0; seq < 10; seq++) leaderAppend(log, table, idempotentBatch(1, seq));
    const snapshots = log.producerSnapshotOffsets();
    assert.ok(snapshots.length >= 3, `rolls wrote snapshots: ${snapshots.join(',')}`);
    const cut = snapshots[1]! + 1;
    log.truncateTo(cut);
    assert.ok(
      log.producerSnapshotOffsets().every((o) => o <= log.logEndOffset),
      `left ${log.producerSnapshotOffsets().join(',')} at LEO ${log.logEndOffset}`,
    );
    const rebuilt = rebuildProducerState(table, log);
    assert.equal(rebuilt.snapshotOffset, snapshots[1]);
    assert.equal(table.check(1, 0, cut, cut).kind, 'append', `sequence ${cut} follows the last kept batch`);
    assert.equal(table.check(1, 0, cut - 1, cut - 1).kind, 'duplicate');
  });

  it('a restart gets the same state from the last roll snapshot plus the tail, and from the clean-shutdown snapshot alone', () => {
    const fs = new MemoryFileSystem();
    const table = new ProducerStateTable();
    const log = openLog(fs, table, 300);
    for (let seq = 0; seq < 12; seq++) leaderAppend(log, table, idempotentBatch(seq % 3, Math.floor(seq / 3) * 2, 2));
    log.flush();
    const before = table.snapshotEntries();
    log.close();

    const afterCrash = new ProducerStateTable();
    const reopened = openLog(fs, afterCrash, 300);
    const crashRebuild = rebuildProducerState(afterCrash, reopened);
    assert.ok(crashRebuild.snapshotOffset > 0, 'started from a roll snapshot');
    assert.ok(crashRebuild.replayedBatches > 0, 'replayed the tail after it');
    assert.deepEqual(afterCrash.snapshotEntries(), before);
    reopened.takeProducerSnapshot(); // a clean shutdown
    reopened.close();

    const afterStop = new ProducerStateTable();
    const again = openLog(fs, afterStop, 300);
    const cleanRebuild = rebuildProducerState(afterStop, again);
    assert.equal(cleanRebuild.snapshotOffset, again.logEndOffset);
    assert.equal(cleanRebuild.replayedBatches, 0);
    assert.deepEqual(afterStop.snapshotEntries(), before);
  });

  it('a damaged snapshot is ignored and deleted; the state is rebuilt from an older one and the log', () => {
    const fs = new MemoryFileSystem();
    const table = new ProducerStateTable();
    const log = openLog(fs, table, 200);
    for (let seq = 0; seq < 8; seq++) leaderAppend(log, table, idempotentBatch(4, seq));
    log.flush();
    const before = table.snapshotEntries();
    const snapshots = log.producerSnapshotOffsets();
    const newest = snapshots[snapshots.length - 1]!;
    log.close();
    const path = `${DIR}/${snapshotFileName(newest)}`;
    const bytes = Buffer.from(fs.readFile(path));
    bytes[bytes.length - 3]! ^= 0xff;
    fs.writeFileAtomic(path, bytes);

    const rebuiltTable = new ProducerStateTable();
    const reopened = openLog(fs, rebuiltTable, 200);
    const rebuilt = rebuildProducerState(rebuiltTable, reopened);
    assert.ok(rebuilt.snapshotOffset < newest, `started below the damaged ${newest}: ${rebuilt.snapshotOffset}`);
    assert.ok(!fs.exists(path), 'the damaged snapshot is deleted');
    assert.deepEqual(rebuiltTable.snapshotEntries(), before);
  });

  it('a follower append that rolls mid-way snapshots exactly the batches below each new segment', () => {
    const fs = new MemoryFileSystem();
    const leaderTable = new ProducerStateTable();
    const leader = openLog(fs, leaderTable, 1 << 20);
    for (let seq = 0; seq < 6; seq++) leaderAppend(leader, leaderTable, idempotentBatch(9, seq));
    const fetched = leader.read(0, 1 << 20, leader.logEndOffset, true);
    assert.equal(fetched.kind, 'ok');

    const followerFs = new MemoryFileSystem();
    const followerTable = new ProducerStateTable();
    const follower = openLog(followerFs, followerTable, 200);
    follower.appendAsFollower(fetched.kind === 'ok' ? fetched.records : Buffer.alloc(0), (b) =>
      followerTable.updateFromBatch(b),
    );
    assert.deepEqual(followerTable.snapshotEntries(), leaderTable.snapshotEntries());
    const snapshots = follower.producerSnapshotOffsets();
    assert.ok(snapshots.length >= 2, `rolled: ${snapshots.join(',')}`);
    for (const offset of snapshots) {
      // The leader's state after exactly the batches below `offset`, built batch by batch.
      const expected = new ProducerStateTable();
      const below = leader.read(0, 1 << 20, offset, true);
      assert.ok(below.kind === 'ok');
      for (let pos = 0; pos < below.records.length;) {
        const size = 12 + below.records.readInt32BE(pos + 8);
        expected.updateFromBatch(below.records.subarray(pos, pos + size));
        pos += size;
      }
      const decoded = decodeProducerSnapshot(followerFs.readFile(`${DIR}/${snapshotFileName(offset)}`));
      assert.ok(typeof decoded !== 'string', String(decoded));
      assert.deepEqual(decoded, expected.snapshotEntries(), `snapshot ${offset} holds the batches below it`);
    }
  });
});
