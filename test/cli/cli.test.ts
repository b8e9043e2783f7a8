/**
 * The `skiff` client commands end to end: a real broker process and the real `node bin/skiff.js`
 * (topic, produce, consume, perf), with kcat reading back what `skiff produce` wrote with every
 * compression codec.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { partitionForKey } from '../../src/client/partitioner';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { runCommand, SKIFF_BIN, type RunResult } from '../helpers/run-command';

const TIMEOUT_MS = 60_000;
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;

const SKIFF = SKIFF_BIN;
/**
 * kcat is a required test peer (scripts/install-peers.sh installs it; npm's pretest checks it): a
 * missing kcat fails the codec cases with this message rather than letting them pass unchecked.
 */
const KCAT_MISSING =
  spawnSync('kcat', ['-V']).status === 0
    ? null
    : 'kcat is not installed (or not on PATH): it is a required test peer; run `sudo bash scripts/install-peers.sh`';

/** Runs a command with `input` on stdin (killed after 30 s). */
function run(command: string, args: string[], input = '', env: NodeJS.ProcessEnv = process.env): Promise<RunResult> {
  return runCommand(command, args, input, { env });
}

describe('skiff client commands against a broker process', () => {
  let broker: BrokerProcess;
  let brokers: string;

  /** `node bin/skiff.js ARGS --brokers <broker>`; asserts exit code `expect` (default 0). */
  async function skiff(args: string[], input = '', expect = 0): Promise<RunResult> {
    const r = await run(process.execPath, [SKIFF, ...args, '--brokers', brokers], input);
    assert.equal(r.code, expect, `skiff ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r;
  }

  before(async () => {
    broker = await startBrokerProcess();
    brokers = `127.0.0.1:${broker.port}`;
  });
  after(async () => {
    await broker?.stop();
  });

  test('topic create / list / describe / delete', { timeout: TIMEOUT_MS }, async () => {
    const created = await skiff([
      'topic',
      'create',
      'cli-admin',
      'cli-admin-2',
      '-p',
      '3',
      '-c',
      'retention.ms=3600000',
    ]);
    assert.match(created.stdout, /^cli-admin\s+OK$/m);
    assert.match(created.stdout, /^cli-admin-2\s+OK$/m);
    const again = await skiff(['topic', 'create', 'cli-admin'], '', 1);
    assert.match(again.stdout, /cli-admin\s+TOPIC_ALREADY_EXISTS/);

    const listed = await skiff(['topic', 'list']);
    assert.match(listed.stdout, /^NAME\s+PARTITIONS\s+REPLICAS$/m);
    assert.match(listed.stdout, /^cli-admin\s+3\s+1$/m);

    await skiff(['produce', 'cli-admin', '-p', '1'], 'a\nb\n');
    const described = await skiff(['topic', 'describe', 'cli-admin']);
    assert.match(described.stdout, /^PARTITIONS\s+3$/m);
    assert.match(
      described.stdout,
      /^PARTITION\s+LEADER\s+EPOCH\s+REPLICAS\s+ISR\s+LOG-START-OFFSET\s+HIGH-WATERMARK\s+LOG-END-OFFSET$/m,
    );
    assert.match(described.stdout, /^0\s+0\s+\d+\s+\[0\]\s+\[0\]\s+0\s+0\s+0$/m);
    assert.match(described.stdout, /^1\s+0\s+\d+\s+\[0\]\s+\[0\]\s+0\s+2\s+2$/m); // HW and LEO
    // write.caching=false (the default): acks=all answered after the fsync, nothing more to say.
    assert.doesNotMatch(described.stdout, /FSYNCED/);
    // Configs when the broker has DescribeConfigs, else a line saying why not.
    assert.ok(
      /^retention\.ms\s+3600000\s+DYNAMIC_TOPIC_CONFIG$/m.test(described.stdout) ||
        /^\(not shown: .*DescribeConfigs/m.test(described.stdout),
      described.stdout,
    );

    const deleted = await skiff(['topic', 'delete', 'cli-admin', 'cli-admin-2']);
    assert.match(deleted.stdout, /^cli-admin\s+OK$/m);
    const after = await skiff(['topic', 'list']);
    assert.doesNotMatch(after.stdout, /cli-admin/);
    const missing = await skiff(['topic', 'describe', 'cli-admin'], '', 1);
    assert.match(missing.stderr, /UNKNOWN_TOPIC_OR_PARTITION/);
    // As kafka-topics: the internal offsets topic is not deleted from the CLI.
    const internal = await skiff(['topic', 'delete', '__consumer_offsets'], '', 1);
    assert.match(
      internal.stdout,
      /^__consumer_offsets\s+INVALID_REQUEST: Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked for deletion\.$/m,
    );
  });

  test('topic describe shows FSYNCED-OFFSET only where the fsync trails the LEO', { timeout: TIMEOUT_MS }, async () => {
    // write.caching=true counts the page cache toward the HW, and flush.ms of an hour fsyncs nothing
    // during the test: partition 0's LEO and HW move to 2 while its fsynced offset stays 0.
    await skiff(['topic', 'create', 'cli-fsync', '-p', '2', '-c', 'write.caching=true', '-c', 'flush.ms=3600000']);
    await skiff(['produce', 'cli-fsync', '-p', '0'], 'a\nb\n');
    const described = await skiff(['topic', 'describe', 'cli-fsync']);
    assert.match(
      described.stdout,
      /^PARTITION\s+LEADER\s+EPOCH\s+REPLICAS\s+ISR\s+LOG-START-OFFSET\s+HIGH-WATERMARK\s+LOG-END-OFFSET\s+FSYNCED-OFFSET$/m,
      described.stdout,
    );
    assert.match(described.stdout, /^0\s+0\s+\d+\s+\[0\]\s+\[0\]\s+0\s+2\s+2\s+0$/m, described.stdout);
    assert.match(described.stdout, /^1\s+0\s+\d+\s+\[0\]\s+\[0\]\s+0\s+0\s+0\s+-$/m, described.stdout); // fsynced = LEO
    await skiff(['topic', 'delete', 'cli-fsync']);
  });

  test('topic alter-config sets and deletes configs (or says why it cannot)', { timeout: TIMEOUT_MS }, async () => {
    await skiff(['topic', 'create', 'cli-alter', '-c', 'retention.ms=1000']);
    const r = await run(process.execPath, [
      SKIFF,
      'topic',
      'alter-config',
      'cli-alter',
      '--set',
      'segment.ms=123456',
      '--delete',
      'retention.ms',
      '--brokers',
      brokers,
    ]);
    if (r.code !== 0) {
      assert.equal(r.code, 1);
      assert.match(r.stderr, /IncrementalAlterConfigs/);
      return;
    }
    assert.match(r.stdout, /^cli-alter\s+OK$/m);
    const described = await skiff(['topic', 'describe', 'cli-alter']);
    assert.match(described.stdout, /^segment\.ms\s+123456\s+DYNAMIC_TOPIC_CONFIG$/m);
    assert.doesNotMatch(described.stdout, /^retention\.ms\s+1000\s/m);
  });

  test(
    'keyed lines with headers come back exactly, on the murmur2 partitions, with --count and -e',
    { timeout: TIMEOUT_MS },
    async () => {
      await skiff(['topic', 'create', 'cli-keys', '-p', '4']);
      const lines = Array.from({ length: 40 }, (_, i) => `key-${i % 10}|value ${i} with | bars`);
      const produced = await skiff(
        ['produce', 'cli-keys', '--key-separator', '|', '--header', 'source=cli', '--header', 'eq=a=b'],
        lines.join('\n') + '\nno separator here\n',
      );
      assert.match(produced.stdout, /^produced 41 records to cli-keys: partition \d+ offsets \d+-\d+/);

      const format = '%p\\t%o\\t%k\\t%v\\t%h\\n';
      const all = await skiff(['consume', 'cli-keys', '--from-beginning', '-e', '--format', format]);
      const rows = all.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t'));
      assert.equal(rows.length, 41);
      for (const [partition, , key, , headers] of rows) {
        assert.equal(headers, 'source=cli,eq=a=b');
        if (key !== '') assert.equal(Number(partition), partitionForKey(Buffer.from(key!), 4), `key ${key}`);
      }
      const byPartition = (r: string[][]): string[] => r.map((x) => x.slice(0, 4).join('\t')).sort();
      const expected = lines.map((l) => l.split('|')).map(([k, ...v]) => [k!, v.join('|')]);
      assert.deepEqual(
        rows.map((r) => `${r[2]}\t${r[3]}`).sort(),
        [...expected.map(([k, v]) => `${k}\t${v}`), '\tno separator here'].sort(),
      );
      // Offsets per partition are dense from 0, and each key keeps its send order.
      for (const p of new Set(rows.map((r) => r[0]))) {
        assert.deepEqual(
          rows.filter((r) => r[0] === p).map((r) => Number(r[1])),
          rows.filter((r) => r[0] === p).map((_, i) => i),
        );
      }
      const key3 = rows.filter((r) => r[2] === 'key-3').map((r) => r[3]);
      assert.deepEqual(key3, [
        'value 3 with | bars',
        'value 13 with | bars',
        'value 23 with | bars',
        'value 33 with | bars',
      ]);

      const counted = await skiff(['consume', 'cli-keys', '--from-beginning', '--count', '5', '--format', format]);
      assert.equal(counted.stdout.trimEnd().split('\n').length, 5);
      assert.deepEqual(
        byPartition(
          counted.stdout
            .trimEnd()
            .split('\n')
            .map((l) => l.split('\t')),
        ).every((r) => byPartition(rows).includes(r)),
        true,
      );

      const onePartition = rows.find((r) => r[2] === 'key-3')![0]!;
      const single = await skiff([
        'consume',
        'cli-keys',
        '-p',
        onePartition,
        '--from-beginning',
        '-e',
        '--format',
        '%p|%k|\\n',
      ]);
      const singleLines = single.stdout.trimEnd().split('\n');
      assert.equal(singleLines.length, rows.filter((r) => r[0] === onePartition).length);
      assert.ok(
        singleLines.every((l) => l.startsWith(`${onePartition}|`)),
        single.stdout,
      );
    },
  );

  test('consume --from-beginning, --offset and --timestamp', { timeout: TIMEOUT_MS }, async () => {
    await skiff(['topic', 'create', 'cli-start']);
    await skiff(['produce', 'cli-start'], 'a0\na1\na2\n');
    await new Promise((resolve) => setTimeout(resolve, 30));
    await skiff(['produce', 'cli-start'], 'b3\nb4\n');
    const all = await skiff(['consume', 'cli-start', '--from-beginning', '-e', '--format', '%o %t %v\\n']);
    const rows = all.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split(' '));
    assert.deepEqual(
      rows.map((r) => r[2]),
      ['a0', 'a1', 'a2', 'b3', 'b4'],
    );
    assert.deepEqual(
      rows.map((r) => Number(r[0])),
      [0, 1, 2, 3, 4],
    );

    const fromOffset = await skiff(['consume', 'cli-start', '--offset', '2', '-e']);
    assert.equal(fromOffset.stdout, 'a2\nb3\nb4\n');
    const secondBatchTime = rows[3]![1]!;
    assert.ok(Number(secondBatchTime) > Number(rows[2]![1]), 'the second produce has a later timestamp');
    const fromTime = await skiff(['consume', 'cli-start', '--timestamp', secondBatchTime, '-e']);
    assert.equal(fromTime.stdout, 'b3\nb4\n');
    const future = await skiff([
      'consume',
      'cli-start',
      '--timestamp',
      String(Number(secondBatchTime) + 3_600_000),
      '-e',
    ]);
    assert.equal(future.stdout, '');
    const atEnd = await skiff(['consume', 'cli-start', '-e']);
    assert.equal(atEnd.stdout, '');
    const outOfRange = await skiff(['consume', 'cli-start', '--offset', '99', '-e'], '', 1);
    assert.match(outOfRange.stderr, /OFFSET_OUT_OF_RANGE/);
    const unknown = await skiff(['consume', 'cli-no-such-topic', '-e'], '', 1);
    assert.match(unknown.stderr, /UNKNOWN_TOPIC_OR_PARTITION/);
  });

  test(
    'produce -Z sends an empty key or value as null (a tombstone), kcat reads them back as NULL; without -Z they stay empty',
    { timeout: TIMEOUT_MS },
    async () => {
      assert.equal(KCAT_MISSING, null, KCAT_MISSING ?? '');
      await skiff(['topic', 'create', 'cli-null', '-p', '1']);
      const input = 'k1|v1\nk1|\n|v2\nnosep\n\n';
      const withZ = await skiff(['produce', 'cli-null', '-k', '|', '-Z'], input);
      assert.match(withZ.stdout, /^produced 5 records to cli-null: partition 0 offsets 0-4$/m);
      await skiff(['produce', 'cli-null', '-k', '|'], 'k2|\n|v3\n');
      // %K / %S are kcat's key / value lengths: -1 for null, 0 for empty.
      const kcat = await run('kcat', [
        '-b',
        brokers,
        '-C',
        '-t',
        'cli-null',
        '-o',
        'beginning',
        '-e',
        '-q',
        '-f',
        '%o %K:%k %S:%s\\n',
      ]);
      assert.equal(kcat.code, 0, kcat.stderr);
      assert.deepEqual(kcat.stdout.trimEnd().split('\n'), [
        '0 2:k1 2:v1',
        '1 2:k1 -1:', // tombstone for k1
        '2 -1: 2:v2', // null key
        '3 -1: 5:nosep', // no separator: null key with or without -Z
        '4 -1: -1:', // an empty line: null key and null value
        '5 2:k2 0:', // without -Z: an empty, not null, value
        '6 0: 2:v3', // and an empty key
      ]);
    },
  );

  test(
    'produce --partition N that the topic does not have is refused before reading stdin',
    { timeout: TIMEOUT_MS },
    async () => {
      await skiff(['topic', 'create', 'cli-part', '-p', '2']);
      const r = await skiff(['produce', 'cli-part', '-p', '2'], 'a\n', 1);
      assert.match(
        r.stderr,
        /^skiff: cli-part\/2 \(--partition: the topic has partitions 0-1\): UNKNOWN_TOPIC_OR_PARTITION$/m,
      );
      assert.equal(r.stdout, '');
      const end = await skiff(['topic', 'describe', 'cli-part']);
      assert.match(end.stdout, /^0\s+0\s+\d+\s+\[0\]\s+\[0\]\s+0\s+0\b/m);
      assert.match(end.stdout, /^1\s+0\s+\d+\s+\[0\]\s+\[0\]\s+0\s+0\b/m);
    },
  );

  test('topic create takes several names (the codec topics below)', { timeout: TIMEOUT_MS }, async () => {
    const r = await skiff(['topic', 'create', ...CODECS.map((codec) => `cli-codec-${codec}`), '-p', '2']);
    for (const codec of CODECS) assert.match(r.stdout, new RegExp(`^cli-codec-${codec}\\s+OK$`, 'm'));
  });

  for (const codec of CODECS) {
    test(
      `produce --compression ${codec}: skiff consume and kcat read the records back`,
      { timeout: TIMEOUT_MS },
      async () => {
        assert.equal(KCAT_MISSING, null, KCAT_MISSING ?? '');
        const topic = `cli-codec-${codec}`;
        const lines = Array.from({ length: 500 }, (_, i) => `k${i % 7}:${codec} record ${i} ${'x'.repeat(i % 50)}`);
        await skiff(['produce', topic, '-k', ':', '--compression', codec, '--linger-ms', '5'], lines.join('\n') + '\n');
        const expected = lines.map((l) => l.replace(':', '=')).sort();
        const viaSkiff = await skiff(['consume', topic, '--from-beginning', '-e', '--format', '%k=%v\\n']);
        assert.deepEqual(viaSkiff.stdout.trimEnd().split('\n').sort(), expected);
        const viaKcat = await run('kcat', [
          '-b',
          brokers,
          '-C',
          '-t',
          topic,
          '-o',
          'beginning',
          '-e',
          '-q',
          '-f',
          '%k=%s\\n',
        ]);
        assert.equal(viaKcat.code, 0, viaKcat.stderr);
        assert.deepEqual(viaKcat.stdout.trimEnd().split('\n').sort(), expected);
      },
    );
  }

  test(
    'perf produce whose records fail: the acknowledged totals on stdout, the failure on stderr, exit 1',
    {
      timeout: TIMEOUT_MS,
    },
    async () => {
      await skiff(['topic', 'create', 'cli-perf-small', '-c', 'max.message.bytes=200']);
      const result = await skiff(
        ['perf', 'produce', '--topic', 'cli-perf-small', '--records', '50', '--record-size', '1000'],
        '',
        1,
      );
      assert.match(result.stdout, /^0 records sent, [\d.]+ records\/sec .* ms 99\.9th\.\n$/, result.stdout);
      assert.match(
        result.stderr,
        /^skiff: \d+ records failed \(the totals above count the 0 acknowledged\): /m,
        result.stderr,
      );
    },
  );

  test('perf produce and perf consume report parseable totals', { timeout: TIMEOUT_MS }, async () => {
    const produced = await skiff([
      'perf',
      'produce',
      '--topic',
      'cli-perf',
      '--records',
      '20000',
      '--record-size',
      '100',
      '--partitions',
      '2',
      '--acks',
      '-1',
    ]);
    const p =
      /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, ([\d.]+) ms 50th, ([\d.]+) ms 99th, ([\d.]+) ms 99\.9th\.$/m.exec(
        produced.stdout,
      );
    assert.ok(p, produced.stdout);
    assert.equal(Number(p[1]), 20000);
    assert.ok(Number(p[2]) > 0 && Number(p[3]) > 0);
    const [avg, max, p50, p99, p999] = [4, 5, 6, 7, 8].map((i) => Number(p[i]));
    assert.ok(p50! <= p99! && p99! <= p999! && p999! <= max! && avg! <= max!, produced.stdout);
    assert.match(produced.stderr, /created topic cli-perf with 2 partitions/);

    const consumed = await skiff(['perf', 'consume', '--topic', 'cli-perf', '--records', '20000']);
    const c = /^(\d+) records received, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) MB in (\d+) ms\.$/m.exec(
      consumed.stdout,
    );
    assert.ok(c, consumed.stdout);
    assert.equal(Number(c[1]), 20000);
    assert.equal(Number(c[4]), Number(((20000 * 100) / 1024 / 1024).toFixed(2)));

    const described = await skiff(['topic', 'describe', 'cli-perf']);
    const hw = [...described.stdout.matchAll(/^[01]\s+0\s+\d+\s+\[0\]\s+\[0\]\s+0\s+(\d+)\s+\1$/gm)].map((m) =>
      Number(m[1]),
    );
    assert.equal(
      hw.reduce((a, b) => a + b, 0),
      20000,
    );

    const compressed = await skiff([
      'perf',
      'produce',
      '--topic',
      'cli-perf',
      '--records',
      '2000',
      '--record-size',
      '50',
      '--acks',
      '1',
      '--compression',
      'zstd',
    ]);
    assert.match(compressed.stdout, /^2000 records sent/m);
    assert.doesNotMatch(compressed.stderr, /warning/, 'no --partitions given: no warning');
    const tooMany = await skiff(
      ['perf', 'consume', '--topic', 'cli-perf', '--records', '30000', '--timeout-ms', '300'],
      '',
      1,
    );
    assert.match(tooMany.stdout, /^22000 records received/m);
    const mismatch = await skiff([
      'perf',
      'produce',
      '--topic',
      'cli-perf',
      '--records',
      '10',
      '--record-size',
      '10',
      '--partitions',
      '4',
    ]);
    assert.match(
      mismatch.stderr,
      /^skiff: warning: topic cli-perf already exists with 2 partitions; --partitions 4 applies only when the topic is created/m,
    );
    assert.match(mismatch.stdout, /^10 records sent/m);
  });

  test('an unreachable broker is an error with exit code 1', { timeout: TIMEOUT_MS }, async () => {
    const r = await run(process.execPath, [SKIFF, 'topic', 'list', '--brokers', '127.0.0.1:1']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot connect to 127\.0\.0\.1:1/);
    const env = { ...process.env, SKIFF_BROKERS: brokers };
    const viaEnv = await run(process.execPath, [SKIFF, 'topic', 'list'], '', env);
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
  });
});
