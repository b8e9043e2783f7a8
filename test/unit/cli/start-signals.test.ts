import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdStartSignals, releaseStartSignals, takeOverStartSignal } from '../../../src/cli/start-signals';

/** Delivers `signal` to this process and waits until Node has dispatched it to the listeners. */
async function deliver(signal: 'SIGINT' | 'SIGTERM'): Promise<void> {
  process.kill(process.pid, signal);
  await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('start signals', () => {
  it('a signal while held is replayed to the listener that takes over, later ones reach it directly', async () => {
    holdStartSignals();
    await deliver('SIGTERM'); // with no holder this would kill the test process
    const calls: string[] = [];
    const onTerm = (): void => {
      calls.push('SIGTERM');
    };
    takeOverStartSignal('SIGTERM', onTerm);
    assert.deepEqual(calls, ['SIGTERM'], 'replayed at once');
    await deliver('SIGTERM');
    assert.deepEqual(calls, ['SIGTERM', 'SIGTERM']);
    const onInt = (): void => {
      calls.push('SIGINT');
    };
    takeOverStartSignal('SIGINT', onInt);
    assert.deepEqual(calls, ['SIGTERM', 'SIGTERM'], 'no SIGINT was held: nothing replayed');
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
    assert.equal(process.listenerCount('SIGTERM'), 0, 'the holder is gone');
  });

  it('release removes the holders and forgets what they held', async () => {
    holdStartSignals();
    await deliver('SIGINT');
    releaseStartSignals();
    assert.equal(process.listenerCount('SIGINT'), 0);
    assert.equal(process.listenerCount('SIGTERM'), 0);
    const calls: string[] = [];
    const onInt = (): void => {
      calls.push('SIGINT');
    };
    takeOverStartSignal('SIGINT', onInt);
    process.off('SIGINT', onInt);
    assert.deepEqual(calls, []);
  });
});
