/**
 * The faults of the whole-cluster simulation (issue 12 item 1) as rules a schedule turns on and off,
 * each decided by the simulation's scheduler or its seeded fault PRNG, so a seed explores them and a
 * run replays from its seed: network partitions (two brokers, or a broker and the controller; one way
 * or both), a slowed follower, message chaos (drop, duplicate, delay, reorder), fsync completion as a
 * scheduled event that can come late or fail, a full disk, and wall-clock jumps per broker. The
 * network rules compose into the SimRuntime's one fault hook ({@link SimFaults.decide}); the disk
 * rules live on the MemoryFileSystem (a fault hook, a sync scheduler); clock jumps on the runtime.
 *
 * Every injection is counted by {@link FaultKind} ({@link SimFaults.counts}):
 * - `network-partition`, `slow-follower`: one per rule installed (not per message cut or slowed);
 * - `message-drop`, `message-duplicate`, `message-delay`, `message-reorder`: one per message the chaos
 *   rules decided so;
 * - `fsync-delay`: one per asynchronous fsync the schedule completed after a delay > 0 ms;
 *   `fsync-failure`: one per fsync it failed (EIO);
 * - `disk-full`: one per broker disk turned full; `clock-jump`: one per jump;
 * - the crash kinds (`broker-crash`, `broker-stop`, `replica-crash`, `controller-crash`,
 *   `power-loss`): counted by ClusterSim's operations through {@link SimFaults.record}.
 *
 * Which broker an actor belongs to: its placement in the runtime (`brokerId` of the broker pool; -1
 * for the controller's pool), and for an id the runtime does not know (an actor that never lived
 * there) its id: `replica/<b>/...`, `replica-manager/<b>`, `log-dir/<b>/<i>`,
 * `group-coordinator/<b>/<p>`, the broker's network layer `net/<b>` (an endpoint: its BrokerNode
 * subscribes to the controller's pushes and calls the replicas), and `controller` (-1). Other
 * endpoints (the test's `test`) belong to nobody: no rule ever cuts, slows or mangles what they send
 * or receive. (Clients reach a BrokerNode by function calls, never envelopes: nothing cuts them.)
 */
import { strict as assert } from 'node:assert';
import type { Envelope, ActorId } from '../runtime/actor';
import type { Random } from '../io/random';
import type { FaultDecision, FaultHook, SimRuntime } from '../runtime/sim-runtime';
import type { FsOperation, MemoryFileSystem } from '../io/memory-file-system';
import type { FaultKind } from './report';

/** The controller's side of a partition rule (its pool is not a broker). */
export const CONTROLLER_SIDE = -1;

/** Which messages a chaos rule may touch. */
export type ChaosFilter =
  /** Between two actors of the cluster (brokers' or the controller's): never an endpoint (default). */
  | 'cluster'
  /** Between two replica actors (fetches and their answers, follower-flushed). */
  | 'replica-to-replica'
  /** Any predicate over the envelope and the brokers of its ends (undefined: an endpoint). */
  | ((envelope: Envelope, fromBroker: number | undefined, toBroker: number | undefined) => boolean);

/**
 * Message chaos: each message the filter passes is dropped, duplicated, delayed (1..maxDelayMs of
 * virtual time) or reordered (held behind the next one on its channel) with these probabilities (their
 * sum at most 1), one draw of the fault PRNG per message, else delivered.
 */
export interface ChaosOptions {
  drop?: number;
  duplicate?: number;
  delay?: number;
  reorder?: number;
  /** Upper bound of a delay in virtual ms (default 500). */
  maxDelayMs?: number;
  filter?: ChaosFilter;
}

/** Options of {@link SimFaults.fsyncSchedule}. */
export interface FsyncScheduleOptions {
  /** Each asynchronous fsync completes 0..maxDelayMs virtual ms after the call (uniform, seeded). */
  maxDelayMs: number;
  /** Probability that one fails with EIO, making nothing durable (default 0). */
  failProbability?: number;
  /** Only fsyncs of files under these brokers' log dirs are scheduled (default: every broker's). */
  brokers?: number[];
}

