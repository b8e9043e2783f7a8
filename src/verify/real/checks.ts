/**
 * The client-side checks of a real run (`skiff verify --bootstrap`): pure functions from what the
 * clients saw (delivery reports, records processed, commits acknowledged) and what a final full read of
 * each topic returned, to invariant checks counted by name, violations, and the per-strategy counts of
 * src/verify/report.ts. No I/O here, so test/unit/verify/real-checks.test.ts feeds them observations.
 */
import type { InvariantName, StrategyCounts, Violation } from '../report';
import type { CONSUMER_STRATEGIES, PRODUCER_STRATEGIES } from '../report';

/** One of the producer strategies. */
export type ProducerStrategy = (typeof PRODUCER_STRATEGIES)[number];
/** One of the consumer strategies. */
export type ConsumerStrategy = (typeof CONSUMER_STRATEGIES)[number];

/** A record a producer's delivery report acknowledged: its value and where (offset -1 under acks=0). */
export interface AckedRecord {
  value: string;
  partition: number;
  offset: number;
}

/** What one producer saw: its strategy, topic, the records acknowledged and how many failed. */
export interface ProducerObservation {
  strategy: ProducerStrategy;
  topic: string;
  acked: AckedRecord[];
  failed: number;
}

/** One record of a final read. */
export interface ReadRecord {
  offset: number;
  value: string | null;
}

/** A final full read of one topic: per partition, the records from offset 0 (its log start) to its end. */
export interface TopicRead {
  topic: string;
  /** partition → records in read order, from the log start offset to the end offset. */
  partitions: Map<number, ReadRecord[]>;
  /** partition → the end offset (high watermark) the read went to. */
  endOffsets: Map<number, number>;
  /** partition → the log start offset (0 for a fresh topic without retention). */
  logStartOffsets: Map<number, number>;
}

/** One event a group member printed, in the order it printed them. */
export type MemberEvent =
  { kind: 'assigned'; partitions: number[] } | { kind: 'record'; partition: number; offset: number; value: string };

/** What one consumer group saw: every member process's events, and the commits the coordinator acknowledged. */
export interface GroupObservation {
  strategy: ConsumerStrategy;
  group: string;
  topic: string;
  /** One list per member process (a restarted member is a new process), events in print order. */
  members: MemberEvent[][];
  /** partition → the highest next-offset an acknowledged commit carried. */
  acknowledgedCommits: Map<number, number>;
}

/** The checks counted and violations found so far; every check function adds to one. */
export interface CheckTally {
  checks: Partial<Record<InvariantName, number>>;
  violations: Violation[];
  /** Violations past {@link MAX_VIOLATIONS_PER_INVARIANT} per invariant: counted here, not listed. */
  suppressed: Partial<Record<InvariantName, number>>;
}

/** The violations listed per invariant; the rest are only counted (a lost partition would list thousands). */
export const MAX_VIOLATIONS_PER_INVARIANT = 20;

/** An empty tally. */
export function newTally(): CheckTally {
  return { checks: {}, violations: [], suppressed: {} };
}

function check(tally: CheckTally, invariant: InvariantName, ok: boolean, message: () => string): void {
  tally.checks[invariant] = (tally.checks[invariant] ?? 0) + 1;
  if (ok) return;
  const listed = tally.violations.filter((v) => v.invariant === invariant).length;
  if (listed < MAX_VIOLATIONS_PER_INVARIANT) tally.violations.push({ invariant, message: message() });
  else tally.suppressed[invariant] = (tally.suppressed[invariant] ?? 0) + 1;
}

/** Each value's (partition, offset) places in a final read. */
function placesByValue(read: TopicRead): Map<string, Array<{ partition: number; offset: number }>> {
  const out = new Map<string, Array<{ partition: number; offset: number }>>();
  for (const [partition, records] of read.partitions) {
    for (const r of records) {
      if (r.value === null) continue;
      const places = out.get(r.value) ?? [];
      places.push({ partition, offset: r.offset });
      out.set(r.value, places);
    }
  }
  return out;
}

/**
 * A producer's cost against the final read of its topic. `records`: acknowledged; `lost`: missing
 * from the log or, when the ack gave an offset, not at it; `duplicated`: acknowledged values the log
 * holds more than once. Under acks=all on a topic without unclean election each acknowledged record
 * is one `acks-all-durable` check (a loss is a violation); under an idempotent producer each one is
 * also an `idempotent-no-duplicate` check.
 */
