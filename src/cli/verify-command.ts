/**
 * `skiff verify`: proving the guarantees from the command line (issue 12, src/verify/README.md).
 *
 *   skiff verify --seed S --runs N [--faults LIST] [--nodes N] [--planted-bug NAME] [--workers W]
 *                [--max-commands M] [--quiet]
 *     a campaign over the simulated cluster, its runs spread over W worker threads (src/verify/runner.ts)
 *   skiff verify --replay SEED:PATH [--faults LIST] [--nodes N] [--planted-bug NAME] [--max-commands M]
 *     re-runs one run exactly (with the flags of the campaign that found it)
 *   skiff verify --bootstrap HOST:PORT[,...] [--duration S] [--clients librdkafka,java]
 *                [--kill-command CMD --start-command CMD --brokers 0,1,2 | --admin URL]
 *                [--bounce clean|hard|none] [--replication-factor N] [--faults LIST] [--seed S]
 *                [--topic-prefix NAME] [--data-dir DIR (with --admin)]
 *     real clients against any Kafka-compatible brokers, faults caused from outside (src/verify/real/)
 *
 * stdout gets a header line naming the campaign, then the report (formatReport: runs, faults by kind,
 * invariant checks, the per-strategy table, violations, the counterexample) and, after a
 * counterexample, the command that replays it: the same seed prints the same stdout whatever the
 * worker count. Progress goes to stderr (a bar on a terminal, a plain line every 5 s otherwise, none
 * with --quiet), and so does the closing line with the wall time and runs per second.
 *
 * Exit codes: 0 no violation; 1 a violation (as Kafka's verification tools use 1); 2 usage errors and, in
 * the real mode, setup problems (brokers unreachable, a topic refused, a client runtime missing: one
 * `skiff: ...` line); 130/143 a real run ended by SIGINT/SIGTERM (its clients stopped first).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseBrokerAddress } from '../client';
import {
  InterruptedError,
  runRealVerify,
  SetupError,
  type FaultDriver,
  type RealVerifyOptions,
} from '../verify/real/run';
import { FaultDriverError } from '../verify/real/faults';
import { formatReport, FAULT_KINDS, type FaultKind, type VerifyReport } from '../verify/report';
import {
  DEFAULT_CAMPAIGN_MODULE,
  defaultWorkers,
  loadCampaign,
  PLANTED_BUGS,
  runOnWorkers,
  type CampaignCall,
  type PlantedBug,
  type RunnerOptions,
} from '../verify/runner';
import { EXIT_FAILURE, isOperatingError, startProgress, type CliIo, type ClientCommandRun } from './client-io';

/** Exit code of a usage error (args.ts's EXIT_USAGE; args.ts imports this file). */
const EXIT_USAGE = 2;

/** Exit codes of a real run ended by SIGINT or SIGTERM (128 + the signal's number, as a shell's). */
const EXIT_SIGINT = 130;
const EXIT_SIGTERM = 143;

/** Exit code when the campaign found a violation. */
export const EXIT_VIOLATION = EXIT_FAILURE;

/** The simulated cluster's size bounds for `--nodes` (default 3, as the campaign's). */
export const MAX_SIM_NODES = 9;
const DEFAULT_SIM_NODES = 3;

/** The real clients `--clients` takes. */
export const REAL_CLIENTS = ['librdkafka', 'java'] as const;

/** `--bounce`: how a real run takes brokers down (clean: controlled stop; hard: crash or kill). */
export const BOUNCE_KINDS = ['clean', 'hard', 'none'] as const;

/** What a simulated campaign and a replay share. */
export interface SimSettings {
  nodes: number;
  /** The enabled fault kinds, null for the campaign's default (all). */
  faults: FaultKind[] | null;
  plantedBug: PlantedBug | null;
  maxCommands: number | null;
}

