import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXIT_USAGE, parseCliArgs, type CliOutput } from '../../../src/cli/args';
import { DEFAULT_BROKERS, formatTable, parseKeyValue, resolveBrokers } from '../../../src/cli/client-io';

function parse(argv: string[]): { kind: string; err: string } {
  let err = '';
  const output: CliOutput = { writeOut: () => undefined, writeErr: (text) => (err += text) };
  const command = parseCliArgs(argv, output);
  return { kind: command.kind === 'exit' ? `exit ${command.exitCode}` : command.kind, err };
}

describe('client command parsing', () => {
  for (const argv of [
    ['topic', 'create', 'a', 'b', '-p', '3', '-r', '1', '-c', 'retention.ms=1000', '-c', 'cleanup.policy=compact'],
    ['topic', 'list', '--brokers', '127.0.0.1:9093'],
    ['topic', 'describe', 'a'],
    ['topic', 'delete', 'a', 'b'],
    ['topic', 'alter-config', 'a', '--set', 'retention.ms=5', '--delete', 'segment.ms'],
    ['produce', 't', '-k', ':', '-H', 'a=1', '--compression', 'zstd', '--acks', '-1', '-p', '0'],
    ['consume', 't', '--from-beginning', '-n', '10', '-e', '-f', '%k %v\\n'],
    ['consume', 't', '--timestamp', '2024-01-01T00:00:00Z'],
    [
      'perf',
      'produce',
      '--topic',
      't',
      '--records',
      '10',
      '--record-size',
      '100',
      '--acks',
      '1',
      '--compression',
      'lz4',
    ],
    ['perf', 'consume', '--topic', 't', '--records', '10'],
  ]) {
    it(`accepts ${argv.join(' ')}`, () => {
      const { kind, err } = parse(argv);
      assert.equal(kind, 'client', err);
    });
  }

  for (const [argv, pattern] of [
    [['consume', 't', '--from-beginning', '--offset', '3'], /at most one of/],
    [['produce', 't', '--compression', 'brotli'], /Allowed choices are none, gzip, snappy, lz4, zstd/],
    [['produce', 't', '--acks', '2'], /Allowed choices/],
    [['topic', 'create', 'a', '-c', 'novalue'], /Expected key=value/],
    [['topic', 'create', 'a', '-p', 'x'], /Expected an integer/],
    [['perf', 'produce', '--topic', 't', '--records', '10'], /required option '--record-size/],
    [['consume', 't', '--timestamp', 'yesterday'], /ISO 8601/],
  ] as Array<[string[], RegExp]>) {
    it(`rejects ${argv.join(' ')}`, () => {
      const { kind, err } = parse(argv);
      assert.equal(kind, `exit ${EXIT_USAGE}`);
      assert.match(err, pattern);
    });
  }
});

describe('client-io helpers', () => {
  it('resolves brokers from the flag, then SKIFF_BROKERS, then the default', () => {
    assert.equal(resolveBrokers('h:1', { SKIFF_BROKERS: 'h:2' }), 'h:1');
    assert.equal(resolveBrokers(undefined, { SKIFF_BROKERS: 'h:2' }), 'h:2');
    assert.equal(resolveBrokers(undefined, {}), DEFAULT_BROKERS);
  });

  it('splits key=value at the first =', () => {
    assert.deepEqual(parseKeyValue('a=b=c'), ['a', 'b=c']);
    assert.deepEqual(parseKeyValue('a='), ['a', '']);
    assert.throws(() => parseKeyValue('=b'), RangeError);
    assert.throws(() => parseKeyValue('ab'), RangeError);
  });

  it('aligns table columns', () => {
    assert.deepEqual(
      formatTable([
        ['NAME', 'N'],
        ['a-long-name', 3],
      ]),
      ['NAME         N', 'a-long-name  3'],
    );
  });
});
