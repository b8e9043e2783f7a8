/**
 * Apache Kafka's Java client (kafka-clients 4.x, the jars scripts/kafka-fixture.sh fetches into
 * .cache/kafka/<version>/lib) against a real Skiff process. test/java/SkiffJavaClient.java is
 * compiled with javac by java-client.ts (cached in .cache/java-classes/<hash of source and jar>)
 * and run once per scenario group, chaining its commands in one JVM:
 *
 * - KafkaProducer with default settings (idempotent: InitProducerId, acks=all) sends every line
 *   of the text fixture, a fifth per compression.type (none, gzip, snappy, lz4, zstd), with keys,
 *   headers (null values, repeated keys), null values and the edge cases of workloads.ts, plus
 *   keyed records over 3 partitions; a KafkaConsumer without group.id (assign + seekToBeginning)
 *   reads every record back byte-equal and in order; the segment files hold each batch with the
 *   producer's codec, producer id and contiguous sequence numbers.
 * - Idempotence in action: max.in.flight 5, retries, many small batches; once cleanly and once
 *   while the producer's broker sockets are half-closed under in-flight Produce requests (so the
 *   client retries batches Skiff already appended): every record lands exactly once.
 * - AdminClient: describeCluster, createTopics (configs, errors), listTopics, describeTopics,
 *   describeConfigs, incrementalAlterConfigs, createPartitions, listOffsets (earliest, latest,
 *   maxTimestamp, forTimestamp), deleteRecords, describeLogDirs, electLeaders, deleteTopics; each value as the
 *   Kafka 4.x fixture answers the same calls (checked by hand against scripts/kafka-fixture.sh).
 * - Keyless records on compacted topics are refused, as Kafka does.
 * - Consumer groups (second describe block, against the group target of group-target.ts: Skiff,
 *   or Kafka 4.4.0 with SKIFF_GROUP_TARGET=kafka): subscribe, poll, commitSync, rebalances across
 *   two consumers with the default (range, eager) and the cooperative-sticky assignor, committed
 *   offsets across a SIGKILL restart.
 *
 * The jars: $SKIFF_JAVA_LIB if set, else `bash scripts/kafka-fixture.sh lib` (fetches them with
 * Maven when missing). Java's own log lines (WARN and up) go to stderr and are checked too.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { loadTextFixtureLines } from '../helpers/text-fixture';
import { makeTempDir, repoRoot, runProcess, withBrokerLog } from './clients';
import {
  compileJavaClient,
  describeJavaRun,
  JAVA_LOG_LINE,
  javaArgs,
  readJavaAcks,
  resolveJavaLib,
} from './java-client';
import { CODECS, readStoredBatches, type CodecName, type StoredBatch } from './ops';
import {
  assertDenseOffsets,
  assertSameRecords,
  readRecordFile,
  record,
  writeRecordFile,
  type RecordHeader,
  type TestRecord,
} from './record-file';
import { assertAcksMatch, assertPartitionedOrder, edgeCaseRecords, keyedFixtureRecords } from './workloads';
import { consumedBy, killAllMembers, ProcessMember, waitUntil, type GroupMember } from './group-members';
import {
  checkSplitAndTakeover,
  kafkajsFetchOffsets,
  NumberedRecords,
  PARTITIONS,
  runSplitAndTakeover,
  runStaticRejoin,
} from './group-scenarios';
import { GROUP_TARGET, startGroupTarget, type GroupTarget } from './group-target';

const ROOT = repoRoot();

/** One JSON line SkiffJavaClient printed. */
type JavaLine = Record<string, any>;

interface JavaRun {
  lines: JavaLine[];
  /** The Java client's own log lines (WARN and up) from stderr. */
  logLines: string[];
  stderr: string;
  elapsedMs: number;
}

// ------------------------------------------------------------------------------------------------
// Inputs and checks

/**
 * The text fixture as Java-produced records: a key on every third line, a `line` header on every
 * seventh, on every 49th also a null header value, an empty one and a repeated key; every 1000th
 * value is null (with or without a key).
 */
function javaFixtureRecords(): TestRecord[] {
  return loadTextFixtureLines().map((line, i) => {
    const headers: RecordHeader[] = [];
    if (i % 7 === 0) headers.push(['line', Buffer.from(String(i))]);
    if (i % 49 === 0)
      headers.push(
        ['null-value', null],
        ['dup', Buffer.from('a')],
        ['empty', Buffer.alloc(0)],
        ['dup', Buffer.from('b')],
      );
    return record(i % 3 === 0 ? `k${i % 101}` : null, i % 1000 === 999 ? null : line, headers);
  });
}

interface IdempotentBatch extends StoredBatch {
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
}

