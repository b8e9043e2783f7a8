/**
 * ListOffsets (key 2). Timestamp -2 is the log start offset (earliest), -1 the high watermark
 * (latest; with no transactions the LSO equals it), -3 the record with the largest timestamp
 * (KIP-734), a timestamp >= 0 the first record at or after it (KIP-79). v0 answers in
 * `oldStyleOffsets`. Without tiered storage, -4 (earliest local, KIP-405) is the log start offset
 * and -5 (latest tiered, KIP-1005) and -6 (earliest pending upload, KIP-1023) have no offset: NONE
 * with offset -1. A special timestamp below the version that introduced it, or any other negative
 * timestamp, is UNSUPPORTED_VERSION for that partition (what Kafka 4.4 answers).
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ListOffsetReply } from '../../replica/replica-actor';
import type { ApiHandler } from '../api-handler';
import type { ListOffsetsRequest, ListOffsetsResponse } from '../../protocol/schema/list-offsets';
import { leaderFor } from './leader-lookup';

/** The first ListOffsets version that accepts each special (negative) timestamp. */
const SPECIAL_TIMESTAMP_MIN_VERSION = new Map<number, number>([
  [-1, 0],
  [-2, 0],
  [-3, 7],
  [-4, 8],
  [-5, 9],
  [-6, 11],
]);

export const listOffsetsHandler: ApiHandler<typeof ListOffsetsRequest, typeof ListOffsetsResponse> = {
  apiKey: ApiKey.ListOffsets,
  name: 'ListOffsets',
  minVersion: 0,
  maxVersion: 11,
  async handle({ apiVersion, body, broker }) {
    const topics = await Promise.all(
      body.topics.map(async (t) => ({
        name: t.name,
        partitions: await Promise.all(
          t.partitions.map(async (p) => {
            const answer = (errorCode: number, offset = -1, timestamp = -1, leaderEpoch = -1) => ({
              partitionIndex: p.partitionIndex,
              errorCode,
              oldStyleOffsets: apiVersion === 0 && offset >= 0 ? [offset] : [],
              timestamp,
              offset,
              leaderEpoch,
            });
            if (p.timestamp < 0 && !(apiVersion >= (SPECIAL_TIMESTAMP_MIN_VERSION.get(p.timestamp) ?? Infinity)))
              return answer(ErrorCode.UNSUPPORTED_VERSION);
            const leader = leaderFor(broker, t.name, p.partitionIndex);
            if ('errorCode' in leader) return answer(leader.errorCode);
            // -4 (earliest local) is the log start offset without tiered storage; -5 (latest tiered)
            // and -6 (earliest pending upload) have no answer without it.
            if (p.timestamp === -5 || p.timestamp === -6) return answer(ErrorCode.NONE);
            const timestamp = p.timestamp === -4 ? -2 : p.timestamp;
            try {
              const reply = await broker.endpoint.request<ListOffsetReply>(
                leader.replica,
                'list-offsets',
                { timestamp },
                10_000,
              );
              return answer(reply.errorCode, reply.offset, reply.timestamp, reply.leaderEpoch);
            } catch (error) {
              broker.log.warn(
                { topic: t.name, partition: p.partitionIndex, error: String(error) },
                'list-offsets to replica failed',
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
