import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConsumedRecord } from '../../../src/client/consumer';
import { compileRecordFormat, DEFAULT_RECORD_FORMAT } from '../../../src/cli/record-format';

const RECORD: ConsumedRecord = {
  topic: 'orders',
  partition: 2,
  offset: 41,
  timestamp: 1_700_000_000_123,
  timestampType: 'CreateTime',
  key: Buffer.from('k1'),
  value: Buffer.from('hello'),
  headers: [
    { key: 'a', value: Buffer.from('1') },
    { key: 'b', value: null },
  ],
};

function render(format: string, record: ConsumedRecord = RECORD): string {
  return compileRecordFormat(format)(record).toString('utf8');
}

describe('compileRecordFormat', () => {
  it('defaults to the value and a newline', () => {
    assert.equal(render(DEFAULT_RECORD_FORMAT), 'hello\n');
  });

  it('renders every field', () => {
    assert.equal(render('%T/%p@%o %t %k=%v [%h]\\n'), 'orders/2@41 1700000000123 k1=hello [a=1,b=]\n');
  });

  it('handles escapes and a literal percent', () => {
    assert.equal(render('%%v\\t%v\\r\\\\'), '%v\thello\r\\');
  });

  it('prints nothing for a null key, null value or no headers', () => {
    assert.equal(render('<%k|%v|%h>', { ...RECORD, key: null, value: null, headers: [] }), '<||>');
  });

  it('keeps value bytes as they are (binary-safe)', () => {
    const value = Buffer.from([0x00, 0xff, 0x0a, 0xc3]);
    assert.ok(compileRecordFormat('%v')({ ...RECORD, value }).equals(value));
  });

  it('rejects unknown fields, unknown escapes and a trailing lone % or \\', () => {
    assert.throws(() => compileRecordFormat('%x'), /unknown field %x/);
    assert.throws(() => compileRecordFormat('\\q'), /unknown escape/);
    assert.throws(() => compileRecordFormat('abc%'), /lone %/);
    assert.throws(() => compileRecordFormat('abc\\'), /lone \\/);
  });
});
