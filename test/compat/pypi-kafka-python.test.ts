/**
 * kafka-python 3.x from PyPI (with python-snappy/cramjam, lz4 and zstandard) against a real Skiff
 * process: the workloads of kafka-python.test.ts (Debian's 2.0.2) and a producer per codec, run
 * under the virtual environment's interpreter (PYPI_PYTHON, made by scripts/install-peers.sh
 * install_python_venv) with the same scripts (test/compat/python/kafka_python_*.py). kafka-python
 * 3.x opens with ApiVersions v4 (answered with error 35 and the list, then v3) and picks the
 * highest versions Skiff advertises (Produce v9, Fetch v12, Metadata v12, ListOffsets v7,
 * CreateTopics v7 as of this writing). Its producer is idempotent by default (InitProducerId); the
 * scripts send retries=0, which turns that off as in 2.0.2, and the idempotent producer is a test of
 * its own.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import {
  PYPI_PYTHON,
  pythonClientVersions,
  pythonConsume,
  pythonProduce,
  withBrokerLog,
  type PythonClient,
  type PythonClientVersions,
} from './clients';
import { CODECS, readStoredBatches, type CodecName } from './ops';
import { assertDenseOffsets, assertSameRecords, record } from './record-file';
import {
  assertAcksMatch,
  assertPartitionedOrder,
  edgeCaseRecords,
  fixtureRecords,
  keyedFixtureRecords,
} from './workloads';

const TIMEOUT_MS = 60_000;
/** The whole text fixture (264,173 records): a bound for a loaded CI machine, not the usual time. */
const FIXTURE_TIMEOUT_MS = 150_000;
const FIXTURE_STEP_MS = 70_000;
const python = PYPI_PYTHON;
const CLIENT: PythonClient = 'kafka-python';

