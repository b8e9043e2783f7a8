import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listeningLine, runStart, type BrokerHandle, type StartDeps } from '../../../src/cli/start-command';
import { buildBrokerConfig, type BrokerConfig } from '../../../src/config/broker-config';
import type { Logger } from '../../../src/io/logger';

interface Harness {
  deps: StartDeps;
  lines: string[];
  logs: Array<[level: string, text: string]>;
  exits: number[];
  stops: number;
  /** Delivers a signal to the registered listeners. */
  signal(name: 'SIGINT' | 'SIGTERM'): void;
  /** Resolves once exit() has been called. */
  exited(): Promise<number>;
}

/** A fake process and broker; `startBroker` and `stop` behaviours are supplied per test. */
function harness(opts: { start?: () => Promise<number>; stop?: () => Promise<void> } = {}): Harness {
  const listeners = new Map<string, Array<() => void>>();
  let resolveExit: (code: number) => void = () => undefined;
  const exitPromise = new Promise<number>((resolve) => (resolveExit = resolve));
  const h: Harness = {
    lines: [],
    logs: [],
    exits: [],
    stops: 0,
    signal: (name) => listeners.get(name)?.forEach((fn) => fn()),
    exited: () => exitPromise,
    deps: undefined as unknown as StartDeps,
  };
  const log =
    (level: string) =>
    (fields: object | string, msg?: string): void => {
      h.logs.push([level, typeof fields === 'string' ? fields : (msg ?? '')]);
    };
  const logger: Logger = {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: () => logger,
  };
  h.deps = {
    logger,
    startBroker: async (): Promise<BrokerHandle> => ({
      boundPort: await (opts.start ?? (async () => 40123))(),
      stop: async () => {
        h.stops += 1;
        await (opts.stop ?? (async () => undefined))();
      },
    }),
    printLine: (line) => h.lines.push(line),
    onSignal: (name, fn) => listeners.set(name, [...(listeners.get(name) ?? []), fn]),
    exit: (code) => {
      h.exits.push(code);
      resolveExit(code);
    },
  };
  return h;
}

const config: BrokerConfig = buildBrokerConfig(new Map([['listeners', 'PLAINTEXT://127.0.0.1:0']]));

describe('runStart', () => {
  it('prints exactly one listening line with the bound port', async () => {
    const h = harness();
    await runStart(config, h.deps);
    assert.deepEqual(h.lines, ['skiff listening on 127.0.0.1:40123']);
    assert.deepEqual(h.exits, []);
  });

  it('logs config warnings', async () => {
    const h = harness();
    await runStart(buildBrokerConfig(new Map([['zookeeper.connect', 'zk:2181']])), h.deps);
    assert.ok(h.logs.some(([level, text]) => level === 'warn' && text.includes('zookeeper.connect')));
  });

  for (const name of ['SIGINT', 'SIGTERM'] as const) {
    it(`stops cleanly and exits 0 on ${name}`, async () => {
      const h = harness();
      await runStart(config, h.deps);
      h.signal(name);
      assert.equal(await h.exited(), 0);
      assert.equal(h.stops, 1);
    });
  }

  it('exits at once on a second signal while stopping', async () => {
    const h = harness({ stop: () => new Promise(() => undefined) }); // stop never finishes
    await runStart(config, h.deps);
    h.signal('SIGTERM');
    h.signal('SIGINT');
    assert.equal(await h.exited(), 130);
    assert.deepEqual(h.exits, [130]);
    assert.equal(h.stops, 1);
  });

  it('exits 1 when stop fails', async () => {
    const h = harness({ stop: async () => Promise.reject(new Error('disk gone')) });
    await runStart(config, h.deps);
    h.signal('SIGINT');
    assert.equal(await h.exited(), 1);
    assert.ok(h.logs.some(([level]) => level === 'error'));
  });

  it('exits 1 without a listening line when the broker fails to start', async () => {
    const h = harness({ start: async () => Promise.reject(new Error('EADDRINUSE')) });
    await runStart(config, h.deps);
    assert.deepEqual(h.exits, [1]);
    assert.deepEqual(h.lines, []);
  });

  it('stops right after start when a signal arrives while starting', async () => {
    let finishStart: (port: number) => void = () => undefined;
    const h = harness({ start: () => new Promise<number>((resolve) => (finishStart = resolve)) });
    const running = runStart(config, h.deps);
    h.signal('SIGTERM');
    assert.equal(h.stops, 0);
    finishStart(5555);
    await running;
    assert.equal(await h.exited(), 0);
    assert.equal(h.stops, 1);
    assert.deepEqual(h.lines, []);
  });
});

describe('listeningLine', () => {
  it('brackets IPv6 hosts', () => {
    assert.equal(listeningLine('127.0.0.1', 9092), 'skiff listening on 127.0.0.1:9092');
    assert.equal(listeningLine('::1', 9092), 'skiff listening on [::1]:9092');
  });
});
