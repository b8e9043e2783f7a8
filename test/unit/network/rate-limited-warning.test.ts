import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Clock } from '../../../src/io/clock';
import type { Logger } from '../../../src/io/logger';
import { RateLimitedWarning, WARNING_INTERVAL_MS } from '../../../src/network/rate-limited-warning';

function fakes(): { clock: Clock & { ms: number }; logger: Logger; lines: Array<{ fields: object; msg: string }> } {
  const lines: Array<{ fields: object; msg: string }> = [];
  const clock = { ms: 0, nowMs: () => clock.ms, monotonicMs: () => clock.ms };
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (fields, msg) => lines.push({ fields: fields as object, msg: msg ?? '' }),
    error: () => undefined,
    child: () => logger,
  };
  return { clock, logger, lines };
}

describe('RateLimitedWarning', () => {
  it('logs at most one line per interval and counts the ones left out on the next line', () => {
    const { clock, logger, lines } = fakes();
    const warning = new RateLimitedWarning(logger, clock);
    for (let i = 0; i < 1000; i++) {
      warning.warn({ remote: `r${i}` }, 'closing connection');
      clock.ms += 1; // a flood: 1000 in one second
    }
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0], { fields: { remote: 'r0' }, msg: 'closing connection' });
    clock.ms = WARNING_INTERVAL_MS;
    warning.warn({ remote: 'late' }, 'closing connection');
    assert.equal(lines.length, 2);
    assert.deepEqual(lines[1]!.fields, { remote: 'late', suppressed: 999 });
    clock.ms += 10 * WARNING_INTERVAL_MS;
    warning.warn({ remote: 'quiet' }, 'closing connection');
    assert.deepEqual(lines[2]!.fields, { remote: 'quiet' }, 'nothing left out since: no count');
  });

  it('a steady trickle below the rate is logged in full', () => {
    const { clock, logger, lines } = fakes();
    const warning = new RateLimitedWarning(logger, clock);
    for (let i = 0; i < 5; i++) {
      warning.warn({ i }, 'closing connection');
      clock.ms += WARNING_INTERVAL_MS;
    }
    assert.equal(lines.length, 5);
  });
});
