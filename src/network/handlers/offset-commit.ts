/**
 * OffsetCommit (key 8) (Kafka 4 removed v0-1, KIP-896). Topics are checked against the
 * metadata here (UNKNOWN_TOPIC_OR_PARTITION, or UNKNOWN_TOPIC_ID for v10's topic ids, KIP-848), the
 * rest goes to the group's coordinator, which validates the member and generation and writes the
 * offsets to __consumer_offsets with acks=all before answering. A commit with generation -1 and no
 * member is a "simple" commit (consumers that assign partitions themselves); it needs an Empty group.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import { ZERO_UUID } from '../../protocol/primitives';
import type { OffsetCommitRequest, OffsetCommitResponse } from '../../protocol/schema/offset-commit';
import type { CommitRequest } from '../../group/messages';
import type { ApiHandler } from '../api-handler';
import { askCoordinator, isBareError } from './group-routing';

export const offsetCommitHandler: ApiHandler<typeof OffsetCommitRequest, typeof OffsetCommitResponse> = {
  apiKey: ApiKey.OffsetCommit,
  name: 'OffsetCommit',
  minVersion: 2,
  maxVersion: 10,
  async handle(ctx) {
    const { body, apiVersion, broker } = ctx;
    const useIds = apiVersion >= 10;
    const errors = new Map<string, number>();
    const valid: CommitRequest['topics'] = [];
    body.topics.forEach((t, index) => {
      const topic = useIds ? broker.topicById(t.topicId) : broker.topic(t.name);
      const unknownCode = useIds ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      const partitions = t.partitions.filter((p) => {
        const errorCode = !topic
          ? unknownCode
          : p.partitionIndex < 0 || p.partitionIndex >= topic.partitions.length
            ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            : ErrorCode.NONE;
        if (errorCode !== ErrorCode.NONE) errors.set(`${index}\0${p.partitionIndex}`, errorCode);
        return errorCode === ErrorCode.NONE;
      });
      if (topic && partitions.length > 0) valid.push({ name: topic.name, partitions });
    });
    const request: CommitRequest = {
      groupId: body.groupId,
      generationId: body.generationIdOrMemberEpoch,
      memberId: body.memberId,
      groupInstanceId: body.groupInstanceId,
      topics: valid,
    };
    const reply = valid.length > 0 ? await askCoordinator(ctx, body.groupId, 'group.commit', request) : { topics: [] };
    const codes = new Map<string, number>();
    if (isBareError(reply)) {
      for (const t of valid) for (const p of t.partitions) codes.set(`${t.name}\0${p.partitionIndex}`, reply.errorCode);
    } else {
      for (const t of reply.topics)
        for (const p of t.partitions) codes.set(`${t.name}\0${p.partitionIndex}`, p.errorCode);
    }
    return {
      throttleTimeMs: 0,
      topics: body.topics.map((t, index) => {
        const name = useIds ? (broker.topicById(t.topicId)?.name ?? '') : t.name;
        return {
          name: t.name,
          topicId: useIds ? t.topicId : ZERO_UUID,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            errorCode:
              errors.get(`${index}\0${p.partitionIndex}`) ??
              codes.get(`${name}\0${p.partitionIndex}`) ??
              ErrorCode.UNKNOWN_SERVER_ERROR,
          })),
        };
      }),
    };
  },
};
