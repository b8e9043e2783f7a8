import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  readLeaderEpochCheckpoint,
  readMetaProperties,
  readOffsetCheckpoint,
  readOffsetCheckpointEntry,
  readPartitionMetadata,
  uuidFromString,
  uuidToString,
  writeLeaderEpochCheckpoint,
  writeMetaProperties,
  writeOffsetCheckpoint,
  writePartitionMetadata,
} from '../../../src/storage/checkpoint';
import { MemoryFileSystem } from '../../../src/io/memory-file-system';
import { recordingLogger } from './helpers';

function setup(): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  fs.mkdirp('/logs/orders-0');
  return fs;
}

describe('offset checkpoints', () => {
  it("writes Kafka's text format and reads it back after a crash", () => {
    const fs = setup();
    const entries = [
      { topic: 'orders', partition: 0, offset: 1200 },
      { topic: '__consumer_offsets', partition: 17, offset: 0 },
    ];
    writeOffsetCheckpoint(fs, '/logs/recovery-point-offset-checkpoint', entries);
    assert.equal(
      fs.readFile('/logs/recovery-point-offset-checkpoint').toString(),
      '0\n2\norders 0 1200\n__consumer_offsets 17 0\n',
    );
    fs.crash({ kind: 'lose-unsynced' });
    assert.deepEqual(readOffsetCheckpoint(fs, '/logs/recovery-point-offset-checkpoint'), entries);
  });

  it('reads a missing file as empty without a warning, a corrupt one as empty with one', () => {
    const fs = setup();
    const logger = recordingLogger();
    assert.deepEqual(readOffsetCheckpoint(fs, '/logs/replication-offset-checkpoint', logger), []);
    assert.equal(logger.lines.length, 0);
    for (const text of [
      '1\n0\n',
      '0\n2\norders 0 5\n',
      '0\n1\norders x 5\n',
      '0\n1\norders 0 -1\n',
      '0\n1\norders 0\n',
      '',
      'garbage',
    ]) {
      fs.writeFileAtomic('/logs/replication-offset-checkpoint', Buffer.from(text));
      assert.deepEqual(
        readOffsetCheckpoint(fs, '/logs/replication-offset-checkpoint', logger),
        [],
        JSON.stringify(text),
      );
    }
    assert.equal(logger.lines.filter((l) => l.level === 'warn').length, 7);
    // A directory where the file should be: still a hint, still no throw.
    fs.mkdirp('/logs/log-start-offset-checkpoint');
    assert.deepEqual(readOffsetCheckpoint(fs, '/logs/log-start-offset-checkpoint', logger), []);
  });

  it("reads one partition's entry as the full parse finds it, in canonical and other shapes", () => {
    const fs = setup();
    const path = '/logs/recovery-point-offset-checkpoint';
    const probes: Array<[string, number]> = [
      ['orders', 0],
      ['orders', 1],
      ['orders', 10],
      ['order', 1],
      ['t', 3],
      ['missing', 0],
    ];
    const texts = [
      '0\n4\norders 0 1200\norders 10 7\norders 1 5\nt 3 0\n', // what the writer makes
      '0\r\n2\r\norders 1 5\r\nt 3 9\r\n', // CRLF: the full parser accepts it
      '0\n2\norders  01 5\n\tt 3 9\n', // extra whitespace and a leading zero: likewise
      '0\n3\norders 1 5\n', // wrong count: corrupt
      '0\n1\norders 1 -5\n', // negative offset: corrupt
      '0\n1\norders 1 99999999999999999999\n', // beyond a safe integer: corrupt
      'garbage',
    ];
    for (const text of texts) {
      fs.writeFileAtomic(path, Buffer.from(text));
      const all = readOffsetCheckpoint(fs, path);
      for (const [topic, partition] of probes) {
        assert.equal(
          readOffsetCheckpointEntry(fs, path, topic, partition),
          all.find((e) => e.topic === topic && e.partition === partition)?.offset,
          `${JSON.stringify(text)}: ${topic}-${partition}`,
        );
      }
    }
    fs.writeFileAtomic(path, Buffer.from(texts[0]!));
    assert.deepEqual(
      [readOffsetCheckpointEntry(fs, path, 'orders', 0), readOffsetCheckpointEntry(fs, path, 'orders', 10)],
      [1200, 7],
    );
    assert.equal(readOffsetCheckpointEntry(fs, '/logs/none', 'orders', 0), undefined);
  });

  it('accepts an empty checkpoint and CRLF line ends', () => {
    const fs = setup();
    writeOffsetCheckpoint(fs, '/logs/cp', []);
    assert.equal(fs.readFile('/logs/cp').toString(), '0\n0\n');
    assert.deepEqual(readOffsetCheckpoint(fs, '/logs/cp'), []);
    fs.writeFileAtomic('/logs/cp', Buffer.from('0\r\n1\r\nt 3 9\r\n'));
    assert.deepEqual(readOffsetCheckpoint(fs, '/logs/cp'), [{ topic: 't', partition: 3, offset: 9 }]);
  });

  it('refuses to write an invalid entry', () => {
    assert.throws(
      () => writeOffsetCheckpoint(setup(), '/logs/cp', [{ topic: 'a b', partition: 0, offset: 1 }]),
      RangeError,
    );
  });
});