describe('kafka-python 3.x from PyPI round trips through Skiff', () => {
  let broker: BrokerProcess;
  let bootstrap: string;
  let versions: PythonClientVersions;

  before(async () => {
    versions = await pythonClientVersions(python);
    broker = await startBrokerProcess();
    bootstrap = `127.0.0.1:${broker.port}`;
  });
  after(async () => {
    await broker?.stop();
  });

  test('the virtual environment holds kafka-python 3.x with every codec', (t) => {
    t.diagnostic(
      `kafka-python ${versions.kafkaPython} (codecs: ${versions.kafkaPythonCodecs.join(', ')}), confluent-kafka ${versions.confluentKafka}, librdkafka ${versions.librdkafka}, Python ${versions.python}`,
    );
    assert.ok(
      Number(versions.kafkaPython.split('.')[0]) >= 3,
      `kafka-python ${versions.kafkaPython} under ${python}: want 3.x`,
    );
    assert.deepEqual(
      versions.kafkaPythonCodecs,
      ['gzip', 'snappy', 'lz4', 'zstd'],
      `kafka-python codecs under ${python}`,
    );
  });

  test(
    'every line of the text fixture (null keys, acks=all) comes back byte-equal and in order (topic from KafkaAdminClient)',
    { timeout: FIXTURE_TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'pypi-kafka-python-text-fixture';
        const input = fixtureRecords();
        const acked = await pythonProduce(CLIENT, {
          python,
          bootstrap,
          topic,
          records: input,
          acks: -1,
          createPartitions: 1,
          timeoutMs: FIXTURE_STEP_MS,
        });
        const consumed = await pythonConsume(CLIENT, { python, bootstrap, topic, timeoutMs: FIXTURE_STEP_MS });
        assertDenseOffsets(consumed, 'kafka-python (PyPI) consumer');
        assertSameRecords(consumed, input, 'kafka-python (PyPI) -> kafka-python (PyPI)');
        assertAcksMatch(input, acked, consumed, 'kafka-python (PyPI) acks');
      }),
  );

  test(
    'null and empty keys and values, binary bytes and headers survive byte for byte (acks=1, auto-created topic), read back by kafka-python and confluent-kafka (PyPI)',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'pypi-kafka-python-edge-cases';
        // kafka-python refuses a record with both key and value null, and null header values.
        const input = edgeCaseRecords({
          nullKeyAndValue: false,
          headers: true,
          nullHeaderValues: false,
          repeatedHeaderKeys: true,
        });
        const acked = await pythonProduce(CLIENT, {
          python,
          bootstrap,
          topic,
          records: input,
          acks: 1,
          timeoutMs: 30_000,
        });
        const consumed = await pythonConsume(CLIENT, { python, bootstrap, topic, timeoutMs: 30_000 });
        assertSameRecords(consumed, input, 'kafka-python (PyPI) -> kafka-python (PyPI)');
        assertAcksMatch(input, acked, consumed, 'kafka-python (PyPI) acks');
        const viaConfluent = await pythonConsume('confluent-kafka', { python, bootstrap, topic, timeoutMs: 30_000 });
        assertSameRecords(viaConfluent, input, 'kafka-python (PyPI) -> confluent-kafka (PyPI)');
      }),
  );

  test('keyed records over 3 partitions: each partition keeps its keys in produce order', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      const topic = 'pypi-kafka-python-3-partitions';
      const input = keyedFixtureRecords(20_000, 50);
      const acked = await pythonProduce(CLIENT, {
        python,
        bootstrap,
        topic,
        records: input,
        acks: -1,
        createPartitions: 3,
        timeoutMs: 45_000,
      });
      const consumed = await pythonConsume(CLIENT, { python, bootstrap, topic, timeoutMs: 45_000 });
      assertPartitionedOrder(input, consumed, 3, 'kafka-python (PyPI) 3 partitions');
      assertAcksMatch(input, acked, consumed, 'kafka-python (PyPI) acks');
    }),
  );

  // Every value repeats its line and a run of dashes, so even a lone record compresses
  // (kafka-python sends a batch uncompressed when the codec would not shrink it).
  const codecInput = keyedFixtureRecords(3_000, 37).map((r) => {
    const line = r.value!.toString('utf8');
    return record(r.key, `${line} | ${line} | ${line} | ${'-'.repeat(120)}`);
  });
  for (const codec of CODECS) {
    test(
      `compression_type=${codec}: ${codecInput.length} records stored as ${codec}, read back by kafka-python and confluent-kafka (PyPI)`,
      { timeout: TIMEOUT_MS },
      () =>
        withBrokerLog(broker, async () => {
          const topic = `pypi-kafka-python-codec-${codec}`;
          await pythonProduce(CLIENT, {
            python,
            bootstrap,
            topic,
            records: codecInput,
            acks: -1,
            createPartitions: 1,
            compression: codec,
            timeoutMs: 30_000,
          });
          assertStoredCodec(broker, topic, codec, codecInput.length);
          for (const reader of ['kafka-python', 'confluent-kafka'] as const) {
            const consumed = await pythonConsume(reader, {
              python,
              bootstrap,
              topic,
              partitions: [0],
              timeoutMs: 30_000,
            });
            assertDenseOffsets(consumed, `kafka-python (PyPI) ${codec} -> ${reader} (PyPI)`);
            assertSameRecords(consumed, codecInput, `kafka-python (PyPI) ${codec} -> ${reader} (PyPI)`);
          }
        }),
    );
  }

  test(
    "the idempotent producer (enable_idempotence=True, 3.x's default: InitProducerId, sequence-numbered batches) over 3 partitions",
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'pypi-kafka-python-idempotent';
        const input = keyedFixtureRecords(20_000, 50);
        const acked = await pythonProduce(CLIENT, {
          python,
          bootstrap,
          topic,
          records: input,
          acks: -1,
          createPartitions: 3,
          idempotent: true,
          timeoutMs: 30_000,
        });
        const consumed = await pythonConsume(CLIENT, { python, bootstrap, topic, timeoutMs: 30_000 });
        assertPartitionedOrder(input, consumed, 3, 'kafka-python (PyPI) idempotent');
        assertAcksMatch(input, acked, consumed, 'kafka-python (PyPI) idempotent acks');
      }),
  );
});

/** Every batch stored for `topic` partition 0 carries `codec`, and they hold `records` records in all. */
function assertStoredCodec(broker: BrokerProcess, topic: string, codec: CodecName, records: number): void {
  const batches = readStoredBatches(broker.dataDir, topic, 0);
  assert.ok(batches.length > 0, `${topic}: no batches in the segment files`);
  const wrong = batches.filter((b) => b.codec !== CODECS.indexOf(codec));
  assert.deepEqual(
    wrong.map((b) => ({ baseOffset: b.baseOffset, records: b.recordCount, codec: CODECS[b.codec] ?? b.codec })),
    [],
    `${topic}: every stored batch should be ${codec} (${batches.length} batches)`,
  );
  assert.equal(
    batches.reduce((n, b) => n + b.recordCount, 0),
    records,
    `${topic}: records in stored batches`,
  );
}
