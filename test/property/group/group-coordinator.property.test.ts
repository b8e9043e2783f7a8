/** Short runs of the group coordinator's property campaigns (group-properties.ts); the long file runs more. */
import { test } from 'node:test';
import { assignmentsStayDisjoint, committedOffsetsSurviveCrashes } from './group-properties';

test(
  'I16: committed offsets survive crashes that lose unsynced bytes or tear the last write (fast-check, 100 runs)',
  { timeout: 120_000 },
  () => committedOffsetsSurviveCrashes(100),
);
test(
  'I17: members joining, leaving, expiring and coordinator crashes leave one generation with a disjoint, complete assignment (fast-check, 100 runs)',
  { timeout: 120_000 },
  () => assignmentsStayDisjoint(100),
);
