/**
 * Crash recovery of a real Skiff process (DESIGN.md "Durability contract", invariants 1, 4 and 6):
 * records acknowledged with acks=all survive a SIGKILL; at restart a torn or corrupt last batch
 * is truncated (and logged) while everything before it is served; deleted offset indexes are
 * rebuilt. Segments are kept small (log.segment.bytes = 1 MiB) so every run spans several.
 * Producer: kafkajs (acks=-1); reader: kcat, which reports exact offsets.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { loadTextFixtureLines } from '../helpers/text-fixture';
import { createTopic, kcatConsume, withBrokerLog } from '../compat/clients';
import { assertDenseOffsets, assertSameRecords, record, type TestRecord } from '../compat/record-file';
import { flipByteInRecords, lastStoredBatch, listSegments, partitionDir, readBatches, tearTail } from './segment-files';

const TIMEOUT_MS = 90_000;
const OVERRIDES = { 'log.segment.bytes': '1048576' };
const TOPIC = 'recovery';
const RECORD_COUNT = 4_000;
/** Records per producer.send: kafkajs sends each call as one batch. */
const PER_SEND = 100;

/** RECORD_COUNT records of about 650 bytes (16 fixture lines each), keyed `r-<i>`: about 2.6 MB. */
function workload(): TestRecord[] {
  const lines = loadTextFixtureLines();
  return Array.from({ length: RECORD_COUNT }, (_, i) => record(`r-${i}`, lines.slice(i * 16, i * 16 + 16).join('\n')));
}

