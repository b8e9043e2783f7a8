/**
 * Compressed record batches (gzip, snappy, lz4, zstd) through a real Skiff process, per producing
 * client: kcat (`-z`), confluent-kafka (`compression.type`), kafka-python (`compression_type`,
 * with Debian's python3-snappy, python3-lz4 and python3-zstandard) and kafkajs (gzip built in,
 * kafkajs-snappy, and lz4/zstd codecs from kafkajs-extras.ts). Each producer writes 3,000 keyed
 * records per codec (values compressible on their own, so no client skips compression); the same client and a client with another codec implementation read them
 * back byte-equal, and the partition's segment file holds every batch with the producer's codec
 * (attributes & 7 at byte 21): stored and served as received, not recompressed or inflated.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompressionTypes, Kafka, logLevel, type Producer } from 'kafkajs';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { createTopic, kcatConsume, kcatProduce, pythonConsume, withBrokerLog, type PythonClient } from './clients';
import { kafkajsFetchAll, registerKafkajsCodecs } from './kafkajs-extras';
import { CODECS, pythonProduceCompressed, readStoredBatches, type CodecName } from './ops';
import { assertDenseOffsets, assertSameRecords, record, type TestRecord } from './record-file';
import { keyedFixtureRecords } from './workloads';

const TIMEOUT_MS = 60_000;
const RECORDS = 3_000;
const COMPRESSED: CodecName[] = ['gzip', 'snappy', 'lz4', 'zstd'];
const KAFKAJS_TYPES: Record<CodecName, CompressionTypes> = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};

type Reader = 'kcat' | 'kafkajs' | PythonClient;

/** kcat -l input: one `key:value` line per record (keys never contain ':', values never '\n'). */
function keyedLines(records: readonly TestRecord[]): Buffer {
  return Buffer.concat(
    records.flatMap((r) => [r.key ?? Buffer.alloc(0), Buffer.from(':'), r.value ?? Buffer.alloc(0), Buffer.from('\n')]),
  );
}

async function consumeWith(reader: Reader, bootstrap: string, topic: string): Promise<TestRecord[]> {
  if (reader === 'kcat') return kcatConsume({ bootstrap, topic, partition: 0, timeoutMs: TIMEOUT_MS });
  if (reader === 'kafkajs') return kafkajsFetchAll(bootstrap, topic, 0, TIMEOUT_MS);
  return pythonConsume(reader, { bootstrap, topic, partitions: [0], timeoutMs: TIMEOUT_MS });
}

