/**
 * The chaos run, short form (issue 12 item 6): librdkafka and Java producers (acks 0, 1, all,
 * idempotent, unclean election; the two clients in turn) and consumer groups (commit after, commit
 * before, auto-commit; one member of each client) against `skiff
 * start --nodes 3 --fault-injection` for 28 s while brokers are crashed and started through the admin
 * API and the whole process is SIGKILLed and restarted; then the checks from what the clients saw and
 * from the segment files.
 */
import * as assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatCounts } from './chaos-format';
import { runChaos } from './chaos-run';

describe('chaos: real clients against skiff start --nodes 3 with broker crashes and a process SIGKILL', () => {
  test(
    'no invariant violated; crashes and process kills injected; acks=all loses nothing',
    { timeout: 180_000 },
    async (t) => {
      const { report, progress, elapsedMs } = await runChaos({
        durationS: 28,
        seed: 12,
        faultKinds: ['broker-crash', 'process-kill'],
      });
      t.diagnostic(`wall ${elapsedMs} ms; ${formatCounts(report)}`);
      const context = `${JSON.stringify(report, null, 1)}\n${progress.join('\n')}`;
      assert.deepEqual(report.violations, [], context);
      assert.ok((report.faults['broker-crash'] ?? 0) > 0, context);
      assert.ok((report.faults['process-kill'] ?? 0) > 0, context);
      const acksAll = report.strategies.find((s) => s.strategy === 'acks=all');
      assert.ok(acksAll !== undefined && acksAll.records > 0, context);
      assert.equal(acksAll.lost, 0, context);
      assert.ok((report.checks['acks-all-durable'] ?? 0) > 0, context);
      assert.ok((report.checks['log-matching'] ?? 0) > 0, context);
      assert.ok((report.checks['committed-offsets-durable'] ?? 0) > 0, context);
      // Both clients took part: the Java producers' acks (acks=1, idempotent) and the Java members' records.
      for (const strategy of ['acks=1', 'acks=all idempotent'] as const)
        assert.ok(
          (report.strategies.find((s) => s.strategy === strategy)?.records ?? 0) > 0,
          `${strategy}\n${context}`,
        );
      const javaProcessed = progress.flatMap((line) => [...line.matchAll(/java (\d+)/g)].map((m) => Number(m[1])));
      assert.ok(
        javaProcessed.some((n) => n > 0),
        `Java group members processed records\n${context}`,
      );
    },
  );
});
