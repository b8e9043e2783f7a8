/**
 * Runs a command as a child process for the CLI tests: stdin gets `input` (then closes), stdout and
 * stderr are collected, and the process is SIGKILLed after `timeoutMs` so a hung command fails the
 * test instead of stalling it.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { packageRoot } from '../../src/verify/real/client-process';

/** What a finished command printed and how it exited (null code: killed by a signal). */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The repository root (the folder holding package.json above the compiled test). */
export const repoRoot: () => string = packageRoot;

/** `bin/skiff.js` of this checkout. */
export const SKIFF_BIN = path.join(repoRoot(), 'bin', 'skiff.js');

/** Runs `command args` with `input` on stdin; resolves with its exit code and output. */
export function runCommand(
  command: string,
  args: string[],
  input = '',
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}
