/**
 * Command-line parsing for `skiff`, kept free of side effects so tests can run it without a
 * broker: {@link parseCliArgs} turns argv into a {@link CliCommand}, and
 * {@link resolveStartConfig} turns `skiff start` arguments into a validated {@link BrokerConfig}.
 *
 * Precedence, lowest first: built-in defaults, the properties file, each `--override` in order,
 * then `--port` and `--data-dir`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import {
  buildBrokerConfig,
  ConfigError,
  parseProperties,
  PropertiesSyntaxError,
  type BrokerConfig,
} from '../config/broker-config';
import { registerClientCommands } from './client-commands';
import type { ClientCommandRun } from './client-io';
import { registerVerifyCommand } from './verify-command';

/** Arguments of `skiff start`. */
export interface StartArgs {
  /** Path of a Kafka-style server.properties, or null for defaults only. */
  propertiesFile: string | null;
  /** `--override key=value` pairs, in command-line order. */
  overrides: Array<[key: string, value: string]>;
  /** `--port N`: listen and advertise on 127.0.0.1:N (0 = pick a free port). */
  port: number | null;
  /** `--data-dir DIR`: sets log.dirs. */
  dataDir: string | null;
  /** `--nodes N`: how many brokers this process runs (node ids 0..N-1; default 1). */
  nodes: number;
  /** `--admin-port N` (0 = a free port), or null for the default (see main.ts: 9644, or free with `--port 0`). */
  adminPort: number | null;
  /** `--fault-injection`: the admin API may crash and start brokers. */
  faultInjection: boolean;
}

/**
 * What argv asks for: start a broker, run a client command (topic, produce, consume, perf: see
 * client-commands.ts), or exit now (after help, version or a usage error).
 */
export type CliCommand =
  { kind: 'start'; args: StartArgs } | { kind: 'client'; run: ClientCommandRun } | { kind: 'exit'; exitCode: number };

