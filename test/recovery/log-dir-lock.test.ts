/**
 * Kafka locks each log dir so two brokers never write the same files: a second broker on a data dir
 * that a live broker holds must refuse to start; a lock left by a SIGKILLed broker is taken over.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startBrokerProcess } from '../helpers/broker-process';

test('a second broker on the same data dir refuses to start; a stale lock after SIGKILL is taken over', async () => {
  const first = await startBrokerProcess();
  try {
    await assert.rejects(startBrokerProcess({ dataDir: first.dataDir }), /in use by another broker/);
    await first.kill9();
    const again = await startBrokerProcess({ dataDir: first.dataDir });
    await again.stop();
  } finally {
    await first.stop().catch(() => undefined);
  }
});
