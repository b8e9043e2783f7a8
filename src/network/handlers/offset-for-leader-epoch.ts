/**
 * OffsetForLeaderEpoch (key 23) (KIP-101, KIP-320): for each partition, the end offset of the
 * requested leader epoch from the leader's epoch cache, which consumers use to detect log truncation
 * after a leader change and followers to find where their log diverges.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import { NO_PARTITION_LEADER_EPOCH, UNDEFINED_EPOCH_OFFSET } from '../../protocol/sentinels';
import type { ApiHandler } from '../api-handler';
import type {
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse,
} from '../../protocol/schema/offset-for-leader-epoch';
import { localReplicaFor, replicaFailureCode } from './leader-lookup';

/**
 * How long a partition's answer may take. The replica answers from its leader-epoch cache in its
 * turn; past 10 s it is stuck or crashed, and the partition gets REQUEST_TIMED_OUT well before the
 * client's request.timeout.ms (30 s by default) gives up on the whole request.
 */
const REPLICA_REQUEST_TIMEOUT_MS = 10_000;

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
            const answer = (
              errorCode: number,
              leaderEpoch = NO_PARTITION_LEADER_EPOCH,
              endOffset = UNDEFINED_EPOCH_OFFSET,
            ) => ({
              errorCode,
              partition: p.partition,
              leaderEpoch,
              endOffset,
            });
            const local = localReplicaFor(broker, t.topic, p.partition);
            if ('errorCode' in local) return answer(local.errorCode);
            try {
              const reply = await broker.endpoint.request(
                local.replica,
                'replica.offset-for-epoch',
                // The replica checks it against its own role (KIP-320): -1 (absent before v2) skips it.
                { leaderEpoch: p.leaderEpoch, currentLeaderEpoch: p.currentLeaderEpoch },
                REPLICA_REQUEST_TIMEOUT_MS,
              );
              // An error (fenced or unknown epoch, not the leader) comes with the -1 sentinels.
              return answer(reply.errorCode ?? ErrorCode.NONE, reply.leaderEpoch, reply.endOffset);
            } catch (error) {
              broker.log.warn(
                { topic: t.topic, partition: p.partition, error: String(error) },
                'offset-for-epoch to replica failed',
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
