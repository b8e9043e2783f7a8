/** Long runs of the group coordinator's property campaigns (npm run test:long). */
import { test } from 'node:test';
import { assignmentsStayDisjoint, committedOffsetsSurviveCrashes } from './group-properties';

test('I16 over 3000 runs: committed offsets survive crashes', { timeout: 20 * 60_000 }, () =>
  committedOffsetsSurviveCrashes(3000),
);
test('I17 over 2000 runs: one generation, disjoint and complete assignments', { timeout: 20 * 60_000 }, () =>
  assignmentsStayDisjoint(2000),
);
