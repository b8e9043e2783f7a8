/**
 * One consumer group of the classic protocol: its state machine, members and generation, as Kafka's
 * ClassicGroup (group-coordinator) keeps them. Pure data and rules: no timers, no I/O; rebalance.ts
 * drives its membership and state and persists it, offset-store.ts its committed offsets.
 *
 * States and their valid previous states (Kafka's ClassicGroupState):
 * ```
 * Empty               <- PreparingRebalance            no members; offsets may remain
 * PreparingRebalance  <- Stable, CompletingRebalance, Empty   waiting for members to (re)join
 * CompletingRebalance <- PreparingRebalance            join done; waiting for the leader's SyncGroup
 * Stable              <- CompletingRebalance           assignment handed out; heartbeats only
 * Dead                <- every state                   removed (DeleteGroups, expiry, coordinator moved)
 * ```
 */
import assert from 'node:assert/strict';
import { ErrorCode } from '../protocol/error-codes';
import type { DescribedGroup, GroupState, ListedGroup } from './messages';

const VALID_PREVIOUS: Record<GroupState, readonly GroupState[]> = {
  Empty: ['PreparingRebalance'],
  PreparingRebalance: ['Stable', 'CompletingRebalance', 'Empty'],
  CompletingRebalance: ['PreparingRebalance'],
  Stable: ['CompletingRebalance'],
  Dead: ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'],
};

/** A (name, metadata) pair a member supports, in its order of preference (JoinGroup Protocols). */
export interface MemberProtocol {
  name: string;
  metadata: Buffer;
}

/** A member of a classic group. Times are monotonic ms of the coordinator's clock. */
export interface GroupMember {
  memberId: string;
  /** Static membership (KIP-345): the stable instance id, or null for a dynamic member. */
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: MemberProtocol[];
  /** The member's assignment bytes from the last SyncGroup (opaque: ConsumerProtocolAssignment). */
  assignment: Buffer;
  /** Whether a JoinGroup of this member waits for the join phase to complete. */
  awaitingJoin: boolean;
  /** Whether a SyncGroup of this member waits for the leader's assignment. */
  awaitingSync: boolean;
}

/** A group and its committed offsets. */
export class ClassicGroup {
  state: GroupState = 'Empty';
  /** Generation id: bumped when a join phase completes (0 = never rebalanced). */
  generationId = 0;
  /** The protocol type all members share ("consumer" for consumers), or null before any join. */
  protocolType: string | null = null;
  /** The protocol (assignor) chosen for the current generation, or null. */
  protocolName: string | null = null;
  leaderId: string | null = null;
  /** Wall-clock ms of the last state change (GroupMetadataValue.currentStateTimestamp; KIP-211 expiry). */
  currentStateTimestampMs: number;
  readonly members = new Map<string, GroupMember>();
  /** KIP-394: member ids handed out with MEMBER_ID_REQUIRED that have not joined yet. */
  readonly pendingMembers = new Set<string>();
  /** group.instance.id -> member id of static members. */
  readonly staticMembers = new Map<string, string>();
  /** offsetKey(topic, partition) -> committed offset. */
  readonly offsets = new Map<string, CommittedOffset>();

  constructor(
    readonly groupId: string,
    nowMs: number,
  ) {
    this.currentStateTimestampMs = nowMs;
  }

  /** Moves to `next`, asserting the transition is one of Kafka's (a broken invariant crashes the actor). */
  transitionTo(next: GroupState, nowMs: number): void {
    assert.ok(
      VALID_PREVIOUS[next].includes(this.state),
      `group ${this.groupId}: illegal transition ${this.state} -> ${next}`,
    );
    this.state = next;
    this.currentStateTimestampMs = nowMs;
  }

  is(state: GroupState): boolean {
    return this.state === state;
  }