describe('compressed batches (gzip, snappy, lz4, zstd) are stored and served as received', () => {
  let broker: BrokerProcess;
  let bootstrap: string;
  // Every value repeats its fixture line and a run of dashes, so even a lone record compresses:
  // librdkafka and kafka-python send a batch uncompressed when the codec would not shrink it.
  const input = keyedFixtureRecords(RECORDS, 37).map((r) => {
    const line = r.value!.toString('utf8');
    return record(r.key, `${line} | ${line} | ${line} | ${'-'.repeat(120)}`);
  });

  before(async () => {
    registerKafkajsCodecs();
    broker = await startBrokerProcess();
    bootstrap = `127.0.0.1:${broker.port}`;
  });
  after(async () => {
    await broker?.stop();
  });

  /** Checks one topic: read back by every reader, and every stored batch compressed with `codec`. */
  async function checkTopic(
    topic: string,
    codec: CodecName,
    readers: readonly Reader[],
    producer: string,
  ): Promise<void> {
    const batches = readStoredBatches(broker.dataDir, topic, 0);
    assert.ok(batches.length > 0, `${topic}: no batches in the segment files`);
    const wrong = batches.filter((b) => b.codec !== CODECS.indexOf(codec));
    // librdkafka 2.0.2 turns its LZ4 feature on only when ApiVersions lists FindCoordinator; without
    // it, it logs "Broker does not support compression type lz4: not compressing batch".
    const hint =
      codec === 'lz4' && (producer === 'kcat' || producer === 'confluent-kafka')
        ? ' (librdkafka enables lz4 only if the broker advertises FindCoordinator in ApiVersions)'
        : '';
    assert.deepEqual(
      wrong.map((b) => ({ baseOffset: b.baseOffset, records: b.recordCount, codec: CODECS[b.codec] ?? b.codec })),
      [],
      `${topic}: every stored batch should be ${codec} (${batches.length} batches)${hint}`,
    );
    assert.equal(
      batches.reduce((n, b) => n + b.recordCount, 0),
      RECORDS,
      `${topic}: records in stored batches`,
    );
    const consumed = await Promise.all(readers.map((reader) => consumeWith(reader, bootstrap, topic)));
    readers.forEach((reader, i) => {
      assertDenseOffsets(consumed[i]!, `${producer} ${codec} -> ${reader}`);
      assertSameRecords(consumed[i]!, input, `${producer} ${codec} -> ${reader}`);
    });
  }

  /** One producer per client: sends `input` to `topic` with `codec`. */
  const producers: Array<{ name: string; readers: Reader[]; produce(topic: string, codec: CodecName): Promise<void> }> =
    [
      {
        name: 'kcat -X compression.codec (what -z sets)',
        readers: ['kcat', 'kafka-python'],
        produce: (topic, codec) =>
          kcatProduce({
            bootstrap,
            topic,
            input: keyedLines(input),
            keyDelimiter: ':',
            config: { 'compression.codec': codec, 'linger.ms': '200' },
            timeoutMs: TIMEOUT_MS,
          }),
      },
      {
        name: 'confluent-kafka compression.type',
        readers: ['confluent-kafka', 'kafkajs'],
        produce: async (topic, codec) => {
          await pythonProduceCompressed('confluent-kafka', {
            bootstrap,
            topic,
            records: input,
            compression: codec,
            timeoutMs: TIMEOUT_MS,
          });
        },
      },
      {
        name: 'kafka-python compression_type',
        readers: ['kafka-python', 'kcat'],
        produce: async (topic, codec) => {
          await pythonProduceCompressed('kafka-python', {
            bootstrap,
            topic,
            records: input,
            compression: codec,
            timeoutMs: TIMEOUT_MS,
          });
        },
      },
      {
        name: 'kafkajs compression',
        readers: ['kafkajs', 'confluent-kafka'],
        produce: async (topic, codec) => {
          const kafka = new Kafka({
            clientId: 'skiff-compat-compression',
            brokers: [bootstrap],
            logLevel: logLevel.ERROR,
            retry: { retries: 3 },
          });
          const producer: Producer = kafka.producer({ allowAutoTopicCreation: false });
          await producer.connect();
          try {
            for (let i = 0; i < input.length; i += 1000) {
              const messages = input.slice(i, i + 1000).map((r) => ({ key: r.key, value: r.value, partition: 0 }));
              const sent = await producer.send({ topic, acks: -1, compression: KAFKAJS_TYPES[codec], messages });
              assert.deepEqual(
                sent.map((s) => [s.partition, s.errorCode, Number(s.baseOffset)]),
                [[0, 0, i]],
                `${topic} send at ${i}`,
              );
            }
          } finally {
            await producer.disconnect();
          }
        },
      },
    ];

  for (const p of producers) {
    for (const codec of COMPRESSED) {
      test(
        `${p.name}=${codec}: ${RECORDS} records read back by ${p.readers.join(' and ')}; stored as ${codec}`,
        { timeout: TIMEOUT_MS },
        () =>
          withBrokerLog(broker, async () => {
            const topic = `comp-${p.name.split(' ')[0]}-${codec}`;
            await createTopic(bootstrap, topic, 1);
            await p.produce(topic, codec);
            await checkTopic(topic, codec, p.readers, p.name.split(' ')[0]!);
          }),
      );
    }
  }
});
