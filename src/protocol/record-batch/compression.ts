/**
 * Kafka's record batch compression codecs (attributes bits 0-2, layout.ts COMPRESSION_CODEC_MASK),
 * in the byte formats Kafka clients write and expect (Kafka's `CompressionType` and
 * `org.apache.kafka.common.compress.*`; librdkafka's rdkafka_msgset_reader.c):
 *
 * | codec | id | on the wire |
 * |---|---|---|
 * | none   | 0 | the records as they are |
 * | gzip   | 1 | a gzip stream (RFC 1952), node:zlib |
 * | snappy | 2 | xerial snappy-java framing when written (what Kafka's Java client writes); raw snappy is also accepted when read (librdkafka and others write it) |
 * | lz4    | 3 | one LZ4 frame (frame format 1.5.1, with the header checksum as fixed by KIP-57) |
 * | zstd   | 4 | zstd frames (RFC 8878), without a content size, as zstd-jni's stream writes them |
 *
 * Xerial framing (snappy-java's SnappyOutputStream / SnappyCodec), all integers big-endian:
 * ```
 * 0  magic              8 bytes  0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00
 * 8  version            int32    1
 * 12 compatibleVersion  int32    1
 * 16 blocks...          int32 compressedLength, then that many bytes of raw snappy
 * ```
 * Java writes blocks of at most 32 KiB uncompressed; readers accept any block size.
 *
 * What is compressed is the records section of a v2 batch (everything after the 61-byte header);
 * see src/client/batch.ts for building and decoding whole compressed batches.
 */
import * as zlib from 'node:zlib';
import { Decoder as ZstdDecoder, Encoder as ZstdEncoder } from '@toondepauw/node-zstd';
import { compressFrameSync as lz4CompressFrame, decompressFrameSync as lz4DecompressFrame } from 'lz4-napi';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import { ProtocolError } from '../primitives';

/** Codec ids as stored in attributes bits 0-2 (Kafka's CompressionType ids). */
export const CompressionCodec = {
  none: 0,
  gzip: 1,
  snappy: 2,
  lz4: 3,
  zstd: 4,
} as const;

/** A codec name as Kafka's `compression.type` spells it. */
export type CompressionName = keyof typeof CompressionCodec;
/** A codec id, 0-4. */
export type CompressionCodecId = (typeof CompressionCodec)[CompressionName];