type NetworkRule =
  | { kind: 'partition'; a: number; b: number; direction: 'both' | 'a-to-b' }
  | { kind: 'slow-follower'; brokerId: number; delayMs: number }
  | {
      kind: 'chaos';
      drop: number;
      duplicate: number;
      delay: number;
      reorder: number;
      maxDelayMs: number;
      filter: ChaosFilter;
    };

const ID_BROKER = /^(?:replica|replica-manager|log-dir|group-coordinator|net)\/(\d+)(?:\/|$)/;

/**
 * The broker an actor or endpoint id names by its format (module comment), -1 for the controller,
 * undefined for anything else (the test's endpoint).
 */
export function brokerOfActorId(id: ActorId): number | undefined {
  if (id === 'controller') return CONTROLLER_SIDE;
  const match = ID_BROKER.exec(id);
  return match === null ? undefined : Number(match[1]);
}

/** The active fault rules of one simulated cluster and their counts (module comment). */
export class SimFaults {
  private readonly rules = new Map<number, NetworkRule>();
  private nextRuleId = 1;
  private userHook: FaultHook | null = null;
  private readonly faultCounts: Partial<Record<FaultKind, number>> = {};
  /** Brokers whose disks are full, with the remover of their fault hook. */
  private readonly fullDisks = new Map<number, () => void>();
  private fsyncScheduled = false;

  /**
   * `logDirsOf(b)`: broker b's log dirs (absolute paths), for the disk rules. The runtime's fault hook
   * is not installed here: the owner installs {@link decide} (ClusterSim puts its recorder on top).
   */
  constructor(
    private readonly sim: SimRuntime,
    private readonly fs: MemoryFileSystem,
    private readonly logDirsOf: (brokerId: number) => readonly string[],
  ) {}

  // ---- network rules ----

  /**
   * Cuts the network between broker `a` and broker `b` ({@link CONTROLLER_SIDE} for the controller):
   * every envelope from an actor of `a` to an actor of `b` is dropped, and with `both` the other way
   * too. Returns the rule's id for {@link remove}. Counts one `network-partition`.
   */
  partition(a: number, b: number, direction: 'both' | 'a-to-b' = 'both'): number {
    assert(a !== b, `a partition needs two sides, got ${a} twice`);
    return this.add({ kind: 'partition', a, b, direction }, 'network-partition');
  }

  /**
   * Slows broker `brokerId` as a follower: every fetch request its replicas send to a replica on
   * another broker joins its channel `delayMs` of virtual time late (past replica.lag.time.max.ms it
   * falls out of the ISR). Returns the rule's id. Counts one `slow-follower`.
   */
  slowFollower(brokerId: number, delayMs: number): number {
    assert(delayMs > 0, `a slow follower needs delayMs > 0, got ${delayMs}`);
    return this.add({ kind: 'slow-follower', brokerId, delayMs }, 'slow-follower');
  }

  /** Turns message chaos on for the messages `options.filter` passes ({@link ChaosOptions}); returns the rule's id. */
  chaos(options: ChaosOptions): number {
    const rule = {
      kind: 'chaos' as const,
      drop: options.drop ?? 0,
      duplicate: options.duplicate ?? 0,
      delay: options.delay ?? 0,
      reorder: options.reorder ?? 0,
      maxDelayMs: options.maxDelayMs ?? 500,
      filter: options.filter ?? 'cluster',
    };
    const probabilities = [rule.drop, rule.duplicate, rule.delay, rule.reorder];
    assert(
      probabilities.every((p) => p >= 0) && probabilities.reduce((x, y) => x + y, 0) <= 1,
      `chaos probabilities must be >= 0 and sum to at most 1: ${probabilities.join(', ')}`,
    );
    assert(rule.maxDelayMs >= 1, `chaos maxDelayMs must be >= 1, got ${rule.maxDelayMs}`);
    return this.add(rule, null);
  }

  /** Removes rule `id` (a partition healed, a follower back to speed, chaos off); false if it was not active. */
  remove(id: number): boolean {
    return this.rules.delete(id);
  }

