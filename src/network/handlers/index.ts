/** Every API this broker serves: one handler file per Kafka API. ApiVersions lists exactly these. */
import type { AnyApiHandler } from '../api-handler';
import { apiVersionsHandler } from './api-versions';
import { createTopicsHandler } from './create-topics';
import { deleteTopicsHandler } from './delete-topics';
import { fetchHandler } from './fetch';
import { listOffsetsHandler } from './list-offsets';
import { metadataHandler } from './metadata';
import { produceHandler } from './produce';
import { alterConfigsHandler } from './alter-configs';
import { deleteRecordsHandler } from './delete-records';
import { describeClusterHandler } from './describe-cluster';
import { describeConfigsHandler } from './describe-configs';
import { findCoordinatorHandler } from './find-coordinator';
import { createPartitionsHandler } from './create-partitions';
import { describeLogDirsHandler } from './describe-log-dirs';
import { initProducerIdHandler } from './init-producer-id';
import { offsetForLeaderEpochHandler } from './offset-for-leader-epoch';
import { incrementalAlterConfigsHandler } from './incremental-alter-configs';
import { joinGroupHandler } from './join-group';
import { syncGroupHandler } from './sync-group';
import { heartbeatHandler } from './heartbeat';
import { leaveGroupHandler } from './leave-group';
import { offsetCommitHandler } from './offset-commit';
import { offsetFetchHandler } from './offset-fetch';
import { listGroupsHandler } from './list-groups';
import { describeGroupsHandler } from './describe-groups';
import { deleteGroupsHandler } from './delete-groups';
import { offsetDeleteHandler } from './offset-delete';
import { electLeadersHandler } from './elect-leaders';

export const allHandlers: AnyApiHandler[] = [
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  findCoordinatorHandler,
  apiVersionsHandler,
  createTopicsHandler,
  deleteTopicsHandler,
  deleteRecordsHandler,
  describeConfigsHandler,
  alterConfigsHandler,
  incrementalAlterConfigsHandler,
  describeClusterHandler,
  initProducerIdHandler,
  offsetForLeaderEpochHandler,
  createPartitionsHandler,
  describeLogDirsHandler,
  offsetCommitHandler,
  offsetFetchHandler,
  joinGroupHandler,
  heartbeatHandler,
  leaveGroupHandler,
  syncGroupHandler,
  describeGroupsHandler,
  listGroupsHandler,
  deleteGroupsHandler,
  offsetDeleteHandler,
  electLeadersHandler,
];
