/**
 * The real run's fault drivers (src/verify/real/faults.ts): the user's kill and start commands run under
 * `sh -c` with `{broker}` replaced, a clean or hard bounce counted as its kind, the start waited for
 * until Metadata lists the broker, and a failing command rejects with its output. And the run's way out:
 * setup problems found before any topic is created (SetupError), no client process left after a failure or
 * a SIGTERM, a broker a fault left down started again.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brokerFaults, FaultDriverError, shell } from '../../../src/verify/real/faults';
import { createSeededRandom } from '../../../src/io/random';
import {
  InterruptedError,
  preflight,
  runRealVerify,
  SetupError,
  type RealVerifyOptions,
} from '../../../src/verify/real/run';
import { startTestBroker, type TestBroker } from '../../helpers/in-process-broker';

describe('real-run fault drivers', () => {
  let broker: TestBroker;
  let dir: string;
  before(async () => {
    broker = await startTestBroker();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-faults-'));
  });
  after(async () => {
    await broker.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('commands: a hard bounce is process-kill, {broker} replaced, start waits for Metadata', async () => {
    const file = path.join(dir, 'hard.txt');
    const faults = brokerFaults(
      {
        kind: 'commands',
        killCommand: `echo kill {broker} >> ${file}`,
        startCommand: `echo start {broker} >> ${file}`,
        brokers: [0],
      },
      `127.0.0.1:${broker.port}`,
    );
    assert.deepEqual(faults.kinds, ['process-kill']);
    assert.equal(faults.targetsBroker('process-kill'), true);
    assert.equal(await faults.pickTarget(createSeededRandom(1), []), 0);
    await faults.inject('process-kill', 0);
    await faults.restore('process-kill', 0);
    assert.equal(fs.readFileSync(file, 'utf8'), 'kill 0\nstart 0\n');
    await assert.rejects(faults.inject('broker-stop', 0), /cannot cause broker-stop/);
  });

  test('commands: a clean bounce is broker-stop', () => {
    const faults = brokerFaults(
      { kind: 'commands', killCommand: 'true', startCommand: 'true', brokers: [1, 2], bounce: 'clean' },
      `127.0.0.1:${broker.port}`,
    );
    assert.deepEqual(faults.kinds, ['broker-stop']);
  });

  test('a failing command rejects with its exit code and stderr', async () => {
    await assert.rejects(shell('echo no such broker {broker} >&2; exit 3', 5), /exited with 3: no such broker 5/);
  });

  test('skiff-admin: crash and stop always, process-kill only with a restartProcess', () => {
    assert.deepEqual(brokerFaults({ kind: 'skiff-admin', adminUrl: 'http://127.0.0.1:1' }, '').kinds, [
      'broker-crash',
      'broker-stop',
    ]);
    const withRestart = brokerFaults(
      { kind: 'skiff-admin', adminUrl: 'http://127.0.0.1:1', restartProcess: () => Promise.resolve() },
      '',
    );
    assert.deepEqual(withRestart.kinds, ['broker-crash', 'broker-stop', 'process-kill']);
    assert.equal(withRestart.targetsBroker('process-kill'), false);
  });

  test('skiff-admin: an admin API gone mid-run rejects with a FaultDriverError naming the call and the cause', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const closedPort = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const faults = brokerFaults({ kind: 'skiff-admin', adminUrl: `http://127.0.0.1:${closedPort}` }, '');
    await assert.rejects(
      faults.inject('broker-crash', 1),
      (err: unknown) =>
        err instanceof FaultDriverError &&
        err.message.startsWith(`POST http://127.0.0.1:${closedPort}/`) &&
        /ECONNREFUSED/.test(err.message),
    );
  });
});

/** The pids and command lines of running processes whose command line holds `needle` (`ps -eo pid,args`). */
function processesWith(needle: string): string[] {
  const ps = spawnSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return ps.stdout.split('\n').filter((line) => line.includes(needle) && !line.includes(' ps -eo'));
}

