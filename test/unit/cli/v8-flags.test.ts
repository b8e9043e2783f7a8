/**
 * applyBrokerV8Flags: the broker's V8 flags are set unless the node command line sets the same
 * flag itself, in either polarity or spelling. (Setting them in this process is what the broker
 * does too; the flags only change when V8 frees ArrayBuffers.)
 */
import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyBrokerV8Flags, BROKER_V8_FLAGS } from '../../../src/cli/v8-flags';

test('sets every broker flag when the command line names none of them', () => {
  assert.deepEqual(BROKER_V8_FLAGS, ['--no-concurrent-array-buffer-sweeping']);
  assert.deepEqual(applyBrokerV8Flags([]), ['--no-concurrent-array-buffer-sweeping']);
  assert.deepEqual(applyBrokerV8Flags(['--max-old-space-size=512', '--trace-gc', '-r', 'x.js']), [
    '--no-concurrent-array-buffer-sweeping',
  ]);
  assert.deepEqual(applyBrokerV8Flags(['--concurrent-marking']), ['--no-concurrent-array-buffer-sweeping']);
});

test('leaves a flag the command line sets either way, in dashes or underscores', () => {
  for (const given of [
    '--concurrent-array-buffer-sweeping',
    '--no-concurrent-array-buffer-sweeping',
    '--concurrent_array_buffer_sweeping',
    '--no_concurrent_array_buffer_sweeping',
  ])
    assert.deepEqual(applyBrokerV8Flags([given]), [], given);
});
