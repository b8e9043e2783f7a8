/**
 * The runtime's logger: pino, JSON lines, written synchronously to a file descriptor by default so a
 * worker that crashes right after logging (habit 3: log, then crash) does not lose the line. On a
 * worker thread `process.stdout` is relayed through the main thread asynchronously; writing to the fd
 * directly avoids that relay.
 *
 * Format: JSON lines for machines; when the destination fd is a terminal, pino-pretty's one line per
 * entry (time, level, message, then the fields), still written synchronously to the fd. The
 * environment's SKIFF_LOG_FORMAT=json or =pretty forces one or the other.
 */
import { isatty } from 'node:tty';
import pino from 'pino';
import pinoPretty from 'pino-pretty';
import type { Logger } from '../io/logger';

/** The levels SKIFF_LOG_LEVEL accepts (pino's), most verbose first; `silent` logs nothing. */
export const LOG_LEVELS: readonly string[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
/** The formats SKIFF_LOG_FORMAT accepts. */
export const LOG_FORMATS: readonly string[] = ['json', 'pretty'];

/**
 * Why the environment's logging settings are unusable, as one plain line naming the fix, or null
 * when SKIFF_LOG_LEVEL and SKIFF_LOG_FORMAT are unset, empty or valid.
 */
export function logEnvProblem(env: NodeJS.ProcessEnv = process.env): string | null {
  const level = env.SKIFF_LOG_LEVEL;
  if (level !== undefined && level !== '' && !LOG_LEVELS.includes(level))
    return `SKIFF_LOG_LEVEL=${level} is not a log level: use one of ${LOG_LEVELS.join(', ')}`;
  const format = env.SKIFF_LOG_FORMAT;
  if (format !== undefined && format !== '' && !LOG_FORMATS.includes(format))
    return `SKIFF_LOG_FORMAT=${format} is not a log format: use one of ${LOG_FORMATS.join(', ')}`;
  return null;
}

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

/** Whether lines to `fd` are pretty-printed: SKIFF_LOG_FORMAT if set, else whether `fd` is a terminal. */
export function prettyFor(fd: number, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.SKIFF_LOG_FORMAT === 'json') return false;
  if (env.SKIFF_LOG_FORMAT === 'pretty') return true;
  return isatty(fd);
}

/** Creates a pino logger usable on the main thread and on workers. */
export function createLogger(options: LoggerOptions = {}): SkiffLogger {
  const timeMs = options.timeMs;
  const fd = options.fd ?? 1;
  const sync = options.sync ?? true;
  const destination = prettyFor(fd)
    ? pinoPretty({ destination: fd, sync, colorize: isatty(fd), translateTime: 'SYS:HH:MM:ss.l' })
    : pino.destination({ fd, sync });
  const logger = pino(
    {
      level: options.level ?? levelFromEnv(),
      base: options.bindings ?? {},
      timestamp: timeMs === undefined ? pino.stdTimeFunctions.epochTime : () => `,"time":${timeMs()}`,
    },
    destination,
  );
  return logger;
}
