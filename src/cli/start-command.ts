/**
 * `skiff start`: run a broker until SIGINT or SIGTERM. The broker, the output and the process are
 * injected so tests can drive the whole lifecycle with a fake broker and fake signals.
 *
 * Lifecycle: start the broker (or `--nodes` brokers); print `skiff listening on <host>:<port>` (one
 * line per broker on stdout, the only ones); on the first SIGINT/SIGTERM await `stop()` and exit 0 (1 if stop fails); a second
 * signal exits at once with 128 + the signal number (the first one repeated within
 * {@link DUPLICATE_SIGNAL_MS} is a duplicate delivery and ignored). A signal that arrives while the broker is
 * starting aborts the start (whatever it waits on), which stops what has started and exits 0; if
 * that takes longer than {@link START_ABORT_GRACE_MS}, the process exits with 128 + the signal
 * number. A start that fails prints one plain line on stderr, `skiff: <problem>: <fix>`, and exits
 * with the error's code (2 for a configuration error, 1 otherwise).
 */
import { strict as assert } from 'node:assert';
import type { BrokerConfig } from '../config/broker-config';
import type { Logger } from '../io/logger';
import { StartAbortedError, StartupError } from '../startup-error';

/** What starting returns: the bound client port of each broker (node id order) and an ordered shutdown. */
export interface BrokerHandle {
  boundPort: number;
  /** Every broker's bound port when the process runs several (`--nodes`); absent for one. */
  boundPorts?: number[];
  /** The admin HTTP API's port, when it serves one. */
  adminPort?: number | null;
  stop(): Promise<void>;
}

/**
 * The contract of `startBroker` in src/broker.ts: rejects with StartupError (a plain line and an
 * exit code) for what the operator can fix, with StartAbortedError once `signal` aborted it.
 */
export type StartBrokerFn = (config: BrokerConfig, logger: Logger, options: StartOptions) => Promise<BrokerHandle>;

/** What `skiff start`'s flags ask of the start beyond the config. */
export interface StartOptions {
  signal: AbortSignal;
  /** How many brokers (`--nodes`). */
  nodes: number;
  /** The admin API's port; `defaulted` when no --admin-port was given (then a port in use only warns). */
  admin: { port: number; defaulted: boolean } | null;
  faultInjection: boolean;
}

/** Everything `runStart` touches outside itself. */
export interface StartDeps {
  startBroker: StartBrokerFn;
  logger: Logger;
  /** Writes one line (no newline included) to stdout. */
  printLine(line: string): void;
  /** Writes one line (no newline included) to stderr: a failed start's plain message. */
  printError(line: string): void;
  /**
   * Registers a signal listener (process.on in production, through start-signals.ts, which may call
   * `listener` at once for a signal that arrived before).
   */
  onSignal(signal: 'SIGINT' | 'SIGTERM', listener: () => void): void;
  /** Runs `fn` once after `ms` without keeping the process alive (an unref'd setTimeout in production). */
  schedule(ms: number, fn: () => void): void;
  /** Ends the process (process.exit in production). */
  exit(code: number): void;
  /** A monotonic clock in ms (performance.now in production): tells a repeated signal from a duplicate. */
  now(): number;
}

const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 } as const;

/**
 * A repeat of the first signal within this window is the same request delivered twice, not a second
 * one (ms): a Ctrl-C under `npm start` reaches the broker from the terminal (the process group) and
 * again from npm, which forwards SIGINT and SIGTERM to its child (@npmcli/run-script's signal manager).
 */
export const DUPLICATE_SIGNAL_MS = 500;

/** How long an interrupted start may take to stop what it started before the process just exits (ms). */
export const START_ABORT_GRACE_MS = 10_000;

/** The line printed once the broker accepts connections; tests and scripts parse it. */
export function listeningLine(host: string, port: number): string {
  return `skiff listening on ${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Starts the broker and wires shutdown. Resolves once the broker is serving (or has failed or been
 * interrupted: then it has printed why and called `exit`).
 */
export async function runStart(
  config: BrokerConfig,
  deps: StartDeps,
  flags: Omit<StartOptions, 'signal'> = { nodes: 1, admin: null, faultInjection: false },
): Promise<void> {
  const { logger } = deps;
  let handle: BrokerHandle | null = null;
  let stopRequested = false;
  let firstSignal: { signal: 'SIGINT' | 'SIGTERM'; atMs: number } | null = null;
  let exited = false;
  const aborter = new AbortController();
  const exit = (code: number): void => {
    if (exited) return;
    exited = true;
    deps.exit(code);
  };
  const stop = (): void => {
    if (handle === null) return;
    handle.stop().then(
      () => {
        logger.debug('shutdown complete');
        exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'broker shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    deps.onSignal(signal, () => {
      if (
        firstSignal !== null &&
        firstSignal.signal === signal &&
        deps.now() - firstSignal.atMs < DUPLICATE_SIGNAL_MS
      ) {
        logger.debug({ signal }, 'the same signal again at once: one request delivered twice');
        return;
      }
      if (stopRequested) {
        logger.warn({ signal }, 'second signal: exiting without a clean shutdown');
        exit(128 + SIGNAL_NUMBERS[signal]);
        return;
      }
      stopRequested = true;
      firstSignal = { signal, atMs: deps.now() };
      if (handle !== null) {
        logger.info({ signal }, 'shutting down');
        stop();
        return;
      }
      // Still starting: end the start wherever it waits; startBroker stops what had started.
      logger.info({ signal }, 'interrupting the start');
      aborter.abort();
      deps.schedule(START_ABORT_GRACE_MS, () => {
        logger.warn({ signal, graceMs: START_ABORT_GRACE_MS }, 'the interrupted start did not stop in time: exiting');
        exit(128 + SIGNAL_NUMBERS[signal]);
      });
    });
  }

  for (const warning of config.warnings) logger.warn(warning);
  if (stopRequested) {
    // A signal held since the process began (start-signals.ts) was replayed above: start nothing.
    logger.info('start interrupted before the broker started: nothing to stop');
    exit(0);
    return;
  }
  try {
    handle = await deps.startBroker(config, logger, { ...flags, signal: aborter.signal });
  } catch (err) {
    if (stopRequested || err instanceof StartAbortedError) {
      logger.info('start interrupted: stopped');
      exit(0);
    } else if (err instanceof StartupError) {
      deps.printError(`skiff: ${err.message}`);
      exit(err.exitCode);
    } else {
      logger.debug({ err }, 'broker failed to start');
      deps.printError(
        `skiff: the broker failed to start: ${(err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ')} ` +
          '(SKIFF_LOG_LEVEL=debug logs the stack)',
      );
      exit(1);
    }
    return;
  }
  if (stopRequested) {
    // The signal came as the start finished: stop as after a start.
    stop();
    return;
  }
  const listener = config.listeners[0];
  assert(listener !== undefined, 'a parsed BrokerConfig has one listener');
  for (const port of handle.boundPorts ?? [handle.boundPort]) deps.printLine(listeningLine(listener.host, port));
  if (handle.adminPort !== undefined && handle.adminPort !== null)
    deps.printLine(`skiff admin API on http://127.0.0.1:${handle.adminPort}`);
}
