/**
 * Record-level produce validation through a real Skiff process (src/protocol/record-batch/validate.ts):
 * for every codec, CRC-correct batches with malformed records, sent as raw Produce v9 requests,
 * are refused with INVALID_RECORD and the offending record's index in RecordErrors (a corrupt
 * compressed stream with CORRUPT_MESSAGE, a zip bomb (gzip, lz4, zstd) with INVALID_RECORD and no record index); the good batches
 * before and after are stored at consecutive offsets, and real clients (kcat and kafka-python)
 * read the whole partition afterwards: before validation, one such batch stopped both. A topic with
 * a small max.decompressed.message.bytes refuses a compressed batch holding a larger record (its
 * index in RecordErrors, Kafka's message) and kcat reads the partition around it.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiKey } from '../../src/protocol';
import { buildBatch } from '../../src/client/batch';
import { ErrorCode } from '../../src/protocol/error-codes';
import { COMPRESSION_NAMES, type CompressionCodecId } from '../../src/protocol/record-batch/compression';
import * as L from '../../src/protocol/record-batch/layout';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { fixCrc, goodRecords, rawRecord, wrapBatch } from '../helpers/malformed-batch';
import { WireClient } from '../helpers/wire-client';
import { kcatConsume, pythonConsume, withBrokerLog } from './clients';
import { assertSameRecords, record } from './record-file';

const TIMEOUT_MS = 120_000;
const CODECS: CompressionCodecId[] = [0, 1, 2, 3, 4];

function produceBody(topic: string, records: Buffer) {
  return {
    transactionalId: null,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records }] }],
  };
}

interface PartitionAnswer {
  errorCode: number;
  baseOffset: number;
  errorMessage: string | null;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
}

async function produce(client: WireClient, topic: string, batch: Buffer): Promise<PartitionAnswer> {
  const res = await client.request(ApiKey.Produce, 9, produceBody(topic, batch));
  return res.body.responses[0].partitionResponses[0] as PartitionAnswer;
}

function goodBatch(codec: CompressionCodecId, from: number): Buffer {
  const now = Date.now();
  return buildBatch(
    [0, 1].map((i) => ({ key: Buffer.from(`k${from + i}`), value: Buffer.from(`good-${from + i}`), timestamp: now })),
    { compression: codec },
  );
}

describe('malformed records in CRC-correct batches are refused, and the partition stays readable', () => {
  let broker: BrokerProcess;

  before(async () => {
    broker = await startBrokerProcess();
  });
  after(async () => {
    await broker?.stop();
  });

  for (const codec of CODECS) {
    const name = COMPRESSION_NAMES[codec]!;
    test(
      `${name}: refused with the record index, good batches around them read by kcat and kafka-python`,
      { timeout: TIMEOUT_MS },
      () =>
        withBrokerLog(broker, async () => {
          const topic = `validation-${name}`;
          const bootstrap = `127.0.0.1:${broker.port}`;
          const client = await WireClient.connect(broker.port);
          try {
            const created = await client.request(ApiKey.CreateTopics, 4, {
              topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
              timeoutMs: 5000,
              validateOnly: false,
            });
            assert.equal(created.body.topics[0].errorCode, 0);

            const first = await produce(client, topic, goodBatch(codec, 0));
            assert.equal(first.errorCode, ErrorCode.NONE, first.errorMessage ?? '');
            assert.equal(first.baseOffset, 0);

            const now = Date.now();
            const malformed: { what: string; batch: Buffer; index: number; message: RegExp }[] = [
              {
                what: 'offset delta 7 at index 1',
                batch: wrapBatch(Buffer.concat([...goodRecords(1), rawRecord({ offsetDelta: 7 })]), 2, codec, now),
                index: 1,
                message: /Invalid offset delta 7 for the record at index 1/,
              },
              {
                what: 'a header count of 3 records over 2',
                batch: wrapBatch(Buffer.concat(goodRecords(2)), 3, codec, now),
                index: 2,
                message: /premature EOF/,
              },
              {
                what: 'a record length past the end',
                batch: wrapBatch(Buffer.concat([rawRecord({ offsetDelta: 0, lengthOverride: 400 })]), 1, codec, now),
                index: 0,
                message: /Invalid record size: expected 400 bytes/,
              },
              {
                what: 'trailing bytes',
                batch: wrapBatch(Buffer.concat([...goodRecords(3), Buffer.from([9, 9])]), 3, codec, now),
                index: 2,
                message: /records still remaining/,
              },
            ];
            for (const m of malformed) {
              const answer = await produce(client, topic, m.batch);
              assert.equal(answer.errorCode, ErrorCode.INVALID_RECORD, `${m.what}: ${answer.errorMessage}`);
              assert.match(answer.errorMessage ?? '', m.message, m.what);
              assert.equal(answer.recordErrors.length, 1, m.what);
              assert.equal(answer.recordErrors[0]!.batchIndex, m.index, m.what);
              assert.match(answer.recordErrors[0]!.batchIndexErrorMessage ?? '', m.message, m.what);
            }
            // The broker's first refusal is logged at once (later ones at most one line a second): the
            // operator's way to find the producer.
            if (codec === CODECS[0]) {
              const line = broker
                .logs()
                .split('\n')
                .find((l) => l.includes('produce refused: the record batch is invalid'));
              assert.ok(line !== undefined, broker.logs().slice(-3000));
              assert.match(line, new RegExp(topic));
              assert.match(line, /"batchIndex":1/);
            }
            if (codec !== 0) {
              const good = goodBatch(codec, 0);
              const cut = fixCrc(Buffer.from(good.subarray(0, good.length - 5)));
              cut.writeInt32BE(cut.length - L.LOG_OVERHEAD, L.BATCH_LENGTH);
              fixCrc(cut);
              const corrupt = await produce(client, topic, cut);
              assert.equal(corrupt.errorCode, ErrorCode.CORRUPT_MESSAGE, corrupt.errorMessage ?? '');
              assert.deepEqual(corrupt.recordErrors, []);
            }
            // 80 MiB of zeros: more than 64 x max.message.bytes (the default 1 MiB) once inflated. Not for
            // snappy: it inflates at most about 21-fold, so no batch within max.message.bytes can pass
            // the bound (the unit tests check its bound with a lower limit).
            if (codec !== 0 && codec !== 2) {
              const bomb = wrapBatch(rawRecord({ offsetDelta: 0, value: Buffer.alloc(80 << 20) }), 1, codec, now);
              assert.ok(bomb.length < 1 << 20);
              const refused = await produce(client, topic, bomb);
              assert.equal(refused.errorCode, ErrorCode.INVALID_RECORD, refused.errorMessage ?? '');
              assert.deepEqual(refused.recordErrors, []);
              assert.match(refused.errorMessage ?? '', /more than the broker's limit of 67109632 bytes/);
            }

            const last = await produce(client, topic, goodBatch(codec, 2));
            assert.equal(last.errorCode, ErrorCode.NONE, last.errorMessage ?? '');
            assert.equal(last.baseOffset, 2, 'nothing was stored for the refused batches');
          } finally {
            client.close();
          }
          const expected = [0, 1, 2, 3].map((i) => record(`k${i}`, `good-${i}`));
          const byKcat = await kcatConsume({ bootstrap, topic, partition: 0, timeoutMs: 30_000 });
          assertSameRecords(byKcat, expected, `kcat reads ${topic}`);
          const byPython = await pythonConsume('kafka-python', { bootstrap, topic, timeoutMs: 60_000 });
          assertSameRecords(byPython, expected, `kafka-python reads ${topic}`);
        }),
    );
  }

  test(
    'max.decompressed.message.bytes: a compressed batch with a record over the topic setting is refused with its index; kcat reads the rest',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'validation-max-decompressed';
        const client = await WireClient.connect(broker.port);
        try {
          const created = await client.request(ApiKey.CreateTopics, 4, {
            topics: [
              {
                name: topic,
                numPartitions: 1,
                replicationFactor: 1,
                assignments: [],
                configs: [{ name: 'max.decompressed.message.bytes', value: '1024' }],
              },
            ],
            timeoutMs: 5000,
            validateOnly: false,
          });
          assert.equal(created.body.topics[0].errorCode, 0);
          assert.equal((await produce(client, topic, goodBatch(4, 0))).errorCode, ErrorCode.NONE);
          // Record 1's body is a little over 4 KiB; the batch is far under max.message.bytes.
          const large = wrapBatch(
            Buffer.concat([...goodRecords(1), rawRecord({ offsetDelta: 1, value: Buffer.alloc(4096, 1) })]),
            2,
            1,
            Date.now(),
          );
          const refused = await produce(client, topic, large);
          assert.equal(refused.errorCode, ErrorCode.INVALID_RECORD, refused.errorMessage ?? '');
          assert.match(
            refused.errorMessage ?? '',
            /^Invalid record size: 41\d\d exceeds the configured maximum record size of 1024\.$/,
          );
          assert.deepEqual(
            refused.recordErrors.map((e) => e.batchIndex),
            [1],
          );
          const last = await produce(client, topic, goodBatch(4, 2));
          assert.equal(last.errorCode, ErrorCode.NONE, last.errorMessage ?? '');
          assert.equal(last.baseOffset, 2, 'nothing was stored for the refused batch');
        } finally {
          client.close();
        }
        const expected = [0, 1, 2, 3].map((i) => record(`k${i}`, `good-${i}`));
        const byKcat = await kcatConsume({
          bootstrap: `127.0.0.1:${broker.port}`,
          topic,
          partition: 0,
          timeoutMs: 30_000,
        });
        assertSameRecords(byKcat, expected, `kcat reads ${topic}`);
      }),
  );
});
