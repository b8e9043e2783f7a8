/**
 * `skiff start`: run a broker until SIGINT or SIGTERM. The broker, the output and the process are
 * injected so tests can drive the whole lifecycle with a fake broker and fake signals.
 *
 * Lifecycle: start the broker; print `skiff listening on <host>:<port>` (one line on stdout, the
 * only one); on the first SIGINT/SIGTERM await `stop()` and exit 0 (1 if stop fails); a second
 * signal exits at once with 128 + the signal number. A signal that arrives while the broker is
 * starting stops it as soon as it has started.
 */
import { strict as assert } from 'node:assert';
import type { BrokerConfig } from '../config/broker-config';
import type { Logger } from '../io/logger';

/** What `startBroker` (src/broker.ts) returns: the bound client port and an ordered shutdown. */
export interface BrokerHandle {
  boundPort: number;
  stop(): Promise<void>;
}

/** The contract of `startBroker` in src/broker.ts. */
export type StartBrokerFn = (config: BrokerConfig, logger: Logger) => Promise<BrokerHandle>;

/** Everything `runStart` touches outside itself. */
export interface StartDeps {
  startBroker: StartBrokerFn;
  logger: Logger;
  /** Writes one line (no newline included) to stdout. */
  printLine(line: string): void;
  /** Registers a signal listener (process.on in production). */
  onSignal(signal: 'SIGINT' | 'SIGTERM', listener: () => void): void;
  /** Ends the process (process.exit in production). */
  exit(code: number): void;
}

const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 } as const;

/** The line printed once the broker accepts connections; tests and scripts parse it. */
export function listeningLine(host: string, port: number): string {
  return `skiff listening on ${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Starts the broker and wires shutdown. Resolves once the broker is serving (or has failed: then
 * it has logged the error and called `exit(1)`).
 */
export async function runStart(config: BrokerConfig, deps: StartDeps): Promise<void> {
  const { logger } = deps;
  let handle: BrokerHandle | null = null;
  let stopRequested = false;
  let exited = false;
  const exit = (code: number): void => {
    if (exited) return;
    exited = true;
    deps.exit(code);
  };
  const stop = (): void => {
    if (handle === null) return; // still starting: stopped right after start
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
      if (stopRequested) {
        logger.warn({ signal }, 'second signal: exiting without a clean shutdown');
        exit(128 + SIGNAL_NUMBERS[signal]);
        return;
      }
      stopRequested = true;
      logger.info({ signal }, 'shutting down');
      stop();
    });
  }

  for (const warning of config.warnings) logger.warn(warning);
  try {
    handle = await deps.startBroker(config, logger);
  } catch (err) {
    logger.error({ err }, 'broker failed to start');
    exit(1);
    return;
  }
  if (stopRequested) {
    stop();
    return;
  }
  const listener = config.listeners[0];
  assert(listener !== undefined, 'a parsed BrokerConfig has one listener');
  deps.printLine(listeningLine(listener.host, handle.boundPort));
}
