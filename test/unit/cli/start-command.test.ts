import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  listeningLine,
  runStart,
  DUPLICATE_SIGNAL_MS,
  START_ABORT_GRACE_MS,
  type BrokerHandle,
  type StartDeps,
} from '../../../src/cli/start-command';
import { buildBrokerConfig, type BrokerConfig } from '../../../src/config/broker-config';
import type { Logger } from '../../../src/io/logger';
import { StartAbortedError, StartupError } from '../../../src/startup-error';

interface Harness {
  deps: StartDeps;
  lines: string[];
  /** Lines written to stderr through printError. */
  errors: string[];
  /** Callbacks handed to schedule(), with their delay. */
  scheduled: Array<{ ms: number; fn: () => void }>;
  logs: Array<[level: string, text: string]>;
  exits: number[];
  stops: number;
  /** What deps.now() returns (ms); tests advance it. */
  nowMs: number;
  /** Delivers a signal to the registered listeners. */
  signal(name: 'SIGINT' | 'SIGTERM'): void;
  /** Resolves once exit() has been called. */
  exited(): Promise<number>;
}

/**
 * A fake process and broker; `startBroker` and `stop` behaviours are supplied per test (`start`
 * gets the abort signal runStart passes).
 */
function harness(opts: { start?: (signal: AbortSignal) => Promise<number>; stop?: () => Promise<void> } = {}): Harness {
  const listeners = new Map<string, Array<() => void>>();
  let resolveExit: (code: number) => void = () => undefined;
  const exitPromise = new Promise<number>((resolve) => (resolveExit = resolve));
  const h: Harness = {
    lines: [],
    errors: [],
    scheduled: [],
    logs: [],
    exits: [],
    stops: 0,
    nowMs: 0,
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
    startBroker: async (_config, _logger, { signal }): Promise<BrokerHandle> => ({
      boundPort: await (opts.start ?? (async () => 40123))(signal),
      stop: async () => {
        h.stops += 1;
        await (opts.stop ?? (async () => undefined))();
      },
    }),
    printLine: (line) => h.lines.push(line),
    printError: (line) => h.errors.push(line),
    schedule: (ms, fn) => h.scheduled.push({ ms, fn }),
    onSignal: (name, fn) => listeners.set(name, [...(listeners.get(name) ?? []), fn]),
    exit: (code) => {
      h.exits.push(code);
      resolveExit(code);
    },
    now: () => h.nowMs,
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

  it('exits 1 without a listening line when the broker fails to start, with one plain line on stderr', async () => {
    const h = harness({ start: async () => Promise.reject(new Error('EADDRINUSE\nsomething')) });
    await runStart(config, h.deps);
    assert.deepEqual(h.exits, [1]);
    assert.deepEqual(h.lines, []);
    assert.equal(h.errors.length, 1);
    assert.match(h.errors[0]!, /^skiff: the broker failed to start: EADDRINUSE something /);
  });

  for (const exitCode of [1, 2] as const) {
    it(`prints a StartupError's line as is and exits with its code (${exitCode})`, async () => {
      const message = 'port 9092 is in use (cannot listen on 127.0.0.1:9092): choose another port with --port';
      const h = harness({ start: async () => Promise.reject(new StartupError(message, exitCode)) });
      await runStart(config, h.deps);
      assert.deepEqual(h.exits, [exitCode]);
      assert.deepEqual(h.errors, [`skiff: ${message}`]);
      assert.ok(!h.logs.some(([level]) => level === 'error'), 'no JSON error line beside the plain one');
    });
  }

  it('a signal while starting aborts the start (whatever it waits on) and exits 0', async () => {
    let seen: AbortSignal | null = null;
    const h = harness({
      start: (signal) =>
        new Promise<number>((_resolve, reject) => {
          seen = signal;
          signal.addEventListener('abort', () => reject(new StartAbortedError()));
        }),
    });
    const running = runStart(config, h.deps);
    h.signal('SIGTERM');
    await running;
    assert.equal(await h.exited(), 0);
    assert.equal((seen as AbortSignal | null)?.aborted, true);
    assert.equal(h.stops, 0, 'the broker was never handed over: startBroker stops what it started');
    assert.deepEqual(h.lines, []);
    assert.deepEqual(h.errors, []);
  });

  it('a signal held from before runStart (replayed as it registers) starts nothing and exits 0', async () => {
    let starts = 0;
    const h = harness({
      start: async () => {
        starts += 1;
        return 40123;
      },
    });
    const register = h.deps.onSignal;
    h.deps.onSignal = (name, fn) => {
      register(name, fn);
      if (name === 'SIGTERM') fn(); // start-signals.ts replays a signal that came during module loading
    };
    await runStart(config, h.deps);
    assert.deepEqual(h.exits, [0]);
    assert.equal(starts, 0, 'startBroker was not called');
    assert.deepEqual(h.lines, []);
    assert.deepEqual(h.errors, []);
  });

  it('an interrupted start that does not end in time exits with 128 + the signal number', async () => {
    const h = harness({ start: () => new Promise<number>(() => undefined) }); // ignores the abort
    void runStart(config, h.deps);
    h.signal('SIGTERM');
    assert.deepEqual(h.exits, []);
    assert.equal(h.scheduled.length, 1);
    assert.equal(h.scheduled[0]!.ms, START_ABORT_GRACE_MS);
    h.scheduled[0]!.fn();
    assert.deepEqual(h.exits, [143]);
  });

  it('a second signal while an interrupted start stops exits at once', async () => {
    const h = harness({ start: () => new Promise<number>(() => undefined) });
    void runStart(config, h.deps);
    h.signal('SIGINT');
    h.nowMs += DUPLICATE_SIGNAL_MS;
    h.signal('SIGINT');
    assert.deepEqual(h.exits, [130]);
  });

  it('the same signal twice at once (Ctrl-C under npm start: terminal and npm) is one request', async () => {
    const h = harness({ stop: () => new Promise(() => undefined) }); // stop never finishes
    await runStart(config, h.deps);
    h.signal('SIGINT');
    h.nowMs += DUPLICATE_SIGNAL_MS - 1;
    h.signal('SIGINT');
    assert.deepEqual(h.exits, [], 'still stopping cleanly');
    assert.equal(h.stops, 1);
    h.nowMs += 1;
    h.signal('SIGINT');
    assert.deepEqual(h.exits, [130], 'a later repeat is a second request');
  });

  it('stops right after start when the signal comes as the start completes', async () => {
    let finishStart: (port: number) => void = () => undefined;
    const h = harness({ start: () => new Promise<number>((resolve) => (finishStart = resolve)) });
    const running = runStart(config, h.deps);
    h.signal('SIGTERM');
    assert.equal(h.stops, 0);
    finishStart(5555); // a start that completes despite the abort
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

describe('start-up messages', () => {
  it('a ConfigError becomes one line with every problem', async () => {
    const { configErrorLine } = await import('../../../src/cli/main');
    const { ConfigError } = await import('../../../src/config/broker-config');
    const line = configErrorLine(new ConfigError(['Unknown configuration "a" (nearest known key: b)', 'bad\nvalue']));
    assert.equal(
      line,
      'skiff: invalid configuration: Unknown configuration "a" (nearest known key: b); bad value (fix the config file or the --override)',
    );
  });

  it('SKIFF_LOG_LEVEL and SKIFF_LOG_FORMAT are checked, listing what is allowed', async () => {
    const { logEnvProblem } = await import('../../../src/runtime/logger');
    assert.equal(logEnvProblem({}), null);
    assert.equal(logEnvProblem({ SKIFF_LOG_LEVEL: '' }), null);
    assert.equal(logEnvProblem({ SKIFF_LOG_LEVEL: 'debug', SKIFF_LOG_FORMAT: 'pretty' }), null);
    assert.equal(
      logEnvProblem({ SKIFF_LOG_LEVEL: 'bogus' }),
      'SKIFF_LOG_LEVEL=bogus is not a log level: use one of trace, debug, info, warn, error, fatal, silent',
    );
    assert.equal(
      logEnvProblem({ SKIFF_LOG_FORMAT: 'xml' }),
      'SKIFF_LOG_FORMAT=xml is not a log format: use one of json, pretty',
    );
  });
});
