/**
 * The network thread's segment reads (src/network/segment-reader.ts) against a real Log on a real
 * disk: a range read gives exactly the bytes Log.read gives, and a range that is no longer what the
 * log meant (segment deleted, file swapped, file truncated, wrong offsets) reads as null, never as
 * other bytes. The simulation's disk gives no ranges at all.
 */
import assert from 'node:assert/strict';
import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { Log } from '../../../src/storage/log';
import type { SegmentRange } from '../../../src/storage/log';
import type { FileSystem } from '../../../src/io/file-system';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { NodeFileSystem } from '../../../src/io/node-file-system';
import { holdsBatches, MAX_OPEN_FILES, SegmentRangeReader } from '../../../src/network/segment-reader';
import { MIN_POOLED_BYTES, responseBuffers } from '../../../src/network/response-buffers';
import { fixedClock, makeBatch, recordingLogger, removeDir, tmpDir } from '../storage/helpers';

/** A log of `batches` 100-byte batches of 2 records each, segments of about 350 bytes (3 batches). */
function filledLog(fs: FileSystem, dir: string, batches: number): Log {
  const log = Log.open({
    fs,
    dir,
    config: { segmentBytes: 350, indexIntervalBytes: 150 },
    recoveryPoint: 0,
    logger: recordingLogger(),
    clock: fixedClock(),
  });
  for (let i = 0; i < batches; i++) log.append(makeBatch({ records: 2, payloadBytes: 39, seed: i }), 1);
  return log;
}

function ranges(log: Log, fetchOffset: number, maxBytes = Number.MAX_SAFE_INTEGER): SegmentRange[] {
  const r = log.readRanges(fetchOffset, maxBytes, log.logEndOffset, true);
  assert.ok(r !== null && r.kind === 'ok', 'a log on a real disk answers ranges');
  return r.ranges;
}

function bytes(log: Log, fetchOffset: number, maxBytes = Number.MAX_SAFE_INTEGER): Buffer {
  const r = log.read(fetchOffset, maxBytes, log.logEndOffset, true);
  assert.equal(r.kind, 'ok');
  return r.kind === 'ok' ? r.records : Buffer.alloc(0);
}

async function withLog(batches: number, body: (log: Log, dir: string) => Promise<void>): Promise<void> {
  const root = tmpDir();
  const log = filledLog(new NodeFileSystem(), path.join(root, 'p-0'), batches);
  try {
    await body(log, path.join(root, 'p-0'));
  } finally {
    log.close();
    removeDir(root);
  }
}

