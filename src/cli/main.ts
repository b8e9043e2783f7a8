/**
 * Entry point of the `skiff` command (bin/skiff.js calls {@link main}). Exit codes: 0 after a clean
 * shutdown (also of a start a signal interrupted), help or version; 1 when the broker fails to start
 * (port in use, log dir locked, foreign or read-only) or stop; 2 for usage and configuration errors
 * (bad flags, config file, SKIFF_LOG_LEVEL, a log dir that can never work). A failed start prints
 * one plain line on stderr, `skiff: <problem>: <fix>`.
 */
import { startCluster } from '../broker';
import { DEFAULT_ADMIN_PORT } from '../admin/admin-defaults';
import { ConfigError, type BrokerConfig } from '../config/broker-config';
import { EXIT_USAGE, parseCliArgs, resolveStartConfig } from './args';
import { processIo } from './client-process-io';
import { logEnvProblem } from '../runtime/logger';
import { createCliLogger } from './logger';
import { runStart, type StartBrokerFn } from './start-command';
import { holdStartSignals, releaseStartSignals, takeOverStartSignal } from './start-signals';
import { applyBrokerV8Flags } from './v8-flags';

/** Starts the cluster `skiff start` asks for (one broker unless `--nodes`), as start-command.ts expects. */
const startBrokerFn: StartBrokerFn = async (config, logger, options) => {
  const { admin } = options;
  const cluster = await startCluster(config, logger, {
    nodes: options.nodes,
    signal: options.signal,
    adminPort: admin?.port ?? null,
    adminPortOptional: admin?.defaulted ?? false,
    faultInjection: options.faultInjection,
  });
  const ports = cluster.brokers().map((b) => b.port);
  return { boundPort: ports[0]!, boundPorts: ports, adminPort: cluster.adminPort, stop: () => cluster.stop() };
};

/** Runs `skiff` with `argv` (without node and script path). */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // bin/skiff.js holds the signals before this module loads; a direct call holds them from here.
  if (argv[0] === 'start') holdStartSignals();
  const command = parseCliArgs(argv);
  if (command.kind === 'exit') {
    releaseStartSignals();
    process.exitCode = command.exitCode;
    return;
  }
  if (command.kind === 'client') {
    releaseStartSignals();
    process.exitCode = await command.run(processIo());
    // stdin (skiff produce from a terminal) may keep the loop alive after the command is done.
    setTimeout(() => process.exit(), 1000).unref();
    return;
  }
  const logProblem = logEnvProblem();
  if (logProblem !== null) {
    process.stderr.write(`skiff: ${logProblem}\n`);
    process.exit(EXIT_USAGE);
  }
  let config: BrokerConfig;
  try {
    config = resolveStartConfig(command.args);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${configErrorLine(err)}\n`);
    process.exit(EXIT_USAGE);
  }
  // Before any worker thread starts (v8-flags.ts); logged once the broker serves, so a refused
  // start still prints its one line.
  const v8Flags = applyBrokerV8Flags();
  await runStart(
    config,
    {
      startBroker: async (startConfig, logger, options) => {
        const handle = await startBrokerFn(startConfig, logger, options);
        if (v8Flags.length > 0) logger.debug({ v8Flags }, 'V8 flags set for the broker');
        return handle;
      },
      logger: createCliLogger(),
      printLine: (line) => process.stdout.write(`${line}\n`),
      printError: (line) => process.stderr.write(`${line}\n`),
      onSignal: takeOverStartSignal,
      schedule: (ms, fn) => setTimeout(fn, ms).unref(),
      exit: (code) => process.exit(code),
      now: () => performance.now(),
    },
    {
      nodes: command.args.nodes,
      // Redpanda's 9644 unless asked; with --port 0 (tests, several brokers on one host) a free port too.
      admin:
        command.args.adminPort !== null
          ? { port: command.args.adminPort, defaulted: false }
          : { port: command.args.port === 0 ? 0 : DEFAULT_ADMIN_PORT, defaulted: true },
      faultInjection: command.args.faultInjection,
    },
  );
}

/**
 * One plain line for a rejected config: `skiff: invalid configuration: <problem>; <problem>...:
 * fix the file or the --override`. Each problem already names the key and the nearest known key.
 */
export function configErrorLine(err: ConfigError): string {
  const problems = err.problems.map((p) => p.replace(/\s*\n\s*/g, ' '));
  return `skiff: invalid configuration: ${problems.join('; ')} (fix the config file or the --override)`;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`skiff: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