/** What `skiff verify` was asked to do. */
export type VerifyArgs =
  | ({ kind: 'campaign'; seed: number; runs: number; workers: number | null; quiet: boolean } & SimSettings)
  | ({ kind: 'replay'; seed: number; path: string; quiet: boolean } & SimSettings)
  | { kind: 'real'; options: RealVerifyOptions; quiet: boolean };

/** The process around the command, injectable for tests. */
export interface VerifyDeps {
  runOnWorkers(options: RunnerOptions): Promise<VerifyReport>;
  /** Runs one campaign call on this thread (the replay). */
  runCampaign(options: CampaignCall): Promise<VerifyReport>;
  runRealVerify: typeof runRealVerify;
  /** Whether stderr is a terminal (a redrawn progress bar) or not (a plain line every 5 s). */
  stderrIsTty: boolean;
  /** Raw text to stderr (the bar redraws its line with a carriage return). */
  writeStderr(text: string): void;
  /** Monotonic milliseconds (performance.now), for the wall time and runs per second. */
  nowMs(): number;
}

/** The real process's {@link VerifyDeps}. */
export function processVerifyDeps(): VerifyDeps {
  return {
    runOnWorkers,
    runCampaign: (options) => loadCampaign(DEFAULT_CAMPAIGN_MODULE)(options),
    runRealVerify,
    stderrIsTty: process.stderr.isTTY === true,
    writeStderr: (text) => process.stderr.write(text),
    nowMs: () => performance.now(),
  };
}

interface VerifyOptions {
  seed?: number;
  runs?: number;
  faults?: FaultKind[];
  nodes?: number;
  plantedBug?: PlantedBug;
  workers?: number;
  maxCommands?: number;
  replay?: { seed: number; path: string };
  quiet?: boolean;
  bootstrap?: string;
  duration?: number;
  clients?: Array<(typeof REAL_CLIENTS)[number]>;
  killCommand?: string;
  startCommand?: string;
  brokers?: number[];
  admin?: string;
  bounce?: (typeof BOUNCE_KINDS)[number];
  replicationFactor?: number;
  topicPrefix?: string;
  dataDir?: string;
}

/** The flags only a simulated campaign or replay takes, and those only a real run takes. */
const SIM_ONLY = ['runs', 'nodes', 'plantedBug', 'workers', 'maxCommands', 'replay'] as const;
const REAL_ONLY = [
  'duration',
  'clients',
  'killCommand',
  'startCommand',
  'brokers',
  'admin',
  'bounce',
  'replicationFactor',
  'topicPrefix',
  'dataDir',
] as const;

/** Adds `skiff verify`; `setRun` receives the command to run (args.ts runs nothing itself). */
export function registerVerifyCommand(
  program: Command,
  setRun: (run: ClientCommandRun) => void,
  deps: () => VerifyDeps = processVerifyDeps,
): void {
  program
    .command('verify')
    .description(
      'check the guarantees: a fault-injection campaign over a simulated cluster (or --replay one run), ' +
        'or real clients against --bootstrap brokers; exit 1 on a violation',
    )
    .option('--seed <n>', 'campaign seed, an integer in 0..2^32-1 (default: a random one, printed)', parseSeed)
    .option('--runs <n>', 'runs of the campaign (default 100)', positiveInt)
    .option(
      '--faults <list>',
      `fault kinds to inject, comma-separated (default all): ${FAULT_KINDS.join(', ')}`,
      parseFaults,
    )
    .option(
      '--nodes <n>',
      `brokers of the simulated cluster, 1..${MAX_SIM_NODES} (default ${DEFAULT_SIM_NODES})`,
      parseSimNodes,
    )
    .addOption(new Option('--planted-bug <name>', 'turn on a planted bug the campaign must find').choices(PLANTED_BUGS))
    .option('--workers <n>', 'worker threads (default: available parallelism, at most --runs)', positiveInt)
    .option('--max-commands <n>', 'longest generated command sequence per run', positiveInt)
    .option('--replay <seed:path>', 're-run one run exactly, as a counterexample prints it', parseReplay)
    .option('-q, --quiet', 'no progress on stderr')
    .option('--bootstrap <host:port,...>', 'real mode: verify these brokers with real clients')
    .option('--duration <s>', 'real mode: workload length in seconds (default 60)', positiveInt)
    .option('--clients <list>', `real mode: clients, comma-separated (default ${REAL_CLIENTS.join(',')})`, parseClients)
    .option('--kill-command <cmd>', 'real mode: shell command that kills broker {broker}')
    .option('--start-command <cmd>', 'real mode: shell command that starts broker {broker}')
    .option('--brokers <ids>', 'real mode: broker ids for {broker}, comma-separated', parseBrokerIds)
    .option('--admin <url>', "real mode: Skiff's admin API (skiff start --fault-injection) to crash and start brokers")
    .addOption(
      new Option(
        '--bounce <kind>',
        'real mode: how brokers go down (default hard with a fault driver, else none)',
      ).choices(BOUNCE_KINDS),
    )
    .option('--replication-factor <n>', 'real mode: replication factor of the topics (default 3)', positiveInt)
    .option(
      '--topic-prefix <name>',
      'real mode: prefix of the topics the run creates, which must not exist (default skiff-verify-SEED-TIME)',
    )
    .option(
      '--data-dir <dir>',
      "real mode with --admin: the skiff start --data-dir, to check log matching from the brokers' segment files",
    )
    .action(function (this: Command, o: VerifyOptions) {
      const args = verifyArgs(this, o);
      setRun((io) => verifyCommand(args, io, deps()));
    });
}

