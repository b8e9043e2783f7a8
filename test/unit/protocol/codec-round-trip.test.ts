/**
 * Round trip of every API in the registry, every version, request and response: a value with
 * non-default data in every field present at that version (and one with nulls/empties), encoded
 * with the full framing (size + header) and decoded back, must be deep-equal.
 */
import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiSchemas,
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  encodeMessage,
  decodeBuffer,
  defaultMessage,
  ApiKey,
  EncodeError,
  FetchRequest,
  FetchResponse,
  MetadataRequest,
  MetadataResponse,
} from '../../../src/protocol/index';
import { ZERO_UUID } from '../../../src/protocol/primitives';
import { generateMessage, generateStruct, prng } from './schema-values';

/** Every API's table range: Kafka 4.1's maximum (checked against its JSON by test/conformance), from v0. */
const REQUIRED_RANGES: [ApiKey, number, number][] = [
  [ApiKey.ApiVersions, 0, 5],
  [ApiKey.Metadata, 0, 13],
  [ApiKey.Produce, 0, 13],
  [ApiKey.Fetch, 0, 18],
  [ApiKey.ListOffsets, 0, 11],
  [ApiKey.CreateTopics, 0, 7],
  [ApiKey.DeleteTopics, 0, 6],
  [ApiKey.InitProducerId, 0, 6],
  [ApiKey.DeleteRecords, 0, 2],
  [ApiKey.OffsetForLeaderEpoch, 0, 4],
  [ApiKey.DescribeConfigs, 0, 4],
  [ApiKey.AlterConfigs, 0, 2],
  [ApiKey.DescribeLogDirs, 0, 5],
  [ApiKey.CreatePartitions, 0, 3],
  [ApiKey.IncrementalAlterConfigs, 0, 1],
  [ApiKey.DescribeCluster, 0, 2],
  [ApiKey.FindCoordinator, 0, 6],
  [ApiKey.ElectLeaders, 0, 2],
  [ApiKey.JoinGroup, 0, 9],
  [ApiKey.SyncGroup, 0, 5],
  [ApiKey.Heartbeat, 0, 4],
  [ApiKey.LeaveGroup, 0, 5],
  [ApiKey.OffsetCommit, 0, 10],
  [ApiKey.OffsetFetch, 0, 10],
  [ApiKey.ListGroups, 0, 5],
  [ApiKey.DescribeGroups, 0, 6],
  [ApiKey.DeleteGroups, 0, 3],
  [ApiKey.OffsetDelete, 0, 0],
];

/** First flexible version of the APIs added or extended with the admin tables (Kafka's flexibleVersions). */
const FIRST_FLEXIBLE: [ApiKey, number][] = [
  [ApiKey.Metadata, 9],
  [ApiKey.ListOffsets, 6],
  [ApiKey.DeleteRecords, 2],
  [ApiKey.OffsetForLeaderEpoch, 4],
  [ApiKey.DescribeConfigs, 4],
  [ApiKey.AlterConfigs, 2],
  [ApiKey.DescribeLogDirs, 2],
  [ApiKey.CreatePartitions, 2],
  [ApiKey.IncrementalAlterConfigs, 1],
  [ApiKey.DescribeCluster, 0],
  [ApiKey.ElectLeaders, 2],
  [ApiKey.JoinGroup, 6],
  [ApiKey.SyncGroup, 4],
  [ApiKey.Heartbeat, 4],
  [ApiKey.LeaveGroup, 4],
  [ApiKey.OffsetCommit, 8],
  [ApiKey.OffsetFetch, 6],
  [ApiKey.ListGroups, 3],
  [ApiKey.DescribeGroups, 5],
  [ApiKey.DeleteGroups, 2],
];

test('the registry covers the required APIs and version ranges', () => {
  for (const [key, min, max] of REQUIRED_RANGES) {
    const api = apiSchemas.get(key);
    assert.ok(api, `missing ${ApiKey[key]}`);
    assert.equal(api.minVersion, min, ApiKey[key]);
    assert.equal(api.maxVersion, max, ApiKey[key]);
  }
});

test('flexible versions start where Kafka says', () => {
  for (const [key, first] of FIRST_FLEXIBLE) {
    const api = apiSchemas.get(key)!;
    assert.equal(api.flexible.min, first, ApiKey[key]);
    assert.equal(api.flexible.max, Infinity, ApiKey[key]);
  }
});

for (const api of apiSchemas.values()) {
  describe(`${api.name} round trips`, () => {
    for (let version = api.minVersion; version <= api.maxVersion; version++) {
      it(`request v${version}`, () => {
        for (const variant of ['full', 'nulls'] as const) {
          const seed = api.apiKey * 1000 + version * 10 + (variant === 'full' ? 1 : 2);
          const where = `${api.name} request v${version} ${variant}`;
          const request = generateMessage(api.request, version, variant, seed);
          const wire = encodeRequest(api.apiKey, version, seed, `client-${version}`, request);
          assert.equal(wire.readInt32BE(0), wire.length - 4, `${where}: size prefix`);
          const decoded = decodeRequest(wire.subarray(4));
          assert.equal(decoded.header.apiKey, api.apiKey);
          assert.equal(decoded.header.apiVersion, version);
          assert.equal(decoded.header.correlationId, seed);
          assert.equal(decoded.header.clientId, `client-${version}`);
          assert.deepStrictEqual(decoded.body, request, where);
        }
      });
      it(`response v${version}`, () => {
        for (const variant of ['full', 'nulls'] as const) {
          const seed = api.apiKey * 1000 + version * 10 + (variant === 'full' ? 3 : 4);
          const where = `${api.name} response v${version} ${variant}`;
          const response = generateMessage(api.response, version, variant, seed);
          const out = encodeResponse(api.apiKey, version, seed, response);
          assert.equal(out.readInt32BE(0), out.length - 4, `${where}: size prefix`);
          const back = decodeResponse(api.apiKey, version, out.subarray(4));
          assert.equal(back.correlationId, seed);
          assert.deepStrictEqual(back.body, response, where);
        }
      });
    }
  });
}

