/**
 * Fetch (key 1); versions below 4 carried message formats 0/1 and are not served, as in Kafka 4. Consumers read
 * from the leader up to the high watermark; the replica actor finds the batches and answers where they
 * are in its segment files, and the network node reads those ranges itself (BrokerContext
 * readSegmentRanges, src/network/segment-reader.ts), so the bytes go from the page cache to the socket
 * unchanged without crossing an envelope; where that is not possible (the simulation's disk, a
 * segment deleted or swapped meanwhile) the replica sends the bytes. Long poll: the response waits until min_bytes are available or
 * max_wait_ms passes (the replicas signal new data through `watch`). max_bytes bounds the response
 * and partition_max_bytes each partition, but the first batch is always returned whole (KIP-74).
 * Fetch sessions (KIP-227) are not kept: every response carries session id 0, so clients send full
 * requests, as they do when Kafka's session cache is full.
 */
import { ApiKey } from '../../protocol/api-keys';
import { ErrorCode } from '../../protocol/error-codes';
import { batchSizeAt } from '../../protocol/record-batch/view';
import type { ApiHandler } from '../api-handler';
import type { FetchRequest, FetchResponse, FetchRequestData } from '../../protocol/schema/fetch';
import { localReplicaFor, replicaFailureCode, replicaFailureLevel } from './leader-lookup';
import type { BrokerContext } from '../broker-context';

interface PartitionResult {
  partitionIndex: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  abortedTransactions: { producerId: number; firstOffset: number }[] | null;
  preferredReadReplica: number;
  records: Buffer | null;
}

const REPLY_GRACE_MS = 5000;
const EMPTY = Buffer.alloc(0);
/** A cap on one long poll, whatever the client asks (Kafka has none; this bounds held requests). */
const MAX_WAIT_CAP_MS = 60_000;

export const fetchHandler: ApiHandler<typeof FetchRequest, typeof FetchResponse> = {
  apiKey: ApiKey.Fetch,
  name: 'Fetch',
  minVersion: 4,
  maxVersion: 18,
  async handle({ apiVersion, body, broker }) {
    // v13+ names topics by topic ID only (KIP-516): resolve them to names once, here.
    if (apiVersion >= 13) {
      for (const t of body.topics) t.topic = broker.topicById(t.topicId)?.name ?? '';
    } else {
      for (const t of body.topics) t.topicId = broker.topic(t.topic)?.topicId ?? 'AAAAAAAAAAAAAAAAAAAAAA';
    }
    const unknownTopicCode = apiVersion >= 13 ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    const maxWaitMs = Math.min(Math.max(0, body.maxWaitMs), MAX_WAIT_CAP_MS);
    const deadlineMs = broker.clock.monotonicMs() + maxWaitMs;
    let results = await readAll(body, broker, unknownTopicCode);
    while (
      totalBytes(results) < Math.max(1, body.minBytes) &&
      !hasError(results) &&
      broker.clock.monotonicMs() < deadlineMs
    ) {
      const woke = await waitForData(body, results, broker, deadlineMs - broker.clock.monotonicMs());
      if (!woke) break;
      results = await readAll(body, broker, unknownTopicCode);
    }
    // Records are never null on the wire: librdkafka rejects a MessageSetSize of -1.
    for (const t of results) for (const p of t.partitions) p.records ??= EMPTY;
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      sessionId: 0,
      responses: results,
    };
  },
};

function totalBytes(results: { partitions: PartitionResult[] }[]): number {
  let n = 0;
  for (const t of results) for (const p of t.partitions) n += p.records?.length ?? 0;
  return n;
}

function hasError(results: { partitions: PartitionResult[] }[]): boolean {
  return results.some((t) => t.partitions.some((p) => p.errorCode !== ErrorCode.NONE));
}

function emptyResult(partitionIndex: number, errorCode: number): PartitionResult {
  return {
    partitionIndex,
    errorCode,
    highWatermark: -1,
    lastStableOffset: -1,
    logStartOffset: -1,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: null,
  };
}