/** Checks the flag combinations and builds the {@link VerifyArgs}; a usage error (exit 2) otherwise. */
function verifyArgs(command: Command, o: VerifyOptions): VerifyArgs {
  const quiet = o.quiet === true;
  if (o.bootstrap !== undefined) {
    const simFlags = given(o, SIM_ONLY);
    if (simFlags.length > 0)
      command.error(
        `error: --bootstrap (the real mode) does not take ${simFlags.join(', ')}: simulated campaigns only`,
      );
    return { kind: 'real', options: realOptions(command, o), quiet };
  }
  const realFlags = given(o, REAL_ONLY);
  if (realFlags.length > 0)
    command.error(`error: ${realFlags.join(', ')}: real mode only, give --bootstrap HOST:PORT[,...]`);
  const sim: SimSettings = {
    nodes: o.nodes ?? DEFAULT_SIM_NODES,
    faults: o.faults ?? null,
    plantedBug: o.plantedBug ?? null,
    maxCommands: o.maxCommands ?? null,
  };
  if (o.replay !== undefined) {
    const extra = given(o, ['seed', 'runs', 'workers']);
    if (extra.length > 0) command.error(`error: --replay re-runs one run: drop ${extra.join(', ')}`);
    return { kind: 'replay', seed: o.replay.seed, path: o.replay.path, quiet, ...sim };
  }
  return {
    kind: 'campaign',
    seed: o.seed ?? Math.floor(Math.random() * 2 ** 32),
    runs: o.runs ?? 100,
    workers: o.workers ?? null,
    quiet,
    ...sim,
  };
}

