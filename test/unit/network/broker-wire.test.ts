/**
 * The broker's wire behaviour seen from a raw socket: version negotiation, error codes for bad
 * input, connection closing for broken frames (and only that connection), long polls, acks=0 and
 * request ordering. Runs a real in-process broker (worker threads, real files).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ApiKey, decodeResponse, encodeRequest, ErrorCode } from '../../../src/protocol';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { decodeRecordBatches } from '../../../src/protocol/record-batch/decode';
import { WireClient } from '../../helpers/wire-client';
import { removeDir, startTestBroker, type TestBroker } from '../../helpers/in-process-broker';
import { fetchRequestBody } from '../../helpers/fetch-request';

function batchOf(values: string[]): Buffer {
  return buildRecordBatch(values.map((v) => ({ key: null, value: Buffer.from(v), headers: [] })));
}

function produceBody(topic: string, partition: number, records: Buffer | null, acks = -1) {
  return {
    transactionalId: null,
    acks,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  };
}

function fetchBody(topic: string, partition: number, fetchOffset: number, maxWaitMs = 0, minBytes = 1) {
  return fetchRequestBody({ topic, partition, fetchOffset, maxWaitMs, minBytes });
}

async function createTopic(client: WireClient, name: string, numPartitions = 1): Promise<number> {
  const res = await client.request(ApiKey.CreateTopics, 4, {
    topics: [{ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 5000,
    validateOnly: false,
  });
  return res.body.topics[0].errorCode;
}

describe('broker on the wire', () => {
  let broker: TestBroker;
  let client: WireClient;

  before(async () => {
    broker = await startTestBroker({ 'socket.request.max.bytes': '1048576', 'message.max.bytes': '100000' });
    client = await WireClient.connect(broker.port);
  });

  after(async () => {
    client.close();
    await broker.stop();
    removeDir(broker.dataDir);
  });

  test('ApiVersions v0 and v3 list every served API with its range', async () => {
    for (const version of [0, 3]) {
      const res = await client.request(ApiKey.ApiVersions, version, {
        clientSoftwareName: 'wire-test',
        clientSoftwareVersion: '1.0',
      });
      assert.equal(res.body.errorCode, ErrorCode.NONE);
      const produce = res.body.apiKeys.find((k: any) => k.apiKey === ApiKey.Produce);
      assert.deepEqual({ min: produce.minVersion, max: produce.maxVersion }, { min: 0, max: 13 });
      const fetch = res.body.apiKeys.find((k: any) => k.apiKey === ApiKey.Fetch);
      assert.ok(fetch.maxVersion >= 11, 'kafka-python infers the broker release from Fetch v11');
    }
  });

  test('ApiVersions above v3 gets UNSUPPORTED_VERSION with the list in the v0 layout', async () => {
    const bytes = Buffer.alloc(4 + 10);
    bytes.writeInt32BE(10, 0);
    bytes.writeInt16BE(ApiKey.ApiVersions, 4);
    bytes.writeInt16BE(99, 6);
    bytes.writeInt32BE(4242, 8);
    bytes.writeInt16BE(-1, 12); // null client id
    client.sendRaw(bytes);
    const frame = await client.readFrame();
    assert.ok(frame);
    assert.equal(frame.readInt32BE(0), 4242);
    assert.equal(frame.readInt16BE(4), ErrorCode.UNSUPPORTED_VERSION);
    assert.ok(frame.readInt32BE(6) >= 7, 'the v0 api_keys array follows');
  });

  test('an unknown API key closes that connection only', async () => {
    const bad = await WireClient.connect(broker.port);
    const bytes = Buffer.alloc(14);
    bytes.writeInt32BE(10, 0);
    bytes.writeInt16BE(1234, 4);
    bytes.writeInt16BE(0, 6);
    bytes.writeInt32BE(1, 8);
    bytes.writeInt16BE(-1, 12);
    bad.sendRaw(bytes);
    assert.equal(await bad.waitClosed(), true);
    const res = await client.request(ApiKey.ApiVersions, 2, {});
    assert.equal(res.body.errorCode, ErrorCode.NONE);
  });

  test('frames over socket.request.max.bytes and negative sizes are refused before buffering', async () => {
    for (const size of [2 * 1048576, -5]) {
      const bad = await WireClient.connect(broker.port);
      const head = Buffer.alloc(4);
      head.writeInt32BE(size, 0);
      bad.sendRaw(head);
      assert.equal(await bad.waitClosed(), true, `size ${size} closes the connection`);
    }
    const res = await client.request(ApiKey.ApiVersions, 2, {});
    assert.equal(res.body.errorCode, ErrorCode.NONE);
  });

  test('a bad frame pipelined after a good request closes the connection only after answering the good one (as Kafka)', async () => {
    const huge = Buffer.alloc(4);
    huge.writeInt32BE(0x7fffffff, 0);
    const unknownKey = Buffer.alloc(14);
    unknownKey.writeInt32BE(10, 0);
    unknownKey.writeInt16BE(9999, 4);
    unknownKey.writeInt16BE(0, 6);
    unknownKey.writeInt32BE(2, 8);
    unknownKey.writeInt16BE(-1, 12);
    for (const [name, badFrame] of [
      ['a size over socket.request.max.bytes', huge],
      ['an unknown API key', unknownKey],
    ] as const) {
      const bad = await WireClient.connect(broker.port);
      bad.sendRaw(Buffer.concat([encodeRequest(ApiKey.ApiVersions, 0, 1, 'wire-test', {}), badFrame]));
      const frame = await bad.readFrame();
      assert.ok(frame !== null, `${name}: the ApiVersions before it is answered`);
      const answer = decodeResponse(ApiKey.ApiVersions, 0, frame);
      assert.equal(answer.correlationId, 1);
      assert.equal(answer.body.errorCode, ErrorCode.NONE);
      assert.equal(await bad.waitClosed(), true, `${name}: then the connection closes`);
      assert.equal(await bad.readFrame(), null, `${name}: nothing after it`);
    }
  });

  test('a truncated request body closes the connection', async () => {
    const bad = await WireClient.connect(broker.port);
    const bytes = Buffer.alloc(4 + 14);
    bytes.writeInt32BE(14, 0);
    bytes.writeInt16BE(ApiKey.Metadata, 4);
    bytes.writeInt16BE(4, 6);
    bytes.writeInt32BE(1, 8);
    bytes.writeInt16BE(-1, 12);
    bytes.writeInt32BE(1000, 14); // claims 1000 topics, carries none
    bad.sendRaw(bytes);
    assert.equal(await bad.waitClosed(), true);
  });

  test('Metadata auto-creates only when allowed; invalid names get INVALID_TOPIC_EXCEPTION', async () => {
    const denied = await client.request(ApiKey.Metadata, 4, {
      topics: [{ name: 'not-created' }],
      allowAutoTopicCreation: false,
    });
    assert.equal(denied.body.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const created = await client.request(ApiKey.Metadata, 4, {
      topics: [{ name: 'auto-created' }],
      allowAutoTopicCreation: true,
    });
    assert.equal(created.body.topics[0].errorCode, ErrorCode.NONE);
    assert.equal(created.body.topics[0].partitions.length, 1);
    assert.equal(created.body.topics[0].partitions[0].leaderId, 0);
    const invalid = await client.request(ApiKey.Metadata, 4, {
      topics: [{ name: 'bad name!' }],
      allowAutoTopicCreation: true,
    });
    assert.equal(invalid.body.topics[0].errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
  });

  test('Produce to an unknown topic gets UNKNOWN_TOPIC_OR_PARTITION and does not create it', async () => {
    const res = await client.request(ApiKey.Produce, 7, produceBody('never-made', 0, batchOf(['x'])));
    assert.equal(res.body.responses[0].partitionResponses[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const md = await client.request(ApiKey.Metadata, 4, {
      topics: [{ name: 'never-made' }],
      allowAutoTopicCreation: false,
    });
    assert.equal(md.body.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  test('Produce v2 is advertised but refused with UNSUPPORTED_VERSION', async () => {
    assert.equal(await createTopic(client, 'old-produce'), ErrorCode.NONE);
    const res = await client.request(ApiKey.Produce, 2, {
      acks: 1,
      timeoutMs: 1000,
      topicData: [{ name: 'old-produce', partitionData: [{ index: 0, records: Buffer.alloc(0) }] }],
    });
    assert.equal(res.body.responses[0].partitionResponses[0].errorCode, ErrorCode.UNSUPPORTED_VERSION);
    // With acks=0 no answer is read: the refusal closes the connection instead (Kafka's sendErrorOrCloseConnection).
    const fireAndForget = await WireClient.connect(broker.port);
    fireAndForget.send(ApiKey.Produce, 2, {
      acks: 0,
      timeoutMs: 1000,
      topicData: [{ name: 'old-produce', partitionData: [{ index: 0, records: Buffer.alloc(0) }] }],
    });
    assert.equal(await fireAndForget.waitClosed(), true);
    assert.equal(await fireAndForget.readFrame(), null, 'with no answer');
  });

  test('bad CRC gets CORRUPT_MESSAGE, oversized batches MESSAGE_TOO_LARGE, a missing partition UNKNOWN_TOPIC_OR_PARTITION', async () => {
    assert.equal(await createTopic(client, 'checks'), ErrorCode.NONE);
    const corrupt = batchOf(['hello']);
    corrupt[corrupt.length - 1]! ^= 0xff;
    let res = await client.request(ApiKey.Produce, 7, produceBody('checks', 0, corrupt));
    assert.equal(res.body.responses[0].partitionResponses[0].errorCode, ErrorCode.CORRUPT_MESSAGE);
    res = await client.request(ApiKey.Produce, 7, produceBody('checks', 0, batchOf(['y'.repeat(200_000)])));
    assert.equal(res.body.responses[0].partitionResponses[0].errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    res = await client.request(ApiKey.Produce, 7, produceBody('checks', 7, batchOf(['z'])));
    assert.equal(res.body.responses[0].partitionResponses[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    res = await client.request(ApiKey.Produce, 7, produceBody('checks', 0, batchOf(['ok'])));
    assert.equal(res.body.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    assert.equal(res.body.responses[0].partitionResponses[0].baseOffset, 0);
  });

  test('offsets are dense across batches and fetch returns them with the HW', async () => {
    assert.equal(await createTopic(client, 'dense'), ErrorCode.NONE);
    const bases: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await client.request(
        ApiKey.Produce,
        7,
        produceBody('dense', 0, batchOf([`a${i}`, `b${i}`, `c${i}`])),
      );
      bases.push(res.body.responses[0].partitionResponses[0].baseOffset);
    }
    assert.deepEqual(bases, [0, 3, 6, 9, 12]);
    const res = await client.request(ApiKey.Fetch, 11, fetchBody('dense', 0, 4));
    const p = res.body.responses[0].partitions[0];
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.equal(p.highWatermark, 15);
    const batches = decodeRecordBatches(p.records);
    assert.equal(batches[0]!.baseOffset, 3, 'the batch containing offset 4 comes first');
    const values = batches.flatMap((b) => b.records.map((r) => r.value!.toString()));
    assert.deepEqual(values.slice(0, 3), ['a1', 'b1', 'c1']);
    assert.equal(values.length, 12);
  });

  test('a produce frame larger than one socket read reaches the log intact, alone or beside another partition', async () => {
    // Over 64 KiB, a frame spans socket reads and is copied together into a buffer of its own: for one
    // partition that buffer is handed to the replica as it is (src/runtime/envelope.ts), for two each
    // batch is copied into its envelope. Both must append exactly the bytes sent.
    assert.equal(await createTopic(client, 'large-frames', 2), ErrorCode.NONE);
    const values = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => `${tag}-${i}-`.padEnd(1000, String.fromCharCode(97 + (i % 26))));
    const alone = values('alone', 90);
    const res = await client.request(ApiKey.Produce, 7, produceBody('large-frames', 0, batchOf(alone)));
    assert.equal(res.body.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    const left = values('left', 45);
    const right = values('right', 45);
    const both = await client.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        {
          name: 'large-frames',
          partitionData: [
            { index: 0, records: batchOf(left) },
            { index: 1, records: batchOf(right) },
          ],
        },
      ],
    });
    const codes = both.body.responses[0].partitionResponses.map((p: { errorCode: number }) => p.errorCode);
    assert.deepEqual(codes, [ErrorCode.NONE, ErrorCode.NONE]);
    const read = async (partition: number) => {
      const fetched = await client.request(ApiKey.Fetch, 11, fetchBody('large-frames', partition, 0));
      const records = fetched.body.responses[0].partitions[0].records;
      return decodeRecordBatches(records).flatMap((b) => b.records.map((r) => r.value!.toString()));
    };
    assert.deepEqual(await read(0), [...alone, ...left]);
    assert.deepEqual(await read(1), right);
  });

  test('Produce v13 and Fetch v13+ name topics by topic ID (KIP-516); unknown ids get UNKNOWN_TOPIC_ID', async () => {
    assert.equal(await createTopic(client, 'by-id'), ErrorCode.NONE);
    const md = await client.request(ApiKey.Metadata, 12, {
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'by-id' }],
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: false,
    });
    const topicId = md.body.topics[0].topicId;
    const produced = await client.request(ApiKey.Produce, 13, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        { topicId, partitionData: [{ index: 0, records: batchOf(['one', 'two']) }] },
        { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitionData: [{ index: 0, records: batchOf(['lost']) }] },
      ],
    });
    assert.deepEqual(
      produced.body.responses.map((r: any) => [r.topicId, r.partitionResponses[0].errorCode]),
      [
        [topicId, ErrorCode.NONE],
        ['AAAAAAAAAAAAAAAAAAAAAQ', ErrorCode.UNKNOWN_TOPIC_ID],
      ],
    );
    const fetched = await client.request(ApiKey.Fetch, 17, {
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topicId,
          partitions: [
            { partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, logStartOffset: -1, partitionMaxBytes: 1 << 20 },
          ],
        },
        {
          topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
          partitions: [
            { partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, logStartOffset: -1, partitionMaxBytes: 1 << 20 },
          ],
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    });
    const [known, unknown] = fetched.body.responses;
    assert.equal(known.topicId, topicId);
    assert.deepEqual(
      decodeRecordBatches(known.partitions[0].records)[0]!.records.map((r) => r.value!.toString()),
      ['one', 'two'],
    );
    assert.equal(unknown.partitions[0].errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
  });

  test('fetch past the LEO gets OFFSET_OUT_OF_RANGE; at the HW it is empty', async () => {
    assert.equal(await createTopic(client, 'range'), ErrorCode.NONE);
    await client.request(ApiKey.Produce, 7, produceBody('range', 0, batchOf(['1', '2'])));
    let res = await client.request(ApiKey.Fetch, 11, fetchBody('range', 0, 50));
    assert.equal(res.body.responses[0].partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    res = await client.request(ApiKey.Fetch, 11, fetchBody('range', 0, 2));
    assert.equal(res.body.responses[0].partitions[0].errorCode, ErrorCode.NONE);
    assert.equal(res.body.responses[0].partitions[0].records.length, 0);
  });

  test('fetch at an offset beyond 2^53 gets OFFSET_OUT_OF_RANGE on an open connection, as in Kafka', async () => {
    assert.equal(await createTopic(client, 'far'), ErrorCode.NONE);
    await client.request(ApiKey.Produce, 7, produceBody('far', 0, batchOf(['1'])));
    // A JS number cannot carry 2^63 - 1 into the encoder: write a marker offset and patch its bytes.
    const marker = 0x0a0b0c0d0e0f;
    const markerBytes = Buffer.alloc(8);
    markerBytes.writeBigInt64BE(BigInt(marker));
    for (const far of [2n ** 53n, 2n ** 62n, 2n ** 63n - 1n]) {
      // v12 is flexible; from v13 a Fetch names topics by id.
      for (const version of [4, 11, 12]) {
        const correlationId = 900_000 + version;
        const frame = encodeRequest(ApiKey.Fetch, version, correlationId, 'wire-test', fetchBody('far', 0, marker));
        const at = frame.indexOf(markerBytes);
        assert.ok(at > 0 && frame.indexOf(markerBytes, at + 1) < 0, 'the marker appears once');
        frame.writeBigInt64BE(far, at);
        client.sendRaw(frame);
        const response = await client.readFrame();
        assert.ok(response !== null, `v${version} ${far}: answered, not closed`);
        const decoded = decodeResponse(ApiKey.Fetch, version, response);
        assert.equal(decoded.correlationId, correlationId);
        const partition = (decoded.body as any).responses[0].partitions[0];
        assert.equal(partition.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE, `v${version} ${far}`);
      }
    }
    const res = await client.request(ApiKey.Fetch, 11, fetchBody('far', 0, 0));
    assert.equal(res.body.responses[0].partitions[0].errorCode, ErrorCode.NONE, 'the connection still serves');
  });

  test('a long poll waits for max_wait_ms, and a produce wakes it early', async () => {
    assert.equal(await createTopic(client, 'poll'), ErrorCode.NONE);
    let started = Date.now();
    const idle = await client.request(ApiKey.Fetch, 11, fetchBody('poll', 0, 0, 400));
    const idleMs = Date.now() - started;
    assert.equal(idle.body.responses[0].partitions[0].records.length, 0);
    assert.ok(idleMs >= 350, `waited ${idleMs} ms`);
    const consumer = await WireClient.connect(broker.port);
    started = Date.now();
    const pending = consumer.request(ApiKey.Fetch, 11, fetchBody('poll', 0, 0, 10_000));
    await new Promise((r) => setTimeout(r, 200));
    await client.request(ApiKey.Produce, 7, produceBody('poll', 0, batchOf(['wake'])));
    const woke = await pending;
    consumer.close();
    assert.ok(Date.now() - started < 5000, 'the produce ended the long poll');
    const batches = decodeRecordBatches(woke.body.responses[0].partitions[0].records);
    assert.equal(batches[0]!.records[0]!.value!.toString(), 'wake');
  });

  test('acks=0 gets no response, and later responses keep request order', async () => {
    assert.equal(await createTopic(client, 'fire-and-forget'), ErrorCode.NONE);
    client.send(ApiKey.Produce, 7, produceBody('fire-and-forget', 0, batchOf(['q']), 0));
    const res = await client.request(ApiKey.ApiVersions, 2, {});
    assert.equal(res.body.errorCode, ErrorCode.NONE);
    const ids = [
      client.send(ApiKey.Metadata, 1, { topics: null }),
      client.send(ApiKey.ApiVersions, 0, {}),
      client.send(ApiKey.Metadata, 4, { topics: [], allowAutoTopicCreation: false }),
    ];
    for (const id of ids) {
      const frame = await client.readFrame();
      assert.equal(frame!.readInt32BE(0), id);
    }
    const list = await client.request(ApiKey.ListOffsets, 2, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: 'fire-and-forget', partitions: [{ partitionIndex: 0, timestamp: -1 }] }],
    });
    assert.equal(list.body.topics[0].partitions[0].offset, 1);
  });

  test('acks=0 that fails closes the connection (Kafka: the producer then refreshes its metadata)', async () => {
    assert.equal(await createTopic(client, 'fire-and-fail'), ErrorCode.NONE);
    const producer = await WireClient.connect(broker.port);
    producer.send(ApiKey.Produce, 7, produceBody('fire-and-fail', 0, batchOf(['ok']), 0));
    const versions = await producer.request(ApiKey.ApiVersions, 2, {});
    assert.equal(versions.body.errorCode, ErrorCode.NONE, 'a good acks=0 produce leaves the connection open');
    producer.send(ApiKey.Produce, 7, produceBody('fire-and-fail', 99, batchOf(['lost']), 0));
    assert.equal(await producer.waitClosed(), true, 'a partition that does not exist closes it');
    assert.equal(await producer.readFrame(), null, 'with no answer');
    const list = await client.request(ApiKey.ListOffsets, 2, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: 'fire-and-fail', partitions: [{ partitionIndex: 0, timestamp: -1 }] }],
    });
    assert.equal(list.body.topics[0].partitions[0].offset, 1, 'other connections are served; the good batch is in');
  });

  test('a partition named twice in one Produce is appended once, with its last records (Kafka keys by partition)', async () => {
    assert.equal(await createTopic(client, 'twice'), ErrorCode.NONE);
    const res = await client.request(ApiKey.Produce, 7, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [
        { name: 'twice', partitionData: [{ index: 0, records: batchOf(['first']) }] },
        { name: 'twice', partitionData: [{ index: 0, records: batchOf(['second']) }] },
      ],
    });
    assert.equal(res.body.responses.length, 1, 'one topic in the answer');
    assert.equal(res.body.responses[0].partitionResponses.length, 1, 'one partition in the answer');
    assert.equal(res.body.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    const fetched = await client.request(ApiKey.Fetch, 4, fetchBody('twice', 0, 0));
    const batches = decodeRecordBatches(fetched.body.responses[0].partitions[0].records);
    assert.deepEqual(
      batches.flatMap((b) => b.records.map((r) => r.value!.toString())),
      ['second'],
    );
  });

  test('ListOffsets earliest and latest', async () => {
    assert.equal(await createTopic(client, 'offsets'), ErrorCode.NONE);
    await client.request(ApiKey.Produce, 7, produceBody('offsets', 0, batchOf(['1', '2', '3'])));
    const res = await client.request(ApiKey.ListOffsets, 3, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [
        {
          name: 'offsets',
          partitions: [
            { partitionIndex: 0, timestamp: -2 },
            { partitionIndex: 0, timestamp: -1 },
          ],
        },
      ],
    });
    assert.deepEqual(
      res.body.topics[0].partitions.map((p: any) => p.offset),
      [0, 3],
    );
  });

  test('ApiVersions v5 checks the cluster and node the client names (KIP-1242, as Kafka 4.4)', async () => {
    const md = await client.request(ApiKey.Metadata, 10, {
      topics: [],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    const clusterId: string = md.body.clusterId;
    const ask = async (target: { clusterId: string | null; nodeId: number }): Promise<[number, boolean]> => {
      const res = await client.request(ApiKey.ApiVersions, 5, {
        clientSoftwareName: 'wire-test',
        clientSoftwareVersion: '1.0',
        ...target,
      });
      return [res.body.errorCode, res.body.apiKeys.length > 0];
    };
    assert.deepEqual(await ask({ clusterId: null, nodeId: -1 }), [ErrorCode.NONE, true]);
    assert.deepEqual(await ask({ clusterId, nodeId: 0 }), [ErrorCode.NONE, true]);
    assert.deepEqual(await ask({ clusterId: 'AAAAAAAAAAAAAAAAAAAAAA', nodeId: 0 }), [
      ErrorCode.REBOOTSTRAP_REQUIRED,
      false,
    ]);
    assert.deepEqual(await ask({ clusterId, nodeId: 3 }), [ErrorCode.REBOOTSTRAP_REQUIRED, false]);
    assert.deepEqual(await ask({ clusterId, nodeId: -1 }), [ErrorCode.INVALID_REQUEST, false]);
    assert.deepEqual(await ask({ clusterId: null, nodeId: 0 }), [ErrorCode.INVALID_REQUEST, false]);
  });

  test('ListOffsets special timestamps: each from the version that introduced it, else UNSUPPORTED_VERSION', async () => {
    assert.equal(await createTopic(client, 'offsets-special'), ErrorCode.NONE);
    const now = Date.now();
    const records = buildRecordBatch(
      [now, now + 5].map((timestamp, i) => ({ key: null, value: Buffer.from(`s${i}`), headers: [], timestamp })),
    );
    await client.request(ApiKey.Produce, 7, produceBody('offsets-special', 0, records));
    const ask = async (timestamp: number, version: number): Promise<[number, number]> => {
      const res = await client.request(ApiKey.ListOffsets, version, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: 'offsets-special', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }],
        timeoutMs: 5000,
      });
      const p = res.body.topics[0].partitions[0];
      return [p.errorCode, p.offset];
    };
    assert.deepEqual(await ask(-3, 6), [ErrorCode.UNSUPPORTED_VERSION, -1]);
    assert.deepEqual(await ask(-3, 7), [ErrorCode.NONE, 1]);
    assert.deepEqual(await ask(-4, 7), [ErrorCode.UNSUPPORTED_VERSION, -1]);
    assert.deepEqual(await ask(-4, 8), [ErrorCode.NONE, 0], 'earliest local = log start without tiered storage');
    assert.deepEqual(await ask(-5, 9), [ErrorCode.NONE, -1]);
    assert.deepEqual(await ask(-6, 10), [ErrorCode.UNSUPPORTED_VERSION, -1]);
    assert.deepEqual(await ask(-6, 11), [ErrorCode.NONE, -1], 'earliest pending upload: none without tiered storage');
    assert.deepEqual(await ask(-7, 11), [ErrorCode.UNSUPPORTED_VERSION, -1]);
  });

  test('an out-of-range fetch carries -1 offsets; an INVALID_TIMESTAMP produce names the offending records', async () => {
    assert.equal(await createTopic(client, 'answers'), ErrorCode.NONE);
    await client.request(ApiKey.Produce, 7, produceBody('answers', 0, batchOf(['a'])));
    const fetched = await client.request(ApiKey.Fetch, 11, fetchBody('answers', 0, 5));
    const p = fetched.body.responses[0].partitions[0];
    assert.deepEqual(
      [p.errorCode, p.highWatermark, p.lastStableOffset, p.logStartOffset],
      [ErrorCode.OFFSET_OUT_OF_RANGE, -1, -1, -1],
    );
    // log.message.timestamp.after.max.ms defaults to 1 h: records 1 and 3 are two days ahead.
    const now = Date.now();
    const ahead = now + 2 * 86_400_000;
    const batch = buildRecordBatch(
      [now, ahead, now, ahead].map((timestamp, i) => ({
        key: null,
        value: Buffer.from(`r${i}`),
        headers: [],
        timestamp,
      })),
    );
    const res = await client.request(ApiKey.Produce, 9, produceBody('answers', 0, batch));
    const r = res.body.responses[0].partitionResponses[0];
    assert.equal(r.errorCode, ErrorCode.INVALID_TIMESTAMP);
    assert.deepEqual(
      r.recordErrors.map((e: any) => e.batchIndex),
      [1, 3],
    );
    assert.ok(
      r.recordErrors.every((e: any) => /out of range/.test(e.batchIndexErrorMessage)),
      JSON.stringify(r.recordErrors),
    );
    assert.equal(r.logStartOffset, 0, 'Kafka keeps the log start offset on a record validation error');
  });

  test('ElectLeaders: led partitions need no election; unknown ones and bad types are refused (as Kafka 4.4)', async () => {
    assert.equal(await createTopic(client, 'elect', 2), ErrorCode.NONE);
    const elect = async (
      electionType: number,
      topicPartitions: Array<{ topic: string; partitions: number[] }> | null,
    ) => (await client.request(ApiKey.ElectLeaders, 2, { electionType, topicPartitions, timeoutMs: 5000 })).body;
    const preferred = await elect(0, [
      { topic: 'elect', partitions: [1, 0, 7] },
      { topic: 'elect-missing', partitions: [0] },
    ]);
    assert.equal(preferred.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      preferred.replicaElectionResults.map((t: any) => [
        t.topic,
        t.partitionResult.map((p: any) => [p.partitionId, p.errorCode, p.errorMessage]),
      ]),
      [
        [
          'elect',
          [
            [1, ErrorCode.ELECTION_NOT_NEEDED, 'Leader election not needed for topic partition.'],
            [0, ErrorCode.ELECTION_NOT_NEEDED, 'Leader election not needed for topic partition.'],
            [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'No such partition as elect-7'],
          ],
        ],
        ['elect-missing', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'No such topic as elect-missing']]],
      ],
    );
    assert.equal(
      (await elect(1, [{ topic: 'elect', partitions: [0] }])).replicaElectionResults[0].partitionResult[0].errorCode,
      ErrorCode.ELECTION_NOT_NEEDED,
    );
    const bad = await elect(2, [{ topic: 'elect', partitions: [0] }]);
    assert.deepEqual(
      [bad.errorCode, bad.replicaElectionResults[0].partitionResult[0].errorCode],
      [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST],
    );
    const all = await elect(0, null);
    const mine = all.replicaElectionResults.find((t: any) => t.topic === 'elect');
    assert.deepEqual(mine, { topic: 'elect', partitionResult: [] }, 'null lists only partitions needing an election');
    assert.ok(all.replicaElectionResults.every((t: any) => t.partitionResult.length === 0));
    assert.deepEqual((await elect(0, [])).replicaElectionResults, []);
  });

  test('CreateTopics errors and DeleteTopics removes the partition directories', async () => {
    assert.equal(await createTopic(client, 'doomed', 2), ErrorCode.NONE);
    assert.equal(await createTopic(client, 'doomed'), ErrorCode.TOPIC_ALREADY_EXISTS);
    assert.equal(await createTopic(client, 'bad/name'), ErrorCode.INVALID_TOPIC_EXCEPTION);
    assert.equal(await createTopic(client, 'zero', 0), ErrorCode.INVALID_PARTITIONS);
    const rf = await client.request(ApiKey.CreateTopics, 4, {
      topics: [{ name: 'rf3', numPartitions: 1, replicationFactor: 3, assignments: [], configs: [] }],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.equal(rf.body.topics[0].errorCode, ErrorCode.INVALID_REPLICATION_FACTOR);
    // Explicit assignments (counts -1, KIP-464): honoured, an unknown broker refused (v5 answers the counts).
    const manual = await client.request(ApiKey.CreateTopics, 5, {
      topics: [
        {
          name: 'manual',
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [
            { partitionIndex: 0, brokerIds: [0] },
            { partitionIndex: 1, brokerIds: [0] },
          ],
          configs: [],
        },
        {
          name: 'manual-unknown',
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [{ partitionIndex: 0, brokerIds: [7] }],
          configs: [],
        },
      ],
      timeoutMs: 5000,
      validateOnly: false,
    });
    assert.deepEqual(
      manual.body.topics.map((t: any) => [t.name, t.errorCode, t.numPartitions, t.replicationFactor]),
      [
        ['manual', ErrorCode.NONE, 2, 1],
        ['manual-unknown', ErrorCode.INVALID_REPLICA_ASSIGNMENT, -1, -1],
      ],
    );
    assert.ok(existsSync(path.join(broker.dataDir, 'doomed-1')));
    const del = await client.request(ApiKey.DeleteTopics, 3, { topicNames: ['doomed', 'ghost'], timeoutMs: 5000 });
    assert.deepEqual(
      del.body.responses.map((r: any) => [r.name, r.errorCode]),
      [
        ['doomed', ErrorCode.NONE],
        ['ghost', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ],
    );
    assert.ok(!existsSync(path.join(broker.dataDir, 'doomed-0')));
    assert.ok(!existsSync(path.join(broker.dataDir, 'doomed-1')));
    assert.equal(await createTopic(client, 'doomed'), ErrorCode.NONE, 'the name can be reused');
  });
});

describe('broker restart', () => {
  test('topics, topic ids and records survive a clean restart', async () => {
    let broker = await startTestBroker();
    try {
      let client = await WireClient.connect(broker.port);
      assert.equal(await createTopic(client, 'durable', 2), ErrorCode.NONE);
      await client.request(ApiKey.Produce, 7, produceBody('durable', 1, batchOf(['kept'])));
      const before = await client.request(ApiKey.Metadata, 10, {
        topics: null,
        includeTopicAuthorizedOperations: false,
      });
      client.close();
      broker = await broker.restart();
      client = await WireClient.connect(broker.port);
      const after = await client.request(ApiKey.Metadata, 10, {
        topics: null,
        includeTopicAuthorizedOperations: false,
      });
      assert.equal(after.body.clusterId, before.body.clusterId);
      assert.deepEqual(
        after.body.topics.map((t: any) => [t.name, t.topicId]),
        before.body.topics.map((t: any) => [t.name, t.topicId]),
      );
      const res = await client.request(ApiKey.Fetch, 11, fetchBody('durable', 1, 0));
      assert.equal(
        decodeRecordBatches(res.body.responses[0].partitions[0].records)[0]!.records[0]!.value!.toString(),
        'kept',
      );
      client.close();
    } finally {
      await broker.stop();
      removeDir(broker.dataDir);
    }
  });
});

describe('supervision', () => {
  test('a crashed replica worker and a crashed controller are restarted and the broker keeps serving', async () => {
    const broker = await startTestBroker();
    try {
      const client = await WireClient.connect(broker.port);
      assert.equal(await createTopic(client, 'crashy'), ErrorCode.NONE);
      const first = await client.request(ApiKey.Produce, 7, produceBody('crashy', 0, batchOf(['before'])));
      assert.equal(first.body.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
      const replica = broker.runtime
        .workers()
        .flatMap((w) => w.actorIds)
        .find((id) => id.startsWith('replica/'))!;
      const restarted = new Promise<string[]>((resolve) =>
        broker.runtime.onWorkerRestart((info) => resolve(info.actorIds)),
      );
      broker.runtime.crashWorkerOf(replica);
      assert.ok((await restarted).includes(replica));
      const fetched = await client.request(ApiKey.Fetch, 11, fetchBody('crashy', 0, 0));
      assert.equal(
        decodeRecordBatches(fetched.body.responses[0].partitions[0].records)[0]!.records[0]!.value!.toString(),
        'before',
      );
      const next = await client.request(ApiKey.Produce, 7, produceBody('crashy', 0, batchOf(['after'])));
      assert.equal(next.body.responses[0].partitionResponses[0].baseOffset, 1);

      const controllerBack = new Promise<string[]>((resolve) =>
        broker.runtime.onWorkerRestart((info) => resolve(info.actorIds)),
      );
      broker.runtime.crashWorkerOf('controller');
      assert.ok((await controllerBack).includes('controller'));
      assert.equal(await createTopic(client, 'after-controller-crash'), ErrorCode.NONE);
      assert.equal(
        await createTopic(client, 'crashy'),
        ErrorCode.TOPIC_ALREADY_EXISTS,
        'the metadata log was replayed',
      );
      client.close();
    } finally {
      await broker.stop();
      removeDir(broker.dataDir);
    }
  });
});
