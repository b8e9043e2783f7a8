/**
 * Schema conformance: every table in the registry checked field by field, version by version,
 * against Kafka's own message definitions (common/message/*.json inside the kafka-clients jar,
 * fetched from Maven Central by scripts/fetch-kafka-clients-jar.sh and read in place).
 *
 * - Versions Kafka 4.4.0 defines are checked against 4.4.0's JSON; versions our tables keep for
 *   older clients that Kafka 4.0 removed (Produce v0-2, Fetch v0-3, ...) against 3.9.1's JSON,
 *   the last line that defines them. A version neither defines is a difference.
 * - Per (message, version): flexible or not; then per struct, recursively: the non-tagged fields
 *   present, in order, and the tagged ones (by tag); each field's type (primitive, array, struct),
 *   nullability, tag, any field-level flexibleVersions; and its default where it is observable (the
 *   field is tagged, or absent at some valid version, or inside such a struct), taking Kafka's
 *   default rules (strings "", bytes empty, records null unless "null" is written) against ours
 *   (dsl.ts).
 * - Every registered API reaches Kafka 4.4.0's maximum version, unless BEHIND names it with a reason.
 * A difference fails unless ALLOWLIST names it with a reason; an allowlist entry that matches
 * nothing fails too, so the list stays short and true.
 */
import { before, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiSchemas } from '../../src/protocol/registry';
import { inRange, parseVersions } from '../../src/protocol/schema/dsl';
import type { FieldSpec, MessageSpec } from '../../src/protocol/schema/dsl';
import { FetchRequest } from '../../src/protocol/schema/fetch';
import { ProduceResponse } from '../../src/protocol/schema/produce';
import { compareAtVersion, fetchKafkaClientsJars, loadKafkaMessages, stripJsonComments } from './kafka-message-json';
import type { KafkaMessage } from './kafka-message-json';

/** The Kafka release our tables must match (and reach the maximum versions of). */
const KAFKA = '4.4.0';
/** The release that still defines the versions Kafka 4.0 removed. */
const KAFKA_3 = '3.9.1';

/** Accepted differences: a pattern over the difference lines, and why. */
const ALLOWLIST: readonly { readonly pattern: RegExp; readonly reason: string }[] = [
  {
    pattern:
      /^DescribeLogDirsResponse v[2-5] Results\.Topics\.Partitions: tagged fields \[10000:FsyncedOffset\] vs Kafka \[\]$/,
    reason:
      "Skiff's deliberate extension (schema/describe-log-dirs.ts): the replica's fsynced offset for `skiff topic " +
      "describe`, as a tagged field far from Kafka's tags; Kafka clients skip unknown tagged fields (KIP-482)",
  },
];

/**
 * APIs whose tables may stop below Kafka's newest version, with ours and the reason. An entry that
 * no longer matches (the table caught up or moved) fails the maximum-version test.
 */
const BEHIND: ReadonlyMap<string, { readonly ours: number; readonly reason: string }> = new Map([]);

let current: Map<string, KafkaMessage>;
let older: Map<string, KafkaMessage>;

before(() => {
  const jars = fetchKafkaClientsJars([KAFKA, KAFKA_3]);
  current = loadKafkaMessages(jars.get(KAFKA)!);
  older = loadKafkaMessages(jars.get(KAFKA_3)!);
  assert.ok(current.size > 100, `kafka-clients ${KAFKA} carries ${current.size} message definitions`);
});

const allowUsed = new Set<number>();

function unexplained(diffs: readonly string[]): string[] {
  return diffs.filter((d) => {
    const i = ALLOWLIST.findIndex((a) => a.pattern.test(d));
    if (i < 0) return true;
    allowUsed.add(i);
    return false;
  });
}

describe('schema tables match Kafka message definitions', () => {
  for (const api of apiSchemas.values()) {
    it(`${api.name} (key ${api.apiKey}) v${api.minVersion}-${api.maxVersion}`, () => {
      const diffs: string[] = [];
      for (const ours of [api.request, api.response]) {
        const theirs = current.get(ours.name);
        assert.ok(theirs, `Kafka ${KAFKA} has no ${ours.name}`);
        assert.equal(theirs.apiKey, ours.apiKey, `${ours.name} api key`);
        const theirsOld = older.get(ours.name);
        const valid = parseVersions(theirs.validVersions);
        const validOld = theirsOld === undefined ? null : parseVersions(theirsOld.validVersions);
        for (let v = api.minVersion; v <= api.maxVersion; v++) {
          if (inRange(valid, v)) diffs.push(...compareAtVersion(ours, theirs, v));
          else if (validOld !== null && inRange(validOld, v)) diffs.push(...compareAtVersion(ours, theirsOld!, v));
          else diffs.push(`${ours.name} v${v} <message>: no Kafka release (${KAFKA}, ${KAFKA_3}) defines this version`);
        }
      }
      const left = unexplained(diffs);
      if (left.length > 0)
        assert.fail(`${api.name}: ${left.length} differences from Kafka's message JSON:\n  ${left.join('\n  ')}`);
    });
  }
});