/** Stored batches with their v2 producer fields (producerId @43, producerEpoch @51, baseSequence @53). */
function readIdempotentBatches(dataDir: string, topic: string, partition: number): IdempotentBatch[] {
  const files = new Map<string, Buffer>();
  return readStoredBatches(dataDir, topic, partition).map((b) => {
    let buf = files.get(b.file);
    if (buf === undefined) {
      buf = fs.readFileSync(path.join(dataDir, `${topic}-${partition}`, b.file));
      files.set(b.file, buf);
    }
    return {
      ...b,
      producerId: Number(buf.readBigInt64BE(b.position + 43)),
      producerEpoch: buf.readInt16BE(b.position + 51),
      baseSequence: buf.readInt32BE(b.position + 53),
    };
  });
}

/**
 * One idempotent producer wrote this partition exactly once: every batch is magic 2 with `codec`,
 * one producer id (>= 0) and epoch, sequence numbers contiguous from 0, offsets dense from 0 and
 * `records` records in all (a retried batch stored twice breaks the sequence or the count).
 */
function assertExactlyOnceBatches(
  batches: readonly IdempotentBatch[],
  codec: CodecName,
  records: number,
  what: string,
): void {
  assert.ok(batches.length > 0, `${what}: no batches in the segment files`);
  const first = batches[0]!;
  assert.ok(
    first.producerId >= 0,
    `${what}: batch at offset ${first.baseOffset} has producerId ${first.producerId}: the default Java producer is idempotent`,
  );
  let nextOffset = 0;
  let nextSequence = 0;
  for (const b of batches) {
    const at = `${what}: batch at offset ${b.baseOffset} (${b.recordCount} records)`;
    assert.equal(b.magic, 2, `${at}: magic`);
    assert.equal(CODECS[b.codec] ?? b.codec, codec, `${at}: codec`);
    assert.deepEqual(
      [b.producerId, b.producerEpoch],
      [first.producerId, first.producerEpoch],
      `${at}: producer id and epoch`,
    );
    assert.equal(b.baseOffset, nextOffset, `${at}: base offset`);
    assert.equal(b.baseSequence, nextSequence, `${at}: base sequence (a duplicate or a gap)`);
    assert.equal(b.lastOffset - b.baseOffset + 1, b.recordCount, `${at}: last offset delta`);
    nextOffset = b.lastOffset + 1;
    nextSequence += b.recordCount;
  }
  assert.equal(nextOffset, records, `${what}: records stored`);
}

/** Skiff's `closing connection` log lines (an unknown API key, a bad frame) in `logs`. */
function closedConnections(logs: string): string[] {
  return logs.split('\n').filter((l) => l.includes('"closing connection'));
}

// ------------------------------------------------------------------------------------------------

