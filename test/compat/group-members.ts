/**
 * Consumer-group members driven by the group suites (groups.test.ts, commits.test.ts, the group
 * cases of java-clients.test.ts), all speaking one event protocol so one set of checks judges
 * every client:
 *
 *   assigned {partitions}    the member's whole assignment after a rebalance
 *   revoked {partitions}     partitions taken away
 *   records {records}        [partition, offset, value] consumed in one poll
 *   committed {offsets}      {partition: offset} a synchronous commit that succeeded
 *   commit-failed {error}    one that did not (the next owner may then re-read those records)
 *   closed                   the member left the group (LeaveGroup) and stopped
 *
 * Members: kafkajs (in process), confluent-kafka and kafka-python (python/group_member.py, Debian
 * or PyPI interpreter), Java KafkaConsumer (SkiffJavaClient group-member, started by the Java
 * suite through {@link ProcessMember}), kcat -G (librdkafka's balanced consumer with auto commit:
 * assignments parsed from its "% Group ... rebalanced" lines; what it consumed is, by librdkafka's
 * auto offset store, what it commits when it closes).
 * Every wait is bounded; a member that fails shows its own output.
 */
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { PYTHON_SCRIPTS_DIR } from './clients';

/** One event of a member, with the wall-clock time (ms) it was seen. */
export type MemberEvent =
  | { ev: 'assigned'; partitions: number[]; t: number }
  | { ev: 'revoked'; partitions: number[]; t: number }
  | { ev: 'records'; records: Array<[number, number, string | null]>; t: number }
  | { ev: 'committed'; offsets: Record<string, number>; t: number }
  | { ev: 'commit-failed'; error: string; offsets: Record<string, number>; t: number }
  | { ev: 'closed'; t: number };

/** A member of a consumer group. */
export interface GroupMember {
  readonly name: string;
  readonly events: MemberEvent[];
  /** Asks the member to leave (LeaveGroup) and resolves once it has closed. */
  stop(timeoutMs?: number): Promise<void>;
  /** Kills the member without leaving (for cleanup after a failure). */
  kill(): void;
  /** The member's own output (stderr) for failure messages. */
  output(): string;
  /**
   * True when the member commits by itself on close what it consumed (kcat: auto commit of
   * librdkafka's stored offsets) instead of reporting `committed` events.
   */
  readonly commitsOnClose?: boolean;
  /** Why the member stopped on its own (its process exited, kafkajs's consumer crashed), or null. */
  failure(): string | null;
}

/** The partitions `m` owns after its events so far. */
export function ownedPartitions(m: GroupMember): number[] {
  const owned = new Set<number>();
  for (const e of m.events) {
    if (e.ev === 'assigned') {
      owned.clear();
      e.partitions.forEach((p) => owned.add(p));
    } else if (e.ev === 'revoked') {
      e.partitions.forEach((p) => owned.delete(p));
    } else if (e.ev === 'closed') {
      owned.clear();
    }
  }
  return [...owned].sort((a, b) => a - b);
}

/** Every [partition, offset, value] `m` consumed, in order. */
export function consumedBy(m: GroupMember): Array<[number, number, string | null]> {
  return m.events.flatMap((e) => (e.ev === 'records' ? e.records : []));
}

/** The offset of `m`'s last successful commit per partition. */
export function lastCommits(m: GroupMember): Map<number, number> {
  const last = new Map<number, number>();
  for (const e of m.events)
    if (e.ev === 'committed') for (const [p, o] of Object.entries(e.offsets)) last.set(Number(p), o);
  return last;
}

