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

test('a lock naming a pid that now belongs to another process (pid reuse) is taken over; one naming a live owner with its start time is not', async () => {
  const fs = await import('node:fs/promises');
  const os = await import('node:os');
  const path = await import('node:path');
  const { spawn } = await import('node:child_process');
  const { lockLogDir, unlockLogDir, LOCK_FILE } = await import('../../src/log-dir-lock');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'skiff-lock-'));
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const stat = await fs.readFile(`/proc/${other.pid}/stat`, 'utf8');
    const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    await fs.writeFile(path.join(dir, LOCK_FILE), `${other.pid} ${startTicks}\n`);
    await assert.rejects(lockLogDir(dir), /in use by another broker/, 'a live owner that started when the lock says');
    await fs.writeFile(path.join(dir, LOCK_FILE), `${other.pid} 1\n`);
    assert.deepEqual(await lockLogDir(dir), { staleOwner: other.pid }, 'reported: its owner ended uncleanly');
    assert.match(
      await fs.readFile(path.join(dir, LOCK_FILE), 'utf8'),
      new RegExp(`^${process.pid} \\d+\\n$`),
      'taken over, with this process and its start time',
    );
    await unlockLogDir(dir);
    assert.deepEqual(await lockLogDir(dir), { staleOwner: null }, 'after a clean unlock: nothing stale');
    await unlockLogDir(dir);
  } finally {
    other.kill('SIGKILL');
    await fs.rm(dir, { recursive: true, force: true });
  }
});
