/**
 * Seeded mutation fuzzing of decodeRequest and the record decoder: any input must decode or throw
 * ProtocolError, never another error (no RangeError, TypeError, or hang). Kept short (2 cores).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError, apiSchemas, decodeRequest, encodeRequest } from '../../../src/protocol/index';
import { buildRecordBatch } from '../../../src/protocol/record-batch/builder';
import { decodeRecordBatches } from '../../../src/protocol/record-batch/decode';
import { generateMessage, prng } from './schema-values';

function mutate(buf: Buffer, next: () => number): Buffer {
  const out = Buffer.from(buf);
  const op = Math.floor(next() * 4);
  if (op === 0) return out.subarray(0, Math.floor(next() * out.length)); // truncate
  const flips = 1 + Math.floor(next() * 4);
  for (let i = 0; i < flips; i++) {
    const at = Math.floor(next() * out.length);
    if (op === 1) out[at] = Math.floor(next() * 256);
    else if (op === 2) out[at] = 0xff;
    else out[at] = out[at]! ^ (1 << Math.floor(next() * 8));
  }
  return out;
}

function onlyProtocolErrors(fn: () => unknown, what: string): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ProtocolError)) assert.fail(`${what}: ${(e as Error)?.stack ?? String(e)}`);
  }
}

it('mutated request frames of every API and version decode or throw ProtocolError', () => {
  const next = prng(20240601);
  for (const api of apiSchemas.values()) {
    for (let version = api.minVersion; version <= api.maxVersion; version++) {
      const body = generateMessage(api.request, version, 'full', version);
      const frame = encodeRequest(api.apiKey, version, 1, 'fuzz', body).subarray(4);
      for (let i = 0; i < 150; i++) {
        const m = mutate(frame, next);
        onlyProtocolErrors(() => decodeRequest(m), `${api.name} v${version} mutation ${i}`);
      }
    }
  }
});

it('random garbage frames decode or throw ProtocolError', () => {
  const next = prng(7);
  for (let i = 0; i < 3000; i++) {
    const b = Buffer.alloc(Math.floor(next() * 64));
    for (let j = 0; j < b.length; j++) b[j] = Math.floor(next() * 256);
    if (b.length >= 4) b.writeInt16BE([0, 1, 2, 3, 18, 19, 20, 22][i % 8]!, 0);
    onlyProtocolErrors(() => decodeRequest(b), `garbage ${i}`);
  }
});

it('mutated record batches decode or throw ProtocolError', () => {
  const next = prng(99);
  const batch = buildRecordBatch([
    { key: Buffer.from('key'), value: Buffer.from('value'), headers: [{ key: 'h', value: Buffer.from('x') }] },
    { key: null, value: null },
  ]);
  for (let i = 0; i < 3000; i++) {
    const m = mutate(batch, next);
    onlyProtocolErrors(() => decodeRecordBatches(m), `batch mutation ${i}`);
  }
});
