import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatBenchTable, opsPerSecond } from '../../../bench/table';

describe('npm run bench table (bench/table.ts)', () => {
  const rows = [
    { name: 'batch: validate 1 KiB batch (header + CRC-32C)', meanMs: 0.0025 },
    {
      name: 'compaction: offset map + filter of a 1 MiB segment (1000 keys, 10 versions each) with a label longer than any terminal column',
      meanMs: 12.5,
    },
    { name: 'index: offset lookup', meanMs: 0.0001234 },
  ];

  it('derives each row ops/s from its own mean, so the two agree', () => {
    const lines = formatBenchTable(rows);
    assert.equal(lines.length, rows.length + 1);
    assert.match(lines[0]!, /^\s*ops\/s\s+mean µs\s+task$/);
    for (const [i, row] of rows.entries()) {
      const m = /^\s*([\d,]+)\s+([\d.]+)\s+(.*)$/.exec(lines[i + 1]!);
      assert.ok(m, lines[i + 1]);
      const ops = Number(m[1]!.replace(/,/g, ''));
      const meanUs = Number(m[2]);
      // ops/s x mean (s) = 1, to the rounding of the printed mean (2 decimals of µs).
      assert.ok(Math.abs(ops * (meanUs / 1e6) - 1) < 0.05 + 0.005 / meanUs, `${ops} ops/s vs ${meanUs} µs`);
      assert.equal(ops, Math.round(1000 / row.meanMs));
    }
  });

  it('prints every label in full, whatever its length, with the numbers aligned', () => {
    const lines = formatBenchTable(rows);
    for (const [i, row] of rows.entries()) assert.ok(lines[i + 1]!.endsWith(`  ${row.name}`), lines[i + 1]);
    const nameColumn = lines.map((l, i) => l.length - (i === 0 ? 'task'.length : rows[i - 1]!.name.length));
    assert.equal(new Set(nameColumn).size, 1, 'the task column starts at the same place on every line');
  });

  it('has no rate for a task without a result', () => {
    assert.equal(opsPerSecond(NaN), 0);
    assert.match(formatBenchTable([{ name: 'failed task', meanMs: NaN }])[1]!, /^\s*-\s+-\s+failed task$/);
  });
});