function kafkaFor(broker: BrokerProcess): Kafka {
  return new Kafka({
    clientId: 'skiff-recovery',
    brokers: [`127.0.0.1:${broker.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 2 },
  });
}

/** High watermark of partition 0 as ListOffsets (latest) reports it. */
async function latestOffset(broker: BrokerProcess): Promise<number> {
  const admin = kafkaFor(broker).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(TOPIC);
    assert.equal(offsets.length, 1);
    return Number(offsets[0]!.high);
  } finally {
    await admin.disconnect();
  }
}

/** Produces `records` PER_SEND at a time with acks=-1; asserts each acked base offset. */
async function produceAcked(broker: BrokerProcess, records: readonly TestRecord[], firstOffset = 0): Promise<void> {
  const producer = kafkaFor(broker).producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let i = 0; i < records.length; i += PER_SEND) {
      const messages = records.slice(i, i + PER_SEND).map((r) => ({ key: r.key, value: r.value }));
      const [ack] = await producer.send({ topic: TOPIC, acks: -1, messages });
      assert.ok(ack !== undefined, `send ${i / PER_SEND}: no partition result`);
      assert.equal(ack.errorCode, 0);
      assert.equal(
        Number(ack.baseOffset),
        firstOffset + i,
        `send ${i / PER_SEND} acked at base offset ${ack.baseOffset}`,
      );
    }
  } finally {
    await producer.disconnect();
  }
}

async function consumeAll(broker: BrokerProcess, offset?: number): Promise<TestRecord[]> {
  return kcatConsume({ bootstrap: `127.0.0.1:${broker.port}`, topic: TOPIC, partition: 0, offset, timeoutMs: 60_000 });
}

/** A broker with TOPIC holding the whole workload, acknowledged; and the workload. */
async function loadedBroker(): Promise<{ broker: BrokerProcess; input: TestRecord[]; dir: string }> {
  const broker = await startBrokerProcess({ overrides: OVERRIDES });
  const input = workload();
  await withBrokerLog(broker, async () => {
    await createTopic(`127.0.0.1:${broker.port}`, TOPIC, 1);
    await produceAcked(broker, input);
  });
  return { broker, input, dir: partitionDir(broker.dataDir, TOPIC, 0) };
}

/**
 * Asserts the broker logged a truncation of `logPath`: a line whose message (pino's `msg`, or the
 * whole line if it is not JSON) mentions truncation and that names the segment file.
 */
async function assertTruncationLogged(broker: BrokerProcess, logPath: string): Promise<void> {
  const name = path.basename(logPath);
  const found = (): string[] =>
    broker
      .logs()
      .split('\n')
      .filter((line) => {
        let message = line;
        try {
          message = String((JSON.parse(line) as { msg?: unknown }).msg);
        } catch {
          // not a JSON line: match the whole line
        }
        return /truncat/i.test(message) && line.includes(name);
      });
  // Worker threads log asynchronously: give the line a moment to reach the process's output.
  const deadline = Date.now() + 5_000;
  while (found().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(found().length > 0, `no log line reports truncating ${name}`);
}

function restart(previous: BrokerProcess): Promise<BrokerProcess> {
  return startBrokerProcess({ dataDir: previous.dataDir, overrides: OVERRIDES });
}

test(
  'SIGKILL right after acks=all: every acknowledged record is served after restart, in order, at dense offsets',
  { timeout: TIMEOUT_MS },
  async () => {
    const { broker, input, dir } = await loadedBroker();
    // One more batch in flight while the process dies: it is either wholly there or wholly gone.
    const extra = workload()
      .slice(0, PER_SEND)
      .map((r, i) => record(`extra-${i}`, r.value));
    const producer = kafkaFor(broker).producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
    await producer.connect();
    const inFlight = producer
      .send({ topic: TOPIC, acks: -1, messages: extra.map((r) => ({ key: r.key, value: r.value })) })
      .then(
        () => 'acked',
        () => 'failed',
      );
    await broker.kill9();
    const inFlightOutcome = await inFlight;
    await producer.disconnect().catch(() => undefined);
    assert.ok(listSegments(dir).length >= 3, `expected several segments, found ${listSegments(dir).length}`);

    const restarted = await restart(broker);
    try {
      await withBrokerLog(restarted, async () => {
        const consumed = await consumeAll(restarted);
        assertDenseOffsets(consumed, 'after restart');
        assertSameRecords(consumed.slice(0, input.length), input, 'acknowledged records after SIGKILL');
        const tail = consumed.slice(input.length);
        assert.ok(
          tail.length === 0 || tail.length === extra.length,
          `${tail.length} of the ${extra.length} in-flight records survived: a batch is all or nothing`,
        );
        if (inFlightOutcome === 'acked')
          assert.equal(tail.length, extra.length, 'the in-flight batch was acknowledged, so it must survive');
        assertSameRecords(tail, extra.slice(0, tail.length), 'in-flight batch');
        assert.equal(await latestOffset(restarted), consumed.length);
      });
    } finally {
      await restarted.stop();
    }
  },
);

test(
  'a torn last batch (SIGKILL, then the active segment loses its last bytes) is truncated at restart; the rest is served and the log continues',
  { timeout: TIMEOUT_MS },
  async () => {
    const { broker, input, dir } = await loadedBroker();
    await broker.kill9();
    const { segment, batch } = lastStoredBatch(dir);
    assert.equal(batch.lastOffset, input.length - 1, 'the last batch holds the last record');
    tearTail(segment.logPath, 7);

    const restarted = await restart(broker);
    try {
      await withBrokerLog(restarted, async () => {
        await assertTruncationLogged(restarted, segment.logPath);
        assert.equal(fs.statSync(segment.logPath).size, batch.position, 'the segment ends where the torn batch began');
        assert.equal(await latestOffset(restarted), batch.baseOffset, 'log end = records before the torn batch');
        const consumed = await consumeAll(restarted);
        assertDenseOffsets(consumed, 'after restart');
        assertSameRecords(consumed, input.slice(0, batch.baseOffset), 'records before the torn batch');

        const more = input.slice(0, PER_SEND).map((r, i) => record(`after-${i}`, r.value));
        await produceAcked(restarted, more, batch.baseOffset);
        const all = await consumeAll(restarted);
        assertDenseOffsets(all, 'after appending past the truncation');
        assertSameRecords(
          all,
          [...input.slice(0, batch.baseOffset), ...more],
          'records after appending past the truncation',
        );
      });
    } finally {
      await restarted.stop();
    }
  },
);

test(
  'a flipped byte inside the last batch (CRC-32C mismatch, after a clean stop) truncates that batch at restart; the rest is served',
  { timeout: TIMEOUT_MS },
  async () => {
    const { broker, input, dir } = await loadedBroker();
    assert.equal(await broker.stop(), 0, 'clean stop');
    const { segment, batch } = lastStoredBatch(dir);
    assert.equal(batch.lastOffset, input.length - 1, 'the last batch holds the last record');
    const sizeBefore = fs.statSync(segment.logPath).size;
    flipByteInRecords(segment.logPath, batch);
    assert.equal(fs.statSync(segment.logPath).size, sizeBefore);

    const restarted = await restart(broker);
    try {
      await withBrokerLog(restarted, async () => {
        await assertTruncationLogged(restarted, segment.logPath);
        assert.equal(await latestOffset(restarted), batch.baseOffset, 'log end = records before the corrupt batch');
        const consumed = await consumeAll(restarted);
        assertDenseOffsets(consumed, 'after restart');
        assertSameRecords(consumed, input.slice(0, batch.baseOffset), 'records before the corrupt batch');
        assert.deepEqual(
          readBatches(segment.logPath).at(-1)?.lastOffset,
          batch.baseOffset - 1,
          'no corrupt batch left in the segment',
        );
      });
    } finally {
      await restarted.stop();
    }
  },
);

test(
  'deleted .index files are rebuilt at restart; every record is served, also from an offset in the middle of an old segment',
  { timeout: TIMEOUT_MS },
  async () => {
    const { broker, input, dir } = await loadedBroker();
    assert.equal(await broker.stop(), 0, 'clean stop');
    const segments = listSegments(dir);
    assert.ok(segments.length >= 3, `expected several segments, found ${segments.length}`);
    for (const s of segments) {
      assert.ok(fs.existsSync(s.indexPath), `${s.indexPath} exists before the test deletes it`);
      fs.unlinkSync(s.indexPath);
    }

    const restarted = await restart(broker);
    try {
      await withBrokerLog(restarted, async () => {
        const consumed = await consumeAll(restarted);
        assertDenseOffsets(consumed, 'after restart');
        assertSameRecords(consumed, input, 'every record');
        // An offset inside the second segment, so the lookup goes through its rebuilt index.
        const middle = Math.floor((segments[1]!.baseOffset + segments[2]!.baseOffset) / 2);
        const fromMiddle = await consumeAll(restarted, middle);
        assertDenseOffsets(fromMiddle, `from offset ${middle}`, middle);
        assertSameRecords(fromMiddle, input.slice(middle), `records from offset ${middle}`);
        for (const s of listSegments(dir)) assert.ok(fs.existsSync(s.indexPath), `${s.indexPath} was rebuilt`);
        assert.equal(listSegments(dir).length, segments.length, 'no segment lost');
      });
    } finally {
      await restarted.stop();
    }
  },
);