async function readAll(body: FetchRequestData, broker: BrokerContext, unknownTopicCode: number) {
  const responseMaxBytes = body.maxBytes > 0 ? body.maxBytes : 0x7fffffff;
  const readCommitted = body.isolationLevel === 1;
  const reads = body.topics.map((t) => ({
    topic: t.topic,
    topicId: t.topicId,
    partitions: t.partitions.map(async (p): Promise<PartitionResult> => {
      const local = localReplicaFor(broker, t.topic, p.partition, unknownTopicCode);
      if ('errorCode' in local) return emptyResult(p.partition, local.errorCode);
      const { replica } = local;
      try {
        const ask = (segmentRanges: boolean) =>
          broker.endpoint.request(
            replica,
            'replica.fetch',
            {
              fetchOffset: p.fetchOffset,
              maxBytes: Math.max(0, Math.min(p.partitionMaxBytes, responseMaxBytes)),
              minOneBatch: true,
              // The replica checks it against its own role (KIP-320): -1 (absent before v9) skips it.
              currentLeaderEpoch: p.currentLeaderEpoch,
              segmentRanges,
            },
            REPLY_GRACE_MS,
          );
        const readRanges = broker.readSegmentRanges?.bind(broker);
        let reply = await ask(readRanges !== undefined);
        if (reply.ranges !== undefined && readRanges !== undefined) {
          const records = reply.ranges.length === 0 ? EMPTY : await readRanges(reply.ranges);
          // A segment deleted or swapped since the replica answered: ask again for the bytes themselves.
          reply = records !== null ? { ...reply, records } : await ask(false);
        }
        return {
          partitionIndex: p.partition,
          errorCode: reply.errorCode,
          highWatermark: reply.highWatermark,
          lastStableOffset: reply.lastStableOffset,
          logStartOffset: reply.logStartOffset,
          abortedTransactions: readCommitted ? [] : null,
          preferredReadReplica: -1,
          records: reply.records,
        };
      } catch (error) {
        broker.log[replicaFailureLevel(error)](
          { topic: t.topic, partition: p.partition, error: String(error) },
          'fetch from replica failed',
        );
        return emptyResult(p.partition, replicaFailureCode(error));
      }
    }),
  }));
  const results: { topic: string; topicId: string; partitions: PartitionResult[] }[] = [];
  for (const r of reads)
    results.push({ topic: r.topic, topicId: r.topicId, partitions: await Promise.all(r.partitions) });
  enforceResponseMaxBytes(results, responseMaxBytes);
  return results;
}

/**
 * Trims partitions (in request order) to whole batches within the response's max_bytes, keeping the
 * first non-empty partition's first batch whole even when it alone exceeds the limit (KIP-74).
 */
function enforceResponseMaxBytes(results: { partitions: PartitionResult[] }[], maxBytes: number): void {
  let used = 0;
  for (const t of results) {
    for (const p of t.partitions) {
      if (!p.records || p.records.length === 0) continue;
      const budget = maxBytes - used;
      if (p.records.length <= budget) {
        used += p.records.length;
        continue;
      }
      let keep = 0;
      while (keep < p.records.length) {
        const size = batchSizeAt(p.records, keep);
        if (keep + size > budget && !(used === 0 && keep === 0)) break;
        keep += size;
      }
      p.records = p.records.subarray(0, keep);
      used += keep;
    }
  }
}

/** Resolves true when some partition has data past its fetch offset, false at the deadline. */
function waitForData(
  body: FetchRequestData,
  results: { partitions: PartitionResult[] }[],
  broker: BrokerContext,
  remainingMs: number,
): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (value: boolean) => {
      if (settled) return;
      settled = true;
      broker.timers.clearTimeout(timer);
      resolve(value);
    };
    const timer = broker.timers.setTimeout(() => finish(false), Math.max(0, remainingMs));
    body.topics.forEach((t, ti) =>
      t.partitions.forEach((p, pi) => {
        const replica = broker.localReplica(t.topic, p.partition);
        if (replica === null || results[ti]!.partitions[pi]!.errorCode !== ErrorCode.NONE) return;
        broker.endpoint
          .request(
            replica,
            'replica.watch',
            { fetchOffset: p.fetchOffset, maxWaitMs: remainingMs },
            remainingMs + REPLY_GRACE_MS,
          )
          .then(
            (r) => {
              if (r.ready) finish(true);
            },
            () => undefined,
          );
      }),
    );
  });
}