/** A one-route-per-status fake of Skiff's admin API: GET /v1/brokers lists broker 0 running, POSTs answer `postStatus`. */
async function fakeAdmin(postStatus: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/v1/brokers') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([{ id: 0, host: '127.0.0.1', port: 1, state: 'running', brokerEpoch: 1 }]));
      return;
    }
    res.writeHead(postStatus, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'fault injection is disabled' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function realOptions(bootstrap: string, overrides: Partial<RealVerifyOptions> = {}): RealVerifyOptions {
  return {
    bootstrap,
    durationS: 30,
    clients: ['librdkafka'],
    faults: { kind: 'none' },
    faultKinds: [],
    seed: 7,
    topicPrefix: `cleanup-${process.pid}-${Date.now().toString(36)}`,
    replicationFactor: 1,
    ...overrides,
  };
}

describe('real run: setup checks and cleanup', () => {
  let broker: TestBroker;
  let closedPort: number;
  before(async () => {
    broker = await startTestBroker();
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closedPort = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
  });
  after(() => broker.stop());

  test('preflight: an unreachable bootstrap, too few brokers for the RF, a bad --admin, a missing java', async () => {
    await assert.rejects(
      preflight(realOptions(`127.0.0.1:${closedPort}`), ['librdkafka']),
      (err: Error) =>
        err instanceof SetupError && err.message.startsWith(`cannot reach --bootstrap 127.0.0.1:${closedPort}: `),
    );
    const bootstrap = `127.0.0.1:${broker.port}`;
    await assert.rejects(
      preflight(realOptions(bootstrap, { replicationFactor: 3 }), ['librdkafka']),
      (err: Error) =>
        err instanceof SetupError &&
        err.message === `${bootstrap} lists 1 broker, fewer than the replication factor 3: use --replication-factor 1`,
    );
    const forbidding = await fakeAdmin(403);
    try {
      await assert.rejects(
        preflight(realOptions(bootstrap, { faults: { kind: 'skiff-admin', adminUrl: forbidding.url } }), []),
        (err: Error) =>
          err instanceof SetupError &&
          err.message.startsWith(`--admin ${forbidding.url}: cannot bounce brokers: HTTP 403 `),
      );
    } finally {
      await forbidding.close();
    }
    const allowing = await fakeAdmin(409);
    try {
      await preflight(realOptions(bootstrap, { faults: { kind: 'skiff-admin', adminUrl: allowing.url } }), []);
    } finally {
      await allowing.close();
    }
    await assert.rejects(
      preflight(
        realOptions(bootstrap, { faults: { kind: 'skiff-admin', adminUrl: `http://127.0.0.1:${closedPort}` } }),
        [],
      ),
      (err: Error) => err instanceof SetupError && /GET \/v1\/brokers failed: ECONNREFUSED$/.test(err.message),
    );
    const saved = process.env.SKIFF_VERIFY_JAVA;
    process.env.SKIFF_VERIFY_JAVA = path.join(os.tmpdir(), 'no-such-dir', 'java');
    try {
      await assert.rejects(
        preflight(realOptions(bootstrap), ['java']),
        (err: Error) =>
          err instanceof SetupError && /^the java client needs .*no-such-dir\/java: ENOENT/.test(err.message),
      );
    } finally {
      if (saved === undefined) delete process.env.SKIFF_VERIFY_JAVA;
      else process.env.SKIFF_VERIFY_JAVA = saved;
    }
  });

  test('a run whose fault fails leaves no client process and starts the broker it took down again', async () => {
    const options = realOptions(`127.0.0.1:${broker.port}`, {
      faults: {
        kind: 'callbacks',
        brokers: [0],
        kill: () => Promise.reject(new Error('kill command failed')),
        start: (id) => {
          started.push(id);
          return Promise.resolve();
        },
      },
      faultKinds: ['process-kill'],
    });
    const started: number[] = [];
    const progress: string[] = [];
    const listeners = process.listenerCount('SIGINT');
    await assert.rejects(runRealVerify(options, { progress: (line) => progress.push(line) }), /kill command failed/);
    assert.ok(
      progress.some((line) => line.startsWith('producers: ')),
      `clients were started: ${progress.join('\n')}`,
    );
    assert.deepEqual(started, [0], 'the broker the failed kill may have taken down is started again');
    assert.ok(progress.includes('process-kill of broker 0: started again on the way out'), progress.join('\n'));
    assert.deepEqual(processesWith(options.topicPrefix), [], 'no client process of the run is left');
    assert.equal(process.listenerCount('SIGINT'), listeners, 'the SIGINT handler is removed after the run');
  });

  test('SIGTERM during a run: InterruptedError, every client stopped', async () => {
    const options = realOptions(`127.0.0.1:${broker.port}`);
    const progress: string[] = [];
    let signalled = false;
    const run = runRealVerify(options, {
      progress: (line) => {
        progress.push(line);
        // The clients are spawned when this line is printed.
        if (line.startsWith('producers: ') && !signalled) {
          signalled = true;
          setImmediate(() => process.emit('SIGTERM', 'SIGTERM'));
        }
      },
    });
    await assert.rejects(run, (err: Error) => err instanceof InterruptedError && err.signal === 'SIGTERM');
    assert.ok(signalled, progress.join('\n'));
    assert.deepEqual(processesWith(options.topicPrefix), [], 'no client process of the run is left');
    assert.equal(process.listenerCount('SIGTERM'), 0, 'the SIGTERM handler is removed after the run');
  });
});
