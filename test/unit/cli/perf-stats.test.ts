import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { consumeSummaryLine, LatencyStats, produceSummaryLine } from '../../../src/cli/perf-command';

describe('LatencyStats', () => {
  it('weights each batch latency by its record count', () => {
    const s = new LatencyStats();
    s.record(1, 90); // 90 records at 1 ms
    s.record(10, 9); // 9 at 10 ms
    s.record(100, 1); // 1 at 100 ms
    assert.equal(s.count, 100);
    assert.equal(s.avgMs, (90 + 90 + 100) / 100);
    assert.equal(s.maxMs, 100);
    assert.equal(s.percentile(0.5), 1);
    assert.equal(s.percentile(0.9), 1);
    assert.equal(s.percentile(0.95), 10);
    assert.equal(s.percentile(0.99), 10);
    assert.equal(s.percentile(0.999), 100);
  });

  it('is all zeros when empty', () => {
    const s = new LatencyStats();
    assert.equal(s.avgMs, 0);
    assert.equal(s.percentile(0.99), 0);
  });
});

describe('perf summary lines', () => {
  it('prints ProducerPerformance-style totals', () => {
    const s = new LatencyStats();
    s.record(2, 1000);
    assert.equal(
      produceSummaryLine(1000, 500, 1024, s),
      '1000 records sent, 2000.0 records/sec (1.95 MB/sec), 2.00 ms avg latency, 2.00 ms max latency, 2.00 ms 50th, 2.00 ms 99th, 2.00 ms 99.9th.',
    );
  });

  it('prints consume totals', () => {
    assert.equal(
      consumeSummaryLine(1000, 1024 * 1024, 2000),
      '1000 records received, 500.0 records/sec (0.50 MB/sec), 1.00 MB in 2000 ms.',
    );
  });
});
