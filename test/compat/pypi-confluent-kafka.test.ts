/**
 * confluent-kafka from PyPI, with the librdkafka its wheel bundles, against a real Skiff process:
 * the workloads of confluent-kafka.test.ts (Debian's 1.7.0 / librdkafka 2.0.2) and a producer per
 * codec, run under the virtual environment's interpreter (PYPI_PYTHON, made by
 * scripts/install-peers.sh install_python_venv) with the same scripts (test/compat/python/confluent_*.py).
 * The newest librdkafka negotiates the highest versions Skiff advertises (Produce v9, Fetch v12,
 * Metadata v12, ListOffsets v7, CreateTopics v7 as of this writing); its idempotent producer needs
 * InitProducerId, so that case is a test of its own, and so is a position with a leader epoch, which
 * it validates with OffsetForLeaderEpoch before fetching.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  makeTempDir,
  PYPI_PYTHON,
  pythonClientVersions,
  pythonConsume,
  pythonProduce,
  runPythonScript,
  withBrokerLog,
  type PythonClient,
  type PythonClientVersions,
} from './clients';
import { CODECS, readStoredBatches, type CodecName } from './ops';
import { assertDenseOffsets, assertSameRecords, readRecordFile, record } from './record-file';
import {
  assertAcksMatch,
  assertPartitionedOrder,
  edgeCaseRecords,
  fixtureRecords,
  keyedFixtureRecords,
} from './workloads';

const TIMEOUT_MS = 60_000;
/** The whole text fixture (264,173 records): a bound for a loaded CI machine, not the usual time. */
const FIXTURE_TIMEOUT_MS = 90_000;
const FIXTURE_STEP_MS = 40_000;
const python = PYPI_PYTHON;
const CLIENT: PythonClient = 'confluent-kafka';

