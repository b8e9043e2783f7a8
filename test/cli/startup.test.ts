/**
 * `skiff start` failures and start-up output, with real processes: each refused start prints one
 * plain line on stderr (no JSON) and exits 2 (configuration) or 1 (the machine's state), and leaves
 * the data dir as it found it; a signal ends a start; a restart says whether the last shutdown was
 * clean in one line, with per-partition lines at debug; Kafka 4.4's stock server.properties starts.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startBrokerProcess, type BrokerProcess } from '../helpers/broker-process';
import { repoRoot, runCommand, SKIFF_BIN, type RunResult } from '../helpers/run-command';
import { BROKER_V8_FLAGS } from '../../src/cli/v8-flags';

const TIMEOUT_MS = 60_000;
const STOCK_CONFIG = path.join(repoRoot(), 'test', 'fixtures', 'kafka-4.4-server.properties');

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-startup-'));
  tempDirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of tempDirs) {
    fs.chmodSync(dir, 0o755);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** `node bin/skiff.js start ARGS` (killed after 30 s), with SKIFF_LOG_FORMAT unset unless given. */
function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return runCommand(process.execPath, [SKIFF_BIN, 'start', ...args], '', {
    env: { ...process.env, SKIFF_LOG_FORMAT: 'json', ...env },
  });
}

/** Asserts a refused start: exit `code`, nothing on stdout, exactly one plain line on stderr matching `line`. */
function assertRefused(result: RunResult, code: number, line: RegExp): void {
  const detail = `exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
  assert.equal(result.code, code, detail);
  assert.equal(result.stdout, '', detail);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line on stderr\n${detail}`);
  assert.match(lines[0]!, /^skiff: /, detail);
  assert.match(lines[0]!, line, detail);
}

/** The JSON log lines of a broker's output (stdout's listening line left out). */
function jsonLines(output: string): Array<{ level: number; msg: string } & Record<string, unknown>> {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string });
}

