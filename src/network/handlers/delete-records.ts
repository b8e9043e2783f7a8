/**
 * DeleteRecords (key 21) (KIP-107): moves each partition's log start offset up to the given
 * offset (-1 = the high watermark); whole segments below it are deleted, and fetches below it get
 * OFFSET_OUT_OF_RANGE. An offset past the high watermark gets OFFSET_OUT_OF_RANGE.
 */
import { ApiKey } from '../../protocol/api-keys';
import type { ApiHandler } from '../api-handler';
import type { DeleteRecordsRequest, DeleteRecordsResponse } from '../../protocol/schema/delete-records';
import { leaderFor, replicaFailureCode } from './leader-lookup';

export const deleteRecordsHandler: ApiHandler<typeof DeleteRecordsRequest, typeof DeleteRecordsResponse> = {
  apiKey: ApiKey.DeleteRecords,
  name: 'DeleteRecords',
  minVersion: 0,
  maxVersion: 2,
  async handle({ body, broker }) {
    const topics = await Promise.all(
      body.topics.map(async (t) => ({
        name: t.name,
        partitions: await Promise.all(
          t.partitions.map(async (p) => {
            const answer = (errorCode: number, lowWatermark = -1) => ({
              partitionIndex: p.partitionIndex,
              lowWatermark,
              errorCode,
            });
            const leader = leaderFor(broker, t.name, p.partitionIndex);
            if ('errorCode' in leader) return answer(leader.errorCode);
            try {
              const reply = await broker.endpoint.request(
                leader.replica,
                'replica.delete-records',
                { offset: p.offset },
                Math.max(1000, body.timeoutMs),
              );
              return answer(reply.errorCode, reply.lowWatermark);
            } catch (error) {
              broker.log.warn(
                { topic: t.name, partition: p.partitionIndex, error: String(error) },
                'delete-records to replica failed',
              );
              return answer(replicaFailureCode(error));
            }
          }),
        ),
      })),
    );
    return { throttleTimeMs: 0, topics };
  },
};