/** Polls `check` (every 100 ms) until it returns true; fails after `timeoutMs` naming `what` and the members' states. */
export async function waitUntil(
  what: string,
  timeoutMs: number,
  check: () => boolean,
  members: readonly GroupMember[] = [],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    const failed = members.find((m) => m.failure() !== null);
    if (failed !== undefined)
      throw new Error(
        `${failed.name} failed while waiting for ${what}: ${failed.failure()}\n--- ${failed.name} output ---\n${failed.output().slice(-4000)}`,
      );
    if (Date.now() > deadline) {
      const states = members.map(
        (m) =>
          `${m.name}: owns [${ownedPartitions(m)}], consumed ${consumedBy(m).length}, last events ${JSON.stringify(m.events.slice(-4)).slice(0, 600)}\n--- ${m.name} output ---\n${m.output().slice(-3000)}`,
      );
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${states.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ------------------------------------------------------------------------------------------------

/**
 * A member in a child process that prints the event protocol as JSON lines on stdout and leaves
 * on "stop" from stdin (python/group_member.py member, SkiffJavaClient group-member).
 */
export class ProcessMember implements GroupMember {
  readonly events: MemberEvent[] = [];
  private readonly proc: ChildProcess;
  private stderr = '';
  private partial = '';
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stopping = false;
  private exit: string | null = null;

  constructor(
    readonly name: string,
    cmd: string,
    args: readonly string[],
    opts: { cwd?: string; timeoutMs: number },
  ) {
    this.proc = spawn(cmd, args, { cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout!.setEncoding('utf8');
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stdout!.on('data', (c: string) => this.onStdout(c));
    this.proc.stderr!.on('data', (c: string) => {
      this.stderr += c;
      if (this.stderr.length > 1 << 20) this.stderr = this.stderr.slice(-(1 << 19));
    });
    this.proc.stdin!.on('error', () => undefined);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), opts.timeoutMs);
    this.exited = new Promise((resolve) =>
      this.proc.once('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal });
      }),
    );
    liveMembers.add(this);
    void this.exited.then(({ code, signal }) => {
      liveMembers.delete(this);
      this.exit = `exited with ${code ?? signal}`;
    });
  }

  failure(): string | null {
    return this.stopping ? null : this.exit;
  }

  private onStdout(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const e = JSON.parse(line) as MemberEvent & { cmd?: string };
      if (typeof e.ev === 'string') this.events.push(e);
    }
  }

  async stop(timeoutMs = 30_000): Promise<void> {
    this.stopping = true;
    this.proc.stdin!.end('stop\n');
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      this.exited,
      new Promise<'timeout'>((res) => (timer = setTimeout(() => res('timeout'), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (r === 'timeout') {
      this.kill();
      throw new Error(
        `${this.name} did not leave within ${timeoutMs} ms of "stop"\n--- output ---\n${this.stderr.slice(-4000)}`,
      );
    }
    assert.equal(
      r.code,
      0,
      `${this.name} exited with ${r.code ?? r.signal}\n--- output ---\n${this.stderr.slice(-6000)}`,
    );
    assert.ok(
      this.events.some((e) => e.ev === 'closed'),
      `${this.name} exited without closing its consumer`,
    );
  }

  kill(): void {
    this.proc.kill('SIGKILL');
  }

  /** SIGKILLs the member as a crash (no LeaveGroup, no close); resolves once it is gone. */
  async crash(): Promise<void> {
    this.stopping = true;
    this.proc.kill('SIGKILL');
    await this.exited;
  }

  output(): string {
    return this.stderr;
  }
}

/** Options every member takes. */
export interface MemberOptions {
  bootstrap: string;
  group: string;
  topic: string;
  /** Bound on the member's whole life (ms); it is killed after. */
  timeoutMs: number;
}

/** confluent-kafka or kafka-python under `python`, through python/group_member.py. */
export function pythonMember(
  name: string,
  client: 'confluent' | 'kafka-python',
  python: string,
  o: MemberOptions & { instanceId?: string; assignor?: string },
): ProcessMember {
  return new ProcessMember(
    name,
    python,
    [
      path.join(PYTHON_SCRIPTS_DIR, 'group_member.py'),
      'member',
      '--client',
      client,
      '--bootstrap',
      o.bootstrap,
      '--group',
      o.group,
      '--topic',
      o.topic,
      '--timeout',
      String(Math.round(o.timeoutMs / 1000)),
      ...(o.instanceId === undefined ? [] : ['--instance-id', o.instanceId]),
      ...(o.assignor === undefined ? [] : ['--assignor', o.assignor]),
    ],
    { cwd: PYTHON_SCRIPTS_DIR, timeoutMs: o.timeoutMs + 5_000 },
  );
}

// ------------------------------------------------------------------------------------------------

/**
 * kafkajs 2.2.4's Consumer in this process: eachBatch, then commitOffsets of the batch's end. With
 * `restartIsRecovery`, a CRASH after which kafkajs restarts the consumer itself (restartOnFailure:
 * it rejoins the group and resumes from the committed offsets, as after a connection to a crashed
 * broker ran out of retries) is counted in `restarts`, not a failure; one without a restart is.
 */
export class KafkajsMember implements GroupMember {
  readonly events: MemberEvent[] = [];
  /** CRASH events kafkajs recovered from by restarting the consumer (with `restartIsRecovery`). */
  restarts = 0;
  private readonly consumer: Consumer;
  private log = '';
  private crash: string | null = null;

  private constructor(
    readonly name: string,
    o: MemberOptions,
    restartIsRecovery: boolean,
  ) {
    const kafka = new Kafka({
      clientId: name,
      brokers: o.bootstrap.split(','),
      retry: { retries: 5 },
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        ({ namespace, log }) => {
          this.log += `${namespace}: ${log.message} ${JSON.stringify(log).slice(0, 400)}\n`;
        },
    });
    this.consumer = kafka.consumer({
      groupId: o.group,
      heartbeatInterval: 500,
      sessionTimeout: 10_000,
      rebalanceTimeout: 20_000,
      maxWaitTimeInMs: 100,
    });
    this.consumer.on(this.consumer.events.CRASH, (e) => {
      if (restartIsRecovery && e.payload.restart) this.restarts++;
      else this.crash = `kafkajs consumer crashed: ${String(e.payload.error)}`;
    });
    this.consumer.on(this.consumer.events.GROUP_JOIN, (e) => {
      this.events.push({
        ev: 'assigned',
        partitions: [...(e.payload.memberAssignment[o.topic] ?? [])].sort((a, b) => a - b),
        t: Date.now(),
      });
    });
  }

  /**
   * Connects, subscribes (fromBeginning: auto.offset.reset earliest) and starts consuming; `o.bootstrap`
   * may list several brokers, comma-separated.
   */
  static async start(name: string, o: MemberOptions, restartIsRecovery = false): Promise<KafkajsMember> {
    const m = new KafkajsMember(name, o, restartIsRecovery);
    liveMembers.add(m);
    await m.consumer.connect();
    await m.consumer.subscribe({ topics: [o.topic], fromBeginning: true });
    await m.consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        if (batch.messages.length === 0) return;
        m.events.push({
          ev: 'records',
          records: batch.messages.map((r) => [
            batch.partition,
            Number(r.offset),
            r.value === null ? null : r.value.toString('latin1'),
          ]),
          t: Date.now(),
        });
        const next = Number(batch.messages[batch.messages.length - 1]!.offset) + 1;
        const offsets = { [String(batch.partition)]: next };
        try {
          await m.consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: String(next) }]);
          m.events.push({ ev: 'committed', offsets, t: Date.now() });
        } catch (e) {
          m.events.push({ ev: 'commit-failed', error: String(e), offsets, t: Date.now() });
        }
        resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
        await heartbeat();
      },
    });
    return m;
  }

  async stop(timeoutMs = 30_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      this.consumer.disconnect().then(() => 'ok' as const),
      new Promise<'timeout'>((res) => (timer = setTimeout(() => res('timeout'), timeoutMs))),
    ]);
    clearTimeout(timer);
    liveMembers.delete(this);
    if (r === 'timeout')
      throw new Error(`${this.name}: kafkajs disconnect took over ${timeoutMs} ms\n${this.log.slice(-3000)}`);
    this.events.push({ ev: 'closed', t: Date.now() });
  }

  kill(): void {
    void this.consumer.disconnect().catch(() => undefined);
  }

  failure(): string | null {
    return this.crash;
  }

  output(): string {
    return this.log;
  }
}

