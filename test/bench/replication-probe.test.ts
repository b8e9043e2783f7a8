import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { envelopeTypeOf } from '../../bench/replication-probe';
import { encodeEnvelopeForTransfer } from '../../src/runtime/envelope';

test('the replication probe names the type of plain envelopes and of envelopes framed with attachments', () => {
  const plain = encodeEnvelopeForTransfer({ to: 'replica/1/t-0', from: 'replica/0/t-0', type: 'reply', body: 1 });
  const framed = encodeEnvelopeForTransfer({
    to: 'replica/1/t-0',
    from: 'replica/0/t-0',
    type: 'reply',
    body: { records: Buffer.alloc(4096, 1) },
  });
  assert.equal(new Uint8Array(framed)[0], 0xc1, 'the second one has an attachment');
  assert.equal(envelopeTypeOf(plain), 'reply');
  assert.equal(envelopeTypeOf(framed), 'reply');
  assert.equal(envelopeTypeOf(new Uint8Array([0x01, 0x02]).buffer), '?');
});