describe('SegmentRangeReader', () => {
  it('reads the same bytes as Log.read, across segments and from inside a segment', async () => {
    await withLog(10, async (log) => {
      assert.ok(log.segmentBaseOffsets().length >= 3, 'the log spans several segments');
      const reader = new SegmentRangeReader();
      try {
        for (const fetchOffset of [0, 3, 7, 19]) {
          const rs = ranges(log, fetchOffset);
          assert.equal(rs.length, log.segmentBaseOffsets().filter((b) => b + 6 > fetchOffset).length);
          assert.deepEqual(await reader.read(rs), bytes(log, fetchOffset), `from offset ${fetchOffset}`);
        }
        // max_bytes of 250: two whole batches, the same cut as Log.read.
        const cut = ranges(log, 0, 250);
        assert.deepEqual(
          cut.map((r) => [r.baseOffset, r.lastOffset, r.sizeBytes]),
          [[0, 3, 200]],
        );
        assert.deepEqual(await reader.read(cut), bytes(log, 0, 250));
        assert.equal(reader.openFiles(), log.segmentBaseOffsets().length, 'one cached descriptor per segment');
      } finally {
        reader.close();
      }
      assert.deepEqual(ranges(log, log.logEndOffset), [], 'at the LEO: no range');
    });
  });

  it('answers null for a segment deleted since the range was taken, and the log then answers anew', async () => {
    await withLog(10, async (log) => {
      const reader = new SegmentRangeReader();
      try {
        const rs = ranges(log, 0);
        log.deleteRecordsBefore(6); // deletes the first segment [0, 6)
        assert.equal(await reader.read(rs), null);
        assert.deepEqual(await reader.read(ranges(log, 6)), bytes(log, 6));
      } finally {
        reader.close();
      }
    });
  });

  it('answers null when the path now names another file, even one holding the same bytes (a swap), unless it still holds the old one open', async () => {
    await withLog(4, async (log) => {
      const reader = new SegmentRangeReader();
      try {
        const rs = ranges(log, 0);
        const first = rs[0]!;
        assert.deepEqual(await reader.read(rs), bytes(log, 0), 'cached now');
        const copy = `${first.path}.copy`;
        nodeFs.copyFileSync(first.path, copy);
        nodeFs.renameSync(copy, first.path); // what a cleaner swap does: same name, new inode
        // The cached descriptor pins the file the range was taken from: still the bytes it meant.
        assert.deepEqual(await reader.read(rs), bytes(log, 0), 'read from the pinned old file');
        const fresh = new SegmentRangeReader();
        try {
          assert.equal(await fresh.read(rs), null, 'opened by path: another identity');
        } finally {
          fresh.close();
        }
      } finally {
        reader.close();
      }
    });
  });

  it('answers null for a file truncated under the range, and for offsets that do not match the bytes', async () => {
    await withLog(3, async (log) => {
      const reader = new SegmentRangeReader();
      try {
        const [range] = ranges(log, 0);
        assert.ok(range !== undefined);
        assert.equal(await reader.read([{ ...range, baseOffset: 2 }]), null, 'wrong first offset');
        assert.equal(await reader.read([{ ...range, lastOffset: 4 }]), null, 'wrong last offset');
        assert.equal(await reader.read([{ ...range, position: 100, sizeBytes: 150 }]), null, 'not at batch bounds');
        assert.equal(await reader.read([{ ...range, fileIdentity: '0:0' }]), null, 'another file');
        assert.deepEqual(await reader.read([range]), bytes(log, 0));
        nodeFs.truncateSync(range.path, 250);
        assert.equal(await reader.read([range]), null, 'a short read');
      } finally {
        reader.close();
      }
    });
  });

  it('closes a descriptor whose reads all failed, also when two were in flight on it at once', async () => {
    await withLog(3, async (log) => {
      const reader = new SegmentRangeReader();
      try {
        const [range] = ranges(log, 0);
        assert.ok(range !== undefined);
        // Descriptors on this segment only: the log's own and the reader's (another test's
        // descriptor closing late must not move the count).
        const openFds = () =>
          nodeFs.readdirSync('/proc/self/fd').filter((fd) => {
            try {
              return nodeFs.readlinkSync(`/proc/self/fd/${fd}`) === range.path;
            } catch {
              return false;
            }
          }).length;
        const baseline = openFds();
        assert.deepEqual(await reader.read([range]), bytes(log, 0), 'cached now');
        assert.equal(openFds(), baseline + 1);
        nodeFs.truncateSync(range.path, 250);
        assert.deepEqual(await Promise.all([reader.read([range]), reader.read([range])]), [null, null]);
        assert.equal(reader.openFiles(), 0);
        // fs.close is asynchronous: wait for it, boundedly.
        for (let i = 0; i < 200 && openFds() !== baseline; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.equal(openFds(), baseline, 'the descriptor was closed');
      } finally {
        reader.close();
      }
    });
  });

  it('keeps at most MAX_OPEN_FILES descriptors, closing the least recently used', async () => {
    const root = tmpDir();
    const reader = new SegmentRangeReader();
    const logs: Log[] = [];
    try {
      for (let i = 0; i < MAX_OPEN_FILES + 5; i++) {
        const log = filledLog(new NodeFileSystem(), path.join(root, `p-${i}`), 1);
        logs.push(log);
        assert.deepEqual(await reader.read(ranges(log, 0)), bytes(log, 0));
      }
      assert.equal(reader.openFiles(), MAX_OPEN_FILES);
      // The first log's descriptor was closed; reading it again opens it again.
      assert.deepEqual(await reader.read(ranges(logs[0]!, 0)), bytes(logs[0]!, 0));
      assert.equal(reader.openFiles(), MAX_OPEN_FILES);
    } finally {
      reader.close();
      for (const log of logs) log.close();
      removeDir(root);
    }
    assert.equal(reader.openFiles(), 0, 'close drops every descriptor');
  });

  it('reads 64 KiB or more into a leased response buffer, and gives the lease back when the read fails', async () => {
    const root = tmpDir();
    const dir = path.join(root, 'p-0');
    const log = Log.open({
      fs: new NodeFileSystem(),
      dir,
      config: { segmentBytes: 40_000, indexIntervalBytes: 4096 },
      recoveryPoint: 0,
      logger: recordingLogger(),
      clock: fixedClock(),
    });
    const reader = new SegmentRangeReader();
    try {
      for (let i = 0; i < 12; i++) log.append(makeBatch({ records: 2, payloadBytes: 10_000, seed: i }), 1);
      const rs = ranges(log, 0);
      assert.ok(rs.length >= 3, 'several segments');
      const out = await reader.read(rs);
      assert.ok(out !== null && out.length >= MIN_POOLED_BYTES);
      assert.equal(responseBuffers.isLeased(out), true);
      assert.deepEqual(out, bytes(log, 0));
      responseBuffers.release(out);

      const before = responseBuffers.freeBytesHeld();
      const stale = ranges(log, 0);
      log.deleteRecordsBefore(log.segmentBaseOffsets()[1]!); // the first segment goes
      // A reader with no descriptor cached (a cached one would still read the deleted file).
      const fresh = new SegmentRangeReader();
      try {
        assert.equal(await fresh.read(stale), null);
      } finally {
        fresh.close();
      }
      assert.equal(
        responseBuffers.freeBytesHeld(),
        before,
        'the failed read gave its lease back (and took the free one)',
      );
    } finally {
      reader.close();
      log.close();
      removeDir(root);
    }
  });

  it('a log on the simulation disk gives no ranges (its replica sends bytes)', () => {
    const log = filledLog(new MemoryFileSystem(), '/data/p-0', 3);
    assert.equal(log.readRanges(0, 1 << 20, log.logEndOffset, true), null);
    assert.deepEqual(log.readRanges(99, 1 << 20, log.logEndOffset, true), { kind: 'out-of-range' });
    log.close();
  });

  it('holdsBatches checks whole batches from the first base offset to the last offset', () => {
    const a = makeBatch({ records: 2, payloadBytes: 39, seed: 1 });
    const b = makeBatch({ records: 3, payloadBytes: 39, seed: 2 });
    a.writeBigInt64BE(10n, 0);
    b.writeBigInt64BE(12n, 0);
    const both = Buffer.concat([a, b]);
    assert.equal(holdsBatches(both, { baseOffset: 10, lastOffset: 14 }), true);
    assert.equal(holdsBatches(both, { baseOffset: 10, lastOffset: 11 }), false);
    assert.equal(holdsBatches(both.subarray(0, both.length - 1), { baseOffset: 10, lastOffset: 14 }), false);
    assert.equal(holdsBatches(Buffer.alloc(0), { baseOffset: 0, lastOffset: -1 }), true);
  });
});
