/**
 * `skiff cluster status|crash|start` end to end: the real `node bin/skiff.js` against the real admin
 * HTTP server (src/admin/admin-server.ts) in this process, over a fake ClusterView, on 127.0.0.1 port 0.
 * Checks the tables `status` prints, that crash and start reach the view and print the new state, and
 * that refusals (403 without fault injection, 404, 409), a refused connection and bad arguments are
 * printed plainly with exit 1 (2 for usage errors).
 */
import * as assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startAdminServer, type AdminServer } from '../../src/admin/admin-server';
import { FakeClusterView, samplePartitions } from '../helpers/fake-cluster-view';
import { runCommand, SKIFF_BIN, type RunResult } from '../helpers/run-command';

const TIMEOUT_MS = 60_000;

/** `node bin/skiff.js ARGS` with `env` added; asserts exit code `expect`. */
async function skiff(args: string[], expect: number, env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  const r = await runCommand(process.execPath, [SKIFF_BIN, ...args], '', { env: { ...process.env, ...env } });
  assert.equal(r.code, expect, `skiff ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** The rows after the header line matching `header`, up to the next blank line, as cells. */
function tableRows(stdout: string, header: RegExp): string[][] {
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => header.test(l));
  assert.ok(at >= 0, `no header ${header} in:\n${stdout}`);
  const end = lines.findIndex((l, i) => i > at && l.trim() === '');
  return lines.slice(at + 1, end < 0 ? undefined : end).map((l) => l.trim().split(/\s+/));
}

describe('skiff cluster against the admin server over a fake cluster', () => {
  let view: FakeClusterView;
  let server: AdminServer;
  let locked: AdminServer;
  let admin: string;

  before(async () => {
    view = new FakeClusterView(true, { partitions: samplePartitions() });
    view.brokerList[2]!.state = 'stopped';
    server = await startAdminServer(view, { port: 0 });
    admin = `127.0.0.1:${server.port}`;
    locked = await startAdminServer(new FakeClusterView(false), { port: 0 });
  });
  after(async () => {
    await server.close();
    await locked.close();
  });

  test('status prints the brokers, partitions and replicas tables', { timeout: TIMEOUT_MS }, async () => {
    const { stdout } = await skiff(['cluster', 'status', '--admin', admin], 0);
    assert.deepEqual(tableRows(stdout, /^BROKER\s+HOST\s+PORT\s+STATE\s+EPOCH$/), [
      ['0', '127.0.0.1', '9092', 'running', '1'],
      ['1', '127.0.0.1', '9093', 'running', '1'],
      ['2', '127.0.0.1', '9094', 'stopped', '1'],
    ]);
    assert.deepEqual(tableRows(stdout, /^TOPIC\s+PARTITION\s+LEADER\s+EPOCH\s+REPLICAS\s+ISR\s+OFFLINE$/), [
      ['orders', '0', '0', '3', '[0,1,2]', '[0,1,2]', '[]'],
      ['orders', '1', '1', '5', '[1,2,0]', '[1,0]', '[2]'],
    ]);
    assert.deepEqual(tableRows(stdout, /^TOPIC\s+PARTITION\s+REPLICA\s+ROLE\s+LEO\s+FSYNCED\s+HW$/), [
      ['orders', '0', '0', 'leader', '10', '10', '10'],
      ['orders', '0', '1', 'in-sync', '10', '10', '10'],
      ['orders', '0', '2', 'in-sync', '10', '10', '10'],
      ['orders', '1', '1', 'leader', '7', '6', '6'],
      ['orders', '1', '2', 'offline', '-', '-', '-'],
      ['orders', '1', '0', 'in-sync', '6', '6', '5'],
    ]);
  });

  test('the address comes from SKIFF_ADMIN when --admin is not given', { timeout: TIMEOUT_MS }, async () => {
    const { stdout } = await skiff(['cluster', 'status'], 0, { SKIFF_ADMIN: admin });
    assert.match(stdout, /^orders\s+1\s+1\s+5\s+\[1,2,0\]\s+\[1,0\]\s+\[2\]$/m);
  });

  test(
    'crash and start drive the view and print the new state; refusals print the server error',
    {
      timeout: TIMEOUT_MS,
    },
    async () => {
      const crashed = await skiff(['cluster', 'crash', '1', '--admin', admin], 0);
      assert.equal(crashed.stdout, 'broker 1: stopped (127.0.0.1:9093, epoch 1)\n');
      assert.equal(view.brokerList[1]!.state, 'stopped');

      const again = await skiff(['cluster', 'crash', '1', '--admin', admin], 1);
      assert.equal(again.stderr, 'skiff: cannot crash broker 1: it is stopped\n');
      assert.equal(again.stdout, '');

      const started = await skiff(['cluster', 'start', '1', '--admin', admin], 0);
      assert.equal(started.stdout, 'broker 1: running (127.0.0.1:9093, epoch 2)\n');

      const unknown = await skiff(['cluster', 'start', '7', '--admin', admin], 1);
      assert.equal(unknown.stderr, 'skiff: unknown broker 7\n');
      assert.deepEqual(view.calls, ['crash 1', 'crash 1', 'start 1', 'start 7']);
    },
  );

  test(
    'without fault injection, crash exits 1 with the reason naming --fault-injection',
    {
      timeout: TIMEOUT_MS,
    },
    async () => {
      const r = await skiff(['cluster', 'crash', '0', '--admin', `127.0.0.1:${locked.port}`], 1);
      assert.match(r.stderr, /^skiff: fault injection is disabled: restart skiff with --fault-injection/);
    },
  );

  test('a refused connection names the address and says to start the broker', { timeout: TIMEOUT_MS }, async () => {
    const closed = await startAdminServer(new FakeClusterView(false), { port: 0 });
    await closed.close(); // a port nothing listens on any more
    const r = await skiff(['cluster', 'status', '--admin', `127.0.0.1:${closed.port}`], 1);
    assert.match(
      r.stderr,
      new RegExp(
        `^skiff: cannot reach the admin API at 127\\.0\\.0\\.1:${closed.port} \\(connection refused\\): .*skiff start.*--admin-port`,
      ),
    );
  });

  test(
    'bad arguments: a malformed id is a usage error (2), a malformed address exits 1',
    {
      timeout: TIMEOUT_MS,
    },
    async () => {
      const callsBefore = view.calls.length;
      const badId = await skiff(['cluster', 'crash', 'one', '--admin', admin], 2);
      assert.match(badId.stderr, /Expected a broker \(node\) id/);
      const badAddress = await skiff(['cluster', 'status', '--admin', 'localhost'], 1);
      assert.match(badAddress.stderr, /^skiff: bad admin address "localhost": expected HOST:PORT/);
      assert.equal(view.calls.length, callsBefore, 'neither reached the view');
    },
  );
});