  /** Whether every member supports one of `protocols`, with the same protocol type (a new member may join). */
  supportsProtocols(protocolType: string, protocols: readonly MemberProtocol[]): boolean {
    if (this.members.size === 0) return protocolType.length > 0 && protocols.length > 0;
    if (protocolType !== this.protocolType) return false;
    const names = new Set(protocols.map((p) => p.name));
    return [...this.candidateProtocols()].some((name) => names.has(name));
  }

  /** Protocols every member supports. */
  candidateProtocols(): Set<string> {
    const members = [...this.members.values()];
    if (members.length === 0) return new Set<string>();
    const names = members[0]!.protocols.map((p) => p.name);
    return new Set<string>(names.filter((name) => members.every((m) => m.protocols.some((p) => p.name === name))));
  }

  /**
   * Kafka's selectProtocol: each member votes for its most preferred candidate; the most voted
   * wins (ties go to the earliest-joined member's preference order).
   */
  selectProtocol(): string {
    const candidates = this.candidateProtocols();
    assert.ok(candidates.size > 0, `group ${this.groupId}: no common protocol`);
    const votes = new Map<string, number>();
    for (const member of this.members.values()) {
      const vote = member.protocols.find((p) => candidates.has(p.name))!.name;
      votes.set(vote, (votes.get(vote) ?? 0) + 1);
    }
    let best: string | null = null;
    for (const [name, count] of votes) if (best === null || count > votes.get(best)!) best = name;
    return best!;
  }

  /** The metadata a member sent for the group's selected protocol. */
  metadataOf(member: GroupMember): Buffer {
    return member.protocols.find((p) => p.name === this.protocolName)?.metadata ?? Buffer.alloc(0);
  }

  addMember(member: GroupMember): void {
    assert.ok(!this.members.has(member.memberId), `group ${this.groupId}: member ${member.memberId} joined twice`);
    assert.ok(
      !this.pendingMembers.has(member.memberId),
      `group ${this.groupId}: member ${member.memberId} is still pending`,
    );
    if (this.members.size === 0) this.protocolType = member.protocolType;
    this.members.set(member.memberId, member);
    if (member.groupInstanceId !== null) this.staticMembers.set(member.groupInstanceId, member.memberId);
    if (this.leaderId === null) this.leaderId = member.memberId;
  }

  removeMember(memberId: string): GroupMember | undefined {
    const member = this.members.get(memberId);
    if (!member) return undefined;
    this.members.delete(memberId);
    if (member.groupInstanceId !== null && this.staticMembers.get(member.groupInstanceId) === memberId)
      this.staticMembers.delete(member.groupInstanceId);
    if (this.leaderId === memberId) this.leaderId = this.members.keys().next().value ?? null;
    return member;
  }

  /**
   * Static member rejoined with a new member id (KIP-345): the old id is fenced, the new one takes
   * its place (and its leadership and assignment).
   */
  replaceStaticMember(groupInstanceId: string, oldMemberId: string, newMemberId: string): GroupMember {
    const member = this.members.get(oldMemberId);
    assert.ok(member, `group ${this.groupId}: static member ${groupInstanceId} has no member ${oldMemberId}`);
    assert.ok(!this.members.has(newMemberId), `group ${this.groupId}: new member id ${newMemberId} is taken`);
    this.members.delete(oldMemberId);
    member.memberId = newMemberId;
    this.members.set(newMemberId, member);
    this.staticMembers.set(groupInstanceId, newMemberId);
    if (this.leaderId === oldMemberId) this.leaderId = newMemberId;
    return member;
  }

  /** Join phase complete: every member (and no pending one) has rejoined. */
  hasAllMembersJoined(): boolean {
    return this.pendingMembers.size === 0 && [...this.members.values()].every((m) => m.awaitingJoin);
  }

  /** The largest rebalance timeout among members: how long a join phase may wait for stragglers. */
  rebalanceTimeoutMs(): number {
    let timeout = 0;
    for (const m of this.members.values()) timeout = Math.max(timeout, m.rebalanceTimeoutMs);
    return timeout;
  }

