/**
 * The real process behind {@link CliIo}: stdout with backpressure (and a quiet exit when the
 * reader goes away, e.g. `skiff consume ... | head`), stderr lines, stdin, the environment, SIGINT.
 */
import type { CliIo } from './client-io';

/** A {@link CliIo} on process.stdout, process.stderr, process.stdin, process.env and SIGINT. */
export function processIo(): CliIo {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
  return {
    out: (data) =>
      process.stdout.write(data)
        ? undefined
        : new Promise<void>((resolve) => {
            process.stdout.once('drain', resolve);
          }),
    err: (line) => {
      process.stderr.write(`${line}\n`);
    },
    stdin: process.stdin,
    env: process.env,
    onInterrupt: (listener) => {
      process.once('SIGINT', listener);
    },
  };
}