  /** Ids of the active network rules, oldest first. */
  activeRules(): number[] {
    return [...this.rules.keys()];
  }

  /**
   * Heals everything that can be healed: every network rule removed, every full disk freed, fsyncs
   * back to completing on a microtask. Clock offsets stay (a clock that jumped does not jump back).
   */
  healAll(): void {
    this.rules.clear();
    for (const brokerId of [...this.fullDisks.keys()]) this.diskFull(brokerId, false);
    this.fsyncSchedule(null);
  }

  /**
   * Installs `hook` to decide after the rules (a message the rules deliver untouched is its to decide),
   * null for none. ClusterSim.setFaults goes through here, so a test's own hook and the rules compose.
   */
  setUserHook(hook: FaultHook | null): void {
    this.userHook = hook;
  }

  /**
   * The composed fault hook: partitions drop first, then a slow follower's fetch is delayed, then the
   * chaos rules (in the order added; the first that matches draws and decides), then the user hook.
   * Draws from `random` only when a chaos rule matches, so with no chaos the PRNG is untouched and a
   * seed's schedule is what it was without SimFaults.
   */
  decide(envelope: Envelope, random: Random): FaultDecision {
    if (this.rules.size > 0) {
      const fromBroker = this.brokerOf(envelope.from);
      const toBroker = this.brokerOf(envelope.to);
      for (const rule of this.rules.values()) {
        const decision = this.apply(rule, envelope, fromBroker, toBroker, random);
        if (decision !== 'deliver') return decision;
      }
    }
    return this.userHook === null ? 'deliver' : this.userHook(envelope, random);
  }

  /** The broker of actor `id` (module comment): its placement, else its id's format; undefined for endpoints. */
  brokerOf(id: ActorId): number | undefined {
    return this.sim.brokerOf(id) ?? brokerOfActorId(id);
  }

  private apply(
    rule: NetworkRule,
    envelope: Envelope,
    fromBroker: number | undefined,
    toBroker: number | undefined,
    random: Random,
  ): FaultDecision {
    if (rule.kind === 'partition') {
      if (fromBroker === undefined || toBroker === undefined) return 'deliver';
      const cut =
        (fromBroker === rule.a && toBroker === rule.b) ||
        (rule.direction === 'both' && fromBroker === rule.b && toBroker === rule.a);
      return cut ? 'drop' : 'deliver';
    }
    if (rule.kind === 'slow-follower') {
      const fetch =
        envelope.type === 'replica.fetch' &&
        envelope.isReply !== true &&
        envelope.from.startsWith('replica/') &&
        envelope.to.startsWith('replica/') &&
        fromBroker === rule.brokerId &&
        toBroker !== rule.brokerId;
      return fetch ? { delayMs: rule.delayMs } : 'deliver';
    }
    if (!passes(rule.filter, envelope, fromBroker, toBroker)) return 'deliver';
    const u = random.next();
    let bound = rule.drop;
    if (u < bound) return this.counted('message-drop', 'drop');
    bound += rule.duplicate;
    if (u < bound) return this.counted('message-duplicate', 'duplicate');
    bound += rule.delay;
    if (u < bound) return this.counted('message-delay', { delayMs: 1 + random.int(rule.maxDelayMs) });
    bound += rule.reorder;
    if (u < bound) return this.counted('message-reorder', 'reorder');
    return 'deliver';
  }

  // ---- disk rules ----

