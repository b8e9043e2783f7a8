/**
 * The admin HTTP API over real HTTP on 127.0.0.1 (port 0) against a fake ClusterView: every route, the
 * fault-injection switch, bad input (400, 404, 405, 409) and a view that throws (500, logged, and the
 * server serves the next request).
 */
import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import { afterEach, describe, test } from 'node:test';
import { AdminListenError, startAdminServer, type AdminServer } from '../../../src/admin/admin-server';
import type { Logger } from '../../../src/io/logger';
import { FakeClusterView, samplePartitions } from '../../helpers/fake-cluster-view';
import { json, request } from './http-client';

/** A logger that keeps its error lines. */
function capturingLogger(): Logger & { errors: Array<{ fields: object | string; msg: string | undefined }> } {
  const errors: Array<{ fields: object | string; msg: string | undefined }> = [];
  const logger = {
    errors,
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (fields: object | string, msg?: string) => errors.push({ fields, msg }),
    child: () => logger,
  };
  return logger;
}

describe('admin server', () => {
  let server: AdminServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  async function start(view: FakeClusterView, logger: Logger = capturingLogger()): Promise<AdminServer> {
    server = await startAdminServer(view, { host: '127.0.0.1', port: 0, logger });
    return server;
  }

  test('listens on 127.0.0.1 on the free port it picked, and close stops it and unwatches the view', async () => {
    const view = new FakeClusterView(false);
    const s = await start(view);
    assert.equal(s.host, '127.0.0.1');
    assert.ok(s.port > 0);
    assert.equal(view.watchers, 1);
    await s.close();
    await s.close(); // idempotent
    server = null;
    assert.equal(view.watchers, 0);
    await assert.rejects(request(s.port, 'GET', '/v1/brokers'), /ECONNREFUSED/);
  });

  test('a port in use rejects with AdminListenError naming the address', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await assert.rejects(
        startAdminServer(new FakeClusterView(false), { port }),
        (err: unknown) =>
          err instanceof AdminListenError && err.code === 'EADDRINUSE' && err.message.includes(`127.0.0.1:${port}`),
      );
    } finally {
      blocker.close();
    }
  });

  test('GET /v1/brokers lists the brokers; GET /v1/brokers/{id} shows one', async () => {
    const view = new FakeClusterView(false);
    view.brokerList[2]!.state = 'fenced';
    const { port } = await start(view);
    const reply = await request(port, 'GET', '/v1/brokers');
    assert.equal(reply.status, 200);
    assert.deepEqual(json(reply), [
      { id: 0, host: '127.0.0.1', port: 9092, state: 'running', brokerEpoch: 1 },
      { id: 1, host: '127.0.0.1', port: 9093, state: 'running', brokerEpoch: 1 },
      { id: 2, host: '127.0.0.1', port: 9094, state: 'fenced', brokerEpoch: 1 },
    ]);
    assert.equal((await request(port, 'GET', '/v1/brokers/')).status, 200, 'a trailing slash is the same route');
    const one = await request(port, 'GET', '/v1/brokers/1?pretty=true');
    assert.equal(one.status, 200);
    assert.deepEqual(json(one), { id: 1, host: '127.0.0.1', port: 9093, state: 'running', brokerEpoch: 1 });
  });

  test('GET /v1/partitions lists partitions with leader, epoch, replicas, ISR and per-replica offsets', async () => {
    const view = new FakeClusterView(false, { partitions: samplePartitions() });
    const { port } = await start(view);
    const reply = await request(port, 'GET', '/v1/partitions');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['cache-control'], 'no-store');
    assert.deepEqual(json(reply), samplePartitions());
  });

  test('without fault injection, crash, start and stop answer 403 naming --fault-injection and never reach the view', async () => {
    const view = new FakeClusterView(false);
    const { port } = await start(view);
    for (const action of ['crash', 'start', 'stop']) {
      const reply = await request(port, 'POST', `/v1/brokers/1/${action}`);
      assert.equal(reply.status, 403);
      const body = json(reply) as { error: string };
      assert.match(body.error, /--fault-injection/);
    }
    assert.deepEqual(view.calls, []);
    assert.equal(view.brokerList[1]!.state, 'running');
  });

  test('with fault injection, crash stops a broker and start brings it back with a new epoch', async () => {
    const view = new FakeClusterView(true);
    const { port } = await start(view);
    const crashed = await request(port, 'POST', '/v1/brokers/1/crash');
    assert.equal(crashed.status, 200);
    assert.deepEqual(json(crashed), { id: 1, host: '127.0.0.1', port: 9093, state: 'stopped', brokerEpoch: 1 });
    assert.equal(view.brokerList[1]!.state, 'stopped');

    const again = await request(port, 'POST', '/v1/brokers/1/crash');
    assert.equal(again.status, 409);
    assert.deepEqual(json(again), { error: 'cannot crash broker 1: it is stopped' });

    const started = await request(port, 'POST', '/v1/brokers/1/start');
    assert.equal(started.status, 200);
    assert.deepEqual(json(started), { id: 1, host: '127.0.0.1', port: 9093, state: 'running', brokerEpoch: 2 });
    const twice = await request(port, 'POST', '/v1/brokers/1/start');
    assert.equal(twice.status, 409);
    assert.match((json(twice) as { error: string }).error, /cannot start broker 1: it is running/);
    assert.deepEqual(view.calls, ['crash 1', 'crash 1', 'start 1', 'start 1']);
  });

  test('with fault injection, stop shuts a broker down cleanly (409 when stopped) and start brings it back', async () => {
    const view = new FakeClusterView(true);
    const { port } = await start(view);
    const stopped = await request(port, 'POST', '/v1/brokers/2/stop');
    assert.equal(stopped.status, 200);
    assert.deepEqual(json(stopped), { id: 2, host: '127.0.0.1', port: 9094, state: 'stopped', brokerEpoch: 1 });
    const again = await request(port, 'POST', '/v1/brokers/2/stop');
    assert.equal(again.status, 409);
    assert.deepEqual(json(again), { error: 'cannot stop broker 2: it is stopped' });
    const started = await request(port, 'POST', '/v1/brokers/2/start');
    assert.equal(started.status, 200);
    assert.equal((json(started) as { state: string }).state, 'running');
    assert.equal((await request(port, 'GET', '/v1/brokers/2/stop')).status, 405);
    assert.deepEqual(view.calls, ['stop 2', 'stop 2', 'start 2']);
  });

  test('an unknown broker is 404, for GET, crash, start and stop', async () => {
    const { port } = await start(new FakeClusterView(true));
    for (const [method, path] of [
      ['GET', '/v1/brokers/7'],
      ['POST', '/v1/brokers/7/crash'],
      ['POST', '/v1/brokers/7/start'],
      ['POST', '/v1/brokers/7/stop'],
    ] as const) {
      const reply = await request(port, method, path);
      assert.equal(reply.status, 404, `${method} ${path}`);
      assert.deepEqual(json(reply), { error: 'unknown broker 7' });
    }
  });

  test('a malformed broker id or URL is 400, an unknown path 404, all as JSON', async () => {
    const view = new FakeClusterView(true);
    const { port } = await start(view);
    for (const id of ['abc', '-1', '1.5', '0x1', '99999999999', '%20']) {
      const reply = await request(port, 'POST', `/v1/brokers/${id}/crash`);
      assert.equal(reply.status, 400, id);
      assert.match((json(reply) as { error: string }).error, /malformed broker id/, id);
    }
    const badUrl = await request(port, 'GET', '/v1/brokers/%zz');
    assert.equal(badUrl.status, 400);
    assert.match((json(badUrl) as { error: string }).error, /malformed URL/);
    for (const path of ['/', '/v1', '/v1/brokers/1/reboot', '/v1/brokers/1/crash/now', '/v2/partitions', '/metricsx']) {
      const reply = await request(port, 'GET', path);
      assert.equal(reply.status, 404, path);
      assert.match((json(reply) as { error: string }).error, /^no such endpoint: GET /, path);
    }
    assert.deepEqual(view.calls, [], 'no malformed request reached the view');
  });

  test('a known path with another method is 405 with Allow', async () => {
    const view = new FakeClusterView(true);
    const { port } = await start(view);
    const cases: Array<[method: string, path: string, allow: string]> = [
      ['GET', '/v1/brokers/1/crash', 'POST'],
      ['DELETE', '/v1/brokers/1/start', 'POST'],
      ['POST', '/v1/brokers', 'GET'],
      ['PUT', '/v1/partitions', 'GET'],
      ['DELETE', '/metrics', 'GET'],
      ['HEAD', '/v1/brokers/0', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      const reply = await request(port, method, path);
      assert.equal(reply.status, 405, `${method} ${path}`);
      assert.equal(reply.headers.allow, allow, `${method} ${path}`);
      if (method !== 'HEAD') assert.match((json(reply) as { error: string }).error, new RegExp(`^method ${method}`));
    }
    assert.deepEqual(view.calls, []);
  });

  test('a view that throws gives 500 JSON and a log line, and the server serves the next request', async () => {
    const view = new FakeClusterView(false, { partitions: samplePartitions() });
    const logger = capturingLogger();
    const { port } = await start(view, logger);
    view.failNext(new Error('replica 2 did not answer'));
    const failed = await request(port, 'GET', '/v1/partitions');
    assert.equal(failed.status, 500);
    assert.deepEqual(json(failed), { error: 'internal error: replica 2 did not answer' });
    assert.equal(logger.errors.length, 1);
    assert.equal(logger.errors[0]!.msg, 'admin API request failed');
    assert.match(String((logger.errors[0]!.fields as { err: Error }).err.message), /replica 2 did not answer/);

    view.failNext(new TypeError('boom'));
    assert.equal((await request(port, 'GET', '/metrics')).status, 500, 'a scrape that fails is a 500 too');
    const next = await request(port, 'GET', '/v1/partitions');
    assert.equal(next.status, 200);
    assert.deepEqual(json(next), samplePartitions());
  });
});
