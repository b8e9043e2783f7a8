/**
 * V8 settings of the broker process. `skiff start` applies them with `v8.setFlagsFromString` before
 * it starts any worker thread, so they hold however the process was launched (`npm start`,
 * `node bin/skiff.js start`, a test or benchmark harness); V8 flags are process-wide and a worker's
 * `execArgv` cannot carry them.
 *
 * Only flags V8 reads each time it uses them belong here: a flag read once at heap set-up and
 * changed afterwards leaves that heap inconsistent (`--single-threaded-gc` set at run time aborts the
 * process on its next full GC, for one). Each flag's measurement is in docs/design-notes.md, "Data
 * path: copies and hops".
 */
import * as v8 from 'node:v8';

/**
 * The flags `skiff start` sets, in V8's spelling.
 *
 * `--no-concurrent-array-buffer-sweeping`: ArrayBuffers are freed during the GC pause instead of by
 * a background task afterwards. V8 checks the flag on every sweep (ArrayBufferSweeper::RequestSweep).
 * With the background sweep, the network thread's isolate ran a full mark-compact about every 40 ms
 * while producing (26-30 in a 300,000 x 1 KiB run against 2 without; `--trace-gc`), and V8's
 * platform threads took 25-40% of the broker's CPU. Measured as broker CPU per MB, alternating
 * builds on one host.
 */
export const BROKER_V8_FLAGS: readonly string[] = ['--no-concurrent-array-buffer-sweeping'];

/** A V8 flag's name without its `--` / `--no-` prefix or value, with `_` read as `-` (V8 accepts both). */
function flagName(arg: string): string {
  return arg
    .replace(/^--(no-|no_)?/, '')
    .split('=')[0]!
    .replace(/_/g, '-');
}

/**
 * Sets each of {@link BROKER_V8_FLAGS} that the node command line (`execArgv`, default
 * `process.execArgv`) does not set itself, either way: `node --concurrent-array-buffer-sweeping
 * bin/skiff.js start` keeps V8's default. Returns the flags it set, in order. Call it before the
 * broker's worker threads start.
 */
export function applyBrokerV8Flags(execArgv: readonly string[] = process.execArgv): string[] {
  const given = new Set(execArgv.filter((arg) => arg.startsWith('--')).map(flagName));
  const applied: string[] = [];
  for (const flag of BROKER_V8_FLAGS) {
    if (given.has(flagName(flag))) continue;
    v8.setFlagsFromString(flag);
    applied.push(flag);
  }
  return applied;
}