test('fields absent at a version are dropped on encode and decode to their defaults', () => {
  const full = generateStruct(FetchResponse.fields, 12, 'full', prng(7));
  const v0 = decodeBuffer(FetchResponse, 0, encodeMessage(FetchResponse, 0, full));
  const expected = defaultMessage(FetchResponse, 0);
  // v0 keeps only topic, partitionIndex, errorCode, highWatermark, records.
  assert.equal(v0.throttleTimeMs, 0);
  assert.equal(v0.sessionId, 0);
  assert.equal(expected.responses.length, 0);
  const p = v0.responses[0]!.partitions[0]!;
  const fp = (full.responses as { partitions: Record<string, unknown>[] }[])[0]!.partitions[0]!;
  assert.equal(p.partitionIndex, fp.partitionIndex);
  assert.equal(p.highWatermark, fp.highWatermark);
  assert.equal(p.lastStableOffset, -1);
  assert.equal(p.logStartOffset, -1);
  assert.equal(p.preferredReadReplica, -1);
  assert.deepStrictEqual(p.abortedTransactions, []);
  assert.deepStrictEqual(p.divergingEpoch, { epoch: -1, endOffset: -1 });
  assert.deepStrictEqual(p.records, fp.records);
});

test('omitted fields encode as their defaults', () => {
  assert.deepStrictEqual(decodeBuffer(MetadataRequest, 4, encodeMessage(MetadataRequest, 4, {})), {
    topics: [],
    allowAutoTopicCreation: true,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  });
  const f = decodeBuffer(
    FetchRequest,
    12,
    encodeMessage(FetchRequest, 12, { topics: [{ topic: 't', partitions: [{ partition: 3 }] }] }),
  );
  assert.equal(f.replicaId, -1);
  assert.equal(f.maxBytes, 0x7fffffff);
  assert.equal(f.sessionEpoch, -1);
  assert.equal(f.clusterId, null);
  assert.equal(f.rackId, '');
  assert.deepStrictEqual(f.topics[0]!.partitions[0], {
    partition: 3,
    currentLeaderEpoch: -1,
    fetchOffset: 0,
    lastFetchedEpoch: -1,
    logStartOffset: -1,
    partitionMaxBytes: 0,
    replicaDirectoryId: ZERO_UUID,
    highWatermark: 2 ** 63, // Long.MAX_VALUE as a double
  });
});

test('Fetch v13+ names topics by id; v18 leaves HighWatermark (default Long.MAX_VALUE) off the wire at its default', () => {
  const topicId = 'AQIDBAUGBwgJCgsMDQ4PEA';
  const body = { topics: [{ topic: 'ignored-from-v13', topicId, partitions: [{ partition: 0, fetchOffset: 5 }] }] };
  const v18 = encodeMessage(FetchRequest, 18, body);
  const back = decodeBuffer(FetchRequest, 18, v18);
  assert.equal(back.topics[0]!.topic, '');
  assert.equal(back.topics[0]!.topicId, topicId);
  assert.equal(back.topics[0]!.partitions[0]!.highWatermark, 2 ** 63);
  // Same bytes as v17 (whose partitions have no tag 1): the default is not written.
  assert.deepStrictEqual(v18, encodeMessage(FetchRequest, 17, body));
  const withHw = encodeMessage(FetchRequest, 18, {
    topics: [{ topicId, partitions: [{ partition: 0, highWatermark: 42 }] }],
  });
  assert.equal(decodeBuffer(FetchRequest, 18, withHw).topics[0]!.partitions[0]!.highWatermark, 42);
  const v12 = decodeBuffer(FetchRequest, 12, encodeMessage(FetchRequest, 12, body));
  assert.equal(v12.topics[0]!.topic, 'ignored-from-v13');
  assert.equal(v12.topics[0]!.topicId, ZERO_UUID);
});

test('encoding a value the table cannot carry is a caller bug (EncodeError / RangeError)', () => {
  assert.throws(
    () => encodeMessage(MetadataResponse, 5, { topics: [{ name: null as unknown as string }] }),
    (e: unknown) => e instanceof EncodeError && /MetadataResponse\.Topics\.Name/.test((e as Error).message),
  );
  assert.throws(() => encodeMessage(MetadataRequest, 0, { topics: null }), EncodeError);
  assert.doesNotThrow(() => encodeMessage(MetadataRequest, 1, { topics: null }));
  assert.throws(
    () => encodeMessage(FetchRequest, 4, { topics: [{ topic: 't', partitions: [{ fetchOffset: 2 ** 60 }] }] }),
    RangeError,
  );
  assert.throws(() => encodeMessage(MetadataResponse, 10, { topics: [{ name: 't', topicId: 'nope' }] }), RangeError);
  assert.throws(() => encodeMessage(FetchRequest, 19, {}), /no version 19/);
});
