/**
 * kcat 1.7.1 (librdkafka 2.0.2) against a real Skiff process: producer `-P -l <file>` (one message
 * per line, `-K` splitting key and value) and consumer `-C -o beginning -e -p N` with a format that
 * carries lengths, so keys and values come back exactly and null is told from empty.
 * kcat has no admin API: it relies on auto-creation through Metadata (the default topic here); the
 * multi-partition topic is created with kafkajs's admin client.
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { createTopic, kcatConsume, kcatProduce, pythonConsume, withBrokerLog } from './clients';
import { assertDenseOffsets, assertSameRecords, record, type RecordHeader } from './record-file';
import { assertPartitionedOrder, fixtureRecords, keyedFixtureRecords } from './workloads';

const TIMEOUT_MS = 120_000;

/** kcat -l input: one `key:value` line per record (keys here never contain ':'). */
function keyedLines(records: ReadonlyArray<{ key: Buffer | null; value: Buffer | null }>): Buffer {
  return Buffer.concat(
    records.flatMap((r) => [r.key ?? Buffer.alloc(0), Buffer.from(':'), r.value ?? Buffer.alloc(0), Buffer.from('\n')]),
  );
}

describe('kcat 1.7.1 (librdkafka 2.0.2) round trips through Skiff', () => {
  let broker: BrokerProcess;
  let bootstrap: string;

  before(async () => {
    broker = await startBrokerProcess();
    bootstrap = `127.0.0.1:${broker.port}`;
  });
  after(async () => {
    await broker?.stop();
  });

  test(
    'every line of the text fixture, keyed by line number, comes back byte-equal and in order (auto-created topic)',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'kcat-text-fixture';
        const input = fixtureRecords((i) => String(i));
        // Keys are decimal, so the first ':' ends the key and empty lines still give a message.
        await kcatProduce({ bootstrap, topic, input: keyedLines(input), keyDelimiter: ':', timeoutMs: 60_000 });
        const consumed = await kcatConsume({ bootstrap, topic, partition: 0, timeoutMs: 60_000 });
        assertDenseOffsets(consumed, 'kcat consumer');
        assertSameRecords(consumed, input, 'kcat -> kcat');
      }),
  );

  test(
    '-Z turns an empty key or value into null; -H headers (empty and null values) survive, read back with confluent-kafka',
    { timeout: TIMEOUT_MS },
    () =>
      withBrokerLog(broker, async () => {
        const topic = 'kcat-nulls-headers';
        const headers: RecordHeader[] = [
          ['h1', Buffer.from('x')],
          ['h-empty', Buffer.alloc(0)],
          ['h-null', null],
        ];
        const lines = Buffer.from(':v1\nk2:\nk3:v3\nno-delimiter-line\n:\n');
        const expected = [
          record(null, 'v1', headers),
          record('k2', null, headers),
          record('k3', 'v3', headers),
          record(null, 'no-delimiter-line', headers),
          record(null, null, headers),
        ];
        await kcatProduce({
          bootstrap,
          topic,
          input: lines,
          keyDelimiter: ':',
          emptyAsNull: true,
          headers,
          timeoutMs: 30_000,
        });
        const viaConfluent = await pythonConsume('confluent-kafka', { bootstrap, topic, timeoutMs: 30_000 });
        assertDenseOffsets(viaConfluent, 'confluent-kafka consumer');
        assertSameRecords(viaConfluent, expected, 'kcat -> confluent-kafka');
        const viaKcat = await kcatConsume({ bootstrap, topic, partition: 0, timeoutMs: 30_000 });
        assertSameRecords(
          viaKcat,
          expected.map((r) => ({ ...r, headers: [] })),
          'kcat -> kcat (keys and values)',
        );
      }),
  );

  test('without -Z an empty key and an empty value stay empty, not null', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      const topic = 'kcat-empty';
      await kcatProduce({
        bootstrap,
        topic,
        input: Buffer.from(':v1\nk2:\n:\nplain\n'),
        keyDelimiter: ':',
        timeoutMs: 30_000,
      });
      const consumed = await kcatConsume({ bootstrap, topic, partition: 0, timeoutMs: 30_000 });
      assertSameRecords(
        consumed,
        [record('', 'v1'), record('k2', ''), record('', ''), record(null, 'plain')],
        'kcat -> kcat',
      );
    }),
  );

  test('keyed records over 3 partitions: each partition keeps its keys in produce order', { timeout: TIMEOUT_MS }, () =>
    withBrokerLog(broker, async () => {
      const topic = 'kcat-3-partitions';
      await createTopic(bootstrap, topic, 3);
      const input = keyedFixtureRecords(30_000, 50);
      await kcatProduce({ bootstrap, topic, input: keyedLines(input), keyDelimiter: ':', timeoutMs: 60_000 });
      const consumed = [];
      for (const partition of [0, 1, 2])
        consumed.push(...(await kcatConsume({ bootstrap, topic, partition, timeoutMs: 30_000 })));
      assert.equal(consumed.length, input.length);
      assertPartitionedOrder(input, consumed, 3, 'kcat 3 partitions');
    }),
  );
});