// ------------------------------------------------------------------------------------------------

const KCAT_REBALANCE = /^% Group \S+ rebalanced \(memberid [^)]*\): (assigned|revoked): (.*)$/;
/** kcat's line for a cooperative (incremental) rebalance: "incremental assignment" or "incremental revoke" of some partitions. */
const KCAT_INCREMENTAL = /^% Group \S+ rebalanced: incremental (\w+) of \d+ partition\(s\) \(memberid [^)]*\): (.*)$/;

/**
 * `kcat -G group topic`: librdkafka's balanced consumer, auto commit every 200 ms and on close
 * (SIGTERM makes kcat close the consumer: final commit, LeaveGroup). Its output is `%p %o %s`
 * per record (values here never hold a space or newline).
 */
export class KcatMember implements GroupMember {
  readonly events: MemberEvent[] = [];
  readonly commitsOnClose = true;
  private readonly proc: ChildProcess;
  private stderr = '';
  private outPartial = '';
  private errPartial = '';
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stopping = false;
  private exit: string | null = null;

  constructor(
    readonly name: string,
    o: MemberOptions & { extra?: Record<string, string> },
  ) {
    const conf: Record<string, string> = {
      'enable.auto.commit': 'true',
      'auto.commit.interval.ms': '200',
      'auto.offset.reset': 'earliest',
      'heartbeat.interval.ms': '500',
      'session.timeout.ms': '10000',
      'fetch.wait.max.ms': '100',
      'topic.metadata.refresh.interval.ms': '2000',
      ...(o.extra ?? {}),
    };
    const args = [
      '-b',
      o.bootstrap,
      '-G',
      o.group,
      o.topic,
      '-u',
      '-f',
      '%p %o %s\\n',
      ...Object.entries(conf).flatMap(([k, v]) => ['-X', `${k}=${v}`]),
    ];
    this.proc = spawn('kcat', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stdout!.setEncoding('utf8');
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stdout!.on('data', (c: string) => {
      const lines = (this.outPartial + c).split('\n');
      this.outPartial = lines.pop()!;
      const records: Array<[number, number, string | null]> = [];
      for (const line of lines) {
        const m = /^(\d+) (\d+) (.*)$/.exec(line);
        if (m === null) throw new Error(`${name}: unexpected kcat output line ${JSON.stringify(line)}`);
        records.push([Number(m[1]), Number(m[2]), m[3]!]);
      }
      if (records.length > 0) this.events.push({ ev: 'records', records, t: Date.now() });
    });
    this.proc.stderr!.on('data', (c: string) => {
      this.stderr += c;
      const lines = (this.errPartial + c).split('\n');
      this.errPartial = lines.pop()!;
      for (const line of lines) {
        const m = KCAT_REBALANCE.exec(line) ?? KCAT_INCREMENTAL.exec(line);
        if (m === null) continue;
        const partitions = [...m[2]!.matchAll(/\[(\d+)\]/g)].map((x) => Number(x[1])).sort((a, b) => a - b);
        if (m[1] === 'assigned') {
          this.events.push({ ev: 'assigned', partitions, t: Date.now() });
        } else if (m[1] === 'assignment') {
          // Incremental: the member's whole assignment is what it owned plus these.
          this.events.push({
            ev: 'assigned',
            partitions: [...new Set([...ownedPartitions(this), ...partitions])].sort((a, b) => a - b),
            t: Date.now(),
          });
        } else {
          this.events.push({ ev: 'revoked', partitions, t: Date.now() });
        }
      }
    });
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), o.timeoutMs);
    this.exited = new Promise((resolve) =>
      this.proc.once('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal });
      }),
    );
    liveMembers.add(this);
    void this.exited.then(({ code, signal }) => {
      liveMembers.delete(this);
      this.exit = `kcat exited with ${code ?? signal}`;
    });
  }

  failure(): string | null {
    return this.stopping ? null : this.exit;
  }

  async stop(timeoutMs = 30_000): Promise<void> {
    this.stopping = true;
    this.proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      this.exited,
      new Promise<'timeout'>((res) => (timer = setTimeout(() => res('timeout'), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (r === 'timeout') {
      this.kill();
      throw new Error(`${this.name}: kcat did not exit within ${timeoutMs} ms of SIGTERM\n${this.stderr.slice(-4000)}`);
    }
    assert.ok(
      r.code === 0 || r.signal === null,
      `${this.name}: kcat ended with ${r.code ?? r.signal}\n${this.stderr.slice(-4000)}`,
    );
    this.events.push({ ev: 'closed', t: Date.now() });
  }

  kill(): void {
    this.proc.kill('SIGKILL');
  }

  output(): string {
    return this.stderr;
  }
}

const liveMembers = new Set<GroupMember>();
process.on('exit', () => {
  for (const m of liveMembers) {
    try {
      m.kill();
    } catch {
      // gone
    }
  }
});

/** Kills every member still running (an `after` hook after a failed test). */
export function killAllMembers(): void {
  for (const m of liveMembers) m.kill();
  liveMembers.clear();
}
