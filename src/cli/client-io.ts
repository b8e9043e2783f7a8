/**
 * What the client commands (`skiff topic|produce|consume|perf`) share: the process streams behind
 * an interface (so tests can drive a command in-process), the `--brokers` default, connecting and
 * turning failures into exit codes, key=value parsing, aligned tables and progress lines.
 *
 * Exit codes: 0 success; 1 the operation failed (broker error, connection refused: the reason on
 * stderr); 2 usage errors (commander, before a command runs).
 */
import { KafkaClient } from '../client/client';
import { ConnectionError, KafkaError, UnsupportedApiError } from '../client/errors';
import { ProtocolError } from '../protocol/primitives';

/** The default bootstrap broker when neither `--brokers` nor SKIFF_BROKERS says otherwise. */
export const DEFAULT_BROKERS = '127.0.0.1:9092';

/** Exit code of a command whose operation failed. */
export const EXIT_FAILURE = 1;

/** A client command's view of the process. */
export interface CliIo {
  /** Writes to stdout (text or raw bytes). Resolves when the stream can take more. */
  out(data: string | Buffer): Promise<void> | void;
  /** Writes one line of progress or diagnostics to stderr. */
  err(line: string): void;
  /** stdin, for `skiff produce`. */
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** Registers a Ctrl-C handler (process.once('SIGINT') in production). */
  onInterrupt(listener: () => void): void;
}

/** A command ready to run against the process: resolves with its exit code. */
export type ClientCommandRun = (io: CliIo) => Promise<number>;

/** The broker list for a command: `--brokers`, else SKIFF_BROKERS, else {@link DEFAULT_BROKERS}. */
export function resolveBrokers(option: string | undefined, env: NodeJS.ProcessEnv): string {
  return option ?? (env.SKIFF_BROKERS !== undefined && env.SKIFF_BROKERS !== '' ? env.SKIFF_BROKERS : DEFAULT_BROKERS);
}

/**
 * Connects to `brokers`, runs `fn` and closes the client. Resolves with `fn`'s exit code, or with
 * {@link EXIT_FAILURE} after writing `skiff: <reason>` to stderr when connecting or `fn` throws a
 * Kafka, connection, protocol or unsupported-API error (anything else is a bug and propagates).
 */
export async function withClient(
  brokers: string,
  io: CliIo,
  fn: (client: KafkaClient) => Promise<number>,
): Promise<number> {
  let client: KafkaClient | null = null;
  try {
    client = await KafkaClient.connect({ brokers, clientId: 'skiff-cli' });
    return await fn(client);
  } catch (err) {
    if (isOperatingError(err)) {
      io.err(`skiff: ${(err as Error).message}`);
      return EXIT_FAILURE;
    }
    throw err;
  } finally {
    client?.close();
  }
}

/** Whether `err` is an expected failure of an operation (reported, exit 1) rather than a bug. */
export function isOperatingError(err: unknown): boolean {
  return (
    err instanceof KafkaError ||
    err instanceof ConnectionError ||
    err instanceof UnsupportedApiError ||
    err instanceof ProtocolError ||
    err instanceof RangeError
  );
}

/** Splits `key=value` at the first `=`; throws RangeError without one or with an empty key. */
export function parseKeyValue(text: string): [string, string] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new RangeError(`expected key=value, got ${JSON.stringify(text)}`);
  return [text.slice(0, eq), text.slice(eq + 1)];
}

/** Formats rows as space-aligned columns (the first row is the header), one string per line. */
export function formatTable(rows: ReadonlyArray<ReadonlyArray<string | number>>): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, String(cell).length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? String(cell) : String(cell).padEnd(widths[i]! + 2)))
      .join('')
      .trimEnd(),
  );
}

/**
 * Calls `tick` every `intervalMs` (default 5 s) until stopped; for progress lines on stderr during
 * long runs. The timer does not keep the process alive.
 */
export function startProgress(tick: () => void, intervalMs = 5000): { stop(): void } {
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
