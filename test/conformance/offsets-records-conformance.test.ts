/**
 * The __consumer_offsets record layouts (src/group/offsets-records.ts) checked field by field,
 * version by version, against Kafka's own definitions: OffsetCommitKey/Value and
 * GroupMetadataKey/Value in the kafka-group-coordinator jar of the Kafka fixture (Apache Kafka 4.4,
 * fetched by scripts/kafka-fixture.sh into .cache/kafka; read in place, never committed).
 * Keys: Kafka numbers the key layouts by record type (OffsetCommitKey is key version 0 or 1,
 * GroupMetadataKey 2) while its JSON calls each one version 0, so our key tables are compared at
 * the version Kafka's JSON gives them.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readdirSync } from 'node:fs';
import { OFFSETS_RECORD_SPECS } from '../../src/group/offsets-records';
import type { MessageSpec } from '../../src/protocol/schema/dsl';
import { compareAtVersion, parseMessageJson, readJarEntries, stripJsonComments } from './kafka-message-json';
import type { KafkaMessage } from './kafka-message-json';
import { ensureKafkaJars } from '../helpers/kafka-fixture';

let kafka: Map<string, KafkaMessage>;

before(async () => {
  const lib = await ensureKafkaJars();
  const jar = readdirSync(lib).find((f) => /^kafka-group-coordinator-\d.*\.jar$/.test(f));
  assert.ok(jar, `a kafka-group-coordinator jar in ${lib}`);
  const entries = readJarEntries(path.join(lib, jar), (n) =>
    /^common\/message\/(OffsetCommit|GroupMetadata)(Key|Value)\.json$/.test(n),
  );
  kafka = new Map(
    [...entries.values()].map((bytes) => {
      const m = parseMessageJson(stripJsonComments(bytes.toString('utf8')));
      return [m.name, m];
    }),
  );
  assert.equal(kafka.size, 4, 'the four record definitions are in the jar');
});

/** Our key table renumbered to the single version 0 Kafka's JSON uses. */
function asVersionZero(spec: MessageSpec): MessageSpec {
  return { ...spec, validVersions: '0', fields: spec.fields.map((f) => ({ ...f, versions: '0+' })) };
}

describe("__consumer_offsets records match Kafka's group-coordinator definitions", () => {
  const cases: [MessageSpec, number[]][] = [
    [asVersionZero(OFFSETS_RECORD_SPECS.OffsetCommitKey), [0]],
    [asVersionZero(OFFSETS_RECORD_SPECS.GroupMetadataKey), [0]],
    [OFFSETS_RECORD_SPECS.OffsetCommitValue, [0, 1, 2, 3, 4]],
    [OFFSETS_RECORD_SPECS.GroupMetadataValue, [0, 1, 2, 3, 4]],
  ];
  for (const [ours, versions] of cases) {
    it(`${ours.name} v${versions.join(',')}`, () => {
      const theirs = kafka.get(ours.name);
      assert.ok(theirs, `Kafka defines ${ours.name}`);
      assert.equal(theirs.validVersions, ours.validVersions, 'same version range');
      const diffs = versions.flatMap((v) => compareAtVersion(ours, theirs, v));
      assert.deepEqual(diffs, []);
    });
  }
});
