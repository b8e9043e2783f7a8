/**
 * The smoke of the reference harness's three-node section (a three-node Kafka beside `skiff start
 * --nodes 3`, RF=3 acks=all and RF=1 acks=1 runs, one failover each): every figure with numbers on
 * both sides (test/bench/compare-smoke.ts). In test:long: it takes 35-80 s. No timing asserted.
 */
import { test } from 'node:test';
import { checkSmoke, SMOKE_TIMEOUT_MS } from './compare-smoke';

test(
  'bench:compare --smoke --only cluster writes every three-node figure with Kafka and Skiff',
  { timeout: SMOKE_TIMEOUT_MS },
  () => checkSmoke('cluster'),
);