  /**
   * Starts the next generation at the end of a join phase (Kafka's initNextGeneration): with members,
   * a protocol is chosen and the group waits for SyncGroup; without, it becomes Empty.
   */
  initNextGeneration(nowMs: number): void {
    assert.ok(
      Number.isSafeInteger(this.generationId) && this.generationId >= 0,
      `group ${this.groupId}: generation ${this.generationId}`,
    );
    this.generationId += 1;
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol();
      this.transitionTo('CompletingRebalance', nowMs);
    } else {
      this.protocolName = null;
      this.transitionTo('Empty', nowMs);
    }
  }

  /**
   * Asserts what every coordinator handler leaves true (a violation is a coordinator bug: the actor
   * crashes and the group is loaded again from the partition):
   * - an Empty group has no members, and the group is never Dead while the coordinator keeps it;
   * - a member waits for the join phase only while the group prepares a rebalance, and for its
   *   assignment only while the group completes one;
   * - a pending member id (KIP-394) is not yet a member;
   * - each group.instance.id maps to a member with that instance id (KIP-345).
   */
  assertInvariants(): void {
    const where = `group ${this.groupId} (${this.state}, generation ${this.generationId})`;
    assert.notEqual(this.state, 'Dead', `${where}: a Dead group is still kept`);
    if (this.state === 'Empty') assert.equal(this.members.size, 0, `${where}: Empty with members`);
    for (const [memberId, member] of this.members) {
      assert.equal(member.memberId, memberId, `${where}: member ${member.memberId} kept under ${memberId}`);
      assert.ok(!this.pendingMembers.has(memberId), `${where}: member ${memberId} is also pending`);
      assert.ok(
        !member.awaitingJoin || this.state === 'PreparingRebalance',
        `${where}: member ${memberId} awaits a join phase`,
      );
      assert.ok(
        !member.awaitingSync || this.state === 'CompletingRebalance',
        `${where}: member ${memberId} awaits an assignment`,
      );
    }
    for (const [groupInstanceId, memberId] of this.staticMembers)
      assert.equal(
        this.members.get(memberId)?.groupInstanceId,
        groupInstanceId,
        `${where}: static member ${groupInstanceId} maps to ${memberId}`,
      );
  }

  /** The group as ListGroups shows it (Kafka's ClassicGroup.asListedGroup). */
  asListedGroup(): ListedGroup {
    return {
      groupId: this.groupId,
      protocolType: this.protocolType ?? '',
      groupState: this.state,
      groupType: 'classic',
    };
  }

  /** The group as DescribeGroups shows it: protocol and member bytes only when Stable (Kafka's describeGroups). */
  asDescribedGroup(): DescribedGroup {
    const stable = this.is('Stable');
    return {
      errorCode: ErrorCode.NONE,
      groupId: this.groupId,
      groupState: this.state,
      protocolType: this.protocolType ?? '',
      protocolData: stable ? (this.protocolName ?? '') : '',
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: stable ? this.metadataOf(m) : Buffer.alloc(0),
        memberAssignment: stable ? m.assignment : Buffer.alloc(0),
      })),
    };
  }

  /** Whether the group's subscriptions (consumer protocol) name `topic`; unknown metadata counts as subscribed. */
  isSubscribedTo(topic: string, subscribedTopics: (metadata: Buffer) => string[] | null): boolean {
    if (this.protocolType !== 'consumer' || this.protocolName === null) return false;
    for (const member of this.members.values()) {
      const topics = subscribedTopics(this.metadataOf(member));
      if (topics === null || topics.includes(topic)) return true;
    }
    return false;
  }
}

/** The key of a committed offset in ClassicGroup.offsets: `${topic}\0${partition}`. */
export function offsetKey(topic: string, partition: number): string {
  return `${topic}\0${partition}`;
}

/** A committed offset (OffsetCommitValue). Times in wall-clock ms. */
export interface CommittedOffset {
  offset: number;
  leaderEpoch: number;
  metadata: string;
  commitTimestampMs: number;
  /** The offset of the record in __consumer_offsets that holds it (compaction keeps the latest). */
  recordOffset: number;
}
