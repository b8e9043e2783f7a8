/**
 * validateProducedBatch: header faults come first and carry no record errors; a malformed record
 * is INVALID_RECORD with one record error naming its index (Produce v8+ RecordErrors, KIP-467)
 * and the same message; the decompression bound follows max.message.bytes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildBatch } from '../../../src/client/batch';
import { ErrorCode } from '../../../src/protocol/error-codes';
import { validateProducedBatch } from '../../../src/replica/produce-validation';
import { goodRecords, rawRecord, wrapBatch } from '../../helpers/malformed-batch';

const MAX = 1024 * 1024 + 12;

describe('validateProducedBatch', () => {
  it('accepts a well-formed batch', () => {
    assert.equal(
      validateProducedBatch(buildBatch([{ key: null, value: Buffer.from('v') }], { compression: 4 }), MAX),
      null,
    );
  });

  it('names the malformed record in recordErrors', () => {
    const batch = wrapBatch(
      Buffer.concat([...goodRecords(4), rawRecord({ offsetDelta: 4, headerCountOverride: -2 })]),
      5,
      1,
    );
    const rejection = validateProducedBatch(batch, MAX);
    assert.deepEqual(rejection, {
      errorCode: ErrorCode.INVALID_RECORD,
      errorMessage: 'Found invalid number of record headers -2',
      recordErrors: [{ batchIndex: 4, batchIndexErrorMessage: 'Found invalid number of record headers -2' }],
    });
  });

  it('refuses a batch of another magic with INVALID_RECORD, as Kafka does (ProduceRequest.validateRecords)', () => {
    for (const magic of [0, 1, 3]) {
      const batch = wrapBatch(Buffer.concat(goodRecords(1)), 1, 0);
      batch[16] = magic; // the magic byte (offset 16), outside the CRC's range
      assert.deepEqual(validateProducedBatch(batch, MAX), {
        errorCode: ErrorCode.INVALID_RECORD,
        errorMessage: `Produce requests with version 3+ are only allowed to contain record batches with magic version 2, got ${magic}`,
        recordErrors: [],
      });
    }
  });

  it('checks the header before the records, without record errors', () => {
    const batch = wrapBatch(Buffer.concat(goodRecords(2)), 2, 0);
    batch[30] = batch[30]! ^ 1; // baseTimestamp, under the CRC
    const rejection = validateProducedBatch(batch, MAX);
    assert.equal(rejection?.errorCode, ErrorCode.CORRUPT_MESSAGE);
    assert.deepEqual(rejection?.recordErrors, []);
  });

  it('bounds each record of a compressed batch by max.decompressed.message.bytes (Kafka default: no bound)', () => {
    const batch = wrapBatch(
      Buffer.concat([...goodRecords(2), rawRecord({ offsetDelta: 2, value: Buffer.alloc(5000) })]),
      3,
      1,
    );
    assert.equal(validateProducedBatch(batch, MAX), null);
    const rejection = validateProducedBatch(batch, MAX, 4096);
    const message = /^Invalid record size: 50\d\d exceeds the configured maximum record size of 4096\.$/;
    assert.equal(rejection?.errorCode, ErrorCode.INVALID_RECORD);
    assert.match(rejection!.errorMessage, message);
    assert.equal(rejection!.recordErrors.length, 1);
    assert.equal(rejection!.recordErrors[0]!.batchIndex, 2);
    assert.match(rejection!.recordErrors[0]!.batchIndexErrorMessage!, message);
    // The uncompressed batch of the same records is not bounded by it, as in Kafka.
    const plain = wrapBatch(
      Buffer.concat([...goodRecords(2), rawRecord({ offsetDelta: 2, value: Buffer.alloc(5000) })]),
      3,
      0,
    );
    assert.equal(validateProducedBatch(plain, MAX, 4096), null);
  });

  it('bounds decompression at 64 x max.message.bytes by default', () => {
    const batch = wrapBatch(rawRecord({ offsetDelta: 0, value: Buffer.alloc(2 << 20) }), 1, 4);
    assert.equal(validateProducedBatch(batch, MAX), null);
    const small = validateProducedBatch(batch, 16 * 1024);
    assert.equal(small?.errorCode, ErrorCode.INVALID_RECORD);
    assert.match(small!.errorMessage, /limit of 1048576 bytes/);
    assert.deepEqual(small?.recordErrors, []);
  });
});
