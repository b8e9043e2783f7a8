/**
 * A data dir remembers the cluster size it was made with (`node-<i>` dirs for several brokers, the
 * flat layout for one): starting it with another `--nodes` is refused before anything is written.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startCluster } from '../../../src/broker';
import { createLogger } from '../../../src/runtime/logger';
import { EXIT_CONFIG, StartupError } from '../../../src/startup-error';
import { removeDir, testClusterConfig } from '../../helpers/in-process-broker';

const configFor = testClusterConfig;

/** Starts `nodes` brokers on `dir` and stops them again. */
async function startAndStop(dir: string, nodes: number): Promise<void> {
  process.env.SKIFF_LOG_LEVEL ??= 'warn';
  const cluster = await startCluster(configFor(dir), createLogger({ fd: 2 }), { nodes });
  await cluster.stop();
}

/** Asserts that starting `dir` with `nodes` brokers is refused with a config error naming `made`. */
async function assertRefused(dir: string, nodes: number, made: number): Promise<void> {
  const before = readdirSync(dir).sort();
  await assert.rejects(startCluster(configFor(dir), createLogger({ fd: 2 }), { nodes }), (error: unknown) => {
    assert.ok(error instanceof StartupError, String(error));
    assert.equal(error.exitCode, EXIT_CONFIG);
    assert.match(error.message, new RegExp(`made by a cluster of ${made} broker`));
    assert.match(error.message, new RegExp(`--nodes ${made}`));
    return true;
  });
  assert.deepEqual(readdirSync(dir).sort(), before, 'nothing written');
}

test('a data dir made by three brokers refuses --nodes 1 and --nodes 2, and starts again with --nodes 3', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skiff-size-'));
  try {
    await startAndStop(dir, 3);
    assert.deepEqual(
      readdirSync(dir)
        .filter((n) => n.startsWith('node-'))
        .sort(),
      ['node-0', 'node-1', 'node-2'],
    );
    await assertRefused(dir, 1, 3);
    await assertRefused(dir, 2, 3);
    await startAndStop(dir, 3);
  } finally {
    removeDir(dir);
  }
});

test('a cluster data dir with one broker directory gone is refused, not shrunk', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skiff-size-'));
  try {
    await startAndStop(dir, 3);
    removeDir(path.join(dir, 'node-1'));
    const before = readdirSync(dir).sort();
    for (const nodes of [2, 3])
      await assert.rejects(startCluster(configFor(dir), createLogger({ fd: 2 }), { nodes }), (error: unknown) => {
        assert.ok(error instanceof StartupError, String(error));
        assert.match(
          error.message,
          nodes === 3
            ? /made by a cluster of 3 brokers but node-1 is missing/
            : /made by a cluster of 3 brokers, not 2/,
        );
        return true;
      });
    assert.deepEqual(readdirSync(dir).sort(), before, 'nothing written');
  } finally {
    removeDir(dir);
  }
});

test('a single broker data dir refuses --nodes 3', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skiff-size-'));
  try {
    await startAndStop(dir, 1);
    await assertRefused(dir, 3, 1);
    await startAndStop(dir, 1);
  } finally {
    removeDir(dir);
  }
});