describe('skiff start refuses plainly', () => {
  let running: BrokerProcess;
  before(async () => {
    running = await startBrokerProcess();
  });
  after(async () => {
    await running?.stop();
  });

  test('a port in use: one line, exit 1, and the empty data dir stays empty', { timeout: TIMEOUT_MS }, async () => {
    const dir = tempDir();
    const result = await start(['--port', String(running.port), '--data-dir', dir]);
    assertRefused(result, 1, new RegExp(`port ${running.port} is in use.*--port`));
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing written: no meta.properties, lock, metadata or checkpoints');
  });

  test(
    'an --admin-port in use: one line, exit 1, and the data dir is not created',
    { timeout: TIMEOUT_MS },
    async () => {
      const holder = net.createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      const adminPort = (holder.address() as net.AddressInfo).port;
      try {
        const dir = path.join(tempDir(), 'not-yet');
        const result = await start(['--port', '0', '--admin-port', String(adminPort), '--data-dir', dir]);
        assertRefused(result, 1, new RegExp(`admin API cannot listen on 127\\.0\\.0\\.1:${adminPort}.*--admin-port`));
        assert.equal(fs.existsSync(dir), false, 'nothing written before the admin port was checked');
      } finally {
        await new Promise<void>((resolve) => holder.close(() => resolve()));
      }
    },
  );

  test('a port in use with a data dir that does not exist yet: not created', { timeout: TIMEOUT_MS }, async () => {
    const dir = path.join(tempDir(), 'not-yet');
    const result = await start(['--port', String(running.port), '--data-dir', dir]);
    assertRefused(result, 1, /is in use/);
    assert.equal(fs.existsSync(dir), false);
  });

  test('a locked data dir (another broker runs on it): one line, exit 1', { timeout: TIMEOUT_MS }, async () => {
    const before = fs.readdirSync(running.dataDir).sort();
    const result = await start(['--port', '0', '--data-dir', running.dataDir]);
    assertRefused(result, 1, /is in use by another broker \(process \d+ holds .*\.lock\).*--data-dir/);
    assert.deepEqual(fs.readdirSync(running.dataDir).sort(), before);
  });

  test(
    "another cluster's data dir (a Kafka meta.properties): one line, exit 1, nothing written",
    { timeout: TIMEOUT_MS },
    async () => {
      const dir = tempDir();
      fs.writeFileSync(path.join(dir, 'meta.properties'), 'version=1\nnode.id=0\ncluster.id=Lg5gX1-dQvOJz3P0vGQGWg\n');
      fs.mkdirSync(path.join(dir, '__cluster_metadata-0'));
      const result = await start(['--port', '0', '--data-dir', dir]);
      assertRefused(result, 1, /belongs to cluster Lg5gX1-dQvOJz3P0vGQGWg .*another cluster's data.*--data-dir/);
      assert.deepEqual(fs.readdirSync(dir).sort(), ['__cluster_metadata-0', 'meta.properties']);
    },
  );

  test("another node's data dir: one line naming both node ids, exit 1", { timeout: TIMEOUT_MS }, async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'meta.properties'), 'version=1\nnode.id=5\ncluster.id=Lg5gX1-dQvOJz3P0vGQGWg\n');
    const result = await start(['--port', '0', '--data-dir', dir]);
    assertRefused(result, 1, /belongs to node 5, not 0 .*node\.id=5/);
    assert.deepEqual(fs.readdirSync(dir), ['meta.properties']);
  });

  test('a read-only data dir: one line, exit 1', { timeout: TIMEOUT_MS }, async () => {
    const dir = tempDir();
    fs.chmodSync(dir, 0o555);
    // Root writes through permissions: run as nobody then (CI runs as root).
    const asRoot = process.getuid?.() === 0;
    const command = asRoot ? 'setpriv' : process.execPath;
    const prefix = asRoot ? ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath] : [];
    const result = await runCommand(command, [...prefix, SKIFF_BIN, 'start', '--port', '0', '--data-dir', dir], '', {
      env: { ...process.env, SKIFF_LOG_FORMAT: 'json' },
    });
    // Not writable, or (under a test run's private TMPDIR) not even reachable: both refused plainly.
    assertRefused(result, 1, /log dir .* is not (writable|accessible) by this user \(EACCES\b.*--data-dir/);
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  test('--data-dir /proc/foo: refused at once (no mkdir loop), exit 2', { timeout: TIMEOUT_MS }, async () => {
    const started = Date.now();
    const result = await start(['--port', '0', '--data-dir', '/proc/skiff-test-dir']);
    assertRefused(result, 2, /log dir \/proc\/skiff-test-dir is on the proc pseudo file system.*--data-dir/);
    assert.ok(Date.now() - started < 15_000, 'refused quickly');
  });

  test('a data dir that runs through a file: exit 2', { timeout: TIMEOUT_MS }, async () => {
    const file = path.join(tempDir(), 'a-file');
    fs.writeFileSync(file, 'x');
    const result = await start(['--port', '0', '--data-dir', path.join(file, 'sub')]);
    assertRefused(result, 2, /runs through the file .*a-file, not a directory/);
  });

  test('SKIFF_LOG_LEVEL=bogus: one line listing the levels, exit 2', { timeout: TIMEOUT_MS }, async () => {
    const result = await start(['--port', '0', '--data-dir', tempDir()], { SKIFF_LOG_LEVEL: 'bogus' });
    assertRefused(
      result,
      2,
      /SKIFF_LOG_LEVEL=bogus is not a log level: use one of trace, debug, info, warn, error, fatal, silent/,
    );
  });

  test(
    'an advertised host that is not a host name: one line, exit 2, nothing written',
    { timeout: TIMEOUT_MS },
    async () => {
      const dir = tempDir();
      const result = await start([
        '--data-dir',
        dir,
        '--override',
        'listeners=PLAINTEXT://127.0.0.1:0',
        '--override',
        'advertised.listeners=PLAINTEXT://bad host:1',
      ]);
      assertRefused(result, 2, /advertised\.listeners: host "bad host" is not a host name or IP address/);
      assert.deepEqual(fs.readdirSync(dir), []);
    },
  );

  test('a bad config: one line with every problem, exit 2', { timeout: TIMEOUT_MS }, async () => {
    const result = await start([
      '--port',
      '0',
      '--data-dir',
      tempDir(),
      '--override',
      'log.segment.byte=100',
      '--override',
      'num.partitions=x',
    ]);
    assertRefused(
      result,
      2,
      /invalid configuration: Unknown configuration "log.segment.byte" \(nearest known key: log.segment.bytes\); .*num.partitions/,
    );
  });
});

