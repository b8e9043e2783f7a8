/**
 * The runtime's logger: pino, JSON lines, written synchronously to a file descriptor by default so a
 * worker that crashes right after logging (habit 3: log, then crash) does not lose the line. On a
 * worker thread `process.stdout` is relayed through the main thread asynchronously; writing to the fd
 * directly avoids that relay.
 */
import pino from 'pino';
import type { Logger } from '../io/logger';

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** pino level (`trace` .. `fatal`, `silent`); default env SKIFF_LOG_LEVEL, else `info`. */
  level?: string;
  /** Destination fd: 1 (stdout, default) or 2 (stderr). */
  fd?: 1 | 2;
  /** Synchronous writes (default true; see the module comment). */
  sync?: boolean;
  /** Fields on every line (e.g. `{ broker: 0 }`, `{ worker: 'broker/0#1' }`). */
  bindings?: Record<string, unknown>;
  /** Source of the `time` field in ms since the epoch (the simulation passes its virtual clock). */
  timeMs?: () => number;
}

/** The logger type {@link createLogger} returns: a pino logger, which satisfies actor.ts `Logger`. */
export type SkiffLogger = pino.Logger & Logger;

/** The log level from env SKIFF_LOG_LEVEL, else `fallback`. */
export function levelFromEnv(fallback = 'info'): string {
  const level = process.env.SKIFF_LOG_LEVEL;
  return level !== undefined && level !== '' ? level : fallback;
}

/** Creates a pino logger usable on the main thread and on workers. */
export function createLogger(options: LoggerOptions = {}): SkiffLogger {
  const timeMs = options.timeMs;
  const logger = pino(
    {
      level: options.level ?? levelFromEnv(),
      base: options.bindings ?? {},
      timestamp: timeMs === undefined ? pino.stdTimeFunctions.epochTime : () => `,"time":${timeMs()}`,
    },
    pino.destination({ fd: options.fd ?? 1, sync: options.sync ?? true }),
  );
  return logger;
}
