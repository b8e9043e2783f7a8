/**
 * Helpers for the compat suites that check what the broker answers (configs, timestamps, offsets,
 * retention, compression on disk) rather than bulk transfer: one-shot Python client operations
 * (python/confluent_ops.py, python/kafka_python_ops.py), kcat offset queries, compressed bulk
 * produce with the Python clients, and a reader for a partition's segment files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, PYTHON, PYTHON_SCRIPTS_DIR, runProcess, runPythonScript, type PythonClient } from './clients';
import { writeRecordFile, type TestRecord } from './record-file';

/** An error as the ops scripts report it: the client's own code and name. */
export interface OpError {
  code: number;
  name: string;
  str: string;
}

const OPS_SCRIPT: Record<PythonClient, string> = {
  'kafka-python': 'kafka_python_ops.py',
  'confluent-kafka': 'confluent_ops.py',
};

/**
 * Runs one operation of a Python ops script (see the script's docstring): `request` goes to its
 * stdin as JSON, its last stdout line comes back parsed. Fails with the script's output on a
 * non-zero exit or a timeout.
 */
export async function pythonOp<T = Record<string, unknown>>(
  client: PythonClient,
  request: Record<string, unknown> & { op: string; bootstrap: string },
  timeoutMs = 60_000,
): Promise<T> {
  const script = path.join(PYTHON_SCRIPTS_DIR, OPS_SCRIPT[client]);
  const r = await runProcess(PYTHON, [script], { timeoutMs, cwd: PYTHON_SCRIPTS_DIR, stdin: JSON.stringify(request) });
  const out = r.stdout.toString('utf8').trim();
  if (r.code !== 0 || r.timedOut) {
    const status = r.timedOut ? `timed out after ${r.elapsedMs} ms` : `exited with code ${r.code}`;
    throw new Error(
      `${OPS_SCRIPT[client]} ${request.op} ${status}\nrequest: ${JSON.stringify(request).slice(0, 1000)}\n--- stderr ---\n${r.stderr.slice(-6000)}\n--- stdout ---\n${out.slice(0, 2000)}`,
    );
  }
  const lines = out.split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}

/** Kafka compression codec names, by attributes id. */
export const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CodecName = (typeof CODECS)[number];

/**
 * Produces `records` in order with a Python client's bulk producer script and `compression`
 * (confluent-kafka `compression.type`, kafka-python `compression_type`). confluent-kafka lingers
 * 200 ms so no batch is a single record: librdkafka sends a batch uncompressed when compressing
 * would not shrink it.
 */
export async function pythonProduceCompressed(
  client: PythonClient,
  o: { bootstrap: string; topic: string; records: readonly TestRecord[]; compression: CodecName; timeoutMs: number },
): Promise<Array<[number, number]>> {
  const dir = makeTempDir(client);
  try {
    const input = path.join(dir, 'input.krec');
    writeRecordFile(input, o.records);
    const args = [
      '--bootstrap',
      o.bootstrap,
      '--topic',
      o.topic,
      '--input',
      input,
      '--acks',
      '-1',
      '--compression',
      o.compression,
      '--timeout',
      String(Math.max(1, o.timeoutMs / 1000 - 5)),
    ];
    if (client === 'confluent-kafka') args.push('--linger-ms', '200');
    const script = client === 'kafka-python' ? 'kafka_python_produce.py' : 'confluent_produce.py';
    const result = await runPythonScript<{ offsets: Array<[number, number]> }>(script, args, o.timeoutMs);
    return result.offsets;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `kcat -Q -t topic:partition:timestamp`: the offset of the first record whose timestamp is at or
 * after `timestamp` (ListOffsets by timestamp), as kcat prints it (`topic [p] offset N`).
 */
export async function kcatOffsetForTime(
  bootstrap: string,
  topic: string,
  partition: number,
  timestamp: number,
  timeoutMs = 30_000,
): Promise<number> {
  const args = ['-b', bootstrap, '-Q', '-t', `${topic}:${partition}:${timestamp}`];
  const r = await runProcess('kcat', args, { timeoutMs });
  const out = r.stdout.toString('utf8');
  const m = /\[(\d+)\]\s+offset\s+(-?\d+)/.exec(out);
  if (r.code !== 0 || r.timedOut || m === null) {
    throw new Error(
      `kcat ${args.join(' ')} ${r.timedOut ? 'timed out' : `exited with code ${r.code}`}\n--- stderr ---\n${r.stderr}\n--- stdout ---\n${out}`,
    );
  }
  return Number(m[2]);
}

/** One record batch as stored in a segment file. */
export interface StoredBatch {
  file: string;
  position: number;
  baseOffset: number;
  lastOffset: number;
  magic: number;
  attributes: number;
  /** attributes & 7. */
  codec: number;
  /** attributes bit 3: 0 CreateTime, 1 LogAppendTime. */
  timestampType: number;
  baseTimestamp: number;
  maxTimestamp: number;
  recordCount: number;
}

/**
 * Every record batch in `<dataDir>/<topic>-<partition>/*.log`, segments in offset order. Reads
 * the v2 batch header only (baseOffset @0, batchLength @8, magic @16, attributes @21,
 * lastOffsetDelta @23, baseTimestamp @27, maxTimestamp @35, recordsCount @57); a partial
 * trailing batch or zero fill ends a file.
 */
export function readStoredBatches(dataDir: string, topic: string, partition: number): StoredBatch[] {
  const dir = path.join(dataDir, `${topic}-${partition}`);
  const files = fs
    .readdirSync(dir)
    .filter((f) => /^\d{20}\.log$/.test(f))
    .sort();
  const batches: StoredBatch[] = [];
  for (const file of files) {
    const buf = fs.readFileSync(path.join(dir, file));
    let pos = 0;
    while (pos + 61 <= buf.length) {
      const batchLength = buf.readInt32BE(pos + 8);
      if (batchLength <= 0 || pos + 12 + batchLength > buf.length) break;
      const baseOffset = Number(buf.readBigInt64BE(pos));
      const attributes = buf.readInt16BE(pos + 21);
      batches.push({
        file,
        position: pos,
        baseOffset,
        lastOffset: baseOffset + buf.readInt32BE(pos + 23),
        magic: buf.readInt8(pos + 16),
        attributes,
        codec: attributes & 7,
        timestampType: (attributes >> 3) & 1,
        baseTimestamp: Number(buf.readBigInt64BE(pos + 27)),
        maxTimestamp: Number(buf.readBigInt64BE(pos + 35)),
        recordCount: buf.readInt32BE(pos + 57),
      });
      pos += 12 + batchLength;
    }
  }
  return batches;
}

/** Polls `check` every `intervalMs` until it returns a value other than undefined; fails after `timeoutMs` with `what`. */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined>,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `; last error: ${(last as Error).message}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
