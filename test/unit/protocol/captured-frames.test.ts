/**
 * Decodes request frames captured from the real clients (test/fixtures/captured/<client>/, written
 * by scripts/capture-frames.ts through a recording proxy in front of Skiff) and checks what each
 * client really sends: the API and version named by the file, the client id, the topic of the
 * capture flow, Produce record batches that are v2 with a valid CRC-32C and hold the produced
 * records, and that re-encoding the decoded request gives back the captured bytes.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { ApiKey, apiKeyName, decodeRequest, encodeRequest } from '../../../src/protocol';
import * as L from '../../../src/protocol/record-batch/layout';
import { attributesOf, baseOffsetNumber, checkBatch, recordsCountOf } from '../../../src/protocol/record-batch/view';
import { repoRoot } from '../../compat/clients';
import {
  CAPTURE_CLIENTS,
  CAPTURE_RECORDS,
  captureTopic,
  type CaptureClient,
  type CapturedRecord,
} from '../../../scripts/capture-frames';

const CAPTURED_DIR = path.join(repoRoot(), 'test', 'fixtures', 'captured');

/** Client id each client sends by default (the capture flows do not set one). */
const CLIENT_IDS: Record<CaptureClient, RegExp> = {
  kcat: /^rdkafka$/,
  'confluent-kafka': /^rdkafka$/,
  'kafka-python': /^kafka-python-(2\.0\.2|producer-\d+)$/,
  kafkajs: /^kafkajs$/,
};

/** (api, version) pairs each client must have been seen sending (kafka-facts.md section 1.2). */
const EXPECTED_REQUESTS: Record<CaptureClient, string[]> = {
  kcat: ['ApiVersions-v3', 'Metadata-v4', 'Produce-v7', 'ListOffsets-v2', 'Fetch-v11'],
  'confluent-kafka': ['ApiVersions-v3', 'Metadata-v4', 'CreateTopics-v4', 'Produce-v7', 'ListOffsets-v2', 'Fetch-v11'],
  'kafka-python': [
    'ApiVersions-v0',
    'Metadata-v0',
    'Metadata-v1',
    'Metadata-v5',
    'CreateTopics-v3',
    'Produce-v7',
    'ListOffsets-v1',
    'Fetch-v4',
  ],
  kafkajs: ['ApiVersions-v2', 'Metadata-v6', 'CreateTopics-v3', 'Produce-v7', 'ListOffsets-v3'],
};

interface CapturedFrame {
  file: string;
  apiKey: number;
  apiName: string;
  apiVersion: number;
  n: number;
  bytes: Buffer;
}

function capturedFrames(client: CaptureClient): CapturedFrame[] {
  const dir = path.join(CAPTURED_DIR, client);
  return fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.bin'))
    .map((file) => {
      const m = /^(\d+)-([A-Za-z]+)-v(\d+)-(\d+)\.bin$/.exec(file);
      assert.ok(m !== null, `${client}/${file}: name is not <apiKey>-<ApiName>-v<version>-<n>.bin`);
      return {
        file,
        apiKey: Number(m[1]),
        apiName: m[2]!,
        apiVersion: Number(m[3]),
        n: Number(m[4]),
        bytes: fs.readFileSync(path.join(dir, file)),
      };
    })
    .sort((a, b) => a.apiKey - b.apiKey || a.apiVersion - b.apiVersion || a.n - b.n);
}

// ---- per-record decoding of a v2 batch (tests only; the broker never decodes records) ----

