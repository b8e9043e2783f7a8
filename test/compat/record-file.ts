/**
 * Records as the compat tests compare them, and the record-file format they exchange with the
 * Python client scripts (test/compat/python/krec.py documents the same layout):
 *
 * ```
 * int32 partition   (-1 in an input file: the client chooses)
 * int64 offset      (-1 in an input file)
 * int32 keyLen      (-1 = null)   key bytes
 * int32 valueLen    (-1 = null)   value bytes
 * int32 headerCount, then per header: int32 keyLen, key (UTF-8), int32 valueLen (-1 = null), value
 * ```
 *
 * Everything is length-prefixed bytes, so a test compares exact bytes and tells null from empty.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';

/** One header: key (a string in every client API) and value bytes or null. */
export type RecordHeader = readonly [key: string, value: Buffer | null];

/** A record as produced or consumed. `partition`/`offset` are -1 when not (yet) known. */
export interface TestRecord {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** A record with no partition, offset or headers. */
export function record(
  key: Buffer | string | null,
  value: Buffer | string | null,
  headers: RecordHeader[] = [],
): TestRecord {
  const bytes = (v: Buffer | string | null): Buffer | null =>
    v === null ? null : Buffer.isBuffer(v) ? v : Buffer.from(v, 'utf8');
  return { partition: -1, offset: -1, key: bytes(key), value: bytes(value), headers };
}

/** Writes `records` to `path` in the record-file format. */
export function writeRecordFile(path: string, records: readonly TestRecord[]): void {
  const chunks: Buffer[] = [];
  const int32 = (n: number): void => {
    const b = Buffer.allocUnsafe(4);
    b.writeInt32BE(n);
    chunks.push(b);
  };
  const bytes = (b: Buffer | null): void => {
    if (b === null) {
      int32(-1);
      return;
    }
    int32(b.length);
    chunks.push(b);
  };
  for (const r of records) {
    const head = Buffer.allocUnsafe(12);
    head.writeInt32BE(r.partition, 0);
    head.writeBigInt64BE(BigInt(r.offset), 4);
    chunks.push(head);
    bytes(r.key);
    bytes(r.value);
    int32(r.headers.length);
    for (const [hkey, hvalue] of r.headers) {
      bytes(Buffer.from(hkey, 'utf8'));
      bytes(hvalue);
    }
  }
  fs.writeFileSync(path, Buffer.concat(chunks));
}

/** Reads a record file written by a Python client script (or {@link writeRecordFile}). */
export function readRecordFile(path: string): TestRecord[] {
  const buf = fs.readFileSync(path);
  const records: TestRecord[] = [];
  let pos = 0;
  const need = (n: number): void => {
    if (pos + n > buf.length) throw new Error(`record file ${path} truncated at byte ${pos}`);
  };
  const int32 = (): number => {
    need(4);
    const v = buf.readInt32BE(pos);
    pos += 4;
    return v;
  };
  const bytes = (): Buffer | null => {
    const n = int32();
    if (n < 0) return null;
    need(n);
    const b = buf.subarray(pos, pos + n);
    pos += n;
    return b;
  };
  while (pos < buf.length) {
    need(12);
    const partition = buf.readInt32BE(pos);
    const offset = Number(buf.readBigInt64BE(pos + 4));
    pos += 12;
    const key = bytes();
    const value = bytes();
    const headerCount = int32();
    const headers: RecordHeader[] = [];
    for (let i = 0; i < headerCount; i++) {
      const hkey = bytes();
      if (hkey === null) throw new Error(`record file ${path}: null header key`);
      headers.push([hkey.toString('utf8'), bytes()]);
    }
    records.push({ partition, offset, key, value, headers });
  }
  return records;
}

/** The text fixture's lines as records: value = the line's UTF-8 bytes, key = `keyOf(i)` (or null). */
export function linesAsRecords(
  lines: readonly string[],
  keyOf: ((index: number) => string) | null = null,
): TestRecord[] {
  return lines.map((line, i) => record(keyOf === null ? null : keyOf(i), line));
}

function show(b: Buffer | null): string {
  if (b === null) return 'null';
  const text = b.subarray(0, 80).toString('utf8');
  return `${b.length} bytes ${JSON.stringify(text)}${b.length > 80 ? '...' : ''}`;
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  if (a === null || b === null) return a === b;
  return a.equals(b);
}

function sameHeaders(a: readonly RecordHeader[], b: readonly RecordHeader[]): boolean {
  return a.length === b.length && a.every(([k, v], i) => k === b[i]![0] && sameBytes(v, b[i]![1]));
}

/** Describes the first difference between two records' keys, values and headers, or null. */
export function recordDifference(actual: TestRecord, expected: TestRecord): string | null {
  if (!sameBytes(actual.key, expected.key)) return `key: got ${show(actual.key)}, want ${show(expected.key)}`;
  if (!sameBytes(actual.value, expected.value)) return `value: got ${show(actual.value)}, want ${show(expected.value)}`;
  if (!sameHeaders(actual.headers, expected.headers)) {
    const fmt = (hs: readonly RecordHeader[]): string =>
      `[${hs.map(([k, v]) => `${JSON.stringify(k)}=${show(v)}`).join(', ')}]`;
    return `headers: got ${fmt(actual.headers)}, want ${fmt(expected.headers)}`;
  }
  return null;
}

/**
 * Asserts that `actual` holds exactly `expected`'s keys, values and headers, byte for byte, in the
 * same order and count. On failure names the first differing index (a deepEqual of 264k records
 * would print an unreadable diff).
 */
export function assertSameRecords(actual: readonly TestRecord[], expected: readonly TestRecord[], what: string): void {
  const n = Math.min(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    const diff = recordDifference(actual[i]!, expected[i]!);
    if (diff !== null) assert.fail(`${what}: record ${i} (offset ${actual[i]!.offset}) differs: ${diff}`);
  }
  assert.equal(
    actual.length,
    expected.length,
    `${what}: consumed ${actual.length} records, produced ${expected.length}`,
  );
}

/** Asserts offsets `first, first+1, ...` (dense, in order) within one partition. */
export function assertDenseOffsets(records: readonly TestRecord[], what: string, first = 0): void {
  for (let i = 0; i < records.length; i++) {
    if (records[i]!.offset !== first + i)
      assert.fail(`${what}: record ${i} has offset ${records[i]!.offset}, want ${first + i}`);
  }
}
