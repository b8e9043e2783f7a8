/**
 * The API registry: which Kafka APIs Skiff can encode and decode, each with its request and
 * response tables. Adding an API is adding its schema file and one line here.
 */
import { ApiKey } from './api-keys';
import { precompile } from './codec';
import type { MessageSpec, VersionRange } from './schema/dsl';
import { parseVersions } from './schema/dsl';
import { AlterConfigsRequest, AlterConfigsResponse } from './schema/alter-configs';
import { ApiVersionsRequest, ApiVersionsResponse } from './schema/api-versions';
import { CreatePartitionsRequest, CreatePartitionsResponse } from './schema/create-partitions';
import { CreateTopicsRequest, CreateTopicsResponse } from './schema/create-topics';
import { DeleteGroupsRequest, DeleteGroupsResponse } from './schema/delete-groups';
import { DeleteRecordsRequest, DeleteRecordsResponse } from './schema/delete-records';
import { DeleteTopicsRequest, DeleteTopicsResponse } from './schema/delete-topics';
import { DescribeClusterRequest, DescribeClusterResponse } from './schema/describe-cluster';
import { DescribeConfigsRequest, DescribeConfigsResponse } from './schema/describe-configs';
import { DescribeGroupsRequest, DescribeGroupsResponse } from './schema/describe-groups';
import { DescribeLogDirsRequest, DescribeLogDirsResponse } from './schema/describe-log-dirs';
import { ElectLeadersRequest, ElectLeadersResponse } from './schema/elect-leaders';
import { FetchRequest, FetchResponse } from './schema/fetch';
import { FindCoordinatorRequest, FindCoordinatorResponse } from './schema/find-coordinator';
import { HeartbeatRequest, HeartbeatResponse } from './schema/heartbeat';
import { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from './schema/incremental-alter-configs';
import { InitProducerIdRequest, InitProducerIdResponse } from './schema/init-producer-id';
import { JoinGroupRequest, JoinGroupResponse } from './schema/join-group';
import { LeaveGroupRequest, LeaveGroupResponse } from './schema/leave-group';
import { ListGroupsRequest, ListGroupsResponse } from './schema/list-groups';
import { ListOffsetsRequest, ListOffsetsResponse } from './schema/list-offsets';
import { MetadataRequest, MetadataResponse } from './schema/metadata';
import { OffsetCommitRequest, OffsetCommitResponse } from './schema/offset-commit';
import { OffsetDeleteRequest, OffsetDeleteResponse } from './schema/offset-delete';
import { OffsetFetchRequest, OffsetFetchResponse } from './schema/offset-fetch';
import { OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse } from './schema/offset-for-leader-epoch';
import { ProduceRequest, ProduceResponse } from './schema/produce';
import { SyncGroupRequest, SyncGroupResponse } from './schema/sync-group';

/**
 * One API's tables. `minVersion`/`maxVersion` are the tables' validVersions (what the codec can
 * handle), not necessarily what a handler advertises in ApiVersions.
 */
export interface ApiSchema {
  readonly apiKey: ApiKey;
  readonly name: string;
  readonly request: MessageSpec;
  readonly response: MessageSpec;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** Parsed flexibleVersions (shared by request and response). */
  readonly flexible: VersionRange;
}

function entry(apiKey: ApiKey, request: MessageSpec, response: MessageSpec): [number, ApiSchema] {
  if (request.apiKey !== apiKey || response.apiKey !== apiKey)
    throw new Error(`table key mismatch for ${ApiKey[apiKey]}`);
  if (request.validVersions !== response.validVersions)
    throw new Error(`${ApiKey[apiKey]}: request and response version ranges differ`);
  if (request.flexibleVersions !== response.flexibleVersions)
    throw new Error(`${ApiKey[apiKey]}: request and response flexible ranges differ`);
  precompile(request);
  precompile(response);
  const range = parseVersions(request.validVersions);
  const flexible = parseVersions(request.flexibleVersions);
  return [
    apiKey,
    { apiKey, name: ApiKey[apiKey], request, response, minVersion: range.min, maxVersion: range.max, flexible },
  ];
}

/**
 * apiKey -> tables, for every API Skiff can encode and decode. Having a table does not mean a
 * handler serves it: the broker advertises and accepts only what its handlers declare.
 */
export const apiSchemas: ReadonlyMap<number, ApiSchema> = new Map([
  entry(ApiKey.Produce, ProduceRequest, ProduceResponse),
  entry(ApiKey.Fetch, FetchRequest, FetchResponse),
  entry(ApiKey.ListOffsets, ListOffsetsRequest, ListOffsetsResponse),
  entry(ApiKey.Metadata, MetadataRequest, MetadataResponse),
  entry(ApiKey.ApiVersions, ApiVersionsRequest, ApiVersionsResponse),
  entry(ApiKey.CreateTopics, CreateTopicsRequest, CreateTopicsResponse),
  entry(ApiKey.DeleteTopics, DeleteTopicsRequest, DeleteTopicsResponse),
  entry(ApiKey.InitProducerId, InitProducerIdRequest, InitProducerIdResponse),
  entry(ApiKey.DeleteRecords, DeleteRecordsRequest, DeleteRecordsResponse),
  entry(ApiKey.OffsetForLeaderEpoch, OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse),
  entry(ApiKey.DescribeConfigs, DescribeConfigsRequest, DescribeConfigsResponse),
  entry(ApiKey.AlterConfigs, AlterConfigsRequest, AlterConfigsResponse),
  entry(ApiKey.DescribeLogDirs, DescribeLogDirsRequest, DescribeLogDirsResponse),
  entry(ApiKey.CreatePartitions, CreatePartitionsRequest, CreatePartitionsResponse),
  entry(ApiKey.IncrementalAlterConfigs, IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
  entry(ApiKey.DescribeCluster, DescribeClusterRequest, DescribeClusterResponse),
  entry(ApiKey.FindCoordinator, FindCoordinatorRequest, FindCoordinatorResponse),
  entry(ApiKey.ElectLeaders, ElectLeadersRequest, ElectLeadersResponse),
  // Consumer-group tables (no handlers yet: the consumer-groups issue adds them).
  entry(ApiKey.OffsetCommit, OffsetCommitRequest, OffsetCommitResponse),
  entry(ApiKey.OffsetFetch, OffsetFetchRequest, OffsetFetchResponse),
  entry(ApiKey.JoinGroup, JoinGroupRequest, JoinGroupResponse),
  entry(ApiKey.Heartbeat, HeartbeatRequest, HeartbeatResponse),
  entry(ApiKey.LeaveGroup, LeaveGroupRequest, LeaveGroupResponse),
  entry(ApiKey.SyncGroup, SyncGroupRequest, SyncGroupResponse),
  entry(ApiKey.DescribeGroups, DescribeGroupsRequest, DescribeGroupsResponse),
  entry(ApiKey.ListGroups, ListGroupsRequest, ListGroupsResponse),
  entry(ApiKey.DeleteGroups, DeleteGroupsRequest, DeleteGroupsResponse),
  entry(ApiKey.OffsetDelete, OffsetDeleteRequest, OffsetDeleteResponse),
]);
