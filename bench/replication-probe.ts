/**
 * Preloaded into every thread by `npm run bench:replication` (`node -r dist/bench/replication-probe.js`;
 * worker threads inherit the `-r`): in the runtime's workers (workerData has a string `name`, e.g.
 * `broker/1#0`) it counts the envelopes the worker posts, without changing them, and answers
 * bench/replication.ts's questions on a BroadcastChannel. src/ is untouched: the counting wraps
 * `MessagePort.prototype.postMessage` in this worker only.
 *
 * What is counted, per envelope posted (a message carrying an envelope `buf`): whether it went over a
 * direct worker-to-worker channel (`{ b, buf }`) or to the hub (`{ k: 'env', ... }`), its envelope
 * type (read from the msgpack header without decoding the body: `[to, from, type, ...]`), whether it
 * is a reply (replies have type `reply`) and its size in bytes. Plus the worker's event-loop busy
 * time (performance.eventLoopUtilization) and CPU time ({@link threadCpuMs}), since process.cpuUsage is
 * process-wide.
 */
import { BroadcastChannel, isMainThread, MessagePort, workerData } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** The channel bench/replication.ts asks on. */
export const PROBE_CHANNEL = 'skiff-bench-replication-probe';

/** One worker's counters, cumulative since it started. */
export interface ProbeReport {
  worker: string;
  /** Envelopes posted, by `direct|hub` and type: count and bytes. */
  envelopes: Record<string, { count: number; bytes: number }>;
  /** Event-loop time of this worker (ms): active and idle, cumulative. */
  activeMs: number;
  idleMs: number;
  /** CPU time of this thread (user + system, ms, 10 ms resolution), cumulative; NaN off Linux. */
  cpuMs: number;
}

/**
 * The calling thread's CPU time (user + system) in ms, from /proc/thread-self/stat (Linux; clock
 * ticks of 10 ms, USER_HZ = 100); NaN where that file does not exist. Node 20 has no
 * process.threadCpuUsage, and process.cpuUsage counts every thread of the process.
 */
export function threadCpuMs(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'latin1');
    // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** Reads the msgpack string at `pos` (fixstr, str8, str16); returns it and the position after it. */
function readString(bytes: Uint8Array, pos: number): [string, number] | null {
  const tag = bytes[pos];
  if (tag === undefined) return null;
  let length: number;
  let start: number;
  if ((tag & 0xe0) === 0xa0) [length, start] = [tag & 0x1f, pos + 1];
  else if (tag === 0xd9) [length, start] = [bytes[pos + 1] ?? 0, pos + 2];
  else if (tag === 0xda) [length, start] = [((bytes[pos + 1] ?? 0) << 8) | (bytes[pos + 2] ?? 0), pos + 3];
  else return null;
  return [Buffer.from(bytes.buffer, bytes.byteOffset + start, length).toString('latin1'), start + length];
}

/**
 * The envelope type of envelope bytes (msgpack `[to, from, type, body, corr, isReply]`, plain or framed
 * with attachments: `0xc1`, then the msgpack from byte 9; src/runtime/envelope.ts), or `?`.
 */
export function envelopeTypeOf(buf: ArrayBuffer): string {
  const bytes = new Uint8Array(buf);
  const start = bytes[0] === 0xc1 ? 9 : 0;
  if (bytes[start] !== 0x96) return '?';
  const to = readString(bytes, start + 1);
  const from = to === null ? null : readString(bytes, to[1]);
  const type = from === null ? null : readString(bytes, from[1]);
  return type === null ? '?' : type[0];
}

function install(worker: string): void {
  const envelopes: ProbeReport['envelopes'] = {};
  const original = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function (this: MessagePort, message: unknown, transfer?: unknown) {
    const m = message as { b?: unknown; k?: unknown; buf?: unknown } | null;
    if (m !== null && typeof m === 'object' && m.buf instanceof ArrayBuffer) {
      const route = m.k === 'env' ? 'hub' : m.b !== undefined ? 'direct' : null;
      if (route !== null) {
        const key = `${route} ${envelopeTypeOf(m.buf)}`;
        const entry = (envelopes[key] ??= { count: 0, bytes: 0 });
        entry.count++;
        entry.bytes += m.buf.byteLength;
      }
    }
    return original.call(this, message, transfer as never);
  } as typeof original;
  const channel = new BroadcastChannel(PROBE_CHANNEL);
  channel.unref();
  channel.onmessage = (event: unknown) => {
    if ((event as { data?: unknown }).data !== 'report') return;
    const elu = performance.eventLoopUtilization();
    const report: ProbeReport = { worker, envelopes, activeMs: elu.active, idleMs: elu.idle, cpuMs: threadCpuMs() };
    channel.postMessage(report);
  };
}

const name = (workerData as { name?: unknown } | null)?.name;
if (!isMainThread && typeof name === 'string') install(name);