function realOptions(command: Command, o: VerifyOptions): RealVerifyOptions {
  const commandFlags = given(o, ['killCommand', 'startCommand', 'brokers']);
  if (commandFlags.length > 0 && commandFlags.length < 3)
    command.error('error: --kill-command, --start-command and --brokers go together');
  if (o.dataDir !== undefined && o.admin === undefined)
    command.error("error: --data-dir goes with --admin (Skiff's segment files are checked for log matching)");
  if (commandFlags.length > 0 && o.admin !== undefined)
    command.error('error: give --admin or --kill-command/--start-command/--brokers, not both');
  let driver: FaultDriver = { kind: 'none' };
  if (o.admin !== undefined) driver = { kind: 'skiff-admin', adminUrl: adminUrl(command, o.admin) };
  else if (commandFlags.length === 3)
    driver = { kind: 'commands', killCommand: o.killCommand!, startCommand: o.startCommand!, brokers: o.brokers! };
  const bounce = o.bounce ?? (driver.kind === 'none' ? 'none' : 'hard');
  if (bounce !== 'none' && driver.kind === 'none')
    command.error(
      `error: --bounce ${bounce} needs a way to take brokers down: --admin, or --kill-command/--start-command/--brokers`,
    );
  const faultKinds: FaultKind[] =
    o.faults ??
    (bounce === 'none'
      ? []
      : bounce === 'clean'
        ? ['broker-stop']
        : driver.kind === 'skiff-admin'
          ? ['broker-crash']
          : ['process-kill']);
  const seed = o.seed ?? Math.floor(Math.random() * 2 ** 32);
  return {
    bootstrap: bootstrapList(command, o.bootstrap!),
    durationS: o.duration ?? 60,
    clients: o.clients ?? [...REAL_CLIENTS],
    // The commands driver counts the user's kill as a clean stop or a hard kill as --bounce says.
    faults: bounce === 'none' ? { kind: 'none' } : driver.kind === 'commands' ? { ...driver, bounce } : driver,
    faultKinds,
    seed,
    // Each run needs fresh topics: the seed and the time (base 36 ms) keep two runs' names apart.
    topicPrefix: o.topicPrefix ?? `skiff-verify-${seed}-${Date.now().toString(36)}`,
    replicationFactor: o.replicationFactor ?? 3,
    ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
  };
}

function given(o: VerifyOptions, names: readonly (keyof VerifyOptions)[]): string[] {
  return names.filter((name) => o[name] !== undefined).map(flagName);
}

/** `maxCommands` -> `--max-commands`. */
function flagName(name: string): string {
  return `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** `--bootstrap`: one or more `host:port` (port 1..65535), comma-separated; a usage error otherwise. */
function bootstrapList(command: Command, text: string): string {
  const addresses = text.split(',').map((a) => a.trim());
  for (const address of addresses) {
    try {
      parseBrokerAddress(address);
    } catch {
      command.error(
        `error: --bootstrap ${JSON.stringify(text)}: ${JSON.stringify(address)} is not HOST:PORT (port 1..65535)`,
      );
    }
  }
  return addresses.join(',');
}

/** `--admin`: a URL, or `host:port` taken as http. */
function adminUrl(command: Command, text: string): string {
  const url = /^[a-z]+:\/\//i.test(text) ? text : `http://${text}`;
  try {
    new URL(url);
  } catch {
    command.error(`error: --admin ${JSON.stringify(text)} is not a URL or HOST:PORT`);
  }
  return url.replace(/\/+$/, '');
}

/**
 * Runs what `args` asks for and resolves with the exit code: writes the header and report to stdout,
 * progress and timing to stderr.
 */
