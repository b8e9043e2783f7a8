/**
 * Known-byte vectors built by hand from the protocol guide, checked against both the encoder and
 * the decoder; plus KIP-482 tagged-field behaviour (unknown tags skipped, defaults left off).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crc32c } from '@node-rs/crc32';
import {
  ApiKey,
  ApiVersionsRequest,
  ApiVersionsResponse,
  FetchRequest,
  FetchResponse,
  ProtocolError,
  UnknownApiKeyError,
  UnsupportedVersionError,
  ZERO_UUID,
  decodeBuffer,
  decodeRequest,
  decodeResponse,
  encodeMessage,
  encodeRequest,
  encodeResponse,
  encodeResponseChunks,
  frame,
  headerVersions,
  peekRequestHeader,
} from '../../../src/protocol/index';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { checkBatch } from '../../../src/protocol/record-batch/view';

const str16 = (s: string): number[] => [0, s.length, ...Buffer.from(s)];
const int32 = (v: number): number[] => [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];

describe('request vectors', () => {
  it('ApiVersions v0 request (header v1, empty body)', () => {
    const bytes = Buffer.from([0, 0, 0, 14, 0x00, 0x12, 0x00, 0x00, ...int32(1), ...str16('test')]);
    assert.deepStrictEqual(encodeRequest(ApiKey.ApiVersions, 0, 1, 'test', {}), bytes);
    const { header, body } = decodeRequest(bytes.subarray(4));
    assert.deepStrictEqual(header, { apiKey: 18, apiVersion: 0, correlationId: 1, clientId: 'test', headerVersion: 1 });
    assert.deepStrictEqual(
      body,
      { clientSoftwareName: '', clientSoftwareVersion: '', clusterId: null, nodeId: -1 },
      'fields of later versions decode to their defaults',
    );
  });

  it('ApiVersions v3 request (header v2 with a classic client id, compact body, unknown tags skipped)', () => {
    const payload = Buffer.from([
      0x00,
      0x12,
      0x00,
      0x03,
      ...int32(9),
      ...str16('kcat'),
      0x01,
      0x05,
      0x02,
      0xaa,
      0xbb, // header tags: one unknown tag 5 of 2 bytes
      0x0b,
      ...Buffer.from('librdkafka'), // compact string: length 10 + 1
      0x06,
      ...Buffer.from('2.0.2'),
      0x02,
      0x07,
      0x00,
      0xc0,
      0x3e,
      0x01,
      0xff, // body tags: tag 7 (0 bytes), tag 8000 (1 byte)
    ]);
    const { header, body } = decodeRequest(payload);
    assert.deepStrictEqual(header, { apiKey: 18, apiVersion: 3, correlationId: 9, clientId: 'kcat', headerVersion: 2 });
    assert.deepStrictEqual(body, {
      clientSoftwareName: 'librdkafka',
      clientSoftwareVersion: '2.0.2',
      clusterId: null,
      nodeId: -1,
    });
    // Re-encoding writes empty tag sections.
    const again = encodeRequest(ApiKey.ApiVersions, 3, 9, 'kcat', body);
    assert.deepStrictEqual(
      [...again.subarray(4)],
      [
        0x00,
        0x12,
        0x00,
        0x03,
        ...int32(9),
        ...str16('kcat'),
        0x00,
        0x0b,
        ...Buffer.from('librdkafka'),
        0x06,
        ...Buffer.from('2.0.2'),
        0x00,
      ],
    );
  });

  it('Produce v3 request with a record batch, byte by byte; records decode as a view', () => {
    // One record: key null, value "hi", no headers (DefaultRecord, zig-zag varints).
    const record = [0x10, 0x00, 0x00, 0x00, 0x01, 0x04, 0x68, 0x69, 0x00];
    const ts = [0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00]; // 1700000000000
    const batch = Buffer.from([
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0, // baseOffset
      ...int32(49 + record.length), // batchLength
      0xff,
      0xff,
      0xff,
      0xff, // partitionLeaderEpoch
      0x02, // magic
      0,
      0,
      0,
      0, // crc (filled below)
      0x00,
      0x00, // attributes
      ...int32(0), // lastOffsetDelta
      ...ts,
      ...ts, // baseTimestamp, maxTimestamp
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff, // producerId -1
      0xff,
      0xff, // producerEpoch -1
      0xff,
      0xff,
      0xff,
      0xff, // baseSequence -1
      ...int32(1), // records count
      ...record,
    ]);
    batch.writeUInt32BE(crc32c(batch.subarray(21)) >>> 0, 17);
    assert.equal(checkBatch(batch, 0, batch.length), batch.length);
    assert.deepStrictEqual(
      buildRecordBatch([{ key: null, value: Buffer.from('hi'), timestamp: 1_700_000_000_000 }]),
      batch,
    );

    const payload = Buffer.from([
      0x00,
      0x00,
      0x00,
      0x03,
      ...int32(7),
      ...str16('cli'), // header v1
      0xff,
      0xff, // transactional_id null
      0xff,
      0xff, // acks -1
      ...int32(30000), // timeout_ms
      ...int32(1),
      ...str16('hello'), // one topic
      ...int32(1),
      ...int32(2), // one partition, index 2
      ...int32(batch.length),
      ...batch, // records
    ]);
    const { header, body } = decodeRequest(payload);
    assert.deepStrictEqual(header, { apiKey: 0, apiVersion: 3, correlationId: 7, clientId: 'cli', headerVersion: 1 });
    assert.deepStrictEqual(body, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 30000,
      topicData: [{ name: 'hello', topicId: ZERO_UUID, partitionData: [{ index: 2, records: batch }] }],
    });
    const records = (body.topicData as { partitionData: { records: Buffer }[] }[])[0]!.partitionData[0]!.records;
    assert.equal(records.buffer, payload.buffer, 'records is a view into the frame');
    assert.equal(records.byteOffset, payload.byteOffset + payload.length - batch.length);
    assert.deepStrictEqual(encodeRequest(ApiKey.Produce, 3, 7, 'cli', body), frame(payload));
  });
});

describe('response vectors and header versions', () => {
  it('ApiVersions v3 response: flexible body, but header v0 (no tag byte)', () => {
    const out = encodeResponse(ApiKey.ApiVersions, 3, 5, {
      errorCode: 0,
      apiKeys: [{ apiKey: 0, minVersion: 0, maxVersion: 9 }],
      throttleTimeMs: 0,
    });
    assert.deepStrictEqual(
      [...out],
      [
        ...int32(19),
        ...int32(5), // size, correlationId; no header tags
        0x00,
        0x00, // error_code
        0x02,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x09,
        0x00, // compact array of 1 ApiVersion + its tags
        ...int32(0), // throttle_time_ms
        0x00, // body tags
      ],
    );
  });

  it('ApiVersions v0 response: classic array', () => {
    const out = encodeResponse(ApiKey.ApiVersions, 0, 5, {
      errorCode: 35,
      apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 3 }],
    });
    assert.deepStrictEqual(
      [...out],
      [...int32(16), ...int32(5), 0x00, 0x23, ...int32(1), 0x00, 0x12, 0x00, 0x00, 0x00, 0x03],
    );
  });

  it('flexible responses other than ApiVersions carry a header tag section', () => {
    const out = encodeResponse(ApiKey.Metadata, 9, 77, {});
    assert.equal(out.readInt32BE(4), 77);
    assert.equal(out[8], 0x00, 'response header v1 tag section');
    assert.deepStrictEqual(headerVersions(ApiKey.Metadata, 9), { request: 2, response: 1 });
    assert.deepStrictEqual(headerVersions(ApiKey.Metadata, 8), { request: 1, response: 0 });
    assert.deepStrictEqual(headerVersions(ApiKey.ApiVersions, 3), { request: 2, response: 0 });
    assert.deepStrictEqual(headerVersions(ApiKey.ApiVersions, 4), { request: 2, response: 0 });
    assert.deepStrictEqual(headerVersions(ApiKey.Fetch, 12), { request: 2, response: 1 });
    assert.deepStrictEqual(headerVersions(ApiKey.Produce, 9), { request: 2, response: 1 });
    assert.throws(() => headerVersions(ApiKey.AddPartitionsToTxn, 0), ProtocolError);
  });

  it('large record sets are passed by reference in encodeResponseChunks', () => {
    const records = buildRecordBatch([{ key: null, value: Buffer.alloc(40000, 1) }]);
    const body = { responses: [{ topic: 't', partitions: [{ partitionIndex: 0, highWatermark: 1, records }] }] };
    const chunks = encodeResponseChunks(ApiKey.Fetch, 12, 3, body);
    assert.ok(chunks.includes(records));
    const whole = Buffer.concat(chunks);
    assert.deepStrictEqual(whole, encodeResponse(ApiKey.Fetch, 12, 3, body));
    const back = decodeResponse(ApiKey.Fetch, 12, whole.subarray(4)).body as typeof body;
    assert.deepStrictEqual(back.responses[0]!.partitions[0]!.records, records);
  });
});

describe('unsupported and unknown requests', () => {
  it('peek reads apiKey, apiVersion and correlationId of any frame', () => {
    const payload = Buffer.from([0x00, 0x12, 0x00, 0x04, ...int32(42), 0xde, 0xad]);
    assert.deepStrictEqual(peekRequestHeader(payload), { apiKey: 18, apiVersion: 4, correlationId: 42 });
    assert.throws(() => peekRequestHeader(Buffer.alloc(7)), ProtocolError);
  });

  it('an unsupported version throws UnsupportedVersionError carrying the header', () => {
    const payload = Buffer.from([0x00, 0x12, 0x00, 0x06, ...int32(42), 0xde, 0xad]);
    assert.throws(
      () => decodeRequest(payload),
      (e: unknown) => e instanceof UnsupportedVersionError && e.peek.correlationId === 42 && e instanceof ProtocolError,
    );
  });

  it('an unknown API key throws UnknownApiKeyError', () => {
    const payload = Buffer.from([0x03, 0xe7, 0x00, 0x00, ...int32(1), 0, 0]);
    assert.throws(
      () => decodeRequest(payload),
      (e: unknown) => e instanceof UnknownApiKeyError && e.peek.apiKey === 999,
    );
  });
});

describe('tagged fields (KIP-482)', () => {
  it('known tagged fields are written only when not default, in tag order, and read back', () => {
    const base = { responses: [{ topic: 't', partitions: [{ partitionIndex: 1, records: null }] }] };
    const plain = encodeMessage(FetchResponse, 12, base);
    const tagged = encodeMessage(FetchResponse, 12, {
      responses: [
        {
          topic: 't',
          partitions: [
            {
              partitionIndex: 1,
              records: null,
              currentLeader: { leaderId: 3, leaderEpoch: 9 },
              divergingEpoch: { epoch: 4, endOffset: 100 },
            },
          ],
        },
      ],
    });
    // Partition tag section: 2 fields; tag 0 (divergingEpoch: int32 + int64 + empty tags = 13 bytes)
    // then tag 1 (currentLeader: int32 + int32 + empty tags = 9 bytes).
    const sectionStart = plain.length - 3; // [partition tags][topic tags][body tags]
    assert.deepStrictEqual([...plain.subarray(sectionStart)], [0, 0, 0]);
    assert.deepStrictEqual([...tagged.subarray(sectionStart, sectionStart + 4)], [0x02, 0x00, 13, 0x00]);
    const p = decodeBuffer(FetchResponse, 12, tagged).responses[0]!.partitions[0]!;
    assert.deepStrictEqual(p.divergingEpoch, { epoch: 4, endOffset: 100 });
    assert.deepStrictEqual(p.currentLeader, { leaderId: 3, leaderEpoch: 9 });
    assert.deepStrictEqual(p.snapshotId, { endOffset: -1, epoch: -1 });
  });

  it('a tagged nullable string (FetchRequest.ClusterId) round trips; null is left off', () => {
    const withId = encodeMessage(FetchRequest, 12, { clusterId: 'c1' });
    const without = encodeMessage(FetchRequest, 12, {});
    assert.equal(withId.length - without.length, 5); // tag 0, size 3, compact string "c1" (0x03 'c' '1')
    assert.equal(decodeBuffer(FetchRequest, 12, withId).clusterId, 'c1');
    assert.equal(decodeBuffer(FetchRequest, 12, without).clusterId, null);
  });

  it('unknown tags inside nested structs are skipped', () => {
    // ApiVersions v3 response, hand-built: one ApiVersion element carrying an unknown tag 6.
    const bytes = Buffer.from([
      0x00,
      0x00, // error_code
      0x02,
      0x00,
      0x01,
      0x00,
      0x00,
      0x00,
      0x0c, // one element: Fetch 0-12
      0x01,
      0x06,
      0x03,
      0x01,
      0x02,
      0x03, // element tags: unknown tag 6, 3 bytes
      ...int32(10), // throttle
      0x02,
      0x01,
      0x08,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x05,
      0x0f,
      0x00, // tag 1 finalizedFeaturesEpoch = 5, unknown tag 15
    ]);
    const v = decodeBuffer(ApiVersionsResponse, 3, bytes);
    assert.deepStrictEqual(v.apiKeys, [{ apiKey: 1, minVersion: 0, maxVersion: 12 }]);
    assert.equal(v.throttleTimeMs, 10);
    assert.equal(v.finalizedFeaturesEpoch, 5);
    assert.deepStrictEqual(v.supportedFeatures, []);
    assert.equal(v.zkMigrationReady, false);
  });

  it('a tagged field whose declared size runs past the end throws ProtocolError', () => {
    const bytes = Buffer.from([0x01, 0x61, 0x01, 0x61, 0x01, 0x00, 0x20]);
    assert.throws(() => decodeBuffer(ApiVersionsRequest, 3, bytes), ProtocolError);
  });

  it('a known tagged field that is shorter than its value throws ProtocolError', () => {
    // Body tags: tag 1 (finalizedFeaturesEpoch, an int64) declared with only 2 bytes.
    const bytes = Buffer.from([0x00, 0x00, 0x01, ...int32(0), 0x01, 0x01, 0x02, 0x00, 0x05]);
    assert.throws(() => decodeBuffer(ApiVersionsResponse, 3, bytes), ProtocolError);
  });
});
