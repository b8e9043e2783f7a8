/**
 * Captures the request frames real Kafka clients send, for the decode tests in
 * test/unit/protocol/captured-frames.test.ts (KafkaJS keeps fixtures the same way).
 *
 * A tiny TCP proxy on 127.0.0.1 forwards every connection to a broker and writes each client
 * request frame (without its 4-byte size prefix) to
 * `<out>/<client>/<apiKey>-<ApiName>-v<version>-<n>.bin`, keeping the first `maxPerVersion` of each
 * (api, version) and skipping frames above `maxFrameBytes`. Metadata responses are rewritten to
 * advertise the proxy's own address, so a client's later connections (to the "broker" and the
 * "controller") come back through the proxy too; every other byte is forwarded unchanged.
 *
 *   node dist/scripts/capture-frames.js all [--out test/fixtures/captured] [--clients kcat,kafkajs,...]
 *       start a Skiff broker, run each client's create-topic + produce + consume flow through the
 *       proxy (topic `captured-<client>`), replacing that client's directory
 *   node dist/scripts/capture-frames.js proxy --target 127.0.0.1:9092 --out DIR [--listen 19092]
 *       only the proxy, until SIGINT (to capture any client against any broker)
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { ApiKey, apiKeyName, decodeResponse, encodeResponse, peekRequestHeader } from '../src/protocol';

/** Options of {@link startCaptureProxy}. */
export interface CaptureProxyOptions {
  targetHost: string;
  targetPort: number;
  /** Directory the frames are written to (created when needed); change it with `setOutDir`. */
  outDir: string;
  /** Port to listen on (127.0.0.1); 0 picks a free one. */
  listenPort?: number;
  /** Frames kept per (api, version); default 2. */
  maxPerVersion?: number;
  /** Larger request frames are forwarded but not written; default 16 KiB. */
  maxFrameBytes?: number;
  log?: (line: string) => void;
}

/** A running capture proxy. */
export interface CaptureProxy {
  readonly port: number;
  /** Starts writing to another directory with fresh per-version counters (closes open connections). */
  setOutDir(dir: string): void;
  /** Files written so far, relative to their out dir. */
  written(): string[];
  close(): Promise<void>;
}

/**
 * Splits a byte stream into size-prefixed frames. `onFrame` gets each whole frame WITH its prefix.
 */
class FrameSplitter {
  private buffered: Buffer = Buffer.alloc(0);
  constructor(private readonly onFrame: (frame: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 4) {
      const size = this.buffered.readInt32BE(0);
      if (size < 0) throw new Error(`negative frame size ${size}`);
      if (this.buffered.length < 4 + size) return;
      const frame = this.buffered.subarray(0, 4 + size);
      this.buffered = this.buffered.subarray(4 + size);
      this.onFrame(frame);
    }
  }
}

