/**
 * `npm start` from the repository root, with real processes: the start script execs node (no
 * `sh -c` between npm and the broker), so a SIGTERM to npm's own process, which npm forwards to
 * its child, and a Ctrl-C (SIGINT to the whole process group) both stop the broker cleanly: npm
 * exits 0, the port is closed and the data dir's lock released. Runs with --ignore-scripts, which
 * skips only the prestart build (the tests run on a built tree).
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { repoRoot } from '../helpers/run-command';

const TIMEOUT_MS = 90_000;
const tempDirs: string[] = [];
after(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Whether something accepts connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Runs `npm start -- --port 0 --data-dir <new dir>` in its own process group, waits for the
 * listening line, calls `signal(npmPid)` and resolves with npm's exit, the port and the dir.
 */
async function npmStartThen(
  signal: (npmPid: number) => void,
): Promise<{ code: number | null; port: number; dataDir: string; output: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skiff-npm-start-'));
  tempDirs.push(dataDir);
  const npm = spawn('npm', ['start', '--ignore-scripts', '--', '--port', '0', '--data-dir', dataDir], {
    cwd: repoRoot(),
    detached: true, // its own process group, as a shell job
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SKIFF_LOG_FORMAT: 'json' },
  });
  const pid = npm.pid;
  assert.ok(pid !== undefined, 'npm was spawned');
  let output = '';
  npm.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  const killer = setTimeout(() => process.kill(-pid, 'SIGKILL'), 60_000);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      npm.stdout.setEncoding('utf8').on('data', (d: string) => {
        output += d;
        const match = /skiff listening on 127\.0\.0\.1:(\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      });
      void exited.then((code) => reject(new Error(`npm start exited ${code} before listening\n${output}`)));
    });
    signal(pid);
    const code = await exited;
    return { code, port, dataDir, output };
  } finally {
    clearTimeout(killer);
    try {
      process.kill(-pid, 'SIGKILL'); // whatever the signal left running in the group (an orphaned broker)
    } catch {
      // the group is gone: nothing left running
    }
  }
}

describe('npm start', () => {
  test("SIGTERM to npm's own process stops the broker", { timeout: TIMEOUT_MS }, async () => {
    const run = await npmStartThen((pid) => process.kill(pid, 'SIGTERM'));
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /"signal":"SIGTERM".*"msg":"shutting down"/, run.output);
    assert.equal(await accepts(run.port), false, 'the port is closed: no orphaned broker');
    assert.equal(fs.existsSync(path.join(run.dataDir, '.lock')), false, 'the lock was released');
  });

  test('Ctrl-C (SIGINT to the process group) stops the broker', { timeout: TIMEOUT_MS }, async () => {
    const run = await npmStartThen((pid) => process.kill(-pid, 'SIGINT'));
    assert.equal(run.code, 0, run.output);
    assert.doesNotMatch(run.output, /second signal/, 'one clean shutdown');
    assert.equal(await accepts(run.port), false, 'the port is closed');
    assert.equal(fs.existsSync(path.join(run.dataDir, '.lock')), false, 'the lock was released');
  });
});