test(`every registered API reaches Kafka ${KAFKA}'s maximum version`, () => {
  const short: string[] = [];
  for (const api of apiSchemas.values()) {
    const theirs = current.get(api.request.name)!;
    const max = parseVersions(theirs.validVersions).max;
    const behind = BEHIND.get(api.name);
    if (behind !== undefined) {
      assert.ok(
        api.maxVersion === behind.ours && behind.ours < max,
        `BEHIND names ${api.name} at v${behind.ours}, but ours is ${api.maxVersion} and Kafka's ${max}: update BEHIND`,
      );
      continue;
    }
    if (api.maxVersion !== max)
      short.push(`${api.name}: ours ${api.minVersion}-${api.maxVersion}, Kafka ${KAFKA} ${theirs.validVersions}`);
  }
  assert.deepStrictEqual(short, []);
});

test('every allowlist entry explains some difference', { skip: ALLOWLIST.length === 0 }, () => {
  // Runs after the per-API tests (node:test runs a file's tests in order).
  const unused = ALLOWLIST.filter((_, i) => !allowUsed.has(i)).map((a) => String(a.pattern));
  assert.deepStrictEqual(unused, []);
});

describe('the comparison itself', () => {
  type Mutable = { -readonly [K in keyof FieldSpec]: FieldSpec[K] } & { fields?: Mutable[] };
  const copy = (m: MessageSpec): MessageSpec & { fields: Mutable[]; flexibleVersions: string } =>
    JSON.parse(JSON.stringify(m));
  const field = (fields: Mutable[], path: string): Mutable => {
    const [head, ...rest] = path.split('.');
    const f = fields.find((x) => x.name === head)!;
    return rest.length === 0 ? f : field(f.fields!, rest.join('.'));
  };

  it('notices order, type, nullability, tags, flexibility and observable defaults', () => {
    const fetch = copy(FetchRequest);
    field(fetch.fields, 'Topics.Partitions.HighWatermark').default = -1; // tagged: observable
    field(fetch.fields, 'MaxBytes').default = 100; // request field absent in v0-2: observable
    field(fetch.fields, 'Topics.Partitions').fields!.reverse();
    const d18 = compareAtVersion(fetch, current.get('FetchRequest')!, 18);
    assert.ok(
      d18.includes('FetchRequest v18 Topics.Partitions.HighWatermark: default -1 vs Kafka 9223372036854776000'),
      d18.join('\n'),
    );
    assert.ok(d18.includes('FetchRequest v18 MaxBytes: default 100 vs Kafka 2147483647'), d18.join('\n'));
    assert.ok(
      d18.some((d) => d.startsWith('FetchRequest v18 Topics.Partitions: fields [PartitionMaxBytes, ')),
      d18.join('\n'),
    );

    const produce = copy(ProduceResponse);
    produce.flexibleVersions = '10+';
    field(produce.fields, 'Responses.PartitionResponses.Index').type = 'int64';
    field(produce.fields, 'Responses.PartitionResponses.RecordErrors.BatchIndexErrorMessage').nullableVersions = '9+';
    field(produce.fields, 'Responses.PartitionResponses.CurrentLeader').tag = 3;
    field(produce.fields, 'Responses.PartitionResponses.CurrentLeader.LeaderId').default = 0;
    field(produce.fields, 'ThrottleTimeMs').default = 7; // response field present wherever it exists: not observable
    assert.deepStrictEqual(compareAtVersion(produce, current.get('ProduceResponse')!, 9), [
      'ProduceResponse v9 <message>: flexible false vs Kafka true',
      'ProduceResponse v9 Responses.PartitionResponses.Index: type int64 vs Kafka int32',
    ]);
    assert.deepStrictEqual(compareAtVersion(produce, current.get('ProduceResponse')!, 8), [
      'ProduceResponse v8 Responses.PartitionResponses.Index: type int64 vs Kafka int32',
      'ProduceResponse v8 Responses.PartitionResponses.RecordErrors.BatchIndexErrorMessage: nullable false vs Kafka true',
    ]);
    assert.deepStrictEqual(compareAtVersion(produce, current.get('ProduceResponse')!, 10), [
      'ProduceResponse v10 Responses.PartitionResponses: tagged fields [3:CurrentLeader] vs Kafka [0:CurrentLeader]',
      'ProduceResponse v10 Responses.PartitionResponses.Index: type int64 vs Kafka int32',
      'ProduceResponse v10 Responses.PartitionResponses.CurrentLeader: tag 3 vs Kafka 0',
      'ProduceResponse v10 Responses.PartitionResponses.CurrentLeader.LeaderId: default 0 vs Kafka -1',
    ]);
    const missing = copy(ProduceResponse);
    field(missing.fields, 'Responses').fields!.splice(0, 1); // Name
    assert.deepStrictEqual(compareAtVersion(missing, current.get('ProduceResponse')!, 13), []); // Name is 0-12
    assert.deepStrictEqual(compareAtVersion(missing, current.get('ProduceResponse')!, 12), [
      'ProduceResponse v12 Responses: fields [PartitionResponses] vs Kafka [Name, PartitionResponses]',
    ]);
  });

  it('strips // comments but not // inside strings', () => {
    assert.deepStrictEqual(JSON.parse(stripJsonComments('// c\n{ "a": "x // y", // z\n "b": "\\"//" }')), {
      a: 'x // y',
      b: '"//',
    });
  });
});
