/**
 * The CLI's logger: the runtime's pino logger (src/runtime/logger.ts) writing JSON lines to stderr,
 * so that stdout carries only the CLI's own output (the `skiff listening on` line that tests parse).
 * Level from SKIFF_LOG_LEVEL (default `info`).
 */
import type { Logger } from '../io/logger';
import { createLogger } from '../runtime/logger';

/** Creates the process-wide logger for `skiff` commands; synchronous writes to fd 2. */
export function createCliLogger(): Logger {
  return createLogger({ fd: 2, bindings: { name: 'skiff' } });
}
