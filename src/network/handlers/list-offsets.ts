/**
 * ListOffsets (key 2), v0-7. Timestamp -2 is the log start offset (earliest), -1 the high watermark
 * (latest; with no transactions the LSO equals it), -3 the record with the largest timestamp
 * (KIP-734), a timestamp >= 0 the first record at or after it (KIP-79). v0 answers in
 * `oldStyleOffsets`.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ListOffsetReply } from '../../replica/replica-actor';
import type { ApiHandler } from '../api-handler';
import { leaderFor } from './leader-lookup';

interface ListOffsetsRequest {
  replicaId: number;
  isolationLevel: number;
  topics: { name: string; partitions: { partitionIndex: number; currentLeaderEpoch: number; timestamp: number }[] }[];
}

export const listOffsetsHandler: ApiHandler<ListOffsetsRequest> = {
  apiKey: ApiKey.ListOffsets,
  name: 'ListOffsets',
  minVersion: 0,
  maxVersion: 10,
  async handle({ apiVersion, body, broker }) {
    const topics = await Promise.all(body.topics.map(async (t) => ({
      name: t.name,
      partitions: await Promise.all(t.partitions.map(async (p) => {
        const answer = (errorCode: number, offset = -1, timestamp = -1, leaderEpoch = -1) => ({
          partitionIndex: p.partitionIndex, errorCode, oldStyleOffsets: apiVersion === 0 && offset >= 0 ? [offset] : [], timestamp, offset, leaderEpoch,
        });
        const leader = leaderFor(broker, t.name, p.partitionIndex);
        if ('errorCode' in leader) return answer(leader.errorCode);
        // -4 (earliest local, KIP-405) is the log start offset without tiered storage; -5 (latest
        // tiered, KIP-1005) has no answer without it.
        if (p.timestamp === -5) return answer(ErrorCode.NONE);
        const timestamp = p.timestamp === -4 ? -2 : p.timestamp;
        try {
          const reply = await broker.endpoint.request<ListOffsetReply>(leader.replica, 'list-offsets', { timestamp }, 10_000);
          return answer(reply.errorCode, reply.offset, reply.timestamp, reply.leaderEpoch);
        } catch (error) {
          broker.log.warn({ topic: t.name, partition: p.partitionIndex, error: String(error) }, 'list-offsets to replica failed');
          return answer(ErrorCode.REQUEST_TIMED_OUT);
        }
      })),
    })));
    return { throttleTimeMs: 0, topics };
  },
};
