import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXIT_USAGE, parseCliArgs, type CliOutput } from '../../../src/cli/args';
import { parseNameRegex } from '../../../src/cli/mirror-command';

function parse(argv: string[]): { kind: string; err: string } {
  let err = '';
  const output: CliOutput = { writeOut: () => undefined, writeErr: (text) => (err += text) };
  const command = parseCliArgs(argv, output);
  return { kind: command.kind === 'exit' ? `exit ${command.exitCode}` : command.kind, err };
}

describe('skiff mirror arguments', () => {
  it('accepts --to with the optional flags', () => {
    for (const argv of [
      ['mirror', '--to', '10.0.0.1:9092'],
      ['mirror', '--to', 'a:9092,b:9092', '--brokers', '127.0.0.1:9093', '--topics', 'orders|audit-.*'],
      ['mirror', '--to', 'a:9092', '--groups', 'billing-.*', '--follow', '--group-interval-ms', '1000'],
    ]) {
      const { kind, err } = parse(argv);
      assert.equal(kind, 'client', `${argv.join(' ')}: ${err}`);
    }
  });

  it('refuses a missing --to, a bad regular expression and a bad interval (usage errors)', () => {
    for (const [argv, message] of [
      [['mirror'], /required option '--to/],
      [['mirror', '--to', 'a:1', '--topics', '('], /regular expression/],
      [['mirror', '--to', 'a:1', '--group-interval-ms', '0'], /positive integer/],
    ] as const) {
      const { kind, err } = parse([...argv]);
      assert.equal(kind, `exit ${EXIT_USAGE}`, argv.join(' '));
      assert.match(err, message);
    }
  });

  it('matches --topics and --groups against the whole name', () => {
    const re = parseNameRegex('orders|audit-.*');
    assert.ok(re.test('orders'));
    assert.ok(re.test('audit-eu'));
    assert.ok(!re.test('orders-v2'), 'no partial match');
    assert.ok(!re.test('old-audit-eu'));
  });
});
