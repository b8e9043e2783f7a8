/**
 * Entry point of the `skiff` command (bin/skiff.js calls {@link main}). Exit codes: 0 after a clean
 * shutdown, help or version; 1 when the broker fails to start or stop; 2 for usage and
 * configuration errors (the message goes to stderr).
 */
import { startBroker } from '../broker';
import { ConfigError, type BrokerConfig } from '../config/broker-config';
import { EXIT_USAGE, parseCliArgs, resolveStartConfig } from './args';
import { processIo } from './client-process-io';
import { createCliLogger } from './logger';
import { runStart, type StartBrokerFn } from './start-command';

/** Checks at compile time that src/broker.ts keeps the contract start-command.ts relies on. */
const startBrokerFn: StartBrokerFn = startBroker;

/** Runs `skiff` with `argv` (without node and script path). */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const command = parseCliArgs(argv);
  if (command.kind === 'exit') {
    process.exitCode = command.exitCode;
    return;
  }
  if (command.kind === 'client') {
    process.exitCode = await command.run(processIo());
    // stdin (skiff produce from a terminal) may keep the loop alive after the command is done.
    setTimeout(() => process.exit(), 1000).unref();
    return;
  }
  let config: BrokerConfig;
  try {
    config = resolveStartConfig(command.args);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`skiff: invalid configuration\n${err.message}\n`);
    process.exit(EXIT_USAGE);
  }
  await runStart(config, {
    startBroker: startBrokerFn,
    logger: createCliLogger(),
    printLine: (line) => process.stdout.write(`${line}\n`),
    onSignal: (signal, listener) => process.on(signal, listener),
    exit: (code) => process.exit(code),
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`skiff: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
