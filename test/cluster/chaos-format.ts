/** One line of a verify report's counts, for test diagnostics and the measurements in the README. */
import type { VerifyReport } from '../../src/verify/report';

/** `faults {..} checks {..} | strategy records/lost/duplicated ...` */
export function formatCounts(report: VerifyReport): string {
  const strategies = report.strategies.map((s) => `${s.strategy} ${s.records}/${s.lost}/${s.duplicated}`).join('; ');
  return `faults ${JSON.stringify(report.faults)} checks ${JSON.stringify(report.checks)} | records/lost/duplicated: ${strategies}`;
}
