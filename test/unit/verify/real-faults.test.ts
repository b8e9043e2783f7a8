/**
 * The real run's fault drivers (src/verify/real/faults.ts): the user's kill and start commands run under
 * `sh -c` with `{broker}` replaced, a clean or hard bounce counted as its kind, the start waited for
 * until Metadata lists the broker, and a failing command rejects with its output.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brokerFaults, shell } from '../../../src/verify/real/faults';
import { createSeededRandom } from '../../../src/io/random';
import { startTestBroker, type TestBroker } from '../../helpers/in-process-broker';

describe('real-run fault drivers', () => {
  let broker: TestBroker;
  let dir: string;
  before(async () => {
    broker = await startTestBroker();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-faults-'));
  });
  after(async () => {
    await broker.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('commands: a hard bounce is process-kill, {broker} replaced, start waits for Metadata', async () => {
    const file = path.join(dir, 'hard.txt');
    const faults = brokerFaults(
      {
        kind: 'commands',
        killCommand: `echo kill {broker} >> ${file}`,
        startCommand: `echo start {broker} >> ${file}`,
        brokers: [0],
      },
      `127.0.0.1:${broker.port}`,
    );
    assert.deepEqual(faults.kinds, ['process-kill']);
    assert.equal(faults.targetsBroker('process-kill'), true);
    assert.equal(await faults.pickTarget(createSeededRandom(1), []), 0);
    await faults.inject('process-kill', 0);
    await faults.restore('process-kill', 0);
    assert.equal(fs.readFileSync(file, 'utf8'), 'kill 0\nstart 0\n');
    await assert.rejects(faults.inject('broker-stop', 0), /cannot cause broker-stop/);
  });

  test('commands: a clean bounce is broker-stop', () => {
    const faults = brokerFaults(
      { kind: 'commands', killCommand: 'true', startCommand: 'true', brokers: [1, 2], bounce: 'clean' },
      `127.0.0.1:${broker.port}`,
    );
    assert.deepEqual(faults.kinds, ['broker-stop']);
  });

  test('a failing command rejects with its exit code and stderr', async () => {
    await assert.rejects(shell('echo no such broker {broker} >&2; exit 3', 5), /exited with 3: no such broker 5/);
  });

  test('skiff-admin: crash and stop always, process-kill only with a restartProcess', () => {
    assert.deepEqual(brokerFaults({ kind: 'skiff-admin', adminUrl: 'http://127.0.0.1:1' }, '').kinds, [
      'broker-crash',
      'broker-stop',
    ]);
    const withRestart = brokerFaults(
      { kind: 'skiff-admin', adminUrl: 'http://127.0.0.1:1', restartProcess: () => Promise.resolve() },
      '',
    );
    assert.deepEqual(withRestart.kinds, ['broker-crash', 'broker-stop', 'process-kill']);
    assert.equal(withRestart.targetsBroker('process-kill'), false);
  });
});
