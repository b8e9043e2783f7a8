/**
 * The controller's metadata log (src/controller/metadata-log.ts) on a MemoryFileSystem: replay gives
 * back exactly what was appended; a torn tail is truncated at the last complete frame; a CRC mismatch
 * stops replay at the corrupt frame and truncates there, dropping every frame after it (the module's
 * documented rule, as Kafka's log recovery truncates at the first invalid batch); appends after a
 * recovery follow the last complete frame.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
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
    }
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

  test('a torn multi-record append replays the complete frames before the tear (records, not appends, are the unit)', () => {
    const fs = new MemoryFileSystem();
    const { log } = open(fs);
    log.append(RECORDS.slice(0, 2));
    const appendStart = fs.readFile(PATH).length;
    log.append(RECORDS.slice(2, 5));
    log.close();
    const full = fs.readFile(PATH);
    const secondFrameEnd = appendStart + FRAME_HEADER_BYTES + full.readUInt32BE(appendStart);
    const torn = logWithBytes(full.subarray(0, secondFrameEnd + 3));
    const reopened = open(torn);
    assert.deepEqual(
      reopened.records,
      RECORDS.slice(0, 3),
      'the first frame of the torn append replays without the others',
    );
    reopened.log.close();
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

  test('a CRC mismatch in a middle frame stops replay there and truncates every later frame, intact ones too', () => {
    const { fs, frameStarts, sizeBytes } = writtenLog();
    const corrupt = 3;
    const start = frameStarts[corrupt]!;
    fs.flipByte(PATH, start + FRAME_HEADER_BYTES + 2, 0x10); // a byte of the body
    const { log, records, warnings } = open(fs);
    assert.deepEqual(records, RECORDS.slice(0, corrupt), 'replay keeps the prefix before the corrupt frame');
    assert.equal(fs.readFile(PATH).length, start, 'the corrupt frame and everything after it are gone');
    assert.equal(warnings.length, 1);
    assert.deepEqual(warnings[0]!.fields, { path: PATH, validBytes: start, droppedBytes: sizeBytes - start });
    log.close();
  });

  test('a corrupt CRC field or length field in a middle frame is detected the same way', () => {
    for (const [what, offsetInFrame] of [
      ['crc', 5],
      ['length (grows past the end)', 0],
      ['length (shrinks)', 3],
    ] as const) {
      const { fs, frameStarts } = writtenLog();
      const start = frameStarts[2]!;
      fs.flipByte(PATH, start + offsetInFrame, offsetInFrame === 3 ? 0x01 : 0x40);
      const { log, records } = open(fs);
      assert.deepEqual(records, RECORDS.slice(0, 2), `${what}: replay stops at the corrupt frame`);
      assert.equal(fs.readFile(PATH).length, start, `${what}: truncated at the corrupt frame`);
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
