/**
 * `skiff verify`'s flags in-process: usage errors (exit 2 and the message, through parseCliArgs as
 * bin/skiff.js runs it), what each mode hands the campaign, the runner or runRealVerify (with fakes),
 * and the output and exit code around the report.
 */
import * as assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { Command } from 'commander';
import { EXIT_USAGE, parseCliArgs, type CliOutput } from '../../src/cli/args';
import type { CliIo, ClientCommandRun } from '../../src/cli/client-io';
import { registerVerifyCommand, type VerifyDeps } from '../../src/cli/verify-command';
import { ConnectionError } from '../../src/client/errors';
import { FaultDriverError } from '../../src/verify/real/faults';
import { InterruptedError, SetupError, type RealVerifyOptions } from '../../src/verify/real/run';
import { emptyReport, FAULT_KINDS, formatReport, type VerifyReport } from '../../src/verify/report';
import type { CampaignCall, RunnerOptions } from '../../src/verify/runner';

/** The escape that starts the terminal's erase-line sequence. */
const ESC = String.fromCharCode(0x1b);

/** parseCliArgs with commander's output captured. */
function parse(argv: string[]): { exitCode: number | null; err: string } {
  let err = '';
  const output: CliOutput = { writeOut: () => undefined, writeErr: (text) => (err += text) };
  const command = parseCliArgs(argv, output);
  return { exitCode: command.kind === 'exit' ? command.exitCode : null, err };
}

function assertUsageError(argv: string[], message: RegExp): void {
  const { exitCode, err } = parse(argv);
  assert.equal(exitCode, EXIT_USAGE, `skiff ${argv.join(' ')}: ${err}`);
  assert.match(err, message);
}

/** What a fake run saw and printed. */
interface Captured {
  code: number;
  stdout: string;
  stderr: string[];
  stderrRaw: string;
  runner: RunnerOptions[];
  campaign: CampaignCall[];
  real: RealVerifyOptions[];
}

const CLEAN: VerifyReport = {
  ...emptyReport('sim'),
  runs: 4,
  faults: { 'broker-crash': 2 },
  checks: { 'dense-offsets': 40 },
};

const FAILED: VerifyReport = {
  ...CLEAN,
  runs: 2,
  violations: [{ invariant: 'leader-epochs', message: 'two leaders in epoch 3 of p0' }],
  counterexample: {
    seed: 777,
    path: '1:0',
    commands: ['partition b0|b1', 'produce p0 acks=1'],
    logs: 'b0 p0  0..2\n',
    violation: { invariant: 'leader-epochs', message: 'two leaders in epoch 3 of p0' },
  },
};

/** Parses `argv` with fake deps (reports `report` from every mode), runs it and captures everything. */
async function runVerify(
  argv: string[],
  report: VerifyReport,
  tty = false,
  campaignError: Error | null = null,
  realError: Error | null = null,
): Promise<Captured> {
  const captured: Captured = { code: -1, stdout: '', stderr: [], stderrRaw: '', runner: [], campaign: [], real: [] };
  let clock = 0;
  const deps: VerifyDeps = {
    runOnWorkers: (options) => {
      captured.runner.push(options);
      for (let n = 1; n <= options.campaign.runs; n++) options.onRun?.(n);
      return Promise.resolve(report);
    },
    runCampaign: (options) => {
      captured.campaign.push(options);
      return campaignError === null ? Promise.resolve(report) : Promise.reject(campaignError);
    },
    runRealVerify: (options, io) => {
      captured.real.push(options);
      io.progress('real progress line');
      return realError === null ? Promise.resolve(report) : Promise.reject(realError);
    },
    stderrIsTty: tty,
    writeStderr: (text) => (captured.stderrRaw += text),
    nowMs: () => (clock += 250),
  };
  let run: ClientCommandRun | null = null;
  const program = new Command('skiff').exitOverride();
  registerVerifyCommand(
    program,
    (r) => (run = r),
    () => deps,
  );
  program.parse(['verify', ...argv], { from: 'user' });
  assert.ok(run !== null, 'the command was registered to run');
  const io: CliIo = {
    out: (data) => void (captured.stdout += String(data)),
    err: (line) => captured.stderr.push(line),
    stdin: new PassThrough(),
    env: {},
    onInterrupt: () => undefined,
  };
  captured.code = await (run as ClientCommandRun)(io);
  return captured;
}

