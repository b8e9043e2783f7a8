/**
 * DescribeLogDirs (key 35) (KIP-113): each log dir with the size in bytes of every partition it
 * holds and its offsetLag, from v4 the dir's total and usable bytes, and
 * from v5 whether it is cordoned (KIP-1066; Skiff never cordons a log dir: false).
 *
 * offsetLag is Kafka's (ReplicaManager.getLogEndOffsetLag) for a current, not future, log:
 * max(HW - LEO, 0), how far the replica's log end is behind the partition's high watermark, from the
 * numbers its replica reports. On the leader the HW never passes the LEO, so it is 0 there as on
 * Kafka; a log end ahead of the HW (appended, not yet committed) is not lag. Skiff has no future
 * replicas (no log-dir moves).
 *
 * From v2 (flexible) each partition also carries Skiff's tagged FsyncedOffset (tag 10000, see
 * protocol/schema/describe-log-dirs.ts): the replica's recovery point, so `skiff topic describe`
 * can show how far the fsync trails the LEO. Kafka clients skip the unknown tag (KIP-482).
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import type { ApiHandler } from '../api-handler';
import type {
  DescribeLogDirsRequest,
  DescribeLogDirsResponse,
  DescribeLogDirsResponseData,
} from '../../protocol/schema/describe-log-dirs';

type DescribeLogDirsPartition = DescribeLogDirsResponseData['results'][number]['topics'][number]['partitions'][number];

export const describeLogDirsHandler: ApiHandler<typeof DescribeLogDirsRequest, typeof DescribeLogDirsResponse> = {
  apiKey: ApiKey.DescribeLogDirs,
  name: 'DescribeLogDirs',
  minVersion: 0,
  maxVersion: 5,
  async handle({ body, broker }) {
    const wanted = body.topics === null ? null : new Map(body.topics.map((t) => [t.topic, new Set(t.partitions)]));
    const dirs = await broker.describeLogDirs();
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      results: dirs.map((dir) => {
        const byTopic = new Map<string, DescribeLogDirsPartition[]>();
        for (const p of dir.partitions) {
          if (wanted !== null && !wanted.get(p.topic)?.has(p.partition)) continue;
          const list = byTopic.get(p.topic) ?? [];
          list.push({
            partitionIndex: p.partition,
            partitionSize: p.sizeBytes,
            offsetLag: offsetLag(p.highWatermark, p.logEndOffset),
            isFutureKey: false,
            fsyncedOffset: p.fsyncedOffset,
          });
          byTopic.set(p.topic, list);
        }
        return {
          errorCode: ErrorCode.NONE,
          logDir: dir.logDir,
          topics: [...byTopic.entries()].map(([name, partitions]) => ({
            name,
            partitions: partitions.sort((a, b) => a.partitionIndex - b.partitionIndex),
          })),
          totalBytes: dir.totalBytes,
          usableBytes: dir.usableBytes,
          isCordoned: false,
        };
      }),
    };
  },
};

/** Kafka's offsetLag of a current log: max(HW - LEO, 0). */
export function offsetLag(highWatermark: number, logEndOffset: number): number {
  return Math.max(highWatermark - logEndOffset, 0);
}