export async function verifyCommand(args: VerifyArgs, io: CliIo, deps: VerifyDeps): Promise<number> {
  const startMs = deps.nowMs();
  let report: VerifyReport;
  if (args.kind === 'real') {
    const o = args.options;
    await io.out(
      `real verify: bootstrap ${o.bootstrap}, seed ${o.seed}, ${o.durationS} s, clients ${o.clients.join(',')}\n`,
    );
    try {
      report = await deps.runRealVerify(o, { progress: (line) => (args.quiet ? undefined : io.err(line)) });
    } catch (err) {
      // No verdict on the guarantees: one line, and not exit 1 (which says a violation was found).
      if (err instanceof InterruptedError) {
        io.err(`skiff: verify ${err.message}; its clients were stopped`);
        return err.signal === 'SIGINT' ? EXIT_SIGINT : EXIT_SIGTERM;
      }
      if (err instanceof FaultDriverError) {
        io.err(`skiff: verify stopped without a verdict: ${err.message}; its clients were stopped`);
        return EXIT_USAGE;
      }
      if (err instanceof SetupError || isOperatingError(err)) {
        io.err(`skiff: ${(err as Error).message}`);
        return EXIT_USAGE;
      }
      throw err;
    }
    await io.out(formatReport(report));
  } else if (args.kind === 'replay') {
    await io.out(`replay: ${args.seed}:${args.path}${settingsText(args)}\n`);
    try {
      report = await deps.runCampaign({
        ...campaignSettings(args.seed, 1, args),
        firstRun: 0,
        stride: 1,
        replay: { seed: args.seed, path: args.path },
      });
    } catch (err) {
      // fast-check's answer to a path that its shrink tree does not have: other settings, or a typo.
      if (!/^Unable to replay/.test((err as Error).message)) throw err;
      io.err(
        `skiff: cannot replay ${args.seed}:${args.path}: ${(err as Error).message}; ` +
          'give the --nodes, --faults, --planted-bug and --max-commands of the campaign that printed it',
      );
      return EXIT_USAGE;
    }
    await io.out(formatReport(report));
  } else {
    // As the runner does: never more workers than runs (the timing line names the workers used).
    const workers = Math.min(args.workers ?? defaultWorkers(args.runs), args.runs);
    await io.out(`campaign: seed ${args.seed}, ${args.runs} run${args.runs === 1 ? '' : 's'}${settingsText(args)}\n`);
    const progress = args.quiet ? null : new Progress(args.runs, deps, io);
    // Ctrl-C mid-campaign: clear the bar so the shell prompt starts on a clean line, then die of the
    // same signal (its exit status, 130 or 143, is the shell's).
    const onSignal = (signal: NodeJS.Signals): void => {
      progress?.stop();
      process.kill(process.pid, signal);
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      report = await deps.runOnWorkers({
        campaign: campaignSettings(args.seed, args.runs, args),
        workers,
        onRun: (finished) => progress?.update(finished),
      });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      progress?.stop();
    }
    await io.out(formatReport(report));
    if (report.counterexample !== null)
      await io.out(
        `replay with: skiff verify --replay ${report.counterexample.seed}:${report.counterexample.path}${replayFlags(args)}\n`,
      );
    if (!args.quiet) {
      const seconds = (deps.nowMs() - startMs) / 1000;
      io.err(
        `skiff verify: ${report.runs} run${report.runs === 1 ? '' : 's'} in ${seconds.toFixed(1)} s, ` +
          `${(report.runs / Math.max(seconds, 1e-3)).toFixed(2)} runs/s on ${workers} worker${workers === 1 ? '' : 's'}`,
      );
    }
  }
  return report.violations.length > 0 || report.counterexample !== null ? EXIT_VIOLATION : 0;
}

/** The campaign options of the simulated settings (the campaign's defaults where not given). */
function campaignSettings(seed: number, runs: number, s: SimSettings): RunnerOptions['campaign'] {
  return {
    seed,
    runs,
    nodes: s.nodes,
    ...(s.faults !== null ? { faults: s.faults } : {}),
    ...(s.maxCommands !== null ? { maxCommands: s.maxCommands } : {}),
    plantedBug: s.plantedBug,
  };
}

/** `, 3 nodes, faults all` and the rest of the header: what decides the runs besides the seed. */
function settingsText(s: SimSettings): string {
  return (
    `, ${s.nodes} node${s.nodes === 1 ? '' : 's'}, faults ${s.faults === null ? 'all' : s.faults.join(',')}` +
    (s.plantedBug !== null ? `, planted bug ${s.plantedBug}` : '') +
    (s.maxCommands !== null ? `, at most ${s.maxCommands} commands` : '')
  );
}

/** The flags a replay needs to run the same run: those of the campaign besides seed, runs and workers. */
function replayFlags(s: SimSettings): string {
  return (
    (s.nodes !== DEFAULT_SIM_NODES ? ` --nodes ${s.nodes}` : '') +
    (s.faults !== null ? ` --faults ${s.faults.join(',')}` : '') +
    (s.plantedBug !== null ? ` --planted-bug ${s.plantedBug}` : '') +
    (s.maxCommands !== null ? ` --max-commands ${s.maxCommands}` : '')
  );
}