/** Where commander writes help (out) and usage errors (err). */
export interface CliOutput {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

/** Exit code for a usage or configuration error (as bash builtins use 2). */
export const EXIT_USAGE = 2;

const defaultOutput: CliOutput = {
  writeOut: (text) => process.stdout.write(text),
  writeErr: (text) => process.stderr.write(text),
};

/**
 * Parses `argv` (without node and script path). Help and `--version` text go to `output.writeOut`
 * and give exit code 0; usage errors go to `output.writeErr` and give {@link EXIT_USAGE}.
 */
export function parseCliArgs(argv: readonly string[], output: CliOutput = defaultOutput): CliCommand {
  let command: CliCommand | null = null;
  const program = new Command('skiff')
    .description('A single-host, Kafka-wire-compatible message broker')
    .version(packageVersion(), '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: output.writeOut, writeErr: output.writeErr });
  program
    .command('start')
    .description('start a broker and serve until SIGINT or SIGTERM')
    .argument('[server.properties]', 'Kafka-style broker config file')
    .option(
      '--override <key=value>',
      'set a config key (repeatable; applied after the file, in order)',
      collectOverride,
    )
    .option('--port <n>', 'listen and advertise on 127.0.0.1:<n> (0 = pick a free port)', parsePort)
    .option('--data-dir <dir>', 'directory for partition logs (sets log.dirs)')
    .option(
      '--nodes <n>',
      'run a cluster of n brokers in this process: node ids 0..n-1 on ports port..port+n-1, logs in <data-dir>/node-<i>',
      parseNodes,
    )
    .option(
      '--admin-port <n>',
      'serve the admin HTTP API on 127.0.0.1:<n> (default 9644; a free port with --port 0; 0 = a free port)',
      parsePort,
    )
    .option('--fault-injection', 'let the admin API crash and start brokers (POST /v1/brokers/{id}/crash|start)')
    .action(
      (
        file: string | undefined,
        options: {
          override?: Array<[string, string]>;
          port?: number;
          dataDir?: string;
          nodes?: number;
          adminPort?: number;
          faultInjection?: boolean;
        },
      ) => {
        const nodes = options.nodes ?? 1;
        if (options.port !== undefined && options.port !== 0 && options.port + nodes - 1 > 65535) {
          output.writeErr(
            `error: --port ${options.port} with --nodes ${nodes} needs ports up to ${options.port + nodes - 1}, ` +
              `past 65535: choose a lower --port (or --port 0)\n`,
          );
          command = { kind: 'exit', exitCode: EXIT_USAGE };
          return;
        }
        command = {
          kind: 'start',
          args: {
            propertiesFile: file ?? null,
            overrides: options.override ?? [],
            port: options.port ?? null,
            dataDir: options.dataDir ?? null,
            nodes,
            adminPort: options.adminPort ?? null,
            faultInjection: options.faultInjection ?? false,
          },
        };
      },
    );
  registerClientCommands(program, (run) => {
    command = { kind: 'client', run };
  });
  registerVerifyCommand(program, (run) => {
    command = { kind: 'client', run };
  });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return { kind: 'exit', exitCode: err.exitCode === 0 ? 0 : EXIT_USAGE };
    throw err;
  }
  return command ?? { kind: 'exit', exitCode: EXIT_USAGE };
}

/**
 * Builds the broker config for `skiff start`: the file (read with `readFile`, UTF-8), then the
 * overrides, then `--port` / `--data-dir`. Throws {@link ConfigError} for an unreadable or
 * malformed file and for anything {@link buildBrokerConfig} rejects (a malformed `listeners` too,
 * though `--port` replaces it).
 */
export function resolveStartConfig(
  args: StartArgs,
  readFile: (file: string) => string = (file) => fs.readFileSync(file, 'utf8'),
): BrokerConfig {
  const props =
    args.propertiesFile === null ? new Map<string, string>() : readPropertiesFile(args.propertiesFile, readFile);
  for (const [key, value] of args.overrides) props.set(key, value);
  if (args.dataDir !== null) props.set('log.dirs', args.dataDir);
  if (args.port !== null) {
    // --port replaces the listeners, but a malformed one in the file or an override is still an
    // error (Kafka refuses to start on it), not silently ignored.
    if (props.has('listeners') || props.has('advertised.listeners')) buildBrokerConfig(props);
    const listener = `PLAINTEXT://127.0.0.1:${args.port}`;
    props.set('listeners', listener);
    props.set('advertised.listeners', listener);
  }
  return buildBrokerConfig(props);
}

function readPropertiesFile(file: string, readFile: (file: string) => string): Map<string, string> {
  let text: string;
  try {
    text = readFile(file);
  } catch (err) {
    throw new ConfigError([`Cannot read config file ${file}: ${(err as Error).message}`]);
  }
  try {
    return parseProperties(text);
  } catch (err) {
    if (err instanceof PropertiesSyntaxError) throw new ConfigError([`${file}: ${err.message}`]);
    throw err;
  }
}

/** Commander option parser for `--override key=value` (split at the first `=`; the key is trimmed). */
function collectOverride(text: string, previous: Array<[string, string]> | undefined): Array<[string, string]> {
  const eq = text.indexOf('=');
  const key = eq < 0 ? '' : text.slice(0, eq).trim();
  if (key === '') throw new InvalidArgumentError('Expected key=value.');
  return [...(previous ?? []), [key, text.slice(eq + 1)]];
}

/** Commander option parser for `--port`: a decimal integer in 0..65535. */
function parsePort(text: string): number {
  const port = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new InvalidArgumentError('Expected a port number in 0..65535.');
  return port;
}

/** The largest `--nodes`: each broker has its own worker pool, and they share this host's cores. */
export const MAX_NODES = 16;

/** Commander option parser for `--nodes`: a decimal integer in 1..{@link MAX_NODES}. */
function parseNodes(text: string): number {
  const nodes = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(nodes >= 1 && nodes <= MAX_NODES))
    throw new InvalidArgumentError(`Expected a number of brokers in 1..${MAX_NODES}.`);
  return nodes;
}

function packageVersion(): string {
  try {
    const file = path.join(__dirname, '..', '..', '..', 'package.json'); // dist/src/cli -> repo root
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
