/**
 * TrackedTimers clamps delays past Node's 2^31-1 ms limit (which Node would fire after 1 ms): a
 * client's Integer.MAX_VALUE timeout (Java's max.poll.interval.ms) must mean "very long", not "now".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TIMER_DELAY_MS, TrackedTimers } from '../../../src/runtime/system-time';

test('a delay beyond 2^31-1 ms does not fire at once', async () => {
  const timers = new TrackedTimers();
  let fired = 0;
  const handles = [MAX_TIMER_DELAY_MS + 30_000, 2 * MAX_TIMER_DELAY_MS].map((d) =>
    timers.setTimeout(() => {
      fired++;
    }, d),
  );
  const soon = timers.setTimeout(() => {
    fired += 100;
  }, 20);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(fired, 100, 'only the 20 ms timer fired');
  for (const h of [...handles, soon]) timers.clearTimeout(h);
});
