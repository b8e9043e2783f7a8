/**
 * A reader for Java `.properties` text, the format of Kafka's `server.properties`, following the
 * grammar of `java.util.Properties.load(Reader)`:
 *
 * - A natural line ends at `\n`, `\r` or `\r\n`. A line whose first non-blank character is `#` or `!`
 *   is a comment (a trailing backslash does not continue a comment). Blank lines are skipped.
 * - A logical line continues onto the next natural line when it ends in an odd number of
 *   backslashes; the continuation's leading blanks (space, tab, form feed) are dropped.
 * - The key ends at the first unescaped `=`, `:` or blank. Blanks after it, then at most one `=` or
 *   `:`, then blanks again, are skipped; the rest of the line is the value (trailing blanks kept).
 * - Escapes in keys and values: `\t \n \r \f`, `\uXXXX`, and `\c` for any other `c` (so `\=`, `\:`,
 *   `\ `, `\#` and `\\` give the character itself).
 * - A key set twice keeps its last value.
 *
 * Java reads bytes as ISO-8859-1; we take a decoded string, so callers read files as UTF-8 (equal
 * for ASCII, which Kafka's own files are).
 */

import { strict as assert } from 'node:assert';

/** A malformed `.properties` text; `lineNumber` is 1-based and names the logical line's first line. */
export class PropertiesSyntaxError extends Error {
  constructor(
    message: string,
    readonly lineNumber: number,
  ) {
    super(`line ${lineNumber}: ${message}`);
    this.name = 'PropertiesSyntaxError';
  }
}

const BLANKS = new Set([' ', '\t', '\f']);

/**
 * Parses `.properties` text into a key → value map, in the order keys first appear.
 * Throws {@link PropertiesSyntaxError} on a malformed `\uXXXX` escape (the only error Java reports).
 */
export function parseProperties(text: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const { line, lineNumber } of logicalLines(text)) {
    const { key, value } = splitKeyValue(line, lineNumber);
    result.set(key, value);
  }
  return result;
}

interface LogicalLine {
  /** The joined line, escapes still in place (continuation backslashes and line ends removed). */
  line: string;
  lineNumber: number;
}

/** Yields the non-blank, non-comment logical lines of `text`. */
function* logicalLines(text: string): Generator<LogicalLine> {
  const natural = text.split(/\r\n|\r|\n/);
  let i = 0;
  while (i < natural.length) {
    const lineNumber = i + 1;
    let current = stripLeadingBlanks(naturalLineAt(natural, i));
    i += 1;
    if (current === '' || current[0] === '#' || current[0] === '!') continue;
    while (endsWithOddBackslashes(current)) {
      current = current.slice(0, -1);
      if (i >= natural.length) break; // Java drops a dangling backslash at end of input.
      current += stripLeadingBlanks(naturalLineAt(natural, i));
      i += 1;
    }
    yield { line: current, lineNumber };
  }
}

/** `natural[i]` for an `i` the caller has checked against `natural.length`. */
function naturalLineAt(natural: readonly string[], i: number): string {
  const line = natural[i];
  assert(line !== undefined, `natural line ${i} is past the last of ${natural.length}`);
  return line;
}

function stripLeadingBlanks(s: string): string {
  let start = 0;
  while (start < s.length && BLANKS.has(s.charAt(start))) start += 1;
  return s.slice(start);
}

function endsWithOddBackslashes(s: string): boolean {
  let count = 0;
  for (let j = s.length - 1; j >= 0 && s[j] === '\\'; j -= 1) count += 1;
  return count % 2 === 1;
}

/** Splits a logical line at its separator and unescapes both halves. */
function splitKeyValue(line: string, lineNumber: number): { key: string; value: string } {
  let keyEnd = 0;
  while (keyEnd < line.length) {
    const c = line.charAt(keyEnd);
    if (c === '\\') {
      keyEnd += 2; // an escaped character never ends the key
      continue;
    }
    if (c === '=' || c === ':' || BLANKS.has(c)) break;
    keyEnd += 1;
  }
  keyEnd = Math.min(keyEnd, line.length);
  let valueStart = keyEnd;
  while (valueStart < line.length && BLANKS.has(line.charAt(valueStart))) valueStart += 1;
  if (valueStart < line.length && (line[valueStart] === '=' || line[valueStart] === ':')) {
    valueStart += 1;
    while (valueStart < line.length && BLANKS.has(line.charAt(valueStart))) valueStart += 1;
  }
  return {
    key: unescape(line.slice(0, keyEnd), lineNumber),
    value: unescape(line.slice(valueStart), lineNumber),
  };
}

const SIMPLE_ESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', f: '\f' };

/** Resolves `.properties` escapes in `s`. */
function unescape(s: string, lineNumber: number): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let j = 0; j < s.length; j += 1) {
    const c = s.charAt(j);
    if (c !== '\\') {
      out += c;
      continue;
    }
    j += 1;
    if (j >= s.length) break; // a lone trailing backslash (only reachable at end of input)
    const e = s.charAt(j);
    if (e === 'u') {
      const hex = s.slice(j + 1, j + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
        throw new PropertiesSyntaxError(`malformed \\uxxxx escape "\\u${hex}"`, lineNumber);
      }
      out += String.fromCharCode(parseInt(hex, 16));
      j += 4;
    } else {
      out += SIMPLE_ESCAPES[e] ?? e;
    }
  }
  return out;
}