/** Progress on stderr: a bar redrawn at most every 100 ms on a terminal, else a line every 5 s. */
class Progress {
  private finished = 0;
  private lastDrawMs = -Infinity;
  private readonly startMs: number;
  private readonly ticker: { stop(): void } | null;

  constructor(
    private readonly runs: number,
    private readonly deps: VerifyDeps,
    io: CliIo,
  ) {
    this.startMs = deps.nowMs();
    this.ticker = deps.stderrIsTty ? null : startProgress(() => io.err(`skiff verify: ${this.text()}`));
  }

  update(finished: number): void {
    this.finished = finished;
    if (!this.deps.stderrIsTty) return;
    const now = this.deps.nowMs();
    if (now - this.lastDrawMs < 100 && finished < this.runs) return;
    this.lastDrawMs = now;
    const width = 30;
    const filled = Math.round((finished / this.runs) * width);
    this.deps.writeStderr(`\r\x1b[K[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${this.text()}`);
  }

  stop(): void {
    this.ticker?.stop();
    if (this.deps.stderrIsTty && this.lastDrawMs !== -Infinity) this.deps.writeStderr('\r\x1b[K');
  }

  private text(): string {
    const seconds = (this.deps.nowMs() - this.startMs) / 1000;
    return `${this.finished}/${this.runs} runs, ${(this.finished / Math.max(seconds, 1e-3)).toFixed(1)} runs/s`;
  }
}

function positiveInt(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(Number.isSafeInteger(n) && n >= 1)) throw new InvalidArgumentError('Expected a positive integer.');
  return n;
}

function parseSeed(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(Number.isSafeInteger(n) && n < 2 ** 32))
    throw new InvalidArgumentError('Expected an integer in 0..4294967295.');
  return n;
}

function parseSimNodes(text: string): number {
  const n = positiveInt(text);
  if (n > MAX_SIM_NODES) throw new InvalidArgumentError(`Expected a number of brokers in 1..${MAX_SIM_NODES}.`);
  return n;
}

/** `--faults a,b`: names of {@link FAULT_KINDS}, each once. */
function parseFaults(text: string): FaultKind[] {
  const names = text.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(FAULT_KINDS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `Unknown fault kind${unknown.length === 1 ? '' : 's'} ${unknown.map((n) => JSON.stringify(n)).join(', ')}; ` +
        `valid kinds: ${FAULT_KINDS.join(', ')}.`,
    );
  return [...new Set(names as FaultKind[])];
}

function parseClients(text: string): Array<(typeof REAL_CLIENTS)[number]> {
  const names = text.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(REAL_CLIENTS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`Unknown client ${unknown.join(', ')}; valid clients: ${REAL_CLIENTS.join(', ')}.`);
  return [...new Set(names as Array<(typeof REAL_CLIENTS)[number]>)];
}

function parseBrokerIds(text: string): number[] {
  const ids = text.split(',').map((id) => id.trim());
  if (!ids.every((id) => /^\d+$/.test(id))) throw new InvalidArgumentError('Expected broker ids, e.g. 0,1,2.');
  return [...new Set(ids.map(Number))];
}

/**
 * `--replay SEED:PATH` as a counterexample prints it: the run seed, fast-check's colon-separated path,
 * and after an `@` fc.commands' replay path (base64 digits and a colon), e.g. `12345:3:0:1@ABC:D`.
 */
function parseReplay(text: string): { seed: number; path: string } {
  const m = /^(\d+):(\d+(?::\d+)*(?:@[A-Za-z0-9+/:]+)?)$/.exec(text.trim());
  const seed = m === null ? NaN : Number(m[1]);
  if (m === null || !Number.isSafeInteger(seed))
    throw new InvalidArgumentError('Expected SEED:PATH as a counterexample prints it, e.g. 12345:3:0:1@ABC:D.');
  return { seed, path: m[2]! };
}
