/**
 * A start-up failure the operator can act on: a port in use, a log dir that is locked, foreign,
 * read-only or on a pseudo file system, an aborted start. `message` is one plain line that names
 * the problem and the fix; `skiff start` prints it as `skiff: <message>` on stderr (no stack) and
 * exits with `exitCode`: 2 (EXIT_USAGE) when the command or config asks for something impossible,
 * 1 when the machine's state is in the way (something else holds the port or the dir).
 */

/** Exit code of a usage or configuration error (as src/cli/args.ts's EXIT_USAGE). */
export const EXIT_CONFIG = 2;
/** Exit code of any other start-up failure. */
export const EXIT_FAILURE = 1;

/** A start-up failure with one plain line for the operator; see the module comment. */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: typeof EXIT_CONFIG | typeof EXIT_FAILURE,
  ) {
    super(message);
    this.name = 'StartupError';
  }
}

/** The start was ended by a signal (SIGINT/SIGTERM) before the broker served. */
export class StartAbortedError extends Error {
  constructor() {
    super('start interrupted by a signal');
    this.name = 'StartAbortedError';
  }
}

/**
 * Resolves or rejects as `promise` does, or rejects with {@link StartAbortedError} as soon as
 * `signal` aborts (the promise keeps running; its outcome is ignored).
 */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(new StartAbortedError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new StartAbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Errno code of a Node system error, or undefined. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
