/**
 * `skiff verify` end to end: the real `node bin/skiff.js verify` over the real campaign
 * (src/verify/campaign.ts) in the simulated cluster. The same seed prints the same stdout on one
 * worker thread and on two; a planted bug is found (exit 1, a counterexample) and its printed replay
 * command prints the same violation again; a replay of run 0 prints what a one-run campaign does;
 * usage errors exit 2.
 */
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runSeed } from '../../src/verify/report';
import { runCommand, SKIFF_BIN, type RunResult } from '../helpers/run-command';

const TIMEOUT_MS = 240_000;

/**
 * The planted bug this test plants, and a campaign that finds it: with seed 1 (main at 801288c) run
 * 17 is the first to fail, an acknowledged acks=all idempotent record lost.
 */
const PLANTED = { bug: 'ackBeforeHighWatermark', seed: '1', runs: '60' } as const;

/** `node bin/skiff.js verify ARGS` (killed after 200 s). */
function verify(args: string[]): Promise<RunResult> {
  return runCommand(process.execPath, [SKIFF_BIN, 'verify', ...args], '', { timeoutMs: 200_000 });
}

describe('skiff verify', () => {
  test(
    'seed 1, 4 runs: exit 0 and the same stdout twice, on one worker and on two',
    { timeout: TIMEOUT_MS },
    async () => {
      const one = await verify(['--seed', '1', '--runs', '4', '--workers', '1']);
      assert.equal(one.code, 0, `stdout: ${one.stdout}\nstderr: ${one.stderr}`);
      const again = await verify(['--seed', '1', '--runs', '4', '--workers', '1']);
      const two = await verify(['--seed', '1', '--runs', '4', '--workers', '2']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(two.code, 0, two.stderr);
      assert.equal(again.stdout, one.stdout);
      assert.equal(two.stdout, one.stdout);
      const lines = one.stdout.split('\n');
      assert.equal(lines[0], 'campaign: seed 1, 4 runs, 3 nodes, faults all');
      assert.equal(lines[1], 'mode: simulated cluster');
      assert.equal(lines[2], 'runs: 4');
      assert.match(one.stdout, /^invariant checks: [1-9]\d*$/m);
      assert.match(one.stdout, /^ {2}strategy +records +lost +duplicated +loss expected$/m);
      assert.match(one.stdout, /^violations: none\ncounterexample: none\n$/m);
      // Timing is on stderr only (it differs between runs).
      assert.match(one.stderr, /^skiff verify: 4 runs in \d+\.\d s, \d+\.\d\d runs\/s on 1 worker$/m);
      assert.match(two.stderr, /on 2 workers$/m);
      assert.doesNotMatch(one.stdout, /runs\/s/);
    },
  );

  test(
    `--planted-bug ${PLANTED.bug}: exit 1 with a counterexample, and its --replay prints the same violation`,
    { timeout: TIMEOUT_MS },
    async () => {
      const found = await verify([
        '--seed',
        PLANTED.seed,
        '--runs',
        PLANTED.runs,
        '--planted-bug',
        PLANTED.bug,
        '--quiet',
      ]);
      assert.equal(found.code, 1, `stdout: ${found.stdout}\nstderr: ${found.stderr}`);
      const replayAt = /^ {2}replay: (\d+:[\d:]+@[A-Za-z0-9+/:]+)$/m.exec(found.stdout);
      assert.ok(replayAt !== null, found.stdout);
      const violation = /^ {2}violation: (.+)$/m.exec(found.stdout)?.[1];
      assert.ok(violation !== undefined, found.stdout);
      // The bug's own violation, not some other failure of the run.
      assert.match(violation, /^acks-all-durable: /);
      assert.match(found.stdout, /^ {2}commands \(\d+\):\n {4}1\. /m);
      const command = /^replay with: skiff verify (.+)$/m.exec(found.stdout)?.[1];
      assert.equal(command, `--replay ${replayAt[1]} --planted-bug ${PLANTED.bug}`);

      const replayed = await verify([...command.split(' '), '--quiet']);
      assert.equal(replayed.code, 1, `stdout: ${replayed.stdout}\nstderr: ${replayed.stderr}`);
      assert.equal(
        replayed.stdout.split('\n')[0],
        `replay: ${replayAt[1]}, 3 nodes, faults all, planted bug ${PLANTED.bug}`,
      );
      assert.match(replayed.stdout, /^runs: 1$/m);
      assert.equal(/^ {2}violation: (.+)$/m.exec(replayed.stdout)?.[1], violation);
      assert.equal(/^ {2}replay: (.+)$/m.exec(replayed.stdout)?.[1], replayAt[1]);
    },
  );

  test(
    '--replay of run 0 (its run seed, path 0) prints the report of a one-run campaign',
    { timeout: TIMEOUT_MS },
    async () => {
      const seed = runSeed(1, 0);
      const replay = await verify(['--replay', `${seed}:0`, '--faults', 'broker-crash,power-loss,network-partition']);
      const campaign = await verify([
        '--seed',
        '1',
        '--runs',
        '1',
        '--faults',
        'broker-crash,power-loss,network-partition',
      ]);
      assert.equal(replay.code, 0, `stdout: ${replay.stdout}\nstderr: ${replay.stderr}`);
      assert.equal(campaign.code, 0, campaign.stderr);
      const [replayHeader, ...replayReport] = replay.stdout.split('\n');
      const [campaignHeader, ...campaignReport] = campaign.stdout.split('\n');
      assert.equal(replayHeader, `replay: ${seed}:0, 3 nodes, faults broker-crash,power-loss,network-partition`);
      assert.equal(
        campaignHeader,
        'campaign: seed 1, 1 run, 3 nodes, faults broker-crash,power-loss,network-partition',
      );
      assert.match(replay.stdout, /^runs: 1$/m);
      assert.deepEqual(replayReport, campaignReport);
    },
  );

  test('usage errors exit 2 from the process: a bad --faults name, --runs 0', { timeout: TIMEOUT_MS }, async () => {
    const faults = await verify(['--faults', 'broker-crash,meteor']);
    assert.equal(faults.code, 2);
    assert.equal(faults.stdout, '');
    assert.match(faults.stderr, /Unknown fault kind "meteor"; valid kinds: broker-crash, broker-stop, /);
    const runs = await verify(['--runs', '0']);
    assert.equal(runs.code, 2);
    assert.match(runs.stderr, /--runs <n>' argument '0' is invalid\. Expected a positive integer\./);
  });
});
