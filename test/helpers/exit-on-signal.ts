/**
 * Makes SIGINT and SIGTERM end a test process through `process.exit`, so the `exit` hooks the
 * helpers install (broker-process.ts, kafka-fixture.ts, in-process-broker.ts: SIGKILL the brokers and
 * fixtures still running, remove their data dirs) run when a test run is interrupted too. By default
 * Node dies on those signals without running `exit` listeners, which left brokers and temp dirs behind
 * after a Ctrl-C or a CI timeout. Exit codes follow the shell's 128 + signal number.
 */
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

let installed = false;
const hooked = new WeakSet<Set<ChildProcess>>();

/** Installs the handlers once per process; later calls do nothing. */
export function exitOnSignal(): void {
  if (installed) return;
  installed = true;
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
}

/**
 * The `exit` hook of a helper that spawns children and temp dirs, installed once per `live` set
 * (later calls do nothing): SIGKILL each child still in `live`, run `alsoOnExit`, then, unless
 * SKIFF_TEST_KEEP_DATA=1, remove each directory in `dirs`. Both sets are read at exit. Installs
 * {@link exitOnSignal} too, so an interrupted run gets there.
 */
export function killAndRemoveOnExit(live: Set<ChildProcess>, dirs: Set<string>, alsoOnExit?: () => void): void {
  if (hooked.has(live)) return;
  hooked.add(live);
  exitOnSignal();
  process.on('exit', () => {
    for (const proc of live) {
      try {
        proc.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
    alsoOnExit?.();
    if (process.env.SKIFF_TEST_KEEP_DATA === '1') return;
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
}