class VarReader {
  constructor(
    private readonly buf: Buffer,
    public pos: number,
  ) {}
  varlong(): bigint {
    let raw = 0n;
    let shift = 0n;
    for (;;) {
      assert.ok(this.pos < this.buf.length, 'varint runs past the batch');
      const b = this.buf[this.pos++]!;
      raw |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
      assert.ok(shift < 70n, 'varint too long');
    }
    return (raw >> 1n) ^ -(raw & 1n); // zigzag
  }
  varint(): number {
    return Number(this.varlong());
  }
  bytes(): Buffer | null {
    const n = this.varint();
    if (n < 0) return null;
    assert.ok(this.pos + n <= this.buf.length, 'field runs past the batch');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

/** The records of one uncompressed v2 batch (record layout: protocol guide "Record"). */
function decodeRecords(batch: Buffer): CapturedRecord[] {
  const r = new VarReader(batch, L.RECORDS);
  const records: CapturedRecord[] = [];
  for (let i = 0; i < recordsCountOf(batch); i++) {
    const length = r.varint();
    const end = r.pos + length;
    r.pos += 1; // attributes
    r.varlong(); // timestampDelta
    assert.equal(r.varint(), i, 'offsetDelta');
    const key = r.bytes();
    const value = r.bytes();
    const headers: Array<[string, string]> = [];
    const headerCount = r.varint();
    for (let h = 0; h < headerCount; h++) {
      const hk = r.bytes();
      const hv = r.bytes();
      assert.ok(hk !== null && hv !== null);
      headers.push([hk.toString('utf8'), hv.toString('utf8')]);
    }
    assert.equal(r.pos, end, `record ${i} length`);
    assert.ok(value !== null);
    records.push({ key: key === null ? null : key.toString('utf8'), value: value.toString('utf8'), headers });
  }
  assert.equal(r.pos, batch.length, 'records fill the batch');
  return records;
}

/** Every topic name a decoded request body refers to. */
function topicNames(apiKey: number, body: Record<string, unknown>): Array<string | null> {
  const names = (list: unknown, field: string): Array<string | null> =>
    ((list as Array<Record<string, unknown>> | null) ?? []).map((t) => t[field] as string | null);
  switch (apiKey) {
    case ApiKey.Produce:
      return names(body.topicData, 'name');
    case ApiKey.Fetch:
      return names(body.topics, 'topic');
    case ApiKey.ListOffsets:
    case ApiKey.Metadata:
    case ApiKey.CreateTopics:
      return names(body.topics, 'name');
    default:
      return [];
  }
}

for (const client of CAPTURE_CLIENTS) {
  describe(`frames captured from ${client}`, () => {
    const frames = capturedFrames(client);

    test('cover the requests the client sends for create-topic, produce and consume', () => {
      const seen = new Set(frames.map((f) => `${f.apiName}-v${f.apiVersion}`));
      for (const wanted of EXPECTED_REQUESTS[client])
        assert.ok(seen.has(wanted), `no ${wanted} frame captured from ${client}`);
      for (const f of frames)
        assert.ok(f.n <= 2 && f.bytes.length <= 16 * 1024, `${f.file}: keep at most two small frames per version`);
    });

    for (const frame of frames) {
      test(`${frame.file} decodes as ${frame.apiName} v${frame.apiVersion} and re-encodes to the same bytes`, () => {
        const { header, body } = decodeRequest(frame.bytes);
        assert.equal(header.apiKey, frame.apiKey);
        assert.equal(apiKeyName(header.apiKey), frame.apiName);
        assert.equal(header.apiVersion, frame.apiVersion);
        assert.ok(
          header.clientId !== null && CLIENT_IDS[client].test(header.clientId),
          `client id ${JSON.stringify(header.clientId)}`,
        );
        for (const name of topicNames(frame.apiKey, body)) assert.equal(name, captureTopic(client));

        const reencoded = encodeRequest(header.apiKey, header.apiVersion, header.correlationId, header.clientId, body);
        assert.equal(reencoded.readInt32BE(0), frame.bytes.length, 'size prefix');
        assert.ok(reencoded.subarray(4).equals(frame.bytes), 're-encoded bytes differ from the captured frame');
      });
    }

    test('Produce frames carry v2 batches with a valid CRC-32C holding the produced records, in order', () => {
      const produced = frames.filter((f) => f.apiKey === ApiKey.Produce);
      assert.ok(produced.length > 0);
      const expected = CAPTURE_RECORDS[client];
      let next = 0; // index in `expected` the next record must match at or after
      for (const frame of produced) {
        const body = decodeRequest(frame.bytes).body as {
          acks: number;
          transactionalId: string | null;
          topicData: Array<{ partitionData: Array<{ index: number; records: Buffer | null }> }>;
        };
        assert.equal(body.transactionalId, null);
        assert.equal(body.acks, client === 'kafka-python' ? 1 : -1, 'acks');
        for (const partition of body.topicData.flatMap((t) => t.partitionData)) {
          assert.equal(partition.index, 0);
          const records = partition.records;
          assert.ok(records !== null && records.length > 0, `${frame.file}: no records`);
          let position = 0;
          while (position < records.length) {
            const size = checkBatch(records, position, records.length - position);
            assert.equal(typeof size, 'number', `${frame.file}: batch at byte ${position}: ${String(size)}`);
            const batch = records.subarray(position, position + (size as number));
            assert.equal(batch.readInt8(L.MAGIC), 2, 'magic');
            assert.equal(baseOffsetNumber(batch), 0, 'clients send baseOffset 0');
            assert.equal(attributesOf(batch) & L.COMPRESSION_CODEC_MASK, 0, 'uncompressed');
            for (const rec of decodeRecords(batch)) {
              const at = expected.findIndex((e, i) => i >= next && e.key === rec.key && e.value === rec.value);
              assert.ok(at >= 0, `${frame.file}: unexpected or out-of-order record ${JSON.stringify(rec)}`);
              assert.deepEqual(rec.headers, expected[at]!.headers, `${frame.file}: headers of record ${at}`);
              next = at + 1;
            }
            position += size as number;
          }
        }
      }
      assert.equal(next, expected.length, 'the captured Produce frames hold every record the flow produced');
    });

    if (client === 'kcat' || client === 'confluent-kafka') {
      test('ApiVersions v3 names the client software (KIP-511)', () => {
        const frame = frames.find((f) => f.apiKey === ApiKey.ApiVersions && f.apiVersion === 3);
        assert.ok(frame !== undefined);
        const { header, body } = decodeRequest(frame.bytes);
        assert.equal(header.headerVersion, 2, 'flexible request header');
        assert.deepEqual(
          [body.clientSoftwareName, body.clientSoftwareVersion],
          client === 'kcat' ? ['librdkafka', '2.0.2'] : ['confluent-kafka-python', '1.7.0-rdkafka-2.0.2'],
        );
      });
    }
  });
}
