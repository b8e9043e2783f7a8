/**
 * recompressBatch: a batch rewritten from every codec into every other keeps its records (keys,
 * nulls, headers, timestamps, offset deltas) and its header fields (producer id, epoch, base
 * sequence, transactional and timestamp-type bits), gets the target codec and a valid CRC-32C;
 * compression levels change the bytes but not the records.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildBatch } from '../../../src/client/batch';
import { decodeBatch } from '../../../src/protocol/record-batch/decode';
import type { CompressionCodecId } from '../../../src/protocol/record-batch/compression';
import * as L from '../../../src/protocol/record-batch/layout';
import { recompressBatch } from '../../../src/protocol/record-batch/recompress';
import { checkBatch } from '../../../src/protocol/record-batch/view';

const CODECS: CompressionCodecId[] = [0, 1, 2, 3, 4];
const BASE = 1_750_000_000_000;

function source(codec: CompressionCodecId): Buffer {
  return buildBatch(
    [
      {
        key: Buffer.from('k1'),
        value: Buffer.from('v1'.repeat(50)),
        headers: [
          { key: 'h', value: Buffer.from('x') },
          { key: 'n', value: null },
        ],
        timestamp: BASE + 30,
      },
      { key: null, value: null, timestamp: BASE + 10 },
      {
        key: Buffer.from([0, 255]),
        value: Buffer.alloc(0),
        headers: [{ key: 'h', value: Buffer.from('y') }],
        timestamp: BASE + 20,
      },
    ],
    { compression: codec, producerId: 77, producerEpoch: 3, baseSequence: 40, isTransactional: true },
  );
}

/** Everything but the codec, CRC and length. */
function essence(batch: Buffer) {
  const d = decodeBatch(batch);
  return {
    header: [
      d.baseOffset,
      d.partitionLeaderEpoch,
      d.attributes & ~L.COMPRESSION_CODEC_MASK,
      d.lastOffsetDelta,
      d.baseTimestamp,
      d.maxTimestamp,
      d.producerId,
      d.producerEpoch,
      d.baseSequence,
    ],
    records: d.records.map((r) => [
      r.offsetDelta,
      r.timestamp,
      r.key?.toString('hex') ?? null,
      r.value?.toString('hex') ?? null,
      r.headers.map((h) => [h.key, h.value?.toString('hex') ?? null]),
    ]),
  };
}

describe('recompressBatch', () => {
  for (const from of CODECS) {
    for (const to of CODECS) {
      it(`codec ${from} -> ${to}`, () => {
        const original = source(from);
        const rewritten = recompressBatch(original, to);
        if (from === to) assert.equal(rewritten, original, 'same codec: the batch itself');
        assert.equal(rewritten.readInt16BE(L.ATTRIBUTES) & L.COMPRESSION_CODEC_MASK, to);
        assert.equal(checkBatch(rewritten, 0, rewritten.length), rewritten.length, 'a whole batch with a valid CRC');
        assert.deepEqual(essence(rewritten), essence(original));
      });
    }
  }

  it('applies gzip and zstd levels (different bytes, same records)', () => {
    const original = source(0);
    const fastGzip = recompressBatch(original, 1, 1);
    const bestGzip = recompressBatch(original, 1, 9);
    const zstd1 = recompressBatch(original, 4, 1);
    const zstd19 = recompressBatch(original, 4, 19);
    for (const b of [fastGzip, bestGzip, zstd1, zstd19]) assert.deepEqual(essence(b), essence(original));
    assert.notDeepEqual(fastGzip.subarray(L.RECORDS), bestGzip.subarray(L.RECORDS));
    assert.notDeepEqual(zstd1.subarray(L.RECORDS), zstd19.subarray(L.RECORDS));
  });
});
