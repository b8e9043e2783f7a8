/** Every API this broker serves: one handler file per Kafka API. ApiVersions lists exactly these. */
import type { ApiHandler } from '../api-handler';
import { apiVersionsHandler } from './api-versions';
import { createTopicsHandler } from './create-topics';
import { deleteTopicsHandler } from './delete-topics';
import { fetchHandler } from './fetch';
import { listOffsetsHandler } from './list-offsets';
import { metadataHandler } from './metadata';
import { produceHandler } from './produce';

export const allHandlers: ApiHandler[] = [
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  apiVersionsHandler,
  createTopicsHandler,
  deleteTopicsHandler,
];
