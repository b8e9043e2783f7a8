/**
 * Which worker of a pool gets a new actor (DESIGN.md, actor runtime): a worker of its own while the
 * pool has a free one, then the least-loaded. With a pool as large as the partition count every replica
 * has its own thread; with one worker per core it is thread-per-core.
 */
import { strict as assert } from 'node:assert';

/**
 * Where an actor runs: a broker's own pool of `num.io.threads` workers, or the controller's worker.
 * Declared here (a leaf of the folder) so the actor contract can take it without a file cycle.
 */
export type Placement = { pool: 'broker'; brokerId: number } | { pool: 'controller' };

/**
 * Picks a worker index in [0, capacity). `loads[i]` is the number of actors on existing worker `i`
 * (`loads.length` ≤ capacity workers exist). Order of preference: an existing idle worker (load 0,
 * lowest index), then a new worker (returns `loads.length`), then the least-loaded (lowest index on
 * ties). A result equal to `loads.length` means "create it".
 */
export function chooseWorker(loads: readonly number[], capacity: number): number {
  assert(Number.isInteger(capacity) && capacity >= 1, `pool capacity must be >= 1, got ${capacity}`);
  assert(loads.length <= capacity, `pool has ${loads.length} workers, capacity ${capacity}`);
  const idle = loads.indexOf(0);
  if (idle >= 0) return idle;
  if (loads.length < capacity) return loads.length;
  let best = 0;
  for (let i = 1; i < loads.length; i++) {
    if ((loads[i] as number) < (loads[best] as number)) best = i;
  }
  return best;
}