describe('Java kafka-clients 4.x against Skiff', () => {
  let broker: BrokerProcess;
  let bootstrap: string;
  let lib: string;
  let classes: string;
  let work: string;
  /** The AdminClient run's step results (for the cases Skiff does not pass yet). */
  let adminSteps: Map<string, JavaLine> | undefined;

  before(async () => {
    lib = await resolveJavaLib();
    classes = await compileJavaClient(lib);
    broker = await startBrokerProcess();
    bootstrap = `127.0.0.1:${broker.port}`;
    work = makeTempDir('java');
  });
  after(async () => {
    await broker?.stop();
    if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
  });

  /** Runs one JVM with `commands` chained ("::"); fails with its output unless it exits 0. */
  async function runJava(
    what: string,
    commands: string[][],
    timeoutMs: number,
    opts: { bulk?: boolean } = {},
  ): Promise<JavaRun> {
    // Short runs: C1 only (faster start); bulk runs keep C2 for the codecs and serializers.
    const args = javaArgs(lib, classes, { timeoutMs: Math.max(10_000, timeoutMs - 15_000), bulk: opts.bulk === true });
    commands.forEach((c, i) => args.push(...(i > 0 ? ['::'] : []), c[0]!, '--bootstrap', bootstrap, ...c.slice(1)));
    const logsBefore = broker.logs().length;
    const r = await runProcess('java', args, { timeoutMs, cwd: ROOT });
    const closed = closedConnections(broker.logs().slice(logsBefore));
    if (r.code !== 0 || r.timedOut) {
      throw new Error(
        `${describeJavaRun(`java ${what}`, r)}${closed.length > 0 ? `\n--- Skiff closed connections ---\n${closed.join('\n')}` : ''}`,
      );
    }
    assert.deepEqual(closed, [], `${what}: Skiff closed Java client connections`);
    const lines = r.stdout
      .toString('utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as JavaLine);
    return {
      lines,
      logLines: r.stderr.split('\n').filter((l) => JAVA_LOG_LINE.test(l)),
      stderr: r.stderr,
      elapsedMs: r.elapsedMs,
    };
  }

  function produced(run: JavaRun, topic: string): JavaLine {
    const line = run.lines.find((l) => l.cmd === 'produce' && l.topic === topic);
    assert.ok(line !== undefined, `no produce summary for ${topic}: ${JSON.stringify(run.lines)}`);
    return line;
  }

  test(
    'default producer (idempotent, acks=all) sends the text fixture with keys, headers and nulls under every compression.type; a consumer by assignment reads it back exactly',
    { timeout: 240_000 },
    (t) =>
      withBrokerLog(broker, async () => {
        const fixture = javaFixtureRecords();
        const edge = edgeCaseRecords({
          nullKeyAndValue: true,
          headers: true,
          nullHeaderValues: true,
          repeatedHeaderKeys: true,
        });
        // The fixture once, a fifth per compression.type (none, the default, first), each fifth
        // followed by the edge cases; one producer per topic, all at once.
        const fifth = Math.ceil(fixture.length / CODECS.length);
        const inputs = new Map<string, { codec: CodecName; records: TestRecord[] }>(
          CODECS.map((codec, q) => [
            `java-${codec}`,
            { codec, records: [...fixture.slice(q * fifth, (q + 1) * fifth), ...edge] },
          ]),
        );
        const keyed = keyedFixtureRecords(30_000, 97);
        const targets: string[] = [];
        for (const [topic, { codec, records }] of inputs) {
          const file = path.join(work, `${topic}.input.krec`);
          writeRecordFile(file, records);
          targets.push('--target', `${topic}=${codec}@${file}`);
        }
        writeRecordFile(path.join(work, 'java-keyed.input.krec'), keyed);
        targets.push('--target', `java-keyed=zstd@${path.join(work, 'java-keyed.input.krec')}`);
        const topics = [...inputs.keys(), 'java-keyed'];

        const run = await runJava(
          'produce and consume',
          [
            [
              'create-topics',
              ...[...inputs.keys()].flatMap((name) => ['--topic', `${name}:1`]),
              '--topic',
              'java-keyed:3',
            ],
            ['produce', '--out-dir', work, ...targets],
            ['consume', '--out-dir', work, ...topics.flatMap((name) => ['--topic', name])],
          ],
          180_000,
          { bulk: true },
        );
        assert.deepEqual(run.logLines, [], 'the Java clients logged warnings or errors');

        for (const [topic, { codec, records }] of [
          ...inputs,
          ['java-keyed', { codec: 'zstd' as CodecName, records: keyed }] as const,
        ]) {
          const summary = produced(run, topic);
          assert.equal(summary.errors, 0, `${topic}: send failed: ${summary.firstError}`);
          assert.equal(summary.recordSendTotal, records.length, `${topic}: records sent`);
          assert.equal(summary.recordRetryTotal, 0, `${topic}: retries without any fault`);
          const acks = readJavaAcks(path.join(work, `${topic}.acks`));
          const consumed = readRecordFile(path.join(work, `${topic}.krec`));
          if (topic === 'java-keyed') {
            assertPartitionedOrder(records, consumed, 3, `${topic} (3 partitions, default partitioner)`);
            for (const p of [0, 1, 2]) {
              const stored = readIdempotentBatches(broker.dataDir, topic, p);
              assertExactlyOnceBatches(
                stored,
                codec,
                consumed.filter((r) => r.partition === p).length,
                `${topic}-${p}`,
              );
            }
          } else {
            assertDenseOffsets(consumed, `${topic} consumer`);
            assertSameRecords(consumed, records, `Java producer (${codec}) -> Java consumer, ${topic}`);
            assertExactlyOnceBatches(
              readIdempotentBatches(broker.dataDir, topic, 0),
              codec,
              records.length,
              `${topic} segment files`,
            );
          }
          assertAcksMatch(records, acks, consumed, `${topic} acks`);
          const consumeSummary = run.lines.find((l) => l.cmd === 'consume' && l.topic === topic);
          assert.equal(consumeSummary?.records, records.length, `${topic}: records consumed`);
        }
        const versions = produced(run, 'java-none').usableVersions as Record<string, number>;
        t.diagnostic(`Java ${run.elapsedMs} ms; versions used: ${JSON.stringify(versions)}`);
      }),
  );

  test(
    'idempotent producer, max.in.flight 5 and retries, many small batches: exactly once, also when connections drop under in-flight Produce requests',
    { timeout: 120_000 },
    (t) =>
      withBrokerLog(broker, async () => {
        const count = 2_000;
        const input: TestRecord[] = [];
        for (let i = 0; i < count; i++)
          input.push({ ...record(null, `idem-${String(i).padStart(6, '0')}-${'x'.repeat(40)}`), partition: 0 });
        const file = path.join(work, 'idem.input.krec');
        writeRecordFile(file, input);
        const clean = 'java-idem-clean';
        const faults = 'java-idem-faults';
        const run = await runJava(
          'idempotence',
          [
            ['create-topics', '--topic', `${clean}:1`, '--topic', `${faults}:1`],
            [
              'produce',
              '--input',
              file,
              '--out-dir',
              work,
              '--target',
              `${clean}=none`,
              '--target',
              `${faults}=none`,
              '--config',
              'max.in.flight.requests.per.connection=5',
              '--config',
              'retries=2147483647',
              '--config',
              'linger.ms=0',
              '--config',
              'batch.size=512',
              // Half-close the faulty producer's socket while Produce requests are in flight, 8 times.
              '--disconnect-target',
              faults,
              '--disconnect-every-ms',
              '40',
              '--max-disconnects',
              '8',
            ],
            ['consume', '--out-dir', work, '--topic', clean, '--topic', faults],
          ],
          100_000,
        );

        for (const topic of [clean, faults]) {
          const summary = produced(run, topic);
          assert.equal(summary.errors, 0, `${topic}: send failed: ${summary.firstError}`);
          assert.equal(summary.injectorError, null, `${topic}: disconnect injector`);
          const acks = readJavaAcks(path.join(work, `${topic}.acks`));
          acks.forEach(([p, o], i) => {
            if (p !== 0 || o !== i) assert.fail(`${topic}: record ${i} acknowledged at ${p}:${o}, want 0:${i}`);
          });
          const consumed = readRecordFile(path.join(work, `${topic}.krec`));
          assertDenseOffsets(consumed, `${topic} consumer`);
          assertSameRecords(consumed, input, `${topic}: Java producer -> Java consumer`);
          const batches = readIdempotentBatches(broker.dataDir, topic, 0);
          assertExactlyOnceBatches(batches, 'none', count, `${topic} segment files`);
          assert.ok(batches.length >= 150, `${topic}: ${batches.length} batches; want many small ones`);
          t.diagnostic(
            `${topic}: ${batches.length} batches, ${summary.disconnects} disconnects, ${summary.recordRetryTotal} records retried`,
          );
        }
        assert.equal(produced(run, clean).recordRetryTotal, 0, `${clean}: retries without any fault`);
        const faulty = produced(run, faults);
        assert.ok(faulty.disconnects >= 1, `${faults}: no disconnect was injected`);
        assert.ok(
          faulty.recordRetryTotal > 0,
          `${faults}: ${faulty.disconnects} disconnects but no record was retried`,
        );
        // The faulty run's warnings are the retries themselves; anything else is a finding.
        const unexpected = run.logLines.filter(
          (l) =>
            !/Got error produce response .* NETWORK_EXCEPTION|Received invalid metadata error in produce request .*NetworkException|Bootstrap broker .* disconnected|Node \d+ disconnected|Connection to node \d+ .* could not be established/.test(
              l,
            ),
        );
        assert.deepEqual(unexpected, [], 'unexpected Java client warnings');
      }),
  );

  test('AdminClient: cluster, topics, configs, partitions, offsets, records and log dirs', { timeout: 120_000 }, () =>
    withBrokerLog(broker, async () => {
      const prefix = 'java-admin';
      const a = `${prefix}-a`;
      const b = `${prefix}-b`;
      const base = Math.floor(Date.now() / 1000) * 1000 - 3_600_000; // an hour ago: within message.timestamp.before.max.ms
      const run = await runJava('admin', [['admin', '--prefix', prefix, '--base-timestamp', String(base)]], 100_000);
      const steps = new Map<string, JavaLine>();
      for (const l of run.lines) if (l.cmd === 'admin') steps.set(l.step, l.result);
      adminSteps = steps;
      const ok = (step: string): any => {
        const r = steps.get(step);
        assert.ok(r !== undefined, `no result for step ${step}`);
        assert.ok(!('error' in r), `${step} failed: ${r.error}: ${r.message}`);
        return r.ok;
      };
      const failsWith = (step: string, error: string, message?: RegExp): void => {
        const r = steps.get(step);
        assert.ok(r !== undefined, `no result for step ${step}`);
        assert.equal(r.error, error, `${step}: ${JSON.stringify(r)}`);
        if (message !== undefined) assert.match(r.message, message, step);
      };
      const at = (seconds: number): number => base + seconds * 1000;

      const cluster = ok('describeCluster');
      assert.match(cluster.clusterId, /^[A-Za-z0-9_-]{22}$/, 'cluster id');
      assert.equal(cluster.controller, 0, 'controller');
      assert.deepEqual(cluster.nodes, [{ id: 0, host: '127.0.0.1', port: broker.port, rack: null }], 'nodes');

      const created = ok('createTopics');
      const overrides = {
        'cleanup.policy': 'delete',
        'max.message.bytes': '200000',
        'retention.ms': '3600000',
        'segment.bytes': '1048576',
      };
      assert.equal(created[a].partitions, 3);
      assert.equal(created[a].replicationFactor, 1);
      assert.deepEqual(
        Object.fromEntries(Object.entries(created[a].configs).map(([k, v]: [string, any]) => [k, [v.value, v.source]])),
        Object.fromEntries(Object.entries(overrides).map(([k, v]) => [k, [v, 'DYNAMIC_TOPIC_CONFIG']])),
        `${a}: configs in the CreateTopics response (non-default)`,
      );
      assert.equal(created[b].partitions, 1, `${b}: num.partitions default`);
      assert.equal(created[b].replicationFactor, 1, `${b}: default.replication.factor`);
      assert.deepEqual(created[b].configs, {}, `${b}: no overrides`);
      for (const t of [a, b]) assert.match(created[t].topicId, /^[A-Za-z0-9_-]{22}$/, `${t}: topic id`);
      assert.notEqual(created[a].topicId, created[b].topicId);
      failsWith('createTopics existing', 'TopicExistsException', /already exists/);
      failsWith('createTopics bad name', 'InvalidTopicException');
      failsWith('createTopics bad config', 'InvalidConfigurationException', /retention\.ms/);
      assert.equal(ok('createTopics validateOnly'), false, 'validateOnly created the topic');

      assert.deepEqual(
        ok('listTopics').filter((t: string) => t.startsWith(prefix)),
        [a, b],
        'listTopics',
      );

      const partitions = (n: number): unknown[] =>
        Array.from({ length: n }, (_, partition) => ({ partition, leader: 0, replicas: [0], isr: [0] }));
      const described = ok('describeTopics');
      assert.deepEqual(described[a], {
        name: a,
        internal: false,
        topicId: created[a].topicId,
        partitions: partitions(3),
      });
      assert.deepEqual(described[b], {
        name: b,
        internal: false,
        topicId: created[b].topicId,
        partitions: partitions(1),
      });
      failsWith('describeTopics unknown', 'UnknownTopicOrPartitionException');

      const entry = (configs: any, name: string): [string, string, string] => {
        assert.ok(configs[name] !== undefined, `no config ${name}`);
        return [configs[name].value, configs[name].source, configs[name].type];
      };
      const topicConfigs = ok('describeConfigs topic');
      assert.deepEqual(entry(topicConfigs, 'retention.ms'), ['3600000', 'DYNAMIC_TOPIC_CONFIG', 'LONG']);
      assert.deepEqual(entry(topicConfigs, 'max.message.bytes'), ['200000', 'DYNAMIC_TOPIC_CONFIG', 'INT']);
      assert.deepEqual(entry(topicConfigs, 'cleanup.policy'), ['delete', 'DYNAMIC_TOPIC_CONFIG', 'LIST']);
      assert.deepEqual(entry(topicConfigs, 'segment.bytes'), ['1048576', 'DYNAMIC_TOPIC_CONFIG', 'INT']);
      assert.deepEqual(entry(topicConfigs, 'compression.type'), ['producer', 'DEFAULT_CONFIG', 'STRING']);
      assert.deepEqual(entry(topicConfigs, 'message.timestamp.type'), ['CreateTime', 'DEFAULT_CONFIG', 'STRING']);
      assert.deepEqual(entry(topicConfigs, 'min.insync.replicas'), ['1', 'DEFAULT_CONFIG', 'INT']);
      for (const [name, e] of Object.entries(topicConfigs) as Array<[string, any]>) {
        assert.equal(e.readOnly, false, `topic config ${name} readOnly`);
        assert.equal(e.sensitive, false, `topic config ${name} sensitive`);
      }
      const brokerConfigs = ok('describeConfigs broker');
      assert.deepEqual(entry(brokerConfigs, 'message.max.bytes').slice(0, 2), ['1048588', 'DEFAULT_CONFIG']);
      assert.deepEqual(entry(brokerConfigs, 'num.partitions').slice(0, 2), ['1', 'DEFAULT_CONFIG']);
      assert.deepEqual(entry(brokerConfigs, 'log.dirs').slice(0, 2), [broker.dataDir, 'STATIC_BROKER_CONFIG']);

      const altered = ok('incrementalAlterConfigs');
      assert.deepEqual(entry(altered, 'retention.ms'), ['7200000', 'DYNAMIC_TOPIC_CONFIG', 'LONG'], 'SET');
      assert.deepEqual(
        entry(altered, 'max.message.bytes'),
        ['1048588', 'DEFAULT_CONFIG', 'INT'],
        'DELETE: back to the broker default',
      );
      assert.deepEqual(entry(altered, 'cleanup.policy'), ['delete,compact', 'DYNAMIC_TOPIC_CONFIG', 'LIST'], 'APPEND');
      assert.deepEqual(entry(altered, 'flush.messages'), ['1000', 'DYNAMIC_TOPIC_CONFIG', 'LONG'], 'SET');
      assert.deepEqual(entry(altered, 'segment.bytes'), ['1048576', 'DYNAMIC_TOPIC_CONFIG', 'INT'], 'untouched');
      assert.deepEqual(
        entry(ok('incrementalAlterConfigs subtract'), 'cleanup.policy'),
        ['delete', 'DYNAMIC_TOPIC_CONFIG', 'LIST'],
        'SUBTRACT',
      );
      failsWith('incrementalAlterConfigs invalid', 'InvalidConfigurationException', /retention\.ms/);

      assert.deepEqual(ok('createPartitions'), {
        name: a,
        internal: false,
        topicId: created[a].topicId,
        partitions: partitions(5),
      });
      failsWith('createPartitions decrease', 'InvalidPartitionsException');

      assert.deepEqual(ok('produce timestamps'), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const offset = (o: number, timestamp = -1, leaderEpoch: number | null = 0): unknown => ({
        offset: o,
        timestamp,
        leaderEpoch,
      });
      const none = offset(-1, -1, null);
      assert.deepEqual(ok('listOffsets earliest'), {
        [`${a}-0`]: offset(0),
        [`${a}-1`]: offset(0),
        [`${a}-4`]: offset(0),
      });
      assert.deepEqual(ok('listOffsets latest'), {
        [`${a}-0`]: offset(10),
        [`${a}-1`]: offset(1),
        [`${a}-4`]: offset(0),
      });
      assert.deepEqual(
        ok('listOffsets maxTimestamp'),
        { [`${a}-0`]: offset(6, at(9)), [`${a}-1`]: offset(0, at(0)), [`${a}-4`]: none },
        'MAX_TIMESTAMP: the record with the largest timestamp (offset 6), not the last one',
      );
      // CreateTime timestamps by offset: 0 1 2 3 4 5 9 6 7 8 (seconds after base).
      assert.deepEqual(
        ok('listOffsets forTimestamp'),
        {
          '-1000': offset(0, at(0)),
          '0': offset(0, at(0)),
          '2500': offset(3, at(3)),
          '5500': offset(6, at(9)),
          '8000': offset(6, at(9)),
          '9000': offset(6, at(9)),
          '9001': none,
          'empty partition': none,
        },
        'the first offset whose timestamp is at or after the target',
      );

      assert.deepEqual(ok('deleteRecords'), {
        lowWatermark: 4,
        earliest: offset(4),
        latest: offset(10),
        forTimestamp0: offset(4, at(4)),
      });
      failsWith('deleteRecords past high watermark', 'OffsetOutOfRangeException');
      assert.deepEqual(
        ok('consume after deleteRecords'),
        [4, 5, 6, 7, 8, 9].map((o) => ({
          offset: o,
          timestamp: [0, 1, 2, 3, 4, 5, 9, 6, 7, 8][o]! * 1000,
          timestampType: 'CreateTime',
          value: `ts-${o}`,
        })),
      );

      const logDirs = ok('describeLogDirs');
      assert.deepEqual(Object.keys(logDirs), ['0'], 'brokers');
      assert.deepEqual(Object.keys(logDirs['0']), [broker.dataDir], 'log dirs of broker 0');
      const dir = logDirs['0'][broker.dataDir];
      assert.equal(dir.error, null);
      assert.ok(
        dir.totalBytes > 0 && dir.usableBytes > 0 && dir.usableBytes <= dir.totalBytes,
        `totalBytes ${dir.totalBytes}, usableBytes ${dir.usableBytes}`,
      );
      assert.deepEqual(Object.keys(dir.replicas), [`${a}-0`, `${a}-1`, `${a}-2`, `${a}-3`, `${a}-4`, `${b}-0`]);
      for (const [tp, info] of Object.entries(dir.replicas) as Array<[string, any]>) {
        const written = tp === `${a}-0` || tp === `${a}-1`;
        assert.ok(written ? info.size > 0 : info.size === 0, `${tp}: size ${info.size}`);
        assert.equal(info.offsetLag, 0, `${tp}: offsetLag`);
        assert.equal(info.isFuture, false, `${tp}: isFuture`);
      }

      assert.equal(ok('compacted topic'), null, 'cleanup.policy=compact on a topic');
      assert.equal(typeof ok('compacted topic keyed record'), 'number', 'a keyed record on a compacted topic');

      // ElectLeaders (Kafka 4.4 answers the same: each partition already led by its preferred replica).
      assert.deepEqual(
        ok('electLeaders preferred'),
        {
          [`${a}-0`]: 'ElectionNotNeededException',
          [`${a}-1`]: 'ElectionNotNeededException',
          [`${a}-9`]: 'UnknownTopicOrPartitionException',
          [`${prefix}-missing-0`]: 'UnknownTopicOrPartitionException',
        },
        'electLeaders PREFERRED',
      );
      assert.deepEqual(
        ok('electLeaders unclean'),
        { [`${a}-0`]: 'ElectionNotNeededException' },
        'electLeaders UNCLEAN',
      );
      assert.deepEqual(ok('electLeaders all'), {}, 'electLeaders PREFERRED on all partitions: none needs an election');

      assert.deepEqual(
        ok('deleteTopics').filter((t: string) => t.startsWith(prefix)),
        [],
        'listTopics after deleteTopics',
      );
      failsWith('describeTopics deleted', 'UnknownTopicOrPartitionException');
      failsWith('deleteTopics unknown', 'UnknownTopicOrPartitionException');

      // The Java admin client logs DeleteRecords' OFFSET_OUT_OF_RANGE at ERROR itself (against Kafka too).
      const unexpected = run.logLines.filter(
        (l) =>
          !/DeleteRecords request for topic partition .*-0 failed due to an unexpected error OFFSET_OUT_OF_RANGE/.test(
            l,
          ),
      );
      assert.deepEqual(unexpected, [], 'unexpected Java client warnings');
    }),
  );

  // Kafka refuses a record without a key on a cleanup.policy=compact topic (INVALID_RECORD,
  // "Compacted topic cannot accept message without key in topic partition ..."); so does Skiff.
  // Checked from the AdminClient run above.
  test('a keyless record on a compacted topic is refused with INVALID_RECORD (as Kafka does)', () => {
    assert.ok(adminSteps !== undefined, 'the AdminClient test did not get that far');
    const keyless = adminSteps.get('compacted topic keyless record');
    assert.equal(
      keyless?.error,
      'InvalidRecordException',
      `keyless record on a compacted topic: ${JSON.stringify(keyless)}`,
    );
    assert.deepEqual(adminSteps.get('compacted topic keyed record'), { ok: 0 }, 'the keyed record after it');
  });
});

// ------------------------------------------------------------------------------------------------
// Consumer groups (classic protocol: group.protocol=classic is the default in kafka-clients 4.x)

/**
 * KafkaConsumer with group.id against the group target (group-target.ts: Skiff, or the Kafka 4.4.0
 * fixture with SKIFF_GROUP_TARGET=kafka): the split-and-takeover scenario of group-scenarios.ts
 * with the default assignors (range first, so the eager protocol) and with CooperativeStickyAssignor
 * (incremental: the broker passes its assignments through opaque), then commitSync with metadata
 * surviving a SIGKILL restart, read back by KafkaConsumer.committed, AdminClient and kafkajs, and a
 * new member resuming at the committed offsets. group.initial.rebalance.delay.ms=0.
 */
describe(`Java kafka-clients 4.x consumer groups, classic protocol (target: ${GROUP_TARGET})`, () => {
  const CASE_TIMEOUT_MS = 120_000;
  const WAIT_MS = 40_000;
  let target: GroupTarget;
  let lib: string;
  let classes: string;

  before(async () => {
    lib = await resolveJavaLib();
    classes = await compileJavaClient(lib);
    target = await startGroupTarget({ initialRebalanceDelayMs: 0 });
  });
  after(async () => {
    killAllMembers();
    await target?.stop();
  });

  function jvm(timeoutMs: number): string[] {
    return javaArgs(lib, classes, { timeoutMs, maxHeap: '256m' });
  }

  function javaMember(
    name: string,
    group: string,
    topic: string,
    assignor?: string,
    configs: Record<string, string> = {},
  ): ProcessMember {
    return new ProcessMember(
      name,
      'java',
      [
        ...jvm(CASE_TIMEOUT_MS),
        'group-member',
        '--bootstrap',
        target.bootstrap,
        '--group',
        group,
        '--topic',
        topic,
        ...(assignor === undefined ? [] : ['--assignor', assignor]),
        ...Object.entries(configs).flatMap(([k, v]) => ['--config', `${k}=${v}`]),
      ],
      { cwd: ROOT, timeoutMs: CASE_TIMEOUT_MS },
    );
  }

  /** Runs one Java command against the target; its JSON line with `cmd`. */
  async function javaCommand(command: string, args: string[]): Promise<JavaLine> {
    const r = await runProcess('java', [...jvm(WAIT_MS), command, '--bootstrap', target.bootstrap, ...args], {
      timeoutMs: WAIT_MS + 15_000,
      cwd: ROOT,
    });
    if (r.code !== 0 || r.timedOut) throw new Error(describeJavaRun(`java ${command} ${args.join(' ')}`, r));
    const line = r.stdout
      .toString('utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as JavaLine)
      .find((l) => l.cmd === command);
    assert.ok(line !== undefined, `java ${command} printed no result\n${r.stderr.slice(-3000)}`);
    return line;
  }

  const revokedBefore = (m: GroupMember, until: number): number[][] =>
    m.events
      .slice(0, until)
      .filter((e) => e.ev === 'revoked')
      .map((e) => (e.ev === 'revoked' ? e.partitions : []));
  /** Index of the stayer's event that gave it all 6 partitions (the takeover). */
  const takeoverAt = (m: GroupMember): number =>
    m.events.findIndex((e) => e.ev === 'assigned' && e.partitions.length === PARTITIONS);

  test(
    'KafkaConsumer, default assignors (range: eager): two members split 6 partitions, subscribe/poll/commitSync, one leaves, the other resumes from its commits with no record lost or skipped; a second group reads all records',
    { timeout: CASE_TIMEOUT_MS },
    () =>
      withBrokerLog(target, async () => {
        const topic = 'java-groups-range';
        await target.createTopic(topic, PARTITIONS);
        const run = await runSplitAndTakeover({
          bootstrap: target.bootstrap,
          topic,
          group: `${topic}-g1`,
          secondGroup: `${topic}-g2`,
          recordsPerPhase: 3_000,
          waitMs: WAIT_MS,
          makeMember: (name, group) => javaMember(`java ${name}`, group, topic),
        });
        checkSplitAndTakeover(run, 'Java (range)');
        // Eager: the takeover rebalance revokes the stayer's whole assignment first.
        assert.deepEqual(
          revokedBefore(run.stayer, takeoverAt(run.stayer)),
          [run.split.stayer],
          "the eager rebalance revoked member-2's 3 partitions before the takeover",
        );
      }),
  );

  test(
    "KafkaConsumer, CooperativeStickyAssignor (incremental rebalances): two members split 6 partitions, one leaves, the other keeps its partitions and adds the leaver's at its commits; a second group reads all records",
    { timeout: CASE_TIMEOUT_MS },
    () =>
      withBrokerLog(target, async () => {
        const topic = 'java-groups-cooperative';
        await target.createTopic(topic, PARTITIONS);
        const run = await runSplitAndTakeover({
          bootstrap: target.bootstrap,
          topic,
          group: `${topic}-g1`,
          secondGroup: `${topic}-g2`,
          recordsPerPhase: 3_000,
          waitMs: WAIT_MS,
          makeMember: (name, group) => javaMember(`java ${name}`, group, topic, 'cooperative-sticky'),
        });
        checkSplitAndTakeover(run, 'Java (cooperative-sticky)');
        // Cooperative: member-1 gave up 3 of its 6 partitions (incremental revoke) for member-2's join,
        // and member-2 never gave up a partition before it closed.
        const leaverRevokes = revokedBefore(run.leaver, run.leaver.events.length).filter((ps) => ps.length > 0);
        assert.deepEqual(leaverRevokes[0]?.length, 3, `member-1's first revocation: ${JSON.stringify(leaverRevokes)}`);
        assert.deepEqual(
          revokedBefore(run.stayer, takeoverAt(run.stayer)).filter((ps) => ps.length > 0),
          [],
          'member-2 kept its partitions (no revocation) through the takeover',
        );
      }),
  );

  for (const restart of ['leader', 'follower'] as const) {
    test(
      `KafkaConsumer static membership (group.instance.id, KIP-345): the ${restart} closes (no LeaveGroup) and comes back with the same instance id; it gets its partitions back at its commits and the other member sees no rebalance`,
      { timeout: CASE_TIMEOUT_MS },
      () =>
        withBrokerLog(target, async () => {
          const topic = `java-groups-static-${restart}`;
          await target.createTopic(topic, PARTITIONS);
          await runStaticRejoin({
            bootstrap: target.bootstrap,
            topic,
            group: `${topic}-g`,
            restart,
            waitMs: WAIT_MS,
            makeMember: (name, instanceId) =>
              javaMember(`java ${name}`, `${topic}-g`, topic, undefined, { 'group.instance.id': instanceId }),
          });
        }),
    );
  }

  test(
    'KafkaConsumer commitSync with metadata as a member: committed() and AdminClient.listConsumerGroupOffsets read it back, also after a SIGKILL restart of the broker, and through kafkajs; a new member resumes at the committed offsets',
    { timeout: 240_000 },
    () =>
      withBrokerLog(target, async () => {
        const topic = 'java-commits';
        const group = 'java-commits-g';
        await target.createTopic(topic, PARTITIONS);
        const records = new NumberedRecords();
        await records.produce(target.bootstrap, topic, 600);
        const want = Array.from({ length: PARTITIONS }, (_, p) => [p, 3 + 13 * p, `java-${p}`] as const);
        const expected = Object.fromEntries(want.map(([p, o, md]) => [String(p), [o, md]]));
        const committed = await javaCommand('commit-offsets', [
          '--group',
          group,
          '--topic',
          topic,
          '--partitions',
          String(PARTITIONS),
          ...want.flatMap(([p, o, md]) => ['--offset', `${p}=${o}:${md}`]),
        ]);
        assert.deepEqual(committed.committed, expected);
        const readBack = async (when: string): Promise<void> => {
          const r = await javaCommand('committed', [
            '--group',
            group,
            '--topic',
            topic,
            '--partitions',
            String(PARTITIONS),
          ]);
          assert.deepEqual(r.consumer, expected, `KafkaConsumer.committed ${when}`);
          assert.deepEqual(r.admin, expected, `AdminClient.listConsumerGroupOffsets ${when}`);
        };
        await readBack('before the restart');
        await target.kill9AndRestart();
        await readBack('after the SIGKILL restart');
        const viaKafkajs = await kafkajsFetchOffsets(target.bootstrap, group, topic);
        assert.deepEqual(
          Object.fromEntries([...viaKafkajs].map(([p, c]) => [String(p), [c.offset, c.metadata]])),
          expected,
          'kafkajs Admin.fetchOffsets after the restart',
        );

        const member = javaMember('java resume', group, topic);
        await waitUntil(
          'the new member to read every partition to its end',
          WAIT_MS,
          () => {
            const next = want.map(([, o]) => o);
            for (const [p, o] of consumedBy(member)) next[p] = Math.max(next[p]!, o + 1);
            return next.every((n, p) => n === records.endOffsets[p]);
          },
          [member],
        );
        await member.stop();
        for (const [p, o] of want)
          assert.equal(
            consumedBy(member).find(([q]) => q === p)?.[1],
            o,
            `the new member's first offset on partition ${p}`,
          );
      }),
  );
});