describe('skiff verify flags', () => {
  test('usage errors exit 2 with the reason', () => {
    assertUsageError(
      ['verify', '--runs', '0'],
      /option '--runs <n>' argument '0' is invalid\. Expected a positive integer\./,
    );
    assertUsageError(['verify', '--runs', '2.5'], /Expected a positive integer/);
    assertUsageError(['verify', '--workers', '-1'], /--workers <n>' argument '-1' is invalid/);
    assertUsageError(['verify', '--seed', 'abc'], /Expected an integer in 0\.\.4294967295/);
    assertUsageError(['verify', '--nodes', '10'], /Expected a number of brokers in 1\.\.9/);
    assertUsageError(
      ['verify', '--planted-bug', 'nope'],
      /Allowed choices are truncateToHighWatermark, ackBeforeHighWatermark, fencedLeaderAppends/,
    );
    assertUsageError(['verify', '--replay', '12'], /Expected SEED:PATH/);
    assertUsageError(['verify', '--replay', '12:0@'], /Expected SEED:PATH/);
    assertUsageError(['verify', '--replay', '12:0', '--runs', '3'], /--replay re-runs one run: drop --runs/);
    assertUsageError(['verify', '--duration', '10'], /--duration: real mode only, give --bootstrap HOST:PORT/);
    assertUsageError(
      ['verify', '--bootstrap', 'h:9092', '--runs', '3'],
      /--bootstrap \(the real mode\) does not take --runs: simulated campaigns only/,
    );
    assertUsageError(['verify', '--bootstrap', 'h:9092', '--kill-command', 'k'], /go together/);
    assertUsageError(['verify', '--bootstrap', 'h:9092', '--data-dir', '/d'], /--data-dir goes with --admin/);
    assertUsageError(['verify', '--data-dir', '/d'], /--data-dir: real mode only/);
    assertUsageError(
      ['verify', '--bootstrap', 'h:9092', '--bounce', 'hard'],
      /--bounce hard needs a way to take brokers down/,
    );
    assertUsageError(
      [
        'verify',
        '--bootstrap',
        'h:9092',
        '--admin',
        '127.0.0.1:9644',
        '--kill-command',
        'k',
        '--start-command',
        's',
        '--brokers',
        '0',
      ],
      /give --admin or --kill-command/,
    );
    for (const bootstrap of ['nonsense', '127.0.0.1:99999', '', '127.0.0.1:0', 'h:9092,']) {
      const { exitCode, err } = parse(['verify', '--bootstrap', bootstrap]);
      assert.equal(exitCode, EXIT_USAGE, `--bootstrap ${JSON.stringify(bootstrap)}: ${err}`);
      assert.match(err, /^error: --bootstrap ".*": ".*" is not HOST:PORT \(port 1\.\.65535\)\n$/);
    }
    assertUsageError(
      ['verify', '--bootstrap', 'h:9092', '--clients', 'kafkajs'],
      /Unknown client kafkajs; valid clients: librdkafka, java/,
    );
  });

  test('an unknown --faults name lists every valid kind', () => {
    const { exitCode, err } = parse(['verify', '--faults', 'broker-crash,bogus,disk-ful']);
    assert.equal(exitCode, EXIT_USAGE);
    assert.match(err, /Unknown fault kinds "bogus", "disk-ful"; valid kinds: /);
    for (const kind of FAULT_KINDS) assert.ok(err.includes(kind), `${kind} listed in: ${err}`);
  });

  test('a clean campaign: the runner gets seed, runs, workers and settings; header and report on stdout, exit 0', async () => {
    const c = await runVerify(
      [
        '--seed',
        '42',
        '--runs',
        '4',
        '--workers',
        '2',
        '--nodes',
        '5',
        '--faults',
        'broker-crash,disk-full',
        '--max-commands',
        '30',
      ],
      CLEAN,
    );
    assert.equal(c.code, 0);
    assert.deepEqual(
      c.runner.map((o) => ({ campaign: o.campaign, workers: o.workers })),
      [
        {
          campaign: {
            seed: 42,
            runs: 4,
            nodes: 5,
            faults: ['broker-crash', 'disk-full'],
            maxCommands: 30,
            plantedBug: null,
          },
          workers: 2,
        },
      ],
    );
    assert.equal(
      c.stdout,
      `campaign: seed 42, 4 runs, 5 nodes, faults broker-crash,disk-full, at most 30 commands\n${formatReport(CLEAN)}`,
    );
    // Not a terminal: no bar; the closing line has the wall time and rate (fake clock: 250 ms a reading).
    assert.equal(c.stderrRaw, '');
    assert.match(c.stderr.at(-1) ?? '', /^skiff verify: 4 runs in \d+\.\d s, \d+\.\d\d runs\/s on 2 workers$/);
  });

  test('--workers above --runs: the runner and the closing line both use one worker per run', async () => {
    const c = await runVerify(['--seed', '1', '--runs', '3', '--workers', '64'], CLEAN);
    assert.equal(c.code, 0);
    assert.deepEqual(
      c.runner.map((o) => o.workers),
      [3],
    );
    assert.match(c.stderr.at(-1) ?? '', /^skiff verify: \d+ runs in \d+\.\d s, \d+\.\d\d runs\/s on 3 workers$/);
  });

  test('a campaign that finds a counterexample: exit 1 and the replay command with the settings that matter', async () => {
    const c = await runVerify(
      ['--seed', '9', '--runs', '10', '--planted-bug', 'fencedLeaderAppends', '--quiet'],
      FAILED,
    );
    assert.equal(c.code, 1);
    assert.equal(c.runner[0]?.campaign.plantedBug, 'fencedLeaderAppends');
    assert.equal(c.runner[0]?.campaign.faults, undefined, 'no --faults: the campaign default');
    assert.equal(
      c.stdout,
      'campaign: seed 9, 10 runs, 3 nodes, faults all, planted bug fencedLeaderAppends\n' +
        formatReport(FAILED) +
        'replay with: skiff verify --replay 777:1:0 --planted-bug fencedLeaderAppends\n',
    );
    assert.deepEqual(c.stderr, [], '--quiet: nothing on stderr');
  });

  test('on a terminal the progress bar is redrawn on stderr and cleared at the end', async () => {
    const c = await runVerify(['--seed', '1', '--runs', '3', '--workers', '1'], CLEAN, true);
    assert.equal(c.code, 0);
    const bar = `\r${ESC}[K[${'#'.repeat(30)}] 3/3 runs, `;
    assert.ok(c.stderrRaw.includes(bar), JSON.stringify(c.stderrRaw));
    assert.ok(c.stderrRaw.endsWith(`\r${ESC}[K`), JSON.stringify(c.stderrRaw));
  });

  test('--replay runs that one run on this thread with the given settings', async () => {
    const c = await runVerify(['--replay', '777:1:0', '--planted-bug', 'fencedLeaderAppends', '--nodes', '4'], FAILED);
    assert.equal(c.code, 1);
    assert.deepEqual(c.runner, []);
    assert.deepEqual(c.campaign, [
      {
        seed: 777,
        runs: 1,
        nodes: 4,
        plantedBug: 'fencedLeaderAppends',
        firstRun: 0,
        stride: 1,
        replay: { seed: 777, path: '1:0' },
      },
    ]);
    assert.equal(
      c.stdout,
      `replay: 777:1:0, 4 nodes, faults all, planted bug fencedLeaderAppends\n${formatReport(FAILED)}`,
    );
  });

  test('--replay of a path fast-check cannot walk: exit 2, the reason and what to give', async () => {
    const c = await runVerify(
      ['--replay', '5:0:9@AB:C'],
      CLEAN,
      false,
      new Error('Unable to replay, got wrong path=0:9'),
    );
    assert.equal(c.code, 2);
    assert.deepEqual(c.campaign[0]?.replay, { seed: 5, path: '0:9@AB:C' });
    assert.deepEqual(c.stderr, [
      'skiff: cannot replay 5:0:9@AB:C: Unable to replay, got wrong path=0:9; ' +
        'give the --nodes, --faults, --planted-bug and --max-commands of the campaign that printed it',
    ]);
  });

  test('--bootstrap with kill and start commands: runRealVerify gets the commands driver, hard bounce as process-kill', async () => {
    const report = { ...emptyReport('real'), runs: 1 };
    const c = await runVerify(
      [
        '--bootstrap',
        '127.0.0.1:9092,127.0.0.1:9093',
        '--duration',
        '20',
        '--clients',
        'java',
        '--kill-command',
        'kill-broker {broker}',
        '--start-command',
        'start-broker {broker}',
        '--brokers',
        '0,1,2',
        '--replication-factor',
        '2',
        '--seed',
        '5',
        '--topic-prefix',
        'run-a',
      ],
      report,
    );
    assert.equal(c.code, 0);
    assert.deepEqual(c.real, [
      {
        bootstrap: '127.0.0.1:9092,127.0.0.1:9093',
        durationS: 20,
        clients: ['java'],
        faults: {
          kind: 'commands',
          killCommand: 'kill-broker {broker}',
          startCommand: 'start-broker {broker}',
          brokers: [0, 1, 2],
          bounce: 'hard',
        },
        faultKinds: ['process-kill'],
        seed: 5,
        topicPrefix: 'run-a',
        replicationFactor: 2,
      },
    ]);
    assert.deepEqual(c.stderr, ['real progress line']);
    assert.equal(
      c.stdout,
      `real verify: bootstrap 127.0.0.1:9092,127.0.0.1:9093, seed 5, 20 s, clients java\n${formatReport(report)}`,
    );
  });

  test('--bootstrap with --admin: the skiff-admin driver; clean bounce stops brokers; none and defaults', async () => {
    const admin = await runVerify(
      ['--bootstrap', 'h:1', '--admin', '127.0.0.1:9644', '--bounce', 'clean', '--seed', '1'],
      emptyReport('real'),
    );
    assert.deepEqual(admin.real[0]?.faults, { kind: 'skiff-admin', adminUrl: 'http://127.0.0.1:9644' });
    assert.deepEqual(admin.real[0]?.faultKinds, ['broker-stop']);
    const withData = await runVerify(
      ['--bootstrap', 'h:1', '--admin', '127.0.0.1:9644', '--data-dir', '/tmp/skiff-data', '--seed', '1'],
      emptyReport('real'),
    );
    assert.equal(withData.real[0]?.dataDir, '/tmp/skiff-data');
    const clean = await runVerify(
      [
        '--bootstrap',
        'h:1',
        '--kill-command',
        'k {broker}',
        '--start-command',
        's {broker}',
        '--brokers',
        '1',
        '--bounce',
        'clean',
      ],
      emptyReport('real'),
    );
    assert.deepEqual(clean.real[0]?.faults, {
      kind: 'commands',
      killCommand: 'k {broker}',
      startCommand: 's {broker}',
      brokers: [1],
      bounce: 'clean',
    });
    assert.deepEqual(clean.real[0]?.faultKinds, ['broker-stop']);
    const hard = await runVerify(
      ['--bootstrap', 'h:1', '--admin', 'http://127.0.0.1:9644/', '--seed', '1'],
      emptyReport('real'),
    );
    assert.deepEqual(hard.real[0]?.faults, { kind: 'skiff-admin', adminUrl: 'http://127.0.0.1:9644' });
    assert.deepEqual(hard.real[0]?.faultKinds, ['broker-crash']);
    const none = await runVerify(
      ['--bootstrap', 'h:1', '--admin', '127.0.0.1:9644', '--bounce', 'none', '--seed', '1'],
      FAILED,
    );
    assert.deepEqual(none.real[0]?.faults, { kind: 'none' });
    assert.deepEqual(none.real[0]?.faultKinds, []);
    assert.equal(none.code, 1, 'a violation in a real run exits 1 too');
    const defaults = await runVerify(['--bootstrap', 'h:1', '--seed', '3'], emptyReport('real'));
    const prefix = defaults.real[0]?.topicPrefix ?? '';
    assert.match(prefix, /^skiff-verify-3-[0-9a-z]+$/, 'fresh topics: the seed and the time in base 36');
    assert.deepEqual(defaults.real[0], {
      bootstrap: 'h:1',
      durationS: 60,
      clients: ['librdkafka', 'java'],
      faults: { kind: 'none' },
      faultKinds: [],
      seed: 3,
      topicPrefix: prefix,
      replicationFactor: 3,
    });
  });

  test('a real run that cannot start or loses its fault driver: one skiff: line and exit 2; a signal: 130 or 143; never exit 1', async () => {
    const argv = ['--bootstrap', '127.0.0.1:1', '--seed', '1'];
    const cases: Array<[Error, number, string]> = [
      [
        new SetupError('cannot reach --bootstrap 127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1'),
        2,
        'skiff: cannot reach --bootstrap 127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1',
      ],
      [
        new SetupError('h:1 lists 1 broker, fewer than the replication factor 3: use --replication-factor 1'),
        2,
        'skiff: h:1 lists 1 broker, fewer than the replication factor 3: use --replication-factor 1',
      ],
      [new ConnectionError('cannot connect to 127.0.0.1:1: boom'), 2, 'skiff: cannot connect to 127.0.0.1:1: boom'],
      [
        new FaultDriverError('GET http://127.0.0.1:1/v1/partitions: fetch failed (connect ECONNREFUSED 127.0.0.1:1)'),
        2,
        'skiff: verify stopped without a verdict: GET http://127.0.0.1:1/v1/partitions: fetch failed (connect ECONNREFUSED 127.0.0.1:1); its clients were stopped',
      ],
      [new InterruptedError('SIGINT'), 130, 'skiff: verify interrupted by SIGINT; its clients were stopped'],
      [new InterruptedError('SIGTERM'), 143, 'skiff: verify interrupted by SIGTERM; its clients were stopped'],
    ];
    for (const [error, code, line] of cases) {
      const c = await runVerify(argv, emptyReport('real'), false, null, error);
      assert.equal(c.code, code, error.message);
      assert.deepEqual(c.stderr, ['real progress line', line]);
      assert.equal(c.stdout, 'real verify: bootstrap 127.0.0.1:1, seed 1, 60 s, clients librdkafka,java\n');
    }
    await assert.rejects(
      runVerify(argv, emptyReport('real'), false, null, new TypeError('a bug')),
      /a bug/,
      'anything else is a bug and propagates',
    );
  });
});
