/**
 * The controller's metadata log (src/controller/metadata-log.ts) on a MemoryFileSystem: replay gives
 * back exactly what was appended; each append is one frame, so a torn append replays none of its
 * records; a torn or corrupt last frame is truncated; a corrupt frame with an intact frame after it
 * (damage to committed changes, not a torn tail) makes `open` throw and leaves the file as it is; a
 * log in the old per-record framing replays unchanged; appends after a recovery follow the last
 * complete frame.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32c } from '@node-rs/crc32';
import { Packr } from 'msgpackr';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { MetadataLog } from '../../../src/controller/metadata-log';
import type { MetadataRecord } from '../../../src/controller/metadata-records';
import { recordingLogger } from '../storage/helpers';

const DIR = '/data/__skiff_metadata';
const PATH = `${DIR}/metadata.log`;
/** length:uint32 | crc:uint32 before each msgpack body. */
const FRAME_HEADER_BYTES = 8;

/** One record of every type, in an order the controller could have written them. */
const RECORDS: MetadataRecord[] = [
  { type: 'cluster', clusterId: 'q1Sa6nBpQ2y-0yTkbLLrTA' },
  { type: 'topic', name: 'orders', topicId: 'b2Ym1-JYRqKQWqHgdVnCwQ', configs: { 'cleanup.policy': 'compact' } },
  {
    type: 'partition',
    topicId: 'b2Ym1-JYRqKQWqHgdVnCwQ',
    partition: 0,
    replicas: [0, 1],
    isr: [0, 1],
    leader: 0,
    leaderEpoch: 0,
  },
  {
    type: 'partition',
    topicId: 'b2Ym1-JYRqKQWqHgdVnCwQ',
    partition: 1,
    replicas: [1, 2],
    isr: [1],
    leader: 1,
    leaderEpoch: 3,
  },
  { type: 'topic-configs', topicId: 'b2Ym1-JYRqKQWqHgdVnCwQ', configs: { 'retention.ms': '1000' } },
  { type: 'producer-ids', nextProducerId: 7 },
  { type: 'remove-topic', topicId: 'b2Ym1-JYRqKQWqHgdVnCwQ' },
];

function open(fs: MemoryFileSystem) {
  const logger = recordingLogger();
  const { log, records } = MetadataLog.open(fs, DIR, logger);
  return { log, records, warnings: logger.lines.filter((l) => l.level === 'warn') };
}

/** A metadata log holding RECORDS (one append per record) and the byte position where each frame starts. */
function writtenLog(): { fs: MemoryFileSystem; frameStarts: number[]; sizeBytes: number } {
  const fs = new MemoryFileSystem();
  const { log } = open(fs);
  const frameStarts: number[] = [];
  for (const record of RECORDS) {
    frameStarts.push(fs.readFile(PATH).length);
    log.append([record]);
  }
  log.close();
  return { fs, frameStarts, sizeBytes: fs.readFile(PATH).length };
}

/**
 * A frame as metadata logs written before appends were batched hold it: length | CRC-32C | msgpack
 * body of ONE record (an object, not an array), written here by hand so the test does not depend on
 * the code under test.
 */
function oldFormatFrame(record: MetadataRecord): Buffer {
  const body = new Packr({ useRecords: false }).pack(record);
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeUInt32BE(body.length, 0);
  header.writeUInt32BE(crc32c(body) >>> 0, 4);
  return Buffer.concat([header, body]);
}

/** `open` throws the corruption error for the frame at `position`, naming the file and the fix. */
function assertRefusesToOpen(fs: MemoryFileSystem, position: number, message: string): void {
  assert.throws(
    () => MetadataLog.open(fs, DIR, recordingLogger()),
    (error: unknown) => {
      assert.ok(error instanceof Error, message);
      assert.match(error.message, new RegExp(`metadata log ${PATH} is corrupt at byte position ${position},`), message);
      assert.match(error.message, /Restore .* from a backup, or remove it to start a fresh cluster metadata/, message);
      return true;
    },
    message,
  );
}

/** A fresh disk whose metadata log is exactly `bytes` (fsynced). */
function logWithBytes(bytes: Buffer): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  fs.mkdirp(DIR);
  const file = fs.open(PATH, 'rw');
  file.write(bytes, 0);
  file.sync();
  file.close();
  fs.syncDir(DIR);
  return fs;
}