/** Codec names in id order, for messages and CLI choices. */
export const COMPRESSION_NAMES: readonly CompressionName[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** The xerial snappy-java stream magic (8 bytes). */
export const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
/** Size of the xerial header: magic + version + compatibleVersion. */
const XERIAL_HEADER_BYTES = 16;
/** Uncompressed bytes per xerial block, as snappy-java's default block size (32 KiB). */
const XERIAL_BLOCK_BYTES = 32 * 1024;
/** zstd level Kafka uses by default (ZstdCompression's DEFAULT_LEVEL, zstd's own default). */
const ZSTD_LEVEL = 3;

/** One zstd encoder per level (compression.zstd.level), made on first use. */
const zstdEncoders = new Map<number, ZstdEncoder>();
let zstdDecoder: ZstdDecoder | null = null;

/** The codec id for a `compression.type` name; throws RangeError for an unknown name. */
export function codecFromName(name: string): CompressionCodecId {
  const id = (CompressionCodec as Record<string, CompressionCodecId | undefined>)[name];
  if (id === undefined)
    throw new RangeError(
      `unknown compression codec ${JSON.stringify(name)} (expected one of ${COMPRESSION_NAMES.join(', ')})`,
    );
  return id;
}

/** The `compression.type` name of a codec id; throws RangeError for an id above 4. */
export function codecName(codec: number): CompressionName {
  const name = COMPRESSION_NAMES[codec];
  if (name === undefined) throw new RangeError(`unknown compression codec id ${codec}`);
  return name;
}

/**
 * Compresses `data` with `codec` (an id 0-4 or a name) in the format Kafka's Java client writes
 * (see the table above). Codec 0 returns `data` itself. `level` (KIP-390's compression.*.level):
 * gzip 1-9 or -1 (zlib's default), zstd -131072..22 (default 3); lz4 and snappy have one level
 * here (lz4-napi's frame encoder takes none), so it is ignored for them. Throws RangeError for an
 * unknown codec.
 */
export function compress(codec: number | CompressionName, data: Buffer, level?: number): Buffer {
  const id = typeof codec === 'string' ? codecFromName(codec) : codec;
  switch (id) {
    case CompressionCodec.none:
      return data;
    case CompressionCodec.gzip:
      return level === undefined || level === -1 ? zlib.gzipSync(data) : zlib.gzipSync(data, { level });
    case CompressionCodec.snappy:
      return xerialCompress(data);
    case CompressionCodec.lz4:
      return lz4CompressFrame(data);
    case CompressionCodec.zstd: {
      const zstdLevel = level ?? ZSTD_LEVEL;
      let encoder = zstdEncoders.get(zstdLevel);
      if (encoder === undefined) {
        encoder = new ZstdEncoder(zstdLevel);
        zstdEncoders.set(zstdLevel, encoder);
      }
      return encoder.encodeSync(data);
    }
    default:
      throw new RangeError(`unknown compression codec id ${id}`);
  }
}

/**
 * Decompresses `data` written by any Kafka client with `codec` (an id 0-4 or a name). Snappy may
 * be xerial-framed or raw (told apart by the xerial magic). Codec 0 returns `data` itself.
 * Throws RangeError for an unknown codec and ProtocolError for input the codec cannot decode.
 */
export function decompress(codec: number | CompressionName, data: Buffer): Buffer {
  const id = typeof codec === 'string' ? codecFromName(codec) : codec;
  try {
    switch (id) {
      case CompressionCodec.none:
        return data;
      case CompressionCodec.gzip:
        return zlib.gunzipSync(data);
      case CompressionCodec.snappy:
        return isXerialFramed(data) ? xerialDecompress(data) : (snappyUncompress(data) as Buffer);
      case CompressionCodec.lz4:
        return lz4DecompressFrame(data);
      case CompressionCodec.zstd:
        zstdDecoder ??= new ZstdDecoder();
        return zstdDecoder.decodeSync(data);
      default:
        throw new RangeError(`unknown compression codec id ${id}`);
    }
  } catch (err) {
    if (err instanceof RangeError || err instanceof ProtocolError) throw err;
    throw new ProtocolError(
      `cannot decompress ${codecName(id)} data (${data.length} bytes): ${(err as Error).message}`,
    );
  }
}

/** Whether `data` starts with the xerial snappy-java header magic. */
export function isXerialFramed(data: Buffer): boolean {
  return data.length >= XERIAL_MAGIC.length && data.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);
}

function xerialCompress(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(XERIAL_HEADER_BYTES);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(1, 8); // version
  header.writeInt32BE(1, 12); // compatible version
  parts.push(header);
  for (let position = 0; position < data.length; position += XERIAL_BLOCK_BYTES) {
    const block = snappyCompress(data.subarray(position, Math.min(data.length, position + XERIAL_BLOCK_BYTES)));
    const length = Buffer.allocUnsafe(4);
    length.writeInt32BE(block.length, 0);
    parts.push(length, block);
  }
  return Buffer.concat(parts);
}

function xerialDecompress(data: Buffer): Buffer {
  if (data.length < XERIAL_HEADER_BYTES)
    throw new ProtocolError(`xerial snappy stream of ${data.length} bytes is shorter than its header`);
  const parts: Buffer[] = [];
  let position = XERIAL_HEADER_BYTES;
  while (position < data.length) {
    if (data.length - position < 4) throw new ProtocolError(`xerial snappy stream truncated at byte ${position}`);
    const length = data.readInt32BE(position);
    position += 4;
    if (length < 0 || length > data.length - position)
      throw new ProtocolError(`xerial snappy block of ${length} bytes at byte ${position} overruns the stream`);
    parts.push(snappyUncompress(data.subarray(position, position + length)) as Buffer);
    position += length;
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}
