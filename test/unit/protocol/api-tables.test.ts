/** API keys, error codes, and compile-time checks that table-derived types are precise. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey, ErrorCode, apiKeyName, errorName } from '../../../src/protocol/index';
import type {
  FetchRequestData,
  FetchResponseData,
  MetadataRequestData,
  ProduceRequestData,
  DeleteTopicsRequestData,
} from '../../../src/protocol/index';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<_T extends true>(): void {}

it('table-derived types are exact (checked by tsc)', () => {
  expectType<Equal<FetchResponseData['responses'][number]['partitions'][number]['records'], Buffer | null>>();
  expectType<
    Equal<
      FetchResponseData['responses'][number]['partitions'][number]['abortedTransactions'],
      { producerId: number; firstOffset: number }[] | null
    >
  >();
  expectType<Equal<FetchRequestData['topics'][number]['partitions'][number]['fetchOffset'], number>>();
  expectType<Equal<FetchRequestData['clusterId'], string | null>>();
  expectType<Equal<MetadataRequestData['topics'], { topicId: string; name: string | null }[] | null>>();
  expectType<
    Equal<ProduceRequestData['topicData'][number]['partitionData'][number], { index: number; records: Buffer | null }>
  >();
  expectType<Equal<DeleteTopicsRequestData['topicNames'], string[]>>();
});

it('API key names', () => {
  assert.equal(ApiKey.Produce, 0);
  assert.equal(ApiKey.ApiVersions, 18);
  assert.equal(ApiKey.InitProducerId, 22);
  assert.equal(apiKeyName(3), 'Metadata');
  assert.equal(apiKeyName(87), 'ReadShareGroupStateSummary');
  assert.equal(apiKeyName(999), 'Unknown(999)');
});

it('error codes and names', () => {
  assert.equal(ErrorCode.NONE, 0);
  assert.equal(ErrorCode.OFFSET_OUT_OF_RANGE, 1);
  assert.equal(ErrorCode.CORRUPT_MESSAGE, 2);
  assert.equal(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 3);
  assert.equal(ErrorCode.NOT_LEADER_OR_FOLLOWER, 6);
  assert.equal(ErrorCode.MESSAGE_TOO_LARGE, 10);
  assert.equal(ErrorCode.NOT_ENOUGH_REPLICAS, 19);
  assert.equal(ErrorCode.UNSUPPORTED_VERSION, 35);
  assert.equal(ErrorCode.UNKNOWN_TOPIC_ID, 100);
  assert.equal(ErrorCode.FENCED_MEMBER_EPOCH, 110);
  assert.equal(errorName(-1), 'UNKNOWN_SERVER_ERROR');
  assert.equal(errorName(35), 'UNSUPPORTED_VERSION');
  assert.equal(errorName(5000), 'UNKNOWN_ERROR_CODE(5000)');
  const codes = Object.values(ErrorCode);
  assert.equal(new Set(codes).size, codes.length, 'codes are unique');
  for (let c = -1; c <= 133; c++) assert.ok(!errorName(c).startsWith('UNKNOWN_ERROR_CODE'), `code ${c} has a name`);
});
