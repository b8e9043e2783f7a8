import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseProperties, PropertiesSyntaxError } from '../../../src/config/properties';

/** The parsed map as a plain object, for compact deepEqual assertions. */
function parse(text: string): Record<string, string> {
  return Object.fromEntries(parseProperties(text));
}

describe('parseProperties (java.util.Properties.load grammar)', () => {
  it('accepts =, : and blanks as separators, with blanks around them', () => {
    assert.deepEqual(parse('a=1\nb:2\nc 3\nd\t4\ne = 5\nf : 6\ng   7\n'), {
      a: '1',
      b: '2',
      c: '3',
      d: '4',
      e: '5',
      f: '6',
      g: '7',
    });
  });

  it('takes only the first separator; the rest belongs to the value', () => {
    assert.deepEqual(parse('a=b=c\nd = = e\nf: g:h\nurl PLAINTEXT://x:1'), {
      a: 'b=c',
      d: '= e',
      f: 'g:h',
      url: 'PLAINTEXT://x:1',
    });
  });

  it('skips # and ! comments (also indented) and blank lines, but not inline #', () => {
    assert.deepEqual(parse('# comment\n  ! another\n\n   \t\na=1 # not a comment\n'), { a: '1 # not a comment' });
  });

  it('joins continuation lines and drops their leading blanks', () => {
    assert.deepEqual(parse('list = one, \\\n      two, \\\n\tthree\nnext=x'), { list: 'one, two, three', next: 'x' });
  });

  it('does not continue on an even number of trailing backslashes', () => {
    assert.deepEqual(parse('a=x\\\\\nb=y'), { a: 'x\\', b: 'y' });
  });

  it('does not continue a comment that ends in a backslash', () => {
    assert.deepEqual(parse('# comment \\\na=1'), { a: '1' });
  });

  it('resolves escapes in keys and values', () => {
    assert.deepEqual(
      parse('key\\ with\\ blanks=v\na\\=b=c\n\\#hash=1\nesc=t\\tn\\nr\\rf\\f\nuni=\\u0041\\u00e9\nother=\\q\\\\'),
      {
        'key with blanks': 'v',
        'a=b': 'c',
        '#hash': '1',
        esc: 't\tn\nr\rf\f',
        uni: 'Aé',
        other: 'q\\',
      },
    );
  });

  it('handles CRLF and CR line ends', () => {
    assert.deepEqual(parse('a=1\r\nb=2\rc=3\r\n'), { a: '1', b: '2', c: '3' });
  });

  it('gives a key alone an empty value and keeps trailing blanks of a value', () => {
    assert.deepEqual(parse('flag\nempty=\npadded=v  '), { flag: '', empty: '', padded: 'v  ' });
  });

  it('keeps the last value of a repeated key', () => {
    assert.deepEqual(parse('a=1\nb=2\na=3'), { a: '3', b: '2' });
  });

  it('drops a dangling backslash at the end of input', () => {
    assert.deepEqual(parse('a=1\\'), { a: '1' });
  });

  it('rejects a malformed \\u escape, naming the line', () => {
    assert.throws(
      () => parseProperties('a=1\n\n# c\nb=\\u12G4'),
      (err: unknown) =>
        err instanceof PropertiesSyntaxError && err.lineNumber === 4 && /line 4: malformed/.test(err.message),
    );
  });
});
