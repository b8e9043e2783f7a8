/**
 * OffsetForLeaderEpoch (key 23) (KIP-101, KIP-320): for each partition, the end offset of the
 * requested leader epoch from the leader's epoch cache, which consumers use to detect log truncation
 * after a leader change and followers to find where their log diverges.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';
import type {
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse,
} from '../../protocol/schema/offset-for-leader-epoch';
import { leaderEpochError, leaderFor } from './leader-lookup';

export const offsetForLeaderEpochHandler: ApiHandler<
  typeof OffsetForLeaderEpochRequest,
  typeof OffsetForLeaderEpochResponse
> = {
  apiKey: ApiKey.OffsetForLeaderEpoch,
  name: 'OffsetForLeaderEpoch',
  minVersion: 0,
  maxVersion: 4,
  async handle({ body, broker }) {
    const topics = await Promise.all(
      body.topics.map(async (t) => ({
        topic: t.topic,
        partitions: await Promise.all(
          t.partitions.map(async (p) => {
            const answer = (errorCode: number, leaderEpoch = -1, endOffset = -1) => ({
              errorCode,
              partition: p.partition,
              leaderEpoch,
              endOffset,
            });
            const leader = leaderFor(broker, t.topic, p.partition);
            if ('errorCode' in leader) return answer(leader.errorCode);
            const epochCode = leaderEpochError(leader.topic, p.partition, p.currentLeaderEpoch);
            if (epochCode !== ErrorCode.NONE) return answer(epochCode);
            try {
              const reply = await broker.endpoint.request<{ leaderEpoch: number; endOffset: number }>(
                leader.replica,
                'offset-for-epoch',
                { leaderEpoch: p.leaderEpoch },
                10_000,
              );
              return answer(ErrorCode.NONE, reply.leaderEpoch, reply.endOffset);
            } catch (error) {
              broker.log.warn(
                { topic: t.topic, partition: p.partition, error: String(error) },
                'offset-for-epoch to replica failed',
              );
              return answer(ErrorCode.REQUEST_TIMED_OUT);
            }
          }),
        ),
      })),
    );
    return { throttleTimeMs: 0, topics };
  },
};