describe('metadata log', () => {
  test('a new log is created empty, its directory entry fsynced', () => {
    const fs = new MemoryFileSystem();
    const { log, records, warnings } = open(fs);
    assert.deepEqual(records, []);
    assert.deepEqual(warnings, []);
    assert.ok(fs.isDurableEntry(PATH), 'metadata.log survives a power loss right after creation');
    log.close();
  });

  test('replay returns every appended record, in order and unchanged, and every append is fsynced', () => {
    const fs = new MemoryFileSystem();
    const { log } = open(fs);
    log.append(RECORDS.slice(0, 2));
    assert.equal(fs.unsyncedBytes(PATH), 0, 'append returns only once durable');
    log.append(RECORDS.slice(2));
    assert.equal(fs.unsyncedBytes(PATH), 0);
    log.close();
    fs.crash({ kind: 'lose-unsynced' });
    const first = open(fs);
    assert.deepEqual(first.records, RECORDS);
    assert.deepEqual(first.warnings, []);
    first.log.close();
    const second = open(fs);
    assert.deepEqual(second.records, RECORDS, 'replaying again gives the same records');
    second.log.close();
  });

  test('frames are length | CRC-32C | msgpack body, back to back', () => {
    const { fs, frameStarts, sizeBytes } = writtenLog();
    const bytes = fs.readFile(PATH);
    for (let i = 0; i < frameStarts.length; i++) {
      const start = frameStarts[i]!;
      const end = frameStarts[i + 1] ?? sizeBytes;
      assert.equal(bytes.readUInt32BE(start), end - start - FRAME_HEADER_BYTES, `frame ${i} length field`);
      const body = bytes.subarray(start + FRAME_HEADER_BYTES, end);
      assert.equal(bytes.readUInt32BE(start + 4), crc32c(body) >>> 0, `frame ${i} CRC-32C field`);
      assert.deepEqual(
        new Packr({ useRecords: false }).unpack(body),
        [RECORDS[i]],
        `frame ${i} body: the append's array`,
      );
    }
  });

  test('a multi-record append is one frame: one length, one CRC-32C, one body holding the array of records', () => {
    const fs = new MemoryFileSystem();
    const { log } = open(fs);
    log.append(RECORDS);
    log.close();
    const bytes = fs.readFile(PATH);
    assert.equal(bytes.readUInt32BE(0), bytes.length - FRAME_HEADER_BYTES, 'one frame spans the whole file');
    const body = bytes.subarray(FRAME_HEADER_BYTES);
    assert.equal(bytes.readUInt32BE(4), crc32c(body) >>> 0);
    assert.deepEqual(new Packr({ useRecords: false }).unpack(body), RECORDS);
  });

  test('a torn last record, cut at any byte, is truncated and every complete record replays', () => {
    const { fs, frameStarts, sizeBytes } = writtenLog();
    const full = fs.readFile(PATH);
    const lastStart = frameStarts[frameStarts.length - 1]!;
    // Every cut inside the last frame: inside the length field, inside the CRC, at the body start, inside the body.
    for (let cut = lastStart + 1; cut < sizeBytes; cut++) {
      const torn = logWithBytes(full.subarray(0, cut));
      const { log, records, warnings } = open(torn);
      assert.deepEqual(records, RECORDS.slice(0, -1), `cut at ${cut}: every complete record`);
      assert.equal(torn.readFile(PATH).length, lastStart, `cut at ${cut}: truncated to the last complete frame`);
      assert.equal(torn.unsyncedBytes(PATH), 0, `cut at ${cut}: the truncation is fsynced`);
      assert.equal(warnings.length, 1, `cut at ${cut}: the truncation is logged`);
      assert.deepEqual(warnings[0]!.fields, { path: PATH, validBytes: lastStart, droppedBytes: cut - lastStart });
      log.close();
      const again = open(torn);
      assert.deepEqual(again.records, RECORDS.slice(0, -1), `cut at ${cut}: recovery is idempotent`);
      assert.deepEqual(again.warnings, [], `cut at ${cut}: nothing left to truncate`);
      again.log.close();
    }
  });

  test('a cut exactly at a frame boundary is a clean log: nothing truncated, nothing logged', () => {
    const { fs, frameStarts } = writtenLog();
    const full = fs.readFile(PATH);
    for (const [i, boundary] of frameStarts.entries()) {
      const cut = logWithBytes(full.subarray(0, boundary));
      const { log, records, warnings } = open(cut);
      assert.deepEqual(records, RECORDS.slice(0, i));
      assert.deepEqual(warnings, []);
      assert.equal(cut.readFile(PATH).length, boundary);
      log.close();
    }
  });

  test('a torn multi-record append, cut at any byte, replays none of its records and everything before it', () => {
    const fs = new MemoryFileSystem();
    const { log } = open(fs);
    log.append(RECORDS.slice(0, 2));
    const appendStart = fs.readFile(PATH).length;
    log.append(RECORDS.slice(2, 5));
    log.close();
    const full = fs.readFile(PATH);
    for (let cut = appendStart + 1; cut < full.length; cut++) {
      const torn = logWithBytes(full.subarray(0, cut));
      const { log: reopened, records, warnings } = open(torn);
      assert.deepEqual(records, RECORDS.slice(0, 2), `cut at ${cut}: nothing of the torn append replays`);
      assert.equal(torn.readFile(PATH).length, appendStart, `cut at ${cut}: truncated to before the torn append`);
      assert.equal(warnings.length, 1, `cut at ${cut}: the truncation is logged`);
      reopened.close();
    }
  });

  test('a CRC mismatch in the last frame drops that frame only', () => {
    const { fs, frameStarts, sizeBytes } = writtenLog();
    const lastStart = frameStarts[frameStarts.length - 1]!;
    fs.flipByte(PATH, sizeBytes - 1, 0x01);
    const { log, records, warnings } = open(fs);
    assert.deepEqual(records, RECORDS.slice(0, -1));
    assert.equal(fs.readFile(PATH).length, lastStart);
    assert.deepEqual(warnings[0]!.fields, { path: PATH, validBytes: lastStart, droppedBytes: sizeBytes - lastStart });
    log.close();
  });

  test('a CRC mismatch in a middle frame refuses to open: the file, the byte position and the fix, nothing truncated', () => {
    const { fs, frameStarts } = writtenLog();
    const corrupt = 3;
    const start = frameStarts[corrupt]!;
    fs.flipByte(PATH, start + FRAME_HEADER_BYTES + 2, 0x10); // a byte of the body
    const damaged = Buffer.from(fs.readFile(PATH));
    assertRefusesToOpen(fs, start, 'a corrupt body with intact frames after it');
    assert.deepEqual(fs.readFile(PATH), damaged, 'the committed frames after the corruption are kept for a restore');
    assertRefusesToOpen(fs, start, 'and it refuses again on the next start');
  });

  test('a corrupt CRC field or length field in a middle frame refuses to open the same way', () => {
    for (const [what, offsetInFrame] of [
      ['crc', 5],
      ['length (grows past the end)', 0],
      ['length (shrinks)', 3],
    ] as const) {
      const { fs, frameStarts } = writtenLog();
      const start = frameStarts[2]!;
      fs.flipByte(PATH, start + offsetInFrame, offsetInFrame === 3 ? 0x01 : 0x40);
      const damaged = Buffer.from(fs.readFile(PATH));
      assertRefusesToOpen(fs, start, what);
      assert.deepEqual(fs.readFile(PATH), damaged, `${what}: nothing truncated`);
    }
  });

  test('a corrupt frame with only zero bytes after it is a torn tail, not a middle corruption', () => {
    const { fs, frameStarts, sizeBytes } = writtenLog();
    const lastStart = frameStarts[frameStarts.length - 1]!;
    const full = fs.readFile(PATH);
    // A file system may leave a zero-filled extent after a crash: zero lengths are never read as frames.
    const torn = logWithBytes(Buffer.concat([full.subarray(0, sizeBytes - 1), Buffer.alloc(64)]));
    const { log, records } = open(torn);
    assert.deepEqual(records, RECORDS.slice(0, -1));
    assert.equal(torn.readFile(PATH).length, lastStart);
    log.close();
  });

  test('a log written in the old per-record framing replays unchanged, and new appends follow it', () => {
    const fs = logWithBytes(Buffer.concat(RECORDS.map(oldFormatFrame)));
    const first = open(fs);
    assert.deepEqual(first.records, RECORDS, 'every old frame replays as its one record');
    assert.deepEqual(first.warnings, []);
    const next: MetadataRecord[] = [
      { type: 'producer-ids', nextProducerId: 8 },
      { type: 'producer-ids', nextProducerId: 9 },
    ];
    first.log.append(next);
    first.log.close();
    const second = open(fs);
    assert.deepEqual(second.records, [...RECORDS, ...next], 'old frames, then the new batched frame');
    assert.deepEqual(second.warnings, []);
    second.log.close();
  });

  test('an old-format log with a torn last frame truncates that frame only', () => {
    const frames = RECORDS.map(oldFormatFrame);
    const intact = Buffer.concat(frames.slice(0, -1));
    const last = frames[frames.length - 1]!;
    for (let kept = 1; kept < last.length; kept++) {
      const fs = logWithBytes(Buffer.concat([intact, last.subarray(0, kept)]));
      const { log, records, warnings } = open(fs);
      assert.deepEqual(records, RECORDS.slice(0, -1), `${kept} bytes of the last frame kept`);
      assert.equal(fs.readFile(PATH).length, intact.length);
      assert.equal(warnings.length, 1);
      log.close();
    }
  });

  test('appends after a recovery follow the last complete record and replay with it', () => {
    const { fs, frameStarts, sizeBytes } = writtenLog();
    const lastStart = frameStarts[frameStarts.length - 1]!;
    const torn = logWithBytes(fs.readFile(PATH).subarray(0, sizeBytes - 2));
    const recovered = open(torn);
    const next: MetadataRecord[] = [
      { type: 'producer-ids', nextProducerId: 8 },
      { type: 'producer-ids', nextProducerId: 9 },
    ];
    recovered.log.append([next[0]!]);
    assert.equal(
      torn.readFile(PATH).readUInt32BE(lastStart) + lastStart + FRAME_HEADER_BYTES,
      torn.readFile(PATH).length,
    );
    recovered.log.append([next[1]!]);
    recovered.log.close();
    torn.crash({ kind: 'lose-unsynced' });
    const { log, records, warnings } = open(torn);
    assert.deepEqual(records, [...RECORDS.slice(0, -1), ...next]);
    assert.deepEqual(warnings, [], 'no garbage between the recovered prefix and the new frames');
    log.close();
  });
});