describe('skiff start lifecycle and output', () => {
  test('the first SIGTERM during a start ends it: exit 0 promptly', { timeout: TIMEOUT_MS }, async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [SKIFF_BIN, 'start', '--port', '0', '--data-dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SKIFF_LOG_FORMAT: 'json', SKIFF_LOG_LEVEL: 'debug' },
    });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Signal once the start is under way (the first actor has logged), i.e. while it waits on workers.
    await new Promise<void>((resolve) => {
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (stderr.includes('"worker"')) resolve();
      });
    });
    const signalledAt = Date.now();
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(timer);
    assert.equal(code, 0, stderr);
    assert.ok(Date.now() - signalledAt < 15_000, 'ended within the grace period');
    assert.equal(fs.existsSync(path.join(dir, '.lock')), false, 'the lock was released');
  });

  for (const delayMs of [10, 50, 200]) {
    test(
      `SIGTERM ${delayMs} ms after the process starts running JavaScript ends the start: exit 0, lock released`,
      { timeout: TIMEOUT_MS },
      async () => {
        const dir = tempDir();
        // The preload announces Node's bootstrap is over: before it, Node's default action (death by the
        // signal) applies to any program, and bin/skiff.js needs a few ms to reach its first handler.
        // The signal then lands while the CLI's modules load (~0.3 s) or while the start runs.
        const preload = path.join(__dirname, '..', 'helpers', 'announce-js-start.js');
        const child = spawn(
          process.execPath,
          ['--require', preload, SKIFF_BIN, 'start', '--port', '0', '--data-dir', dir],
          { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], env: { ...process.env, SKIFF_LOG_FORMAT: 'json' } },
        );
        let output = '';
        child.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d));
        child.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
          child.once('exit', (code, signal) => resolve({ code, signal })),
        );
        const announcer = child.stdio[3] as NodeJS.ReadableStream;
        await new Promise<void>((resolve) => announcer.once('data', () => resolve()));
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        const result = await exited;
        clearTimeout(timer);
        assert.deepEqual(result, { code: 0, signal: null }, output);
        assert.ok(!output.includes('skiff listening on'), output);
        assert.equal(fs.existsSync(path.join(dir, '.lock')), false, 'the lock was released');
      },
    );
  }

  test(
    'a restart after SIGKILL says so in one line with the recovery done; per-partition lines are at debug',
    { timeout: TIMEOUT_MS * 2 },
    async () => {
      const first = await startBrokerProcess();
      const brokers = `127.0.0.1:${first.port}`;
      const skiff = (args: string[], input = ''): Promise<RunResult> =>
        runCommand(process.execPath, [SKIFF_BIN, ...args, '--brokers', brokers], input);
      assert.equal((await skiff(['topic', 'create', 'startup-t', '-p', '20'])).code, 0);
      assert.equal((await skiff(['produce', 'startup-t', '-p', '3'], 'a\nb\nc\n')).code, 0);
      await skiff(['group', 'describe', 'startup-g']); // FindCoordinator creates __consumer_offsets (50 partitions)
      await first.kill9();

      const second = await startBrokerProcess({ dataDir: first.dataDir });
      const secondLines = jsonLines(second.logs());
      assert.equal(await second.stop(), 0);
      const unclean = secondLines.filter((l) => l.msg.startsWith('recovered after an unclean shutdown'));
      assert.equal(unclean.length, 1, second.logs());
      assert.equal(unclean[0]!.level, 30);
      assert.equal(unclean[0]!.partitions, 70);
      assert.equal(typeof unclean[0]!.recoveryScannedBytes, 'number');
      assert.equal(typeof unclean[0]!.recoveryTruncatedBytes, 'number');
      const info = secondLines.filter((l) => l.level === 30);
      assert.ok(info.length <= 8, `a handful of info lines, not one per partition:\n${second.logs()}`);
      for (const perPartition of ['log loaded', 'replica started as leader', 'group coordinator loaded'])
        assert.ok(!info.some((l) => l.msg === perPartition), `${perPartition} is at debug`);

      const third = await startBrokerProcess({ dataDir: first.dataDir });
      const thirdLines = jsonLines(third.logs());
      assert.equal(await third.stop(), 0);
      assert.ok(!thirdLines.some((l) => l.msg.includes('unclean')), third.logs());
      assert.equal(thirdLines.filter((l) => l.msg === 'loaded 70 partitions and 50 group coordinators').length, 1);
    },
  );

  test('sets its V8 flags and logs them at debug', { timeout: TIMEOUT_MS }, async () => {
    const broker = await startBrokerProcess({ env: { SKIFF_LOG_LEVEL: 'debug' } });
    const lines = jsonLines(broker.logs()).filter((l) => l.msg === 'V8 flags set for the broker');
    assert.equal(await broker.stop(), 0, broker.logs());
    assert.equal(lines.length, 1, broker.logs());
    assert.equal(lines[0]!.level, 20);
    assert.deepEqual(lines[0]!.v8Flags, [...BROKER_V8_FLAGS]);
  });

  test('logs are JSON on a pipe, pino-pretty lines with SKIFF_LOG_FORMAT=pretty', { timeout: TIMEOUT_MS }, async () => {
    // A config warning is logged before the (refused) start: one log line in each format.
    const args = ['--port', '0', '--data-dir', '/proc/skiff-x', '--override', 'zookeeper.connect=zk:2181'];
    const json = await start(args, { SKIFF_LOG_FORMAT: 'json' });
    const pretty = await start(args, { SKIFF_LOG_FORMAT: 'pretty' });
    for (const result of [json, pretty]) assert.equal(result.code, 2, result.stderr);
    const jsonWarning = json.stderr.split('\n').find((l) => l.includes('zookeeper.connect'));
    assert.ok(jsonWarning !== undefined, json.stderr);
    assert.equal((JSON.parse(jsonWarning) as { level: number }).level, 40);
    const prettyWarning = pretty.stderr.split('\n').find((l) => l.includes('zookeeper.connect'));
    assert.ok(prettyWarning !== undefined, pretty.stderr);
    assert.ok(!prettyWarning.trimStart().startsWith('{'), prettyWarning);
    assert.match(prettyWarning, /WARN/);
    assert.match(pretty.stderr.trimEnd().split('\n').pop()!, /^skiff: log dir \/proc\/skiff-x is on the proc/);
  });
});

