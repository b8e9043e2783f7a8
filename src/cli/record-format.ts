/**
 * The `skiff consume --format` mini-language, after kcat's `-f` and rpk's `--format`:
 *
 * | token | output |
 * |---|---|
 * | `%v` | value bytes as they are (nothing for a null value) |
 * | `%k` | key bytes (nothing for a null key) |
 * | `%p` | partition |
 * | `%o` | offset |
 * | `%t` | timestamp, ms since the epoch |
 * | `%T` | topic |
 * | `%h` | headers as `k=v` separated by `,` (nothing without headers) |
 * | `%%` | `%` |
 * | `\n` `\t` `\r` `\\` | newline, tab, carriage return, backslash |
 *
 * Any other character is copied; an unknown `%x` or `\x` is an error, so typos show at once.
 * Values and keys are written as raw bytes, never re-encoded.
 */
import type { ConsumedRecord } from '../client/consumer';

/** The default format: each value on its own line. */
export const DEFAULT_RECORD_FORMAT = '%v\\n';

type Part = string | ((r: ConsumedRecord) => Buffer | string);

/** A compiled format: renders one record as the bytes to print. */
export type RecordFormatter = (record: ConsumedRecord) => Buffer;

const FIELDS: Record<string, (r: ConsumedRecord) => Buffer | string> = {
  v: (r) => r.value ?? '',
  k: (r) => r.key ?? '',
  p: (r) => String(r.partition),
  o: (r) => String(r.offset),
  t: (r) => String(r.timestamp),
  T: (r) => r.topic,
  h: (r) =>
    Buffer.concat(
      r.headers.flatMap((h, i) => [Buffer.from(`${i > 0 ? ',' : ''}${h.key}=`), h.value ?? Buffer.alloc(0)]),
    ),
};

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\' };

/** Compiles `format`; throws RangeError naming the first unknown `%` or `\` sequence. */
export function compileRecordFormat(format: string): RecordFormatter {
  const parts: Part[] = [];
  let literal = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%' && c !== '\\') {
      literal += c;
      continue;
    }
    const next = format[i + 1];
    if (next === undefined) throw new RangeError(`format ends with a lone ${c}`);
    i++;
    if (c === '\\') {
      const escaped = ESCAPES[next];
      if (escaped === undefined) throw new RangeError(`unknown escape \\${next} in format (known: \\n \\t \\r \\\\)`);
      literal += escaped;
    } else if (next === '%') {
      literal += '%';
    } else {
      const field = FIELDS[next];
      if (field === undefined)
        throw new RangeError(`unknown field %${next} in format (known: %v %k %p %o %t %T %h %%)`);
      if (literal !== '') parts.push(literal);
      literal = '';
      parts.push(field);
    }
  }
  if (literal !== '') parts.push(literal);
  const compiled = parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p));
  return (record) => {
    const chunks: Buffer[] = [];
    for (const p of compiled) {
      if (Buffer.isBuffer(p)) chunks.push(p);
      else {
        const v = p(record);
        chunks.push(typeof v === 'string' ? Buffer.from(v, 'utf8') : v);
      }
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  };
}