/** Starts a capture proxy; resolves once it listens. */
export async function startCaptureProxy(opts: CaptureProxyOptions): Promise<CaptureProxy> {
  const maxPerVersion = opts.maxPerVersion ?? 2;
  const maxFrameBytes = opts.maxFrameBytes ?? 16 * 1024;
  const log = opts.log ?? ((line: string) => process.stderr.write(`capture-frames: ${line}\n`));
  let outDir = opts.outDir;
  let counts = new Map<string, number>();
  let written: string[] = [];
  const sockets = new Set<net.Socket>();
  let listenPort = 0;

  const record = (frame: Buffer): void => {
    const body = frame.subarray(4);
    const { apiKey, apiVersion } = peekRequestHeader(body);
    const id = `${apiKey}-${apiKeyName(apiKey)}-v${apiVersion}`;
    const n = (counts.get(id) ?? 0) + 1;
    if (n > maxPerVersion || body.length > maxFrameBytes) return;
    counts.set(id, n);
    fs.mkdirSync(outDir, { recursive: true });
    const name = `${id}-${n}.bin`;
    fs.writeFileSync(path.join(outDir, name), body);
    written.push(name);
  };

  const server = net.createServer((client) => {
    const upstream = net.connect(opts.targetPort, opts.targetHost);
    sockets.add(client);
    sockets.add(upstream);
    /** correlationId -> (apiKey, apiVersion) of requests awaiting a response on this connection. */
    const pending = new Map<number, { apiKey: number; apiVersion: number }>();
    const fail = (why: string): void => {
      log(why);
      client.destroy();
      upstream.destroy();
    };
    const fromClient = new FrameSplitter((frame) => {
      try {
        const peek = peekRequestHeader(frame.subarray(4));
        pending.set(peek.correlationId, { apiKey: peek.apiKey, apiVersion: peek.apiVersion });
        record(frame);
      } catch (error) {
        log(`unparsable request header, forwarded as is: ${(error as Error).message}`);
      }
      upstream.write(frame);
    });
    const fromBroker = new FrameSplitter((frame) => {
      const correlationId = frame.readInt32BE(4);
      const request = pending.get(correlationId);
      pending.delete(correlationId);
      client.write(
        request?.apiKey === ApiKey.Metadata ? advertiseProxy(frame, request.apiVersion, listenPort, log) : frame,
      );
    });
    client.on('data', (chunk: Buffer) => {
      try {
        fromClient.push(chunk);
      } catch (error) {
        fail(`client stream: ${(error as Error).message}`);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      try {
        fromBroker.push(chunk);
      } catch (error) {
        fail(`broker stream: ${(error as Error).message}`);
      }
    });
    const closeBoth = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.listenPort ?? 0, '127.0.0.1', () => resolve());
  });
  listenPort = (server.address() as net.AddressInfo).port;

  return {
    port: listenPort,
    setOutDir(dir: string): void {
      for (const s of sockets) s.destroy();
      sockets.clear();
      outDir = dir;
      counts = new Map();
      written = [];
    },
    written: () => written.slice(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Rewrites a Metadata response (frame with size prefix) so every broker is 127.0.0.1:`port`.
 * Forwards the frame unchanged if the codec cannot decode it.
 */
function advertiseProxy(frame: Buffer, apiVersion: number, port: number, log: (line: string) => void): Buffer {
  try {
    const { correlationId, body } = decodeResponse(ApiKey.Metadata, apiVersion, frame.subarray(4));
    const brokers = body.brokers as Array<Record<string, unknown>>;
    body.brokers = brokers.map((b) => ({ ...b, host: '127.0.0.1', port }));
    return encodeResponse(ApiKey.Metadata, apiVersion, correlationId, body);
  } catch (error) {
    log(`Metadata v${apiVersion} response not rewritten: ${(error as Error).message}`);
    return frame;
  }
}

// ---- `all`: run every client's flows through the proxy against a fresh Skiff ----

/** The clients `all` knows, in run order. */
export const CAPTURE_CLIENTS = ['kcat', 'kafka-python', 'confluent-kafka', 'kafkajs'] as const;
export type CaptureClient = (typeof CAPTURE_CLIENTS)[number];

/** Topic each client's capture flow uses. */
export function captureTopic(client: CaptureClient): string {
  return `captured-${client}`;
}

/** A record of a capture flow, as the decode test expects to find it in the Produce frames. */
export interface CapturedRecord {
  key: string | null;
  value: string;
  headers: Array<[string, string]>;
}

/**
 * What each client's flow produces, in order. kcat reads `key:value` lines and puts its -H headers
 * on every record; the others send one record of each kind (keyed, null key with a header, empty
 * value).
 */
export const CAPTURE_RECORDS: Record<CaptureClient, CapturedRecord[]> = {
  kcat: [
    { key: 'k1', value: 'hello', headers: [['h', 'v']] },
    { key: 'k2', value: 'world', headers: [['h', 'v']] },
  ],
  'kafka-python': defaultCaptureRecords(),
  'confluent-kafka': defaultCaptureRecords(),
  kafkajs: defaultCaptureRecords(),
};

function defaultCaptureRecords(): CapturedRecord[] {
  return [
    { key: 'k1', value: 'hello', headers: [] },
    { key: null, value: 'world', headers: [['h', 'v']] },
    { key: 'k3', value: '', headers: [] },
  ];
}

const FLOW_TIMEOUT_MS = 30_000;

async function runClientFlow(client: CaptureClient, bootstrap: string, workDir: string): Promise<void> {
  // Imported lazily: only `all` needs the test helpers and kafkajs.
  const { kcatConsume, kcatProduce, runPythonScript } = await import('../test/compat/clients');
  const { record, writeRecordFile } = await import('../test/compat/record-file');
  const topic = captureTopic(client);
  const wanted = CAPTURE_RECORDS[client];
  const input = path.join(workDir, `${client}.krec`);
  const output = path.join(workDir, `${client}.out.krec`);
  writeRecordFile(
    input,
    wanted.map((r) =>
      record(
        r.key,
        r.value,
        r.headers.map(([k, v]) => [k, Buffer.from(v)] as const),
      ),
    ),
  );
  switch (client) {
    case 'kcat': {
      // kcat has no admin API: the producer's Metadata request auto-creates the topic.
      const lines = Buffer.from(wanted.map((r) => `${r.key}:${r.value}\n`).join(''));
      const headers = wanted[0]!.headers.map(([k, v]) => [k, Buffer.from(v)] as const);
      await kcatProduce({ bootstrap, topic, input: lines, keyDelimiter: ':', headers, timeoutMs: FLOW_TIMEOUT_MS });
      await kcatConsume({ bootstrap, topic, partition: 0, timeoutMs: FLOW_TIMEOUT_MS });
      return;
    }
    case 'kafka-python':
      // acks=1 is kafka-python's default, kept so the frame shows what the client sends unconfigured.
      await runPythonScript(
        'kafka_python_produce.py',
        ['--bootstrap', bootstrap, '--topic', topic, '--input', input, '--create-partitions', '1', '--acks', '1'],
        FLOW_TIMEOUT_MS,
      );
      await runPythonScript(
        'kafka_python_consume.py',
        ['--bootstrap', bootstrap, '--topic', topic, '--output', output, '--timeout', '20'],
        FLOW_TIMEOUT_MS,
      );
      return;
    case 'confluent-kafka':
      await runPythonScript(
        'confluent_produce.py',
        ['--bootstrap', bootstrap, '--topic', topic, '--input', input, '--create-partitions', '1'],
        FLOW_TIMEOUT_MS,
      );
      await runPythonScript(
        'confluent_consume.py',
        ['--bootstrap', bootstrap, '--topic', topic, '--output', output, '--timeout', '20'],
        FLOW_TIMEOUT_MS,
      );
      return;
    case 'kafkajs': {
      const { Kafka, logLevel, Partitioners } = await import('kafkajs');
      const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.ERROR, retry: { retries: 3 } });
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
      await admin.fetchTopicMetadata({ topics: [topic] });
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      const messages = wanted.map((r) => ({ key: r.key, value: r.value, headers: Object.fromEntries(r.headers) }));
      await producer.send({ topic, acks: -1, messages });
      await producer.disconnect();
      await admin.fetchTopicOffsets(topic);
      await admin.disconnect();
      return;
    }
  }
}

async function captureAll(outRoot: string, clients: readonly CaptureClient[]): Promise<void> {
  const { startBrokerProcess } = await import('../test/helpers/broker-process');
  const { makeTempDir } = await import('../test/compat/clients');
  const broker = await startBrokerProcess();
  const workDir = makeTempDir('capture');
  const proxy = await startCaptureProxy({ targetHost: '127.0.0.1', targetPort: broker.port, outDir: workDir });
  const bootstrap = `127.0.0.1:${proxy.port}`;
  try {
    for (const client of clients) {
      const dir = path.join(outRoot, client);
      fs.rmSync(dir, { recursive: true, force: true });
      proxy.setOutDir(dir);
      await runClientFlow(client, bootstrap, workDir);
      console.log(`${client}: ${proxy.written().sort().join(' ')}`);
    }
  } finally {
    await proxy.close();
    await broker.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(argv: string[]): Promise<void> {
  const [mode, ...rest] = argv;
  if (mode === 'all') {
    const out = option(rest, '--out') ?? path.join(__dirname, '..', '..', 'test', 'fixtures', 'captured');
    const wanted = (option(rest, '--clients') ?? CAPTURE_CLIENTS.join(',')).split(',');
    const unknown = wanted.filter((c) => !(CAPTURE_CLIENTS as readonly string[]).includes(c));
    if (unknown.length > 0)
      throw new Error(`unknown client(s) ${unknown.join(', ')}; known: ${CAPTURE_CLIENTS.join(', ')}`);
    await captureAll(path.resolve(out), wanted as CaptureClient[]);
    return;
  }
  if (mode === 'proxy') {
    const target = option(rest, '--target');
    const out = option(rest, '--out');
    if (target === undefined || out === undefined) throw new Error('proxy needs --target HOST:PORT and --out DIR');
    const colon = target.lastIndexOf(':');
    const proxy = await startCaptureProxy({
      targetHost: target.slice(0, colon),
      targetPort: Number(target.slice(colon + 1)),
      outDir: path.resolve(out),
      listenPort: Number(option(rest, '--listen') ?? 0),
    });
    console.log(`capture-frames: listening on 127.0.0.1:${proxy.port}, forwarding to ${target}`);
    process.once('SIGINT', () => void proxy.close().then(() => process.exit(0)));
    return;
  }
  throw new Error(
    'usage: capture-frames.js all [--out DIR] [--clients a,b] | proxy --target HOST:PORT --out DIR [--listen PORT]',
  );
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`capture-frames: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
