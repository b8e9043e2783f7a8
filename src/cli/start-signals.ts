/**
 * Holds SIGINT and SIGTERM for `skiff start` from the first line bin/skiff.js runs until
 * `runStart` (start-command.ts) registers its own handlers, so a signal during module loading or
 * config parsing ends the start through runStart's abort path (exit 0) instead of Node's default
 * action (death by the signal, exit 143 with no output). Deliberately imports nothing: bin/skiff.js
 * requires it before the rest of the CLI loads.
 *
 * A signal that arrives while the holder is installed is recorded and replayed to the listener
 * {@link takeOverStartSignal} registers; one that arrives later reaches that listener directly.
 * Node keeps one signal watcher per signal while any listener is registered, so the hand-over
 * adds the new listener before removing the holder and no signal falls into the default action.
 */

/** The signals `skiff start` handles. */
export type StartSignal = 'SIGINT' | 'SIGTERM';

const START_SIGNALS: readonly StartSignal[] = ['SIGINT', 'SIGTERM'];

/** Signals received while held, in arrival order. */
const held: StartSignal[] = [];
const holders = new Map<StartSignal, () => void>();

/** Installs the holders (once; later calls do nothing). */
export function holdStartSignals(): void {
  for (const signal of START_SIGNALS) {
    if (holders.has(signal)) continue;
    const holder = (): void => {
      held.push(signal);
    };
    holders.set(signal, holder);
    process.on(signal, holder);
  }
}

/**
 * Registers `listener` for `signal` (process.on), removes the holder and replays to `listener` the
 * held signals of that kind, synchronously, in arrival order.
 */
export function takeOverStartSignal(signal: StartSignal, listener: () => void): void {
  process.on(signal, listener);
  const holder = holders.get(signal);
  if (holder === undefined) return;
  holders.delete(signal);
  process.off(signal, holder);
  let replays = 0;
  for (let i = held.length - 1; i >= 0; i--) {
    if (held[i] !== signal) continue;
    held.splice(i, 1);
    replays++;
  }
  for (; replays > 0; replays--) listener();
}

/** Removes the holders without a hand-over (a `start` that only prints help or fails on its flags). */
export function releaseStartSignals(): void {
  for (const [signal, holder] of holders) process.off(signal, holder);
  holders.clear();
  held.length = 0;
}