  /**
   * Fsync completion as a scheduled event: every later asynchronous fsync of a file under the chosen
   * brokers' log dirs completes after 0..maxDelayMs of virtual time (a timer of the runtime, its delay
   * from the fault PRNG; delay 0 still lets the scheduler interleave it with runnable messages), and
   * fails with EIO with `failProbability`. Others complete at once. Null: back to the disk's default
   * (a microtask, in call order). Counts `fsync-delay` and `fsync-failure` per fsync.
   */
  fsyncSchedule(options: FsyncScheduleOptions | null): void {
    if (options === null) {
      if (this.fsyncScheduled) this.fs.setSyncScheduler(null);
      this.fsyncScheduled = false;
      return;
    }
    const { maxDelayMs } = options;
    const failProbability = options.failProbability ?? 0;
    assert(Number.isInteger(maxDelayMs) && maxDelayMs >= 0, `fsync maxDelayMs must be an integer >= 0: ${maxDelayMs}`);
    assert(failProbability >= 0 && failProbability <= 1, `fsync failProbability must be in [0, 1]: ${failProbability}`);
    const brokers = options.brokers;
    const random = this.sim.faultRandom;
    this.fsyncScheduled = true;
    this.fs.setSyncScheduler((path, complete) => {
      const brokerId = this.brokerOfPath(path);
      if (brokerId === undefined || (brokers !== undefined && !brokers.includes(brokerId))) {
        complete(null);
        return;
      }
      const delayMs = random.int(maxDelayMs + 1);
      const fails = failProbability > 0 && random.next() < failProbability;
      if (delayMs > 0) this.record('fsync-delay');
      if (fails) this.record('fsync-failure');
      this.sim.schedule(delayMs, () => complete(fails ? 'EIO' : null));
    });
  }

  /**
   * Fills (or with `on` false frees) broker `brokerId`'s disks: every write and fsync (asynchronous
   * ones included) of a file under its log dirs fails with ENOSPC before it has any effect. Counts one
   * `disk-full` per disk turned full.
   */
  diskFull(brokerId: number, on: boolean): void {
    const remove = this.fullDisks.get(brokerId);
    if (!on) {
      remove?.();
      this.fullDisks.delete(brokerId);
      return;
    }
    if (remove !== undefined) return;
    const hook = (op: FsOperation): string | null =>
      (op.syscall === 'write' || op.syscall === 'fsync') && this.brokerOfPath(op.path) === brokerId ? 'ENOSPC' : null;
    this.fullDisks.set(brokerId, this.fs.addFault(hook));
    this.record('disk-full');
  }

  /** The broker whose log dir holds `path`, undefined for a path in none (the controller's metadata log). */
  private brokerOfPath(path: string): number | undefined {
    for (let b = 0; ; b++) {
      const dirs = this.logDirsOf(b);
      if (dirs.length === 0) return undefined;
      if (dirs.some((dir) => path.startsWith(dir.endsWith('/') ? dir : `${dir}/`))) return b;
    }
  }

  // ---- clocks ----

  /**
   * Moves broker `brokerId`'s wall clock (`Clock.nowMs` of every actor placed on it; -1: the
   * controller's) by `deltaMs`, forward or back, cumulatively. Monotonic time and timers do not move.
   * Returns the broker's total offset. Counts one `clock-jump`.
   */
  jumpClock(brokerId: number, deltaMs: number): number {
    this.record('clock-jump');
    return this.sim.jumpWallClock(brokerId, deltaMs);
  }

  // ---- counts ----

  /** Counts one injection of `kind` (ClusterSim's crash operations count theirs here). */
  record(kind: FaultKind, n = 1): void {
    this.faultCounts[kind] = (this.faultCounts[kind] ?? 0) + n;
  }

  /** Faults injected so far, by kind (kinds never injected are absent); a copy. */
  counts(): Partial<Record<FaultKind, number>> {
    return { ...this.faultCounts };
  }

  private add(rule: NetworkRule, kind: FaultKind | null): number {
    const id = this.nextRuleId++;
    this.rules.set(id, rule);
    if (kind !== null) this.record(kind);
    return id;
  }

  private counted(kind: FaultKind, decision: FaultDecision): FaultDecision {
    this.record(kind);
    return decision;
  }
}

function passes(
  filter: ChaosFilter,
  envelope: Envelope,
  fromBroker: number | undefined,
  toBroker: number | undefined,
): boolean {
  if (filter === 'cluster') return fromBroker !== undefined && toBroker !== undefined;
  if (filter === 'replica-to-replica')
    return envelope.from.startsWith('replica/') && envelope.to.startsWith('replica/');
  return filter(envelope, fromBroker, toBroker);
}
