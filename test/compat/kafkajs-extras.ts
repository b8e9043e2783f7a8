/**
 * kafkajs 2.2.4 beyond its public producer/admin API, for the compat suites:
 *
 * - Codecs. kafkajs ships gzip only; snappy comes from the kafkajs-snappy package (pure JS,
 *   snappyjs). The published lz4 and zstd codecs do not install from npm alone (kafkajs-lz4 needs
 *   the native `lz4` package, built by node-gyp; @kafkajs/zstd needs cppzst, built by node-gyp;
 *   @sensejs/kafkajs-zstd-support needs zstd-napi, whose install runs prebuild-install, which
 *   downloads from GitHub), so lz4 and zstd are small codecs here over lz4-napi and
 *   @toondepauw/node-zstd (binaries shipped in npm packages, already the broker's dependencies).
 *   Each follows kafkajs's codec contract: `compress(encoder)` -> the encoder's bytes compressed,
 *   `decompress(buffer)` -> the records section.
 * - A group-less reader. kafkajs's consumer needs consumer groups (FindCoordinator, JoinGroup...),
 *   so {@link kafkajsFetchAll} drives kafkajs's own cluster and Broker.fetch (Fetch v11 and the
 *   record-batch decoder its consumer uses, codecs included) by assignment.
 */
import { CompressionCodecs, CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { Decoder as ZstdDecoder, Encoder as ZstdEncoder } from '@toondepauw/node-zstd';
import type { TestRecord } from './record-file';

interface KafkajsCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

const lz4Codec = (): KafkajsCodec => ({
  compress: async (encoder) => compressFrameSync(encoder.buffer),
  decompress: async (buffer) => decompressFrameSync(buffer),
});

const zstdCodec = (): KafkajsCodec => {
  const encoder = new ZstdEncoder(3);
  const decoder = new ZstdDecoder();
  return {
    compress: async (e) => encoder.encodeSync(e.buffer),
    decompress: async (buffer) => decoder.decodeSync(buffer),
  };
};

/** Registers snappy (kafkajs-snappy), lz4 and zstd with kafkajs (process-wide, idempotent). */
export function registerKafkajsCodecs(): void {
  // kafkajs-snappy has no type declarations: a factory returning a codec.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an import would need those declarations
  const snappyCodec = require('kafkajs-snappy') as () => KafkajsCodec;
  CompressionCodecs[CompressionTypes.Snappy] = snappyCodec;
  CompressionCodecs[CompressionTypes.LZ4] = lz4Codec;
  CompressionCodecs[CompressionTypes.ZSTD] = zstdCodec;
}

/** A record as kafkajs's fetch decoder returns it. */
interface KafkajsMessage {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | Buffer[] | undefined>;
  isControlRecord?: boolean;
  batchContext?: { timestampType: number; maxTimestamp: string };
}

/** A record read by {@link kafkajsFetchAll}, with kafkajs's view of its timestamp. */
export interface KafkajsRecord extends TestRecord {
  timestamp: number;
  /** 0 CreateTime, 1 LogAppendTime (kafkajs's batchContext.timestampType). */
  timestampType: number;
}

/**
 * Reads one partition from `fromOffset` (default: 0) up to its high watermark with kafkajs's
 * cluster and Broker.fetch (Fetch v11, read_committed), decoding (and decompressing) batches as
 * kafkajs's consumer does. Records below the fetch offset in the first batch are dropped, as
 * consumers do. Header values come back grouped by key (kafkajs's representation).
 */
export async function kafkajsFetchAll(
  bootstrap: string,
  topic: string,
  partition: number,
  timeoutMs: number,
  fromOffset = 0,
): Promise<KafkajsRecord[]> {
  const kafka = new Kafka({
    clientId: 'skiff-compat-kafkajs-reader',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 3 },
  });
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
  if (symbol === undefined) throw new Error('kafkajs internals changed: no private:Kafka:createCluster');
  const cluster = (kafka as any)[symbol]({ allowAutoTopicCreation: false, isolationLevel: 1 });
  const deadline = Date.now() + timeoutMs;
  await cluster.connect();
  try {
    await cluster.addTargetTopic(topic);
    await cluster.refreshMetadata();
    const leaders = cluster.findLeaderForPartitions(topic, [partition]) as Record<string, number[]>;
    const leaderId = Object.keys(leaders)[0];
    if (leaderId === undefined) throw new Error(`kafkajs: no leader for ${topic}-${partition}`);
    const broker = await cluster.findBroker({ nodeId: leaderId });
    const out: KafkajsRecord[] = [];
    let offset = fromOffset;
    for (;;) {
      if (Date.now() > deadline)
        throw new Error(`kafkajs fetch of ${topic}-${partition} timed out at offset ${offset}`);
      const response = await broker.fetch({
        replicaId: -1,
        isolationLevel: 1,
        maxWaitTime: 100,
        minBytes: 1,
        maxBytes: 16 << 20,
        topics: [{ topic, partitions: [{ partition, fetchOffset: String(offset), maxBytes: 4 << 20 }] }],
      });
      const p = response.responses[0].partitions[0] as {
        errorCode: number;
        highWatermark: string;
        messages: KafkajsMessage[];
      };
      if (p.errorCode !== 0)
        throw new Error(`kafkajs fetch of ${topic}-${partition} at ${offset}: error ${p.errorCode}`);
      const highWatermark = Number(p.highWatermark);
      for (const m of p.messages) {
        const o = Number(m.offset);
        if (o < offset || m.isControlRecord) continue;
        const headers: TestRecord['headers'] = [];
        for (const [k, v] of Object.entries(m.headers ?? {})) {
          for (const value of Array.isArray(v) ? v : [v]) headers.push([k, value ?? null]);
        }
        out.push({
          partition,
          offset: o,
          key: m.key,
          value: m.value,
          headers,
          timestamp: Number(m.timestamp),
          timestampType: m.batchContext?.timestampType ?? -1,
        });
        offset = o + 1;
      }
      if (offset >= highWatermark) return out;
    }
  } finally {
    await cluster.disconnect();
  }
}