describe("Kafka 4.4's stock server.properties", () => {
  test('starts with warnings only and serves a produce and a consume', { timeout: TIMEOUT_MS }, async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [SKIFF_BIN, 'start', STOCK_CONFIG, '--data-dir', dir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SKIFF_LOG_FORMAT: 'json' },
    });
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line\n${stderr}`)), 20_000);
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        const match = /skiff listening on 127\.0\.0\.1:(\d+)/.exec(stdout);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      void exited.then((code) => reject(new Error(`exited ${code}\n${stderr}`)));
    });
    try {
      const brokers = `127.0.0.1:${port}`;
      const created = await runCommand(process.execPath, [
        SKIFF_BIN,
        'topic',
        'create',
        'stock-t',
        '--brokers',
        brokers,
      ]);
      assert.equal(created.code, 0, created.stderr);
      const produced = await runCommand(
        process.execPath,
        [SKIFF_BIN, 'produce', 'stock-t', '--brokers', brokers],
        'one\ntwo\n',
      );
      assert.equal(produced.code, 0, produced.stderr);
      const consumed = await runCommand(process.execPath, [
        SKIFF_BIN,
        'consume',
        'stock-t',
        '--from-beginning',
        '-n',
        '2',
        '--brokers',
        brokers,
      ]);
      assert.equal(consumed.code, 0, consumed.stderr);
      assert.equal(consumed.stdout, 'one\ntwo\n');
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
    const lines = jsonLines(stderr);
    assert.ok(lines.length > 0);
    assert.deepEqual(
      lines.filter((l) => l.level > 40).map((l) => l.msg),
      [],
      'no error lines',
    );
    const warnings = lines.filter((l) => l.level === 40).map((l) => l.msg);
    assert.ok(
      warnings.some((w) => w.startsWith('Ignoring share.coordinator.state.topic.replication.factor=1')),
      stderr,
    );
    assert.ok(
      warnings.some((w) =>
        /process\.roles, controller\.quorum\.bootstrap\.servers: .*forms a cluster of its own/.test(w),
      ),
      stderr,
    );
    assert.ok(
      fs.existsSync(path.join(dir, 'meta.properties')),
      'the --data-dir was used, not /tmp/kraft-combined-logs',
    );
    const meta = fs.readFileSync(path.join(dir, 'meta.properties'), 'utf8');
    assert.match(meta, /^node\.id=1$/m, "the file's node.id");
  });
});