describe('confluent-kafka from PyPI (bundled librdkafka) round trips through Skiff', () => {
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

  test("the virtual environment holds the PyPI releases, not Debian's", (t) => {
    t.diagnostic(
      `confluent-kafka ${versions.confluentKafka}, librdkafka ${versions.librdkafka}, kafka-python ${versions.kafkaPython}, Python ${versions.python}`,
    );
    const [major, minor] = versions.librdkafka.split('.').map(Number) as [number, number];
    assert.ok(
      major > 2 || (major === 2 && minor > 0),
      `librdkafka ${versions.librdkafka} under ${python}: want a release newer than Debian's 2.0.2`,
    );
    assert.ok(
      Number(versions.confluentKafka.split('.')[0]) >= 2,
      `confluent-kafka ${versions.confluentKafka} under ${python}: want 2.x or later`,
    );
  });

  test(
    'every line of the text fixture, keyed by line number, comes back byte-equal and in order (topic from AdminClient)',
    { timeout: FIXTURE_TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'pypi-confluent-text-fixture';
        const input = fixtureRecords((i) => `line-${i}`);
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
        assertDenseOffsets(consumed, 'confluent-kafka (PyPI) consumer');
        assertSameRecords(consumed, input, 'confluent-kafka (PyPI) -> confluent-kafka (PyPI)');
        assertAcksMatch(input, acked, consumed, 'confluent-kafka (PyPI) acks');
      }),
  );

  test(
    'null and empty keys and values, binary bytes, and headers with empty, null and repeated keys survive byte for byte, read back by confluent-kafka and kafka-python (PyPI)',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'pypi-confluent-edge-cases';
        const input = edgeCaseRecords({
          nullKeyAndValue: true,
          headers: true,
          nullHeaderValues: true,
          repeatedHeaderKeys: true,
        });
        const acked = await pythonProduce(CLIENT, {
          python,
          bootstrap,
          topic,
          records: input,
          acks: -1,
          createPartitions: 1,
          timeoutMs: 30_000,
        });
        const consumed = await pythonConsume(CLIENT, { python, bootstrap, topic, timeoutMs: 30_000 });
        assertSameRecords(consumed, input, 'confluent-kafka (PyPI) -> confluent-kafka (PyPI)');
        assertAcksMatch(input, acked, consumed, 'confluent-kafka (PyPI) acks');
        const viaKafkaPython = await pythonConsume('kafka-python', { python, bootstrap, topic, timeoutMs: 30_000 });
        assertSameRecords(viaKafkaPython, input, 'confluent-kafka (PyPI) -> kafka-python (PyPI)');
      }),
  );

  test('keyed records over 3 partitions: each partition keeps its keys in produce order', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      const topic = 'pypi-confluent-3-partitions';
      const input = keyedFixtureRecords(30_000, 50);
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
      assertPartitionedOrder(input, consumed, 3, 'confluent-kafka (PyPI) 3 partitions');
      assertAcksMatch(input, acked, consumed, 'confluent-kafka (PyPI) acks');
    }),
  );

  // Every value repeats its line and a run of dashes, so even a lone record compresses (librdkafka
  // sends a batch uncompressed when the codec would not shrink it); linger.ms=200 so batches hold many.
  const codecInput = keyedFixtureRecords(3_000, 37).map((r) => {
    const line = r.value!.toString('utf8');
    return record(r.key, `${line} | ${line} | ${line} | ${'-'.repeat(120)}`);
  });
  for (const codec of CODECS) {
    test(
      `compression.type=${codec}: ${codecInput.length} records stored as ${codec}, read back by confluent-kafka and kafka-python (PyPI)`,
      { timeout: TIMEOUT_MS },
      () =>
        withBrokerLog(broker, async () => {
          const topic = `pypi-confluent-codec-${codec}`;
          await pythonProduce(CLIENT, {
            python,
            bootstrap,
            topic,
            records: codecInput,
            acks: -1,
            createPartitions: 1,
            compression: codec,
            lingerMs: 200,
            timeoutMs: 30_000,
          });
          assertStoredCodec(broker, topic, codec, codecInput.length);
          for (const reader of ['confluent-kafka', 'kafka-python'] as const) {
            const consumed = await pythonConsume(reader, {
              python,
              bootstrap,
              topic,
              partitions: [0],
              timeoutMs: 30_000,
            });
            assertDenseOffsets(consumed, `confluent-kafka (PyPI) ${codec} -> ${reader} (PyPI)`);
            assertSameRecords(consumed, codecInput, `confluent-kafka (PyPI) ${codec} -> ${reader} (PyPI)`);
          }
        }),
    );
  }

  test(
    'assign at an offset with a leader epoch: librdkafka validates the position with OffsetForLeaderEpoch, then fetches from it',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'pypi-confluent-leader-epoch';
        const input = keyedFixtureRecords(1_000, 10);
        await pythonProduce(CLIENT, {
          python,
          bootstrap,
          topic,
          records: input,
          acks: -1,
          createPartitions: 1,
          timeoutMs: 30_000,
        });
        const dir = makeTempDir('confluent-epoch');
        try {
          const output = path.join(dir, 'output.krec');
          // --partitions: no Metadata before assign(), so the leader epoch arrives "updated from
          // metadata" afterwards, which is what makes librdkafka validate the assigned position.
          const result = await runPythonScript<{ consumed: number; epochValidations: number }>(
            'confluent_consume.py',
            [
              '--bootstrap',
              bootstrap,
              '--topic',
              topic,
              '--output',
              output,
              '--partitions',
              '0',
              '--start-offset',
              '500',
              '--leader-epoch',
              '0',
              '--timeout',
              '25',
            ],
            30_000,
            python,
          );
          const consumed = readRecordFile(output);
          assertDenseOffsets(consumed, 'confluent-kafka (PyPI) from offset 500, epoch 0', 500);
          assertSameRecords(consumed, input.slice(500), 'confluent-kafka (PyPI) from offset 500, epoch 0');
          assert.ok(
            result.epochValidations >= 1,
            `librdkafka logged no successful OffsetForLeaderEpoch validation of offset 500 at epoch 0 (${JSON.stringify(result)})`,
          );
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }),
  );

  test(
    'the idempotent producer (enable.idempotence=true: InitProducerId, sequence-numbered batches) over 3 partitions',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'pypi-confluent-idempotent';
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
        assertPartitionedOrder(input, consumed, 3, 'confluent-kafka (PyPI) idempotent');
        assertAcksMatch(input, acked, consumed, 'confluent-kafka (PyPI) idempotent acks');
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