describe('leader-epoch-checkpoint', () => {
  it('round-trips and rejects out-of-order entries on read', () => {
    const fs = setup();
    const path = '/logs/orders-0/leader-epoch-checkpoint';
    writeLeaderEpochCheckpoint(fs, path, [
      { epoch: 0, startOffset: 0 },
      { epoch: 3, startOffset: 950 },
    ]);
    assert.equal(fs.readFile(path).toString(), '0\n2\n0 0\n3 950\n');
    assert.deepEqual(readLeaderEpochCheckpoint(fs, path), [
      { epoch: 0, startOffset: 0 },
      { epoch: 3, startOffset: 950 },
    ]);
    fs.writeFileAtomic(path, Buffer.from('0\n2\n3 950\n1 0\n'));
    const logger = recordingLogger();
    assert.deepEqual(readLeaderEpochCheckpoint(fs, path, logger), []);
    assert.equal(logger.lines[0]?.level, 'warn');
    assert.throws(
      () =>
        writeLeaderEpochCheckpoint(fs, path, [
          { epoch: 2, startOffset: 5 },
          { epoch: 2, startOffset: 6 },
        ]),
      RangeError,
    );
  });
});

describe('partition.metadata and topic ids', () => {
  it('encodes Kafka Uuid strings as 22-char base64url', () => {
    const bytes = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    const text = uuidToString(bytes);
    assert.equal(text.length, 22);
    assert.deepEqual(uuidFromString(text), bytes);
    assert.equal(uuidFromString('short'), null);
    assert.equal(uuidFromString('AAAAAAAAAAAAAAAAAAAAA+'), null);
    assert.equal(uuidFromString('AAAAAAAAAAAAAAAAAAAAAB'), null, 'non-canonical trailing bits');
  });

  it("writes Kafka's format and reads it back", () => {
    const fs = setup();
    const path = '/logs/orders-0/partition.metadata';
    const topicId = uuidToString(Buffer.alloc(16, 7));
    writePartitionMetadata(fs, path, { topicId });
    assert.equal(fs.readFile(path).toString(), `version: 0\ntopic_id: ${topicId}\n`);
    assert.deepEqual(readPartitionMetadata(fs, path), { topicId });
    assert.equal(readPartitionMetadata(fs, '/logs/orders-0/none'), null);
    fs.writeFileAtomic(path, Buffer.from('version: 1\ntopic_id: x\n'));
    assert.equal(readPartitionMetadata(fs, path, recordingLogger()), null);
    assert.throws(() => writePartitionMetadata(fs, path, { topicId: 'nope' }), RangeError);
  });
});

describe('meta.properties', () => {
  it('reads a file as Kafka 3.7+ writes it', () => {
    const fs = setup();
    const directoryId = uuidToString(Buffer.alloc(16, 1));
    fs.writeFileAtomic(
      '/logs/meta.properties',
      Buffer.from(
        `#\n#Tue Jan 30 15:21:35 UTC 2024\nnode.id=1\ndirectory.id=${directoryId}\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n`,
      ),
    );
    assert.deepEqual(readMetaProperties(fs, '/logs/meta.properties'), {
      version: 1,
      nodeId: 1,
      clusterId: 'MkU3OEVBNTcwNTJENDM2Qg',
      directoryId,
    });
  });

  it('round-trips, and reads missing or invalid files as null', () => {
    const fs = setup();
    writeMetaProperties(fs, '/logs/meta.properties', { version: 1, nodeId: 3, clusterId: 'c1' });
    assert.deepEqual(readMetaProperties(fs, '/logs/meta.properties'), { version: 1, nodeId: 3, clusterId: 'c1' });
    assert.equal(readMetaProperties(fs, '/logs/none'), null);
    const logger = recordingLogger();
    for (const text of [
      'version=0\nbroker.id=1\ncluster.id=c\n',
      'version=1\nnode.id=-1\ncluster.id=c\n',
      'version=1\nnode.id=1\n',
      'junk\n',
    ]) {
      fs.writeFileAtomic('/logs/meta.properties', Buffer.from(text));
      assert.equal(readMetaProperties(fs, '/logs/meta.properties', logger), null, text);
    }
    assert.equal(logger.lines.length, 4);
  });
});