export function checkProducer(obs: ProducerObservation, read: TopicRead, tally: CheckTally): StrategyCounts {
  const places = placesByValue(read);
  const durable = obs.strategy === 'acks=all' || obs.strategy === 'acks=all idempotent';
  const idempotent = obs.strategy === 'acks=all idempotent';
  let lost = 0;
  let duplicated = 0;
  for (const ack of obs.acked) {
    const at = places.get(ack.value) ?? [];
    const where = `${obs.topic}-${ack.partition} offset ${ack.offset} value ${ack.value}`;
    const kept =
      ack.offset < 0 ? at.length > 0 : at.some((p) => p.partition === ack.partition && p.offset === ack.offset);
    if (!kept) lost++;
    if (at.length > 1) duplicated++;
    const found = at.map((p) => `${p.partition}@${p.offset}`).join(', ') || 'nowhere';
    if (durable)
      check(
        tally,
        'acks-all-durable',
        kept,
        () => `${obs.strategy} record acknowledged at ${where} is lost (found at ${found})`,
      );
    if (idempotent)
      check(
        tally,
        'idempotent-no-duplicate',
        at.length <= 1,
        () => `idempotent record ${where} is stored ${at.length} times (${found})`,
      );
  }
  return { strategy: obs.strategy, records: obs.acked.length, lost, duplicated };
}

/**
 * A final read's offsets: per partition dense and increasing from the log start offset to the end
 * offset (a topic that is not compacted and carries no transactions has no gaps). One
 * `dense-offsets` check per partition.
 */
export function checkDenseRead(read: TopicRead, tally: CheckTally): void {
  for (const [partition, records] of read.partitions) {
    const start = read.logStartOffsets.get(partition) ?? 0;
    const end = read.endOffsets.get(partition) ?? start + records.length;
    let expected = start;
    let bad: string | null = null;
    for (const r of records) {
      if (r.offset !== expected) {
        bad = `${read.topic}-${partition}: the final read has offset ${r.offset} (value ${r.value}) where ${expected} was next`;
        break;
      }
      expected++;
    }
    if (bad === null && expected !== end)
      bad = `${read.topic}-${partition}: the final read ends at offset ${expected}, the end offset is ${end}`;
    check(tally, 'dense-offsets', bad === null, () => bad ?? '');
  }
}

/**
 * What each member process read: per partition, within one assignment, strictly increasing offsets
 * (an assignment may start again lower, from the committed offset). One `dense-offsets` check per
 * record after the first of an assignment.
 */
export function checkMemberOrder(obs: GroupObservation, tally: CheckTally): void {
  obs.members.forEach((events, member) => {
    const last = new Map<number, number>();
    for (const e of events) {
      if (e.kind === 'assigned') {
        last.clear();
        continue;
      }
      const before = last.get(e.partition);
      last.set(e.partition, e.offset);
      if (before === undefined) continue;
      check(
        tally,
        'dense-offsets',
        e.offset > before,
        () =>
          `group ${obs.group} member process ${member} read ${obs.topic}-${e.partition} offset ${e.offset} ` +
          `(value ${e.value}) after offset ${before}`,
      );
    }
  });
}

/**
 * A group's cost against the final read of its topic, and its committed offsets. `records`: records
 * the log holds; `lost`: of those, never processed by any member; `duplicated`: processed more than
 * once. `committed` (partition → the offset the coordinator serves after the run, -1 for none) must
 * be at least each acknowledged commit: one `committed-offsets-durable` check per partition committed.
 */
export function checkGroup(
  obs: GroupObservation,
  read: TopicRead,
  committed: ReadonlyMap<number, number>,
  tally: CheckTally,
): StrategyCounts {
  const processed = new Map<string, number>();
  for (const events of obs.members)
    for (const e of events) {
      if (e.kind !== 'record') continue;
      const key = `${e.partition}:${e.offset}`;
      processed.set(key, (processed.get(key) ?? 0) + 1);
    }
  let records = 0;
  let lost = 0;
  let duplicated = 0;
  for (const [partition, rs] of read.partitions)
    for (const r of rs) {
      records++;
      const times = processed.get(`${partition}:${r.offset}`) ?? 0;
      if (times === 0) lost++;
      if (times > 1) duplicated++;
    }
  for (const [partition, acknowledged] of obs.acknowledgedCommits) {
    const served = committed.get(partition) ?? -1;
    check(
      tally,
      'committed-offsets-durable',
      served >= acknowledged,
      () =>
        `group ${obs.group} ${obs.topic}-${partition}: a commit of offset ${acknowledged} was acknowledged, ` +
        `the coordinator serves ${served} after the run`,
    );
  }
  return { strategy: obs.strategy, records, lost, duplicated };
}

/** Adds `b` to `a` (the same strategy's counts from two clients). */
export function addCounts(a: StrategyCounts, b: StrategyCounts): StrategyCounts {
  return {
    strategy: a.strategy,
    records: a.records + b.records,
    lost: a.lost + b.lost,
    duplicated: a.duplicated + b.duplicated,
  };
}
